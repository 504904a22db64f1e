"""The listener config of components that read the shared ``transformer`` pipe, and the check
that the transformer ran before them."""

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


def check_transformer_ran(component: str, docs) -> None:
    """Raise a ValueError naming the fix when no transformer pipe annotated ``docs`` before
    ``component`` (its listener would otherwise fail deep inside spacy-transformers)."""
    from spacy.tokens import Doc

    if any(len(doc) and (not Doc.has_extension("trf_data") or doc._.trf_data is None) for doc in docs):
        raise ValueError(
            f"{component} reads the shared transformer's output (doc._.trf_data), but no transformer pipe ran "
            f"before it: add one first, e.g. nlp.add_pipe('scholarly_transformer', name='transformer', first=True), "
            f"or load a trained pipeline (scholarly_nlp.load('scholarly_core'))")
