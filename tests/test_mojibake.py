"""Repairing UTF-8 that was misread as cp1252, in the CL-SciSumm annotation files that carry it."""

from __future__ import annotations

import pytest

from scholarly_nlp.readers.clscisumm import read_annotations
from scholarly_nlp.text.mojibake import repair_mojibake

from conftest import data_path


def test_misread_sequences_become_their_characters():
    assert repair_mojibake("the paperâ€™s â€œMâ€\x9d model") == "the paper’s “M” model"
    assert repair_mojibake("â€¢ Conditional Probability") == "• Conditional Probability"
    assert repair_mojibake("semanÂ\xad tic, MaÂ¨rkische, tË†N, cafÃ©") == "seman\xad tic, Ma¨rkische, tˆN, café"


def test_text_that_only_looks_like_mojibake_is_kept():
    for text in ["São Paulo", "naïve Bayes", "Ångström", "â€ is cut", "Ã alone", "x ≤ y – z", "plain ASCII"]:
        assert repair_mojibake(text) == text


@pytest.mark.needs_data("clscisumm")
def test_annotation_reader_repairs_a_real_file():
    # C00-2123's annotation quotes a bullet and curly quotes as "â€¢", "â€œ", "â€™".
    records = read_annotations(data_path("clscisumm/train-manual/C00-2123/annotation/C00-2123.ann.txt"))
    texts = [r["citation_text"] + r["reference_text"] for r in records]
    assert any(r["citation_text"].startswith("• Conditional Probability") for r in records)
    assert not any("â€¢" in t or "â€œ" in t or "â€™" in t for t in texts)
