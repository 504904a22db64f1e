"""The sentence segmenter on the punctuation that scientific papers and their PDFs put in its way."""

from __future__ import annotations

import pytest

import scholarly_nlp
from scholarly_nlp.text.segmenter import split_sentences

from conftest import data_path


def sentences(text: str) -> list[str]:
    return [text[start:end] for start, end in split_sentences(text)]


def test_sentence_final_question_and_exclamation_split():
    assert sentences("Does it transfer? We test it on three corpora. It does!  Then it scales.") == [
        "Does it transfer?", "We test it on three corpora.", "It does!", "Then it scales."]


def test_free_standing_marks_are_symbols_not_endings():
    # A PDF font that maps "=" to "¼" and the arrow to "!" (AAS journals), a factorial,
    # an unknown glyph read as "?".
    text = "we have conducted a new 13CO J ¼ 1 ! 0 molecular line survey. The survey covers 75 square degrees."
    assert sentences(text) == ["we have conducted a new 13CO J ¼ 1 ! 0 molecular line survey.",
                               "The survey covers 75 square degrees."]
    assert len(sentences("The count is n ! 2 for n items. Then it stops.")) == 2
    assert len(sentences("queen-worker 0.5 ? X ? 0.75 conflict is strong.")) == 1


def test_abbreviations_do_not_end_sentences():
    text = "As Fig. 3 shows, et al. (2019) used e.g. BM25. The results hold."
    assert sentences(text) == ["As Fig. 3 shows, et al. (2019) used e.g. BM25.", "The results hold."]


@pytest.mark.needs_data("pdf-pairs")
def test_arrow_read_as_exclamation_in_a_real_pdf(nlp):
    # The Galactic Ring Survey paper (ApJS): its PDF text has "13CO J ¼ 1 ! 0", which split the
    # sentence that states the paper's contribution in two.
    doc = scholarly_nlp.read(data_path("pdf-pairs", "mauricio_BUFCRAOGRS.pdf"), nlp=nlp)
    survey = [s.text for s in doc.sents if "molecular line survey of the inner Galaxy" in s.text]
    assert survey and all(text.startswith("Using such an array, we have conducted") for text in survey)
    assert not any(s.text.lstrip().startswith("0 molecular") for s in doc.sents)
