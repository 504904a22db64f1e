"""benchmarks/citance_fusion_cv.py: the candidate rows under another bi-encoder (``--encoder``)."""

import shutil

import numpy
import pytest

from conftest import benchmark_modules, shared

PAPER = "E09-2008"  # a small train-manual reference paper (fast to encode)


@pytest.fixture(scope="module")
def one_paper(tmp_path_factory):
    """A train-manual folder holding one real reference paper."""
    root = tmp_path_factory.mktemp("manual")
    shutil.copytree(shared("clscisumm", "train-manual", PAPER), root / PAPER)
    return root


def test_encoder_option_changes_only_the_cosines(one_paper, backbone):
    from scholarly_citance_linker.candidates import encoder_query
    from scholarly_nlp.ml import SentenceEncoder

    with benchmark_modules("citance_fusion_cv") as (fusion,):
        shipped = fusion.candidate_rows(one_paper)
        tiny = fusion.candidate_rows(one_paper, backbone)
    assert shipped and len(shipped) == len(tiny)
    for a, b in zip(shipped, tiny):  # BM25 proposes the same candidates whatever the encoder
        assert (a["gold"], a["cand"], a["bm25"]) == (b["gold"], b["cand"], b["bm25"])
    assert not numpy.allclose(shipped[0]["cos"], tiny[0]["cos"])
    # the tiny encoder's cosine of the first citance and its first candidate, computed here
    import scholarly_nlp
    from scholarly_citance_linker.candidates import sentence_texts
    from scholarly_nlp.readers import reference_folder_doc

    doc = reference_folder_doc(one_paper / PAPER, scholarly_nlp.blank())
    citance = [c for c in doc._.incoming_citances if c.get("sids")][0]
    encoder = SentenceEncoder(backbone)
    query = encoder.encode([encoder_query(citance["text"])])[0]
    sentence = encoder.encode([sentence_texts(doc)[tiny[0]["idx"][0]]])[0]
    assert tiny[0]["cos"][0] == pytest.approx(float(sentence @ query), abs=1e-5)
