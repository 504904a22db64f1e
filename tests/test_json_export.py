"""The compact JSON export: exact rebuilds, the JSON Schema, old exports, and linear time."""

from __future__ import annotations

import copy
import json
import time
import warnings
from pathlib import Path

import jsonschema
import pytest
from spacy.attrs import ENT_IOB, ENT_TYPE, HEAD, IDX, LEMMA, LENGTH, MORPH, POS, SENT_START, SPACY, TAG, DEP
from spacy.tokens import Doc, Span, Token

import scholarly_nlp
from scholarly_nlp import MalformedInputError, doc_from_json, doc_to_json, load_docbin, load_json, save_docbin, save_json
from scholarly_nlp.doc.serialize import JSON_FORMAT_VERSION
from scholarly_nlp.schema import load_schema, validate_export

from conftest import REPO, shared

DEMO = REPO / "corpora" / "demo"
ARRAY_ATTRS = [IDX, LENGTH, SPACY, SENT_START, ENT_IOB, ENT_TYPE, TAG, POS, LEMMA, DEP, HEAD, MORPH]

Token.set_extension("export_test_note", default=None, force=True)


def everything(doc: Doc) -> dict:
    """All a Doc stores that the export promises to keep, token arrays included."""
    return {
        "text": doc.text,
        "arrays": doc.to_array(ARRAY_ATTRS).tolist() if len(doc) else [],
        "spans": {name: [(s.start, s.end, s.label_, s.kb_id_, s.id_) for s in group] for name, group in doc.spans.items()},
        "ents": [(e.start, e.end, e.label_, e.kb_id_) for e in doc.ents],
        "cats": dict(doc.cats),
        "user_data": json.loads(json.dumps([[list(k), v] for k, v in doc.user_data.items()])),
    }


def through_json(doc: Doc, **options) -> tuple[dict, Doc]:
    data = json.loads(json.dumps(doc_to_json(doc, **options), ensure_ascii=False))
    return data, doc_from_json(data)


def real_paths() -> list[Path]:
    return [
        DEMO / "demo_paper.pdf",
        DEMO / "demo_paper.tei.xml",
        shared("tei", "acl", "D14-1003.tei.xml"),
        shared("tei", "acl", "D14-1010.tei.xml"),
        sorted(shared("tei", "biomed").glob("*.tei.xml"))[0],
        sorted(shared("tei", "biomed").glob("*.tei.xml"))[-1],
        shared("tei", "with-pdf", "journal.pone.0319315.tei.xml"),
        shared("pdfs", "acl", "C02-1025.pdf"),
    ]


@pytest.fixture(scope="module")
def real_docs(nlp):
    return [scholarly_nlp.read(path, nlp=nlp, format=None) for path in real_paths()]


def test_the_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(load_schema())
    assert load_schema()["properties"]["format_version"]["const"] == JSON_FORMAT_VERSION


def test_real_papers_rebuild_exactly_and_validate(real_docs):
    for doc in real_docs:
        data, back = through_json(doc)
        validate_export(data)
        assert everything(back) == everything(doc), doc._.paper_id
        assert data["format_version"] == 2 and "spacy" not in data


def test_full_export_adds_the_spacy_dump_and_validates(real_docs):
    doc = real_docs[1]
    compact, _ = through_json(doc)
    full, back = through_json(doc, full=True)
    validate_export(full)
    assert full["spacy"]["tokens"][0].keys() >= {"id", "start", "end"}
    assert everything(back) == everything(doc)
    # The per-token dump is what made the old export large.
    assert len(json.dumps(compact)) < 0.5 * len(json.dumps(full))


def test_compact_export_has_no_per_token_records(real_docs):
    compact = doc_to_json(real_docs[2])["doc"]
    assert set(compact) <= set(load_schema()["$defs"]["doc"]["properties"])
    assert isinstance(compact["text"], str) and compact["tokens"]["count"] == len(real_docs[2])
    assert not any(isinstance(value, list) and value and isinstance(value[0], dict) for value in compact.values())


def test_stable_keys_are_unchanged(real_docs):
    doc = real_docs[2]
    data = doc_to_json(doc)
    assert data["title"] == " ".join(s.text for s in doc.spans["title"])
    assert data["sections"][0] == {"title": doc._.sections[0].title, "number": doc._.sections[0].number,
                                   "paragraphs": [p.text for p in doc._.sections[0].paragraphs]}
    assert data["figures"][0]["mentions"] == [m.text for m in doc._.figures[0].mentions]
    assert data["citances"][0] == {"text": doc._.citances[0].text, "bib_ids": doc._.citances[0].bib_ids}
    assert data["bibliography"] == doc._.bibliography
    assert data["authors"] == doc._.authors and data["authors"][0]["name"]


def test_the_papers_authors_round_trip(real_docs):
    """``doc._.authors`` (name, affiliations, e-mail) survives the export, from TEI and PDF."""
    for doc in real_docs:
        data, back = through_json(doc)
        assert back._.authors == doc._.authors, doc._.paper_id
    assert any(a["affiliations"] and a["email"] for doc in real_docs for a in doc._.authors)


def test_new_span_groups_and_values_round_trip_without_code_changes(real_docs):
    doc = real_docs[2].copy()
    doc.spans["someone_elses_group"] = [Span(doc, 3, 7, label="claim", kb_id="c1", span_id="s1"), Span(doc, 9, 9, label="empty")]
    doc.spans["an_empty_group"] = []
    doc[5]._.export_test_note = {"seen": [1, 2]}
    doc._.paper_meta = {**doc._.paper_meta, "footnotes": [{"id": "foot_0", "number": "1"}]}
    data, back = through_json(doc)
    validate_export(data)
    assert everything(back) == everything(doc)
    assert back[5]._.export_test_note == {"seen": [1, 2]}


def test_retokenised_docs_store_only_the_differences(nlp):
    doc = nlp("Several markers [15][16] and Hello world here.  Two  spaces.\n\nNext block ")
    with doc.retokenize() as retokenizer:
        retokenizer.merge(doc[5:7])  # "Hello world": a merge
    glued = next(t for t in doc if t.text == "15][16")
    with doc.retokenize() as retokenizer:
        retokenizer.split(glued, ["15]", "[16"], heads=[(glued, 1), (glued, 0)])
    first = next(t.i for t in doc if t.text == "15]")
    doc.spans["citations"] = [Span(doc, first - 1, first + 1, "bibr", "b15"), Span(doc, first + 1, first + 3, "bibr", "b16")]
    doc[3].is_sent_start = True
    data, back = through_json(doc)
    tokens = data["doc"]["tokens"]
    assert len(tokens["removed"]) == 3 and len(tokens["added"]) == 3  # 2 merged + 1 split -> 1 merged + 2 split
    assert [t.text for t in back] == [t.text for t in doc]
    assert [t.whitespace_ for t in back] == [t.whitespace_ for t in doc]
    assert [s.text for s in back.spans["citations"]] == ["[15]", "[16]"]
    assert back.to_array([SENT_START]).tolist() == doc.to_array([SENT_START]).tolist()


def test_pipeline_annotations_round_trip(nlp):
    words = ["Alice", "met", "Bob", "in", "Paris", "."]
    doc = Doc(nlp.vocab, words=words, spaces=[True, True, True, True, False, False],
              tags=["NNP", "VBD", "NNP", "IN", "NNP", "."], pos=["PROPN", "VERB", "PROPN", "ADP", "PROPN", "PUNCT"],
              lemmas=["alice", "meet", "bob", "in", "paris", "."], heads=[1, 1, 1, 1, 3, 1],
              deps=["nsubj", "ROOT", "dobj", "prep", "pobj", "punct"],
              morphs=["Number=Sing", "Tense=Past", "", "", "", ""], ents=["B-PER", "O", "B-PER", "O", "B-LOC", None])
    doc.cats = {"method": 0.25}
    data, back = through_json(doc)
    validate_export(data)
    assert everything(back) == everything(doc)
    assert data["doc"]["ents_missing"] == [[22, 23]]


@pytest.mark.parametrize("text", ["", "   ", "  leading spaces and a trailing one ", "one"])
def test_edge_texts_round_trip(nlp, text):
    doc = nlp(text)
    data, back = through_json(doc)
    validate_export(data)
    assert everything(back) == everything(doc)


def test_a_tokenizer_that_disagrees_is_a_clear_error(real_docs):
    data = json.loads(json.dumps(doc_to_json(real_docs[0])))
    for tamper in (lambda d: d["doc"]["tokens"]["removed"].append(1),
                   lambda d: d["doc"]["tokens"].update(digest="0" * 16),
                   lambda d: d["doc"]["tokens"]["added"].append([0, 3])):
        broken = copy.deepcopy(data)
        tamper(broken)
        with pytest.raises(MalformedInputError, match="token boundaries|tokens do not cover"):
            doc_from_json(broken)


def test_a_full_export_falls_back_on_its_spacy_dump(real_docs):
    doc = real_docs[1]
    data = json.loads(json.dumps(doc_to_json(doc, full=True)))
    data["doc"]["tokens"]["digest"] = "0" * 16  # as if written with another tokenizer
    assert everything(doc_from_json(data)) == everything(doc)


def test_damaged_and_future_exports_are_named_errors(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"format_version": 99, "doc": {}}')
    with pytest.raises(MalformedInputError, match="format_version 99"):
        load_json(path)
    path.write_text('{"format_version": 2, "doc": {"text": "a"}}')
    with pytest.raises(MalformedInputError, match=r"x\.json: JSON export is damaged"):
        load_json(path)
    path.write_text("[1, 2")
    with pytest.raises(MalformedInputError, match="not a readable JSON export"):
        load_json(path)


def test_format_version_1_exports_still_load(real_docs):
    """What the previous exporter wrote: stable keys + spaCy's dump + top-level extensions."""
    for doc in real_docs[:3]:
        old = {key: value for key, value in doc_to_json(doc).items() if key != "doc"}
        old.update(format_version=1, spacy=doc.to_json(),
                   extensions=[[k[1], k[2], k[3], v] for k, v in doc.user_data.items() if k[0] == "._."])
        back = doc_from_json(json.loads(json.dumps(old)))
        assert everything(back) == everything(doc)


def test_load_json_and_docbin_need_no_vocab(real_docs, nlp, tmp_path):
    doc = real_docs[2]
    save_json(doc, tmp_path / "p.json")
    save_docbin([doc], tmp_path / "p.spacy")
    for loaded in (load_json(tmp_path / "p.json"), next(load_docbin(tmp_path / "p.spacy")),
                   load_json(tmp_path / "p.json", nlp), next(load_docbin(tmp_path / "p.spacy", nlp)),
                   load_json(tmp_path / "p.json", nlp.vocab)):
        assert everything(loaded) == everything(doc)
        assert loaded._.sections and loaded._.citances


def test_rebuild_time_grows_linearly(nlp):
    """Rebuilding 4x the tokens costs about 4x the time (the old importer was quadratic)."""
    base = scholarly_nlp.read(shared("tei", "acl", "D14-1003.tei.xml"), nlp=nlp)
    small = json.loads(json.dumps(doc_to_json(base)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # from_docs cannot merge paper_meta: not needed here
        large = json.loads(json.dumps(doc_to_json(Doc.from_docs([base] * 8))))
    assert large["doc"]["tokens"]["count"] == 8 * small["doc"]["tokens"]["count"]

    def best_of_3(data: dict) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            doc_from_json(data, nlp)
            times.append(time.perf_counter() - start)
        return min(times)

    ratio = best_of_3(large) / best_of_3(small)
    print(f"rebuild time ratio for 8x the tokens: {ratio:.1f}")
    assert ratio < 24, f"8x the tokens took {ratio:.1f}x the time"


def test_footnote_formula_and_back_matter_keys_follow_the_document_model(real_docs):
    """Present (and schema-valid) exactly when the model has the views; otherwise absent."""
    for doc in real_docs:
        data = json.loads(json.dumps(doc_to_json(doc)))
        for key in ("footnotes", "formulas", "back_matter"):
            assert (key in data) == Doc.has_extension(key)
            if key in data:
                assert len(data[key]) == len(getattr(doc._, key))
        if "footnotes" in data:
            assert [f["text"] for f in data["footnotes"]] == [s.text for s in doc.spans["footnotes"]]


def _strict_loads(text: str):
    """json.loads that refuses NaN, Infinity and -Infinity (not JSON, though Python writes them)."""
    def refuse(word):
        raise AssertionError(f"{word} written into a JSON export")

    return json.loads(text, parse_constant=refuse)


def test_exports_are_strict_json_non_finite_floats_become_null(nlp, tmp_path):
    doc = scholarly_nlp.read(DEMO / "demo_paper.tei.xml", nlp=nlp)
    doc._.paper_meta["scores"] = {"nan": float("nan"), "inf": [float("inf"), -float("inf"), 0.25]}
    doc[0]._.export_test_note = float("nan")
    save_json(doc, tmp_path / "p.json")
    data = _strict_loads((tmp_path / "p.json").read_text(encoding="utf-8"))
    meta = next(v for name, start, _end, v in data["doc"]["extensions"] if name == "paper_meta" and start is None)
    assert meta["scores"] == {"nan": None, "inf": [None, None, 0.25]}
    assert [v for name, *_rest, v in data["doc"]["extensions"] if name == "export_test_note"] == [None]
    validate_export(data)
    assert load_json(tmp_path / "p.json")._.paper_meta["scores"]["inf"] == [None, None, 0.25]
    assert doc._.paper_meta["scores"]["inf"][0] == float("inf")  # the Doc itself is not changed


def test_strict_json_still_refuses_what_json_cannot_store():
    from scholarly_nlp.doc.serialize import strict_json

    assert _strict_loads(strict_json([1.5, float("nan")])) == [1.5, None]
    circular: list = []
    circular.append(circular)
    with pytest.raises(ValueError, match="Circular reference"):
        strict_json(circular)
    with pytest.raises(TypeError):
        strict_json({"x": object()})
