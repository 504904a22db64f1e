"""The TEI reader keeps every marker exactly and drops nothing silently (issue 12, items 2-4).

Checked on every real GROBID TEI file in ../shared/data/tei (0.5.1, 0.5.6 re-serialised with
<s>, 0.6-0.8) and on the pdf-pairs TEI (0.6-0.8, many publishers).
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from lxml import etree

from scholarly_nlp.doc.builder import paper_to_doc
from scholarly_nlp.readers.cuts import cut_text
from scholarly_nlp.readers.tei import parse_tei, read_tei
from scholarly_nlp.readers.tei_parts import back_matter_kind, bib_year, is_supplementary_mention, table_caption_from_cells
from scholarly_nlp.text.normalize import _LINE_BREAK_HYPHEN, TextAccumulator
from scholarly_nlp.text.running_heads import only_furniture_left, prints_doi, running_head_spans, running_title

from conftest import shared

TEI = "{http://www.tei-c.org/ns/1.0}"
MARKER_GROUPS = ("citations", "figure_refs", "formula_refs", "footnote_refs")
_BACK_READ = ("annex", "acknowledgement", "funding", "availability")


def _collapse(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _expected_markers(root: etree._Element) -> Counter:
    """(kind, text) of every citation and figure/table ref in the text the reader reads."""
    expected: Counter = Counter()
    for ref in root.iter(f"{TEI}ref"):
        kind = ref.get("type")
        if kind not in ("bibr", "figure", "table"):
            continue
        ancestors = list(ref.iterancestors())
        names = {etree.QName(a).localname for a in ancestors}
        if names & {"figure", "formula", "head", "listBibl", "table"}:
            continue
        if any(etree.QName(a).localname == "note" and a.get("place") != "foot" for a in ancestors):
            continue
        if "back" in names:
            top = [a for a in ancestors if a.getparent() is not None and a.getparent().tag == f"{TEI}back"]
            if not top or top[0].get("type") not in _BACK_READ:
                continue
        if not names & {"abstract", "body", "back"}:
            continue
        text = _collapse("".join(ref.itertext()))
        if text:
            expected["bibr" if kind == "bibr" else "figure", text] += 1
    return expected


def _read_words(root: etree._Element) -> Counter:
    """Words of the abstract, body and the back matter the reader keeps (floats and bibliography aside)."""
    parts = []
    containers = [root.find(f"{TEI}teiHeader/{TEI}profileDesc/{TEI}abstract"), root.find(f"{TEI}text/{TEI}body")]
    containers += [d for d in root.iterfind(f"{TEI}text/{TEI}back/{TEI}div") if d.get("type") in _BACK_READ]
    for container in containers:
        if container is None:
            continue
        for el in container.iter():
            if not isinstance(el.tag, str):
                continue
            chain = [el, *el.iterancestors()]
            if any(etree.QName(a).localname in ("figure", "table", "listBibl") for a in chain):
                continue
            # GROBID's unclassified notes (note type="other") are table debris, not prose.
            if any(etree.QName(a).localname == "note" and a.get("place") != "foot" for a in chain):
                continue
            parts.append(el.text or "")
            if el is not container:
                parts.append(el.tail or "")
    return Counter(re.findall(r"\w+", _LINE_BREAK_HYPHEN.sub("", _collapse(" ".join(parts)))))


def _running_heads(root: etree._Element) -> list[str]:
    """The running heads the reader cuts on purpose: head spans (running title included) of
    each paragraph, formula and caption, and whole footnotes that are nothing else or that print
    the paper's DOI outside a running foot."""
    doi_el = root.find(f"{TEI}teiHeader/{TEI}fileDesc/{TEI}sourceDesc/{TEI}biblStruct//{TEI}idno[@type='DOI']")
    doi = _collapse(doi_el.text or "") if doi_el is not None else None
    tags = {f"{TEI}p", f"{TEI}note", f"{TEI}formula", f"{TEI}figDesc"}
    units = [u for u in root.iter(*tags) if not any(a.tag in tags for a in u.iterancestors())]
    title = running_title(_collapse("".join(unit.itertext())) for unit in units)
    heads = []
    for unit in root.iter(*tags):
        text = _collapse(_spaced_text(unit))
        spans = running_head_spans(text, doi, title)
        footnote = unit.tag == f"{TEI}note" and unit.get("place") == "foot"
        notice = prints_doi(cut_text(text, running_head_spans(text, None, title)), doi)
        if footnote and (spans and only_furniture_left(cut_text(text, spans)) or notice):
            heads.append(text)
        else:
            heads.extend(text[start:end] for start, end in spans)
    return heads


def _spaced_text(el: etree._Element) -> str:
    """An element's text with refs set apart by spaces, as the reader sets its markers apart."""
    parts = [el.text or ""]
    for child in el:
        if isinstance(child.tag, str):
            inner = _spaced_text(child)
            parts.append(f" {inner} " if child.tag == f"{TEI}ref" else inner)
        parts.append(child.tail or "")
    return "".join(parts)


def _only_in_running_heads(missing: Counter, heads: list[str]) -> bool:
    """Whether each marker the reader left out is a word of a running head it cut (as often as
    it is missing), or a ref GROBID ran into one ("(Rollins, Barton, doi:10.2218/...")."""
    def times_in_heads(text: str) -> int:
        return sum(len(re.findall(rf"(?<!\w){re.escape(text)}(?!\w)", head)) for head in heads)

    return all(times_in_heads(text) >= n or any(head in text for head in heads) for (_, text), n in missing.items())


@pytest.mark.slow
def test_every_marker_is_exact_and_no_text_is_dropped_on_every_real_tei(nlp):
    files = sorted(shared("tei").glob("*/*.tei.xml")) + sorted(shared("pdf-pairs").glob("*.tei.xml"))
    assert len(files) > 600
    markers = exact = overlaps = glued = words = lost = cut_markers = cut_words = 0
    kept = Counter()
    problems = []
    for path in files:
        root = etree.parse(str(path))
        doc = paper_to_doc(read_tei(path), nlp)
        text = doc.text
        spans = [("bibr", s) for s in doc.spans["citations"]] + [("figure", s) for s in doc.spans["figure_refs"]]
        expected = _expected_markers(root)
        got = Counter((kind, span.text) for kind, span in spans)
        heads = _running_heads(root)
        cut = expected - got if _only_in_running_heads(expected - got, heads) else Counter()
        expected -= cut
        cut_markers += sum(cut.values())
        markers += sum(expected.values())
        exact += sum((expected & got).values())
        if expected != got:
            problems.append((path.name, "markers", list((expected - got).items())[:3], list((got - expected).items())[:3]))
        every = sorted((s for g in MARKER_GROUPS for s in doc.spans[g]), key=lambda s: (s.start_char, s.end_char))
        overlaps += sum(1 for a, b in zip(every, every[1:]) if b.start_char < a.end_char)
        for _, span in spans:
            assert span.text == text[span.start_char : span.end_char] and span.text == span.text.strip()
            if span.start_char and text[span.start_char - 1].isalnum() and span.text[0].isalnum():
                glued += 1
            if span.end_char < len(text) and text[span.end_char].isalnum() and span.text[-1].isalnum():
                glued += 1
        head_words = Counter(re.findall(r"\w+", " ".join(heads)))
        need = _read_words(root)
        # Cuts are page furniture: a small share of any paper's words (at most 6% here, a PLOS
        # paper whose 14-word running title interrupts nine sentences).
        assert sum(head_words.values()) <= 0.08 * max(1, sum(need.values())), path.name
        need -= head_words
        cut_words += sum(head_words.values())
        words += sum(need.values())
        lost += sum((need - Counter(re.findall(r"\w+", text))).values())
        for group in ("footnotes", "formulas", "back_matter"):
            kept[group] += sum(len(s.text) for s in doc.spans[group])
    assert problems == [] and exact == markers > 40_000
    # Only GROBID's refs made of running heads' digits and DOIs ("(2019) <ref>9</ref>:585").
    assert cut_markers < 100, cut_markers
    assert cut_words < 0.004 * words, (cut_words, words)  # 0.29% of the corpus's words
    assert overlaps == 0 and glued == 0
    # What is left is GROBID's own debris: words broken inside formulas, ids printed as anchors.
    assert lost / words < 0.0002, (lost, words)
    assert kept["footnotes"] > 150_000 and kept["formulas"] > 100_000 and kept["back_matter"] > 200_000


def test_glued_markers_become_separate_tokens_and_spans(nlp):
    tei = _tei(
        '<p>Models (<ref type="bibr" target="#b0">Dempster et al., 1977;</ref><ref type="bibr" target="#b1">Jelinek'
        ', 1970</ref>) and results [<ref type="bibr" target="#b0">15</ref>][<ref type="bibr" target="#b1">16</ref>] '
        'in Tables <ref type="table" target="#tab_0">3</ref><ref type="table">4</ref>, with '
        '<ref type="bibr">HOO2011</ref><ref type="bibr">(Dale and</ref><ref type="bibr">Kilgarriff</ref>.</p>',
        figures='<figure type="table" xml:id="tab_0"><head>Table 3:</head><label>3</label><figDesc>A.</figDesc></figure>',
        bib='<biblStruct xml:id="b0"/><biblStruct xml:id="b1"/>',
    )
    doc = paper_to_doc(parse_tei(tei, source="glued.tei.xml"), nlp)
    paragraph = doc.spans["paragraphs"][0].text
    assert "1977; Jelinek, 1970" in paragraph and "[15][16]" in paragraph and "Tables 3 4," in paragraph
    assert "HOO2011 (Dale and Kilgarriff." in paragraph
    cites = [(s.text, s.kb_id_) for s in doc.spans["citations"]]
    assert cites[:4] == [("Dempster et al., 1977;", "b0"), ("Jelinek, 1970", "b1"), ("15", "b0"), ("16", "b1")]
    assert [s.text for s in doc.spans["figure_refs"]] == ["3", "4"]
    assert [s.kb_id_ for s in doc.spans["figure_refs"]] == ["tab_0", ""]
    tokens = [t.text for t in doc]
    assert "15" in tokens and "16" in tokens  # "[15][16]" is split at the markers' edges


def test_accumulator_separates_markers_only_where_words_would_glue():
    acc = TextAccumulator()
    acc.add("see ")
    first = acc.add_marker("[3]")
    second = acc.add_marker("[4]")
    acc.add(" and")
    third = acc.add_marker("Smith, 2000;")
    fourth = acc.add_marker("Lee 2001")
    acc.add(").")
    text = acc.text()
    assert text == "see [3][4] and Smith, 2000; Lee 2001)."
    assert [text[a:b] for a, b in (first, second, third, fourth)] == ["[3]", "[4]", "Smith, 2000;", "Lee 2001"]


def test_broken_words_of_grobid_05_are_joined_but_suspended_hyphens_kept():
    acc = TextAccumulator(join_broken_words=True)
    acc.add("the struc- ture of pre- and post-training and a BERT- based model")
    assert acc.text() == "the structure of pre- and post-training and a BERT- based model"
    acc = TextAccumulator(join_broken_words=True)
    acc.add("a struc-")
    acc.add(" ture")
    assert acc.text() == "a structure"


def test_grobid_05_text_is_dehyphenated(acl_tei_dir):
    paper = read_tei(acl_tei_dir / "D14-1036.tei.xml")
    body = " ".join(b.text for b in paper.blocks)
    assert "struc- ture" not in body and "structure" in body


def test_footnotes_are_kept_after_the_body_and_linked_from_their_anchors(nlp):
    doc = paper_to_doc(read_tei(shared("pdf-pairs", "grozescu_1906.06843v2.tei.xml")), nlp)
    footnotes = doc._.footnotes
    assert footnotes and all(f.span.text for f in footnotes)
    last_body = max(s.end_char for s in doc.spans["paragraphs"])
    assert all(f.span.start_char > last_body for f in footnotes)
    anchored = [f for f in footnotes if f.anchors]
    assert anchored, "footnote anchors (<ref type='foot'>) link to their footnote"
    for footnote in anchored:
        assert all(a.text == footnote.number for a in footnote.anchors)
    d14 = paper_to_doc(read_tei(shared("tei", "acl", "D14-1003.tei.xml")), nlp)
    assert d14._.footnotes[0].number == "1"
    assert "http://www.iwslt2013.org" in d14._.footnotes[0].span.text


def test_formulas_are_in_the_text_with_labels_and_refs_resolve(nlp):
    doc = paper_to_doc(read_tei(shared("tei", "acl", "D14-1003.tei.xml")), nlp)
    formulas = {f.id: f for f in doc._.formulas}
    assert formulas["formula_1"].label == "4" and formulas["formula_1"].span.text.endswith("(4)")
    # "(1)" is printed inside formula_0, which GROBID 0.5 merged with equations (2) and (3).
    refs = [(s.text, s.kb_id_) for s in doc.spans["formula_refs"]]
    assert ("(1)", "formula_0") in refs
    section = next(s for s in doc._.sections if s.span.start_char <= formulas["formula_1"].span.start_char < s.span.end_char)
    assert section.title


def test_back_matter_is_kept_marked_and_out_of_the_body(nlp):
    doc = paper_to_doc(read_tei(shared("tei", "acl", "D14-1003.tei.xml")), nlp)
    (ack,) = doc._.back_matter
    assert ack.type == "acknowledgement" and ack.title == "Acknowledgments"
    assert "DARPA BOLT" in ack.paragraphs[0].text
    assert all("Jan-Thorsten Peter" not in p.text for p in doc.spans["paragraphs"])
    assert "Acknowledgments" not in [s.title for s in doc._.sections]
    biomed = paper_to_doc(read_tei(shared("tei", "biomed", "10.1186%2Fs13033-019-0261-3.tei.xml")), nlp)
    kinds = {b.type for b in biomed._.back_matter}
    assert "publisher_note" in kinds and kinds <= {
        "acknowledgement", "funding", "availability", "contributions", "competing_interests", "ethics",
        "abbreviations", "publisher_note", "supplementary"}


def test_back_matter_heads():
    assert back_matter_kind("Acknowledgments") == "acknowledgement"
    assert back_matter_kind("Availability of data and materials") == "availability"
    assert back_matter_kind("Competing Interests:") == "competing_interests"
    assert back_matter_kind("Authors' contributions") == "contributions"
    assert back_matter_kind("Competing methods") is None
    assert back_matter_kind("Ethics of AI in Healthcare and Medicine") is None


def test_bibliography_year_is_the_printed_one_when_grobid_took_a_page_number():
    assert bib_year("1383", "2017. 1383") == "2017"
    assert bib_year("1125", "1998. 1125") == "1998"
    assert bib_year("2015-09", "September 2015. 2015") == "2015"
    assert bib_year("1859", "1859") == "1859"  # Darwin stays
    assert bib_year("1001", "1001") is None
    assert bib_year(None, "") is None


def test_bibliography_years_and_titles_on_real_files(acl_tei_dir):
    paper = read_tei(acl_tei_dir / "D14-1054.tei.xml")
    entry = paper.bibliography["b1"]  # GROBID lost the article title; the journal is not one
    assert entry.title == "" and "Journal of machine Learning research" in entry.venue
    for path in sorted(shared("tei").glob("*/*.tei.xml"))[:200]:
        for entry in read_tei(path).bibliography.values():
            assert entry.year is None or 1500 <= int(entry.year) <= 2027, (path.name, entry)


def test_supplementary_mentions_are_never_linked_to_main_figures(biomed_tei_dir):
    assert is_supplementary_mention("see Supplementary ", "Table 3")
    assert is_supplementary_mention("in ", "Supplementary Fig. 8")
    assert not is_supplementary_mention("as shown in ", "Fig. 8")
    paper = read_tei(biomed_tei_dir / "10.1038%2Fs41398-019-0373-1.tei.xml")
    found = 0
    for block in paper.blocks:
        for ref in block.refs:
            if ref.kind in ("figure", "table"):
                before = block.text[max(0, ref.start - 20) : ref.start]
                if is_supplementary_mention(before, block.text[ref.start : ref.end]):
                    found += 1
                    assert ref.target is None
    assert found


def test_grobid_051_table_captions_inside_table_are_recovered(acl_tei_dir):
    paper = read_tei(acl_tei_dir / "D14-1003.tei.xml")
    captions = {b.figure_id: b.text for b in paper.blocks_of("caption")}
    assert captions["tab_2"].startswith("Table 2: Results for the IWSLT 2013 German→English task")
    assert table_caption_from_cells("Table 4 :", "Model\n\nBLEU 31.2 28.1") == ""
    assert table_caption_from_cells("Table 4 summarizes", "Results of the system on dev.") == ""


def test_drop_cap_heads_are_mended(nlp):
    paper = read_tei(shared("pdf-pairs", "ser763_demographic-histories-and.tei.xml"))
    assert "U" not in [s.title for s in paper.sections]
    assert any(b.text.startswith("Unravelling the demographic histories") for b in paper.blocks_of("paragraph"))


def test_structured_abstract_heads_are_kept(biomed_tei_dir):
    paper = read_tei(biomed_tei_dir / "10.1038%2Fs41598-018-36432-x.tei.xml")
    abstract = " ".join(b.text for b in paper.blocks_of("abstract"))
    assert abstract.startswith("Bacteriophages (phages) or viruses") and "Paenibacillus larvae." in abstract


def test_an_abstract_head_that_only_names_it_is_no_sentence(biomed_tei_dir):
    """GROBID heads most PLOS abstracts "Abstract": it is a label, not the abstract's first
    sentence (the role tagger had tagged it "other" in 158 of the 243 biomedical papers)."""
    paper = read_tei(biomed_tei_dir / "10.1371%2Fjournal.pone.0209966.tei.xml")
    abstract = [b.text for b in paper.blocks_of("abstract")]
    assert abstract[0].startswith("African populations are characterized by high degree of genetic diversity.")
    assert not any(re.match(r"(?i)abstract\b", text) for text in abstract)


@pytest.mark.parametrize("label", ["Abstract", "ABSTRACT:", "Abstract\u2014", "Abstract."])
def test_an_abstract_label_in_any_punctuation_is_no_sentence_but_a_structured_head_is(label):
    tei = ("<TEI xmlns='http://www.tei-c.org/ns/1.0'><teiHeader><fileDesc><titleStmt><title>T</title></titleStmt>"
           "</fileDesc><profileDesc><abstract><div><head>" + label + "</head><p>We study parsing.</p></div>"
           "<div><head>Results</head><p>It works.</p></div></abstract></profileDesc></teiHeader>"
           "<text><body><div><head n='1'>Intro</head><p>Text.</p></div></body></text></TEI>")
    paper = parse_tei(tei.encode(), source="label.tei.xml")
    assert [b.text for b in paper.blocks_of("abstract")] == ["We study parsing.", "Results It works."]


def _tei(body: str, figures: str = "", bib: str = "") -> bytes:
    return (
        "<TEI xmlns='http://www.tei-c.org/ns/1.0'><teiHeader><fileDesc><titleStmt><title>T</title></titleStmt>"
        "</fileDesc></teiHeader><text><body><div><head n='1'>Intro</head>" + body + "</div>" + figures
        + "</body><back><div type='references'><listBibl>" + bib + "</listBibl></div></back></text></TEI>"
    ).encode()
