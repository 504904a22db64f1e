"""Pages set sideways (a landscape table on a portrait page, a figure page turned a quarter):
read in the frame their text runs in, not dropped as text "set at an angle"."""

from __future__ import annotations

import warnings

import pytest
from PIL import Image

from conftest import data_path, need
from scholarly_nlp.readers import read_pdf
from scholarly_nlp.readers.pdf.frame import Frame

PAIRS = data_path("pdf-pairs")


@pytest.mark.parametrize("turn", [0, 90, -90])
def test_a_frame_box_goes_back_to_the_same_page_box(turn):
    frame = Frame(turn, 10.0, 20.0, 622.0, 812.0)
    page_box = (100.0, 300.0, 180.0, 312.0)
    x0, y0, x1, y1 = frame.box(*page_box)
    assert x0 < x1 and y0 < y1
    assert 0 <= x0 and x1 <= frame.width and 0 <= y0 and y1 <= frame.height
    assert frame.page_box(x0, y0, x1, y1) == pytest.approx(page_box)


def test_text_reading_upwards_runs_along_the_frame():
    """Two glyphs of a line set reading upwards (the second above the first on the page) follow
    each other left to right in the frame, on one row; the next line, to their right on the page,
    is under them."""
    frame = Frame(90, 0.0, 0.0, 612.0, 792.0)
    first, second, next_line = (frame.box(300, 100, 310, 106), frame.box(300, 106, 310, 112),
                                frame.box(314, 100, 324, 106))
    assert first[2] <= second[0] and first[1] == second[1]
    assert next_line[1] > first[1] and next_line[0] == first[0]


def test_text_reading_downwards_runs_along_the_frame():
    """Reading downwards (-90), the next glyph is below on the page and the next line to its left."""
    frame = Frame(-90, 0.0, 0.0, 612.0, 792.0)
    first, second, next_line = (frame.box(300, 106, 310, 112), frame.box(300, 100, 310, 106),
                                frame.box(286, 106, 296, 112))
    assert first[2] <= second[0] and first[1] == second[1]
    assert next_line[1] > first[1] and next_line[0] == first[0]


@pytest.mark.needs_data("pdf-pairs")
def test_figure_pages_turned_a_quarter_keep_their_captions_and_upright_images(tmp_path):
    """ApJS (BUFCRAOGRS): Fig. 1 and Fig. 2 fill pages set sideways (/Rotate 90); their captions
    were dropped as angled text, and their figures with them."""
    need(PAIRS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        paper = read_pdf(PAIRS / "mauricio_BUFCRAOGRS.pdf", image_dir=tmp_path)
    captions = {b.figure_id: b.text for b in paper.blocks if b.kind == "caption"}
    figures = {}
    for figure in paper.figures:  # "Fig. 2.\u2014Continued" on the next page has the label too
        if figure.kind == "figure":
            figures.setdefault(figure.label, figure)
    assert captions[figures["1"].id].startswith("Fig. 1.\u2014Integrated intensity image (zeroth-moment map)")
    # no gutter on a turned page: a gap in the caption's first row ("longitudesl [\u2272] 40") cuts nothing
    assert "40 and VLSR \u00bc5 to 85 km s1 for Galactic longitudes" in captions[figures["1"].id]
    assert captions[figures["2"].id].startswith("Fig. 2.\u2014Channel maps of GRS 13CO emission")
    assert figures["1"].page == 4 and figures["2"].page == 5
    width, height = Image.open(figures["1"].image_path).size
    assert width > 1.5 * height  # three wide maps stacked: the crop is turned upright


@pytest.mark.needs_data("pdf-pairs")
def test_a_landscape_table_on_a_portrait_page_is_read():
    """J. Gastroenterol. Hepatol. (Wiley, AIPNAFLDF): Table 3 runs up its page."""
    need(PAIRS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        paper = read_pdf(PAIRS / "mauricio_AIPNAFLDF.pdf")
    tables = {f.label: f for f in paper.figures if f.kind == "table"}
    assert tables["3"].page == 6
    x0, _, x1, _ = tables["3"].bbox  # across the turned page (780 pt), not one portrait column's half
    assert x1 - x0 > 600
    assert any(b.text == "Table 3 Studies on the use of AI to evaluate NAFLD" for b in paper.blocks if b.kind == "caption")
