"""BM25 over the sentences of one Doc, with an optional position prior.

Stage 1 of the citance linker (UniHD, CL-SciSumm 2020 Task 1A) is built on it: given a
query (a citance, a sentence of a citing paper that cites a reference paper) and a paper
as a spaCy Doc, rank the paper's sentences by BM25 similarity to the query, optionally
boosted by a position prior (cited text is more often in the abstract and introduction
than late in the paper).

* :class:`SentenceIndex` holds a :mod:`bm25s` index over one Doc's sentences. It is
  built once per Doc: :meth:`SentenceIndex.for_doc` keeps a cache keyed weakly by the
  Doc (checked against a hash of its text), so running many queries against one paper
  indexes it once. ``SentenceIndex.builds`` counts the indexes ever built. The index
  refers to its Doc only weakly (it keeps sentence boundaries, not Spans), so a cached
  index never keeps its Doc alive and the entry goes when the Doc does.
* :func:`query_text` removes citation markers (``(Smith et al., 2019)``, ``[12]``,
  ``Smith et al. (2019)``) and number/math noise from a query before it is tokenised.
* :func:`top_sentences` returns the best ``k`` sentences as ``(Span, score)`` pairs.

Tokenisation is bm25s's own: lower-cased, ``\\b\\w\\w+\\b`` tokens, bm25s's English stop
word list. No stemmer is used: bm25s's stemming needs the separate PyStemmer package,
which this project does not install. Indexed sentences get the same cleaning as the
query (so numbers and the paper's own citation markers are not matched either).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import bm25s
import numpy as np

from .doc_index import DocIndex

__all__ = ["DEFAULT_K", "POSITION_BOOST", "PRIOR_FRACTION", "SentenceIndex", "query_text",
           "strip_citation_markers", "tokenize", "top_sentences"]

DEFAULT_K = 4
POSITION_BOOST = 1.5
PRIOR_FRACTION = 0.3

_YEAR = r"(?:19|20)\d{2}[a-z]?"
_NAME = r"[A-Z][A-Za-z\u00C0-\u024F'\-]+"
_AUTHORS = rf"{_NAME}(?:\s+(?:et\s+al\.?|(?:and|&)\s+{_NAME}))?"
#: Parenthesised or bracketed author-year citations: "(Smith et al., 2019; Jones 2018a)".
_PAREN_CITATION = re.compile(rf"[\(\[][^\(\)\[\]]*?\b{_YEAR}\b[^\(\)\[\]]*?[\)\]]")
#: Numeric citations: "[12]", "[3, 5-7]", "[3–5]".
_NUMERIC_CITATION = re.compile(r"\[\s*\d+(?:\s*[,;\-\u2013]\s*\d+)*\s*\]")
#: Narrative citations: "Smith et al. (2019)", "Smith and Jones (2019a)", "Smith (2019, p. 3)".
_NARRATIVE_CITATION = re.compile(rf"\b{_AUTHORS}\s*\(\s*{_YEAR}(?:\s*[,;][^()]*)?\)")
#: Bare author-year left in running text: "Smith et al., 2019", "Smith, 2019".
_BARE_CITATION = re.compile(rf"\b{_AUTHORS},?\s+{_YEAR}\b")
#: Any token holding a digit (numbers, "F1", "2nd", "10.5%"), and math symbols.
_NUMBER_TOKEN = re.compile(r"\S*\d\S*")
_MATH = re.compile(r"[=+*/^_<>|\\{}\u2200-\u22FF\u0391-\u03C9]")
_LEFTOVER_ETAL = re.compile(r"\bet\s+al\b\.?", re.IGNORECASE)
_WS = re.compile(r"\s+")


def strip_citation_markers(citance_text: str) -> str:
    """The citance with its citation markers (and leftover ``et al.``) replaced by spaces.

    The same marker patterns as :func:`query_text`, but numbers and math are kept: this
    is the text a cross-encoder sees, which can use them.
    """
    text = citance_text
    for pattern in (_NARRATIVE_CITATION, _PAREN_CITATION, _NUMERIC_CITATION, _BARE_CITATION, _LEFTOVER_ETAL):
        text = pattern.sub(" ", text)
    return _WS.sub(" ", text).strip()


def query_text(citance_text: str) -> str:
    """The citance with citation markers and number/math noise replaced by spaces.

    Removed: author-year citations in parentheses or brackets (``(Smith et al., 2019;
    Jones 2018)``), numeric citations (``[12]``, ``[3, 5-7]``), narrative citations
    including the author names (``Smith et al. (2019)``), bare ``Smith et al., 2019``,
    leftover ``et al.``, any token containing a digit, and math symbols (``=+*/^_<>|\\{}``,
    Greek letters, the Unicode mathematical operators). Whitespace is collapsed.
    """
    text = citance_text
    for pattern in (_NARRATIVE_CITATION, _PAREN_CITATION, _NUMERIC_CITATION, _BARE_CITATION,
                    _LEFTOVER_ETAL, _NUMBER_TOKEN, _MATH):
        text = pattern.sub(" ", text)
    return _WS.sub(" ", text).strip()


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    """bm25s tokens (lower-cased, English stop words removed) of each cleaned text."""
    return bm25s.tokenize(
        [query_text(t) for t in texts], lower=True, stopwords="en", return_ids=False,
        show_progress=False,
    )


class SentenceIndex(DocIndex):
    """A BM25 index over the sentences of one paper Doc (e.g. a cited reference paper).

    Build it with :meth:`for_doc` (cached per Doc) rather than the constructor.

    Attributes: ``doc``; ``sentences`` (the Doc's sentence Spans in order); ``sids`` (the
    CL-SciSumm sid of each sentence from ``doc._.paper_meta["sids"]``, or None when the
    Doc has none); ``retriever`` (the :class:`bm25s.BM25`).
    """

    def __init__(self, doc, *, k1: float = 1.5, b: float = 0.75):
        sentences = list(doc.sents)
        if not sentences:
            raise ValueError("reference Doc has no sentences to index")
        self._bounds = [(s.start, s.end) for s in sentences]
        meta = getattr(getattr(doc, "_", None), "paper_meta", None) if doc.has_extension("paper_meta") else None
        sids = (meta or {}).get("sids")
        self.sids: list[str] | None = list(sids) if sids and len(sids) == len(sentences) else None
        tokens = tokenize([s.text for s in sentences])
        self.retriever = bm25s.BM25(k1=k1, b=b)
        self.retriever.index(tokens, show_progress=False)
        self._vocab = set(self.retriever.vocab_dict)
        super().__init__(doc)  # counted and cached only once it is built

    @property
    def sentences(self) -> list:
        """The Doc's sentence Spans in order (made on each access; bind it in loops)."""
        doc = self.doc
        if doc is None:
            raise ReferenceError("the indexed Doc no longer exists")
        return [doc[start:end] for start, end in self._bounds]

    # ------------------------------------------------------------------ scoring
    def __len__(self) -> int:
        return len(self._bounds)

    def query_tokens(self, citance_text: str) -> list[str]:
        """The citance's BM25 tokens that occur in this paper's vocabulary."""
        return [t for t in tokenize([citance_text])[0] if t in self._vocab]

    def prior(self, position_boost: float = POSITION_BOOST, prior_fraction: float = PRIOR_FRACTION) -> np.ndarray:
        """Per-sentence multiplier: ``position_boost`` for the first ``prior_fraction`` of
        the sentences (``ceil(fraction * n)`` of them), 1.0 for the rest."""
        if position_boost <= 0:
            raise ValueError(f"position_boost must be > 0, got {position_boost!r}")
        if not 0.0 <= prior_fraction <= 1.0:
            raise ValueError(f"prior_fraction must be in [0, 1], got {prior_fraction!r}")
        weights = np.ones(len(self._bounds), dtype=np.float64)
        weights[: math.ceil(prior_fraction * len(self._bounds))] = position_boost
        return weights

    def scores(self, citance_text: str, *, position_boost: float = POSITION_BOOST,
               prior_fraction: float = PRIOR_FRACTION) -> np.ndarray:
        """BM25 score of every sentence for the citance, times the position prior.

        ``position_boost=1.0`` gives plain BM25. Raises ValueError for an empty citance
        (empty or whitespace-only text).
        """
        if not isinstance(citance_text, str) or not citance_text.strip():
            raise ValueError(f"citance_text is empty ({citance_text!r}); nothing to link")
        tokens = self.query_tokens(citance_text)
        raw = (np.asarray(self.retriever.get_scores(tokens), dtype=np.float64) if tokens
               else np.zeros(len(self._bounds), dtype=np.float64))
        return raw * self.prior(position_boost, prior_fraction)

    def search(self, citance_text: str, k: int = DEFAULT_K, *, position_boost: float = POSITION_BOOST,
               prior_fraction: float = PRIOR_FRACTION, threshold: float | None = None) -> list[tuple[int, float]]:
        """The best ``k`` ``(sentence index, score)`` pairs, best first.

        Ties keep document order. With ``threshold``, sentences scoring below it are
        dropped (so fewer than ``k`` may come back). Raises ValueError for ``k < 1``.
        """
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")
        scores = self.scores(citance_text, position_boost=position_boost, prior_fraction=prior_fraction)
        order = np.argsort(-scores, kind="stable")
        out = []
        for i in order[:k]:
            score = float(scores[i])
            if threshold is not None and score < threshold:
                break
            out.append((int(i), score))
        return out


def top_sentences(citance_text: str, reference_doc, k: int = DEFAULT_K, position_boost: float = POSITION_BOOST,
         prior_fraction: float = PRIOR_FRACTION, threshold: float | None = None) -> list:
    """The ``k`` sentences of ``reference_doc`` best matching a citance (or any query):
    ``[(Span, score), ...]``, best first.

    ``reference_doc`` is the reference paper's Doc (e.g. from
    :func:`scholarly_nlp.readers.clscisumm.reference_doc`); its index is built once and
    cached (:meth:`SentenceIndex.for_doc`). Scores are BM25 times the position prior
    (``position_boost`` for sentences in the first ``prior_fraction`` of the paper; pass
    ``position_boost=1.0`` for plain BM25). ``threshold`` drops sentences scoring below
    it. Raises ValueError naming the problem for an empty citance or ``k < 1``.
    """
    index = SentenceIndex.for_doc(reference_doc)
    hits = index.search(citance_text, k, position_boost=position_boost, prior_fraction=prior_fraction,
                        threshold=threshold)
    sentences = index.sentences
    return [(sentences[i], score) for i, score in hits]
