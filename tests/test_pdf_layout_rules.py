"""Layout rules on synthetic lines, where the real papers that need them (tests/test_pdf_publishers.py,
tests/test_paper_authors.py) only run with ``../shared/data``: a column running on below the
other's end, band edges, a mark hung left of the line it opens, the keywords label."""

from __future__ import annotations

from scholarly_nlp.readers.pdf import classification, layout
from scholarly_nlp.readers.pdf.model import Line
from synthetic_lines import line


def test_a_column_running_on_below_the_others_end_is_no_full_width_zone():
    """The last page of a reference list: the left column goes on below the right one's end;
    under a full-width appendix, or a table whose cells sit on both sides, the page has zones."""
    split = 300.0
    left_only = [line("a reference that goes on", 72, 500 + 12 * i) for i in range(5)]
    assert layout._one_side_below(left_only, split, 450.0)
    appendix = left_only + [line("Appendix A: a full-width paragraph across the gutter of the page", 72, 600)]
    assert not layout._one_side_below(appendix, split, 450.0)
    table = left_only + [line("cell", 350, 500)]
    assert not layout._one_side_below(table, split, 450.0)
    assert not layout._one_side_below(left_only, split, 700.0)  # nothing below


def test_a_band_has_edges_of_its_own_only_where_its_lines_share_a_start():
    prose = [line("running text of a paragraph in its column", 310, 100 + 12 * i) for i in range(6)]
    assert layout._shared_start(prose)
    centred = [line("a centred title row", 200 + 7 * i, 100 + 12 * i) for i in range(6)]
    assert not layout._shared_start(centred)


def test_a_raised_mark_opens_the_line_right_of_it_but_a_subscript_or_a_formula_piece_does_not():
    host = line("Instituto de Silvicultura e Industria de la Madera", 184.8, 198.4, 9.0)
    mark = line("1", 180.4, 197.5, 6.0)  # raised: its foot 4.6 pt over the host's
    hosts = layout._ScriptHosts([host, mark])
    assert hosts.find(mark) is host
    lowered = line("1", 180.4, 203.0, 6.0)  # a subscript: its foot under the host's
    assert layout._ScriptHosts([host, lowered]).find(lowered) is None
    piece = line("f", 170.0, 198.4, 9.0)  # a formula's letter just left of the script
    assert layout._ScriptHosts([host, mark, piece]).find(mark) is None


def test_a_mark_opening_a_piece_does_not_join_it_to_its_neighbour():
    """P13-1059: "† Computer Science ..." and "‡ Speech Technology ..." side by side stay two."""
    # a raised 6-pt mark, then the text on its 9-pt baseline
    mark, text = line("\u2021", 345.3, 129.6, 6.0), line("Speech Technology", 351.4, 129.8, 9.0)
    opened = Line(mark.words + text.words, 0)
    assert layout._text_x0(opened) == text.x0
    plain = line("Speech Technology", 351.4, 129.6, 9.0)
    assert layout._text_x0(plain) == plain.x0
    number = line("40 and from 80 to 85 km", 103.9, 327.4, 6.0)  # ApJ: "l \u2264 40" cut at the unmapped sign
    assert layout._text_x0(number) == number.x0


def test_the_keywords_label_is_not_a_head_that_opens_with_its_word():
    label = classification._KEYWORDS_LABEL_RE
    for text in ("KEYWORDS", "Keywords: animal behavior", "CCS CONCEPTS", "Index Terms\u2014deep learning",
                 "Subjects."):
        assert label.match(text), text
    for text in ("Subjects and Methods", "Keyword extraction with graphs"):
        assert not label.match(text), text
