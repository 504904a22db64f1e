"""The PDF reader on publishers beyond ACL (issue 14, items 3 and 4): the title is the
paper's, not a repository cover page's, a journal banner's or half of it; the body after a
cover page is kept; IEEE's heads in body type are sections; a caption whose text is set
apart from its label keeps it.

Each case is a real PDF of ``pdf-pairs``, compared where it says with GROBID's TEI of the
same file.
"""

from __future__ import annotations

import re
import warnings

import pytest
from lxml import etree

from conftest import data_path, need
import scholarly_nlp
from scholarly_nlp.readers import read_pdf

PAIRS = data_path("pdf-pairs")
ACL_PDFS = data_path("pdfs", "acl")
TEI_NS = {"t": "http://www.tei-c.org/ns/1.0"}


def read_pair(path):
    """The reader's Paper of one PDF (skipped where the file is missing), its warnings about
    unlinked markers silenced."""
    need(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read_pdf(path)


def tokens(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.lower())


@pytest.mark.needs_data("pdf-pairs")
@pytest.mark.parametrize(
    "name",
    [
        "ser763_demographic-histories-and",  # a repository's cover page comes first (Cronfa)
        "mauricio_MIAA",  # a JSTOR cover page
        "tannonk_10.1016_j.rser.2008.09.017",  # Elsevier's banner prints the journal bigger
        "colrev_wagner2022",  # side text between the title's two lines
        "grobidmonkey_example",  # a two-line title whose first line is a little smaller
        "mauricio_AIPNAFLDF",  # a tiny download watermark between the title's lines
        "mauricio_BSCA",  # a title barely bigger than the text
        "juansta_paper4",  # SAGE's 7 pt "©The Author(s)" box on the rows of an 18 pt title
        "grozescu_1906.06843v2",  # arXiv's id, 20 pt up the margin, is no title
    ],
)
def test_the_title_is_the_papers_own(name):
    paper = read_pair(PAIRS / f"{name}.pdf")
    tei = etree.parse(str(PAIRS / f"{name}.tei.xml"))
    gold = " ".join("".join(tei.find(".//t:teiHeader//t:titleStmt/t:title", TEI_NS).itertext()).split())
    assert tokens(paper.title) == tokens(gold)


@pytest.mark.needs_data("pdf-pairs")
def test_a_paper_after_a_cover_page_keeps_its_body():
    """Cronfa's cover page, then a Nature Communications paper whose body has no heading
    before its first paragraph: the body is read, not left in the front matter."""
    paper = read_pair(PAIRS / "ser763_demographic-histories-and.pdf")
    words = sum(len(b.text.split()) for b in paper.blocks_of("paragraph"))
    assert words > 3000
    assert not any("Cronfa" in b.text for b in paper.blocks_of("paragraph"))


@pytest.mark.needs_data("pdf-pairs")
def test_ieee_heads_in_body_type_are_sections_with_levels():
    """IEEE sets "II. MODELS AND METRICS" in small capitals and "A. Inference Model" in
    italics, both in the body's size and weight, the latter often run into its paragraph."""
    paper = read_pair(PAIRS / "maxtwer_paper5.pdf")
    sections = {(s.number, s.title): s for s in paper.sections}
    top = sections[("II", "MODELS AND METRICS")]
    sub = sections[("A", "Inference Model")]
    assert top.level == 1 and sub.level == 2
    assert paper.sections[sub.parent] is top
    assert ("C", "Performance Metrics") in sections
    paragraphs = [b.text for b in paper.blocks_of("paragraph")]
    assert any(p.startswith("We consider a classification problem") for p in paragraphs), \
        "the run-in head is cut off its paragraph"


@pytest.mark.needs_data("pdf-pairs")
def test_a_caption_set_apart_from_its_label_keeps_its_text():
    """IEEE RA-L prints "Fig. 1." and its text as two segments of one row: the text is the
    caption's, not a table row under it."""
    paper = read_pair(PAIRS / "mauricio_CSRAUCL.pdf")
    captions = [b.text for b in paper.blocks_of("caption")]
    assert len(captions) >= 6
    assert all(len(text.split()) > 3 for text in captions), captions
    assert any(text.startswith("Fig. 1. (a) A single module") for text in captions)


@pytest.mark.needs_data("tei/with-pdf")
def test_footnotes_are_kept_apart_and_their_marks_point_to_them():
    """Footnotes in small type low on the page become footnote blocks (id, printed mark),
    outside the paragraphs, and a raised mark in the text points to its footnote."""
    folder = data_path("tei", "with-pdf")
    need(folder)
    paper = read_pdf(folder / "N18-3011.pdf")
    notes = paper.blocks_of("footnote")
    assert len(notes) >= 5
    assert [n.label for n in notes[:4]] == ["1", "2", "3", "4"]
    assert all(n.id == f"foot_{i}" for i, n in enumerate(notes))
    assert not any(n.text.startswith(n.label) for n in notes), "the mark is the label, not text"
    paragraphs = " ".join(b.text for b in paper.blocks_of("paragraph"))
    assert notes[1].text[:40] not in paragraphs
    refs = [(b.text[r.start:r.end], r.target) for b in paper.blocks_of("paragraph") for r in b.refs
            if r.kind == "footnote"]
    by_id = {n.id: n for n in notes}
    assert len(refs) >= 4 and all(by_id[target].label == text for text, target in refs)
    doc = scholarly_nlp.read(folder / "N18-3011.pdf")
    assert len(doc._.footnotes) == len(notes)


@pytest.mark.needs_data("pdf-pairs")
def test_a_note_on_the_authors_low_on_page_one_is_a_footnote():
    """A note on the authors set a little smaller than the body ("\u2217 Corresponding
    author.", "* Institute for ...") is a footnote, and the paragraph it interrupts runs on
    past it into the next column."""
    elsevier = read_pair(PAIRS / "upmchk_paper2.pdf")
    assert not any("Corresponding author" in b.text for b in elsevier.blocks_of("paragraph"))
    assert any(b.text.startswith("Corresponding author. E-mail address:") for b in elsevier.blocks_of("footnote"))
    hardware = read_pair(PAIRS / "srgarcia_prodadmin__joh-1-7-v2.pdf")
    first = hardware.blocks_of("paragraph")[0].text
    assert first.startswith("In present times, we are witnessing")
    assert "social and environmental potential. One of the challenges" in first
    assert "Institute for Machine-tools" not in first
    notes = [b.text for b in hardware.blocks_of("footnote")]
    assert any(n.startswith("Collaborative Design Group, G-SCOP Laboratory") for n in notes)


@pytest.mark.needs_data("pdf-pairs")
def test_a_section_set_in_small_type_is_body_text():
    """Nature Communications sets its Methods two points below the body, under a head in the
    font of "Results" and "Discussion" and over a bold run-in head: the section is read with
    its paragraphs and their citations."""
    paper = read_pair(PAIRS / "ser763_demographic-histories-and.pdf")
    titles = [s.title for s in paper.sections]
    assert titles.index("Methods") == titles.index("Discussion") + 1
    methods = titles.index("Methods")
    paragraphs = [b for b in paper.blocks_of("paragraph") if b.section == methods]
    assert len(paragraphs) >= 12
    assert paragraphs[0].text.startswith("Genetic data. We obtained microsatellite data")
    cited = {b.text[r.start:r.end] for b in paragraphs for r in b.refs if r.kind == "bibr" and r.target}
    assert {"70", "71", "76"} <= cited
    assert not any(b.text.startswith("1.") for b in paragraphs), "the reference list stays out"


@pytest.mark.needs_data("pdf-pairs")
def test_a_raised_number_points_only_to_a_footnote_on_its_own_page():
    """ApJS sets "km s^-1" with a raised "1" on every page; footnote 1 is printed on one page
    only, so the units elsewhere are no footnote marks."""
    paper = read_pair(PAIRS / "mauricio_BUFCRAOGRS.pdf")
    notes = {n.id: n for n in paper.blocks_of("footnote")}
    assert notes
    before_marks = [b.text[max(0, r.start - 4):r.start] for b in paper.blocks_of("paragraph")
                    for r in b.refs if r.kind == "footnote"]
    assert "km s" not in before_marks
    assert len(before_marks) < 10, "about 40 unit exponents were taken for footnote marks"


@pytest.mark.needs_data("pdf-pairs")
def test_a_label_alone_over_its_title_is_one_caption():
    """ApJS centres "TABLE 1" on a line over the table's title: both are the caption."""
    paper = read_pair(PAIRS / "mauricio_BUFCRAOGRS.pdf")
    tables = [b.text for b in paper.blocks_of("caption") if b.text.upper().startswith("TABLE")]
    assert tables and tables[0].startswith("TABLE 1 A Comparison of CO Surveys")


@pytest.mark.needs_data("pdf-pairs")
def test_a_bold_head_run_into_its_paragraph_is_a_section():
    """Elsevier's IST sets "Validation" in bold at the start of its paragraph: a section,
    and the paragraph keeps only its own text."""
    paper = read_pair(PAIRS / "upmchk_paper2.pdf")
    titles = [s.title for s in paper.sections]
    assert "Validation" in titles and "Reuse, reusable" in titles
    heads = [b.text for b in paper.blocks_of("heading")]
    assert "Validation" in heads, "the heading block holds the bold words only"
    assert any(b.text.startswith("We use the term validation") for b in paper.blocks_of("paragraph"))


@pytest.mark.needs_data("pdf-pairs")
def test_a_caption_cut_by_a_change_of_spacing_keeps_its_rest():
    """Wiley's JGH caption of Figure 1 goes on in a block of its own right under it: the
    caption takes it (it stops mid-sentence, in the same small type)."""
    paper = read_pair(PAIRS / "mauricio_AIPNAFLDF.pdf")
    figure_1 = next(b.text for b in paper.blocks_of("caption") if b.text.startswith("Figure 1"))
    assert "(a) AI methods in electronic health record of single time stamp" in figure_1
    assert not any(b.text.startswith("record of single time stamp") for b in paper.blocks_of("paragraph"))
    # its legend row, cut at glyphless colour marks into a block of its own, and the row below
    assert ", PLT; , PT; , urea; , WCC). (c) AI methods in medical images." in figure_1
    assert figure_1.endswith("[Color figure can be viewed at wileyonlinelibrary.com]")


@pytest.mark.needs_data("pdf-pairs")
def test_table_labels_at_the_top_of_pages_are_captions_with_their_titles():
    """Elsevier's IST sets "Table 1" and "Table 6" alone at the top of their pages: they are
    no running head, though with digits ignored they repeat in the margin; "Table 2" sits in
    the left column over a title set across both, and takes that title."""
    paper = read_pair(PAIRS / "upmchk_paper2.pdf")
    captions = {b.text.split()[1]: b.text for b in paper.blocks_of("caption") if b.text.startswith("Table")}
    assert captions["1"].startswith("Table 1 Different terminologies for replication")
    assert captions["2"].startswith("Table 2 Different terminologies for replication")
    assert "according to changes to the original experim" in captions["2"]
    assert captions["6"].startswith("Table 6 Characterization of several cases of validation studies")
    assert not any(b.text.startswith("Different terminologies") for b in paper.blocks_of("paragraph"))


@pytest.mark.needs_data("pdf-pairs")
def test_text_up_the_margin_is_furniture_but_slanted_heads_are_not():
    """OUP's "Downloaded from https://academic.oup.com/..." runs up the right margin and
    arXiv's id up the left one: furniture, so the caption it crossed stays whole and no block
    holds the id. Ubiquity's subsection heads are set in a synthetic italic (a skewed, not
    rotated, matrix): they stay sections."""
    oup = read_pair(PAIRS / "ser763_effects-of-disease.pdf")
    arxiv = read_pair(PAIRS / "grozescu_1906.06843v2.pdf")
    ubiquity = read_pair(PAIRS / "srgarcia_prodadmin__joh-1-7-v2.pdf")
    figure_1 = next(b.text for b in oup.blocks_of("caption") if b.text.startswith("Figure 1:"))
    assert figure_1.endswith("95% confidence interval for all individuals (R2 = 0.72).")
    assert not any("academic.oup.com/conphys" in b.text for b in oup.blocks)
    assert not any("arXiv:1906.06843v2" in b.text for b in arxiv.blocks)
    numbers = {s.number for s in ubiquity.sections}
    assert {"3.1", "3.2", "3.3", "4.1", "4.2"} <= numbers


@pytest.mark.needs_data("pdf-pairs")
def test_a_double_spaced_table_label_takes_its_title():
    """An APA manuscript sets "Table 2" in bold and its italic title one double-spaced line
    below: the caption holds both."""
    paper = read_pair(PAIRS / "srgarcia_JIMP-4.1.4.pdf")
    captions = [b.text for b in paper.blocks_of("caption")]
    assert "Table 2 The Types of OSS used in Libraries" in captions
    assert "Table 8 The Challenges faced by the participants in the adoption and implementation of OSS" in captions


@pytest.mark.needs_data("pdf-pairs")
@pytest.mark.parametrize(
    "name, heads",
    [
        # MDPI: "2.1. Relevant Related Work" in italic on its own line, the paragraph right under
        ("srgarcia_inventions-08-00032-v2", {("2.1", "Relevant Related Work"), ("4.1", "Training Time")}),
        # a Google Docs export: italic one-line blocks between paragraphs in Arial
        ("grozescu_2502.12102v1", {(None, "Layered relationships"), (None, "Implications for users")}),
        # BMC (JNER 2014): sans-serif subheads, a little smaller than the serif body
        ("gcp_0046d83a", {(None, "Participants"), (None, "Data analysis")}),
        # IEEE's italic "A." set apart from its title by a wide gap: one row in two pieces
        ("grozescu_2206.02983v2", {("A", "Pre-Vectorization and Corpus Creation"), ("D", "Keywords Extraction")}),
    ],
)
def test_heads_in_a_font_of_their_own_are_sections(name, heads):
    """A heading in body size and weight, told apart only by its font (italic, another
    family), on a line of its own above its paragraph."""
    paper = read_pair(PAIRS / f"{name}.pdf")
    assert heads <= {(s.number, s.title) for s in paper.sections}
    assert not any(b.text in {t for _, t in heads} for b in paper.blocks_of("paragraph"))


@pytest.mark.needs_data("pdf-pairs")
def test_a_revtex_first_page_under_a_full_width_abstract_keeps_its_columns():
    """APS's REVTeX prints a long full-width abstract with no label, then two columns: the
    page takes the paper's usual gutter, so the title is not swallowed by Figure 1's region,
    the abstract is read though unlabelled, and the left column's lines do not interleave with
    the right column's caption."""
    paper = read_pair(PAIRS / "grozescu_1906.06843v2.pdf")
    assert paper.title.startswith("Predicting Research Trends with Semantic and Neural Networks")
    abstract = " ".join(b.text for b in paper.blocks_of("abstract"))
    assert abstract.startswith("The vast and growing number of publications in all disciplines of science")
    first = next(b.text for b in paper.blocks_of("paragraph"))
    assert first.startswith("A computer algorithm with access to a large corpus of published scientific research")
    assert "physics (SEMNET)" not in first
    assert paper.sections[0].title == "INTRODUCTION"


@pytest.mark.needs_data("pdf-pairs")
def test_a_long_caption_rest_in_prose_is_taken_but_not_a_table():
    """ApJS's Fig. 8 caption goes on for five lines below a change of line spacing, its rows
    cut where a symbol has no glyph: the caption takes them all."""
    paper = read_pair(PAIRS / "mauricio_BUFCRAOGRS.pdf")
    figure_8 = next(b.text for b in paper.blocks_of("caption") if b.text.startswith("Fig. 8."))
    assert figure_8.rstrip().endswith("are binned by 0.01 K intervals.")
    assert not any(b.text.startswith("130 to 135 km") for b in paper.blocks_of("paragraph"))


@pytest.mark.needs_data("pdf-pairs")
def test_a_page_whose_top_hides_its_gutter_keeps_its_columns_below():
    """Elsevier's first page sets "article info | abstract" above two columns, and a Nature
    Communications page a figure across the page: below them the page is read in its
    columns, so paragraphs do not take the other column's lines on their rows."""
    elsevier = read_pair(PAIRS / "upmchk_paper2.pdf")
    nature = read_pair(PAIRS / "ser763_demographic-histories-and.pdf")
    first = next(b.text for b in elsevier.blocks_of("paragraph"))
    assert first.startswith("In our paper [1] we proposed a method for assessing the reproducibility of empirical")
    assert "When we published our original study" not in first
    assert elsevier.blocks_of("abstract")
    assert "Discussion" in [s.title for s in nature.sections]


@pytest.mark.needs_data("pdfs/acl")
def test_a_footnote_mark_set_apart_left_of_its_note_opens_it():
    """C08-1098's notes 5 to 7 have their raised number as a fragment left of the note's
    first line: the note opens with it and is a footnote. A formula's scripts between its
    pieces stay in its row (J04-2003's formula (1), 'Pr(f J 1, a J 1|e I 1)')."""
    tagger = read_pair(ACL_PDFS / "C08-1098.pdf")
    notes = {b.label: b.text for b in tagger.blocks_of("footnote")}
    assert notes["5"].startswith("p(word|tag) is equal to p(tag|word)p(word)/p(tag)")
    assert notes["6"].startswith("In earlier experiments, we had used a much larger number of word classes.")
    assert notes["7"].startswith("It was planned to include also the Stanford tagger")
    alignment = read_pair(ACL_PDFS / "J04-2003.pdf")
    formulas = {b.label: b.text for b in alignment.blocks_of("formula")}
    assert formulas["1"].startswith("Pr(f J 1|e I 1)= Pr(f J 1, a J 1|e I 1)")


@pytest.mark.needs_data("pdf-pairs")
def test_an_abstract_runs_on_past_the_small_type_under_its_first_part():
    """Wiley's abstract breaks off at the foot of page one, above a note on equal
    contributions, the licence and the journal's foot, and ends on page two above its
    KEYWORDS head: the abstract is whole, the note no paragraph, the keywords no section."""
    paper = read_pair(PAIRS / "tannonk_10.1111_csp2.319.pdf")
    abstract = " ".join(b.text for b in paper.blocks_of("abstract"))
    assert abstract.startswith("Solar power is a renewable energy source")
    assert "Here, we review how behavioral responses to solar facilities, including perception, movement" in abstract
    assert abstract.endswith("guide future mitigation.")
    assert not any("contributed equally" in b.text for b in paper.blocks_of("paragraph"))
    assert [s.title for s in paper.sections][:2] == ["INTRODUCTION", "WILDLIFE PERCEPTION OF SOLAR FACILITIES"]


@pytest.mark.needs_data("pdf-pairs")
def test_a_list_item_goes_on_at_its_hanging_indent_past_a_page_break():
    """A contributions list ("(ii) Approximation theory ...") breaks off mid-sentence at a
    page's foot and goes on at the item's hanging indent on the next page: one paragraph."""
    paper = read_pair(PAIRS / "osai_paper06.pdf")
    item = next(b.text for b in paper.blocks_of("paragraph") if b.text.startswith("(ii) Approximation theory"))
    assert "formed by the composition of a graph-induced propagation step" in item


@pytest.mark.needs_data("pdf-pairs")
def test_paragraphs_are_cut_by_the_edges_of_their_own_band():
    """Elsevier's abstract box and the introduction under it share the right column of page
    one, 100 pt apart at the left: the introduction's paragraph runs on into that column, and
    its next paragraph starts at its own indent there."""
    paper = read_pair(PAIRS / "upmchk_paper2.pdf")
    paragraphs = [b.text for b in paper.blocks_of("paragraph")]
    validation = next(t for t in paragraphs if t.startswith("Validation of research results"))
    assert "including the quality of the description of validation studies [6]" in validation
    assert any(t.startswith("In our approach, we were interested in reproducibility") for t in paragraphs)


@pytest.mark.needs_data("pdf-pairs")
def test_columns_at_the_foot_of_a_page_set_full_width_above():
    """Too little text for the page's own gutter: Elsevier's introduction starts in the right
    column at the foot of page one, under a table of contents across the page, beside the
    corresponding author's note; an ecology paper's paragraph runs across the foot of a page
    under a full-width figure and table. Each is read in its columns."""
    elsevier = read_pair(PAIRS / "tannonk_10.1016_j.rser.2008.09.017.pdf")
    first = next(b.text for b in elsevier.blocks_of("paragraph"))
    assert first.startswith("The potential role of renewable-energy sources, such as solar electric and wind power, "
                            "is becoming increasingly important as they offer numerous advantages")
    assert not any("E-mail address" in b.text for b in elsevier.blocks_of("paragraph"))
    notes = [b.text for b in elsevier.blocks_of("footnote")]
    assert any(t.startswith("Corresponding author at:") and "vmf@bnl.gov" in t for t in notes)
    seals = read_pair(PAIRS / "ser763_effects-of-disease.pdf")
    assert any(
        b.text.startswith("After arriving on shore, 6018 fasted for 25 days")
        and "calculated as in Simmons et al. (2010), is 2.37 kg lost per day" in b.text
        for b in seals.blocks_of("paragraph")
    )


@pytest.mark.needs_data("pdf-pairs")
def test_mirrored_margins_keep_each_pages_columns():
    """Zoologia and the Journal of Open Hardware set odd and even pages with their gutters
    9 to 29 pt apart, so no one gutter is the paper's: a page that hides its own (columns
    over a full-width appendix, or under a table) takes that of the nearest page on its side.
    Zoologia's 9-pt running head just below the top tenth, over an 8-pt body, is furniture."""
    zoologia = read_pair(PAIRS / "ser763_numerical-anomalies-in.pdf")
    titles = [entry.title for entry in zoologia.bibliography.values()]
    assert "Dental abnormalities in the red Fox Vulpes vulpes from Poland" in titles
    assert "The origin of extra teeth in mammals" in titles
    assert "Tooth losses and anomalies in the wolf (Canis lupus)" in titles
    assert not any("C. Loch et al." in b.text for b in zoologia.blocks)
    hardware = read_pair(PAIRS / "srgarcia_prodadmin__joh-1-7-v2.pdf")
    assert ("4.4", "Openness assessment criteria") in {(s.number, s.title) for s in hardware.sections}
    paragraphs = [b.text for b in hardware.blocks_of("paragraph")]
    assert any(t.startswith("\u2022 The transparency (T) criterion addresses the freedom to study. A product")
               for t in paragraphs)
    assert hardware.sections[0].title == "Introduction", "the journal's header is not where the text starts"


@pytest.mark.needs_data("pdf-pairs")
def test_an_appendix_label_in_body_type_ends_the_references():
    """Zoologia's "Appendix. Examined material." under its references, plain 8-pt type like them:
    it was read as a 28th entry (authors "Appendix"); it is the body's, with its lists."""
    zoologia = read_pair(PAIRS / "ser763_numerical-anomalies-in.pdf")
    entries = list(zoologia.bibliography.values())
    assert len(entries) == 27 and not any("Appendix" in e.authors for e in entries)
    assert entries[-1].title == "The origin of extra teeth in mammals"
    paragraphs = [b.text for b in zoologia.blocks_of("paragraph")]
    assert any(t.startswith("Arctocephalus australis (63). BRASIL, Santa Catarina: UFSC 1040") for t in paragraphs)


@pytest.mark.parametrize("line, label", [
    ("Appendix. Examined material.", True), ("Appendix A: Proofs", True), ("APPENDIX. Data", True),
    # a reference's line that opens a block after a column break
    ("Appendix 3. London: HMSO, pp. 1-20.", False), ("Appendix to: Guidelines", False),
    ("Appendix 2. Smith J. 1999. Title", False),
])
def test_what_reads_as_an_appendix_label_under_the_references(line, label):
    from scholarly_nlp.readers.pdf.classification import _APPENDIX_LABEL_RE

    assert bool(_APPENDIX_LABEL_RE.match(line)) is label


@pytest.mark.parametrize("line, note", [
    ("RESUMO. Casos de agenesia dent\u00e1ria", True), ("Resumen: En este trabajo", True),
    ("\u00a9 The Author(s) 2023. Published by Oxford", True), ("Abbreviations: AFS, Antarctic fur seal", True),
    ("Teeth are a valuable source of information.", False), ("In this paper we study X.", False),
])
def test_a_labelled_note_after_the_keywords_starts_no_body(line, note):
    """Body-size prose after the keywords starts an unheaded introduction, unless it opens with
    a label of its own: another language's abstract, abbreviations, a licence."""
    from scholarly_nlp.readers.pdf.classification import _LABELLED_NOTE_RE

    assert bool(_LABELLED_NOTE_RE.match(line)) is note


@pytest.mark.needs_data("pdf-pairs")
def test_wiley_numbers_its_heads_with_a_bar():
    """Wiley's Conservation Science and Practice prints "1 | INTRODUCTION", "3.1 | Resident species"."""
    paper = read_pair(PAIRS / "tannonk_10.1111_csp2.319.pdf")
    heads = {(s.number, s.title) for s in paper.sections}
    assert {("1", "INTRODUCTION"), ("3.1", "Resident species"), ("6", "CONCLUSIONS")} <= heads
    # over two rows, its number, bar and first words set apart on the first
    assert ("2", "WILDLIFE PERCEPTION OF SOLAR FACILITIES") in heads


@pytest.mark.needs_data("pdf-pairs")
def test_a_number_set_apart_from_its_plain_head_is_one_heading():
    """Genome Informatics sets "1" and "Introduction", "2.1" and "PPM", apart on one row in the
    body's own font and weight: one numbered heading each."""
    paper = read_pair(PAIRS / "mauricio_BSCA.pdf")
    heads = {(s.number, s.title) for s in paper.sections}
    assert {("1", "Introduction"), ("2.1", "PPM")} <= heads


@pytest.mark.needs_data("pdf-pairs")
def test_one_caption_for_a_plate_of_figures():
    """NAMMCO prints "Figures 5-7. Supernumerary teeth ...": one caption, not a paragraph."""
    paper = read_pair(PAIRS / "ser763_numerical-anomalies-in.pdf")
    captions = [b.text for b in paper.blocks_of("caption")]
    assert any(c.startswith("Figures 5-7. Supernumerary teeth (arrows) in Arctocephalus") for c in captions)
    assert not any(b.text.startswith("Figures 5-7.") for b in paper.blocks_of("paragraph"))


@pytest.mark.needs_data("pdf-pairs")
def test_ieee_access_lower_heads_are_sections_under_their_parents():
    """IEEE Access numbers its third and fourth levels "1) UPPER CASE" and "a: UPPER CASE", in
    body size but a sans-serif of their own; the first may sit in one block right under its
    parent's head ("C. REVIEW STRATEGY" over "1) MATERIALS AND METHODS")."""
    paper = read_pair(PAIRS / "fran_Artificial_Intelligence_in_Education.pdf")
    sections = paper.sections
    by_title = {s.title: s for s in sections}
    strategy, materials = by_title["REVIEW STRATEGY"], by_title["MATERIALS AND METHODS"]
    assert (materials.number, materials.level) == ("1)", 3)
    assert sections[materials.parent] is strategy and strategy.level == 2
    model, learning = by_title["AI EDUCATION MODEL"], by_title["MACHINE LEARNING"]
    assert (learning.number, learning.level) == ("a:", 4)
    assert sections[learning.parent].title == "INTELLIGENT EDUCATION TECHNOLOGIES"
    assert model.level == 3 and sections[model.parent].title == "TECHNICAL ASPECTS OF AI IN EDUCATION"
    paragraphs = [b.text for b in paper.blocks_of("paragraph")]
    assert any(p.startswith("The study seeks to assess the impact of AI") for p in paragraphs)
    assert not any(p.startswith(("1) MATERIALS", "2) SEARCH STRATEGY")) for p in paragraphs)


@pytest.mark.needs_data("pdf-pairs")
def test_a_heads_second_line_in_a_font_variant_stays_in_the_heading():
    """Wiley's Advent fonts set a head's second line in a variant, "AdvTT...B+fb", of the
    first line's bold "AdvTT...B": it is still bold, and the head keeps both lines."""
    from scholarly_nlp.readers.pdf.typography import bold_font_name, font_base_name

    assert bold_font_name("AdvTTb9655705.B+fb") and not bold_font_name("AdvTT080e16ec+20")
    assert font_base_name("ABCDEF+Times-Bold") == "ABCDEF+Times-Bold"
    paper = read_pair(PAIRS / "mauricio_AIPNAFLDF.pdf")
    titles = [s.title for s in paper.sections]
    assert "Current methods to assess non-alcoholic fatty liver disease and liver fibrosis" in titles
    assert not any(b.text.startswith("fatty liver disease and liver fibrosis") for b in paper.blocks_of("paragraph"))


@pytest.mark.needs_data("pdf-pairs")
def test_titles_grobid_misses_a_cover_page_preprint_and_an_apa_title_page():
    """Two titles GROBID gets wrong, the first page's bold "1. Introduction" taken for none:
    a preprint with no title of its own after Edinburgh Research Explorer's cover page takes
    the cover's; an APA manuscript's title page, centred and double-spaced in the body's
    type, gives its top two lines (and the author list under them)."""
    preprint = read_pair(PAIRS / "upmchk_paper1.pdf")
    assert preprint.title == "Introducing the FAIR Principles for research software"
    assert preprint.sections[0].title == "Introduction"
    manuscript = read_pair(PAIRS / "upmchk_paper5.pdf")
    assert manuscript.title == ("Opening open science to all: Demystifying reproducibility and transparency "
                                "practices in linguistic research")
    names = [a.name for a in manuscript.authors]
    assert len(names) == 14 and names[0] == "Joseph V. Casillas" and names[-1] == "Kyle Parrish"


@pytest.mark.needs_data("pdf-pairs")
@pytest.mark.parametrize("name, opening, first_head", [
    # a page otherwise in one column (a table of contents under the box)
    ("tannonk_10.1016_j.rser.2008.09.017", "Renewable-energy sources often are regarded", "Introduction"),
    # a page in two columns of another gutter under the box
    ("upmchk_paper2", "Context: In 2012, our paper", "Introduction"),
])
def test_elseviers_article_info_and_abstract_box_is_read_column_by_column(name, opening, first_head):
    """Elsevier prints "ARTICLE INFO" (history, keywords) and "ABSTRACT" side by side, with a
    gutter of their own: the abstract is read whole, without the keywords between its lines,
    and the body below still opens with its first section."""
    paper = read_pair(PAIRS / f"{name}.pdf")
    abstract = " ".join(b.text for b in paper.blocks_of("abstract"))
    assert abstract.startswith(opening)
    assert "Keywords" not in abstract and "Received" not in abstract
    assert len(abstract.split()) > 150
    assert paper.sections[0].title == first_head


@pytest.mark.needs_data("pdf-pairs")
def test_numbers_hung_in_a_lists_margin_make_no_side_by_side_box():
    """PLOS hangs "23." before each reference in a margin of its own: a narrow strip of
    numbers is no column, so the list stays whole and its entries link."""
    paper = read_pair(PAIRS / "ser763_entanglement-rates-and.pdf")
    assert len(paper.bibliography) >= 75
    linked = [r for b in paper.blocks_of("paragraph") for r in b.refs if r.kind == "bibr" and r.target]
    assert len(linked) >= 90


@pytest.mark.needs_data("pdf-pairs")
def test_an_unlabelled_abstract_with_its_own_leading_is_the_abstract_not_the_affiliations():
    """Nature Communications sets its unlabelled abstract in a narrower box with more leading
    than the body, and the affiliations under it full width: the box is one block and the
    abstract; the affiliations (mostly capitalised words) are not."""
    paper = read_pair(PAIRS / "ser763_demographic-histories-and.pdf")
    abstract = " ".join(b.text for b in paper.blocks_of("abstract"))
    assert abstract.startswith("A central paradigm in conservation biology")
    assert abstract.endswith("genetic diversity.")
    assert "Bielefeld" not in abstract


def tei_abstract(name: str) -> str:
    """GROBID's abstract of one pair, whitespace-normalised."""
    tei = etree.parse(str(PAIRS / f"{name}.tei.xml"))
    return " ".join("".join(tei.find(".//t:teiHeader//t:abstract", TEI_NS).itertext()).split())


@pytest.mark.needs_data("pdf-pairs")
def test_a_double_spaced_manuscript_keeps_its_paragraphs_whole():
    """An APA manuscript is double-spaced throughout (lines 2.4 sizes apart): its abstract is
    one paragraph, GROBID's, not one per line; the keywords under it are not abstract; the
    title printed again over the introduction is no section; a body line that starts a
    sentence flush left stays in its paragraph."""
    paper = read_pair(PAIRS / "upmchk_paper5.pdf")
    abstracts = paper.blocks_of("abstract")
    assert len(abstracts) == 1
    assert tokens(abstracts[0].text) == tokens(tei_abstract("upmchk_paper5"))
    heads = [s.title for s in paper.sections]
    assert heads[0] == "Introduction - What is open science?" and not any(h.startswith("Opening open") for h in heads)
    first = paper.blocks_of("paragraph")[0].text
    assert first.startswith("In recent years") and "Parsons et al. (2022) refer to open science" in first


@pytest.mark.needs_data("pdf-pairs")
@pytest.mark.parametrize("name, keywords", [
    ("upmchk_paper9", "Index Terms"),  # IEEE: index terms right under the abstract, same block
    ("maxtwer_paper5", "Index Terms"),
    ("yimin_ai_pain_medicine", "Keywords"),
])
def test_keywords_in_the_abstracts_block_end_the_abstract(name, keywords):
    paper = read_pair(PAIRS / f"{name}.pdf")
    abstract = " ".join(b.text for b in paper.blocks_of("abstract"))
    assert abstract and keywords not in abstract
    assert tokens(abstract)[:4] == tokens(tei_abstract(name))[:4]  # the first words are not lost


@pytest.mark.needs_data("pdf-pairs")
def test_a_running_head_repeating_the_title_does_not_break_a_paragraph():
    """Springer's LNCS prints the title over odd pages: the sentence that runs on over the
    page break stays one paragraph, without the running head or the page number."""
    paper = read_pair(PAIRS / "grobidmonkey_example.pdf")
    paragraphs = [b.text for b in paper.blocks_of("paragraph")]
    assert not any(p.startswith("Influential Node Detection") for p in paragraphs)
    assert any("as those models can only treat individuals as nodes and interactions as edges" in p
               for p in paragraphs)


@pytest.mark.needs_data("pdf-pairs")
@pytest.mark.parametrize("name, opening", [
    ("upmchk_paper7", "Software plays a central role"),  # IEEE's "Abstract—Software plays"
    ("mauricio_CSRAUCL", "Learning-based modeling and control"),
    ("mauricio_DLVGP", "In this paper, we review"),
])
def test_a_run_in_abstract_label_glued_to_the_first_word_keeps_that_word(name, opening):
    paper = read_pair(PAIRS / f"{name}.pdf")
    abstract = " ".join(b.text for b in paper.blocks_of("abstract"))
    assert abstract.startswith(opening)
    assert tokens(abstract)[:5] == tokens(tei_abstract(name))[:5]


@pytest.mark.needs_data("pdf-pairs")
def test_the_copyright_line_ends_the_abstract_and_a_table_of_contents_is_skipped():
    """An Elsevier review closes its abstract with its copyright line, then prints a table of
    contents before the introduction: neither is abstract, and the contents' entries are no
    sections."""
    paper = read_pair(PAIRS / "tannonk_10.1016_j.rser.2008.09.017.pdf")
    abstract = " ".join(b.text for b in paper.blocks_of("abstract"))
    assert abstract.endswith("fuel-cycle-related accidents.")
    assert "rights reserved" not in abstract and "Contents" not in abstract
    heads = [s.title for s in paper.sections]
    assert heads[:3] == ["Introduction", "Land transformation", "Coal"]
    assert not any(". . ." in h for h in heads)


@pytest.mark.needs_data("pdf-pairs")
def test_a_list_items_hanging_indent_stays_in_its_item():
    """A bulleted item's second line is indented under its text, not a new paragraph: the
    item is one paragraph, and a word cut at its line end is whole again."""
    paper = read_pair(PAIRS / "juansta_paper7.pdf")
    paragraphs = [b.text for b in paper.blocks_of("paragraph")]
    assert any(p.startswith("\u2022 Collective communication: This feature describes synchronization, data movement")
               for p in paragraphs)
    assert any(p.startswith("\u2022 Point-to-Point communication:") and "how to transmit messages" in p for p in paragraphs)
    assert not any(p.startswith(("transmit messages", "nization")) for p in paragraphs)


@pytest.mark.needs_data("pdf-pairs")
def test_running_heads_just_below_the_top_tenth_are_furniture():
    """A chapter with wide margins sets its running heads (the authors on even pages, the
    title on odd ones) just below the page's top tenth: they are no sections and no
    paragraphs, and the sentences they cut at page breaks run on."""
    paper = read_pair(PAIRS / "grozescu_2010.02462v1.pdf")
    texts = [b.text for b in paper.blocks if b.kind in ("heading", "paragraph")]
    assert not any("M.-D. Ding" in t or t.startswith("Interesting topics about solar filaments") for t in texts)
    joined = [t for t in texts if "look very similar to solar filaments in H" in t]
    assert len(joined) == 1 and not joined[0].startswith("look")


@pytest.mark.needs_data("pdf-pairs")
def test_a_running_head_beside_its_folio_is_furniture():
    """The American Naturalist sets each running head on one row with its page number
    ("626  The American Naturalist", "Split Sex Ratios in Social Hymenoptera  627"): the two
    are not each other's row mates, as a heading's number and its words are, so both go, and
    the paragraphs they cut at page breaks run on."""
    paper = read_pair(PAIRS / "miku_roisin_amnat.pdf")
    paragraphs = [b.text for b in paper.blocks if b.kind in ("heading", "paragraph")]
    assert not any(re.search(r"Split Sex Ratios in Social Hymenoptera \d{3}|\d{3} The American Naturalist", t)
                   for t in paragraphs)
    continued = [t for t in paragraphs if t.startswith("However, in several ant species, workers do not bias")]
    assert len(continued) == 1 and "Fletcher 1985; Ross 1993; Vargo 1996" in continued[0]


@pytest.mark.needs_data("pdf-pairs")
@pytest.mark.parametrize("name, heads, starts", [
    # keywords, then the introduction's text on the first page and sections from the second
    ("mauricio_NIBM", ["3. Related Work", "3.1. Cognitive Modelling", "4. Cognitive Behaviour"],
     ["Using this algorithm, a set of hand-written numbers",
      "This paper continues the research that considers a new cognitive model based strongly on the human brain, last"]),
    # keywords, then an unheaded introduction on the same page (Zoologia, the body's size) and a
    # run-in "Material and methods" on the next page
    ("ser763_numerical-anomalies-in", [], ["Teeth are a valuable source of information in studies of mammalian",
                                           "This paper evaluates numerical anomalies in the dentition",
                                           "Age categories (young, subadult and adult) were determined"]),
    # no abstract label: an unlabelled abstract, keywords, then "Introduction" (a heading since
    # the fonts' sizes are scaled by the text matrix; before, the running head opened the body)
    ("yimin_29-34_no_abs", ["Introduction"], ["The influx of new technologies in the Information Age"]),
])
def test_the_body_begins_by_the_page_after_the_abstract_without_a_heading(name, heads, starts):
    """After the keywords, blocks waited for a heading before the body began: where the
    introduction's heading is run in (or not a heading the reader sees), whole pages of text
    were dropped. The body now begins on the abstract's next page at the latest, or on its page
    at prose in the body's size (an introduction printed without a head)."""
    paper = read_pair(PAIRS / f"{name}.pdf")
    headings = [b.text for b in paper.blocks if b.kind == "heading"]
    paragraphs = [b.text for b in paper.blocks if b.kind == "paragraph"]
    assert all(head in headings for head in heads)
    assert all(any(p.startswith(start) for p in paragraphs) for start in starts)
    if name == "yimin_29-34_no_abs":  # the second page's text, not only what a later heading opens
        assert any("AI techniques have made big news across healthcare" in p for p in paragraphs)


@pytest.mark.needs_data("pdf-pairs")
def test_an_abstract_runs_on_past_a_box_and_a_page_break():
    """PeerJ sets a "How to cite this article" box at the foot of page one, in smaller type,
    between the abstract's cut sentence and its rest on page two: the box does not end the
    abstract, the rest joins the sentence it continues, and the keywords after it are no body."""
    paper = read_pair(PAIRS / "tannonk_10.7717_peerj.5504.pdf")
    abstract = [b.text for b in paper.blocks if b.kind == "abstract"]
    assert any("Proximate analysis values also indicate good combustion parameters." in t for t in abstract)
    body = [b.text for b in paper.blocks if b.kind in ("heading", "paragraph")]
    assert not any(t.startswith(("good combustion", "Subjects", "How to cite")) for t in body)
    assert body[0] == "INTRODUCTION"


@pytest.mark.needs_data("pdf-pairs")
def test_an_abstract_sentence_cut_at_a_line_is_one_paragraph():
    """A two-column abstract whose lines a formula or a column break cut in mid-sentence: the
    lower-case rest joins its sentence instead of opening a paragraph of its own."""
    paper = read_pair(PAIRS / "mauricio_BUFCRAOGRS.pdf")
    abstract = [b.text for b in paper.blocks if b.kind == "abstract"]
    assert not any(t[:1].islower() for t in abstract)
    assert any("angular sampling" in t and "At the velocity resolution of 0.21 km" in t for t in abstract)


@pytest.mark.needs_data("pdf-pairs")
def test_private_use_ligatures_are_spelled_out_and_rejoined():
    """A Mac-era font maps its fi and fl ligatures to U+F001 / U+F002 with a space after each
    ("Arti\uf001 cial"): the words come out whole. (GROBID's TEI of the same file keeps
    "Arti\uf001 cial" in places and drops the ligature in others: "rst", "articial".)"""
    paper = read_pair(PAIRS / "yimin_29-34_no_abs.pdf")
    assert paper.title == ("Rise of the Machine and Medicine: a Qualitative Review of Artificial Intelligence in the "
                           "Healthcare Industry")
    text = " ".join(b.text for b in paper.blocks)
    assert not re.search("[\uf001\uf002]", text)
    assert not re.search(r"\b(?:arti cial|identi cation|speci c\w*|signi cant\w*|e cient)\b", text, flags=re.I)
    assert {"artificial", "identification", "find", "first", "financial", "significantly", "efficient",
            "flesh", "traffic"} <= set(tokens(text))


def test_a_joined_private_use_ligature_is_spelled_out_without_its_joiner():
    from scholarly_nlp.readers.pdf.extraction import _JOINER, _PIECE_RE, _clean_word

    text = f"Arti\uf001{_JOINER}cial \uf001{_JOINER}nd hi-\uf001 and"
    assert [_clean_word(m.group()) for m in _PIECE_RE.finditer(text)] == ["Artificial", "find", "hi-fi", "and"]


@pytest.mark.needs_data("pdf-pairs")
def test_control_codes_a_font_names_as_ligatures_become_them():
    """An OUP-set paper's Meridien fonts have no ToUnicode map and name their fi and fl
    ligatures f_i and f_l at codes 30 and 29, which pdfium gives as control characters
    ("identi\x1eed"): the words come out whole (GROBID's TEI of the same file has "con rming",
    "identi", "ippers")."""
    paper = read_pair(PAIRS / "ser763_pathogen-surveillance-in.pdf")
    text = " ".join(b.text for b in paper.blocks)
    assert not re.search(r"\b(?:identi ed|con rming|speci c|Paci c)\b", text)
    assert {"identified", "confirming", "first", "flippers", "influenced", "findings"} <= set(tokens(text))


@pytest.mark.needs_data("pdfs/acl")
def test_control_codes_of_other_fonts_are_left_alone():
    """E09-1079's Nimbus text fonts name codes 2, 3 and 19-21 as ligatures (pdfium reads those
    names itself), while the fonts inside its figures emit such codes for other glyphs: a code
    is read by its own font's names only, so no stray ligature lands in the figures' text."""
    from scholarly_nlp.readers.pdf.glyph_names import control_code_characters

    path = data_path("pdfs", "acl", "E09-1079.pdf")
    tables = control_code_characters(path)
    assert tables["NimbusRomNo9L-Regu"][2] == "\ufb01" and tables["NimbusRomNo9L-Regu"][21] == "\ufb04"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        paper = read_pdf(path)
    text = " ".join(b.text for b in paper.blocks)
    assert not re.search(r"(?:^|\s)(?:ff|ffi|ffl|ffffi)(?:\s|$)", text)


@pytest.mark.parametrize("name, character", [("f_i", "\ufb01"), ("fi", "\ufb01"), ("f_f_l", "\ufb04"),
                                             ("ffl", "\ufb04"), ("f_l", "\ufb02"), ("uni03BC", None),
                                             ("a", None), ("f_x", None), ("f", None)])
def test_glyph_names_give_a_ligature_or_none(name, character):
    from scholarly_nlp.readers.pdf.glyph_names import glyph_character

    assert glyph_character(name) == character


def _font(base: str, differences=None, subtype: str = "Type1", encoding: str | None = "WinAnsiEncoding") -> dict:
    from pdfminer.psparser import LIT

    font = {"BaseFont": LIT(base), "Subtype": LIT(subtype)}
    if differences is not None:
        font["Encoding"] = {"Differences": [LIT(x) if isinstance(x, str) else x for x in differences]}
    elif encoding is not None:
        font["Encoding"] = LIT(encoding)
    return font


def test_font_tables_keep_a_code_only_where_every_font_of_the_name_agrees():
    from scholarly_nlp.readers.pdf.glyph_names import font_record, font_tables

    fonts = [
        # two subsets of one font: runs of /Differences, the subset tags stripped as pdfium does
        _font("VOLEYY+Body", [27, "uni2010", "uni03BC", "f_l", "f_i", 31, "uni00A0", 65, "A"]),
        _font("VEZJBI+Body"),  # a standard encoding: nothing below 0x20, no conflict
        _font("ABCDEF+Other", [2, "f_i"]), _font("GHIJKL+Other", [2, "f_l"]),  # disagree: dropped
        _font("MNOPQR+Mixed", [5, "f_f"]), _font("Mixed", encoding=None),  # a built-in encoding
        _font("STUVWX+Drawn", [1, "f_i"]), _font("Drawn", [1, "f_i"], subtype="Type3"),  # Type 3 names its own
        _font("Composite", [1, "f_i"]), _font("Composite", subtype="Type0", encoding="Identity-H"),
        _font("Icons", [1, "f_i"], subtype="Type3"),
        _font("", [1, "f_i"]),  # no name: pdfium could not tell it from another
    ]
    tables = font_tables(font_record(font) for font in fonts)
    assert tables == {"Body": {29: "\ufb02", 30: "\ufb01"}}


@pytest.mark.needs_data("pdfs/acl")
def test_fonts_inside_form_xobjects_are_read_too():
    """N09-1048 draws its text through form XObjects: its fonts are found only there."""
    from scholarly_nlp.readers.pdf.glyph_names import control_code_characters

    tables = control_code_characters(data_path("pdfs", "acl", "N09-1048.pdf"))
    assert tables["NimbusRomNo9L-Regu"] == {2: "\ufb01", 3: "\ufb02", 19: "\ufb00", 20: "\ufb03", 21: "\ufb04"}


def test_a_file_pdfminer_cannot_parse_gives_no_table(tmp_path):
    from scholarly_nlp.readers.pdf.glyph_names import control_code_characters

    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\nnot a pdf body\n%%EOF\n")
    assert control_code_characters(broken) == {}


def test_a_ligature_joins_the_next_glyph_only_when_set_without_a_gap():
    from scholarly_nlp.readers.pdf.extraction import set_without_gap

    ligature = (100.0, 700.0, 106.0, 711.5)  # a 10 pt glyph: its loose box is 11.5 pt high
    assert set_without_gap(ligature, (106.1, 700.0, 110.0, 711.5))  # 0.01 em: the font's own space
    assert set_without_gap(ligature, (105.9, 700.2, 110.0, 711.5))  # a kerned overlap
    assert not set_without_gap(ligature, (106.4, 700.0, 110.0, 711.5))  # 0.04 em: a tight word space
    assert not set_without_gap(ligature, (108.9, 700.0, 112.0, 711.5))  # a usual word space
    assert not set_without_gap(ligature, (106.0, 688.0, 110.0, 699.5))  # the next line


@pytest.mark.needs_data("pdf-pairs")
def test_symbol_font_text_becomes_unicode():
    """Word writes Symbol-font text at U+F000 + code: a list's bullets (U+F0B7) and an
    equation's =, + and Greek letters come out as the characters they are; Adobe's sans-serif
    trademark (U+F8EA) becomes TM."""
    bullets = read_pair(PAIRS / "upmchk_paper4.pdf")
    equation = read_pair(PAIRS / "miku_ojs62.pdf")
    trademark = read_pair(PAIRS / "srgarcia_prodadmin__joh-1-7-v2.pdf")
    for paper in (bullets, equation, trademark):
        text = " ".join(b.text for b in paper.blocks)
        assert not re.search("[\uf020-\uf0fe\uf8e5-\uf8fe]", text), paper.paper_id
    assert sum(b.text.count("\u2022 ") for b in bullets.blocks) == 7
    assert any(b.text.startswith("log(pci)=\u03b10+\u03b11 log(emp)+\u03b12 log(gfcf)") and b.text.endswith("+\u03b5t (6)")
               for b in equation.blocks)
    assert any("GitHub\u2122, 7 or" in b.text for b in trademark.blocks)


@pytest.mark.needs_data("pdf-pairs")
def test_a_word_symbol_font_under_another_name_is_known_by_its_family():
    """A Word PDF names its Symbol font "CIDFont+F7"; pdfium's family name for it says Symbol,
    so the list's U+F0B7 bullets are read as bullets."""
    from scholarly_nlp.readers.pdf.document import PdfHandle, open_document
    from scholarly_nlp.readers.pdf.extraction import read_page

    path = PAIRS / "mauricio_NIBM.pdf"
    need(PAIRS)
    pdf = PdfHandle(open_document(path), path)
    try:
        lines = [" ".join(w.text for w in line.words) for line in read_page(pdf, 3).lines]
    finally:
        pdf.close()
    bullets = [line for line in lines if line.startswith("\u2022 ")]
    assert [line.split(" \u2013 ")[0] for line in bullets[:3]] == ["\u2022 Coordination", "\u2022 Cooperation",
                                                                 "\u2022 Deliberation"]
    assert not any("\uf0b7" in line for line in lines)


@pytest.mark.needs_data("pdfs/acl")
def test_brace_pieces_of_acl_formulas_become_unicode_pieces():
    """A 2003 CL article's case formula has Symbol's large-brace pieces (U+F8F1-U+F8F3)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        paper = read_pdf(data_path("pdfs", "acl", "J03-1005.pdf"))
    text = " ".join(b.text for b in paper.blocks)
    assert "\u23a7" in text and "\u23a9" in text and not re.search("[\uf8e5-\uf8fe]", text)


def test_the_symbol_encoding_gives_one_unicode_character_per_code():
    from scholarly_nlp.readers.pdf.symbol_font import (
        ADOBE_SYMBOL_PUA, SYMBOL_ENCODING, is_symbol_font, symbol_character)

    assert len(SYMBOL_ENCODING) == 189 and set(SYMBOL_ENCODING) <= set(range(0x20, 0xFF))
    for table in (SYMBOL_ENCODING, ADOBE_SYMBOL_PUA):
        assert all(len(ch) == 1 and not 0xE000 <= ord(ch) <= 0xF8FF for ch in table.values())
    assert [symbol_character(chr(0xF000 + code)) for code in (0x3D, 0x61, 0x65, 0xB7, 0xE5, 0x2B)] == list("=\u03b1\u03b5\u2022\u2211+")
    assert symbol_character("\uf080") == "\uf080"  # no character at 0x80: left as it is
    assert is_symbol_font("SymbolMT") and is_symbol_font("Symbol,Bold")
    assert not is_symbol_font("Wingdings-Regular") and not is_symbol_font("TimesNewRomanPSMT")


@pytest.mark.needs_data("pdf-pairs")
def test_an_abstract_after_four_pages_of_authors_and_its_table_of_contents():
    """A preprint with fifty authors prints their affiliations over four pages, the abstract on
    the fifth and a table of contents ("Introduction (p. 7)") on the sixth: the abstract is
    found, ends before the contents, and the list of tables gives no captions."""
    paper = read_pair(PAIRS / "grozescu_2502.12102v1.pdf")
    abstract = [b.text for b in paper.blocks_of("abstract")]
    assert len(abstract) == 1 and abstract[0].startswith("How we should design and interact with so-called")
    assert tokens(abstract[0])[:8] == tokens(tei_abstract("grozescu_2502.12102v1"))[:8]
    assert paper.sections[0].title == "Introduction"
    assert [(f.kind, f.label) for f in paper.figures] == [("table", "1"), ("table", "2")]


@pytest.mark.parametrize("text, entry", [
    ("Introduction (p. 7)", True), ("Results (pp. 12-14)", True), ("3.2 Model . . . . . . 12", True),
    ("Methods (page 4)", True), ("as shown by Smith (p. 7 of the report).", False),
    ("Figure 3: Accuracy per epoch (p < 0.05)", False),
])
def test_contents_entries_end_with_a_page(text, entry):
    from scholarly_nlp.readers.pdf.patterns import CONTENTS_ENTRY_RE

    assert bool(CONTENTS_ENTRY_RE.search(text)) is entry


@pytest.mark.needs_data("pdf-pairs")
def test_a_news_article_has_no_abstract_and_its_opening_is_body():
    """A journal's news piece prints no abstract; its opening paragraphs cite works ("[1-3]"),
    which no unlabelled abstract does: they are the body, with their citations linked."""
    paper = read_pair(PAIRS / "srgarcia_1-s2.0-S2095809925001183-main.pdf")
    assert paper.blocks_of("abstract") == []
    first = paper.blocks_of("paragraph")[0]
    assert first.text.startswith("In May 2024, scientists were excited but disappointed")
    assert sum(r.kind == "bibr" for r in first.refs) >= 3


@pytest.mark.needs_data("pdf-pairs")
def test_fonts_scaled_by_the_text_matrix_get_their_glyphs_sizes():
    """This proceedings PDF sets "75 Tf" under a text matrix of 0.12, and pdfium reports 75 for
    9-point glyphs. Its running head then had a body line as row mate, so it was no furniture,
    and no head stood out: the paper was 8 blocks and no section."""
    paper = read_pair(PAIRS / "yimin_29-34_no_abs.pdf")
    assert paper.title == ("Rise of the Machine and Medicine: a Qualitative Review of Artificial "
                           "Intelligence in the Healthcare Industry")
    titles = [s.title for s in paper.sections]
    assert titles[:2] == ["Introduction", "Qualitative Review Methodology"] and "Conclusion" in titles
    assert not any("Leadership Challenges" in b.text or "JAIN COLLEGE" in b.text for b in paper.blocks)
    assert len(paper.bibliography) >= 20


@pytest.mark.needs_data("pdf-pairs")
@pytest.mark.parametrize(
    "name, heads",
    [
        # ICLR: "2.1" in the body's size, "GRAPH ATTENTIONAL LAYER" in small caps 8 pt under 10
        ("osai_paper04", ["2.1 GRAPH ATTENTIONAL LAYER", "2.2 COMPARISONS TO RELATED WORK"]),
        # IEEE: "III. THE VALUE OF PREDICTIONS", each word's first capital in the body's size
        ("upmchk_paper9", ["III THE VALUE OF PREDICTIONS"]),
    ],
)
def test_a_head_in_small_caps_is_a_section(name, heads):
    """A line of capitals, some 25% larger than the rest, is read in the size of its larger
    capitals: a head set in small caps is as big as the body, not a footnote-sized line."""
    paper = read_pair(PAIRS / f"{name}.pdf")
    found = [f"{s.number} {s.title}" for s in paper.sections]
    assert all(head in found for head in heads), found


@pytest.mark.needs_data("pdf-pairs")
def test_a_page_with_a_side_box_over_the_body_columns_is_read_in_two_zones():
    """Wiley's first page sets a narrow box of funding and conflicts beside a wide one over the
    introduction, whose two columns have the document's usual gutter: read with the box's
    gutter, each introduction line had its neighbour from the other column glued on."""
    paper = read_pair(PAIRS / "mauricio_AIPNAFLDF.pdf")
    assert paper.sections[0].title == "Introduction"
    paragraphs = [b.text for b in paper.blocks_of("paragraph")]
    assert any(p.startswith("Non-alcoholic fatty liver disease (NAFLD) is currently the most common chronic liver "
                            "disease worldwide and affects at least 25% of the global adult population.") for p in paragraphs)
    assert not any("is currently the most hepatic" in p for p in paragraphs)


@pytest.mark.needs_data("pdf-pairs")
@pytest.mark.parametrize("name", ["gcp_0046d83a", "gcp_0f318087"])
def test_a_structured_abstracts_parts_are_paragraphs_of_their_own(name):
    """A structured abstract's "Results:" after a full last line of "Methods:" opens a paragraph
    of its own, as in the printed abstract (the role tagger reads each part by itself)."""
    paper = read_pair(PAIRS / f"{name}.pdf")
    leads = [b.text.split(":")[0] for b in paper.blocks_of("abstract")]
    assert leads == ["Background", "Methods", "Results", "Conclusions"]


@pytest.mark.needs_data("pdf-pairs")
def test_a_numbered_head_in_body_font_that_goes_on_from_the_last_section_is_a_section():
    """MDPI's third-level heads ("2.3.1. Data Set Description") share the body's font and
    their paragraph's block; their number, going on from "2.3", and the indented line under
    them make them heads, and their paragraphs fall under them."""
    paper = read_pair(PAIRS / "srgarcia_inventions-08-00032-v2.pdf")
    numbered = [(s.number, s.title) for s in paper.sections if s.number]
    assert numbered[4:9] == [("2.3", "Case Study of a Multi-Stage Continuous-Flow Manufacturing Process"),
                             ("2.3.1", "Data Set Description"),
                             ("2.4", "The Machine Learning Problem and Investigated Methods"),
                             ("2.4.1", "Predictive Modeling Problem Definition for the Case Study"),
                             ("2.4.2", "Regression Learning for the Case Study")]
    assert not any(b.text.startswith("2.4.2.") for b in paper.blocks_of("paragraph"))


@pytest.mark.needs_data("pdf-pairs")
def test_a_numbered_bold_head_run_in_without_a_full_stop_is_a_section():
    """ISPRS runs "2.2.1 Provocation" in bold into its paragraph with no full stop; the row
    comes in pieces at the gaps, and the bold ones are the head."""
    paper = read_pair(PAIRS / "srgarcia_isprs-archives-XLVIII-4-W1-2022-201-2022.pdf")
    heads = [(s.number, s.title) for s in paper.sections if s.number and s.number.startswith("2.2.")]
    assert heads == [("2.2.1", "Provocation"), ("2.2.2", "Ideation"), ("2.2.3", "Knowledge Generation"),
                     ("2.2.4", "Validation"), ("2.2.5", "Dissemination and Preservation")]
    first = next(b for b in paper.blocks_of("paragraph") if b.section == paper.sections.index(
        next(s for s in paper.sections if s.number == "2.2.1")))
    assert first.text.startswith("In the provocation phase, researchers review literature")


@pytest.mark.needs_data("pdf-pairs")
def test_ieee_heads_in_body_font_over_their_paragraph_are_sections():
    """IEEE's upper-case heads share their paragraph's block in body size and font: a Roman
    head too long for one row goes on in a centred row, and "ACKNOWLEDGMENT" sits centred."""
    paper = read_pair(PAIRS / "upmchk_paper9.pdf")
    heads = [(s.number, s.title) for s in paper.sections]
    assert ("II", "HOW RESEARCH SOFTWARE ENGINEERING MIGHT BE IN 2030") in heads
    assert (None, "ACKNOWLEDGMENT") in heads
    assert not any(b.text.startswith(("II.", "ACKNOWLEDGMENT")) for b in paper.blocks_of("paragraph"))
