"""Citance linker: which sentences of a cited (reference) paper a citance refers to.

Stage 1 retrieves candidates with BM25 and a position prior
(:mod:`scholarly_nlp.retrieval.sentences`); stage 2 reranks them with a cross-encoder
(``scholarly_nlp.CrossEncoder.v1``). The spaCy factory is ``citance_linker``.
"""

from .factory import CitanceLinker, make_citance_linker

__all__ = ["CitanceLinker", "make_citance_linker"]
