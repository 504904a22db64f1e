"""The thinc model of the abstract sentence role tagger (``scholarly_facet_classifier.SentenceRoleTagger.v1``).

Input: a batch of paper Docs. Output: per Doc, an ``(n_abstract_sentences, 5)`` matrix of
role probabilities, rows aligned with :func:`scholarly_nlp.doc.roles.abstract_sentences`,
columns in :data:`scholarly_nlp.doc.roles.ROLES` order (a Doc without abstract sentences
gives a ``(0, 5)`` array).

Layers:

1. ``tok2vec`` (in configs a ``spacy-transformers.TransformerListener.v1`` reading the
   shared ``transformer`` pipe) gives one vector per token;
2. sentence vector = the mean of the sentence's token vectors, concatenated with three
   position features: relative position ``i / (n - 1)`` (0 for a one-sentence abstract),
   ``is_first`` and ``is_last`` (the pooling and its backprop are written here);
3. a ``Maxout`` projection to ``hidden_width`` with layer normalisation (and dropout): the
   mean-pooled MiniLM token vectors are small (mean absolute value about 0.1), and fed
   straight into the LSTM they made training crawl;
4. sequential context: a bidirectional LSTM over the sentence sequence of each abstract
   (thinc's ``PyTorchLSTM``, wrapped ``with_padded``; bidirectional, it outputs ``nO``
   columns, ``nO / 2`` per direction, so ``hidden_width`` must be even). thinc's own
   numpy ``LSTM`` (same output width) was measured first and learnt far more slowly on the
   same features (dev accuracy still falling after 4 epochs where the PyTorch LSTM reached
   its plateau in 2), so the PyTorch one is used;
5. dropout and a ``Softmax`` layer over the five roles.

The Softmax backprop takes the gradient with respect to its logits, so the loss
gradient to pass is ``probabilities - one_hot(gold)`` (scaled), as for spaCy's tagger.
"""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Dropout, Maxout, Model, PyTorchLSTM, Softmax, chain, with_array
from thinc.types import Floats2d

from scholarly_nlp import ROLES, abstract_sentences
from scholarly_nlp.ml import N_POSITION_FEATURES, position_features

__all__ = ["N_POSITION_FEATURES", "ROLE_TAGGER_ARCH", "SentenceRoleTagger", "position_features", "sentence_bounds"]

ROLE_TAGGER_ARCH = "scholarly_facet_classifier.SentenceRoleTagger.v1"
_NAME = "scholarly_facets.sentence_role_tagger"


@registry.architectures(ROLE_TAGGER_ARCH)
def SentenceRoleTagger(tok2vec: Model[List[Doc], List[Floats2d]], hidden_width: int = 128,
                       dropout: float = 0.1) -> Model[List[Doc], List[Floats2d]]:
    """Role probabilities of each abstract sentence: mean-pooled tok2vec + position, BiLSTM, softmax.

    ``hidden_width`` is the width of the projection and of the bidirectional LSTM's output
    (both directions together; must be even); ``dropout`` applies to the projection and to
    the LSTM output.
    """
    if hidden_width < 2 or hidden_width % 2:
        raise ValueError(f"hidden_width must be an even number >= 2 (thinc's bidirectional LSTM gives "
                         f"hidden_width / 2 per direction), got {hidden_width!r}")
    context = chain(
        with_array(Maxout(nO=hidden_width, nP=2, normalize=True, dropout=dropout)),
        PyTorchLSTM(nO=hidden_width, nI=hidden_width, bi=True),
        with_array(chain(Dropout(dropout), Softmax(nO=len(ROLES), nI=hidden_width))),
    )
    return Model(_NAME, _forward, init=_init, layers=[tok2vec, context],
                 refs={"tok2vec": tok2vec, "context": context},
                 dims={"nO": len(ROLES)}, attrs={"hidden_width": hidden_width, "dropout": dropout})


def sentence_bounds(doc: Doc) -> List[Tuple[int, int]]:
    """(start, end) token offsets of the Doc's abstract sentences, in order."""
    return [(s.start, s.end) for s in abstract_sentences(doc)]


def _pool(ops, tokvecs: Floats2d, bounds: Sequence[Tuple[int, int]]) -> Floats2d:
    """Mean token vector of each (start, end) span plus the position features."""
    width = tokvecs.shape[1]
    out = ops.alloc2f(len(bounds), width + N_POSITION_FEATURES)
    for i, (start, end) in enumerate(bounds):
        out[i, :width] = tokvecs[start:end].mean(axis=0)
    out[:, width:] = ops.asarray2f(position_features(len(bounds)))
    return out


def _unpool(ops, d_sents: Floats2d, bounds: Sequence[Tuple[int, int]], n_tokens: int, width: int) -> Floats2d:
    """Gradient of :func:`_pool` with respect to the token vectors (positions have none)."""
    d_tokvecs = ops.alloc2f(n_tokens, width)
    for i, (start, end) in enumerate(bounds):
        d_tokvecs[start:end] += d_sents[i, :width] / (end - start)
    return d_tokvecs


def _forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[List[Floats2d], Callable]:
    tok2vec = model.get_ref("tok2vec")
    context = model.get_ref("context")
    n_roles = model.get_dim("nO")
    ops = model.ops
    docs = list(docs)
    tokvecs, backprop_tok2vec = tok2vec(docs, is_train)
    bounds = [sentence_bounds(doc) for doc in docs]
    widths = [int(t.shape[1]) for t in tokvecs]
    sents = [_pool(ops, t, b) for t, b in zip(tokvecs, bounds)]
    filled = [i for i, b in enumerate(bounds) if b]
    outputs: List[Floats2d] = [ops.alloc2f(0, n_roles) for _ in docs]
    backprop_context: Optional[Callable] = None
    if filled:
        probs, backprop_context = context([sents[i] for i in filled], is_train)
        for i, p in zip(filled, probs):
            outputs[i] = p

    def backprop(d_outputs: List[Floats2d]) -> List[Doc]:
        d_sents = [ops.alloc2f(len(b), w + N_POSITION_FEATURES) for b, w in zip(bounds, widths)]
        if backprop_context is not None:
            for i, d in zip(filled, backprop_context([ops.asarray2f(d_outputs[i]) for i in filled])):
                d_sents[i] = d
        d_tokvecs = [_unpool(ops, d, b, len(t), w) for d, b, t, w in zip(d_sents, bounds, tokvecs, widths)]
        return backprop_tok2vec(d_tokvecs)

    return outputs, backprop


def _init(model: Model, X: Optional[List[Doc]] = None, Y: Optional[List[Floats2d]] = None) -> None:
    tok2vec = model.get_ref("tok2vec")
    context = model.get_ref("context")
    projection = next(node for node in context.walk() if node.name == "maxout")
    if X is not None:
        tok2vec.initialize(X=list(X))
        tokvecs = tok2vec.predict(list(X))
        if tokvecs:
            projection.set_dim("nI", int(tokvecs[0].shape[1]) + N_POSITION_FEATURES, force=True)
    if not projection.has_dim("nI"):
        width = tok2vec.get_dim("nO") if tok2vec.has_dim("nO") else None
        if not width:
            raise ValueError("SentenceRoleTagger needs sample Docs (initialize(X=docs)) or a tok2vec with nO "
                             "to know its input width")
        projection.set_dim("nI", int(width) + N_POSITION_FEATURES)
    context.initialize()
