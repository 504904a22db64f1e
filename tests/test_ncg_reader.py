"""NLPContributionGraph reader (../shared/data/nlpcontributiongraph) and detector data helpers."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from scholarly_contribution_detector.data import (
    cue_flags,
    grouped_folds,
    grouped_split,
    paper_rows,
    rows_from_papers,
    section_kind,
)
from scholarly_nlp.errors import EmptyDocumentError, InputError, MalformedInputError
from scholarly_nlp.readers.ncg import (
    introduction_mask,
    iter_ncg_papers,
    looks_like_heading,
    ncg_folders,
    read_ncg_paper,
)

from conftest import shared


def ncg(*parts: str) -> Path:
    """A path under the NCG data; skips the test when the data is not there."""
    return shared("nlpcontributiongraph", *parts)


@pytest.fixture(scope="module")
def corpus():
    """Every paper of the corpus, with the warnings raised while reading it."""
    root = ncg()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        papers = list(iter_ncg_papers(root))
    return papers, [str(w.message) for w in caught]


# --------------------------------------------------------------------------- real folders


def test_hand_checked_folder_natural_language_inference_1():
    # Checked by hand: the Stanza file has 273 lines, sentences.txt 19 numbers (2 ... 266),
    # "Introduction" is line 8 and the next heading "Simple Question Answering" line 33.
    paper = read_ncg_paper(ncg("natural_language_inference", "1"))
    assert paper.paper_id == "natural_language_inference/1"
    assert paper.task == "natural_language_inference"
    assert len(paper.sentences) == 273 == len(paper.sections) == len(paper.is_heading)
    assert len(paper.contribution_lines) == 19 and sum(paper.labels) == 19
    assert min(paper.contribution_lines) == 1 and max(paper.contribution_lines) == 265
    assert paper.sentences[1] == "Large - scale Simple Question Answering with Memory Networks"
    assert paper.sentences[0] == "title" and paper.is_heading[0]
    assert paper.sentences[2] == "abstract" and paper.is_heading[2]
    assert paper.sections[3] == "abstract"
    assert paper.is_heading[7] and paper.sentences[7] == "Introduction"
    assert paper.is_heading[32] and paper.sections[32] == "Simple Question Answering"
    assert all(paper.sections[i] == "Introduction" for i in range(7, 32))
    assert paper.sentences[11].startswith("However , while most recent efforts")
    # the introduction is lines 9..32: 24 sentences
    mask = introduction_mask(paper)
    assert sum(mask) == 24 and mask[8] and mask[31] and not mask[7] and not mask[32]
    # a GROBID run-in line is not taken for a heading
    storing = next(i for i, s in enumerate(paper.sentences) if s.startswith("Storing Freebase :"))
    assert not paper.is_heading[storing]
    assert "Large-scale Simple Question Answering" in paper.grobid_text


def test_heading_split_over_two_stanza_lines():
    # GROBID "Bi-directional LSTM layer" is Stanza lines 81 "Bi-directional" and 82 "LSTM layer".
    paper = read_ncg_paper(ncg("sentiment_analysis", "35"))
    assert paper.sentences[80] == "Bi-directional" and paper.sentences[81] == "LSTM layer"
    assert paper.is_heading[80] and paper.is_heading[81]
    assert paper.sections[82] == "Bi-directional LSTM layer"
    assert not paper.is_heading[82]


def test_numbered_heading_matches_unnumbered_stanza_line():
    # GROBID "II. LITERATURE REVIEW" is Stanza line 28 "LITERATURE REVIEW".
    paper = read_ncg_paper(ncg("sentiment_analysis", "8"))
    assert paper.sentences[27] == "LITERATURE REVIEW" and paper.is_heading[27]
    assert paper.sections[28] == "II. LITERATURE REVIEW"
    assert any(introduction_mask(paper))


def test_empty_grobid_title_still_reads():
    paper = read_ncg_paper(ncg("text_summarization", "13"))
    assert paper.grobid_text.startswith("title\n\nabstract")
    assert paper.sentences[1].startswith("Coarse-to-Fine Attention Models")
    assert paper.sections[3] == "abstract"
    intro = [i for i, s in enumerate(paper.sentences) if s == "Introduction"]
    assert intro and paper.is_heading[intro[0]]


def test_every_folder_reads_or_warns(corpus):
    papers, messages = corpus
    folders = ncg_folders(ncg())
    assert len(folders) == 177
    # the published corpus is clean: every folder reads, none warns
    assert len(papers) + len(messages) == len(folders)
    assert len(papers) == 177 and messages == []
    assert len({p.paper_id for p in papers}) == 177


def test_contribution_lines_in_range_and_structure_aligned(corpus):
    papers, _ = corpus
    for paper in papers:
        n = len(paper.sentences)
        assert n > 0 and len(paper.sections) == n and len(paper.is_heading) == n
        assert paper.contribution_lines, paper.paper_id
        assert all(0 <= i < n for i in paper.contribution_lines), paper.paper_id
        assert paper.sections[0] == "title" and paper.is_heading[0]
        assert any(introduction_mask(paper)), paper.paper_id
    assert sum(len(p.contribution_lines) for p in papers) == 3819


def test_grouped_split_never_puts_a_paper_on_both_sides(corpus):
    papers, _ = corpus
    train, dev = grouped_split(papers, dev_fraction=0.2, seed=3)
    train_ids = {p.paper_id for p in train}
    dev_ids = {p.paper_id for p in dev}
    assert not train_ids & dev_ids
    assert train_ids | dev_ids == {p.paper_id for p in papers}
    assert len(dev) == round(0.2 * 177)
    assert grouped_split(papers, 0.2, seed=3)[1] == dev  # deterministic for a seed
    assert {p.paper_id for p in grouped_split(papers, 0.2, seed=4)[1]} != dev_ids
    train_rows, dev_rows = rows_from_papers(train), rows_from_papers(dev)
    assert not {r.paper_id for r in train_rows} & {r.paper_id for r in dev_rows}


def test_grouped_folds_partition_the_papers(corpus):
    papers, _ = corpus
    folds = grouped_folds(papers, k=5, seed=0)
    assert len(folds) == 5
    assert sum(len(f) for f in folds) == 177
    assert set().union(*folds) == {p.paper_id for p in papers}
    assert max(len(f) for f in folds) - min(len(f) for f in folds) <= 1
    with pytest.raises(ValueError):
        grouped_folds(papers[:3], k=5)


def test_paper_rows_labels_and_features():
    paper = read_ncg_paper(ncg("natural_language_inference", "1"))
    rows = paper_rows(paper)
    assert len(rows) == 273
    assert [r.label for r in rows] == paper.labels
    assert rows[0].rel_position == 0.0 and rows[-1].rel_position == 1.0
    assert rows[11].section == "Introduction" and rows[11].section_kind == "introduction"
    assert rows[11].in_introduction and not rows[40].in_introduction
    assert rows[3].section_kind == "abstract"
    assert all(0.0 <= r.rel_position_in_section <= 1.0 for r in rows)
    # prev_cues are the cues of the sentence before
    assert rows[12].prev_cues == rows[11].cues
    assert rows[0].to_dict()["paper_id"] == "natural_language_inference/1"


def test_section_kind_and_cues():
    assert section_kind("I. INTRODUCTION") == "introduction"
    assert section_kind("Related Work") == "related"
    assert section_kind("Implementation Details") == "setup"
    assert section_kind("Conclusion and Future Work") == "conclusion"
    assert section_kind("Xyz") == "other"
    flags = cue_flags("In this paper , we propose a new model . Our contributions are as follows :")
    assert flags["we_propose"] == flags["our_contribution"] == flags["this_paper"] == flags["colon_list"] == 1
    assert cue_flags("The weather is nice")["we"] == 0


def test_looks_like_heading():
    for good in ["Introduction", "2 Related Work", "II. RELATED WORK", "A. Embeddings", "Bi-directional LSTM layer"]:
        assert looks_like_heading(good), good
    for bad in [
        "Storing Freebase: this first phase parses",
        "2.",
        "x 1",
        "The contributions of our work are as follows:",
        "Maybe you're not smart enough.",
        "2 https://github.com/SAG-KeLP",
        "Jeremy Howard and Sebastian Ruder. 2018. Universal language model fine-tuning. In",
        "contradiction",
        "[ frustrated ]",
        "",
    ]:
        assert not looks_like_heading(bad), bad


# --------------------------------------------------------------------------- bad input


GROBID = "title\nA Tiny Paper\nabstract\nWe study tiny papers.\nIntroduction\nWe propose a tiny model. It works.\n\nMethod\nThe model is small.\n"
STANZA = "title\nA Tiny Paper\nabstract\nWe study tiny papers .\nIntroduction\nWe propose a tiny model .\nIt works .\nMethod\nThe model is small .\n"


def make_paper(root: Path, name: str = "1", stanza: str = STANZA, grobid: str = GROBID, labels: str = "6\n9\n") -> Path:
    """A paper folder root/tiny_task/<name>/ with the given files (None leaves one out)."""
    folder = root / "tiny_task" / name
    folder.mkdir(parents=True)
    if stanza is not None:
        (folder / "0000.0000-Stanza-out.txt").write_text(stanza, encoding="utf-8")
    if grobid is not None:
        (folder / "0000.0000-Grobid-out.txt").write_text(grobid, encoding="utf-8")
    if labels is not None:
        (folder / "sentences.txt").write_text(labels, encoding="utf-8")
    return folder


def test_tiny_synthetic_paper(tmp_path):
    paper = read_ncg_paper(make_paper(tmp_path))
    assert paper.paper_id == "tiny_task/1"
    assert paper.contribution_lines == {5, 8}
    assert paper.is_heading == [True, False, True, False, True, False, False, True, False]
    assert paper.sections == ["title", "title", "abstract", "abstract"] + ["Introduction"] * 3 + ["Method"] * 2
    assert introduction_mask(paper) == [False] * 5 + [True, True] + [False, False]


def test_missing_stanza_file(tmp_path):
    folder = make_paper(tmp_path, stanza=None)
    with pytest.raises(InputError, match="Stanza-out.txt") as info:
        read_ncg_paper(folder)
    assert str(folder) in str(info.value)


def test_missing_grobid_and_labels_files(tmp_path):
    with pytest.raises(InputError, match="Grobid-out.txt"):
        read_ncg_paper(make_paper(tmp_path, name="1", grobid=None))
    with pytest.raises(InputError, match="sentences.txt"):
        read_ncg_paper(make_paper(tmp_path, name="2", labels=None))


def test_empty_stanza_file(tmp_path):
    folder = make_paper(tmp_path, stanza="\n \n")
    with pytest.raises(EmptyDocumentError, match="Stanza-out.txt") as info:
        read_ncg_paper(folder)
    assert info.value.path.endswith("0000.0000-Stanza-out.txt")


def test_line_number_out_of_range(tmp_path):
    folder = make_paper(tmp_path, labels="6\n10\n")
    with pytest.raises(MalformedInputError, match="out of range") as info:
        read_ncg_paper(folder)
    assert info.value.path.endswith("sentences.txt")
    assert "10" in str(info.value) and "9 lines" in str(info.value)
    with pytest.raises(MalformedInputError, match="out of range"):
        read_ncg_paper(make_paper(tmp_path, name="2", labels="0\n"))


def test_non_numeric_line(tmp_path):
    with pytest.raises(MalformedInputError, match="not a line number"):
        read_ncg_paper(make_paper(tmp_path, labels="6\nseven\n"))


def test_not_a_directory(tmp_path):
    with pytest.raises(InputError, match="not a directory"):
        read_ncg_paper(tmp_path / "nope")
    with pytest.raises(InputError, match="not a directory"):
        ncg_folders(tmp_path / "nope")


def test_iter_warns_names_bad_folder_and_goes_on(tmp_path):
    make_paper(tmp_path, name="1")
    bad = make_paper(tmp_path, name="2", labels="99\n")
    make_paper(tmp_path, name="3", stanza="")
    make_paper(tmp_path, name="10")
    with pytest.warns(UserWarning) as record:
        papers = list(iter_ncg_papers(tmp_path))
    assert [p.paper_id for p in papers] == ["tiny_task/1", "tiny_task/10"]
    messages = [str(w.message) for w in record]
    assert len(messages) == 2
    assert str(bad) in messages[0] and "out of range" in messages[0]
    assert "tiny_task/3" in messages[1] and "Stanza" in messages[1]
