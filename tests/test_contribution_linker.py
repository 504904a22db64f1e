"""The contribution_linker component (issue #6) on real dev-gold TEI papers and built edge cases.

A tiny random-weight backbone keeps the tests fast; the real MiniLM is not loaded here (its
dev numbers come from ``benchmarks/contribution_linker_dev.py``).
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy
import pytest
import spacy
import torch
from spacy.tokens import Doc
from spacy.training import Example
from thinc.api import Adam

import scholarly_nlp
from scholarly_nlp import Block, Paper, PaperSection, introduction_and_body, paper_to_doc
from scholarly_contribution_linker.evaluation import read_contribution_gold
from scholarly_nlp.ml.backbones import make_tiny_backbone
from scholarly_contribution_linker.candidates import CONTRIBUTION_CUE, PaperIndex, contribution_sentences, fuse
from scholarly_contribution_linker.silver import section_numbers, silver_pairs

from conftest import shared

#: Two papers of the dev gold, and a paper outside it whose introduction says "Section 3 defines ...".
DEV_PAPERS = ["D14-1205", "D15-1126"]
POINTER_PAPER = "P14-1062"


@pytest.fixture(scope="module")
def tiny_backbone(tmp_path_factory):
    return make_tiny_backbone(tmp_path_factory.mktemp("backbones") / "tiny")


@pytest.fixture(scope="module")
def docs():
    gold = {g.paper_id for g in read_contribution_gold(shared("gold", "contributions_dev.jsonl"))}
    assert set(DEV_PAPERS) <= gold
    nlp = scholarly_nlp.blank()
    return [scholarly_nlp.read(shared("tei", "acl", f"{pid}.tei.xml"), nlp=nlp) for pid in DEV_PAPERS]


@pytest.fixture(scope="module")
def pointer_doc():
    return scholarly_nlp.read(shared("tei", "acl", f"{POINTER_PAPER}.tei.xml"), nlp=scholarly_nlp.blank())


def tiny_model(backbone, scale: float = 1.0) -> dict:
    """The bi-encoder scorer config over the tiny backbone."""
    return {"@architectures": "scholarly_nlp.BiEncoderScorer.v1", "name": str(backbone), "max_length": 64,
            "scale": scale}


def linker_nlp(backbone, examples=None, **overrides):
    """A blank pipeline with an initialised contribution_linker over the tiny backbone."""
    torch.manual_seed(0)
    nlp = scholarly_nlp.blank()
    nlp.add_pipe("contribution_linker", config={"model": tiny_model(backbone), **overrides})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nlp.initialize((lambda: examples) if examples else None)
    return nlp


@pytest.fixture(scope="module")
def nlp3(tiny_backbone):
    return linker_nlp(tiny_backbone, k=3)


def build_doc(nlp, sections: list[tuple[str, list[str]]]) -> Doc:
    """A paper Doc with one heading and the given paragraphs per (title, paragraphs) section."""
    blocks = [Block(kind="title", text="A tiny paper")]
    for number, (title, paragraphs) in enumerate(sections):
        blocks.append(Block(kind="heading", text=title, section=number))
        blocks.extend(Block(kind="paragraph", text=text, section=number) for text in paragraphs)
    paper = Paper(paper_id="tiny", source="mem", blocks=blocks,
                  sections=[PaperSection(title=title, number=str(i + 1)) for i, (title, _) in enumerate(sections)])
    return paper_to_doc(paper, nlp)


# --------------------------------------------------------------------------- the pipe on real papers


def test_pipe_links_the_contribution_sentences_of_real_papers(nlp3, docs):
    pipe = nlp3.get_pipe("contribution_linker")
    for source in docs:
        doc = pipe(source.copy())
        sentences, body = introduction_and_body(doc)
        starts = {p.start_char: p for p in body}
        expected = [sentences[i] for i, _ in contribution_sentences(doc, 0.5)]
        assert len(body) >= 3 and expected
        assert [c["sentence"]["start_char"] for c in doc._.contributions] == [s.start_char for s in expected]
        for item in doc._.contributions:
            sent = item["sentence"]
            assert doc.text[sent["start_char"]:sent["end_char"]] == sent["text"]
            assert item["score"] is None  # no detector ran: the we/our rule
            assert len(item["paragraphs"]) == 3
            scores = [p["score"] for p in item["paragraphs"]]
            assert scores == sorted(scores, reverse=True)
            for p in item["paragraphs"]:
                assert p["start_char"] in starts and starts[p["start_char"]].end_char == p["end_char"]
                assert p["text_start"] == doc.text[p["start_char"]:p["end_char"]][:80]


def test_detector_scores_choose_the_sentences(tiny_backbone, nlp3, docs):
    doc = docs[0].copy()
    sentences, _ = introduction_and_body(doc)
    probs = [0.1] * len(sentences)
    probs[0], probs[3] = 0.9, 0.5
    doc._.contribution_scores = probs
    doc = nlp3.get_pipe("contribution_linker")(doc)
    assert [c["sentence"]["start_char"] for c in doc._.contributions] == [sentences[0].start_char,
                                                                          sentences[3].start_char]
    assert [c["score"] for c in doc._.contributions] == [0.9, 0.5]
    strict = linker_nlp(tiny_backbone, k=3, detection_threshold=0.95)
    assert strict.get_pipe("contribution_linker")(doc)._.contributions == []
    doc._.contribution_scores = [0.9]  # wrong length: warned, the rule decides
    with pytest.warns(UserWarning, match="contribution_scores"):
        rule = contribution_sentences(doc, 0.5)
    assert rule == [(i, None) for i, s in enumerate(sentences) if CONTRIBUTION_CUE.search(s.text)] and rule


def test_link_takes_a_string_or_a_span_and_indexes_a_paper_once(nlp3, docs):
    pipe = nlp3.get_pipe("contribution_linker")
    doc = docs[1].copy()
    sentences, body = introduction_and_body(doc)
    before = PaperIndex.builds
    by_span = pipe.link(sentences[2], doc, k=4)
    by_text = pipe.link(sentences[2].text, doc, k=4)
    everything = pipe.link(sentences[0], doc, k=10_000)
    assert PaperIndex.builds == before + 1  # one index for three calls
    assert [(s.start, round(v, 5)) for s, v in by_span] == [(s.start, round(v, 5)) for s, v in by_text]
    assert len(by_span) == 4 and all(span in body for span, _ in by_span)
    assert [v for _, v in by_span] == sorted((v for _, v in by_span), reverse=True)
    assert sorted(s.start for s, _ in everything) == [p.start for p in body]
    with pytest.raises(ValueError, match="empty"):
        pipe.link("   ", doc)
    with pytest.raises(ValueError, match="k must be"):
        pipe.link("we propose a model", doc, k=0)


def test_score_is_model_plus_weighted_scaled_bm25():
    assert fuse([0.5, 0.1, 0.0], [4.0, 2.0, 0.0], 0.5) == [1.0, 0.35, 0.0]
    assert fuse([0.2, 0.1], [0.0, 0.0], 0.5) == [0.2, 0.1]  # nothing shared: the model decides


def test_bi_encoder_batches_hold_at_most_batch_size_distinct_texts(tiny_backbone):
    nlp = linker_nlp(tiny_backbone, batch_size=5)
    pipe = nlp.get_pipe("contribution_linker")
    pairs = [(q, p) for p in ("p1", "p2", "p3", "p4", "p5", "p6") for q in ("q1", "q2")]  # paragraph-major
    batches = pipe._batches(pairs)
    assert [pair for batch in batches for pair in batch] == pairs
    assert all(len({t for pair in batch for t in pair}) <= 5 for batch in batches)
    assert len(batches) == 2  # q1, q2, p1, p2, p3 | q1, q2, p4, p5, p6


def test_untrained_model_and_bad_settings_are_clear_errors(docs):
    nlp = scholarly_nlp.blank()
    pipe = nlp.add_pipe("contribution_linker")
    with pytest.raises(ValueError, match="not loaded"):
        pipe.link("we propose", docs[0])
    with pytest.raises(ValueError, match="detection_threshold"):
        scholarly_nlp.blank().add_pipe("contribution_linker", config={"detection_threshold": 2.0})


# --------------------------------------------------------------------------- defined results


def test_paper_without_introduction_uses_its_first_section(nlp3):
    doc = build_doc(nlp3, [("Overview", ["We propose a ranker. It links sentences."]),
                           ("Method", ["The ranker uses BM25 scores.", "It is fast."])])
    doc = nlp3(doc)
    (item,) = doc._.contributions
    assert item["sentence"]["text"].strip() == "We propose a ranker."
    assert {p["text_start"] for p in item["paragraphs"]} == {"The ranker uses BM25 scores.", "It is fast."}
    assert item["paragraphs"][0]["score"] >= item["paragraphs"][1]["score"]


def test_introduction_without_contribution_sentence_gives_an_empty_list(nlp3):
    doc = nlp3(build_doc(nlp3, [("Introduction", ["The task is hard. Nobody solved it."]),
                                ("Method", ["The ranker uses BM25 scores."])]))
    assert doc._.contributions == []
    plain = nlp3("Just some text. We say nothing else.")  # no sections at all
    assert plain._.contributions == []


def test_body_of_one_paragraph_and_empty_body(nlp3):
    pipe = nlp3.get_pipe("contribution_linker")
    one = nlp3(build_doc(nlp3, [("Introduction", ["We propose a ranker."]), ("Method", ["The ranker uses BM25."])]))
    (item,) = one._.contributions
    (paragraph,) = item["paragraphs"]
    assert paragraph["text_start"] == "The ranker uses BM25." and isinstance(paragraph["score"], float)
    assert [(s.text, round(v, 5)) for s, v in pipe.link("We propose a ranker.", one)] == \
        [("The ranker uses BM25.", round(paragraph["score"], 5))]
    empty = nlp3(build_doc(nlp3, [("Introduction", ["We propose a ranker."])]))
    (item,) = empty._.contributions
    assert item["paragraphs"] == []
    assert pipe.link("We propose a ranker.", empty) == []


# --------------------------------------------------------------------------- save / load / plugin


def test_save_load_gives_the_same_links_and_takes_config_overrides(nlp3, docs, tmp_path):
    text = introduction_and_body(docs[0])[0][1].text
    expected = [(s.start, round(v, 5)) for s, v in nlp3.get_pipe("contribution_linker").link(text, docs[0])]
    nlp3.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    got = [(s.start, round(v, 5)) for s, v in loaded.get_pipe("contribution_linker").link(text, docs[0])]
    assert got == expected and len(got) == 3
    assert loaded(docs[0].copy())._.contributions == nlp3(docs[0].copy())._.contributions
    one = spacy.load(tmp_path / "pipeline", config={"components": {"contribution_linker": {"k": 1}}})
    assert len(one.get_pipe("contribution_linker").link(text, docs[0])) == 1
    fresh = scholarly_nlp.blank().add_pipe("contribution_linker", config={"model": tiny_model("unused"), "k": 3})
    fresh.from_bytes(nlp3.get_pipe("contribution_linker").to_bytes())
    assert [(s.start, round(v, 5)) for s, v in fresh.link(text, docs[0])] == expected


def test_plugin_registers_the_pipe_and_its_extensions_in_a_fresh_process():
    code = ("import spacy, scholarly_nlp; nlp = spacy.blank('en'); nlp.add_pipe('contribution_linker'); "
            "from spacy.tokens import Doc; "
            "assert all(Doc.has_extension(n) for n in ('contributions', 'contribution_scores', 'contribution_pairs')); "
            "assert 'contribution_linker' in scholarly_nlp.get_registry().components; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("ok")
    assert Doc.has_extension("contributions") and Doc.has_extension("contribution_scores")


# --------------------------------------------------------------------------- silver pairs and training


def test_section_numbers_are_read_from_pointers():
    assert section_numbers("In Sections 3 and 4.2 we do this; see §5 and Sect. 6.") == ["3", "4.2", "5", "6"]
    assert section_numbers("in Section 2 we describe") == ["2"]
    assert section_numbers("We propose a model of section headings.") == []


def test_silver_pairs_on_a_real_paper_with_section_pointers(pointer_doc):
    pairs = silver_pairs(pointer_doc)
    assert [p["section"] for p in pairs] == ["2", "3", "4", "5"]
    sections = {s.kb_id_: s for s in pointer_doc.spans["sections"]}
    for pair in pairs:
        assert f"Section {pair['section']}" in pair["sentence"]
        assert pointer_doc.text[pair["sentence_start_char"]:].startswith(pair["sentence"])
        paragraph = next(p for p in pointer_doc.spans["paragraphs"] if p.start_char == pair["paragraph_start_char"])
        section = next(s for n, s in sections.items() if n.split(".")[0] == pair["section"])
        assert paragraph.start >= section.start  # in (or after the heading of) the section pointed to
    assert silver_pairs(scholarly_nlp.blank()("See Section 2. We are done.")) == []


def test_silver_pairs_read_an_unheaded_introduction(nlp3):
    """The introduction before the first head (no "Introduction" printed) points too."""
    blocks = [Block(kind="title", text="A tiny paper"),
              Block(kind="paragraph", text="Parsing is hard. In Section 2 we describe the ranker."),
              Block(kind="heading", text="Method", section=0),
              Block(kind="paragraph", text="The ranker uses BM25 scores.", section=0)]
    paper = Paper(paper_id="unheaded", source="mem", blocks=blocks,
                  sections=[PaperSection(title="Method", number="2")])
    doc = paper_to_doc(paper, nlp3)
    (pair,) = silver_pairs(doc)
    assert pair["sentence"] == "In Section 2 we describe the ranker." and pair["section"] == "2"
    assert doc.text[pair["paragraph_start_char"]:].startswith("The ranker uses BM25 scores.")
    assert [s.text.strip() for s in introduction_and_body(doc)[0]] == ["Parsing is hard.", "In Section 2 we describe the ranker."]


def test_training_step_lowers_the_loss_on_silver_pairs(tiny_backbone, pointer_doc):
    reference = pointer_doc.copy()
    reference._.contribution_pairs = silver_pairs(pointer_doc)
    examples = [Example(pointer_doc.copy(), reference)]
    nlp = linker_nlp(tiny_backbone, examples, max_negatives=7, max_sentences_per_doc=4)
    pipe = nlp.get_pipe("contribution_linker")
    assert len(pipe._training_lists(reference, None)) >= 3  # the pairs whose paragraph is in the body
    optimizer = Adam(1e-2)
    losses = []
    for _ in range(8):
        pipe._rng = numpy.random.default_rng(0)
        losses.append(nlp.update(examples, sgd=optimizer)["contribution_linker"])
    assert losses[-1] < 0.7 * losses[0]
    scores = nlp.evaluate(examples)
    assert 0.0 <= scores["contribution_link_hit1"] <= 1.0 and 0.0 <= scores["contribution_link_mrr"] <= 1.0


def test_initialize_without_pairs_warns_and_still_links(tiny_backbone, docs):
    nlp = scholarly_nlp.blank()
    nlp.add_pipe("contribution_linker", config={"model": tiny_model(tiny_backbone)})
    with pytest.warns(UserWarning, match="cannot be trained"):
        nlp.initialize()
    hits = nlp.get_pipe("contribution_linker").link("we propose a joint framework", docs[0], k=2)
    assert len(hits) == 2 and all(-1.0 <= v <= 1.5 for _, v in hits)
