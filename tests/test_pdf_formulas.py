"""Display formulas of the built-in PDF reader: math blocks become formula blocks with their
printed number, the prose around them stays paragraphs, and "Eq. (3)", "Equations (2) and
(5)" or "substituting (5) into (8)" link to them, on real papers of ``../shared/data``."""

from __future__ import annotations

import warnings

import pytest
import spacy

from conftest import data_path, need
from synthetic_lines import line
import scholarly_nlp
from scholarly_nlp.readers import read_pdf
from scholarly_nlp.readers.pdf.figure_mentions import bare_formula_refs, formula_refs
from scholarly_nlp.readers.pdf.formulas import DisplayFormulas, _prose_free, printed_number
from scholarly_nlp.readers.pdf.model import Page, VBlock
from scholarly_nlp.readers.pdf.tex_fonts import math_font_character

PAIRS = data_path("pdf-pairs")
ACL_PDFS = data_path("pdfs", "acl")


def read(path):
    """The reader's Paper of one PDF (skipped where the file is missing), warnings silenced."""
    need(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read_pdf(path)


def formulas(paper) -> dict[str, str]:
    """Printed number -> text of the paper's numbered formulas."""
    return {b.label: b.text for b in paper.blocks_of("formula") if b.label}


@pytest.mark.needs_data("pdfs/acl")
def test_numbered_formulas_are_blocks_of_their_own_and_the_text_under_them_a_paragraph():
    """P05-1045 numbers its seven formulas at the column's right edge; each is a formula
    block in its section (with its scripts in its row), and the "where ..." under it opens
    a paragraph, as in GROBID's TEI. "Equation 1" and "the distribution in (1)" link to (1)."""
    paper = read(ACL_PDFS / "P05-1045.pdf")
    numbered = formulas(paper)
    assert sorted(numbered, key=int) == [str(n) for n in range(1, 8)]
    assert numbered["1"].startswith("PG(s (t) |s (t−1)) = PM(s (t) i |s (t−1) −i , o).")
    assert numbered["7"].startswith("PF (si |s−i , o) ∝ PM(si |s−i , o)PL(si |s−i , o).")
    blocks = [b for b in paper.blocks if b.kind != "caption"]
    first = next(i for i, b in enumerate(blocks) if b.kind == "formula")
    assert blocks[first - 1].text.endswith("the distribution over these possible transitions is just")
    assert blocks[first + 1].kind == "paragraph" and blocks[first + 1].text.startswith("where s−i is all states")
    assert blocks[first].section == blocks[first - 1].section is not None
    refs = [(b.text[r.start:r.end], r.target) for b in paper.blocks_of("paragraph") for r in b.refs
            if r.kind == "formula"]
    assert refs and all(target == blocks[first].id == "formula_0" for _, target in refs)
    assert ("(1)", "formula_0") in refs and ("Equation 1", "formula_0") in refs


@pytest.mark.needs_data("pdf-pairs")
def test_a_formula_set_inside_a_block_of_prose_is_cut_out_of_it():
    """PeerJ sets "D = m/v (1)" between two lines of prose with no space around it: the
    formula is cut out, the sentences before it and its "where, D = Particle density ..."
    stay paragraphs, and every "Eq. (n)" finds its formula."""
    paper = read(PAIRS / "tannonk_10.7717_peerj.5504.pdf")
    assert formulas(paper) == {"1": "D = m/v (1)", "2": "IRI = 100×N/n (2)", "3": "RW = Wnp/WN (3)",
                               "4": "GCV = 0.3536FC +0.1559VM −0.0078A (4)"}
    paragraphs = [b.text for b in paper.blocks_of("paragraph")]
    assert any(t.endswith("All values were the average of 50 samples of each species.") for t in paragraphs)
    assert any(t.startswith("where, D = Particle density (g/cm3") for t in paragraphs)
    assert any(t.startswith("Where, GCV = Gross calorific value (KJ/kg)") for t in paragraphs)
    ids = {b.label: b.id for b in paper.blocks_of("formula")}
    mentions = {b.text[r.start:r.end]: r.target for b in paper.blocks_of("paragraph") for r in b.refs
                if r.kind == "formula"}
    assert mentions == {f"Eq. ({n})": ids[str(n)] for n in range(1, 5)}


@pytest.mark.needs_data("pdf-pairs")
def test_formulas_numbered_one_under_the_other_are_two_and_a_number_set_apart_counts():
    """mauricio_NIBM's formulas are images beside their text: "ECs =" and "Is =" with their
    numbers set apart ("(3)" a block of its own) are formulas 2 and 3; "PSL =" gets the "(1)"
    printed above it."""
    paper = read(PAIRS / "mauricio_NIBM.pdf")
    numbered = formulas(paper)
    assert numbered["1"] == "(1) PSL ="
    assert numbered["2"] == "ECs = (2)" and numbered["3"] == "Is = (3)"


@pytest.mark.needs_data("pdfs/acl", "pdf-pairs")
@pytest.mark.parametrize("path, words", [
    # prose that numbers its items at a line's end: "(1) EDR bilingual dictionary (EDR, 1990), (2)"
    (ACL_PDFS / "D12-1003.pdf", "EDR bilingual dictionary (EDR, 1990), (2)"),
    (ACL_PDFS / "C10-2164.pdf", "of candidates cannot be considered. (3)"),
    # a mention at a line's end: "... in Equation (8)"
    (ACL_PDFS / "P06-1089.pdf", "in Equation (8)"),
])
def test_prose_ending_in_a_bracketed_number_stays_prose(path, words):
    paper = read(path)
    assert any(words in b.text for b in paper.blocks_of("paragraph"))
    assert not any(words in b.text for b in paper.blocks_of("formula"))


@pytest.mark.needs_data("pdf-pairs")
def test_a_regression_tables_standard_errors_number_no_formula():
    """srgarcia_P2009_1194's regression table, not found as a float, prints "(0.762)" at the
    column's edge: no formula is numbered so."""
    paper = read(PAIRS / "srgarcia_P2009_1194.pdf")
    assert not [b.label for b in paper.blocks_of("formula") if b.label]


@pytest.mark.needs_data("pdfs/acl")
def test_pdf_formulas_reach_the_doc_with_their_mentions():
    """The document model's formulas of a PDF paper: P06-1089's 22 numbered formulas, each a
    span of doc.text, and "in (2)" a mention of formula (2). Its display math is set smaller
    than its text, each formula in several blocks: formula (3)'s left-hand side and the
    fraction under it, held one after the other, open it (it read "2 (3)" while only the
    last such block was held)."""
    paper = read(ACL_PDFS / "P06-1089.pdf")
    doc = scholarly_nlp.paper_to_doc(paper, spacy.blank("en"))
    by_label = {f.label: f for f in doc._.formulas}
    assert sorted(by_label, key=int) == [str(n) for n in range(1, 23)]
    assert by_label["1"].span.text.startswith("1 P(s)= exp{−βE(s)}")
    assert by_label["3"].span.text.startswith("E(t|w)=− 1 2 ∑K ∑K λtk,tk0 + ∑K log p0(tk|wk)")
    assert any(m.text == "(2)" for m in by_label["2"].mentions)


def test_a_number_counts_at_the_columns_right_edge_or_set_apart_right_of_its_formula():
    """Synthetic rows against a column whose right edge is at 300 pt."""
    formula, number = line("y = f (L, K)", 100.0, 100.0), line("(3)", 285.0, 100.0)
    assert printed_number([formula, number], 300.0) == (number, "3")
    # a Word document sets the number after its formula, well inside the column
    beside = line("(3)", 200.0, 100.0)
    assert printed_number([formula, beside], 300.0) == (beside, "3")
    # a linguistic example's number at the left, then the example
    example = [line("(1)", 54.0, 100.0), line("a. Noun is a part of speech.", 83.0, 100.0)]
    assert printed_number(example, 300.0) is None
    # a mention, and a table row of standard errors, ending at the edge
    assert printed_number([line("eter Λ = {λ1,1} in Equation (8)", 150.0, 100.0)], 300.0) is None
    assert printed_number([line("(0.760) (0.762)", 235.0, 100.0)], 300.0) is None


def test_formula_mentions_are_read_with_their_lists_and_bare_numbers_only_after_a_pointing_word():
    """Sentences from J13-2001, W02-1020 and maxtwer_paper5."""
    targets = {("formula", str(n)): f"formula_{n - 1}" for n in range(1, 17)}
    listed = "Having integrated all related probabilities (Equations (6), (7), and (8)) together"
    assert [(listed[r.start:r.end], r.target) for r in formula_refs(listed, targets)] == [
        ("Equations (6)", "formula_5"), ("(7)", "formula_6"), ("(8)", "formula_7")]
    text = "Finally, substituting (13), (14), and (15) into (16) yields the desired result, see [16]."
    assert [(text[r.start:r.end], r.target) for r in bare_formula_refs(text, targets)] == [
        ("(13)", "formula_12"), ("(14)", "formula_13"), ("(15)", "formula_14"), ("(16)", "formula_15")]
    # a list's items and a number no formula prints are no mentions
    assert bare_formula_refs("three steps: (1) evaluation and validity, (2) search", targets) == []
    assert bare_formula_refs("the system consists of (1) a parser and (2) a tagger", targets) == []
    assert bare_formula_refs("we aim to (1) identify errors and (2) correct them", targets) == []
    loss = "the loss in (4) during training"
    assert [loss[r.start:r.end] for r in bare_formula_refs(loss, targets)] == ["(4)"]
    assert bare_formula_refs("as defined in (42)", targets) == []
    # numbers listed after a mention are printed as it is, and a bare one names a formula
    for sentence, mentioned in [
        ("Combining the constraints in (3) and 4 others", ["(3)"]),
        ("In Equation (8), S1 is the start state", ["Equation (8)"]),
        ("using Equation (5), and 10 iterations", ["Equation (5)"]),
        ("Equations 3 and 4 show it, but Eq. 3 - 20 runs do not", ["Equations 3", "4", "Eq. 3"]),
        ("Eq. 3 and 2 layers", ["Eq. 3"]),
        ("from (2) and (3), we get", ["(2)", "(3)"]),
    ]:
        refs = formula_refs(sentence, targets) + bare_formula_refs(sentence, targets)
        assert all(0 <= r.start < r.end <= len(sentence) for r in refs)
        assert [sentence[r.start:r.end] for r in sorted(refs, key=lambda r: r.start)] == mentioned


def test_tex_math_fonts_codes_are_read_as_the_operators_and_letters_they_print():
    assert math_font_character("ABCDEF+CMEX10", "X") == "\u2211"  # summationdisplay
    assert math_font_character("CMEX7", "P") == "\u2211" and math_font_character("txex", "Q") == "\u220f"
    assert math_font_character("XYZABC+MSBM10", "R") == "\u211d"
    assert math_font_character("MSBM10", "A") == "A"  # its double-struck A is outside the BMP
    assert math_font_character("NimbusRomNo9L-Regu", "X") == "X"


@pytest.mark.needs_data("pdfs/acl", "pdf-pairs")
def test_big_operators_and_blackboard_letters_of_tex_fonts_reach_the_text():
    """CMEX10's summation sign at 'X' and MSBM10's R, as pdfium reads them, in real papers."""
    bleu = formulas(read(ACL_PDFS / "P13-1059.pdf"))
    assert bleu["1"] == "BLEU = BP · exp\u2211 n=1 N wn log pn (1)"
    paper = read(PAIRS / "maxtwer_paper5.pdf")
    assert any("an image sample x \u2208 \u211d D." in b.text for b in paper.blocks_of("paragraph"))


@pytest.mark.needs_data("pdfs/acl")
def test_a_big_operator_set_below_its_formula_in_the_prose_under_it_joins_the_formula():
    """P13-1059's summation signs hang below their formulas' rows, into the first row of the
    prose block under them: they join their formulas, and the paragraphs open with their words."""
    paper = read(ACL_PDFS / "P13-1059.pdf")
    numbered = formulas(paper)
    assert numbered["6"] == "weightngram = t\u2208ngram \u2211 weightt (6)"
    paragraphs = [b.text for b in paper.blocks_of("paragraph")]
    assert any(t.startswith("Next, we compute the weighted modified n-gram precision") for t in paragraphs)
    assert not any("\u2211" in t for t in paragraphs)


def test_held_math_opens_only_the_formula_right_under_it():
    """Synthetic blocks in one column (50-550 pt): a row of scripts that is no formula on its
    own is held and opens the numbered formula right under it; a block of prose in between
    (or a formula far below) lets it go."""
    page = Page(0, 600.0, 800.0, [], edges={"F": (50.0, 550.0)})
    scripts = VBlock([line("(t) (t−1)", 200.0, 100.0, 8.0)], 0)
    formula = VBlock([line("PG(s) = PM(s, o).", 150.0, 102.0), line("(1)", 535.0, 102.0)], 0)
    finder, units = DisplayFormulas([page]), []
    assert not finder.take(scripts, units, 0, numbered_only=True)
    finder.hold(scripts)
    assert finder.take(formula, units, 0)
    assert units[-1].label == "1" and scripts.lines[0] in units[-1].lines
    finder, units = DisplayFormulas([page]), []
    finder.take(scripts, units, 0, numbered_only=True)
    finder.hold(scripts)
    prose = VBlock([line("The distribution over these possible transitions is just", 50.0, 101.0)], 0)
    assert not finder.take(prose, units, 0)
    assert finder.take(formula, units, 0)
    assert scripts.lines[0] not in units[-1].lines
    finder, units = DisplayFormulas([page]), []
    finder.take(scripts, units, 0, numbered_only=True)
    finder.hold(scripts)
    far = VBlock([line("PG(s) = PM(s, o).", 150.0, 300.0), line("(1)", 535.0, 300.0)], 0)
    assert finder.take(far, units, 0) and scripts.lines[0] not in units[-1].lines


@pytest.mark.parametrize("text, prose_free", [
    ("it = \u03c3(Wi xt + Ui ht\u22121 + bi)", True),  # an LSTM's gate and bias are names
    ("yt = softmax(Why ht + by)", True),
    ("h = \u03c3(W in x)", True),
    ("min ||w|| subject to yi(w\u00b7xi+b) \u2265 1", True),
    ("P(c | context) = \u2211n \u03bbi P(c | ai)", True),
    ("- x + y = z", True),
    ("We set k = 5 and n = 10.", False),
    ("Assumption 1. Let m be a positive integer. For any f = (f1, . . . , fn)", False),
    ("Input: Sentence x = c1, . . . , cl , beam size B, scaled word segmentation model", False),
    ("(a) Let e = NaiveDecode(f,l, a).", False),
    ("for all j = 1, ...m and j < C do", False),
    ("value := Unify(arc1.value, arc2.value);", False),
])
def test_prose_in_math_is_told_apart_from_a_formulas_names(text, prose_free):
    """Lines of real papers (osai_paper06, D12-1046, C04-1091, C02-1050, C92-2068) and
    formulas of common models: what keeps a block of math out of the formulas."""
    assert _prose_free(text) is prose_free


def test_a_chain_of_held_blocks_opens_the_formula_and_a_stale_chain_does_not():
    """Synthetic blocks in one column (50-550 pt): two blocks held one under the other both
    open the formula under them; a block held after prose starts a chain of its own; scripts
    held over a prose block whose first rows are a formula open that formula."""
    page = Page(0, 600.0, 800.0, [], edges={"F": (50.0, 550.0)})
    upper = VBlock([line("E(t|w) =", 150.0, 100.0)], 0)
    fraction = VBlock([line("1 2", 160.0, 110.0, 8.0)], 0)
    formula = VBlock([line("\u2211K \u03bbtk = log p0(tk|wk),", 150.0, 120.0), line("(3)", 535.0, 120.0)], 0)
    finder, units = DisplayFormulas([page]), []
    for held in (upper, fraction):
        assert not finder.take(held, units, 0, numbered_only=True)
        finder.hold(held)
    assert finder.take(formula, units, 0)
    assert units[-1].label == "3" and upper.lines[0] in units[-1].lines and fraction.lines[0] in units[-1].lines
    finder, units = DisplayFormulas([page]), []
    finder.take(upper, units, 0, numbered_only=True)
    finder.hold(upper)
    assert not finder.take(VBlock([line("The energy of a tag sequence is", 50.0, 105.0)], 0), units, 0)
    finder.hold(fraction)  # a block take never saw (a note-like row in small type)
    assert finder.held == [fraction]
    finder, units = DisplayFormulas([page]), []
    finder.take(upper, units, 0, numbered_only=True)
    finder.hold(upper)
    mixed = VBlock([line("\u2211K \u03bbtk = log p0(tk|wk),", 150.0, 112.0), line("(3)", 535.0, 112.0),
                    line("where the sum runs over all the tags of the sentence and the", 50.0, 126.0),
                    line("weights are those of the model.", 50.0, 139.0)], 0)
    assert not finder.take(mixed, units, 0)
    before, rows, after = finder.split_out(mixed)
    assert not before and len(after) == 2
    finder.resume()
    assert finder.take(VBlock(rows, 0), units, 0) and upper.lines[0] in units[-1].lines


@pytest.mark.needs_data("pdf-pairs")
def test_a_number_printed_as_eq_1_numbers_its_formula_and_an_enumeration_across_semicolons_is_no_mention():
    """A seal study numbers its one formula "(Eq. 1)" and enumerates its aims "to (1)
    understand ...; (2) provide ...": the formula is number 1, and "(1)" is no mention of it."""
    paper = read(PAIRS / "ser763_effects-of-disease.pdf")
    assert formulas(paper) == {"1": "= (1.2209 + 0.01329 \u2217 Mass) \u2217 DaysFastingBreed (Eq. 1)"}
    assert not [r for b in paper.blocks_of("paragraph") for r in b.refs if r.kind == "formula"]
