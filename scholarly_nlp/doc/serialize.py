"""JSON export/import and DocBin files for paper Docs.

The JSON export has stable, documented top-level keys for people and other tools::

    paper_id, title, abstract,
    sections[{title, number, paragraphs[text]}],
    figures[{id, label, kind, caption, mentions[text]}],
    citances[{text, bib_ids}],
    bibliography{id: {title, authors, year, venue, doi}}

plus ``"spacy"`` (spaCy's ``Doc.to_json``: tokens, sentences, span groups) and
``"extensions"`` (every ``._`` value set on the Doc, its spans and tokens), so that
:func:`doc_from_json` restores the Doc exactly.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable, Iterator, Union

from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab

from ..errors import MalformedInputError
from .extensions import install_extensions

JSON_FORMAT_VERSION = 1
_UNDERSCORE = "._."


def doc_to_json(doc: Doc) -> dict:
    """The JSON-able export of a paper Doc (stable keys above, plus what import needs)."""
    return {
        "format_version": JSON_FORMAT_VERSION,
        "paper_id": doc._.paper_id,
        "title": " ".join(s.text for s in doc.spans.get("title", [])),
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
        "spacy": doc.to_json(),
        "extensions": [[key[1], key[2], key[3], value] for key, value in doc.user_data.items() if _is_extension_key(key)],
    }


def doc_from_json(data: dict, vocab: Vocab) -> Doc:
    """Rebuild a Doc from :func:`doc_to_json` output; MalformedInputError if it lacks the spaCy part."""
    install_extensions()
    if "spacy" not in data:
        raise MalformedInputError(None, "JSON export has no 'spacy' section to rebuild the Doc from")
    doc = Doc(vocab).from_json(data["spacy"])
    for name, start, end, value in data.get("extensions", []):
        doc.user_data[(_UNDERSCORE, name, start, end)] = value
    return doc


def _is_extension_key(key: Any) -> bool:
    return isinstance(key, tuple) and len(key) == 4 and key[0] == _UNDERSCORE


def write_atomic(path: Union[str, Path], data: Union[bytes, str]) -> None:
    """Write a file via a temporary file in the same folder and a rename (no half files)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_json(doc: Doc, path: Union[str, Path]) -> None:
    """Write one Doc's JSON export atomically."""
    write_atomic(path, json.dumps(doc_to_json(doc), ensure_ascii=False))


def load_json(path: Union[str, Path], vocab: Vocab) -> Doc:
    """Read a Doc written by :func:`save_json`."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise MalformedInputError(path, f"is not a readable JSON export ({exc})") from exc
    return doc_from_json(data, vocab)


def save_docbin(docs: Iterable[Doc], path: Union[str, Path]) -> int:
    """Write Docs (with span groups and ``._`` values) to a ``.spacy`` file atomically; returns the count."""
    docbin = DocBin(store_user_data=True)
    count = 0
    for doc in docs:
        docbin.add(doc)
        count += 1
    write_atomic(path, docbin.to_bytes())
    return count


def load_docbin(path: Union[str, Path], vocab: Vocab) -> Iterator[Doc]:
    """Read Docs from a ``.spacy`` file written by :func:`save_docbin`."""
    install_extensions()
    return DocBin(store_user_data=True).from_disk(path).get_docs(vocab)
