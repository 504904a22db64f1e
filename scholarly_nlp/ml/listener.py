"""The listener config of components that read the shared ``transformer`` pipe."""

from __future__ import annotations


def transformer_listener_config(grad_factor: float = 1.0, upstream: str = "*") -> dict:
    """A ``spacy-transformers.TransformerListener.v1`` tok2vec block: one vector per spaCy token
    (the mean of its wordpieces). With the transformer frozen, ``grad_factor`` has no effect."""
    return {
        "@architectures": "spacy-transformers.TransformerListener.v1",
        "grad_factor": grad_factor,
        "pooling": {"@layers": "reduce_mean.v1"},
        "upstream": upstream,
    }
