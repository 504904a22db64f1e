"""JSON export/import and DocBin files for paper Docs.

The JSON export has stable, documented top-level keys for people and other tools::

    paper_id, title, authors[{name, affiliations, email}], abstract,
    sections[{title, number, paragraphs[text]}],
    figures[{id, label, kind, caption, mentions[text]}],
    citances[{text, bib_ids}],
    bibliography{id: {title, authors, year, venue, doi}}

and, where the document model has them, ``footnotes[{id, text}]``,
``formulas[{id, label, text}]`` and ``back_matter[{title, type, paragraphs[text]}]``;
plus ``"doc"``, the compact form from which :func:`doc_from_json` rebuilds the Doc exactly
(``format_version`` 2; the JSON Schema is ``scholarly_nlp/schema/paper.schema.json``):

``lang``, ``text``
    the Doc's language and text.
``tokens``
    ``{"count", "digest", "removed", "added"}``: the token boundaries are those of
    re-tokenising ``text`` with a blank pipeline of ``lang`` (the tokenizer every
    scholarly_nlp pipeline uses, through :func:`scholarly_nlp.doc.tokenize.tokenize`, which
    tokenises whitespace-free runs of over 256 characters in pieces), less the tokens that
    start at the character offsets in ``removed``, plus the ``[start_char, end_char]``
    tokens in ``added`` (the splits at span edges the builder makes, or any other
    retokenisation). ``count`` and ``digest`` (of every token's offsets) are checked on
    rebuild, so a tokenizer that changed since the export is an error, not a silently
    different Doc.
``sent_starts``, ``sent_default``, ``sent_other``
    character offsets of the tokens that start a sentence; the ``Token.is_sent_start``
    value of every other token (-1: inside a sentence, 0: unknown), and the offsets of the
    tokens that have the opposite one. Absent when a dependency parse gives the sentences.
``spans``
    every span group, in order: ``{name: [[start_char, end_char, label, kb_id], ...]}``
    (a fifth item is the span's ``id`` when it has one).
``extensions``
    every ``._`` value stored on the Doc, its spans and tokens:
    ``[name, start_char or null, end_char or null, value]``.
``ents``, ``ents_missing``, ``cats``, ``token_attrs``
    only when a pipeline set them: entities like spans, ranges of tokens with no entity
    annotation, categories, and one list per token attribute (tag, pos, morph, lemma, dep,
    head) instead of a dict per token.

``doc_to_json(doc, full=True)`` adds ``"spacy"``, spaCy's own ``Doc.to_json`` dump (a
dict per token; four to five times the size). Exports of format_version 1 (which had only
``"spacy"`` and a top-level ``"extensions"``) are still read.

Figure image paths (``doc._.paper_meta["figures"][i]["image_path"]``) are written
relative to the output file when they lie inside its folder (absolute otherwise; the stored
paper_meta then says ``"image_paths_relative_to_file": true``), and resolved against that
folder again on loading, so an output folder can be moved as a whole.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import re
import secrets
from functools import lru_cache, partial
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional, Union

import numpy
from spacy.attrs import ENT_IOB, IDX, LENGTH, SENT_START
from spacy.language import Language
from spacy.tokens import Doc, DocBin, Span
from spacy.vocab import Vocab

from ..errors import MalformedInputError, ScholarlyNLPError
from .extensions import install_extensions
from .tokenize import LONG_RUN, tokenize

JSON_FORMAT_VERSION = 2
READABLE_FORMAT_VERSIONS = (1, 2)
_UNDERSCORE = "._."
_META = "paper_meta"
#: Token attributes exported as one column each, in the order Doc() takes them.
_TOKEN_ATTRS = ("tag", "pos", "morph", "lemma", "dep")

PathLike = Union[str, Path]
VocabLike = Union[Vocab, Language, None]


# --------------------------------------------------------------------------- export


def doc_to_json(doc: Doc, full: bool = False, *, base_dir: Optional[PathLike] = None) -> dict:
    """The JSON-able export of a paper Doc: the stable keys, then ``"doc"`` to rebuild it.

    ``full=True`` adds spaCy's per-token ``Doc.to_json`` dump under ``"spacy"``.
    ``base_dir``: write figure image paths that lie under this folder relative to it
    (:func:`save_json` passes the output file's folder).
    """
    data = {
        "format_version": JSON_FORMAT_VERSION,
        "paper_id": doc._.paper_id,
        "title": " ".join(s.text for s in doc.spans.get("title", [])),
        "authors": doc._.authors if Doc.has_extension("authors") else [],
        "abstract": "\n\n".join(s.text for s in doc.spans.get("abstract", [])),
        "sections": [
            {"title": s.title, "number": s.number, "paragraphs": [p.text for p in s.paragraphs]} for s in doc._.sections
        ],
        "figures": [
            {"id": f.id, "label": f.label, "kind": f.kind, "caption": f.caption_text, "mentions": [m.text for m in f.mentions]}
            for f in doc._.figures
        ],
        "citances": [{"text": c.text, "bib_ids": c.bib_ids} for c in doc._.citances],
        "bibliography": doc._.bibliography,
        **_optional_views(doc),
        "doc": compact_doc(doc, base_dir=base_dir),
    }
    if full:
        data["spacy"] = doc.to_json()
    return data


def _optional_views(doc: Doc) -> dict:
    """``footnotes``, ``formulas`` and ``back_matter`` where the document model has those views."""
    views: dict[str, list] = {}
    if Doc.has_extension("footnotes"):
        views["footnotes"] = [{"id": f.id, "text": f.span.text} for f in doc._.footnotes]
    if Doc.has_extension("formulas"):
        views["formulas"] = [{"id": f.id, "label": f.label, "text": f.span.text} for f in doc._.formulas]
    if Doc.has_extension("back_matter"):
        views["back_matter"] = [{"title": b.title, "type": b.type, "paragraphs": [p.text for p in b.paragraphs]}
                                for b in doc._.back_matter]
    return views


def compact_doc(doc: Doc, *, base_dir: Optional[PathLike] = None) -> dict:
    """The ``"doc"`` part of the export: everything needed to rebuild ``doc`` exactly."""
    text = doc.text  # Doc.text joins every token's text: build it once
    starts, ends = _token_offsets(doc)
    ref_starts, ref_ends = _token_offsets(_tokenizer(doc.lang_)(text))
    removed, added = _token_diff(ref_starts, ref_ends, starts, ends, len(text))
    data: dict[str, Any] = {
        "lang": doc.lang_,
        "text": text,
        "tokens": {
            "count": len(doc),
            "digest": _digest(starts, ends),
            "removed": removed,
            "added": added,
        },
    }
    if not doc.has_annotation("DEP"):
        data.update(_sentences(doc, starts))
    data["spans"] = {name: [_span_row(span) for span in group] for name, group in doc.spans.items()}
    data["extensions"] = [
        [key[1], key[2], key[3], _relative_images(value, base_dir) if key[1] == _META and key[2] is None else value]
        for key, value in doc.user_data.items()
        if _is_extension_key(key)
    ]
    if doc.has_annotation("ENT_IOB"):
        data["ents"] = [_span_row(span) for span in doc.ents]
        missing = _runs(doc.to_array(ENT_IOB) == 0)
        if missing:
            data["ents_missing"] = [[int(starts[i]), int(ends[j - 1])] for i, j in missing]
    if doc.cats:
        data["cats"] = dict(doc.cats)
    columns = _token_columns(doc)
    if columns:
        data["token_attrs"] = columns
    return data


def _token_offsets(doc: Doc) -> tuple[numpy.ndarray, numpy.ndarray]:
    if not len(doc):
        empty = numpy.zeros(0, dtype="int64")
        return empty, empty
    array = doc.to_array([IDX, LENGTH]).astype("int64")
    return array[:, 0], array[:, 0] + array[:, 1]


def _pair_keys(starts: numpy.ndarray, ends: numpy.ndarray, length: int) -> numpy.ndarray:
    return starts * (length + 1) + ends


def _token_diff(ref_starts, ref_ends, starts, ends, length: int) -> tuple[list[int], list[list[int]]]:
    """Tokens of the reference tokenisation that are gone (by start) and tokens that are new."""
    ref_keys, keys = _pair_keys(ref_starts, ref_ends, length), _pair_keys(starts, ends, length)
    gone = ~numpy.isin(ref_keys, keys)
    new = ~numpy.isin(keys, ref_keys)
    return ref_starts[gone].tolist(), numpy.stack([starts[new], ends[new]], axis=1).tolist()


def _digest(starts: numpy.ndarray, ends: numpy.ndarray) -> str:
    payload = numpy.stack([starts, ends]).astype("<i8").tobytes()
    return hashlib.sha1(payload).hexdigest()[:16]


def _sentences(doc: Doc, starts: numpy.ndarray) -> dict:
    if not len(doc):
        return {}
    values = doc.to_array(SENT_START).astype("int64")
    rest = values != 1
    default = -1 if (values == -1).any() else 0
    other = rest & (values != default)
    data = {"sent_starts": starts[values == 1].tolist(), "sent_default": default}
    if other.any():
        data["sent_other"] = starts[other].tolist()
    return data


def _span_row(span: Span) -> list:
    row = [span.start_char, span.end_char, span.label_, span.kb_id_]
    if span.id_:
        row.append(span.id_)
    return row


def _runs(mask: numpy.ndarray) -> list[tuple[int, int]]:
    """(start, end) token index ranges where ``mask`` is true."""
    if not mask.any():
        return []
    padded = numpy.concatenate([[False], mask, [False]]).astype("int8")
    edges = numpy.flatnonzero(numpy.diff(padded))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist()))


def _token_columns(doc: Doc) -> dict:
    columns: dict[str, list] = {}
    if doc.has_annotation("TAG"):
        columns["tag"] = [t.tag_ for t in doc]
    if doc.has_annotation("POS"):
        columns["pos"] = [t.pos_ for t in doc]
    if doc.has_annotation("MORPH"):
        columns["morph"] = [str(t.morph) for t in doc]
    if doc.has_annotation("LEMMA"):
        columns["lemma"] = [t.lemma_ for t in doc]
    if doc.has_annotation("DEP"):
        columns["dep"] = [t.dep_ for t in doc]
        columns["head"] = [t.head.i for t in doc]
    return columns


# --------------------------------------------------------------------------- import


def doc_from_json(data: dict, vocab: VocabLike = None, *, base_dir: Optional[PathLike] = None,
                  source: Optional[PathLike] = None) -> Doc:
    """Rebuild a Doc from :func:`doc_to_json` output (format_version 1 or 2).

    ``vocab``: a Vocab or a pipeline (its vocab); default: a blank scholarly_nlp
    pipeline's. ``base_dir``: resolve relative figure image paths against this folder
    (:func:`load_json` passes the file's folder). ``source`` names the file in errors.
    Raises MalformedInputError when the export cannot be rebuilt, naming the reason.
    """
    install_extensions()
    vocab = _vocab(vocab)
    if not isinstance(data, dict):
        raise MalformedInputError(source, "is not a scholarly_nlp JSON export (not a JSON object)")
    version = data.get("format_version", 1)
    if version not in READABLE_FORMAT_VERSIONS:
        raise MalformedInputError(source, f"has JSON export format_version {version!r}; this scholarly_nlp reads "
                                          f"{', '.join(map(str, READABLE_FORMAT_VERSIONS))} (upgrade scholarly_nlp)")
    try:
        if "doc" in data:
            try:
                doc = _rebuild(data["doc"], vocab, source)
            except MalformedInputError:
                if "spacy" not in data:
                    raise
                doc = _rebuild(_from_spacy_json(data["spacy"], []), vocab, source)  # the full dump still rebuilds it
                _set_extensions(doc, data["doc"].get("extensions", []))
        elif "spacy" in data:
            doc = _rebuild(_from_spacy_json(data["spacy"], data.get("extensions", [])), vocab, source)
        else:
            raise MalformedInputError(source, "JSON export has neither a 'doc' nor a 'spacy' section to rebuild the Doc from")
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise MalformedInputError(source, f"JSON export is damaged ({type(exc).__name__}: {exc})") from exc
    if base_dir is not None:
        _resolve_images(doc, base_dir)
    return doc


def _rebuild(data: dict, vocab: Vocab, source: Optional[PathLike]) -> Doc:
    text = data["text"]
    starts, ends = _rebuilt_offsets(data, source)
    spaces = numpy.zeros(len(starts), dtype=bool)
    if len(starts):
        spaces[:-1] = starts[1:] > ends[:-1]
        spaces[-1] = ends[-1] < len(text)
    words = [text[s:e] for s, e in zip(starts.tolist(), ends.tolist())]
    columns = data.get("token_attrs") or {}
    doc = Doc(
        vocab, words=words, spaces=spaces.tolist(),
        tags=columns.get("tag"), pos=columns.get("pos"), morphs=columns.get("morph"), lemmas=columns.get("lemma"),
        heads=columns.get("head"), deps=columns.get("dep"),
    )
    locate = _Locator(starts, ends, source)
    if "sent_starts" in data and len(doc):
        default = int(data.get("sent_default", -1))
        values = numpy.full(len(doc), default, dtype="int64")
        values[locate.starts(data.get("sent_other", []), "sentence")] = 0 if default == -1 else -1
        values[locate.starts(data["sent_starts"], "sentence")] = 1
        doc.from_array([SENT_START], values.astype("uint64").reshape(-1, 1))
    for name, rows in data.get("spans", {}).items():
        doc.spans[name] = locate.spans(doc, rows, f"span group {name!r}")
    if "ents" in data:
        missing = [Span(doc, *locate.range(s, e, "entity")) for s, e in data.get("ents_missing", [])]
        doc.set_ents(locate.spans(doc, data["ents"], "entities"), missing=missing, default="outside")
    if data.get("cats"):
        doc.cats = dict(data["cats"])
    _set_extensions(doc, data.get("extensions", []))
    return doc


def _rebuilt_offsets(data: dict, source: Optional[PathLike]) -> tuple[numpy.ndarray, numpy.ndarray]:
    """Token offsets: re-tokenised text less ``removed`` plus ``added``, checked against the export."""
    text, tokens = data["text"], data["tokens"]
    if "starts" in tokens:  # explicit offsets (converted format_version 1 dumps)
        starts = numpy.asarray(tokens["starts"], dtype="int64")
        ends = numpy.asarray(tokens["ends"], dtype="int64")
    else:
        lang = data.get("lang", "en")
        starts, ends = _apply_token_diff(_tokenizer(lang)(text), tokens, source)
        if not _tokens_match(tokens, starts, ends) and _legacy_runs_affordable(text):
            # written before long runs were tokenised in pieces: its reference is the plain tokenizer
            starts, ends = _apply_token_diff(_plain_tokenizer(lang)(text), tokens, source)
    _check_tokens(text, starts, ends, source)
    if not _tokens_match(tokens, starts, ends):
        raise MalformedInputError(source, _TOKENIZER_CHANGED)
    return starts, ends


#: The most characters in long whitespace-free runs an export may hold for the plain-tokenizer
#: retry (spaCy's tokenizer is quadratic on them: this bounds the retry to about a second).
LEGACY_RUN_CHARS = 4000


def _legacy_runs_affordable(text: str) -> bool:
    """Whether ``text`` has long runs (exports before the cut tokenised them whole) short enough
    in all to tokenise whole again."""
    runs = sum(len(m.group()) for m in LONG_RUN.finditer(text))
    return 0 < runs <= LEGACY_RUN_CHARS


def _apply_token_diff(reference: Doc, tokens: dict, source: Optional[PathLike]) -> tuple[numpy.ndarray, numpy.ndarray]:
    """The reference tokenisation's offsets less ``removed``, plus ``added``, in order."""
    ref_starts, ref_ends = _token_offsets(reference)
    removed = numpy.asarray(tokens.get("removed", []), dtype="int64")
    keep = ~numpy.isin(ref_starts, removed)
    if len(ref_starts) - keep.sum() != len(numpy.unique(removed)):
        raise MalformedInputError(source, _TOKENIZER_CHANGED)
    added = numpy.asarray(tokens.get("added", []), dtype="int64").reshape(-1, 2)
    starts = numpy.concatenate([ref_starts[keep], added[:, 0]])
    ends = numpy.concatenate([ref_ends[keep], added[:, 1]])
    order = numpy.argsort(starts, kind="stable")
    return starts[order], ends[order]


def _tokens_match(tokens: dict, starts: numpy.ndarray, ends: numpy.ndarray) -> bool:
    """True unless the export's token ``count`` or ``digest`` says these are not its tokens."""
    return "count" not in tokens or (len(starts) == tokens["count"] and _digest(starts, ends) == tokens.get("digest"))


_TOKENIZER_CHANGED = ("its token boundaries do not match re-tokenising its text (was it written by another spaCy "
                      "version or tokenizer?); re-export it, or export with full=True / --json-full to keep spaCy's "
                      "own token dump")


def _check_tokens(text: str, starts: numpy.ndarray, ends: numpy.ndarray, source: Optional[PathLike]) -> None:
    """Tokens in order, non-empty, and covering the text with at most one space between them."""
    if not len(starts):
        if text:
            raise MalformedInputError(source, "JSON export has text but no tokens")
        return
    gaps = starts[1:] - ends[:-1]
    bad = (
        starts[0] != 0
        or (ends <= starts).any()
        or (gaps < 0).any()
        or (gaps > 1).any()
        or not (ends[-1] == len(text) or (ends[-1] == len(text) - 1 and text.endswith(" ")))
    )
    if not bad:
        bad = any(text[i] != " " for i in ends[:-1][gaps == 1].tolist())
    if bad:
        raise MalformedInputError(source, "its tokens do not cover the text: " + _TOKENIZER_CHANGED)


class _Locator:
    """Character offsets to token indices, in constant time per lookup."""

    def __init__(self, starts: numpy.ndarray, ends: numpy.ndarray, source: Optional[PathLike]):
        self.starts_array, self.ends_array = starts, ends
        self.source = source

    def _index(self, array: numpy.ndarray, offsets: Any, what: str, kind: str) -> numpy.ndarray:
        offsets = numpy.asarray(offsets, dtype="int64").reshape(-1)
        index = numpy.searchsorted(array, offsets)
        inside = index < len(array)
        ok = inside.copy()
        ok[inside] = array[index[inside]] == offsets[inside]
        if not ok.all():
            bad = int(offsets[~ok][0])
            raise MalformedInputError(self.source, f"{what}: character offset {bad} is not a token {kind}")
        return index

    def starts(self, offsets: Any, what: str) -> numpy.ndarray:
        return self._index(self.starts_array, offsets, what, "start")

    def range(self, start: int, end: int, what: str) -> tuple[int, int]:
        if start == end:  # an empty span sits before the token that starts there
            i = int(numpy.searchsorted(self.starts_array, start))
            return i, i
        return int(self._index(self.starts_array, [start], what, "start")[0]), int(
            self._index(self.ends_array, [end], what, "end")[0]) + 1

    def spans(self, doc: Doc, rows: list, what: str) -> list[Span]:
        if not rows:
            return []
        nonempty = [r for r in rows if r[0] != r[1]]
        firsts = iter(self._index(self.starts_array, [r[0] for r in nonempty], what, "start").tolist())
        lasts = iter(self._index(self.ends_array, [r[1] for r in nonempty], what, "end").tolist())
        spans = []
        for row in rows:
            if row[0] == row[1]:
                i = j = self.range(row[0], row[1], what)[0]
            else:
                i, j = next(firsts), next(lasts) + 1
            spans.append(Span(doc, i, j, label=row[2], kb_id=row[3], span_id=row[4] if len(row) > 4 else 0))
        return spans


def _set_extensions(doc: Doc, rows: Iterable) -> None:
    for name, start, end, value in rows:
        doc.user_data[(_UNDERSCORE, name, start, end)] = value


def _from_spacy_json(spacy_json: dict, extensions: list) -> dict:
    """The compact form of a spaCy ``Doc.to_json`` dump (format_version 1 exports)."""
    tokens = spacy_json.get("tokens", [])
    text = spacy_json["text"]
    starts = [t["start"] for t in tokens]
    data: dict[str, Any] = {
        "text": text,
        "tokens": {"starts": starts, "ends": [t["end"] for t in tokens]},
        "spans": {
            name: [[s["start"], s["end"], s.get("label", ""), s.get("kb_id", "")] for s in group]
            for name, group in spacy_json.get("spans", {}).items()
        },
        "extensions": extensions,
    }
    columns = {key: [t[key] for t in tokens] for key in _TOKEN_ATTRS + ("head",) if tokens and key in tokens[0]}
    if "dep" in columns and "head" not in columns:
        columns["head"] = list(range(len(tokens)))
    if columns:
        data["token_attrs"] = columns
    if "sents" in spacy_json and "dep" not in columns and tokens:
        # As Doc.from_json: each sentence's first token starts it, its other tokens do not;
        # tokens outside every sentence stay unknown, and the first token always reads as a start.
        first = {s["start"] for s in spacy_json["sents"]}
        inside = numpy.zeros(len(text) + 1, dtype="int64")
        for sent in spacy_json["sents"]:
            inside[sent["start"]] += 1
            inside[sent["end"]] -= 1
        covered = numpy.cumsum(inside) > 0
        data["sent_starts"] = [s for i, s in enumerate(starts) if s in first or i == 0]
        data["sent_default"] = 0
        data["sent_other"] = [s for i, s in enumerate(starts) if i and s not in first and covered[s]]
    if "ents" in spacy_json:
        data["ents"] = [[e["start"], e["end"], e["label"], e.get("kb_id", "")] for e in spacy_json["ents"]]
    if spacy_json.get("cats"):
        data["cats"] = spacy_json["cats"]
    return data


# --------------------------------------------------------------------------- helpers


def _is_extension_key(key: Any) -> bool:
    return isinstance(key, tuple) and len(key) == 4 and key[0] == _UNDERSCORE


@lru_cache(maxsize=8)
def _tokenizer(lang: str):
    """The reference tokenisation of an export: a blank ``lang`` pipeline's tokenizer (scholarly_nlp's
    pipelines use it) called as the Doc builder calls it, through :func:`~scholarly_nlp.doc.tokenize.tokenize`
    (linear time on long whitespace-free runs, where spaCy's tokenizer alone is quadratic)."""
    import spacy

    return partial(tokenize, spacy.blank(lang).tokenizer)


@lru_cache(maxsize=8)
def _plain_tokenizer(lang: str):
    """A blank ``lang`` pipeline's tokenizer on its own: the reference of exports written before
    :func:`~scholarly_nlp.doc.tokenize.tokenize` cut long runs."""
    import spacy

    return spacy.blank(lang).tokenizer


@lru_cache(maxsize=1)
def _default_nlp() -> Language:
    from ..api import blank

    return blank()


def _vocab(vocab: VocabLike) -> Vocab:
    if vocab is None:
        return _default_nlp().vocab
    if isinstance(vocab, Language):
        return vocab.vocab
    return vocab


#: Set in a stored paper_meta whose relative image paths are relative to the file's folder
#: (exports and DocBins written before had paths relative to the working directory).
IMAGES_RELATIVE_TO_FILE = "image_paths_relative_to_file"


def _relative_images(meta: Any, base_dir: Optional[PathLike]) -> Any:
    """A copy of paper_meta for a file in ``base_dir``: image paths under that folder become
    relative to it, others absolute, and the copy is marked as such."""
    if base_dir is None or not isinstance(meta, dict) or not meta.get("figures"):
        return meta
    if not any(isinstance(f, dict) and f.get("image_path") for f in meta["figures"]):
        return meta
    base = os.path.abspath(base_dir)
    meta = copy.deepcopy(meta)
    for figure in meta["figures"]:
        path = figure.get("image_path") if isinstance(figure, dict) else None
        if path:
            absolute = os.path.abspath(path)
            inside = os.path.splitdrive(absolute)[0] == os.path.splitdrive(base)[0] and \
                os.path.commonpath([base, absolute]) == base
            figure["image_path"] = Path(os.path.relpath(absolute, base)).as_posix() if inside else absolute
    meta[IMAGES_RELATIVE_TO_FILE] = True
    return meta


def _resolve_images(doc: Doc, base_dir: PathLike) -> None:
    """Make the file-relative image paths of a loaded Doc usable from the working directory."""
    meta = doc._.paper_meta
    if not isinstance(meta, dict) or not meta.pop(IMAGES_RELATIVE_TO_FILE, False):
        return
    for figure in meta.get("figures") or ():
        path = figure.get("image_path") if isinstance(figure, dict) else None
        if path and not os.path.isabs(path):
            figure["image_path"] = os.path.normpath(os.path.join(base_dir, path))


# --------------------------------------------------------------------------- files


#: The head of the target's name a temporary file keeps: with its dot, random part and
#: ``.tmp`` the temporary name stays well under the 255 bytes a file name may have.
_TMP_NAME_BYTES = 200


def write_atomic(path: PathLike, data: Union[bytes, str]) -> None:
    """Write a file via a temporary file in the same folder and a rename (no half files).

    The file gets the mode a plain ``open()`` would give it (0666 less the umask). A
    ``str`` is written as UTF-8; a lone surrogate in it (from an undecodable file name)
    is written as its ``\\udcXX`` escape instead of failing.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data
    while True:
        tmp = path.parent / _temp_name(path.name)
        try:
            # os.open applies the umask to 0o666, as open() does; mkstemp would give 0600.
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _temp_name(name: str) -> str:
    """A fresh temporary name beside ``name``: its head, a random part and ``.tmp``."""
    from ..naming import truncate_bytes

    return f".{truncate_bytes(name, _TMP_NAME_BYTES)}.{secrets.token_hex(6)}.tmp"


def strict_json(data: Any) -> str:
    """``data`` as strict JSON text: a non-finite float (NaN, Infinity) is written as ``null``.

    JSON has no NaN or Infinity; ``json.dumps`` would write them as bare words other
    parsers refuse. Such a float is a legitimate "no value" (a score not computed), so it
    becomes ``null``; ``allow_nan=False`` guarantees that nothing non-standard is written.
    Raises TypeError / ValueError for values JSON cannot store.
    """
    try:
        return json.dumps(data, ensure_ascii=False, allow_nan=False)
    except ValueError as exc:
        if "float" not in str(exc):  # a circular reference, say: not ours to mend
            raise
    # A non-finite float somewhere: walk the data only in this rare case.
    return json.dumps(finite_floats(data), ensure_ascii=False, allow_nan=False)


def finite_floats(value: Any) -> Any:
    """A copy of JSON-able ``value`` with every NaN or infinite float replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite_floats(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_floats(item) for item in value]
    return value


def save_json(doc: Doc, path: PathLike, full: bool = False) -> None:
    """Write one Doc's JSON export atomically (image paths relative to the file's folder).

    The export is strict JSON (:func:`strict_json`: NaN and infinite floats become ``null``).
    """
    path = Path(path)
    data = doc_to_json(doc, full=full, base_dir=path.parent)
    try:
        text = strict_json(data)
    except (TypeError, ValueError) as exc:
        raise ScholarlyNLPError(f"{path}: cannot write the JSON export: {_unserialisable(data)} ({exc}); "
                                "use save_docbin (--format docbin) for such values") from exc
    write_atomic(path, text)


def _unserialisable(data: dict) -> str:
    for name, start, end, value in data["doc"]["extensions"]:
        try:
            strict_json(value)
        except (TypeError, ValueError):
            where = "doc" if start is None else ("token" if end is None else "span")
            return f"the {where} extension ._.{name} holds a value JSON cannot store"
    return "a value JSON cannot store"


def load_json(path: PathLike, vocab: VocabLike = None) -> Doc:
    """Read a Doc written by :func:`save_json`; ``vocab`` (Vocab or pipeline) defaults to a blank one's."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise MalformedInputError(path, f"is not a readable JSON export ({exc})") from exc
    return doc_from_json(data, vocab, base_dir=Path(path).parent, source=path)


def save_docbin(docs: Iterable[Doc], path: PathLike) -> int:
    """Write Docs (with span groups and ``._`` values) to a ``.spacy`` file atomically; returns the count.

    Figure image paths under the file's folder are stored relative to it.
    """
    path = Path(path)
    docbin = DocBin(store_user_data=True)
    count = 0
    key = (_UNDERSCORE, _META, None, None)
    for doc in docs:
        meta = doc.user_data.get(key)
        relative = _relative_images(meta, path.parent)
        docbin.merge(_docbin_of(doc, key, relative, path))
        count += 1
    write_atomic(path, docbin.to_bytes())
    return count


def _docbin_of(doc: Doc, key: tuple, meta: Any, path: Path) -> DocBin:
    """A DocBin of ``doc`` alone with ``meta`` as its stored paper_meta; the Doc stays unchanged.

    DocBin.add serialises user_data at once (msgpack), so the values are swapped in only for
    the call; a failed add leaves a DocBin half-filled, hence one DocBin per Doc, merged by
    the caller. msgpack stores only valid UTF-8: a lone surrogate (a file name that is not
    UTF-8, in paper_meta's source) is stored as U+FFFD rather than failing the paper.
    """
    originals: dict = {}  # the keys swapped, with their own values (_ABSENT: the Doc had none)

    def swap(name: Any, value: Any) -> None:
        originals.setdefault(name, doc.user_data.get(name, _ABSENT))
        doc.user_data[name] = value

    if meta is not doc.user_data.get(key):
        swap(key, meta)
    try:
        try:
            docbin = DocBin(store_user_data=True)
            docbin.add(doc)
        except UnicodeEncodeError:
            for name, value in list(doc.user_data.items()):
                clean = _without_surrogates(value)
                if clean is not value:
                    swap(name, clean)
            docbin = DocBin(store_user_data=True)
            docbin.add(doc)
        return docbin
    except (TypeError, ValueError, OverflowError) as exc:
        raise ScholarlyNLPError(f"{path}: cannot write the DocBin: {_unpackable(doc)} ({exc})") from exc
    finally:
        for name, value in originals.items():
            if value is _ABSENT:
                doc.user_data.pop(name, None)
            else:
                doc.user_data[name] = value


_ABSENT = object()
_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings replaced by U+FFFD (``value`` itself when it has none)."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if _SURROGATE.search(value) else value
    if isinstance(value, dict):
        items = {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
        unchanged = len(items) == len(value) and all(k in value and value[k] is v for k, v in items.items())
        return value if unchanged else items
    if isinstance(value, (list, tuple)):
        items = [_without_surrogates(item) for item in value]
        return value if all(a is b for a, b in zip(items, value)) else items
    return value


def _unpackable(doc: Doc) -> str:
    """Which ``._`` value of ``doc`` msgpack cannot store (an integer of 2**64 or more, an object)."""
    import srsly

    for key, value in doc.user_data.items():
        try:
            srsly.msgpack_dumps(value)
        except (TypeError, ValueError, OverflowError):
            if _is_extension_key(key):
                where = "doc" if key[2] is None else ("token" if key[3] is None else "span")
                return f"the {where} extension ._.{key[1]} holds a value msgpack cannot store"
            return f"the user_data value {key!r} cannot be stored by msgpack"
    return "a value msgpack cannot store"


def load_docbin(path: PathLike, vocab: VocabLike = None) -> Iterator[Doc]:
    """Read Docs from a ``.spacy`` file written by :func:`save_docbin`; ``vocab`` as in :func:`load_json`."""
    install_extensions()
    vocab = _vocab(vocab)
    try:
        docbin = DocBin(store_user_data=True).from_disk(path)
    except (OSError, ValueError) as exc:
        raise MalformedInputError(path, f"is not a readable DocBin file ({exc})") from exc
    return _resolved(docbin.get_docs(vocab), Path(path).parent)


def _resolved(docs: Iterator[Doc], base_dir: Path) -> Iterator[Doc]:
    for doc in docs:
        _resolve_images(doc, base_dir)
        yield doc
