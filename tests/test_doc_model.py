"""The paper Doc: span groups, typed getters, sentence boundaries, block separation."""

from __future__ import annotations

import pytest

import scholarly_nlp
from scholarly_nlp import Block, InlineRef, MalformedInputError, Paper, paper_to_doc
from scholarly_nlp.paper import FigureInfo, Section


@pytest.fixture(scope="module")
def d14_1003(nlp, acl_tei_dir):
    return scholarly_nlp.read(acl_tei_dir / "D14-1003.tei.xml", nlp=nlp)


def test_span_groups_are_all_present(d14_1003):
    doc = d14_1003
    for name in scholarly_nlp.SPAN_GROUPS:
        assert name in doc.spans
    assert doc.spans["title"][0].text == "Translation Modeling with Bidirectional Recurrent Neural Networks"
    assert doc.spans["abstract"][0].text.startswith("This work presents")
    assert all(span.label_ == "bibr" for span in doc.spans["citations"])
    assert {span.label_ for span in doc.spans["captions"]} <= {"figure", "table"}
    assert all(span.kb_id_.startswith(("fig_", "tab_")) for span in doc.spans["captions"])


def test_text_order_title_abstract_body_captions(d14_1003):
    doc = d14_1003
    title, abstract = doc.spans["title"][0], doc.spans["abstract"][0]
    first_paragraph = doc.spans["paragraphs"][0]
    first_caption = min(doc.spans["captions"], key=lambda s: s.start)
    assert title.end <= abstract.start < first_paragraph.start < first_caption.start


def test_no_sentence_crosses_a_block(d14_1003):
    doc = d14_1003
    blocks = [s for name in ("title", "abstract", "section_heads", "paragraphs", "formulas", "back_matter", "footnotes",
                             "captions") for s in doc.spans[name]]
    for sentence in doc.sents:
        text = sentence.text.strip()
        inside = [b for b in blocks if b.start <= sentence.start and sentence.end <= b.end + 1]
        assert inside or not text, f"sentence crosses blocks: {text[:80]!r}"


def test_figures_getter(d14_1003):
    figures = {f.id: f for f in d14_1003._.figures}
    fig = figures["fig_4"]
    assert fig.kind == "figure" and fig.label == "3"
    assert fig.caption is not None and fig.caption.kb_id_ == "fig_4"
    assert "Fig. 3" in [m.text for m in fig.mentions]
    assert figures["tab_2"].kind == "table"
    assert all(m.kb_id_ == f.id for f in figures.values() for m in f.mentions)


def test_citances_getter(d14_1003):
    citances = d14_1003._.citances
    assert citances
    first = citances[0]
    assert first.bib_ids[:2] == ["b31", "b37"]
    assert all(first.sentence.start <= m.start and m.end <= first.sentence.end for m in first.markers)
    bibliography = d14_1003._.bibliography
    assert all(bib_id in bibliography for c in citances for bib_id in c.bib_ids)


def test_sections_getter(d14_1003):
    sections = d14_1003._.sections
    intro = sections[0]
    assert (intro.number, intro.title, intro.level) == ("1", "Introduction", 1)
    assert intro.heading.text == "Introduction"
    assert len(intro.paragraphs) >= 2
    assert intro.paragraphs[0].text.startswith("Neural network models have recently")
    sub = next(s for s in sections if s.number == "4.1")
    assert sub.level == 2


def test_bibliography_is_a_plain_dict(d14_1003):
    entry = d14_1003._.bibliography["b1"]
    assert entry == {
        "title": "Joint Language and Translation Modeling with Recurrent Neural Networks",
        "authors": ["Michael Auli", "Michel Galley", "Chris Quirk", "Geoffrey Zweig"],
        "year": "2013",
        "venue": "Conference on Empirical Methods in Natural Language Processing",
        "doi": None,
    }


def test_tei_sentences_are_kept(nlp, biomed_tei_dir):
    path = sorted(biomed_tei_dir.glob("*.tei.xml"))[0]
    paper = scholarly_nlp.read_paper(path)
    doc = paper_to_doc(paper, nlp)
    block = paper.blocks_of("paragraph")[0]
    span = doc.spans["paragraphs"][0]
    sentences = [s.text.strip() for s in doc.sents if span.start <= s.start < span.end]
    assert sentences == [block.text[a:b] for a, b in block.sentences]


def _paper(text: str, refs=(), figures=()) -> Paper:
    return Paper(
        paper_id="p",
        source="mem",
        blocks=[Block(kind="title", text="A title"), Block(kind="heading", text="Intro", section=0),
                Block(kind="paragraph", text=text, refs=list(refs), section=0)],
        sections=[Section(title="Intro", number="1")],
        figures=list(figures),
    )


def test_segmenter_used_when_source_has_no_sentences(nlp):
    text = "As shown in Fig. 3, it works. Smith et al. (2019) disagree, e.g. on BLEU. See Sect. 4 and Eq. (2) for details."
    doc = paper_to_doc(_paper(text), nlp)
    paragraph = doc.spans["paragraphs"][0]
    sentences = [s.text.strip() for s in doc.sents if paragraph.start <= s.start < paragraph.end]
    assert sentences == [
        "As shown in Fig. 3, it works.",
        "Smith et al. (2019) disagree, e.g. on BLEU.",
        "See Sect. 4 and Eq. (2) for details.",
    ]


def test_bad_offsets_are_rejected_naming_the_source(nlp):
    paper = _paper("Short text.", refs=[InlineRef(start=5, end=50, kind="bibr")])
    with pytest.raises(MalformedInputError) as info:
        paper_to_doc(paper, nlp)
    assert "mem" in str(info.value) and "outside its text" in str(info.value)


def test_figure_without_caption_is_still_listed(nlp):
    paper = _paper("See Figure 1.", refs=[InlineRef(start=4, end=12, kind="figure", target="fig_0")],
                   figures=[FigureInfo(id="fig_0", label="1")])
    doc = paper_to_doc(paper, nlp)
    (figure,) = doc._.figures
    assert figure.caption is None and figure.caption_text == "" and [m.text for m in figure.mentions] == ["Figure 1"]


def test_plain_doc_has_empty_views(nlp):
    doc = nlp("Just text.")
    assert doc._.figures == [] and doc._.citances == [] and doc._.sections == [] and doc._.bibliography == {}
