"""The paper's own authors (issue 14, item 3): names, affiliations and e-mail addresses from
GROBID's TEI header and from the built-in PDF reader, on real papers of ``../shared/data``."""

from __future__ import annotations

import re
import unicodedata
import warnings

import pytest

from conftest import data_path, need
from scholarly_nlp import Author
from scholarly_nlp.readers import read_pdf, read_tei

PAIRS = data_path("pdf-pairs")
WITH_PDF = data_path("tei", "with-pdf")
ACL_PDFS = data_path("pdfs", "acl")


def surname(name: str) -> str:
    text = unicodedata.normalize("NFKD", name.split()[-1])
    return re.sub(r"[^a-z]", "", "".join(c for c in text if not unicodedata.combining(c)).lower())


def pdf(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read_pdf(path)


@pytest.mark.needs_data("pdf-pairs")
def test_the_tei_header_gives_names_affiliations_and_emails():
    need(PAIRS)
    paper = read_tei(PAIRS / "grozescu_1906.06843v2.tei.xml")
    krenn = paper.authors[0]
    assert isinstance(krenn, Author) and krenn.name == "Mario Krenn"
    assert krenn.email == "mario.krenn@univie.ac.at"
    assert "Faculty of Physics, University of Vienna, Austria" in krenn.affiliations
    # GROBID 0.8's raw affiliation note is read without its printed label
    ieee = read_tei(PAIRS / "fran_Artificial_Intelligence_in_Education.tei.xml")
    assert ieee.authors[0].affiliations == ["School of Design, Yango University, Fuzhou 350015, China"]


@pytest.mark.needs_data("pdf-pairs")
@pytest.mark.parametrize(
    "name",
    [
        "grozescu_1906.06843v2",  # REVTeX: "Mario Krenn1, 2, 3, 4, ∗ and Anton Zeilinger1, 2, †"
        "fran_Artificial_Intelligence_in_Education",  # IEEE: "LIJIA CHEN1 , ... (Member, IEEE), AND ..."
        "juansta_paper4",  # SAGE: twelve names over three rows cut at their marks
        "upmchk_paper2",  # Elsevier: "Jesus M. Gonzalez-Barahona a,∗, Gregorio Robles a"
        "ser763_effects-of-disease",  # OUP: seven names with numbered affiliations
        "ser763_pinnipeds-in-new",  # a stray comma inside a name: "Meghan, E. Rickard3"
        "maxtwer_paper5",  # IEEE: "Jierui Zhang, Graduate Student Member, IEEE, Jianhao Huang, ..."
    ],
)
def test_the_pdf_reader_finds_the_authors_grobid_finds(name):
    need(PAIRS)
    ours = [surname(a.name) for a in pdf(PAIRS / f"{name}.pdf").authors]
    gold = [surname(a.name) for a in read_tei(PAIRS / f"{name}.tei.xml").authors]
    assert ours == gold


@pytest.mark.needs_data("pdf-pairs")
def test_numbered_affiliations_and_a_corresponding_address_go_to_their_authors():
    need(PAIRS)
    authors = {a.name: a for a in pdf(PAIRS / "fran_Artificial_Intelligence_in_Education.pdf").authors}
    assert list(authors) == ["Lijia Chen", "Pingping Chen", "Zhijian Lin"]
    assert authors["Lijia Chen"].affiliations == ["School of Design, Yango University, Fuzhou 350015, China"]
    # "Corresponding author: Pingping Chen (ppchen.xm@gmail.com)": the name beside it decides
    assert authors["Pingping Chen"].email == "ppchen.xm@gmail.com" and authors["Lijia Chen"].email is None


@pytest.mark.needs_data("pdfs/acl")
def test_marks_set_apart_and_grouped_addresses_are_read():
    """ACL 2013: "Haibo Li† Jing Zheng‡ ...", a "‡" set apart from "Speech Technology &
    Research Laboratory", and "{lihaibo.c, hengjicuny, liqiearth}@gmail.com"."""
    need(ACL_PDFS)
    authors = {a.name: a for a in pdf(ACL_PDFS / "P13-1059.pdf").authors}
    assert list(authors) == ["Haibo Li", "Jing Zheng", "Heng Ji", "Qi Li", "Wen Wang"]
    assert authors["Haibo Li"].email == "lihaibo.c@gmail.com"
    assert authors["Heng Ji"].email == "hengjicuny@gmail.com"
    assert authors["Jing Zheng"].affiliations == ["Speech Technology & Research Laboratory"]
    assert authors["Heng Ji"].affiliations[0].startswith("Computer Science Department")


@pytest.mark.needs_data("pdfs/acl")
def test_a_mark_hung_left_of_its_affiliation_keys_it():
    """pdfium gives a raised mark set just left of the line it opens as a line of its own
    (W13-2708's six authors of three institutes, PeerJ's first affiliation): it opens that
    line again, so each author has an affiliation; a note on equal contributions is none."""
    need(ACL_PDFS)
    authors = {a.name: a.affiliations for a in pdf(ACL_PDFS / "W13-2708.pdf").authors}
    assert authors["Andre Blessing"] == ["Institute for Natural Language Processing"]
    assert authors["Jonathan Sonntag"] == ["Institute for Applied Computational Linguistics"]
    assert authors["Ulrich Heid"] == ["Institute for Information Science and Natural Language Processing"]
    # the "\u00a7" after "\u00d6zlem" had been a fragment of its own, and "C\u00b8etinoglu\u02d8" cut at its accents
    names = [a.name for a in pdf(ACL_PDFS / "W13-4916.pdf").authors]
    assert names == ["Anders Bj\u00f6rkelund", "\u00d6zlem \u00c7etino\u011flu", "Rich\u00e1rd Farkas", "Thomas M\u00fcller",
                     "Wolfgang Seeker"]
    need(PAIRS)
    peerj = pdf(PAIRS / "tannonk_10.7717_peerj.5504.pdf").authors
    assert peerj[0].affiliations == [
        "Instituto de Silvicultura e Industria de la Madera, Universidad Juárez del Estado de Durango, Durango, Mexico"
    ]
    assert not any("contributed equally" in a for author in peerj for a in author.affiliations)


@pytest.mark.needs_data("tei/with-pdf")
def test_a_long_author_list_over_several_lines():
    """N18-3011 lists 23 authors over five centred lines, with unmapped marks after two."""
    need(WITH_PDF)
    ours = [surname(a.name) for a in pdf(WITH_PDF / "N18-3011.pdf").authors]
    gold = [surname(a.name) for a in read_tei(WITH_PDF / "N18-3011.tei.xml").authors]
    assert len(gold) == 23 and ours == gold


@pytest.mark.needs_data("pdf-pairs")
def test_names_joined_by_and_and_a_spacing_accent():
    """"Gerit Wagner, Roman Lukyanenko and Guy Pare´" (SAGE; the accent printed beside its
    letter) and MDPI's "Sergey Denisov *, Konstantin Volovich and Alexander Zatsarinny": the
    "a" of "and" after a name is no affiliation mark."""
    need(PAIRS)
    assert [a.name for a in pdf(PAIRS / "colrev_wagner2022.pdf").authors] == [
        "Gerit Wagner", "Roman Lukyanenko", "Guy Paré"]
    mdpi = pdf(PAIRS / "juansta_paper8.pdf").authors
    assert [a.name for a in mdpi] == ["Sergey Denisov", "Konstantin Volovich", "Alexander Zatsarinny"]
    assert [a.email for a in mdpi] == ["sdenisov@frccsc.ru", "kvolovich@frccsc.ru", "azatsarinny@ipiran.ru"]


@pytest.mark.needs_data("pdfs/acl")
def test_affiliations_stop_where_the_abstract_and_the_running_text_start():
    """COLING 2004: the right column's first line sits higher than the left column's
    "Abstract"; neither it nor the label is an affiliation."""
    need(ACL_PDFS)
    authors = pdf(ACL_PDFS / "C04-1089.pdf").authors
    assert [a.name for a in authors] == ["Li Shao", "Hwee Tou Ng"]
    assert authors[0].affiliations == [
        "Department of Computer Science", "National University of Singapore", "3 Science Drive 2, Singapore 117543"]
    assert [a.email for a in authors] == ["shaoli@comp.nus.edu.sg", "nght@comp.nus.edu.sg"]


@pytest.mark.needs_data("pdf-pairs")
def test_a_keyed_affiliation_at_the_floor_is_still_read():
    """RAA: where running text seems to start is the first numbered affiliation; its mark keys
    it to the names."""
    need(PAIRS)
    authors = {a.name: a for a in pdf(PAIRS / "grozescu_2010.02462v1.pdf").authors}
    assert list(authors) == ["Peng-Fei Chen", "Ao-Ao Xu", "Ming-De Ding"]
    assert authors["Peng-Fei Chen"].affiliations[0].startswith("School of Astronomy and Space Science, Nanjing")


@pytest.mark.needs_data("pdfs/acl")
@pytest.mark.parametrize("name, organisation", [
    ("W11-2135", "Univ. Paris-Sud"), ("P01-1027", "Dpto. de Informatica"), ("P01-1027", "Inst. Tecn. de Inf."),
    ("W13-2501", "Rue John Von Neumann")])
def test_an_abbreviated_organisation_is_no_author(name, organisation):
    need(ACL_PDFS)
    names = [a.name for a in pdf(ACL_PDFS / f"{name}.pdf").authors]
    assert organisation not in names
    expected = {"W11-2135": ["Alexandre Allauzen", "François Yvon"], "P01-1027": ["Franz J. Och", "Hermann Ney"],
                "W13-2501": ["Marianna Apidianaki"]}[name]
    assert set(expected) <= set(names)


@pytest.mark.needs_data("pdf-pairs")
def test_a_job_under_the_name_is_no_author():
    """A news feature prints "Mitch Leslie" over "Senior Technology Writer"."""
    need(PAIRS)
    authors = pdf(PAIRS / "srgarcia_1-s2.0-S2095809925001183-main.pdf").authors
    assert [a.name for a in authors] == ["Mitch Leslie"]


@pytest.mark.parametrize(
    "line, names",
    [
        ("Konstantin Volovich and Alexander Zatsarinny", [("Konstantin Volovich", []), ("Alexander Zatsarinny", [])]),
        ("M. Barahona a,b, J. Smith b and Ann Lee a,∗", [("M. Barahona", ["a", "b"]), ("J. Smith", ["b"]),
                                                       ("Ann Lee", ["a", "∗"])]),
        ("John Smith aMary Jones b", [("John Smith", ["a"]), ("Mary Jones", ["b"])]),
        ("Guy Pare´ and Franc¸ois Yvon", [("Guy Paré", []), ("François Yvon", [])]),
        ("Darja Fiˇser and Jan Hajiˇc", [("Darja Fišer", []), ("Jan Hajič", [])]),
        ("Jierui Zhang, Graduate Student Member, IEEE, and Kaibin Huang, Fellow, IEEE",
         [("Jierui Zhang", []), ("Kaibin Huang", [])]),
        ("Ana Rue, John Smith", [("Ana Rue", []), ("John Smith", [])]),
        # ApJ sets the footnote mark after the comma
        ("J. M. Jackson, R. Simon,1 T. M. Bania, and R. Lavoie", [("J. M. Jackson", []), ("R. Simon", ["1"]),
                                                                  ("T. M. Bania", []), ("R. Lavoie", [])]),
        ("Dr. Shehzad Ahmad and PROF. DR. Hans Muller", [("Shehzad Ahmad", []), ("Hans Muller", [])]),
        # the ORCID logo's text glued to a name (PLOS)
        ("Elizabeth Marina AllynID1*, Jonathan Joseph Scordino2",
         [("Elizabeth Marina Allyn", ["1", "*"]), ("Jonathan Joseph Scordino", ["2"])]),
        ("Petar Veli\u010dkovi\u0107ID1", [("Petar Veli\u010dkovi\u0107", ["1"])]),
        ("DAVID SMITH", [("David Smith", [])]),  # "ID" after a capital is the name's
        ("Ms. S. Divya, M.Com, M.Phil.,", [("S. Divya", [])]),  # degrees after the name
        ("Jane Doe, PhD, John Roe", [("Jane Doe", []), ("John Roe", [])]),
        ("J. Smith, M. S.", None),  # initials that read as a degree: the name goes on below
        ("Cambridge, Massachusetts \u2020", None),  # not where a name printed surname first may be
        ("Rue John Von Neumann", None),
        ("Univ. Paris-Sud", None),
    ],
)
def test_a_line_of_names(line, names):
    """Names, their marks and what is no name, on printed lines as the PDF reader gets them."""
    from scholarly_nlp.readers.pdf.front_matter import _names

    parsed = _names(line, None)
    assert (None if parsed is None else [(n.name, n.marks) for n in parsed]) == names


def test_a_marked_name_printed_surname_first():
    """Where no name, or only such names, came before, "Hurturk, Ege \u2217" is "Ege Hurturk";
    unmarked, it could be a place ("Dhaka, Bangladesh")."""
    from scholarly_nlp.readers.pdf.front_matter import _names

    assert [(n.name, n.marks) for n in _names("Hurturk, Ege \u2217", None, inverted=True)] == [
        ("Ege Hurturk", ["\u2217"])]
    assert _names("Dhaka, Bangladesh", None, inverted=True) is None


@pytest.mark.parametrize("text, author", [
    ("Gang Peng, Youngstown State University, gpeng@ysu.edu",
     ("Gang Peng", ["Youngstown State University"], "gpeng@ysu.edu")),
    ("JOHN SMITH1, Stanford University, jsmith@stanford.edu",
     ("John Smith", ["Stanford University"], "jsmith@stanford.edu")),
    # the address is no part of the name: an organisation's name first
    ("Georgia Tech, School of Interactive Computing, jdoe@gatech.edu", None),
    # two names: no organisation right after the first
    ("John Smith, Jane Doe, Google Research, js@google.com", None),
])
def test_a_line_of_name_affiliation_and_address(text, author):
    from scholarly_nlp.readers.pdf.front_matter import _signed_line

    signed = _signed_line(text, None)
    assert (None if signed is None else (signed.name, signed.affiliations, signed.email)) == author


def test_names_set_apart_by_wide_gaps_are_several():
    """ACL 2012's author row, as pdfium's word boxes give it: two names are two authors, not one
    four-word name."""
    from scholarly_nlp.readers.pdf.front_matter import _names_from
    from scholarly_nlp.readers.pdf.model import Line, Word

    boxes = [("Reut", 174.9, 199.2), ("Tsarfaty", 202.1, 245.5), ("Joakim", 259.8, 297.1), ("Nivre", 300.0, 328.0)]
    line = Line([Word(t, x0, 126.9, x1, 137.5, 12.0, 10.6) for t, x0, x1 in boxes], 0)
    line.size = 12.0
    names, used = _names_from([line], 0, first=True)
    assert [n.name for n in names] == ["Reut Tsarfaty", "Joakim Nivre"] and used == 1


def test_a_word_opening_with_a_to_h_keys_no_affiliation():
    """"based on ..." is no affiliation keyed "b"; "aDepartment ..." and "b Department" are."""
    from scholarly_nlp.readers.pdf.front_matter import _KEYED_RE

    assert _KEYED_RE.match("based on a large corpus") is None
    assert _KEYED_RE.match("aDepartment of Physics").group("mark") == "a"
    assert _KEYED_RE.match("b Department of Physics").group("mark") == "b"


@pytest.mark.needs_data("pdf-pairs")
def test_a_list_of_names_runs_on_past_a_row_that_ends_on_an_initial():
    """66 authors over 14 rows, one row ending "Kathryn B." (her surname opens the next) and the
    list running past where the page's text seems to start; "Savulescu+" marks a corresponding author."""
    need(PAIRS)
    names = [a.name for a in pdf(PAIRS / "grozescu_2502.12102v1.pdf").authors]
    assert names[:2] == ["Brian D. Earp", "Sebastian Porsdam Mann"]
    assert "Kathryn B. Francis" in names and "Kathryn B." not in names
    assert names[-3:] == ["Ilina Singh", "Julian Savulescu", "Margaret S. Clark"]
    assert len(names) == 62 and len(set(names)) == 62


def test_a_mark_before_the_first_name():
    """OJS: "1Taofik Mohammed IBRAHIM", the mark printed before the name; only the first line
    of names may open with one ("2Google Brain" there is an affiliation)."""
    from scholarly_nlp.readers.pdf.front_matter import _names

    assert [(n.name, n.marks) for n in _names("1Taofik Mohammed IBRAHIM", None, lead_mark=True)] == [
        ("Taofik Mohammed IBRAHIM", ["1"])]
    assert _names("1Taofik Mohammed IBRAHIM", None) is None
    assert [(n.name, n.marks) for n in _names("1,2John Smith and Ann Lee3", None, lead_mark=True)] == [
        ("John Smith", ["1", "2"]), ("Ann Lee", ["3"])]


@pytest.mark.needs_data("pdf-pairs")
def test_the_pdf_reader_reads_a_name_with_its_mark_before_it():
    need(PAIRS)
    assert [a.name for a in pdf(PAIRS / "miku_ojs62.pdf").authors] == ["Taofik Mohammed IBRAHIM"]


@pytest.mark.needs_data("pdf-pairs")
def test_a_name_cut_after_its_particle_goes_on_past_a_margin_column():
    """Royal Society Open Science: "Veerle Van den" / "Eynden5" over two rows, with the margin's
    "Cite this article" lines (in another size) between them in reading order."""
    need(PAIRS)
    names = [a.name for a in pdf(PAIRS / "upmchk_paper8.pdf").authors]
    assert names[5:] == ["Ayu P. M. Dewi", "René Spijker", "Inge Stegeman", "Veerle Van den Eynden",
                         "Tony Ross-Hellauer", "Mariska M. G. Leeflang"]


@pytest.mark.needs_data("pdf-pairs")
def test_stacked_authors_each_keep_their_own_affiliation_and_no_title():
    """JIMP stacks each author over an affiliation and an address: each affiliation is the
    name's right above it, not every earlier name's; "Dr." is no part of a name."""
    need(PAIRS)
    authors = pdf(PAIRS / "srgarcia_JIMP-4.1.4.pdf").authors
    assert [(a.name, a.affiliations) for a in authors] == [
        ("Shehzad Ahmad", ["Edwardes College Peshawar"]),
        ("Muhammad Ibrahim", ["Peshawar Medical College, Riphah International University, Islamabad"]),
        ("Sajjad Ahmad", ["Department of Library and Information Science, University of Peshawar"]),
        ("Abid Hussain", ["Allama Iqbal Open University, Islamabad, Pakistan"]),
    ]


@pytest.mark.needs_data("pdfs/acl")
def test_authors_side_by_side_keep_the_affiliation_under_each():
    """ACL's two authors side by side, each over a three-line address."""
    need(ACL_PDFS)
    authors = {a.name: a.affiliations for a in pdf(ACL_PDFS / "P10-2066.pdf").authors}
    assert authors["Xiao-Li Li"][0].startswith("Institute for Infocomm Research")
    assert not any("Illinois" in a for a in authors["Xiao-Li Li"])
    assert authors["Lei Zhang"][0].startswith("University of Illinois at Chicago")
    assert not any("Infocomm" in a for a in authors["Lei Zhang"])


def test_a_name_goes_on_in_the_next_row_only_after_an_initial_or_a_lower_case_particle():
    """"Veerle Van den" / "Eynden" is one name; "Duc Le" and "Chen Di" end theirs."""
    from scholarly_nlp.readers.pdf.front_matter import _goes_on

    assert _goes_on("Veerle Van den") and _goes_on("Kathryn B.")
    assert not _goes_on("Duc Le") and not _goes_on("Chen Di") and not _goes_on("John Smith")


@pytest.mark.needs_data("pdfs/acl")
def test_accents_printed_as_glyphs_of_their_own_go_on_their_letter():
    """Old TeX fonts print an accent as its own glyph over the letter, and pdfium gives it
    after the word ("Thomas Muller \u00a8 \u2020\u2021"): placed by its box, the names read
    (EMNLP 2013, WMT 2010 and 2013, where none did before)."""
    need(ACL_PDFS)
    assert [a.name for a in pdf(ACL_PDFS / "D13-1032.pdf").authors] == [
        "Thomas M\u00fcller", "Helmut Schmid", "Hinrich Sch\u00fctze"]
    assert [a.name for a in pdf(ACL_PDFS / "W13-2211.pdf").authors] == [
        "\u0130lknur Durgar El-Kahlout", "Co\u015fkun Mermer"]
    assert "Fran\u00e7ois Yvon" in [a.name for a in pdf(ACL_PDFS / "W10-1704.pdf").authors]
    paper = pdf(ACL_PDFS / "D13-1032.pdf")
    body = " ".join(b.text for b in paper.blocks)
    # 25 accents stood apart in its text, names and references before; one is left, over no word
    assert len(re.findall(r"(?:^|\s)[\u00b4`\u02c6\u00a8\u02dc\u00b8\u02c7\u02d9](?=\s|$)", body)) <= 1
    assert "(Gim\u00e9nez and M\u00e0rquez, 2004)" in body
    # pdfium cut "Gim" / "\u00b4" / "enez": one word again, so the entry's authors and title are right
    svmtool = next(e for e in paper.bibliography.values() if e.title.startswith("Svmtool"))
    assert svmtool.authors == ["Jes\u00fas Gim\u00e9nez", "Lluis M\u00e0rquez"]


@pytest.mark.needs_data("pdf-pairs")
def test_a_word_cut_at_its_accents_is_one_word_again():
    """"Petar Veli\u010dkovi\u0107\u2217": pdfium cuts the surname at the caron's glyph; it
    used to read "Petar Velickovi" after another author."""
    need(PAIRS)
    assert pdf(PAIRS / "osai_paper04.pdf").authors[0].name == "Petar Veli\u010dkovi\u0107"


@pytest.mark.needs_data("pdfs/acl")
def test_names_set_apart_by_space_alone():
    """ACL 2012: "Reut Tsarfaty   Joakim Nivre   Evelina Andersson", no comma between them."""
    need(ACL_PDFS)
    authors = pdf(ACL_PDFS / "P12-2002.pdf").authors
    assert [a.name for a in authors] == ["Reut Tsarfaty", "Joakim Nivre", "Evelina Andersson"]
    assert [a.email for a in authors] == [
        "tsarfaty@stp.lingfil.uu.se", "joakim.nivre@lingfil.uu.se", "evelina.andersson@lingfil.uu.se"]


@pytest.mark.needs_data("pdf-pairs")
def test_name_affiliation_and_address_on_one_line():
    """Issues in Information Systems: "Gang Peng, Youngstown State University, gpeng@ysu.edu"."""
    need(PAIRS)
    (author,) = pdf(PAIRS / "srgarcia_P2009_1194.pdf").authors
    assert (author.name, author.affiliations, author.email) == (
        "Gang Peng", ["Youngstown State University"], "gpeng@ysu.edu")


@pytest.mark.needs_data("pdf-pairs")
def test_marked_names_printed_surname_first():
    """"Hurturk, Ege \u2217" over "ege.hurturk@gmail.com", then "Eroltu, Kaan \u2020"."""
    need(PAIRS)
    authors = pdf(PAIRS / "yimin_ai_healthcare3.pdf").authors
    assert [(a.name, a.email) for a in authors] == [
        ("Ege Hurturk", "ege.hurturk@gmail.com"), ("Kaan Eroltu", "kaaneroltu73@gmail.com")]
    plos = pdf(PAIRS / "ser763_entanglement-rates-and.pdf").authors
    assert [a.name for a in plos] == ["Elizabeth Marina Allyn", "Jonathan Joseph Scordino"]
