"""The contribution_detector component (issue #6, detection) on real NCG papers and a real TEI paper."""

from __future__ import annotations

import random
import subprocess
import sys
import warnings

import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from thinc.api import Adam, fix_random_seed

import scholarly_nlp
from scholarly_nlp import introduction_and_body
from scholarly_nlp.readers.ncg import iter_ncg_papers, read_ncg_paper
from scholarly_nlp.training import create_paper_corpus
from scholarly_contribution_detector.features import context_features, model_docs, text_tokens
from scholarly_contribution_detector.ncg_docs import ncg_doc, sentence_offsets

from conftest import shared

HAND_CHECKED = ("natural_language_inference", "1")
TEI_PAPER = ("tei", "acl", "D14-1205.tei.xml")


def train(docs, epochs=5, lr=0.002, seed=0, **config):
    """A blank pipeline with a contribution_detector trained on NCG Docs."""
    fix_random_seed(seed)
    nlp = scholarly_nlp.blank()
    nlp.add_pipe("contribution_detector", config=config)
    examples = [Example(d.copy(), d) for d in docs]
    optimizer = nlp.initialize(lambda: examples, sgd=Adam(lr))
    rng = random.Random(seed)
    for _ in range(epochs):
        rng.shuffle(examples)
        for start in range(0, len(examples), 8):
            nlp.update(examples[start : start + 8], sgd=optimizer)
    return nlp


@pytest.fixture(scope="module")
def papers():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        selection = list(iter_ncg_papers(shared("nlpcontributiongraph")))[::3][:50]
    assert len(selection) == 50
    return selection


@pytest.fixture(scope="module")
def trained(papers):
    vocab = scholarly_nlp.blank().vocab
    docs = [ncg_doc(p, vocab) for p in papers]
    return train(docs[:40]), docs[:40], docs[40:]


@pytest.fixture(scope="module")
def tei_doc():
    return scholarly_nlp.read(shared(*TEI_PAPER))


# --------------------------------------------------------------------------- NCG Docs


def test_ncg_doc_of_a_hand_checked_folder():
    paper = read_ncg_paper(shared("nlpcontributiongraph", *HAND_CHECKED))
    doc = ncg_doc(paper, scholarly_nlp.blank())
    assert len(list(doc.sents)) == len(paper.sentences)
    gold = doc._.contribution_gold
    # Stanza lines 9-32 are the introduction (line 8 is its heading); sentences.txt marks 12, 19, 20, 24, 25, 26
    texts = [doc[g["start"] : g["end"]].text for g in gold]
    assert len(gold) == 24
    assert texts[0].startswith("Open-domain Question Answering ( QA ) systems")
    assert texts[-1].startswith("Using the Reverb KB and QA datasets")
    positives = [t for g, t in zip(gold, texts) if g["label"]]
    assert [t[:30] for t in positives] == [
        "However , while most recent ef", "First , as an effort to study ", "This dataset , which is presen",
        "Second , in sections 3 and 4 ,", "Memory Networks are learning s", "The setting of the simple QA c",
    ]
    assert not any(g["label"] for g, t in zip(gold, texts) if t.startswith("This paper presents two contributions"))
    # the introduction found the TEI way is the NCG reader's introduction, sentence for sentence
    _, offsets = sentence_offsets(paper)
    mask = [offsets[i] for i, m in enumerate(paper.in_introduction) if m]
    assert [(s.start, s.end) for s in introduction_and_body(doc)[0]] == mask == [(g["start"], g["end"]) for g in gold]
    first = gold[0]["features"]
    assert {"__sec_intro", "__pos_q1", "__pos_first", "__first_in_section", "__prev_none"} <= set(first)
    second = next(g for g, t in zip(gold, texts) if t.startswith("Second , in sections"))
    assert {"__cue_we_propose", "__cue_we", "__pos_q3"} <= set(second["features"])


def test_ncg_docs_survive_docbin_and_feed_the_paper_corpus(tmp_path, papers):
    nlp = scholarly_nlp.blank()
    docs = [ncg_doc(p, nlp) for p in papers[:3]]
    path = tmp_path / "ncg.spacy"
    assert scholarly_nlp.save_docbin(docs, path) == 3
    examples = list(create_paper_corpus(path)(nlp))
    assert len(examples) == 3
    for doc, eg in zip(docs, examples):
        # msgpack gives the feature lists back as tuples; the pipe reads either
        assert [{**g, "features": list(g["features"])} for g in eg.reference._.contribution_gold] == \
            doc._.contribution_gold
        assert eg.reference._.paper_meta["source"] == "ncg"


def test_features_are_the_same_for_equal_text():
    assert text_tokens("We propose BERT-2 , a model.") == ["we", "propose", "bert", "-", "0", ",", "a", "model", "."]
    feats = context_features(["In this paper we propose X.", "It works."], [True, False])
    assert "__cue_we_propose" in feats[0] and "__prev_cue_we_propose" in feats[1] and "__pos_last" in feats[1]
    docs = model_docs(scholarly_nlp.blank().vocab, ["", "a b"], [[], ["__x"]])
    assert [t.text for t in docs[0]] == ["__empty"] and [t.text for t in docs[1]] == ["a", "b", "__x"]


# --------------------------------------------------------------------------- learning


def test_training_beats_the_we_rule_on_held_out_papers(trained):
    nlp, _, test_docs = trained
    examples = [Example(nlp(d.copy()), d) for d in test_docs]
    scores = nlp.get_pipe("contribution_detector").score(examples)
    gold = [bool(g["label"]) for d in test_docs for g in d._.contribution_gold]
    rule = ["__cue_we" in g["features"] for d in test_docs for g in d._.contribution_gold]
    tp = sum(a and b for a, b in zip(gold, rule))
    rule_f1 = 2 * tp / (sum(gold) + sum(rule))
    # measured on these 10 papers (283 introduction sentences, 54 positive): detector F1 0.558
    # (P 0.58, R 0.54) with seed 0, 0.49-0.50 with seeds 1 and 2; the "we" rule 0.310
    assert rule_f1 < 0.35
    assert scores["contribution_f1"] >= 0.45
    assert scores["contribution_f1"] > rule_f1 + 0.12
    assert 0 < scores["contribution_p"] <= 1 and 0 < scores["contribution_r"] <= 1
    # spaCy's own evaluation loop gives the same numbers through the pipe's score()
    assert nlp.evaluate([Example(d.copy(), d) for d in test_docs])["contribution_f1"] == pytest.approx(
        scores["contribution_f1"])


def test_update_lowers_the_loss(papers):
    docs = [ncg_doc(p, scholarly_nlp.blank()) for p in papers[:8]]
    nlp = scholarly_nlp.blank()
    nlp.add_pipe("contribution_detector")
    examples = [Example(d.copy(), d) for d in docs]
    optimizer = nlp.initialize(lambda: examples, sgd=Adam(0.01))
    first = nlp.update(examples, sgd=optimizer)["contribution_detector"]
    for _ in range(5):
        last = nlp.update(examples, sgd=optimizer)["contribution_detector"]
    assert last < first


# --------------------------------------------------------------------------- on a TEI paper


def test_scores_every_introduction_sentence_of_a_tei_paper(trained, tei_doc):
    nlp, _, _ = trained
    doc = nlp(tei_doc)
    intro = introduction_and_body(doc)[0]
    assert len(intro) > 5
    assert len(doc._.contribution_scores) == len(intro)
    assert all(0.0 <= p <= 1.0 for p in doc._.contribution_scores)
    chosen = doc._.contribution_sentences
    assert chosen, "some introduction sentence of D14-1205 should be detected"
    spans = {(s.start, s.end) for s in intro}
    assert all((s.start, s.end) in spans for s in chosen)
    threshold = nlp.get_pipe("contribution_detector").cfg["threshold"]
    assert len(chosen) == sum(p >= threshold for p in doc._.contribution_scores)
    # plain lists: the annotation survives a DocBin round trip
    back = list(DocBin(store_user_data=True, docs=[doc]).get_docs(nlp.vocab))[0]
    assert back._.contribution_scores == pytest.approx(doc._.contribution_scores)
    assert [s.text for s in back._.contribution_sentences] == [s.text for s in chosen]


def test_docs_without_an_introduction_get_defined_output(trained):
    nlp, _, _ = trained
    plain = nlp("We propose a new parser. It is fast.")
    assert plain._.contribution_scores == [] and plain._.contribution_sentences == []
    doc = nlp.make_doc("Method We propose a new parser.")
    doc.spans["sections"] = [doc[0:6]]  # a section but no paragraphs: no introduction sentences
    doc = nlp(doc)
    assert doc._.contribution_scores == [] and doc._.contribution_sentences == []
    assert Doc(nlp.vocab, words=["x"])._.contribution_sentences is None  # not run yet
    empty = nlp.get_pipe("contribution_detector").score([Example(plain, plain)])
    assert empty["contribution_f1"] is None


def test_save_load_round_trip_gives_the_same_scores(trained, tei_doc, tmp_path):
    nlp, _, test_docs = trained
    expected = nlp(tei_doc.copy())._.contribution_scores
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.pipe_names == ["contribution_detector"]
    assert loaded(tei_doc.copy())._.contribution_scores == pytest.approx(expected, abs=1e-6)
    fresh = scholarly_nlp.blank()
    fresh.add_pipe("contribution_detector")
    fresh.from_bytes(nlp.to_bytes())
    assert fresh(test_docs[0].copy())._.contribution_scores == pytest.approx(
        nlp(test_docs[0].copy())._.contribution_scores, abs=1e-6)


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="threshold"):
        scholarly_nlp.blank().add_pipe("contribution_detector", config={"threshold": 1.5})
    with pytest.raises(ValueError, match="positive_weight"):
        scholarly_nlp.blank().add_pipe("contribution_detector", config={"positive_weight": 0})


def test_plugin_registers_the_pipe_and_its_extensions_in_a_fresh_process():
    code = ("import spacy, scholarly_nlp; nlp = spacy.blank('en'); nlp.add_pipe('contribution_detector'); "
            "from spacy.tokens import Doc; "
            "assert all(Doc.has_extension(n) for n in ('contribution_scores', 'contribution_sentences', "
            "'contribution_sentence_offsets', 'contribution_gold')); "
            "assert 'contribution_detector' in scholarly_nlp.get_registry().components; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("ok")
