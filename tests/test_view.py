"""The HTML view of an analysed paper (issue 17): ``scholarly_nlp.render`` and
``scholarly-nlp analyze --format html``, on real papers of ``../shared/data``."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from click.testing import CliRunner

import scholarly_nlp
from scholarly_nlp.analysis import analysis_record
from scholarly_nlp.cli import cli
from scholarly_nlp.view.markup import Inline, mark_up

from conftest import shared

PAPER = "P17-1001"  # 7 figures, 34 references, markers linked in the text
VOID = {"meta", "img", "br", "input", "link", "hr"}


class _Tree(HTMLParser):
    """Checks that every element closes in order and collects ids, links and attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.attributes: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        values = dict(attrs)
        self.attributes.extend(name for name, _ in attrs)
        if "id" in values:
            if values["id"] in self.ids:
                self.errors.append(f"duplicate id {values['id']}")
            self.ids.add(values["id"])
        if tag == "a" and values.get("href", "").startswith("#"):
            self.links.append(values["href"][1:])
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:]}")
        else:
            self.stack.pop()


def parsed(page: str) -> _Tree:
    tree = _Tree()
    tree.feed(page)
    tree.close()
    assert not tree.errors and not tree.stack, (tree.errors[:5], tree.stack)
    return tree


@pytest.fixture(scope="module")
def doc():
    return scholarly_nlp.read(shared("tei", "acl", f"{PAPER}.tei.xml"))


@pytest.fixture(scope="module")
def record(doc):
    return paper_record(doc)


def paper_record(doc):
    """The core record plus what the pipes would add, built from the paper's own spans: the
    second figure central, an introduction sentence linked to the fourth body paragraph."""
    record = analysis_record(doc)
    figures = doc._.figures
    record["central_figure"] = figures[1].id
    record["figures"] = [{"id": f.id, "score": float(len(figures) - i), "rank": i + 1} for i, f in enumerate(figures)]
    record["figures"][1]["signals"] = {"caption": 1.5, "mentions": 2.0, "context": 0.25, "caption_dense": 0.42}
    record["figures"][2]["signals"] = {"mentions": 1.0, "{odd}": 0.5, "flag": True}
    intro = doc._.sections[0].paragraphs[0]
    sentence = next(iter(intro.sents))
    target = doc.spans["paragraphs"][3]
    record["contributions"] = [{
        "sentence": {"start_char": sentence.start_char, "end_char": sentence.end_char, "text": sentence.text},
        "paragraphs": [{"start_char": target.start_char, "end_char": target.end_char,
                        "text_start": target.text[:80], "score": 0.9}],
    }]
    record["citances"][0]["facets"] = ["Method"]
    return record


def test_the_page_is_well_formed_and_every_jump_lands(doc, record):
    page = scholarly_nlp.render(doc, record=record)
    tree = parsed(page)
    assert set(tree.links) <= tree.ids, sorted(set(tree.links) - tree.ids)[:5]
    assert "script" not in tree.tags and not any(a.startswith("on") for a in tree.attributes)
    assert "<title>Adversarial Multi-task Learning for Text Classification</title>" in page


def test_sections_form_a_nested_numbered_outline(doc, record):
    page = scholarly_nlp.render(doc, record=record)
    outline = re.search(r"<nav class=\"outline\".*?</nav>", page).group(0)
    assert '<a href="#s0">1 Introduction</a>' in outline
    # "3.1" sits in a list inside "3"'s item
    assert re.search(r"3 Multi-task Learning for Text Classification</a><ol><li><a href=\"#s\d+\">3\.1 ", outline)


def test_a_contribution_jumps_to_its_paragraph_and_back(doc, record):
    page = scholarly_nlp.render(doc, record=record)
    mark = re.search(r'<mark class="contribution" id="c0"[^>]*>(.*?)</mark><a class="jump" href="#(p\d+)"', page)
    assert mark, "the contribution sentence is marked with its jump link"
    target = mark.group(2)
    paragraph = re.search(rf'<p id="{target}"[^>]*>(.*?)</p>', page).group(1)
    assert '<a class="back" href="#c0"' in paragraph
    assert doc.spans["paragraphs"][3].text[:40] in re.sub(r"<[^>]+>", "", paragraph).replace("&#x27;", "'")


def test_markers_carry_their_entries_and_the_central_figure_is_marked(doc, record):
    page = scholarly_nlp.render(doc, record=record)
    cite = re.search(r'<a class="cite" href="#ref-(b\d+)">.*?<span class="tip" role="tooltip">(.*?)</span></a>', page)
    assert cite, "a linked marker shows its bibliography entry"
    entry = doc._.bibliography[cite.group(1)]
    assert entry["title"][:20] in cite.group(2)
    central = record["central_figure"]
    assert re.search(rf'<figure id="{central}" class="central">.*?central figure</span><span class="score">'
                     r"score [-\d.e]+, rank 2", page)
    assert '<span class="badge">Method</span>' in page


def test_a_figure_shows_the_signals_behind_its_score(doc, record):
    page = scholarly_nlp.render(doc, record=record)
    central = re.search(rf'<figure id="{record["central_figure"]}" class="central">.*?</figure>', page).group(0)
    assert ('<span class="why">caption match 1.50, referred to 2 times, referring text 0.25, '
            'caption-abstract cosine 0.42</span>') in central
    other = re.search(rf'<figure id="{record["figures"][0]["id"]}".*?</figure>', page).group(0)
    assert 'class="why"' not in other  # no signals recorded for it
    third = re.search(rf'<figure id="{record["figures"][2]["id"]}".*?</figure>', page).group(0)
    assert '<span class="why">referred to 1 time, {odd} 0.50</span>' in third  # unknown names as they are


def test_text_from_the_paper_is_escaped(tmp_path):
    """A TEI whose title and a paragraph hold markup renders them as text."""
    source = shared("tei", "acl", f"{PAPER}.tei.xml").read_text(encoding="utf-8")
    hostile = '&lt;script&gt;alert("x")&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;'
    source = re.sub(r"(<titleStmt>\s*<title[^>]*>)[^<]*", rf"\g<1>{hostile}", source, count=1)
    path = tmp_path / "hostile.tei.xml"
    path.write_text(source, encoding="utf-8")
    doc = scholarly_nlp.read(path)
    assert doc._.paper_meta and "<script>" in scholarly_nlp.analysis_record(doc)["title"]
    page = scholarly_nlp.render(doc)
    tree = parsed(page)
    assert "script" not in tree.tags and "onerror" not in tree.attributes
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page


def test_inline_markup_nests_drops_crossings_and_escapes():
    text = "a <b> & c"
    inlines = [Inline(0, 9, "<q>", "</q>"), Inline(2, 5, "<i>", "</i>", "!"), Inline(4, 7, "<u>", "</u>")]
    assert mark_up(text, 0, inlines) == "<q>a <i>&lt;b&gt;</i>! &amp; c</q>"
    assert mark_up(text, 10, [Inline(12, 15, "<i>", "</i>")]) == "a <i>&lt;b&gt;</i> &amp; c"


def test_analyze_writes_pages_and_an_index_with_failures(pipeline_dir, tmp_path):
    out = tmp_path / "out"
    broken = tmp_path / "broken.tei.xml"
    broken.write_text("<TEI><text><body><p>unclosed", encoding="utf-8")
    inputs = [str(shared("tei", "acl", f"{PAPER}.tei.xml")), str(broken)]
    result = CliRunner().invoke(cli, ["analyze", *inputs, "--out", str(out), "--pipeline", str(pipeline_dir),
                                      "--format", "json,html", "--quiet"])
    assert result.exit_code == 1, result.output
    assert (out / f"{PAPER}.analysis.json").exists()
    page = (out / f"{PAPER}.html").read_text(encoding="utf-8")
    parsed(page)
    index = (out / "index.html").read_text(encoding="utf-8")
    tree = parsed(index)
    assert f'<a href="{PAPER}.html">Adversarial Multi-task Learning' in index
    assert "broken.tei.xml" in index and "failed:" in index and "script" not in tree.tags
    html_only = tmp_path / "html_only"
    result = CliRunner().invoke(cli, ["analyze", inputs[0], "--out", str(html_only), "--pipeline", str(pipeline_dir),
                                      "--format", "html", "--quiet"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in html_only.iterdir() if not p.name.startswith(".")) == [f"{PAPER}.html", "index.html"]


def test_display_formulas_and_their_references_are_shown_in_place(doc, record):
    """P17-1001's 17 display formulas sit between their section's paragraphs, labelled, and
    every "Eq. (n)" link lands on its formula."""
    page = scholarly_nlp.render(doc, record=record)
    tree = parsed(page)
    formulas = re.findall(r'<div class="formula" id="(eq-[^"]+)"><code>(.*?)</code>', page)
    assert len(formulas) == len(doc._.formulas) == 17
    assert all(text.strip() for _, text in formulas)
    assert {link for link in tree.links if link.startswith("eq-")} <= {fid for fid, _ in formulas}


def test_the_similar_panel_shows_each_aspects_papers_with_their_explaining_sentences(doc, record):
    with_similar = dict(record, similar={"method": [{
        "rank": 1, "paper_id": "P16-1029", "title": "Sentiment <Domain> Adaptation", "distance": 1.3,
        "aspect_scores": {"background": 0.34, "method": 0.39},
        "explanation": {"query_sentence": "We conduct experiments.", "query_aspect": "method",
                        "candidate_sentence": "Experimental results show it.", "candidate_aspect": "result",
                        "similarity": 0.71}}], "result": []})
    page = scholarly_nlp.render(doc, record=with_similar)
    parsed(page)
    panel = re.search(r'<section id="similar">.*?</section>', page).group(0)
    assert "<h3>Method</h3>" in panel and "<h3>Result</h3>" not in panel
    assert "Sentiment &lt;Domain&gt; Adaptation" in panel and "method 0.39" in panel
    assert "We conduct experiments." in panel and "(cos 0.71)" in panel
    assert '<a href="#similar">Similar papers</a>' in page
