"""A per-Doc index cached weakly by its Doc: the base of the sentence and paragraph indexes.

Linkers query one paper many times (every citance of a reference paper, every contribution
sentence of a paper), so an index is built once per Doc and reused. The cache is a
``WeakKeyDictionary`` keyed by the Doc, and its value must not refer to the Doc strongly (a
value that does keeps its own key alive, and the entry never goes): an index holds a
weakref to its Doc and the boundaries of its spans, and makes the Spans when asked. A cached
index is rebuilt when the Doc's :meth:`DocIndex.doc_key` changes (its text, sentences or
paragraphs were edited).
"""

from __future__ import annotations

import hashlib
import weakref
from typing import ClassVar, Iterable, Optional, TypeVar

from spacy.attrs import ORTH, SENT_START, SPACY
from spacy.tokens import Doc, Span

Index = TypeVar("Index", bound="DocIndex")
SpanKey = tuple


class DocIndex:
    """Base class: subclasses build their index in ``__init__`` (calling this one first) and
    define :meth:`doc_key`; :meth:`for_doc` gives the cached index of a Doc.

    Each subclass has its own cache and its own ``builds`` counter (indexes built by this
    process; tests use it to check the cache).
    """

    builds: ClassVar[int] = 0
    _cache: ClassVar[weakref.WeakKeyDictionary]

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls._cache = weakref.WeakKeyDictionary()
        cls.builds = 0

    def __init__(self, doc: Doc):
        self._doc_ref = weakref.ref(doc)
        self.key = self.doc_key(doc)
        type(self).builds += 1

    @classmethod
    def doc_key(cls, doc: Doc) -> str:
        """What the index depends on, as a digest; a different key means a stale index.

        The default covers the text (each token's orth and trailing space) and the sentence
        starts, read as one C-level array: linkers ask for the index of the same Doc once per
        query, and building ``doc.text`` or walking ``doc.sents`` each time made that lookup
        cost as much as the query itself.
        """
        columns = doc.to_array([ORTH, SPACY, SENT_START])
        return hashlib.blake2b(columns.tobytes(), digest_size=16).hexdigest()

    @property
    def doc(self) -> Optional[Doc]:
        """The indexed Doc (held weakly: None once it has been garbage-collected)."""
        return self._doc_ref()

    @staticmethod
    def span_keys(spans: Iterable[Span]) -> list[SpanKey]:
        """What the index keeps of each span, instead of the Span itself."""
        return [(s.start, s.end, s.label, s.kb_id, s.id) for s in spans]

    def spans(self, keys: Iterable[SpanKey]) -> list[Span]:
        """The Spans of :meth:`span_keys` on the indexed Doc (labels and ids kept)."""
        doc = self._doc_ref()
        if doc is None:
            raise ReferenceError("the indexed Doc no longer exists")
        return [Span(doc, start, end, label=label, kb_id=kb_id, span_id=span_id)
                for start, end, label, kb_id, span_id in keys]

    @classmethod
    def for_doc(cls: type[Index], doc: Doc) -> Index:
        """The index of ``doc``, built on first use and then reused until the Doc changes."""
        key = cls.doc_key(doc)
        index = cls._cache.get(doc)
        if index is not None and index.doc is doc and index.key == key:
            return index
        index = cls(doc)
        cls._cache[doc] = index
        return index

    @classmethod
    def clear_cache(cls) -> None:
        """Forget every cached index (``builds`` is not reset)."""
        cls._cache.clear()

    @classmethod
    def cache_size(cls) -> int:
        """Number of cached indexes (one per live Doc that was queried)."""
        return len(cls._cache)
