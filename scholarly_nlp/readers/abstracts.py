"""Title-and-abstract records (CSFCube, CSAbstruct) and their Docs.

CSFCube's ``abstracts-csfcube-preds.jsonl`` and CSAbstruct's ``train/dev.jsonl`` give a paper
as a list of abstract sentences, with one role label per sentence (CSFCube's predicted
``pred_labels``, CSAbstruct's gold ``labels``). :func:`abstract_doc` turns such a record into
a paper Doc like any other (``title`` and ``abstract`` span groups, one Doc sentence per
given sentence) and, when labels are present, the ``roles`` span group.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional, Union

from spacy.language import Language
from spacy.tokens import Doc

from ..doc.builder import paper_to_doc
from ..doc.roles import ROLES, set_roles
from ..errors import InputError, MalformedInputError
from ..paper import Block, Paper

PathLike = Union[str, Path]

SENTENCE_SEPARATOR = " "


@dataclass
class AbstractRecord:
    """A paper known by its title and abstract sentences, with optional per-sentence roles."""

    paper_id: str
    title: str
    sentences: list[str]
    roles: Optional[list[str]] = None
    metadata: dict = field(default_factory=dict)


def _jsonl_objects(path: PathLike) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line; MalformedInputError names file and line."""
    try:
        fh = open(path, "r", encoding="utf-8")
    except OSError as exc:
        raise InputError(path, f"cannot read the file ({exc.strerror or exc})") from exc
    with fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise MalformedInputError(path, f"line {lineno} is not valid JSON ({exc.msg})") from exc
            if not isinstance(obj, dict):
                raise MalformedInputError(path, f"line {lineno} is not a JSON object")
            yield lineno, obj


def _check_roles(path: PathLike, lineno: int, sentences: list, roles: Optional[list]) -> Optional[list[str]]:
    """Lower-cased roles, validated against the sentences; MalformedInputError otherwise."""
    if roles is None:
        return None
    if not isinstance(roles, list) or len(roles) != len(sentences):
        raise MalformedInputError(path, f"line {lineno}: {len(roles) if isinstance(roles, list) else 'no'} labels "
                                        f"for {len(sentences)} sentences")
    # CSFCube writes "method_label"; CSAbstruct writes "method" (or "METHOD").
    out = [str(r).lower().removesuffix("_label") for r in roles]
    unknown = sorted(set(out) - set(ROLES))
    if unknown:
        raise MalformedInputError(path, f"line {lineno}: unknown label(s) {unknown}; expected {list(ROLES)}")
    return out


def _sentences(path: PathLike, lineno: int, value: object, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise MalformedInputError(path, f"line {lineno}: {key!r} must be a list of sentence strings")
    return value


def read_csfcube_abstracts(path: PathLike) -> list[AbstractRecord]:
    """Read CSFCube's ``abstracts-csfcube-preds.jsonl``: paper_id, title, abstract, pred_labels.

    Roles are the shipped ``pred_labels`` (None when a line has none).
    """
    records = []
    for lineno, obj in _jsonl_objects(path):
        if "paper_id" not in obj or "abstract" not in obj:
            raise MalformedInputError(path, f"line {lineno} lacks 'paper_id' or 'abstract'")
        sentences = _sentences(path, lineno, obj["abstract"], "abstract")
        roles = _check_roles(path, lineno, sentences, obj.get("pred_labels"))
        records.append(AbstractRecord(str(obj["paper_id"]), str(obj.get("title") or ""), sentences, roles,
                                      dict(obj.get("metadata") or {})))
    return records


def read_csabstruct(path: PathLike) -> list[AbstractRecord]:
    """Read a CSAbstruct split (``train.jsonl``/``dev.jsonl``): abstract_id, sentences, labels.

    CSAbstruct has no titles. ``paper_id`` is the ``abstract_id`` as a string when the file's
    ids are distinct; the published splits set every ``abstract_id`` to 0, so there (and for
    lines without one) it is ``"line N"``, the record's 1-based line number, which tells the
    abstracts apart in predictions.
    """
    rows = []
    for lineno, obj in _jsonl_objects(path):
        if "sentences" not in obj:
            raise MalformedInputError(path, f"line {lineno} lacks 'sentences'")
        sentences = _sentences(path, lineno, obj["sentences"], "sentences")
        roles = _check_roles(path, lineno, sentences, obj.get("labels"))
        rows.append((lineno, obj.get("abstract_id"), sentences, roles))
    ids = [abstract_id for _, abstract_id, _, _ in rows]
    distinct = None not in ids and len(set(map(str, ids))) == len(ids)
    return [AbstractRecord(str(abstract_id) if distinct else f"line {lineno}", "", sentences, roles)
            for lineno, abstract_id, sentences, roles in rows]


def abstract_paper(record: AbstractRecord) -> Paper:
    """A :class:`Paper` with a title block and one abstract block whose sentences are given."""
    sentences = [s.strip() for s in record.sentences if s and s.strip()]
    text = SENTENCE_SEPARATOR.join(sentences)
    offsets, pos = [], 0
    for sentence in sentences:
        offsets.append((pos, pos + len(sentence)))
        pos += len(sentence) + len(SENTENCE_SEPARATOR)
    blocks = []
    if record.title.strip():
        blocks.append(Block(kind="title", text=record.title.strip()))
    if text:
        blocks.append(Block(kind="abstract", text=text, sentences=offsets))
    return Paper(paper_id=record.paper_id, source=record.metadata.get("source"), reader="abstract", blocks=blocks)


def abstract_doc(record: AbstractRecord, nlp: Language) -> Doc:
    """The paper Doc of a title-and-abstract record, with the ``roles`` group when it has roles.

    Blank sentences are dropped (with their roles). A record with neither title nor abstract
    gives an empty Doc.
    """
    doc = paper_to_doc(abstract_paper(record), nlp)
    if record.roles is not None:
        kept = [r for s, r in zip(record.sentences, record.roles) if s and s.strip()]
        set_roles(doc, kept)
    return doc
