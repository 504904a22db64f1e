"""Structure helpers over a paper Doc: which sentences form the introduction, which
paragraphs the body.

:func:`introduction_and_body` is the candidate set of the contribution tasks (the detector
reads the introduction's sentences, the linker ranks the body's paragraphs), defined once
here so every component and harness agrees:

* **introduction** = the first section whose title looks like an introduction
  (:data:`INTRODUCTION_TITLE`: "Introduction", "1 Introduction", "Motivation", ...); else the
  body paragraphs before the first titled section, when there are any (an unheaded
  introduction: Nature's journals and many magazines print none, and a reader may miss a
  head); else the first section with a title ("Background" in BMC's journals); else the first
  section. Its sentences are those that start inside its paragraphs (subsections included, the
  heading excluded). A Doc without sections has no introduction.
* **body paragraphs** = the paragraphs that start after the introduction's span, in document
  order, except those inside a section whose title matches :data:`EXCLUDED_BODY_TITLE`
  (related/previous/prior work, literature review, acknowledgements, references, conclusions):
  these describe other people's work, or restate the contributions without explaining them.
  Pass ``exclude=None`` to keep every later paragraph. A Doc without sections: every paragraph
  is body.
"""

from __future__ import annotations

import re
from typing import Optional

__all__ = ["EXCLUDED_BODY_TITLE", "INTRODUCTION_TITLE", "introduction_and_body", "introduction_range"]

#: Section titles taken as the introduction (optional leading number, then the word).
INTRODUCTION_TITLE = re.compile(r"^\W*(?:[0-9IVX]+(?:\.\d+)*[.)]?\s*)?(?:introduction|motivation)\b", re.IGNORECASE)
#: Section titles whose paragraphs are not body candidates (anywhere in the title).
EXCLUDED_BODY_TITLE = re.compile(
    r"related\s+work|previous\s+work|prior\s+work|literature\s+review|acknowledge?ments?|"
    r"\breferences\b|bibliography|conclusions?\b",
    re.IGNORECASE,
)


def introduction_and_body(doc, exclude: Optional[re.Pattern] = EXCLUDED_BODY_TITLE) -> tuple[list, list]:
    """``(introduction sentence spans, body paragraph spans)`` of a paper Doc, in document order.

    See the module docstring for the definition. Defined for every Doc: no sections gives
    ``([], all paragraphs)``; a paper whose only section is the (fallback) introduction gives an
    empty body; a body of one paragraph is a one-element list. ``exclude`` is a compiled
    pattern searched in the titles of the sections enclosing a paragraph (None keeps all).
    """
    paragraphs = _sorted_group(doc, "paragraphs")
    extent = introduction_range(doc)
    if extent is None:
        return [], paragraphs
    intro_start, intro_end = extent
    intro_paragraphs = [p for p in paragraphs if intro_start <= p.start < intro_end]
    sentences = []
    if intro_paragraphs:
        starts = [(p.start, p.end) for p in intro_paragraphs]
        for sent in doc.sents:
            if sent.start >= intro_end:
                break
            if any(lo <= sent.start < hi for lo, hi in starts):
                sentences.append(sent)
    excluded = []
    if exclude is not None:
        excluded = [(s.start, s.end) for s in _sorted_group(doc, "sections") if exclude.search(s.label_ or "")]
    body = [
        p for p in paragraphs
        if p.start >= intro_end and not any(lo <= p.start < hi for lo, hi in excluded)
    ]
    return sentences, body


def introduction_range(doc) -> Optional[tuple[int, int]]:
    """Token range ``(start, end)`` of a paper Doc's introduction, None for a Doc without sections.

    The rule of the module docstring, read from the ``sections`` span group (title as
    ``label_``) and the ``paragraphs`` group, so harnesses that read span groups only (the
    contribution linker's silver pairs) share it.
    """
    sections = _sorted_group(doc, "sections")
    if not sections:
        return None
    intro = next((s for s in sections if INTRODUCTION_TITLE.search(s.label_ or "")), None)
    if intro is not None:
        return intro.start, intro.end
    titled = [s for s in sections if (s.label_ or "").strip()]
    if titled:
        lead = [p for p in _sorted_group(doc, "paragraphs") if p.start < titled[0].start]
        if lead:
            return lead[0].start, titled[0].start
    intro = (titled or sections)[0]
    return intro.start, intro.end


def _sorted_group(doc, name: str) -> list:
    return sorted(doc.spans[name] if name in doc.spans else [], key=lambda s: s.start)
