"""Every span group and ``._`` value survives DocBin, to_disk/from_disk, JSON and n_process=2."""

from __future__ import annotations

import json

import pytest
from spacy.tokens import Doc, DocBin

import scholarly_nlp
from scholarly_nlp import doc_from_json, doc_to_json, load_docbin, save_docbin, set_extension

from conftest import shared

# Stand-ins for component outputs: a doc-level value and a span-level value.
set_extension("doc", "roundtrip_central_figure", default=None)
set_extension("span", "roundtrip_role", default=None)


def fingerprint(doc: Doc) -> dict:
    """Everything the document model stores, in comparable form."""
    return {
        "text": doc.text,
        "sent_starts": [t.i for t in doc if t.is_sent_start],
        "spans": {
            name: [(s.start, s.end, s.label_, s.kb_id_) for s in group] for name, group in sorted(doc.spans.items())
        },
        "meta": json.loads(json.dumps(doc._.paper_meta)),  # msgpack gives tuples for lists
        "bibliography": doc._.bibliography,
        "central": doc._.roundtrip_central_figure,
        "roles": [s._.roundtrip_role for s in doc.spans["abstract"]],
        "figures": [(f.id, f.label, f.kind, f.caption_text, [m.text for m in f.mentions]) for f in doc._.figures],
        "citances": [(c.text, c.bib_ids) for c in doc._.citances],
        "sections": [(s.title, s.number, s.level, len(s.paragraphs)) for s in doc._.sections],
    }


@pytest.fixture(scope="module")
def docs(nlp):
    paths = [shared("tei", "acl", "D14-1003.tei.xml"), sorted(shared("tei", "biomed").glob("*.tei.xml"))[0],
             shared("tei", "with-pdf", "journal.pone.0319315.tei.xml")]
    result = []
    for path in paths:
        doc = scholarly_nlp.read(path, nlp=nlp)
        doc._.roundtrip_central_figure = doc._.figures[0].id if doc._.figures else None
        doc.spans["abstract"][0]._.roundtrip_role = "background"
        result.append(doc)
    return result


def test_docbin_roundtrip(nlp, docs, tmp_path):
    path = tmp_path / "papers.spacy"
    assert save_docbin(docs, path) == len(docs)
    restored = list(load_docbin(path, nlp.vocab))
    assert [fingerprint(d) for d in restored] == [fingerprint(d) for d in docs]


def test_plain_docbin_bytes_roundtrip(nlp, docs):
    data = DocBin(docs=docs, store_user_data=True).to_bytes()
    restored = list(DocBin().from_bytes(data).get_docs(nlp.vocab))
    assert [fingerprint(d) for d in restored] == [fingerprint(d) for d in docs]


def test_to_disk_from_disk_roundtrip(nlp, docs, tmp_path):
    for i, doc in enumerate(docs):
        doc.to_disk(tmp_path / f"{i}.doc")
        restored = Doc(nlp.vocab).from_disk(tmp_path / f"{i}.doc")
        assert fingerprint(restored) == fingerprint(doc)


def test_json_export_roundtrip(nlp, docs):
    for doc in docs:
        data = json.loads(json.dumps(doc_to_json(doc)))
        assert fingerprint(doc_from_json(data, nlp.vocab)) == fingerprint(doc)


def test_json_export_has_the_documented_keys(docs):
    data = doc_to_json(docs[0])
    for key in ("paper_id", "title", "abstract", "sections", "figures", "citances", "bibliography"):
        assert key in data
    assert set(data["sections"][0]) == {"title", "number", "paragraphs"}
    assert set(data["figures"][0]) == {"id", "label", "kind", "caption", "mentions"}
    assert set(data["citances"][0]) == {"text", "bib_ids"}
    assert set(next(iter(data["bibliography"].values()))) == {"title", "authors", "year", "venue", "doi"}


def test_multiprocess_pipe_keeps_everything(docs):
    nlp = scholarly_nlp.blank()
    nlp.add_pipe("scholarly_sentencizer")  # a real pipe, so the docs travel through the workers
    restored = list(nlp.pipe([d.copy() for d in docs], n_process=2, batch_size=1))
    for original, doc in zip(docs, restored):
        assert fingerprint(doc) == fingerprint(original)
