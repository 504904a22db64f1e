"""SentenceEncoder: shapes, unit rows, determinism, empty input; and MiniLM's semantics."""

from __future__ import annotations

import numpy
import pytest

from scholarly_nlp.ml.backbones import make_tiny_backbone
from scholarly_nlp.ml.sentence_encoder import SentenceEncoder, cosine_matrix

TEXTS = [
    "We propose a joint inference framework for knowledge harvesting.",
    "Figure 2 shows the architecture of the model.",
    "",
    "word " * 600,  # longer than max_length: truncated, not an error
]


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory):
    """An encoder over a tiny random BERT (real tokenizer), small batches to exercise batching."""
    path = make_tiny_backbone(tmp_path_factory.mktemp("backbones") / "tiny")
    return SentenceEncoder(str(path), batch_size=3, max_length=64)


def test_shapes_dtype_and_unit_rows(tiny_encoder):
    vectors = tiny_encoder.encode(TEXTS)
    assert vectors.shape == (len(TEXTS), tiny_encoder.dim) == (4, 32)
    assert vectors.dtype == numpy.float32
    numpy.testing.assert_allclose(numpy.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)


def test_deterministic_and_independent_of_batching(tiny_encoder):
    first = tiny_encoder.encode(TEXTS)
    numpy.testing.assert_array_equal(first, tiny_encoder.encode(TEXTS))
    one_by_one = numpy.vstack([tiny_encoder.encode([t]) for t in TEXTS])
    numpy.testing.assert_allclose(first, one_by_one, atol=1e-5)
    # Row order follows the input, whatever the length-sorted batching did.
    numpy.testing.assert_allclose(tiny_encoder.encode(TEXTS[::-1]), first[::-1], atol=1e-5)


def test_empty_input(tiny_encoder):
    empty = tiny_encoder.encode([])
    assert empty.shape == (0, tiny_encoder.dim) and empty.dtype == numpy.float32


def test_bad_settings(tiny_encoder):
    with pytest.raises(ValueError):
        SentenceEncoder(tiny_encoder.path, batch_size=0)


def test_cosine_matrix():
    sims = cosine_matrix(numpy.array([[3.0, 0.0], [0.0, 0.0]]), numpy.array([[1.0, 1.0], [2.0, 0.0]]))
    numpy.testing.assert_allclose(sims, [[2 ** -0.5, 1.0], [0.0, 0.0]], atol=1e-6)


def test_minilm_paraphrase_is_closer_than_unrelated():
    encoder = SentenceEncoder()  # the packaged all-MiniLM-L6-v2
    anchor, paraphrase, unrelated = encoder.encode([
        "The model translates English sentences into German.",
        "Our system performs English-to-German machine translation.",
        "The patients received a daily dose of the drug for six weeks.",
    ])
    assert encoder.dim == 384
    assert float(anchor @ paraphrase) > float(anchor @ unrelated) + 0.2
