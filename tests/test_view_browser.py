"""The HTML view in a real headless browser (issue 17): Debian's Chromium driven by
Playwright. Skipped where Chromium or Playwright is missing, unless
``SCHOLARLY_NLP_REQUIRE_BROWSER=1`` (``.ci/run`` installs Chromium and sets it)."""

from __future__ import annotations

import os
import shutil

import pytest
from click.testing import CliRunner

import scholarly_nlp
from scholarly_nlp.cli import cli, demo_dir

from conftest import shared
from test_view import PAPER, paper_record

CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _missing(what: str):
    if os.environ.get("SCHOLARLY_NLP_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{what} is required (SCHOLARLY_NLP_REQUIRE_BROWSER=1)")
    pytest.skip(f"{what} is not installed")


@pytest.fixture(scope="module")
def browser():
    executable = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        _missing("Chromium (Debian package chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("Playwright (pip install playwright)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        yield launched
        launched.close()


def open_page(browser, path):
    """A browser tab showing ``path``, and the console errors and page errors it reports."""
    tab = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    tab.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.on("requestfailed", lambda request: errors.append(f"request failed: {request.url}"))
    tab.goto(path.as_uri())
    tab.wait_for_load_state("load")
    return tab, errors


def not_blank(png: bytes) -> bool:
    """Whether a screenshot shows more than one colour (decoded with Pillow)."""
    import io

    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("L")
    low, high = image.getextrema()
    return high - low > 100


@pytest.fixture(scope="module")
def analysed(pipeline_dir, tmp_path_factory):
    """``analyze --format html`` over the demo PDF (figures with images) and a real TEI paper."""
    out = tmp_path_factory.mktemp("view")
    inputs = [str(demo_dir() / "demo_paper.pdf"), str(shared("tei", "acl", f"{PAPER}.tei.xml"))]
    result = CliRunner().invoke(cli, ["analyze", *inputs, "--out", str(out), "--pipeline", str(pipeline_dir),
                                      "--format", "html", "--quiet"])
    assert result.exit_code == 0, result.output
    return out


@pytest.mark.parametrize("name", ["demo_paper", PAPER, "index"])
def test_pages_load_without_errors_and_show_something(browser, analysed, name):
    tab, errors = open_page(browser, analysed / f"{name}.html")
    assert not errors, errors
    assert not_blank(tab.screenshot())
    images = tab.locator("img")
    for i in range(images.count()):  # images load lazily: bring each into view
        images.nth(i).scroll_into_view_if_needed()
        tab.wait_for_function("img => img.complete", arg=images.nth(i).element_handle())
    found = tab.eval_on_selector_all("img", "els => els.map(e => [e.getAttribute('alt'), e.naturalWidth])")
    assert all(alt and alt.strip() for alt, _ in found), "every image has alt text"
    assert all(width > 0 for _, width in found), "every image loads"
    images = found
    if name == "demo_paper":
        assert len(images) == 3
    tab.close()


@pytest.fixture(scope="module")
def linked_page(tmp_path_factory):
    """The paper's page with a contribution linked to a body paragraph (test_view's record)."""
    doc = scholarly_nlp.read(shared("tei", "acl", f"{PAPER}.tei.xml"))
    path = tmp_path_factory.mktemp("linked") / "page.html"
    path.write_text(scholarly_nlp.render(doc, record=paper_record(doc)), encoding="utf-8")
    return path


def test_a_contribution_link_scrolls_to_its_paragraph_and_highlights_it(browser, linked_page):
    tab, errors = open_page(browser, linked_page)
    jump = tab.locator("mark#c0 + a.jump")
    target = jump.get_attribute("href").lstrip("#")
    jump.click()
    assert tab.evaluate("document.querySelector(':target').id") == target
    top = tab.evaluate(f"document.getElementById('{target}').getBoundingClientRect().top")
    assert -2 <= top < 800, "the paragraph is scrolled into view"
    outline = tab.evaluate(f"getComputedStyle(document.getElementById('{target}')).outlineStyle")
    assert outline == "solid", "the paragraph is highlighted"
    tab.locator(f"#{target} a.back").click()
    assert tab.evaluate("document.querySelector(':target').id") == "c0"
    assert not errors, errors
    tab.close()


def test_a_citation_marker_reveals_its_entry_on_focus_and_keyboard_reaches_it(browser, linked_page):
    tab, errors = open_page(browser, linked_page)
    # keyboard: Tab from the top reaches the outline's first link, Enter follows it
    tab.keyboard.press("Tab")
    assert tab.evaluate("document.activeElement.getAttribute('href')") == "#abstract"
    tab.keyboard.press("Enter")
    assert tab.evaluate("document.querySelector(':target').id") == "abstract"
    tip = tab.locator("a.cite .tip").first
    assert not tip.is_visible()
    tab.locator("a.cite").first.focus()
    assert tip.is_visible()
    assert tip.inner_text().strip()
    tab.locator("a.cite").first.blur()
    tab.locator("a.cite").nth(1).hover()
    assert tab.locator("a.cite .tip").nth(1).is_visible()
    assert not errors, errors
    tab.close()
