"""``example_keyword_tagger``: a spaCy component that flags sentences containing a keyword.

Config: ``keyword`` (a word or phrase, matched on word boundaries; inner whitespace matches
any whitespace) and ``case_sensitive``. Each matching sentence gets
``sent._.has_example_keyword = True``; ``doc._.example_keyword_sents`` lists them. A Doc
without sentence boundaries is treated as one sentence. Several taggers in one pipeline
accumulate their flags. The component has no state besides its config, which spaCy
saves in ``config.cfg``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:  # pragma: no cover
    from spacy.language import Language
    from spacy.tokens import Doc, Span

FACTORY_NAME = "example_keyword_tagger"
DEFAULT_CONFIG = {"keyword": "model", "case_sensitive": False}
SPAN_FLAG = "has_example_keyword"
DOC_SENTS = "example_keyword_sents"
ASSIGNS = [f"span._.{SPAN_FLAG}"]


def sentences(doc: "Doc") -> Iterable["Span"]:
    """The Doc's sentences, or the whole Doc as one span when it has no boundaries."""
    if doc.has_annotation("SENT_START"):
        return doc.sents
    return [doc[:]] if len(doc) else []


def keyword_sents(doc: "Doc") -> list["Span"]:
    """Getter of ``doc._.example_keyword_sents``: the flagged sentences, in order."""
    return [sent for sent in sentences(doc) if sent._.get(SPAN_FLAG)]


#: (object, name, set_extension kwargs) of every extension the plugin installs.
EXTENSIONS: list[tuple[str, str, dict[str, Any]]] = [
    ("span", SPAN_FLAG, {"default": False}),
    ("doc", DOC_SENTS, {"getter": keyword_sents}),
]


def install_extensions() -> None:
    """Install the plugin's extensions (idempotent), for the spaCy-only loading path."""
    from scholarly_nlp import set_extension

    for obj, name, kwargs in EXTENSIONS:
        set_extension(obj, name, **kwargs)


def compile_keyword(keyword: str, case_sensitive: bool) -> "re.Pattern[str]":
    """A regex for the keyword on word boundaries; ValueError for an empty keyword."""
    words = keyword.split()
    if not words:
        raise ValueError(f"{FACTORY_NAME}: 'keyword' must be a non-empty word or phrase, got {keyword!r}")
    body = r"\s+".join(re.escape(word) for word in words)
    return re.compile(rf"(?<!\w){body}(?!\w)", 0 if case_sensitive else re.IGNORECASE)


class KeywordTagger:
    """Sets ``sent._.has_example_keyword`` on every sentence that contains the keyword."""

    def __init__(self, nlp: "Language", name: str, keyword: str, case_sensitive: bool):
        self.name = name
        self.keyword = keyword
        self.case_sensitive = case_sensitive
        self.pattern = compile_keyword(keyword, case_sensitive)
        install_extensions()

    def __call__(self, doc: "Doc") -> "Doc":
        """Flag the matching sentences of one Doc in place."""
        for sent in sentences(doc):
            if self.pattern.search(sent.text):
                sent._.set(SPAN_FLAG, True)
        return doc


def make_keyword_tagger(nlp: "Language", name: str, keyword: str, case_sensitive: bool) -> KeywordTagger:
    """spaCy factory of ``example_keyword_tagger`` (both discovery paths register this one)."""
    return KeywordTagger(nlp, name, keyword=keyword, case_sensitive=case_sensitive)
