"""Contribution linker: which body paragraphs explain a paper's contribution sentences (issue #6).

The introduction sentences that state a contribution (``doc._.contribution_scores`` from a
``contribution_detector`` pipe, else a first-person-plural rule) are the queries; the body
paragraphs (:func:`scholarly_nlp.introduction_and_body`) are the
candidates. The score is a pair scorer's score (default the zero-shot MiniLM bi-encoder
``scholarly_nlp.BiEncoderScorer.v1``) plus ``bm25_weight`` x BM25 scaled by its maximum.
The spaCy factory is ``contribution_linker``; :func:`silver_pairs` derives training pairs
from "see Section N" pointers.
"""

from .factory import ContributionLinker, make_contribution_linker
from .silver import silver_pairs

__all__ = ["ContributionLinker", "make_contribution_linker", "silver_pairs"]
