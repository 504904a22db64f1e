"""Readers produce Papers only, and dataset readers are spaCy corpus readers (issue 16, item 5).

Dataset keys travel in ``Paper.meta`` into ``doc._.paper_meta``; the ``@readers`` of
:mod:`scholarly_nlp.readers.corpora` (and the detector's NCG reader) are resolved from
config text on real data from ``../shared/data``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from spacy.util import registry
from thinc.api import Config

import scholarly_nlp
from scholarly_nlp import Block, MalformedInputError, Paper
from scholarly_nlp.readers import read_reference_xml

from conftest import shared


def corpus_from_config(reader: str, **settings):
    """Resolve a ``[corpora.train]`` block naming ``reader`` the way ``spacy train`` does."""
    lines = ["[corpora]", "[corpora.train]", f'@readers = "{reader}"']
    lines += [f'{key} = "{value}"' if isinstance(value, (str, Path)) else f"{key} = {value}"
              for key, value in settings.items()]
    return registry.resolve(Config().from_str("\n".join(lines)))["corpora"]["train"]


def test_a_dataset_reader_puts_its_keys_in_paper_meta(nlp):
    xml = shared("clscisumm", "train-manual", "C00-2123", "Reference_XML", "C00-2123.xml")
    paper = read_reference_xml(xml)
    sids = paper.meta["sids"]
    assert len(sids) > 50 and sids[0] == "0"
    doc = scholarly_nlp.paper_to_doc(paper, nlp)
    assert doc._.paper_meta["sids"] == sids
    assert len(list(doc.sents)) == len(sids)  # one Doc sentence per <S>, in sid order
    assert doc._.paper_meta["paper_id"] == "C00-2123"


def test_paper_meta_may_not_replace_the_document_model():
    paper = Paper("p1", source="p1.xml", blocks=[Block(kind="title", text="A title")], meta={"figures": []})
    with pytest.raises(MalformedInputError, match=r"p1.xml.*document model's keys \['figures'\]"):
        paper.check()


def test_csabstruct_corpus_keeps_gold_roles_on_the_reference_side(nlp):
    path = shared("csabstruct", "dev.jsonl")
    corpus = corpus_from_config("scholarly_nlp.CSAbstructCorpus.v1", path=path, limit=5)
    examples = list(corpus(nlp))
    assert len(examples) == 5
    for example in examples:
        roles = example.reference.spans["roles"]
        assert len(roles) == len(list(example.reference.sents)) > 1
        assert {span.label_ for span in roles} <= set(scholarly_nlp.ROLES)
        assert "roles" not in example.predicted.spans
        assert example.predicted.text == example.reference.text


def test_clscisumm_corpus_reads_reference_folders_with_their_citances(nlp):
    root = shared("clscisumm", "train-manual")
    corpus = corpus_from_config("scholarly_nlp.CLSciSummCorpus.v1", path=root, limit=2)
    examples = list(corpus(nlp))
    assert [e.reference._.paper_meta["paper_id"] for e in examples] == sorted(p.name for p in root.iterdir())[:2]
    for example in examples:
        doc = example.reference
        assert len(doc._.paper_meta["sids"]) == len(list(doc.sents))
        citances = doc._.incoming_citances
        assert citances and all(set(c["sids"]) <= set(doc._.paper_meta["sids"]) for c in citances)


def test_paper_files_corpus_reads_tei_and_skips_bad_files_by_name(nlp, tmp_path):
    sources = sorted(shared("tei", "acl").glob("*.tei.xml"))[:2]
    for source in sources:
        (tmp_path / source.name).write_bytes(source.read_bytes())
    (tmp_path / "broken.tei.xml").write_text("<TEI><text><body><p>unclosed", encoding="utf-8")
    corpus = corpus_from_config("scholarly_nlp.PaperFiles.v1", path=tmp_path)
    with pytest.warns(UserWarning, match=r"broken\.tei\.xml: skipped"):
        examples = list(corpus(nlp))
    assert sorted(e.reference._.paper_meta["paper_id"] for e in examples) == sorted(
        s.name[: -len(".tei.xml")] for s in sources)
    assert all(e.reference.spans["paragraphs"] for e in examples)


def test_ncg_corpus_of_the_contribution_detector(nlp):
    pytest.importorskip("scholarly_contribution_detector")
    root = shared("nlpcontributiongraph", "natural_language_inference")
    corpus = corpus_from_config("scholarly_contribution_detector.NCGCorpus.v1", path=root, limit=2)
    examples = list(corpus(nlp))
    assert len(examples) == 2
    for example in examples:
        gold = example.reference._.contribution_gold
        assert gold and any(item["label"] == 1 for item in gold)


def test_corpus_readers_resolve_in_a_fresh_process():
    """Through the ``spacy_readers`` entry points: nothing imported by hand."""
    code = ("from spacy.util import registry; "
            "print(all(registry.readers.get(n) for n in ('scholarly_nlp.CSAbstructCorpus.v1', "
            "'scholarly_nlp.CLSciSummCorpus.v1', 'scholarly_nlp.PaperFiles.v1')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
