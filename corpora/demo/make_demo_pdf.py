#!/usr/bin/env python
"""Build the scholarly_nlp demo paper: a PDF and the matching GROBID-style TEI.

The demo paper is a short ACL-style paper written by the scholarly_nlp developers
(CC BY 4.0). Its text lives in this file, once; from it the script writes

* ``demo_paper.pdf``: a two-column A4 PDF with a real text layer, drawn with
  reportlab Platypus (running header and page-number footer, three vector figures,
  one table, two numbered equations, a references section);
* ``demo_paper.tei.xml``: the same paper in the form GROBID 0.8.1 gives it
  (``processFulltextDocument``): flat body ``<div>``s numbered by ``head/@n``, inline
  ``<ref>``s, figures and the table at the end of ``<body>``, ``listBibl`` in ``<back>``.
  It was NOT produced by a GROBID run; the graphic coordinates are the real positions
  that reportlab used when it drew the PDF;
* ``demo_paper.expected.json``: the outline both readers should recover (sections,
  figures with pages and boxes, reference counts) and the sentences that a naive
  sentence splitter breaks, for tests.

Usage::

    pip install reportlab
    python corpora/demo/make_demo_pdf.py            # (re)write the three files here
    python corpora/demo/make_demo_pdf.py --check    # exit 1 if the TEI or JSON are stale
    python corpora/demo/make_demo_pdf.py --out-dir /tmp/demo

Output is deterministic for a given reportlab version (``rl_config.invariant``).

Inline markup in the text below: ``[[kind:target|text]]`` is an inline reference
(``kind`` is bibr, figure, table or formula; an empty target makes a ``<ref>`` without
``@target``, as GROBID emits for some mentions). The PDF shows ``text`` only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile
from pathlib import Path
from xml.sax.saxutils import escape

HERE = Path(__file__).resolve().parent

# --------------------------------------------------------------------------------------
# The paper
# --------------------------------------------------------------------------------------

TITLE = "Finding the Central Figure of a Paper from Its Own Figure Mentions"
SHORT_TITLE = "Finding the Central Figure from Figure Mentions"
AUTHOR = "The scholarly_nlp developers"
AFFILIATION = "scholarly_nlp project"
RUNNING_HEAD = "scholarly_nlp demo paper \u00b7 CC BY 4.0"
LICENCE_URL = "https://creativecommons.org/licenses/by/4.0/"

ABSTRACT = (
    "Many readers decide whether to read a paper by looking at a single figure, but "
    "papers rarely say which of their figures is the central one. We show that the "
    "paper's own text already carries a strong signal for it, e.g. how often and where "
    "the authors mention each figure. Our method finds every figure mention, resolves it "
    "to a figure by its label, and scores each figure by the sections and positions of "
    "its mentions. A second score compares the caption of each figure with the abstract, "
    "and a single weight mixes the two scores. On 20 ACL papers whose central figures two "
    "annotators chose, the combined ranker puts the annotators' first choice at rank one "
    "in 13 of 20 papers, i.e. a precision at one of 0.65. The method needs no training "
    "data and works on GROBID TEI and on plain PDF text alike."
)

ACKNOWLEDGMENTS = (
    "We thank the two annotators of the development data, and the authors of the ACL "
    "Anthology papers whose text and figures made this demonstration possible."
)

FOOTNOTE = (
    "This paper was written by the scholarly_nlp developers as a demonstration document "
    "for the project's tests and examples, and is released under the CC BY 4.0 licence. "
    "The data it describes exist, but its numbers are illustrative and do not report a "
    "real experiment."
)

# Body: (number, title, items). An item is a paragraph string or ("formula", id, text, label).
SECTIONS = [
    ("1", "Introduction", [
        "A paper's figures are often the quickest way into it. Search engines and reading "
        "tools show one thumbnail per paper, and a well chosen figure tells the reader what "
        "the paper does before they read a word of it. [[bibr:b5|Yang et al. (2019)]] call "
        "this figure the central figure of a paper and show that it can be identified "
        "automatically. Authors, however, almost never mark it, so a tool has to guess.",

        "Reading tools build on PDF parsers [[bibr:b3|(Lopez, 2009;]] "
        "[[bibr:b0|Clark and Divvala, 2016)]], and earlier work ranks the figures they "
        "extract by their images or by models trained on captions "
        "[[bibr:b4|(Yamamoto et al., 2021)]]. We take a cheaper route. Authors write about "
        "the figures they care about: they introduce the central figure early, come back to "
        "it in several sections and describe it in words close to the abstract. "
        "[[figure:fig_0|Figure 1]] shows the resulting pipeline, which reads nothing but "
        "the paper itself.",

        "Our contributions are the following. First, we define a mention score that weighs "
        "each figure mention by the section and the position in which it occurs (Sect. 3). "
        "Second, we mix it with caption\u2013abstract similarity through a single weight, "
        "i.e. a one-parameter model that needs no training data. Third, we evaluate both "
        "scores on 20 ACL papers whose central figures two annotators chose independently "
        "(Sect. 4).",
    ]),
    ("2", "Related Work", [
        "Figure extraction. Tools that turn PDF files into structured text also recover "
        "figures and their captions. GROBID [[bibr:b3|(Lopez, 2009)]] labels figure and "
        "table regions and links in-text references to them, and PDFFigures 2.0 "
        "[[bibr:b0|(Clark and Divvala, 2016)]] finds figure regions from the layout of "
        "captions and body text. Large corpora of parsed papers such as S2ORC "
        "[[bibr:b2|(Lo et al., 2020)]] were built with the former. We use such readers as "
        "they are and rely only on what they output, e.g. the captions and the paragraphs "
        "that mention figures.",

        "Central and summary figures. [[bibr:b5|Yang et al. (2019)]] introduced the task "
        "of identifying the central figure of a paper and released annotated data for it. "
        "[[bibr:b4|Yamamoto et al. (2021)]] cast it as visual summary identification and "
        "train a model by self-supervision from the papers themselves, without manual "
        "labels. Both approaches need training; our ranker has one weight, and its mention "
        "score can be read off the text.",

        "Sentence splitting. Scientific text is hard for sentence splitters: abbreviations "
        "such as Fig., Eq. and et al. end with a period but rarely end a sentence. We use "
        "spaCy [[bibr:b1|(Honnibal et al., 2020)]] with exceptions for these abbreviations, "
        "since a mention that is split from its sentence loses the context our scores use.",

        "Mention contexts. Sentences that mention a figure are close relatives of citation "
        "sentences, which summarise what a cited paper contributes. We treat figure mentions "
        "in the same way: the sentences around a mention say what the figure shows and why "
        "it matters to the paper.",
    ]),
    ("3", "Method", [
        "Our ranker takes a paper as text blocks (title, abstract, section headings, "
        "paragraphs and captions) from any reader, finds the mentions of each figure "
        "(Sect. 3.1) and scores the figures (Sect. 3.2). Only figures are ranked; tables "
        "are mentioned in the same way but are never central figures in our data.",
    ]),
    ("3.1", "Finding and Resolving Figure Mentions", [
        "Authors refer to figures in many forms: full words and abbreviations, plurals, "
        "ranges and letters for subfigures. Readers differ in how much of this they mark. "
        "GROBID tags most mentions as references with a target figure, but it leaves some "
        "without a target, in particular mentions of subfigures. We therefore match every "
        "mention against the figure labels with a pattern and take the figure of the same "
        "kind whose label equals the number of the mention; a subfigure mention counts for "
        "its figure. Mentions inside captions are skipped: a caption that points to another "
        "figure, e.g. to compare two plots, says little about which of the two matters more.",

        "Each resolved mention m keeps the section it occurs in and its relative position "
        "p(m) in the paper, i.e. the offset of its sentence divided by the length of the "
        "body. As [[figure:|Fig. 2b]] shows, a central figure is much more likely than "
        "other figures to be mentioned in the Introduction. [[figure:fig_1|Fig. 2a]] "
        "shows that the first figures of a paper are also mentioned more often overall, "
        "which is why the first figure is a strong baseline.",
    ]),
    ("3.2", "Scoring Figures", [
        "The mention score of a figure f adds up the weights of its mentions "
        "M(f) = {m1, ..., mk}:",
        ("formula", "formula_0", "s(f) = w(m1) + w(m2) + ... + w(mk)", "(1)"),
        "where w(m) = w_sec(m) \u00b7 w_pos(m). The section weight w_sec is 2 for the "
        "Introduction and the Conclusion and 1 elsewhere, and the position weight "
        "w_pos(m) = 1.5 - p(m) falls linearly with the position of the mention. We tuned "
        "neither weight; Sect. 4 reports the score as defined here. The caption score c(f) "
        "is the cosine similarity of the caption and the abstract as bags of words. The "
        "final score mixes both scores:",
        ("formula", "formula_1", "r(f) = a \u00b7 s'(f) + (1 - a) \u00b7 c(f)", "(2)"),
        "where s'(f) is the mention score divided by its maximum over the figures of the "
        "paper, so that both scores lie between 0 and 1. With a = 1 the ranker uses "
        "mentions only, and with a = 0 it uses captions only. Eq. [[formula:formula_1|(2)]] "
        "has no other parameter, and we set a = 0.6 on the development papers "
        "(cf. [[figure:fig_2|Fig. 3]]). Ties are broken by the order of the figures, i.e. "
        "the earlier figure wins.",
    ]),
    ("4", "Experiments", [
        "Data. We use the 350 ACL and EMNLP papers of the scholarly_nlp development data, "
        "processed by GROBID, and the 20 of them whose three most central figures two "
        "annotators ranked after reading the abstract and the captions. The annotators "
        "agreed on the first figure in 18 of 20 papers. We report the precision at one "
        "(P@1) and the mean reciprocal rank (MRR) of the annotators' first figure, and "
        "nDCG@3 against their merged ranking.",

        "Annotation. The annotators saw the title, the abstract and the captions of each "
        "paper, but not the figures themselves, and named the three figures that would best "
        "serve as a graphical abstract of the paper. Their rankings were merged by Borda "
        "count. Reading captions instead of images is a limitation of the data, but it "
        "matches what a text-only ranker can see.",

        "Baselines. The first figure of the paper is a strong baseline, since authors often "
        "open with an overview. The most mentioned figure counts mentions without weights, "
        "and caption similarity ranks the figures by c(f) alone.",

        "Results. [[table:tab_0|Table 1]] lists the results. Counting mentions already "
        "beats the first-figure baseline, and weighting them by section and position as in "
        "Eq. [[formula:formula_0|(1)]] adds another 0.10 P@1. The combined score is best on "
        "all three measures: it ranks the annotators' first choice first in 13 of 20 "
        "papers. Since a was set on the same 20 papers, its scores are optimistic. "
        "[[figure:fig_2|Fig. 3]] shows that P@1 stays at its best for a between 0.4 and 0.8 "
        "and drops at both ends, i.e. neither signal is enough alone.",

        "Errors. [[figure:fig_1|Figures 2]] and [[figure:fig_2|3]] together explain the "
        "gain: the Introduction mentions central figures more often than other figures, and "
        "the caption score corrects most of the cases in which it does not. The remaining "
        "errors occur in papers whose central figure is an example rather than an overview, "
        "e.g. a parse tree that the Introduction discusses at length. An image-based model "
        "such as that of [[bibr:b4|Yamamoto et al. (2021)]] could resolve such cases.",

        "Implementation. The ranker is a pipeline component of scholarly_nlp that works on "
        "the Doc of a paper. It uses the figure mentions that the reader marked and falls "
        "back on the pattern of Sect. 3.1 for plain PDF text, where no mention is marked. "
        "Scores are computed per paper, so the component needs neither a model nor a "
        "corpus, and it ranks the figures of a paper in well under a second.",
    ]),
    ("5", "Conclusion", [
        "A paper's own figure mentions are a cheap and strong signal for its central "
        "figure. The ranker of Sect. 3 needs no training, uses only the text blocks that "
        "any reader produces, and finds the annotators' first choice in 13 of 20 "
        "development papers. Future work will add image features and test the ranker on "
        "PDF text without GROBID, where mentions must be found by the pattern alone "
        "(see [[figure:fig_0|Fig. 1]]).",

        "Limitations. Our evaluation uses 20 papers from one field, and the weight a was set "
        "on the same papers. The section weights assume the usual layout of an ACL paper, "
        "i.e. an Introduction that previews the results. Papers from other fields, e.g. "
        "biomedical papers with the Results before the Methods, may need other weights.",
    ]),
]

# Figures: id, label, caption (without "Figure N: "), where it goes.
FIGURES = [
    {"id": "fig_0", "label": "1", "kind": "figure",
     "caption": "Overview of the ranker. A reader turns the paper into text blocks; "
                "figure mentions are found, resolved to figures and weighted by section "
                "and position, and the resulting mention score is mixed with the "
                "similarity of each caption to the abstract."},
    {"id": "fig_1", "label": "2", "kind": "figure",
     "caption": "Figure mentions in the development papers. (a) Mean number of mentions "
                "per figure by the position of the figure in the paper. (b) Share of "
                "figures mentioned in the Introduction, for central and for other figures."},
    {"id": "fig_2", "label": "3", "kind": "figure",
     "caption": "P@1 and MRR of the combined ranker as the weight a of Eq. (2) goes from "
                "0 (captions only) to 1 (mentions only)."},
    {"id": "tab_0", "label": "1", "kind": "table",
     "caption": "Central figure ranking on the 20 annotated papers. The combined score "
                "uses a = 0.6."},
]

TABLE_ROWS = [
    ["Method", "P@1", "MRR", "nDCG@3"],
    ["First figure", "0.45", "0.61", "0.58"],
    ["Most mentioned", "0.50", "0.66", "0.63"],
    ["Caption similarity c(f)", "0.55", "0.70", "0.66"],
    ["Mention score s(f)", "0.60", "0.73", "0.70"],
    ["Combined r(f)", "0.65", "0.77", "0.74"],
]

# Figure 2 and 3 data (illustrative, consistent with Table 1).
FIG2A = [3.1, 2.6, 2.2, 1.9, 1.6, 1.4]
FIG2B = [0.85, 0.30]
FIG3_A = [i / 10 for i in range(11)]
FIG3_P1 = [0.55, 0.55, 0.55, 0.60, 0.65, 0.65, 0.65, 0.65, 0.65, 0.60, 0.60]
FIG3_MRR = [0.70, 0.71, 0.72, 0.74, 0.76, 0.77, 0.77, 0.77, 0.76, 0.74, 0.73]

# Bibliography, sorted by first author as in ACL papers. Metadata written from memory.
REFERENCES = [
    {"id": "b0", "authors": [("Christopher", "Clark"), ("Santosh", "Divvala")], "year": "2016",
     "title": "PDFFigures 2.0: Mining figures from research papers",
     "venue": "Proceedings of the 16th ACM/IEEE-CS Joint Conference on Digital Libraries",
     "venue_level": "m", "doi": None},
    {"id": "b1", "authors": [("Matthew", "Honnibal"), ("Ines", "Montani"),
                             ("Sofie", "Van Landeghem"), ("Adriane", "Boyd")], "year": "2020",
     "title": "spaCy: Industrial-strength natural language processing in Python",
     "venue": "Zenodo", "venue_level": "m", "doi": "10.5281/zenodo.1212303"},
    {"id": "b2", "authors": [("Kyle", "Lo"), ("Lucy Lu", "Wang"), ("Mark", "Neumann"),
                             ("Rodney", "Kinney"), ("Daniel", "Weld")], "year": "2020",
     "title": "S2ORC: The Semantic Scholar open research corpus",
     "venue": "Proceedings of the 58th Annual Meeting of the Association for "
              "Computational Linguistics",
     "venue_level": "m", "doi": "10.18653/v1/2020.acl-main.447"},
    {"id": "b3", "authors": [("Patrice", "Lopez")], "year": "2009",
     "title": "GROBID: Combining automatic bibliographic data recognition and term "
              "extraction for scholarship publications",
     "venue": "Research and Advanced Technology for Digital Libraries (ECDL 2009)",
     "venue_level": "m", "doi": None},
    {"id": "b4", "authors": [("Shintaro", "Yamamoto"), ("Anne", "Lauscher"),
                             ("Simone Paolo", "Ponzetto"), ("Goran", "Glava\u0161"),
                             ("Shigeo", "Morishima")], "year": "2021",
     "title": "Visual summary identification from scientific publications via "
              "self-supervised learning",
     "venue": "Frontiers in Research Metrics and Analytics", "venue_level": "j",
     "volume": "6", "doi": "10.3389/frma.2021.719004"},
    {"id": "b5", "authors": [("Sean T.", "Yang"), ("Po-shen", "Lee"), ("Lia", "Kazakova"),
                             ("Abhishek", "Joshi"), ("Bum Mook", "Oh"), ("Jevin D.", "West"),
                             ("Bill", "Howe")], "year": "2019",
     "title": "Identifying the central figure of a scientific paper",
     "venue": "2019 International Conference on Document Analysis and Recognition (ICDAR)",
     "venue_level": "m", "doi": None},
]

# Sentences that a naive splitter (split after every ". ") breaks; each is one sentence.
TRICKY_ABBREVIATIONS = ("Fig.", "Eq.", "Sect.", "et al.", "e.g.", "i.e.", "cf.")

# --------------------------------------------------------------------------------------
# Inline markup
# --------------------------------------------------------------------------------------

REF_RE = re.compile(r"\[\[(bibr|figure|table|formula):([\w]*)\|([^\]]+)\]\]")


def plain(text: str) -> str:
    """The text as printed: inline references replaced by their text."""
    return REF_RE.sub(lambda m: m.group(3), text)


RUN_IN_HEADS = ("Figure extraction.", "Central and summary figures.", "Sentence splitting.",
                "Mention contexts.", "Data.", "Annotation.", "Baselines.", "Results.",
                "Errors.", "Implementation.", "Limitations.")


def pdf_markup(text: str) -> str:
    """reportlab Paragraph markup (escaped); run-in paragraph heads in bold."""
    text = escape(plain(text))
    for head in RUN_IN_HEADS:
        if text.startswith(head + " "):
            return f"<b>{head}</b>{text[len(head):]}"
    return text


def tei_markup(text: str) -> str:
    """TEI mixed content with ``<ref>`` elements."""
    out, last = [], 0
    for m in REF_RE.finditer(text):
        out.append(escape(text[last:m.start()]))
        kind, target, shown = m.groups()
        tgt = f' target="#{target}"' if target else ""
        out.append(f'<ref type="{kind}"{tgt}>{escape(shown)}</ref>')
        last = m.end()
    out.append(escape(text[last:]))
    return "".join(out)


def refs_of(text: str) -> list[dict]:
    return [{"kind": m.group(1), "target": m.group(2) or None, "text": m.group(3)}
            for m in REF_RE.finditer(text)]


def caption_line(fig: dict) -> str:
    word = "Table" if fig["kind"] == "table" else "Figure"
    return f"{word} {fig['label']}: {fig['caption']}"


def reference_line(ref: dict) -> str:
    """The reference as printed in ACL style."""
    names = [f"{f} {s}" for f, s in ref["authors"]]
    if len(names) == 1:
        who = names[0]
    elif len(names) == 2:
        who = f"{names[0]} and {names[1]}"
    else:
        who = ", ".join(names[:-1]) + ", and " + names[-1]
    if ref["venue_level"] == "j":
        where = f"{ref['venue']}, {ref['volume']}." if ref.get("volume") else f"{ref['venue']}."
    elif ref["venue"] == "Zenodo":
        where = "Zenodo."
    else:
        where = f"In {ref['venue']}."
    line = f"{who}. {ref['year']}. {ref['title']}. {where}"
    if ref.get("doi"):
        line += f" doi:{ref['doi']}."
    return line


# --------------------------------------------------------------------------------------
# PDF
# --------------------------------------------------------------------------------------

def build_pdf(path: Path) -> dict:
    """Write the PDF; return the drawn positions of the figures and the table."""
    from reportlab import rl_config
    rl_config.invariant = 1  # fixed /ID and dates: byte-identical rebuilds

    from reportlab.graphics import renderPDF
    from reportlab.graphics.charts.barcharts import VerticalBarChart
    from reportlab.graphics.charts.legends import Legend
    from reportlab.graphics.charts.lineplots import LinePlot
    from reportlab.graphics.shapes import Drawing, Group, Line, Polygon, Rect, String
    from reportlab.graphics.widgets.markers import makeMarker
    from reportlab.lib import colors
    from reportlab.lib.enums import TA_CENTER, TA_JUSTIFY, TA_LEFT
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.lib.units import cm
    from reportlab.platypus import (BaseDocTemplate, CondPageBreak, Flowable, Frame,
                                    FrameBreak, KeepTogether, PageTemplate, Paragraph,
                                    Spacer, Table, TableStyle)

    W, H = A4
    margin = 2.5 * cm
    gap = 0.6 * cm
    col_w = (W - 2 * margin - gap) / 2
    body_h = H - 2 * margin
    positions: dict[str, dict] = {}

    # ---------------- styles ----------------
    body = ParagraphStyle("body", fontName="Times-Roman", fontSize=10.5, leading=12.6,
                          alignment=TA_JUSTIFY, firstLineIndent=0.4 * cm)
    body_first = ParagraphStyle("body_first", parent=body, firstLineIndent=0)
    title_st = ParagraphStyle("title", fontName="Times-Bold", fontSize=15, leading=18,
                              alignment=TA_CENTER, spaceAfter=10)
    author_st = ParagraphStyle("author", fontName="Times-Bold", fontSize=12, leading=14,
                               alignment=TA_CENTER)
    affil_st = ParagraphStyle("affil", fontName="Times-Roman", fontSize=11, leading=13,
                              alignment=TA_CENTER)
    abs_head = ParagraphStyle("abs_head", fontName="Times-Bold", fontSize=12, leading=14,
                              alignment=TA_CENTER, spaceAfter=5)
    abs_st = ParagraphStyle("abs", parent=body, fontSize=10, leading=12, firstLineIndent=0,
                            leftIndent=0.5 * cm, rightIndent=0.5 * cm, spaceAfter=10)
    h1 = ParagraphStyle("h1", fontName="Times-Bold", fontSize=12, leading=14,
                        spaceBefore=9, spaceAfter=5, keepWithNext=1)
    h2 = ParagraphStyle("h2", parent=h1, fontSize=11, leading=13, spaceBefore=7, spaceAfter=4)
    caption_st = ParagraphStyle("caption", fontName="Times-Roman", fontSize=9.5, leading=11.4,
                                alignment=TA_JUSTIFY, spaceBefore=4)
    formula_st = ParagraphStyle("formula", fontName="Times-Roman", fontSize=10.5,
                                leading=12.6, alignment=TA_LEFT, leftIndent=0.8 * cm)
    ref_st = ParagraphStyle("ref", fontName="Times-Roman", fontSize=9.5, leading=11.2,
                            alignment=TA_LEFT, leftIndent=0.4 * cm,
                            firstLineIndent=-0.4 * cm, spaceAfter=4)
    note_st = ParagraphStyle("note", fontName="Times-Roman", fontSize=8.5, leading=10,
                             alignment=TA_JUSTIFY)

    # ---------------- drawings ----------------
    grey = colors.Color(0.35, 0.35, 0.35)
    blue = colors.Color(0.20, 0.36, 0.62)
    orange = colors.Color(0.87, 0.49, 0.15)
    light = colors.Color(0.90, 0.93, 0.98)

    def arrow(d, x1, y1, x2, y2):
        d.add(Line(x1, y1, x2, y2, strokeColor=grey, strokeWidth=1))
        import math
        ang = math.atan2(y2 - y1, x2 - x1)
        L, s = 5.5, 2.6
        bx, by = x2 - L * math.cos(ang), y2 - L * math.sin(ang)
        px, py = -math.sin(ang) * s, math.cos(ang) * s
        d.add(Polygon([x2, y2, bx + px, by + py, bx - px, by - py],
                      fillColor=grey, strokeColor=grey, strokeWidth=0.5))

    def box(d, x, y, w, h, lines, fill=light):
        d.add(Rect(x, y, w, h, rx=4, ry=4, fillColor=fill, strokeColor=blue, strokeWidth=1))
        n = len(lines)
        for i, t in enumerate(lines):
            yy = y + h / 2 + (n - 1) * 5 - i * 10 - 3
            d.add(String(x + w / 2, yy, t, fontName="Helvetica", fontSize=8,
                         textAnchor="middle", fillColor=colors.black))

    def pipeline_drawing(width):
        d = Drawing(width, 118)
        bw, bh = 66, 34
        xs = [0, 77, 154, 231, 308, 385]
        y_top, y_bot = 72, 12
        top = [["Paper", "(PDF or TEI)"], ["Reader"], ["Mention", "finder"],
               ["Resolver"], ["Mention", "score s(f)"], ["Ranked", "figures"]]
        for x, lines in zip(xs, top):
            fill = colors.Color(1.0, 0.95, 0.88) if lines[0] in ("Paper", "Ranked") else light
            box(d, x, y_top, bw, bh, lines, fill)
        for a, b in zip(xs[:-1], xs[1:]):
            if b == 385:
                continue
            arrow(d, a + bw, y_top + bh / 2, b, y_top + bh / 2)
        # lower branch: captions and abstract -> similarity -> mixer
        box(d, 154, y_bot, bw, bh, ["Captions +", "abstract"])
        box(d, 231, y_bot, bw, bh, ["Caption", "score c(f)"])
        box(d, 308, y_bot, bw, bh, ["Mix r(f)", "weight a"], colors.Color(0.93, 0.97, 0.91))
        arrow(d, 77 + bw / 2, y_top, 154, y_bot + bh / 2 + 6)
        arrow(d, 154 + bw, y_bot + bh / 2, 231, y_bot + bh / 2)
        arrow(d, 231 + bw, y_bot + bh / 2, 308, y_bot + bh / 2)
        arrow(d, 308 + bw / 2, y_top, 308 + bw / 2, y_bot + bh)
        arrow(d, 308 + bw, y_bot + bh / 2, 385 + bw / 2, y_top)
        d.add(String(77 + bw + 2, y_top + bh + 4, "title, abstract, headings, paragraphs, captions",
                     fontName="Helvetica-Oblique", fontSize=7, fillColor=grey))
        # centre the 451-pt-wide diagram in the available width
        d.translate((width - (385 + bw)) / 2, 0)
        return d

    def vlabel(d, x, y, text):
        g = Group(String(0, 0, text, fontName="Helvetica", fontSize=7, textAnchor="middle"))
        g.transform = (0, 1, -1, 0, x, y)  # rotated by 90 degrees
        d.add(g)

    def bar_drawing(width):
        d = Drawing(width, 140)
        pw = (width - 30) / 2
        a = VerticalBarChart()
        a.x, a.y, a.width, a.height = 26, 38, pw - 18, 92
        a.data = [FIG2A]
        a.categoryAxis.categoryNames = ["1", "2", "3", "4", "5", "6+"]
        a.valueAxis.valueMin, a.valueAxis.valueMax, a.valueAxis.valueStep = 0, 3.5, 1
        a.bars[0].fillColor = blue
        a.bars[0].strokeColor = None
        b = VerticalBarChart()
        b.x, b.y, b.width, b.height = a.x + pw + 22, 38, pw - 18, 92
        b.data = [FIG2B]
        b.categoryAxis.categoryNames = ["central", "other"]
        b.valueAxis.valueMin, b.valueAxis.valueMax, b.valueAxis.valueStep = 0, 1, 0.25
        b.valueAxis.labelTextFormat = "%.2f"
        b.bars[0].fillColor = orange
        b.bars[0].strokeColor = None
        for chart, xtitle, ytitle, panel in ((a, "figure position", "mentions per figure", "(a)"),
                                             (b, "figure", "share in Introduction", "(b)")):
            for ax in (chart.categoryAxis.labels, chart.valueAxis.labels):
                ax.fontName, ax.fontSize = "Helvetica", 7
            d.add(chart)
            d.add(String(chart.x + chart.width / 2, 16, xtitle, fontName="Helvetica",
                         fontSize=7, textAnchor="middle"))
            d.add(String(chart.x + chart.width / 2, 2, panel, fontName="Helvetica",
                         fontSize=8, textAnchor="middle"))
            vlabel(d, chart.x - (14 if chart is a else 20), chart.y + chart.height / 2, ytitle)
        return d

    def line_drawing(width):
        d = Drawing(width, 120)
        lp = LinePlot()
        lp.x, lp.y, lp.width, lp.height = 30, 26, width - 40, 84
        lp.data = [list(zip(FIG3_A, FIG3_P1)), list(zip(FIG3_A, FIG3_MRR))]
        lp.xValueAxis.valueMin, lp.xValueAxis.valueMax, lp.xValueAxis.valueStep = 0, 1, 0.2
        lp.yValueAxis.valueMin, lp.yValueAxis.valueMax, lp.yValueAxis.valueStep = 0.5, 0.8, 0.1
        lp.xValueAxis.labelTextFormat = "%.1f"
        lp.yValueAxis.labelTextFormat = "%.1f"
        for ax in (lp.xValueAxis.labels, lp.yValueAxis.labels):
            ax.fontName, ax.fontSize = "Helvetica", 7
        lp.lines[0].strokeColor, lp.lines[1].strokeColor = blue, orange
        lp.lines[0].strokeWidth = lp.lines[1].strokeWidth = 1.3
        lp.lines[0].symbol = makeMarker("FilledCircle", size=3)
        lp.lines[1].symbol = makeMarker("FilledSquare", size=3)
        lp.lines[0].symbol.fillColor = blue
        lp.lines[1].symbol.fillColor = orange
        d.add(lp)
        d.add(String(lp.x + lp.width / 2, 4, "weight a", fontName="Helvetica", fontSize=7,
                     textAnchor="middle"))
        vlabel(d, 8, lp.y + lp.height / 2, "score")
        lg = Legend()
        lg.x, lg.y = lp.x + lp.width * 0.6, lp.y + 25
        lg.fontName, lg.fontSize = "Helvetica", 7
        lg.alignment = "right"
        lg.dx = lg.dy = 5
        lg.deltay = 9
        lg.columnMaximum = 2
        lg.colorNamePairs = [(blue, "P@1"), (orange, "MRR")]
        d.add(lg)
        return d

    class RecordedDrawing(Flowable):
        """A drawing that records the page and box where it is drawn (GROBID coords)."""

        def __init__(self, drawing, key):
            super().__init__()
            self.drawing, self.key = drawing, key
            self.width, self.height = drawing.width, drawing.height
            self.hAlign = "CENTER"

        def wrap(self, aw, ah):
            return self.width, self.height

        def drawOn(self, canv, x, y, _sW=0):
            ax = self._hAlignAdjust(x, _sW)
            positions[self.key] = {"page": canv.getPageNumber(), "x": ax,
                                   "y": H - (y + self.height),
                                   "w": self.width, "h": self.height}
            super().drawOn(canv, x, y, _sW)

        def draw(self):
            renderPDF.draw(self.drawing, self.canv, 0, 0)

    class RecordedTable(Table):
        def drawOn(self, canv, x, y, _sW=0):
            ax = self._hAlignAdjust(x, _sW)
            positions["tab_0"] = {"page": canv.getPageNumber(), "x": ax,
                                  "y": H - (y + self._height),
                                  "w": self._width, "h": self._height}
            super().drawOn(canv, x, y, _sW)

    figs = {f["id"]: f for f in FIGURES}

    # ---------------- page furniture ----------------
    fig1 = pipeline_drawing(W - 2 * margin)
    fig1_caption = Paragraph(escape(caption_line(figs["fig_0"])), caption_st)
    _, fig1_cap_h = fig1_caption.wrap(W - 2 * margin, 200)
    fig1_block_h = fig1.height + 4 + fig1_cap_h + 14  # drawing, gap, caption, gap to text

    # Drawing order follows pdfTeX: running head and top floats before the body text,
    # footnotes and the page-number footer after it (onPageEnd).
    def header(canv, doc):
        canv.saveState()
        canv.setFont("Times-Italic", 8.5)
        canv.setFillColor(colors.Color(0.3, 0.3, 0.3))
        canv.drawString(margin, H - 1.6 * cm, RUNNING_HEAD)
        canv.drawRightString(W - margin, H - 1.6 * cm, SHORT_TITLE)
        canv.setStrokeColor(colors.Color(0.6, 0.6, 0.6))
        canv.setLineWidth(0.4)
        canv.line(margin, H - 1.6 * cm - 4, W - margin, H - 1.6 * cm - 4)
        canv.restoreState()

    def footer(canv, doc):
        canv.saveState()
        canv.setFont("Times-Roman", 10)
        canv.setFillColor(colors.black)
        canv.drawCentredString(W / 2, 1.4 * cm, str(doc.page))
        canv.restoreState()

    note_p = Paragraph(escape(FOOTNOTE), note_st)
    _, note_h = note_p.wrap(col_w, 200)

    def first_page_end(canv, doc):
        canv.saveState()
        canv.setLineWidth(0.5)
        canv.line(margin, margin + note_h + 5, margin + 0.35 * col_w, margin + note_h + 5)
        canv.restoreState()
        note_p.drawOn(canv, margin, margin)
        footer(canv, doc)

    def figure_page(canv, doc):
        header(canv, doc)
        top = H - margin
        x = margin
        renderPDF.draw(fig1, canv, x, top - fig1.height)
        positions["fig_0"] = {"page": canv.getPageNumber(),
                              "x": x + (W - 2 * margin - 451) / 2, "y": margin,
                              "w": 451.0, "h": fig1.height}
        fig1_caption.drawOn(canv, x, top - fig1.height - 4 - fig1_cap_h)

    title_h = 84
    first = PageTemplate("first", pagesize=A4, onPage=header, onPageEnd=first_page_end, frames=[
        Frame(margin, H - margin - title_h, W - 2 * margin, title_h, id="title",
              leftPadding=0, rightPadding=0, topPadding=0, bottomPadding=0),
        Frame(margin, margin + note_h + 12, col_w, body_h - title_h - note_h - 12, id="c1",
              leftPadding=0, rightPadding=0, topPadding=0, bottomPadding=0),
        Frame(margin + col_w + gap, margin, col_w, body_h - title_h, id="c2",
              leftPadding=0, rightPadding=0, topPadding=0, bottomPadding=0),
    ])
    figure = PageTemplate("figure", pagesize=A4, onPage=figure_page, onPageEnd=footer, frames=[
        Frame(margin, margin, col_w, body_h - fig1_block_h, id="c1",
              leftPadding=0, rightPadding=0, topPadding=0, bottomPadding=0),
        Frame(margin + col_w + gap, margin, col_w, body_h - fig1_block_h, id="c2",
              leftPadding=0, rightPadding=0, topPadding=0, bottomPadding=0),
    ])
    later = PageTemplate("later", pagesize=A4, onPage=header, onPageEnd=footer, frames=[
        Frame(margin, margin, col_w, body_h, id="c1",
              leftPadding=0, rightPadding=0, topPadding=0, bottomPadding=0),
        Frame(margin + col_w + gap, margin, col_w, body_h, id="c2",
              leftPadding=0, rightPadding=0, topPadding=0, bottomPadding=0),
    ])

    class PaperDoc(BaseDocTemplate):
        """Page 1: title block; page 2: Figure 1 across the top; then plain two columns."""

        def handle_pageEnd(self):
            self.handle_nextPageTemplate("figure" if self.page == 1 else "later")
            super().handle_pageEnd()

    doc = PaperDoc(
        str(path), pagesize=A4, pageTemplates=[first, figure, later],
        leftMargin=margin, rightMargin=margin, topMargin=margin, bottomMargin=margin,
        title=TITLE, author=AUTHOR, creator="corpora/demo/make_demo_pdf.py (reportlab)",
        subject="scholarly_nlp demo paper, CC BY 4.0 (" + LICENCE_URL + ")",
        keywords="scholarly_nlp, demo, central figure, figure mentions",
    )

    # ---------------- story ----------------
    story: list = [
        Spacer(1, 8),
        Paragraph(escape(TITLE), title_st),
        Paragraph(escape(AUTHOR), author_st),
        Paragraph(escape(AFFILIATION), affil_st),
        FrameBreak(),
        Paragraph("Abstract", abs_head),
        Paragraph(escape(ABSTRACT), abs_st),
    ]

    def figure_flowables(fid):
        fig = figs[fid]
        if fid == "fig_1":
            flow = RecordedDrawing(bar_drawing(col_w), fid)
        elif fid == "fig_2":
            flow = RecordedDrawing(line_drawing(col_w), fid)
        else:  # the table
            flow = RecordedTable(TABLE_ROWS, colWidths=[col_w * 0.49] + [col_w * 0.17] * 3,
                                 hAlign="CENTER")
            flow.setStyle(TableStyle([
                ("FONT", (0, 0), (-1, -1), "Times-Roman", 9.5),
                ("FONT", (0, 0), (-1, 0), "Times-Bold", 9.5),
                ("FONT", (1, -1), (-1, -1), "Times-Bold", 9.5),
                ("ALIGN", (1, 0), (-1, -1), "CENTER"),
                ("LINEABOVE", (0, 0), (-1, 0), 0.8, colors.black),
                ("LINEBELOW", (0, 0), (-1, 0), 0.5, colors.black),
                ("LINEABOVE", (0, -1), (-1, -1), 0.5, colors.black),
                ("LINEBELOW", (0, -1), (-1, -1), 0.8, colors.black),
                ("TOPPADDING", (0, 0), (-1, -1), 1.5),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 1.5),
                ("LEFTPADDING", (0, 0), (-1, -1), 2),
            ]))
        cap = Paragraph(escape(caption_line(fig)), caption_st)
        return [Spacer(1, 6), KeepTogether([flow, cap]), Spacer(1, 10)]

    # where the column floats go: after the given paragraph of the given section
    float_after = {("3", 0): ["fig_1"], ("3.1", 1): ["fig_2"], ("4", 2): ["tab_0"]}

    for number, title, items in SECTIONS:
        style = h2 if "." in number else h1
        story.append(Paragraph(f"{escape(number)}&nbsp;&nbsp;&nbsp;{escape(title)}", style))
        first_par = True
        for i, item in enumerate(items):
            if isinstance(item, tuple):
                _, fid, ftext, label = item
                t = Table([[Paragraph(escape(ftext), formula_st), Paragraph(label, body_first)]],
                          colWidths=[col_w - 22, 22])
                t.setStyle(TableStyle([("LEFTPADDING", (0, 0), (-1, -1), 0),
                                       ("RIGHTPADDING", (0, 0), (-1, -1), 0),
                                       ("TOPPADDING", (0, 0), (-1, -1), 4),
                                       ("BOTTOMPADDING", (0, 0), (-1, -1), 4)]))
                story.append(t)
                first_par = True  # "where ..." continues the sentence: no indent
                continue
            story.append(Paragraph(pdf_markup(item), body_first if first_par else body))
            first_par = False
            for fid in float_after.get((number, i), []):
                story.extend(figure_flowables(fid))

    story.append(Paragraph("Acknowledgments", h1))
    story.append(Paragraph(escape(ACKNOWLEDGMENTS), body_first))
    story.append(CondPageBreak(60))
    story.append(Paragraph("References", h1))
    for ref in REFERENCES:
        story.append(Paragraph(escape(reference_line(ref)), ref_st))

    doc.build(story)
    return positions


# --------------------------------------------------------------------------------------
# TEI
# --------------------------------------------------------------------------------------

TEI_NS = "http://www.tei-c.org/ns/1.0"
DIV = f'<div xmlns="{TEI_NS}">'


def coords(pos: dict) -> str:
    return f"{pos['page']},{pos['x']:.2f},{pos['y']:.2f},{pos['w']:.2f},{pos['h']:.2f}"


def build_tei(positions: dict, pdf_md5: str) -> str:
    t = "\t"
    out = []
    w = out.append
    w('<?xml version="1.0" encoding="UTF-8"?>\n')
    w("<!-- scholarly_nlp demo paper (CC BY 4.0, the scholarly_nlp developers). Written by "
      "corpora/demo/make_demo_pdf.py in the form of GROBID 0.8.1 output for demo_paper.pdf; "
      "it was not produced by a GROBID run. -->\n")
    w(f'<TEI xml:space="preserve" xmlns="{TEI_NS}" \n'
      'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \n'
      f'xsi:schemaLocation="{TEI_NS} https://raw.githubusercontent.com/kermitt2/grobid/master/'
      'grobid-home/schemas/xsd/Grobid.xsd"\n'
      ' xmlns:xlink="http://www.w3.org/1999/xlink">\n')
    w(f'{t}<teiHeader xml:lang="en">\n')
    w(f"{t*2}<fileDesc>\n{t*3}<titleStmt>\n")
    w(f'{t*4}<title level="a" type="main">{escape(TITLE)}</title>\n')
    w(f"{t*3}</titleStmt>\n{t*3}<publicationStmt>\n{t*4}<publisher/>\n")
    w(f'{t*4}<availability  status="open">\n'
      f'{t*5}<licence target="{LICENCE_URL}"/>\n{t*4}</availability>\n')
    w(f"{t*3}</publicationStmt>\n{t*3}<sourceDesc>\n{t*4}<biblStruct>\n{t*5}<analytic>\n")
    w(f"{t*6}<author>\n"
      f"{t*7}<persName><surname>{escape(AUTHOR)}</surname></persName>\n"
      f'{t*7}<affiliation key="aff0">\n'
      f'{t*8}<orgName type="institution">{escape(AFFILIATION)}</orgName>\n'
      f"{t*7}</affiliation>\n{t*6}</author>\n")
    w(f'{t*6}<title level="a" type="main">{escape(TITLE)}</title>\n')
    w(f"{t*5}</analytic>\n{t*5}<monogr>\n{t*6}<imprint>\n{t*7}<date/>\n{t*6}</imprint>\n"
      f"{t*5}</monogr>\n")
    w(f'{t*5}<idno type="MD5">{pdf_md5.upper()}</idno>\n')
    w(f"{t*4}</biblStruct>\n{t*3}</sourceDesc>\n{t*2}</fileDesc>\n")
    w(f"{t*2}<encodingDesc>\n{t*3}<appInfo>\n"
      f'{t*4}<application version="0.8.1" ident="GROBID" when="2025-01-01T00:00+0000">\n'
      f"{t*5}<desc>GROBID - A machine learning software for extracting information from "
      f"scholarly documents</desc>\n"
      f'{t*5}<ref target="https://github.com/kermitt2/grobid"/>\n'
      f"{t*4}</application>\n{t*3}</appInfo>\n{t*2}</encodingDesc>\n")
    w(f"{t*2}<profileDesc>\n{t*3}<abstract>\n")
    w(f"{DIV}<p>{escape(ABSTRACT)}</p></div>\n")
    w(f"{t*3}</abstract>\n{t*2}</profileDesc>\n{t}</teiHeader>\n")
    w(f'{t}<text xml:lang="en">\n{t*2}<body>\n')

    for number, title, items in SECTIONS:
        parts = [f'{DIV}<head n="{number}">{escape(title)}</head>']
        for item in items:
            if isinstance(item, tuple):
                _, fid, ftext, label = item
                parts.append(f'<formula xml:id="{fid}">{escape(ftext)}<label>{label}</label>'
                             f"</formula>")
            else:
                parts.append(f"<p>{tei_markup(item)}</p>")
        parts.append("</div>\n")
        w("".join(parts))

    for fig in FIGURES:
        head = ("Table" if fig["kind"] == "table" else "Figure") + f" {fig['label']} :"
        pos = positions[fig["id"]]
        if fig["kind"] == "table":
            rows = "".join("<row>" + "".join(f"<cell>{escape(c)}</cell>" for c in r) + "</row>"
                           for r in TABLE_ROWS)
            w(f'<figure xmlns="{TEI_NS}" type="table" xml:id="{fig["id"]}">'
              f"<head>{head}</head><label>{fig['label']}</label>"
              f"<figDesc>{escape(fig['caption'])}</figDesc><table>{rows}</table></figure>\n")
        else:
            w(f'<figure xmlns="{TEI_NS}" xml:id="{fig["id"]}">'
              f"<head>{head}</head><label>{fig['label']}</label>"
              f"<figDesc>{escape(fig['caption'])}</figDesc>"
              f'<graphic coords="{coords(pos)}" type="vector_box" /></figure>\n')
    w(f'{t*3}<note xmlns="{TEI_NS}" place="foot">{escape(FOOTNOTE)}</note>\n')
    w(f"{t*2}</body>\n{t*2}<back>\n\n{t*3}<div type=\"acknowledgement\">\n"
      f"{DIV}<head>Acknowledgments</head><p>{escape(ACKNOWLEDGMENTS)}</p></div>\n"
      f"{t*3}</div>\n\n{t*3}<div type=\"references\">\n\n{t*4}<listBibl>\n\n")

    for ref in REFERENCES:
        b = [f'<biblStruct xml:id="{ref["id"]}">\n', f"{t}<analytic>\n",
             f'{t*2}<title level="a" type="main">{escape(ref["title"])}</title>\n']
        for fore, sur in ref["authors"]:
            names = fore.split()
            fn = f'<forename type="first">{escape(names[0])}</forename>'
            if len(names) > 1:
                fn += f'<forename type="middle">{escape(" ".join(names[1:]))}</forename>'
            b.append(f"{t*2}<author>\n{t*3}<persName>{fn}<surname>{escape(sur)}</surname>"
                     f"</persName>\n{t*2}</author>\n")
        if ref.get("doi"):
            b.append(f'{t*2}<idno type="DOI">{escape(ref["doi"])}</idno>\n')
        b.append(f"{t}</analytic>\n{t}<monogr>\n")
        b.append(f'{t*2}<title level="{ref["venue_level"]}">{escape(ref["venue"])}</title>\n')
        b.append(f"{t*2}<imprint>\n")
        if ref.get("volume"):
            b.append(f'{t*3}<biblScope unit="volume">{ref["volume"]}</biblScope>\n')
        b.append(f'{t*3}<date type="published" when="{ref["year"]}">{ref["year"]}</date>\n')
        b.append(f"{t*2}</imprint>\n{t}</monogr>\n")
        b.append(f'{t}<note type="raw_reference">{escape(reference_line(ref))}</note>\n')
        b.append("</biblStruct>\n\n")
        w("".join(b))

    w(f"{t*4}</listBibl>\n{t*3}</div>\n{t*2}</back>\n{t}</text>\n</TEI>\n")
    return "".join(out)


# --------------------------------------------------------------------------------------
# Expected outline (for tests)
# --------------------------------------------------------------------------------------

_SENT_RE = re.compile(r"(?<=[.?!])\s+(?=[A-Z(\[])")
_NAIVE_RE = re.compile(r"(?<=\.)\s+")


def _naive_split(text: str) -> list[str]:
    """What a naive splitter does: a new sentence after every period and space."""
    return _NAIVE_RE.split(text)


def tricky_sentences() -> list[dict]:
    """Sentences (as printed) that contain an abbreviation a naive splitter breaks on.

    The sentences are cut by rules checked by hand on this text: split where a period
    is followed by a space and a capital or "(", then glue a piece that ends in one of
    the abbreviations to the next piece. ``naive_pieces`` is the number of pieces a
    splitter that breaks after every period and space makes of the sentence.
    """
    blocks = [("abstract", ABSTRACT)]
    for number, _, items in SECTIONS:
        blocks += [(number, plain(i)) for i in items if isinstance(i, str)]
    blocks += [(f["id"], caption_line(f)) for f in FIGURES]
    abbrev_end = re.compile(r"(?:\b(?:Figs?|Eq|Sect|al|cf)\.|\be\.g\.|\bi\.e\.)$")
    found = []
    for where, text in blocks:
        pieces = _SENT_RE.split(text)
        sents, cur = [], ""
        for p in pieces:
            cur = f"{cur} {p}" if cur else p
            if not abbrev_end.search(cur):
                sents.append(cur)
                cur = ""
        if cur:
            sents.append(cur)
        for s in sents:
            hits = [a for a in TRICKY_ABBREVIATIONS
                    if re.search(r"(?<![A-Za-z])" + re.escape(a) + r"(?=\s|$)", s)]
            if hits:
                found.append({"block": where, "sentence": s, "abbreviations": hits,
                              "naive_pieces": len(_naive_split(s))})
    return found


def _bbox_of(pos: dict) -> list[float]:
    x, y, w, h = (round(pos[k], 2) for k in ("x", "y", "w", "h"))
    return [x, y, round(x + w, 2), round(y + h, 2)]


def expected_outline(positions: dict, n_pages: int) -> dict:
    sections = [{"number": n, "title": t, "level": n.count(".") + 1} for n, t, _ in SECTIONS]
    refs = [r for _, _, items in SECTIONS for i in items if isinstance(i, str) for r in refs_of(i)]
    figures = []
    for f in FIGURES:
        p = positions[f["id"]]
        figures.append({
            "id": f["id"], "kind": f["kind"], "label": f["label"],
            "caption": caption_line(f), "page": p["page"],
            # the rounding of the TEI coords ("page,x,y,w,h" with 2 decimals), so both agree
            "bbox": _bbox_of(p),
        })
    return {
        "title": TITLE,
        "authors": [AUTHOR],
        "licence": "CC-BY-4.0",
        "pages": n_pages,
        "abstract": ABSTRACT,
        "sections": sections,
        "figures": figures,
        "formulas": [{"id": i[1], "text": i[2], "label": i[3]}
                     for _, _, items in SECTIONS for i in items if isinstance(i, tuple)],
        "inline_refs": {
            "bibr": sum(r["kind"] == "bibr" for r in refs),
            "figure": sum(r["kind"] == "figure" for r in refs),
            "figure_without_target": [r["text"] for r in refs
                                      if r["kind"] == "figure" and not r["target"]],
            "table": sum(r["kind"] == "table" for r in refs),
            "formula": sum(r["kind"] == "formula" for r in refs),
            "figure_mentions_by_target": {
                fid: sum(r["target"] == fid for r in refs) for fid in
                [f["id"] for f in FIGURES]},
        },
        "bibliography": [{"id": r["id"], "title": r["title"],
                          "authors": [f"{a} {b}" for a, b in r["authors"]],
                          "year": r["year"], "venue": r["venue"], "doi": r["doi"]}
                         for r in REFERENCES],
        "running_text_to_drop": [RUNNING_HEAD, SHORT_TITLE, "page numbers 1.." + str(n_pages)],
        "tricky_sentences": tricky_sentences(),
    }


# --------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------

def generate(out_dir: Path) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    pdf = out_dir / "demo_paper.pdf"
    positions = build_pdf(pdf)
    data = pdf.read_bytes()
    n_pages = len(re.findall(rb"/Type /Page\b", data))
    tei = out_dir / "demo_paper.tei.xml"
    tei.write_text(build_tei(positions, hashlib.md5(data).hexdigest()), encoding="utf-8")
    js = out_dir / "demo_paper.expected.json"
    js.write_text(json.dumps(expected_outline(positions, n_pages), indent=2,
                             ensure_ascii=False) + "\n", encoding="utf-8")
    return {"pdf": pdf, "tei": tei, "json": js}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out-dir", type=Path, default=HERE,
                    help="where to write the files (default: next to this script)")
    ap.add_argument("--check", action="store_true",
                    help="rebuild in a temporary folder and compare with the files here")
    args = ap.parse_args(argv)
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            new = generate(Path(tmp))
            stale = []
            for path in new.values():
                old = HERE / path.name
                if not old.exists() or old.read_bytes() != path.read_bytes():
                    stale.append(path.name)
            if stale:
                # The PDF bytes may differ with another reportlab version; the TEI records
                # the PDF's MD5, so it then differs too. Rebuild and commit all three.
                print("stale (rerun make_demo_pdf.py):", ", ".join(stale))
                return 1
            print("demo paper files are up to date")
            return 0
    files = generate(args.out_dir)
    for path in files.values():
        print(f"wrote {path} ({path.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
