"""Title-and-abstract records (CSFCube, CSAbstruct) as Docs, and sentence roles/aspects."""

from __future__ import annotations

import json

import pytest
from spacy.tokens import DocBin

import scholarly_nlp
from conftest import shared
from scholarly_nlp.doc.roles import (
    ROLE_GROUP,
    ROLES,
    abstract_sentences,
    aspect_of_role,
    aspect_sentences,
    check_aspect,
    set_roles,
    title_span,
)
from scholarly_nlp.errors import MalformedInputError, UnknownNameError
from scholarly_nlp.readers.abstracts import AbstractRecord, abstract_doc, read_csabstruct, read_csfcube_abstracts

N_DOCS = 60  # Docs built from the real records (reading all 1946 records is checked separately)


@pytest.fixture(scope="module")
def csfcube_path():
    return shared("csfcube", "abstracts-csfcube-preds.jsonl")


@pytest.fixture(scope="module")
def csfcube_records(csfcube_path):
    return read_csfcube_abstracts(csfcube_path)


@pytest.fixture(scope="module")
def raw_lines(csfcube_path):
    return [json.loads(line) for line in csfcube_path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_all_csfcube_records_are_read(csfcube_records, raw_lines):
    assert len(csfcube_records) == len(raw_lines) == 1946
    assert len({r.paper_id for r in csfcube_records}) == 1946
    for record, raw in zip(csfcube_records, raw_lines):
        assert record.paper_id == str(raw["paper_id"])
        assert record.title == raw["title"]
        assert record.sentences == raw["abstract"]
        assert record.roles == [label.removesuffix("_label") for label in raw["pred_labels"]]
        assert set(record.roles) <= set(ROLES)
    assert "method_label" in raw_lines[0]["pred_labels"] and "method" in csfcube_records[0].roles


def test_doc_sentences_match_the_record_and_roles_equal_the_labels(csfcube_records, nlp):
    for record in csfcube_records[:N_DOCS]:
        doc = abstract_doc(record, nlp)
        kept = [(s.strip(), r) for s, r in zip(record.sentences, record.roles) if s.strip()]
        sentences = abstract_sentences(doc)
        assert [s.text for s in sentences] == [s for s, _ in kept]
        assert [s._.role for s in sentences] == [r for _, r in kept]
        assert [s.label_ for s in doc.spans[ROLE_GROUP]] == [r for _, r in kept]
        assert title_span(doc).text == record.title.strip()
        assert doc._.paper_id == record.paper_id


def test_csabstruct_train_and_dev():
    train = read_csabstruct(shared("csabstruct", "train.jsonl"))
    dev = read_csabstruct(shared("csabstruct", "dev.jsonl"))
    assert (len(train), len(dev)) == (1668, 295)
    for record in train[:50] + dev[:50]:
        assert record.title == "" and len(record.roles) == len(record.sentences)
        assert set(record.roles) <= set(ROLES)
    assert {r for rec in train for r in rec.roles} == set(ROLES)


def test_csabstruct_ids_tell_the_abstracts_apart(tmp_path):
    # The published splits give every abstract the id 0: records fall back to line numbers.
    dev = read_csabstruct(shared("csabstruct", "dev.jsonl"))
    assert len({r.paper_id for r in dev}) == len(dev)
    assert (dev[0].paper_id, dev[-1].paper_id) == ("line 1", f"line {len(dev)}")
    path = tmp_path / "distinct.jsonl"
    path.write_text('{"abstract_id": 7, "sentences": ["A."], "labels": ["method"]}\n\n'
                    '{"abstract_id": "x9", "sentences": ["B."], "labels": ["result"]}\n', encoding="utf-8")
    assert [r.paper_id for r in read_csabstruct(path)] == ["7", "x9"]


@pytest.mark.parametrize("line, reason", [
    ('{"paper_id": "1", "abstract": ["A."], ', "line 2 is not valid JSON"),
    ('{"paper_id": "1", "abstract": ["A.", "B."], "pred_labels": ["method_label"]}', "line 2: 1 labels for 2 sentences"),
    ('{"paper_id": "1", "abstract": ["A."], "pred_labels": ["novelty_label"]}', "line 2: unknown label"),
    ('["not", "an", "object"]', "line 2 is not a JSON object"),
    ('{"paper_id": "1", "abstract": "A."}', "line 2: 'abstract' must be a list"),
    ('{"title": "no id"}', "line 2 lacks 'paper_id'"),
])
def test_malformed_csfcube_lines_name_the_file_and_line(tmp_path, line, reason):
    path = tmp_path / "abstracts.jsonl"
    good = '{"paper_id": "0", "title": "T", "abstract": ["A."], "pred_labels": ["background_label"]}'
    path.write_text(good + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(MalformedInputError) as info:
        read_csfcube_abstracts(path)
    assert str(path) in str(info.value) and reason in str(info.value)


def test_malformed_csabstruct_line(tmp_path):
    path = tmp_path / "train.jsonl"
    path.write_text('{"abstract_id": 0, "sentences": ["A."], "labels": ["METHOD", "RESULT"]}\n', encoding="utf-8")
    with pytest.raises(MalformedInputError, match="line 1: 2 labels for 1 sentences"):
        read_csabstruct(path)


def test_set_roles_errors(nlp):
    doc = abstract_doc(AbstractRecord("1", "T", ["One sentence.", "Two sentences."]), nlp)
    assert ROLE_GROUP not in doc.spans
    with pytest.raises(ValueError, match="1 roles for 2 abstract sentences"):
        set_roles(doc, ["method"])
    with pytest.raises(ValueError, match="unknown sentence role"):
        set_roles(doc, ["method", "novelty"])
    set_roles(doc, ["method", "result"])
    assert [s._.role for s in abstract_sentences(doc)] == ["method", "result"]


def test_aspects_of_roles_and_sentences(nlp):
    assert [aspect_of_role(r) for r in ROLES] == ["background", "background", "method", "result", None]
    assert aspect_of_role(None) is None and aspect_of_role("novelty") is None
    assert check_aspect("method") == "method"
    with pytest.raises(UnknownNameError, match="aspect"):
        check_aspect("title")
    record = AbstractRecord("1", "A title", ["Why.", "Goal.", "How.", "Found.", "Thanks."],
                            ["background", "objective", "method", "result", "other"])
    pairs = aspect_sentences(abstract_doc(record, nlp))
    assert [(s.text, a) for s, a in pairs] == [("A title", "title"), ("Why.", "background"), ("Goal.", "background"),
                                              ("How.", "method"), ("Found.", "result"), ("Thanks.", None)]
    unlabelled = aspect_sentences(abstract_doc(AbstractRecord("2", "", ["Only."]), nlp))
    assert [(s.text, a) for s, a in unlabelled] == [("Only.", None)]


def _roles(doc):
    return [(s.start, s.end, s.label_) for s in doc.spans[ROLE_GROUP]]


def test_roles_round_trip_through_docbin(csfcube_records, nlp, tmp_path):
    docs = [abstract_doc(r, nlp) for r in csfcube_records[:5]]
    path = tmp_path / "abstracts.spacy"
    assert scholarly_nlp.save_docbin(docs, path) == 5
    loaded = list(scholarly_nlp.load_docbin(path, nlp.vocab))
    assert [_roles(d) for d in loaded] == [_roles(d) for d in docs]
    assert [s._.role for s in abstract_sentences(loaded[0])] == [s._.role for s in abstract_sentences(docs[0])]
    plain = list(DocBin().from_bytes(DocBin(docs=docs).to_bytes()).get_docs(nlp.vocab))
    assert [_roles(d) for d in plain] == [_roles(d) for d in docs]


def test_roles_round_trip_through_json_export(csfcube_records, nlp):
    doc = abstract_doc(csfcube_records[0], nlp)
    data = json.loads(json.dumps(scholarly_nlp.doc_to_json(doc)))
    back = scholarly_nlp.doc_from_json(data, nlp.vocab)
    assert _roles(back) == _roles(doc)
    assert [s._.role for s in abstract_sentences(back)] == csfcube_records[0].roles
