"""Running heads and feet that GROBID leaves in the text, cut out by the TEI reader.

The strings below are copied from the real TEI files of ``../shared/data``; the reader tests
read those files.
"""

from __future__ import annotations

import pytest

from scholarly_nlp import read_paper
from scholarly_nlp.readers.tei import parse_tei
from scholarly_nlp.paper import Block, InlineRef
from scholarly_nlp.readers.cuts import cut_block, cut_text
from scholarly_nlp.text.running_heads import prints_doi, running_head_spans, running_title

from conftest import data_path


def _cut(text: str, doi=None) -> str:
    return cut_text(text, running_head_spans(text, doi))


# -- the patterns -------------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    # Scientific Reports, its name in GROBID's mixed case, inside a sentence across a page break.
    ("the same development state were housed. SCIEntIfIC RePORTs | (2019) 9:620 | "
     "DOI:10.1038/s41598-018-36432-x midgut they germinate",
     "the same development state were housed. midgut they germinate"),
    # The volume digits after GROBID made citation refs of them ("9 :585", "10 .1038").
    ("SCIeNTIfIC REpORTS | (2019) 9 :320 | DOI: 10 .1038/s41598-018-35685-w tracking of the flu",
     "tracking of the flu"),
    ("Scientific RepoRts | (2019) 9:458 | https://doi.org/10.1038/s41598-018-36450-9 and ε4/4).",
     "and ε4/4)."),
    # Nature Communications: the head of one page and the foot of the next.
    ("is about 5.9% NATURE COMMUNICATIONS | https://doi.org/10.1038/s41467-018-08104-x ARTICLE "
     "NATURE COMMUNICATIONS | (2019) 10:435 | https://doi.org/10.1038/s41467-018-08104-x | "
     "www.nature.com/naturecommunications developed a technology",
     "is about 5.9% developed a technology"),
    ("towards the N domainARTICLE NATURE COMMUNICATIONS | (2019) 10:407 | "
     "https://doi.org/10.1038/s41467-018-08176-9 | www.nature.com/naturecommunications surface",
     "towards the N domain surface"),
    ("| (2019) 10:439 | https://doi.org/10.1038/s41467-018-08034-8 | www.nature.com/naturecommunications",
     ""),
    ("SCIENTIFIC REPORTS |(", "("),
    # PLOS: the foot with its date and page, glued to the DOI or not, and the badges' text.
    ("This difference has been PLOS ONE | https://doi.org/10.1371/journal.pone.0209582 December 31, "
     "2018 1 / 23 a1111111111 a1111111111 a1111111111",
     "This difference has been"),
    ("PLOS ONE | https://doi.org/10.1371/journal.pone.0237178August 25, 2020", ""),
    # A figure's own DOI link after its caption (PLOS, PeerJ).
    ("Fig 2. Common BCI loop. https://doi.org/10.1371/journal.pone.0210145.g002", "Fig 2. Common BCI loop."),
    ("training time.https://doi.org/10.1371/journal.pone.0210145.t003 1. Communication.",
     "training time. 1. Communication."),
    ("according to Kruskal test. Full-size DOI: 10.7717/peerj.5504/fig-2", "according to Kruskal test."),
    # PeerJ's citation line on the first page.
    ("tropical species. PeerJ 6:e5504; DOI 10.7717/peerj.5504 good combustion parameters.",
     "tropical species. good combustion parameters."),
    # BMC: page and citation line, in either order.
    ("## (p < 0.01) and ### (p < 0.001) Page 6 of 12 Zhu et al. Diabetol Metab Syndr (2019) 11:9 1α,25(OH) 2 D 3 .",
     "## (p < 0.01) and ### (p < 0.001) 1α,25(OH) 2 D 3 ."),
])
def test_publishers_running_heads_are_cut(text, expected):
    assert _cut(text) == expected


def test_own_doi_inside_a_sentence_is_a_running_head_with_its_authors_and_page():
    doi = "10.2218/ijdc.v11i2.390"  # IJDC prints "doi:... Soito and Hwang | 53" on every page
    assert _cut("relies upon code doi:10.2218/ijdc.v11i2.390 libraries written by others.", doi) == \
        "relies upon code libraries written by others."
    assert _cut("design pilots or doi:10.2218/ijdc.v11i2.390 Soito and Hwang | 57 experiments to address", doi) == \
        "design pilots or experiments to address"
    # A foot that ends a paragraph, with the authors and the journal before the DOI.
    assert _cut("and high voltage in blue. Jonveaux et al. Journal of Open Hardware DOI: 10.5334/joh.28",
                "10.5334/joh.28") == "and high voltage in blue."
    # Without the paper's DOI the same text is left alone: a DOI alone is no running head.
    assert _cut("relies upon code doi:10.2218/ijdc.v11i2.390 libraries written by others.") == \
        "relies upon code doi:10.2218/ijdc.v11i2.390 libraries written by others."


@pytest.mark.parametrize("text", [
    "Supplementary information accompanies this paper at https://doi.org/10.1038/s41598-018-36432-x.",
    "The online version of this article (https://doi.org/10.1038/s41598-018-36432-x) contains supplementary material.",
    "The dataset is at https://doi.org/10.5061/dryad.abc123 and the code on GitHub.",
    "the norm |x| of the reports | the scientific reports of 2019",
    "as reported earlier (2019) 9:620 patients were enrolled",
    "see page 6 of 12 in the appendix; Zhu et al. (2019) found",
    "the Technical Reports | Data Sheets | Manuals of the vendor",
])
def test_the_papers_own_sentences_are_not_running_heads(text):
    assert running_head_spans(text, "10.1038/s41598-018-36432-x") == []


def test_prints_doi():
    assert prints_doi("See https://doi.org/10.7717/PeerJ.5504.", "10.7717/peerj.5504")
    # A supplementary file's or figure's DOI starts with the paper's and is not it.
    assert not prints_doi("S1 Fig. https://doi.org/10.1371/journal.pone.0210145.s001", "10.1371/journal.pone.0210145")
    assert not prints_doi("no DOI here", "10.7717/peerj.5504")
    assert not prints_doi("10.7717/peerj.5504", None)


# -- cutting a block ---------------------------------------------------------------------


def _block() -> Block:
    #        0         1         2         3         4         5         6
    #        0123456789012345678901234567890123456789012345678901234567890123456789
    text = "Risk of HCC [3]. SR | (2019) 9:585 | DOI:10.1/x of decompensation [4]."
    head = text.index("SR |")
    nine = text.index("9:585")
    refs = [InlineRef(start=12, end=15, kind="bibr", target="b2"),
            InlineRef(start=nine, end=nine + 1, kind="bibr", target="b8"),
            InlineRef(start=text.index("[4]"), end=text.index("[4]") + 3, kind="bibr", target="b3")]
    sentences = [(0, 16), (head, len(text))]
    return Block(kind="paragraph", text=text, refs=refs, sentences=sentences, section=0)


def test_cut_block_moves_refs_and_sentences_and_drops_what_the_cut_held():
    block = _block()
    start, end = block.text.index("SR |"), block.text.index(" of decompensation")
    cut = cut_block(block, [(start, end)])
    assert cut.text == "Risk of HCC [3]. of decompensation [4]."
    assert [(cut.text[r.start:r.end], r.target) for r in cut.refs] == [("[3]", "b2"), ("[4]", "b3")]
    assert [cut.text[a:b] for a, b in cut.sentences] == ["Risk of HCC [3].", "of decompensation [4]."]
    cut.check()
    assert block.text.startswith("Risk of HCC [3]. SR")  # the original is untouched


def test_cut_block_keeps_a_ref_around_the_cut_and_drops_a_sentence_that_was_all_cut():
    text = "(Rollins, Barton, doi:10.2/y Bergin and Lee, 2014). HEAD ONLY."
    head = text.index("doi:")
    block = Block(kind="paragraph", text=text, section=0,
                  refs=[InlineRef(start=0, end=text.index(")") + 1, kind="bibr", target="b1")],
                  sentences=[(0, text.index(").") + 2), (text.index("HEAD"), len(text))])
    cut = cut_block(block, [(head, head + len("doi:10.2/y")), (text.index("HEAD"), len(text))])
    assert cut.text == "(Rollins, Barton, Bergin and Lee, 2014)."
    assert [cut.text[r.start:r.end] for r in cut.refs] == ["(Rollins, Barton, Bergin and Lee, 2014)"]
    assert [cut.text[a:b] for a, b in cut.sentences] == ["(Rollins, Barton, Bergin and Lee, 2014)."]
    cut.check()


def test_cut_block_at_the_start_with_adjacent_spans_and_a_ref_that_starts_inside_a_cut():
    text = "HEAD ONE HEAD TWO (1) real text [2] MID more text."
    refs = [InlineRef(start=text.index("TWO"), end=text.index("(1)") + 3, kind="bibr", target="b0"),
            InlineRef(start=text.index("[2]"), end=text.index("[2]") + 3, kind="bibr", target="b1")]
    sentences = [(0, text.index(" MID")), (text.index("MID"), text.index("MID") + 3),
                 (text.index("more"), len(text))]
    block = Block(kind="paragraph", text=text, refs=refs, sentences=sentences, section=0)
    spans = [(0, 8), (8, text.index("TWO") + 3), (text.index("MID"), text.index("MID") + 3)]
    cut = cut_block(block, spans)
    assert cut.text == "(1) real text [2] more text."
    # The ref that began inside the cut is gone, though its "(1)" is still there; [2] moved.
    assert [(cut.text[r.start:r.end], r.target) for r in cut.refs] == [("[2]", "b1")]
    # The sentence that was only "MID" is gone; the two it stood between met mid-sentence, so
    # they are one (GROBID ends a sentence at a running head).
    assert [cut.text[a:b] for a, b in cut.sentences] == ["(1) real text [2] more text."]
    cut.check()


def test_cut_block_with_nothing_left_is_none_and_without_spans_is_the_block():
    block = _block()
    assert cut_block(block, [(0, len(block.text))]) is None
    assert cut_block(block, []) is block


# -- the TEI reader on real files ----------------------------------------------------------


def _texts(paper, kind):
    return [b.text for b in paper.blocks if b.kind == kind]


@pytest.mark.needs_data("tei/biomed")
def test_scientific_reports_heads_and_their_citation_refs_are_gone():
    paper = read_paper(data_path("tei", "biomed", "10.1038%2Fs41598-018-36734-0.tei.xml"))
    paper.check()
    everything = " ".join(b.text for b in paper.blocks)
    assert "SCIENTIFIC REPORTS" not in everything and "(2019) 9:585" not in everything
    continued = next(b for b in paper.blocks if b.text.startswith("of decompensation and the risk of HCC"))
    # GROBID's refs to works 9 and 10 were the head's volume and DOI digits.
    cited = [(continued.text[r.start:r.end], r.target) for r in continued.refs if r.kind == "bibr"]
    assert cited[:3] == [("[3]", "b2"), ("[4]", "b3"), ("[5]", "b4")]
    assert ("9", "b8") not in cited and ("10", "b9") not in cited
    # Another paper: a head inside a sentence goes; the paper's own sentence giving its DOI stays.
    other = read_paper(data_path("tei", "biomed", "10.1038%2Fs41598-018-36432-x.tei.xml"))
    paragraphs = _texts(other, "paragraph")
    assert any("As soon as spores arrive to larvae midgut they germinate" in t for t in paragraphs)
    assert any(t.endswith("under the same development state were housed.") for t in _texts(other, "caption"))
    assert not any("RePORTs |" in b.text for b in other.blocks)
    assert any("accompanies this paper at https://doi.org/10.1038/s41598-018-36432-x." in t for t in paragraphs)


@pytest.mark.needs_data("tei/biomed")
def test_nature_communications_feet_are_no_footnotes():
    paper = read_paper(data_path("tei", "biomed", "10.1038%2Fs41467-018-08034-8.tei.xml"))
    assert not any("NATURE COMMUNICATIONS |" in t or "www.nature.com" in t for t in _texts(paper, "footnote"))
    assert not any("| (2019)" in t for t in _texts(paper, "caption"))


@pytest.mark.needs_data("tei/biomed")
def test_plos_captions_lose_their_doi_links_and_the_badges_text_is_gone():
    paper = read_paper(data_path("tei", "biomed", "10.1371%2Fjournal.pone.0210145.tei.xml"))
    captions = _texts(paper, "caption")
    assert "Fig 2. Common BCI loop." in captions
    assert not any("doi.org/10.1371/journal.pone.0210145" in t for t in captions)
    assert not any("PLOS ONE |" in t for t in _texts(paper, "footnote"))
    assert "https://doi.org/10.1371/journal.pone.0210145.g" not in " ".join(b.text for b in paper.blocks)
    badges = read_paper(data_path("tei", "biomed", "10.1371%2Fjournal.pone.0199520.tei.xml"))
    assert not any("a1111111111" in b.text for b in badges.blocks)
    assert any(b.text.endswith("an economical and green process for the treatment of pharmaceutical sludge "
                               "is strongly desired.") for b in badges.blocks)


@pytest.mark.needs_data("pdf-pairs")
def test_a_table_whose_caption_was_only_its_doi_link_is_captioned_from_its_head():
    paper = read_paper(data_path("pdf-pairs", "ser763_entanglement-rates-and.tei.xml"))
    captions = _texts(paper, "caption")
    assert any(t.startswith("Table 2: Entanglement rates for Steller and California sea lions") for t in captions)
    assert not any("doi.org" in t for t in captions)
    assert not any("PLOS ONE" in t for t in _texts(paper, "footnote"))


@pytest.mark.needs_data("tei/biomed", "tei/acl")
def test_footnotes_that_are_furniture_go_and_a_caption_grobid_put_in_a_footnote_stays():
    footnotes = _texts(read_paper(data_path("tei", "biomed", "10.1371%2Fjournal.pone.0207995.tei.xml")), "footnote")
    assert "Fig 2. Schematic model of main treatment pathways followed by patients in West Pokot County." in footnotes
    assert not any("PLOS ONE" in t or "Health-seeking pathways" in t for t in footnotes)
    # A running title left alone in a footnote (0208249's was not learnt: it is printed nowhere else).
    assert not _texts(read_paper(data_path("tei", "biomed", "10.1371%2Fjournal.pone.0208249.tei.xml")), "footnote")
    # A proceedings line printing the paper's own DOI is a notice about the paper, no footnote.
    acl = _texts(read_paper(data_path("tei", "acl", "P17-1086.tei.xml")), "footnote")
    assert acl and not any("Proceedings of the 55th Annual Meeting" in t for t in acl)
    # A footnote of numbers alone was never a running head and stays.
    assert "* p < 0.1; **p < 0.05; ***p < 0.01;" in _texts(
        read_paper(data_path("tei", "biomed", "10.1186%2Fs12914-019-0191-9.tei.xml")), "footnote")


@pytest.mark.needs_data("pdf-pairs")
def test_a_journal_no_pattern_names_is_found_by_the_papers_own_doi():
    paper = read_paper(data_path("pdf-pairs", "upmchk_paper4.tei.xml"))
    paper.check()
    paragraphs = _texts(paper, "paragraph")
    assert not any("doi:10.2218/ijdc.v11i2.390" in t for t in paragraphs)
    assert any("relies upon code libraries written by others" in t for t in paragraphs)
    assert not any("Soito and Hwang |" in t for t in paragraphs)


# -- PLOS's running title -------------------------------------------------------------------


def test_running_title_is_the_lead_that_texts_share_before_the_foot():
    title = "Sex hormone effects on post-injury synovial inflammation"
    texts = [  # from 10.1371/journal.pone.0209582: the first page's foot follows prose
        "This difference has been PLOS ONE | https://doi.org/10.1371/journal.pone.0209582 December 31, 2018 1 / 23",
        f"https://doi.org/10.1371/journal.pone.0209582.g001 {title} PLOS ONE | https://doi.org/10.1371/journal.pone.0209582",
        f"Greenspan et al. (2004) [38] . {title} PLOS ONE | https://doi.org/10.1371/journal.pone.0209582",
    ]
    assert running_title(texts) == title
    spans = running_head_spans(f"as reported by Greenspan et al. (2004) [38] . {title}", title=title)
    assert cut_text(f"as reported by Greenspan et al. (2004) [38] . {title}", spans) == \
        "as reported by Greenspan et al. (2004) [38] ."


def test_running_title_from_two_leads_that_end_alike():
    title = "Health-seeking pathways and delay in tuberculosis diagnosis"  # 10.1371/journal.pone.0207995
    assert running_title([f"(Formal Approval Number: IREC {title} PLOS ONE | https://doi.org/x",
                          f"Fig 2. Schematic model. {title} PLOS ONE | https://doi.org/y"]) == title


def test_a_lone_lead_is_the_title_only_where_another_text_has_it_out_of_place():
    foot = "PLOS ONE | https://doi.org/10.1371/journal.pone.0205655 November 28, 2018"
    title = "Donor compensation and the poor"  # 10.1371/journal.pone.0205655
    assert running_title([f"are compensated $0 or $75,000. {title} {foot}",
                          f"waiting list). {title} It is clear from Table 2 and Fig 1"]) == title
    # "In this study" before a foot, and as prose elsewhere: no title.
    assert running_title(["from 40 patients. In this study PLOS ONE | https://doi.org/x 3 / 12 we show",
                          "In this study, we also measured y."]) is None
    # The lead's own text does not count as elsewhere.
    assert running_title([f"are compensated $0 or $75,000. {title} {foot}"]) is None


def test_a_running_title_is_cut_as_whole_words_only():
    title = "Swine model of focal demyelination"
    text = f"the Swine model of focal demyelinations here; {title} and"
    assert cut_text(text, running_head_spans(text, title=title)) == "the Swine model of focal demyelinations here; and"


def test_paragraphs_inside_a_note_do_not_count_twice_for_the_running_title():
    # Newer GROBID nests paragraphs in footnotes: the note and its paragraph are one text.
    tei = ("<TEI xmlns='http://www.tei-c.org/ns/1.0'><teiHeader><fileDesc><titleStmt><title>T</title></titleStmt>"
           "</fileDesc></teiHeader><text><body><div><head>Introduction</head><p>This difference has been "
           "observed before.</p></div>"
           "<note place='foot' n='1'><p>1 Funding.</p><p>Other things happen. This difference has been "
           "PLOS ONE | https://doi.org/10.1371/journal.pone.0209582 December 31, 2018 1 / 23</p></note>"
           "</body></text></TEI>").encode()
    paper = parse_tei(tei, source="nested.tei.xml")
    assert any(b.text == "This difference has been observed before." for b in paper.blocks)


def test_no_running_title_from_prose_or_from_a_text_given_twice():
    twice = "inside real pore networks. It has PLOS ONE | https://doi.org/10.1371/journal.pone.0207489 1 / 14"
    assert running_title([twice, twice]) is None
    # Two leads that end alike in fewer than three words teach nothing ("Fig 1").
    assert running_title(["as shown in Fig 1 PLOS ONE | https://doi.org/a", "(see Fig 1 PLOS ONE | https://doi.org/b"]) is None
    assert running_title(["the impacts on PLOS ONE | https://doi.org/a", "islands, the impacts on PLOS ONE | https://doi.org/b"]) is None
    assert running_title(["no foot here", "nor here"]) is None


@pytest.mark.needs_data("tei/biomed")
def test_plos_running_title_is_cut_from_the_middle_of_sentences():
    paper = read_paper(data_path("tei", "biomed", "10.1371%2Fjournal.pone.0206079.tei.xml"))
    paper.check()
    short = "Characterization of a fractured basement reservoir using high-resolution 3D seismic and well logs"
    assert not any(short in b.text for b in paper.blocks)
    assert any("The top of the basement is structurally tilted in the north direction" in b.text for b in paper.blocks)
    assert paper.title.startswith("Characterization of a fractured basement reservoir")  # the real title stays
    # A paper whose only foot follows prose learns no title.
    assert any("It has also been argued" in b.text
               for b in read_paper(data_path("tei", "biomed", "10.1371%2Fjournal.pone.0207489.tei.xml")).blocks)


def test_a_sentence_that_grobid_ended_at_a_running_head_is_whole_again():
    # 10.1038/s41598-018-36432-x: <s>... arrive to larvae SCIEntIfIC RePORTs | (2019) 9 :620 | DOI: 10 .1038/...</s><s>midgut ...
    text = ("As soon as spores arrive to larvae SCIEntIfIC RePORTs | (2019) 9 :620 | DOI: 10 .1038/s41598-018-36432-x "
            "midgut they germinate. Then they proliferate.")
    second = text.index("midgut")
    third = text.index("Then")
    block = Block(kind="paragraph", text=text, section=0,
                  sentences=[(0, second - 1), (second, third - 1), (third, len(text))])
    cut = cut_block(block, running_head_spans(text))
    assert [cut.text[a:b] for a, b in cut.sentences] == [
        "As soon as spores arrive to larvae midgut they germinate.", "Then they proliferate."]
    # A sentence that ended before the head stays ended.
    text = "Larvae were housed. SCIENTIFIC REPORTS | (2019) 9:620 | DOI:10.1038/s41598-018-36432-x they germinate."
    second = text.index("they")
    cut = cut_block(Block(kind="paragraph", text=text, section=0, sentences=[(0, 19), (second, len(text))]),
                    running_head_spans(text))
    assert [cut.text[a:b] for a, b in cut.sentences] == ["Larvae were housed.", "they germinate."]


def test_what_is_left_of_a_footnote_after_its_running_heads():
    """No word, or a short line that ends no sentence (a running title not learnt), is no note;
    a sentence, or a line over 20 words, is one."""
    from scholarly_nlp.text.running_heads import only_furniture_left

    assert only_furniture_left("12 / 28")
    assert only_furniture_left("Characterization of a fractured basement reservoir")
    assert not only_furniture_left("The data were collected in 2017.")
    assert not only_furniture_left(" ".join(["word"] * 21))
