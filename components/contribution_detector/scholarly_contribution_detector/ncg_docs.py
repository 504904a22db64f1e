"""NLPContributionGraph papers as training Docs for the contribution detector.

:func:`ncg_doc` turns one :class:`~scholarly_nlp.readers.ncg.NCGPaper` into a paper Doc:

* text = the Stanza sentences joined by ``" "`` (words = their space-separated tokens),
  one Doc sentence per NCG sentence (``sent_starts``);
* span groups laid out like a TEI paper's, so that
  :func:`scholarly_nlp.introduction_and_body` finds the
  introduction of :func:`scholarly_nlp.readers.ncg.introduction_mask`: ``title``,
  ``abstract``, ``section_heads`` (the heading lines), ``sections`` (one span per body
  section from its heading; the introduction's span runs to its last sentence, over its
  "contribution"/"motivation" subsections) and ``paragraphs`` (each run of non-heading
  sentences of a body section);
* ``doc._.paper_meta = {"paper_id", "source": "ncg", "task"}``;
* ``doc._.contribution_gold``: one ``{"start", "end", "label", "features"}`` per
  introduction sentence (token offsets, 0/1 gold label, context pseudo-tokens of
  :func:`.features.introduction_features`), the training signal of the pipe.

Docs made here survive :func:`scholarly_nlp.save_docbin`, so ``spacy train`` with
``scholarly_nlp.PaperCorpus.v1`` reads them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable, Iterator, Union

from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.training import Example
from spacy.util import registry
from spacy.vocab import Vocab

from scholarly_nlp.readers import NCGPaper, introduction_mask, iter_ncg_papers

from .factory import SPEC
from .features import introduction_features

__all__ = ["ncg_doc", "ncg_docs", "read_ncg_docs", "sentence_offsets"]


def sentence_offsets(paper: NCGPaper) -> tuple[list[str], list[tuple[int, int]]]:
    """``(words, [(start, end) token offsets per sentence])`` of a paper's Stanza sentences.

    An empty Stanza line becomes one ``"_"`` token, so every sentence has a span.
    """
    words: list[str] = []
    offsets = []
    for sentence in paper.sentences:
        tokens = sentence.split() or ["_"]
        offsets.append((len(words), len(words) + len(tokens)))
        words.extend(tokens)
    return words, offsets


def _runs(values: list, lo: int, hi: int) -> list[tuple[int, int]]:
    """Maximal index runs ``[i, j)`` in ``[lo, hi)`` where ``values`` is constant."""
    runs = []
    start = lo
    for i in range(lo + 1, hi + 1):
        if i == hi or values[i] != values[i - 1]:
            runs.append((start, i))
            start = i
    return runs


def ncg_doc(paper: NCGPaper, vocab: Union[Vocab, object]) -> Doc:
    """The paper Doc of one NCG paper (see the module docstring); ``vocab`` may be an nlp."""
    SPEC.install_extensions()
    vocab = getattr(vocab, "vocab", vocab)
    words, offsets = sentence_offsets(paper)
    spaces = [True] * len(words)
    spaces[-1] = False
    starts = [False] * len(words)
    for start, _ in offsets:
        starts[start] = True
    doc = Doc(vocab, words=words, spaces=spaces, sent_starts=starts)
    n = len(paper.sentences)

    def span(i: int, j: int, label: str) -> Span:
        return Span(doc, offsets[i][0], offsets[j - 1][1], label=label)

    heading = paper.is_heading
    kinds = paper.sections
    title = [i for i in range(n) if kinds[i] == "title" and not heading[i]]
    abstract = [i for i in range(n) if kinds[i] == "abstract" and not heading[i]]
    doc.spans["title"] = [span(title[0], title[-1] + 1, "title")] if title else []
    doc.spans["abstract"] = [span(abstract[0], abstract[-1] + 1, "abstract")] if abstract else []
    body_start = next((i for i in range(n) if heading[i] and kinds[i] not in ("title", "abstract")), n)
    intro = introduction_mask(paper)
    intro_lines = [i for i in range(n) if intro[i]]
    sections, heads, paragraphs = [], [], []
    # the introduction: from its heading (the last heading before its first sentence) to its last sentence
    intro_range = None
    if intro_lines:
        first = intro_lines[0]
        head = first
        while head - 1 >= body_start and heading[head - 1]:
            head -= 1
        intro_range = (head, intro_lines[-1] + 1)
    i = body_start
    while i < n:
        if intro_range and i == intro_range[0]:
            lo, hi = intro_range
            sections.append(span(lo, hi, kinds[lo]))
        else:
            lo = i
            hi = i + 1
            while hi < n and kinds[hi] == kinds[lo] and not (heading[hi] and not heading[hi - 1]):
                hi += 1
            if intro_range and lo < intro_range[0] < hi:
                hi = intro_range[0]
            sections.append(span(lo, hi, kinds[lo]))
        for a, b in _runs(heading, lo, hi):
            if heading[a]:
                heads.append(span(a, b, "heading"))
            else:
                paragraphs.append(span(a, b, "paragraph"))
        i = hi
    doc.spans["sections"] = sections
    doc.spans["section_heads"] = heads
    doc.spans["paragraphs"] = paragraphs
    doc._.paper_meta = {"paper_id": paper.paper_id, "source": "ncg", "task": paper.task}
    line_of = {start: k for k, (start, _) in enumerate(offsets)}
    sentences, features = introduction_features(doc)
    doc._.contribution_gold = [
        {"start": s.start, "end": s.end, "label": int(line_of.get(s.start, -1) in paper.contribution_lines),
         "features": feats}
        for s, feats in zip(sentences, features)
    ]
    return doc


def ncg_docs(papers: Iterable[NCGPaper], vocab: Union[Vocab, object]) -> list[Doc]:
    """:func:`ncg_doc` of every paper, in order."""
    return [ncg_doc(paper, vocab) for paper in papers]


def read_ncg_docs(root: Union[str, Path], vocab: Union[Vocab, object]) -> Iterator[Doc]:
    """The Docs of every readable NCG paper under ``root`` (unreadable folders are skipped
    with a warning by :func:`scholarly_nlp.readers.ncg.iter_ncg_papers`)."""
    for paper in iter_ncg_papers(root):
        yield ncg_doc(paper, vocab)


@registry.readers("scholarly_contribution_detector.NCGCorpus.v1")
def create_ncg_corpus(path: Union[str, Path], limit: int = 0) -> Callable[[Language], Iterator[Example]]:
    """NLPContributionGraph papers under ``path`` as training Examples of the detector (the
    Doc of :func:`ncg_doc` on both sides; its ``contribution_gold`` is the signal);
    ``limit`` > 0 caps the papers. A config names it in ``[corpora.train]``."""

    def read(nlp: Language) -> Iterator[Example]:
        for count, doc in enumerate(read_ncg_docs(path, nlp.vocab), start=1):
            yield Example(doc.copy(), doc)
            if limit and count >= limit:
                return

    return read
