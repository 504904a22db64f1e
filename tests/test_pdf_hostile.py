"""Hostile PDFs cost bounded time and memory, and fail, if at all, for the right reason (issue 15).

Every PDF is written by hand in the test (``pdf_samples``). Reads that a regression would make
explode go through ``read_paper`` with limits, so that a regression fails the test ("exceeded
the ... limit") instead of taking the machine's memory.
"""

from __future__ import annotations

import random
from pathlib import Path
import warnings

import numpy as np
import pytest

from pdf_samples import figure_pdf, fragments_pdf, paragraph_lines, pdf_bytes, text_page
from scholarly_nlp.errors import EmptyDocumentError, EncryptedPDFError
from scholarly_nlp.readers.dispatch import read_paper, read_papers
from scholarly_nlp.readers.limits import ReadLimits
from scholarly_nlp.readers.pdf import layout, nearby, read_pdf
from synthetic_lines import line

GUARD = ReadLimits(time_s=60, memory_mib=1024)


def body_text(paper) -> str:
    return " ".join(block.text for block in paper.blocks)


# -- a page of 3e7 points -------------------------------------------------------------------


def test_a_page_thirty_million_points_wide_is_read_in_bounded_memory(tmp_path):
    side = 3e7
    path = tmp_path / "huge_page.pdf"
    path.write_bytes(pdf_bytes([text_page(side, side, paragraph_lines(side, side))]))
    assert path.stat().st_size < 5000
    paper = read_paper(path, "pdf", limits=GUARD)
    assert "recovers paragraphs from this page" in body_text(paper)


def test_gutter_candidates_are_one_per_point_on_real_pages_and_capped_on_huge_ones():
    assert np.array_equal(layout._gutter_candidates(612.0), np.arange(153.0, 459.0, 1.0))
    assert len(layout._gutter_candidates(3e7)) <= layout._MAX_GUTTER_CANDIDATES


def test_gutter_sums_equal_the_lines_by_candidates_product():
    rng = random.Random(15)
    for _ in range(50):
        width = rng.choice([595.0, 612.0, 842.0])
        x0 = np.array([round(rng.uniform(-5, width), rng.randint(0, 2)) for _ in range(40)])
        x1 = x0 + np.array([round(rng.uniform(0, width / 2), rng.randint(0, 2)) for _ in range(40)])
        weight = np.array([float(rng.randint(8, 90)) for _ in range(40)])
        xs = layout._gutter_candidates(width)
        crossing = layout._run_sums(xs, weight, np.searchsorted(xs - 2, x0, side="right"), np.searchsorted(xs + 2, x1))
        expected = ((x0[:, None] < xs - 2) & (x1[:, None] > xs + 2)).astype(float).T @ weight
        assert np.array_equal(crossing, expected)


# -- tens of thousands of one-letter text objects ----------------------------------------------


def test_a_page_of_ten_thousand_one_letter_objects_is_read(tmp_path):
    path = tmp_path / "fragments.pdf"
    path.write_bytes(fragments_pdf(10_000))
    paper = read_paper(path, "pdf", limits=GUARD)
    assert "recovers paragraphs from this page" in body_text(paper)


def neighbour_work(monkeypatch, tmp_path, n: int) -> int:
    """How many neighbouring lines the PDF reader looks at on a page of n fragments."""
    looked = [0]
    around = nearby.SortedLines.around

    def counting(self, value, below, above):
        found = around(self, value, below, above)
        looked[0] += len(found)
        return found

    monkeypatch.setattr(nearby.SortedLines, "around", counting)
    path = tmp_path / f"fragments_{n}.pdf"
    path.write_bytes(fragments_pdf(n))
    read_pdf(path)
    return looked[0]


def test_neighbour_look_ups_grow_linearly_with_the_fragments(monkeypatch, tmp_path):
    small, large = neighbour_work(monkeypatch, tmp_path, 1500), neighbour_work(monkeypatch, tmp_path, 3000)
    assert small > 1500  # the fragments are looked at (each its own line)
    assert large < 2.5 * small  # all pairs would be 4 times


def test_a_superscript_and_a_fragment_it_hosts_join_the_line_below_them():
    host = line("the result holds for every", 72, 100, 10)
    note = line("12", 175, 97, 6)  # raised at the end of the line
    tiny = line("a", 176, 98, 3)  # smaller still: joins the note, which then joins the line
    other = line("a line further down the page", 72, 130, 10)
    merged = layout._attach_scripts([host, note, tiny, other])
    assert merged == [host, other]
    assert host.text == "the result holds for every 12 a"
    assert host.base == pytest.approx(100 + 11.5)  # the line keeps its baseline


# -- right reasons ---------------------------------------------------------------------------


def test_a_zero_page_pdf_has_no_pages_even_right_after_an_encrypted_one(tmp_path):
    pypdf = pytest.importorskip("pypdf")
    writer = pypdf.PdfWriter()
    writer.add_blank_page(612, 792)
    writer.encrypt(user_password="secret", owner_password="owner")
    locked, empty = tmp_path / "locked.pdf", tmp_path / "no_pages.pdf"
    with locked.open("wb") as handle:
        writer.write(handle)
    empty.write_bytes(pdf_bytes([]))
    for path, error, reason in [(empty, EmptyDocumentError, "has no pages"),
                                (locked, EncryptedPDFError, "needs a password"),
                                (empty, EmptyDocumentError, "has no pages")]:
        with pytest.raises(error, match=reason) as info:
            read_pdf(path)  # in this process: pdfium's last error code outlives the encrypted PDF
        assert str(path) in str(info.value)


def test_figure_images_that_cannot_be_written_are_a_warning_not_a_failure(tmp_path):
    pdf = tmp_path / "figure.pdf"
    pdf.write_bytes(figure_pdf())
    written = read_pdf(pdf, image_dir=tmp_path / "images")
    assert written.figures[0].image_path and written.figures[0].bbox
    not_a_folder = tmp_path / "a_file"
    not_a_folder.write_text("x")
    with pytest.warns(UserWarning, match="figure images not written") as caught:
        paper = read_pdf(pdf, image_dir=not_a_folder / "images")
    assert str(pdf) in str(caught[0].message)
    assert paper.figures[0].image_path is None and paper.figures[0].bbox == written.figures[0].bbox
    assert body_text(paper) == body_text(written)
    paper = read_pdf(pdf, paper_id="p" * 300, image_dir=tmp_path / "images")  # a name too long for a file
    image = Path(paper.figures[0].image_path)
    assert image.is_file() and len(image.name.encode()) <= 255 and image.name.startswith("p" * 100)


def test_an_image_failure_in_a_batch_reads_the_paper_and_warns_here(tmp_path):
    pdf = tmp_path / "figure.pdf"
    pdf.write_bytes(figure_pdf())
    (tmp_path / "a_file").write_text("x")
    options = {"pdf": {"image_dir": str(tmp_path / "a_file" / "images")}}
    with pytest.warns(UserWarning, match="figure images not written"):  # raised in the reader's child process
        results = list(read_papers([str(pdf)], reader_options=options, limits=GUARD))
    assert results[0].ok and results[0].paper.figures[0].image_path is None


def test_no_warning_when_images_are_written(tmp_path):
    pdf = tmp_path / "figure.pdf"
    pdf.write_bytes(figure_pdf())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        paper = read_pdf(pdf, image_dir=tmp_path / "images")
    assert (tmp_path / "images" / "figure_fig_0.png").is_file() and paper.figures[0].image_path


@pytest.mark.slow
def test_a_500_page_pdf_is_read_in_bounded_memory(tmp_path):
    """500 pages of text (generated): every page is read, and the reader's peak memory grows
    by well under a megabyte a page (pdfium's pages are released after extraction), measured
    in a child process so the suite's own memory does not count."""
    import multiprocessing
    import resource

    from scholarly_nlp.readers import read_pdf

    pages = [text_page(612, 792, [(72, 740, 14, f"Part {i}")] + paragraph_lines(612, 792, 45)) for i in range(500)]
    path = tmp_path / "long.pdf"
    path.write_bytes(pdf_bytes(pages, compress=True))

    def measure(queue):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        paper = read_pdf(path)
        grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
        words = sum(len(b.text.split()) for b in paper.blocks)
        queue.put((grown_mib, words))

    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=measure, args=(queue,))
    child.start()
    grown_mib, words = queue.get(timeout=300)
    child.join()
    assert words >= 500 * 45 * 10, "every page's text is read"
    assert grown_mib < 300, f"peak memory grew by {grown_mib:.0f} MiB for 500 pages"


def test_a_display_formula_set_big_is_no_title(tmp_path):
    """A00-2018's title came out as "= arg maxTrp(lr).": a formula in a big size above the
    real title is passed over."""
    width, height = 612, 792
    lines = [(200, 720, 20, "= arg max Tr p(l|r)."), (120, 680, 16, "A Maximum Entropy Inspired Parser")]
    lines += paragraph_lines(width, height - 140)
    path = tmp_path / "formula.pdf"
    path.write_bytes(pdf_bytes([text_page(width, height, lines)]))
    assert read_pdf(path).title == "A Maximum Entropy Inspired Parser"
