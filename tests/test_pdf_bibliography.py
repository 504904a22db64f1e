"""The PDF reader's bibliography and citation links (issue 14, items 1 and 2).

Real papers of four reference styles are read and held to GROBID's TEI of the same PDF: the
entries' titles are found, numbered markers link to the entry with their printed number and
author-year markers to the entry of that first author and year. Hand-built PDFs cover the
bad input: a reference list with nothing readable, markers no entry matches, a number
printed twice.
"""

from __future__ import annotations

import re
import warnings
from collections import Counter

import pytest
from lxml import etree

import pdf_samples
from conftest import data_path, need
from scholarly_nlp import read
from scholarly_nlp.readers import read_pdf
from scholarly_nlp.readers.pdf.reference_parser import parse_reference

TEI_NS = {"t": "http://www.tei-c.org/ns/1.0"}
PAIRS = data_path("pdf-pairs")
WITH_PDF = data_path("tei", "with-pdf")
needs_data = pytest.mark.needs_data("pdf-pairs", "tei/with-pdf")

#: (folder, name): ACL author-year, PLOS numbered Vancouver, IEEE numbered with quoted titles,
#: PeerJ author-year with a hanging indent
PAPERS = [(WITH_PDF, "N18-3011"), (WITH_PDF, "journal.pone.0319315"), (PAIRS, "mauricio_DLVGP"),
          (PAIRS, "tannonk_10.7717_peerj.5504")]


def tokens(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.lower())


def token_f1(a: list[str], b: list[str]) -> float:
    common = sum((Counter(a) & Counter(b)).values())
    return 2 * common / (len(a) + len(b)) if common else 0.0


def grobid_titles(tei_path) -> list[str]:
    """The titles of GROBID's bibliography entries (article title, else the monograph's)."""
    tree = etree.parse(str(tei_path))
    titles = []
    for entry in tree.findall(".//t:back//t:listBibl/t:biblStruct", TEI_NS):
        title = entry.find("t:analytic/t:title", TEI_NS)
        if title is None:
            title = entry.find("t:monogr/t:title", TEI_NS)
        text = " ".join("".join(title.itertext()).split()) if title is not None else ""
        if len(tokens(text)) >= 2:
            titles.append(text)
    return titles


@pytest.fixture(scope="module")
def papers():
    """The four papers, read once."""
    need(WITH_PDF)
    need(PAIRS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {name: (read_pdf(folder / f"{name}.pdf"), folder / f"{name}.tei.xml") for folder, name in PAPERS}


@needs_data
@pytest.mark.parametrize("name", [name for _, name in PAPERS])
def test_most_of_grobids_entries_are_found_with_their_title(papers, name):
    paper, tei = papers[name]
    ours = [tokens(entry.title) for entry in paper.bibliography.values()]
    gold = grobid_titles(tei)
    found = sum(1 for title in gold if max((token_f1(tokens(title), t) for t in ours), default=0) >= 0.8)
    assert found >= 0.8 * len(gold), f"{found} of {len(gold)} GROBID titles found"
    assert len(paper.bibliography) <= 1.5 * len(gold) + 2, "no list of fragments"
    entries = list(paper.bibliography.values())
    assert sum(1 for e in entries if e.authors and e.year) >= 0.85 * len(entries)


@needs_data
def test_numbered_entries_keep_their_order_and_numbers_link_to_them(papers):
    paper, _ = papers["journal.pone.0319315"]
    refs = [(b.text[r.start:r.end], r.target) for b in paper.blocks_of("paragraph") for r in b.refs if r.kind == "bibr"]
    assert refs and all(target for _, target in refs), "every [n] of PLOS links"
    # "[12]" links to the 12th entry, whose id is b11
    singles = [(text, target) for text, target in refs if re.fullmatch(r"\[\d+\]", text)]
    assert singles and all(target == f"b{int(text[1:-1]) - 1}" for text, target in singles)
    ieee, _ = papers["mauricio_DLVGP"]
    lecun = next(e for e in ieee.bibliography.values() if "handwritten zip code" in e.title)
    assert lecun.year == "1989" and lecun.title.startswith("Backpropagation applied")
    assert lecun.venue.startswith("Neural Comput")


@needs_data
@pytest.mark.parametrize("name", ["N18-3011", "tannonk_10.7717_peerj.5504"])
def test_author_year_markers_link_to_the_entry_of_that_author_and_year(papers, name):
    paper, _ = papers[name]
    markers = [(b.text[r.start:r.end], r.target) for b in paper.blocks_of("paragraph") for r in b.refs
               if r.kind == "bibr"]
    linked = [(text, target) for text, target in markers if target]
    assert len(linked) >= 0.7 * len(markers)
    for text, target in linked:
        entry = paper.bibliography[target]
        year = re.search(r"(?:19|20)\d\d", text).group()
        first_word = re.split(r"\s+(?:et\s*al|and|&)\b|,|\(", text)[0].split()[-1]
        assert entry.year.startswith(year), (text, entry)
        assert tokens(first_word)[0] in tokens(" ".join(entry.authors)), (text, entry)


@needs_data
def test_a_pdf_doc_has_citances_linked_to_its_bibliography():
    need(WITH_PDF)
    doc = read(WITH_PDF / "journal.pone.0319315.pdf")
    citances = doc._.citances
    assert citances and sum(1 for c in citances if c.bib_ids) >= 0.9 * len(citances)
    first = citances[0]
    assert set(first.bib_ids) <= set(doc._.bibliography)
    assert doc._.bibliography[first.bib_ids[0]]["title"]


@pytest.mark.parametrize(
    "text, numbered, authors, year, title_start",
    [
        # inverted first author, the others not (ecology journals)
        ("Allan, J. A., D. McBain, and K. S. Wiebe. 2017b. A social footprint. Ecology 3:1-2.", False,
         ["J. A. Allan", "D. McBain", "K. S. Wiebe"], "2017b", "A social footprint"),
        # Vancouver without periods, a title-case word after one initial is the title
        ("[5] Gipe P. Wind energy comes of age. New York: Wiley; 1995.", True, ["P. Gipe"], "1995", "Wind energy"),
        # an organisation as author
        ("IEA. 2000. Hydropower and the environment. Paris: IEA.", False, ["IEA"], "2000", "Hydropower"),
        # APA with an ellipsis before the last author, a month in the date
        ("Awad, E., Levine, S., ... & Tenenbaum, J. B. (2022, May). Computational ethics. Trends, 2, 1.", False,
         ["E. Awad", "S. Levine", "J. B. Tenenbaum"], "2022", "Computational ethics"),
        # Elsevier numbered: the title closed by a comma before the journal
        ("[3] Tao Xie, David Lo, Data mining for software engineering, Computer 42 (8) (2009) 55-62.", True,
         ["Tao Xie", "David Lo"], "2009", "Data mining for software engineering"),
        # an arXiv number is no year
        ("[6] C. Beattie et al., \u201cDeepMind lab,\u201d 2016, arXiv:1612.03801.", True, ["C. Beattie"], "2016",
         "DeepMind lab"),
        # names no one form reads (a two-word surname, a particle, bare initials) up to "(year)"
        ("Chandra Kruse L, Seidel S and vom Brocke J (2019) Design archaeology: Generating design knowledge. "
         "In: Proceedings of DESRIST, pp. 32\u201345.", False, ["Chandra Kruse L", "Seidel S", "vom Brocke J"], "2019",
         "Design archaeology"),
        ("Bharath, R., Punit Kumar, et al. (Dec. 2015). \u201cFPGA-Based Portable Ultrasound Scanning System\u201d. "
         "In: Journal of Imaging 1.1, pp. 193\u2013219.", False, ["R. Bharath", "Punit Kumar"], "2015", "FPGA-Based"),
        # Zoologia: names in capitals, initials first after the first, one with a particle
        ("VERSTRAETE, F.J.M.; R.J. VAN AARDE; B.A. NIEUWOUDT; E. MAUER & P.H. KASS. 1996. The dental pathology "
         "of feral cats on Marion Island. Journal of Comparative Pathology 115: 283-297.", False,
         ["F.J.M. VERSTRAETE", "R.J. VAN AARDE", "B.A. NIEUWOUDT", "E. MAUER", "P.H. KASS"], "1996",
         "The dental pathology of feral cats"),
        # IEEE Access's doubled single quotes around a title that quotes with single ones
        ("[34] A. Jones, S. Bull, and G. Castellano, \u2018\u2018\u2018I know that now, I\u2019m going to learn this "
         "next\u2019 promoting self-regulated learning with a robotic tutor,\u2019\u2019 Int. J. Social Robot., vol. 10, "
         "pp. 439\u2013454, 2018.", True, ["A. Jones", "S. Bull", "G. Castellano"], "2018",
         "\u2018I know that now, I\u2019m going to learn this next\u2019 promoting"),
    ],
)
def test_reference_styles_are_read_field_by_field(text, numbered, authors, year, title_start):
    parsed = parse_reference(text, numbered=numbered)
    assert parsed.authors == authors
    assert parsed.year == year
    assert parsed.title.startswith(title_start)
    assert not parsed.title.endswith((".", ","))


@pytest.mark.parametrize(
    "text, title, venue",
    [
        ("Campbell, C., & Sands, S. (2020). From data to action: How marketers can leverage AI.Business Horizons, "
         "63(2), 227-243.", "From data to action: How marketers can leverage AI", "Business Horizons"),
        ("Sunikka, A., & Bragge, J. (2012). Applying text-mining to personalization research literature\u2013Who, "
         "what and where?.Expert Systems with Applications, 39(11), 10049-10058.",
         "Applying text-mining to personalization research literature\u2013Who, what and where?",
         "Expert Systems with Applications"),
    ],
)
def test_a_title_glued_to_its_journal_ends_at_the_full_stop(text, title, venue):
    """Some PDFs print no space between an APA title's full stop and the journal."""
    parsed = parse_reference(text)
    assert (parsed.title, parsed.venue) == (title, venue)


@pytest.mark.parametrize(
    "text, numbered, authors, title",
    [
        # MDPI: ten names and "et al." after a semicolon (srgarcia_inventions-08-00032-v2)
        ("16. Pedregosa, F.; Varoquaux, G.; Gramfort, A.; Michel, V.; Thirion, B.; Grisel, O.; Blondel, M.; "
         "Prettenhofer, P.; Weiss, R.; Dubourg, V.; et al. Scikit-learn: Machine learning in Python. J. Mach. Learn. "
         "Res. 2011, 12, 2825\u20132830.", True,
         ["F. Pedregosa", "G. Varoquaux", "A. Gramfort", "V. Michel", "B. Thirion", "O. Grisel", "M. Blondel",
          "P. Prettenhofer", "R. Weiss", "V. Dubourg"], "Scikit-learn: Machine learning in Python"),
        # MDPI: a title opening with "A" after the last initial
        ("7. Zhang, H.; Wang, H.; Gao, H. A generic data analytics system for manufacturing production. Big Data Min. "
         "Anal. 2018, 1, 160\u2013171.", True, ["H. Zhang", "H. Wang", "H. Gao"],
         "A generic data analytics system for manufacturing production"),
        # PLOS: bare initials with a space, and "U.S." inside the title
        ("46. Carretta J V, Wilkin SM, Muto MM. Sources of human-related injury and mortality for U.S. Pacific West "
         "Coast marine mammal stock assessments, 2007\u20132011. NOAA Tech Memo. 2013.", True,
         ["J V Carretta", "SM Wilkin", "MM Muto"],
         "Sources of human-related injury and mortality for U.S. Pacific West Coast marine mammal stock assessments, "
         "2007\u20132011"),
        # "and et al." closes the list
        ("Abdin, M., Aneja, J., and et al. Phi-3 technical report: A highly capable language model. arXiv preprint "
         "arXiv:2404.14219, 2024.", False, ["M. Abdin", "J. Aneja"], "Phi-3 technical report: A highly capable language model"),
        # a comma-closed author list whose title ends at a full stop before the journal
        ("[11] E. Beam and S.A. Huettel, Mapping the semantic structure of cognitive neuroscience. Journal of cognitive "
         "neuroscience 26, 1949\u20131965 (2014).", True, ["E. Beam", "S.A. Huettel"],
         "Mapping the semantic structure of cognitive neuroscience"),
        # APA names the forms stop at ("Caraccio., M.") run on to "(under review)"
        ("Earp, B. D., McLoughlan, K., Caraccio., M., Clark, M. S., & Crockett, M. J. (under review). Impartial "
         "beneficence predicts greater concern. PsyArXiv.", False,
         ["B. D. Earp", "K. McLoughlan", "M Caraccio", "M. S Clark", "M. J Crockett"],
         "Impartial beneficence predicts greater concern"),
        # a numbered entry with no author: its words before the year are its title
        ("[2] Breaking barriers: Unconscious gender bias in the workplace, 2017.", True, [],
         "Breaking barriers: Unconscious gender bias in the workplace"),
        # what stands before "(year)" is a title, not more names, when nothing says names
        ("M. Nielsen, Quantum Computation (2010).", False, ["M. Nielsen"], "Quantum Computation (2010)"),
        # a suffix after the last name read is that name's
        ("Yancy CW, Casey DE Jr (2013) Heart failure guidelines. Circulation 128: 1-2.", False,
         ["CW Yancy", "DE Casey Jr"], "Heart failure guidelines"),
        # an organisation closed by a full stop before APA's "(year)."
        ("U.S. Census Bureau. (2021). American Community Survey 5-year estimates. Retrieved from the web.", False,
         ["U.S. Census", "Bureau"], "American Community Survey 5-year estimates"),
        # an abbreviation's full stop inside a comma-closed title is no end
        ("[4] A. Lee, K. Wong, Strategy at Apple Inc. and the smartphone market, J. Bus. Res. 12 (2019) 1-9.", True,
         ["A. Lee", "K. Wong"], "Strategy at Apple Inc. and the smartphone market"),
        # a dotted product name is one word
        ("Smith J. Building apps with ASP.Net Core. Microsoft Press; 2019.", False, ["J. Smith"],
         "Building apps with ASP.Net Core"),
        # a one-word chapter title: "In ..." after it is the book, no subtitle
        ("Earp, B. D. (2022). Flirting. In B. D. Earp & L. Watson (Eds.), The Routledge handbook of philosophy of sex "
         "(pp. 1\u201312). Routledge.", False, ["B. D. Earp"], "Flirting"),
    ],
)
def test_titles_end_where_the_entry_says(text, numbered, authors, title):
    parsed = parse_reference(text, numbered=numbered)
    assert (parsed.authors, parsed.title) == (authors, title)


def test_an_astronomy_entry_has_no_title_only_its_journal():
    """AAS journals print no titles: the journal, volume and page are not read as one."""
    parsed = parse_reference("Adler, D. S., Lo, K. Y., & Allen, R. J. 1992, ApJ, 392, 497")
    assert (parsed.title, parsed.venue, parsed.year) == ("", "ApJ", "1992")
    assert parsed.surnames == ["adler", "lo", "allen"]


def test_a_doi_is_read_and_kept_out_of_the_title():
    parsed = parse_reference("Smith, J. (2019). Things. Nature, 3, 4. https://doi.org/10.1038/s41586-019-1.")
    assert parsed.doi == "10.1038/s41586-019-1"
    assert parsed.title == "Things" and parsed.venue == "Nature"


# --------------------------------------------------------------------------- bad input


def _paper_pdf(tmp_path, body: list[str], references: list[str], drawing: bytes = b""):
    """A one-page PDF: a section, the body lines, "References", then the reference lines,
    and ``drawing`` (content-stream operators) painted after them."""
    lines = [(72, 740, 14, "A Study of Things"), (72, 700, 10, "1 Introduction")]
    y = 680
    for text in body:
        lines.append((72, y, 10, text))
        y -= 13
    y -= 10
    lines.append((72, y, 10, "References"))
    for text in references:
        y -= 13
        lines.append((72, y, 10, text))
    width, height, content = pdf_samples.text_page(612, 792, lines)
    path = tmp_path / "paper.pdf"
    path.write_bytes(pdf_samples.pdf_bytes([(width, height, content + drawing)]))
    return path


BODY = ["We build on earlier work [1] and on a second study [2], and compare with",
        "the results of a third one [3] that came out of the same laboratory. This",
        "paragraph is long enough to be body text of the paper that cites them."] * 3


@pytest.mark.parametrize(
    "references, drawing",
    [
        (["----", "~~~~ ~~~~", "....."], b""),  # nothing readable under the heading
        ([], b"\n0.5 g 72 100 460 300 re f"),  # a picture where the list would be (a scanned list)
    ],
    ids=["unreadable", "image"],
)
def test_a_reference_list_without_readable_entries_warns_and_leaves_markers_unlinked(tmp_path, references, drawing):
    path = _paper_pdf(tmp_path, BODY, references, drawing)
    with pytest.warns(UserWarning, match=r"paper\.pdf: its reference list has no entry"):
        paper = read_pdf(path)
    assert paper.bibliography == {}
    markers = [r for b in paper.blocks_of("paragraph") for r in b.refs if r.kind == "bibr"]
    assert all(r.target is None for r in markers)


def test_a_marker_no_entry_matches_stays_unlinked_and_a_repeated_number_links_the_first(tmp_path):
    references = ["[1] A. Author, B. Writer, A first study of things, J. Things 1 (2001) 1-2.",
                  "[2] C. Author, A second study of things, J. Things 2 (2002) 3-4.",
                  "[2] D. Author, A repeated number, J. Things 3 (2003) 5-6.",
                  "[4] E. Author, A fourth study of things, J. Things 4 (2004) 7-8."]
    with pytest.warns(UserWarning, match=r"paper\.pdf: .*reference number\(s\) 2 are printed twice"):
        paper = read_pdf(_paper_pdf(tmp_path, BODY, references))
    assert len(paper.bibliography) == 4
    targets = {paper.blocks_of("paragraph")[0].text[r.start:r.end]: r.target
               for b in paper.blocks_of("paragraph") for r in b.refs if r.kind == "bibr"}
    assert targets["[1]"] == "b0"
    assert targets["[2]"] == "b1", "a number printed twice links to its first entry"
    assert targets["[3]"] is None, "no entry is numbered 3: the marker is kept, unlinked"


def test_an_interval_after_a_relation_sign_is_no_citation(tmp_path):
    """"t ~ U[1, 3]" draws from an interval; "written in R [2]" cites. Nature's Methods had
    its priors read as bracket citations, which switched its superscripts off."""
    body = ["We model the start t ~ U[1, 3] and the end s ~U [2, 3] of the decline, which",
            "follows earlier work [1], and fit it with a package written in R [2]. This",
            "paragraph is long enough to be body text of the paper that cites them."] * 3
    references = ["[1] A. Author, B. Writer, A first study of things, J. Things 1 (2001) 1-2.",
                  "[2] C. Author, A second study of things, J. Things 2 (2002) 3-4.",
                  "[3] D. Author, A third study of things, J. Things 3 (2003) 5-6."]
    paper = read_pdf(_paper_pdf(tmp_path, body, references))
    cited = [(b.text[r.start:r.end], r.target) for b in paper.blocks_of("paragraph") for r in b.refs
             if r.kind == "bibr"]
    assert cited[:2] == [("[1]", "b0"), ("[2]", "b1")]
    assert not any("," in text for text, _ in cited)


def test_an_interval_is_no_cited_work_when_the_body_is_told_from_the_rest():
    """``cited_works`` (which tells body text from other text) counts a citation, not an
    interval after a relation sign."""
    from scholarly_nlp.readers.pdf.citations import cited_works

    assert cited_works("we draw t ~ U[1, 500] and x \u2208 [2, 5]") == 0
    assert cited_works("as in earlier work [1] and in R [2, 3]") == 2


@needs_data
@pytest.mark.parametrize("name", ["mauricio_AIPNAFLDF", "yimin_ai_pain_medicine"])
def test_superscript_citation_numbers_link_to_their_entries(name):
    """Wiley and Dove print citations as raised numbers glued to the word ("population.1"):
    read from the glyphs' raised, smaller boxes, they link like "[1]"."""
    need(PAIRS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        paper = read_pdf(PAIRS / f"{name}.pdf")
    markers = [(b.text[r.start:r.end], r.target) for b in paper.blocks_of("paragraph") for r in b.refs
               if r.kind == "bibr"]
    tree = etree.parse(str(PAIRS / f"{name}.tei.xml"))
    grobid_linked = sum(1 for m in tree.findall(".//t:text/t:body//t:ref[@type='bibr']", TEI_NS) if m.get("target"))
    linked = [(text, target) for text, target in markers if target]
    assert len(linked) >= 0.8 * grobid_linked
    # a single raised number links to the entry printed with that number (entries are
    # numbered in order, so the n-th entry while none before it was lost)
    singles = [(int(text), target) for text, target in linked if text.isdigit()]
    assert singles
    for number, target in singles:
        if number <= 4:
            assert target == f"b{number - 1}"


@needs_data
def test_a_superscript_run_before_the_sentences_punctuation_is_a_citation():
    """Nature prints "a vortex of extinction6,8-10." and "the coalescent15-17. A": the raised
    run is read up to the full stop, which is no part of it."""
    need(PAIRS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        paper = read_pdf(PAIRS / "ser763_demographic-histories-and.pdf")
    markers = {}
    for block in paper.blocks_of("paragraph"):
        for ref in block.refs:
            if ref.kind == "bibr":
                markers.setdefault(block.text[ref.start:ref.end], set()).add(ref.target)
    assert markers["8\u201310"] == {"b7", "b8", "b9"}
    assert markers["15\u201317"] == {"b14", "b15", "b16"}
    assert "." not in "".join(markers)
    linked = sum(len(targets) for targets in markers.values())
    assert linked >= 60, "most of GROBID's 123 linked markers (43 before this was read)"


@needs_data
def test_author_year_items_parted_by_commas_are_each_a_citation():
    """"(MILES & GRIGSON 1990, DREHMER & FERIGOLO 1996, DREHMER et al. 2004)": a comma after
    a year before a capitalised name parts the items as a semicolon does."""
    need(PAIRS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        paper = read_pdf(PAIRS / "ser763_numerical-anomalies-in.pdf")
    cited = [(b.text[r.start:r.end], r.target) for b in paper.blocks_of("paragraph") for r in b.refs
             if r.kind == "bibr"]
    entries = paper.bibliography
    texts = [text for text, _ in cited]
    # each is cited four times or more, mostly first or in the middle of such a list
    assert texts.count("MILES & GRIGSON 1990") >= 3 and texts.count("DREHMER & FERIGOLO 1996") >= 5
    for text, target in cited:
        if text in ("MILES & GRIGSON 1990", "DREHMER & FERIGOLO 1996", "BERTA & WYSS 1994"):
            assert target is not None and entries[target].year == text[-4:]
            assert text.split()[0].lower() in " ".join(entries[target].authors).lower()


@needs_data
def test_a_numbered_list_without_a_heading_is_read():
    """REVTeX prints the references with no "References" heading: "[1] ..." lines after the
    last paragraph start the list."""
    need(PAIRS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        paper = read_pdf(PAIRS / "grozescu_1906.06843v2.pdf")
    assert len(paper.bibliography) >= 45
    first = paper.bibliography["b0"]
    assert first.title.startswith("Advancing science") and first.year
    linked = [r for b in paper.blocks_of("paragraph") for r in b.refs if r.kind == "bibr" and r.target]
    assert len(linked) >= 30


@pytest.mark.needs_data("pdf-pairs")
def test_entries_set_apart_by_a_narrow_gap_after_a_full_last_row_are_cut():
    """Ecology & Society sets its entries a little further apart than its lines, and an entry whose
    DOI fills its last row gave no short row to cut at: "Chang, S., E. Pierson, ..." opens a
    block of its own and an entry of its own, not the end of Carter et al. 2012."""
    need(PAIRS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        paper = read_pdf(PAIRS / "tannonk_10.5751_es-14351-280319.pdf")
    by_title = {entry.title: entry for entry in paper.bibliography.values()}
    carter = by_title["Coexistence between wildlife and humans at fine spatial scales"]
    chang = by_title["Mobility network models of COVID-19 explain inequities and inform reopening"]
    assert (carter.year, chang.year) == ("2012", "2021")
    assert chang.authors[0] == "S. Chang"
