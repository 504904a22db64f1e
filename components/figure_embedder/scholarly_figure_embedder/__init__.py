"""Figure embeddings: one vector per figure, so that related figures lie close together.

Kuzi and Zhai's method. A figure is represented by its text (the caption plus the sentences
around each mention of it, encoded by a frozen sentence encoder, then a dense layer) and by
its rendered image (a small CNN trained from scratch); the two are concatenated, batch
normalised and projected to an L2-normalised embedding. Training is weakly supervised: the
dot product of two figures' embeddings should be 1 for figures of the same paper, 0.6 for
figures of papers in a citation relation and 0 for random pairs.

The ``figure_embedder`` pipe writes ``doc._.figure_vectors``; :func:`similar_figures`
recommends figures (TF-IDF retrieval, then reranking with the embeddings).
"""

__version__ = "0.1.0"

from .recommend import similar_figures  # noqa: E402

__all__ = ["similar_figures"]
