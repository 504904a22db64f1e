"""Labelled sentence rows for contribution-sentence detection, from NCG papers.

:func:`paper_rows` turns one :class:`~scholarly_nlp.readers.ncg.NCGPaper` into one
:class:`SentenceRow` per Stanza sentence: the text, the label (1 = the sentence states a
contribution), the paper id and context features (relative position in the paper and in
its section, section name and coarse section kind, whether it is a heading or in the
introduction, cue phrases in it and in the sentence before it). :func:`grouped_split` and
:func:`grouped_folds` split BY PAPER, so no paper has sentences on both sides.
"""

from __future__ import annotations

import random
import re
from dataclasses import asdict, dataclass
from typing import Iterable, Sequence

from scholarly_nlp.readers import NCGPaper, introduction_mask

__all__ = [
    "SentenceRow",
    "CUE_PATTERNS",
    "SECTION_KINDS",
    "section_kind",
    "cue_flags",
    "paper_rows",
    "rows_from_papers",
    "grouped_split",
    "grouped_folds",
    "id_folds",
]

#: Cue phrases of contribution statements (name -> case-insensitive regex).
CUE_PATTERNS = {
    "we_propose": re.compile(r"\bwe\s+(?:propose|present|introduce|develop|design|describe)\b", re.I),
    "our_contribution": re.compile(r"\b(?:our|main|key)\s+contributions?\b|\bcontributions?\s+of\s+this", re.I),
    "this_paper": re.compile(r"\b(?:this|the present)\s+(?:paper|work|article)\b|\bin this (?:paper|work)\b", re.I),
    "we": re.compile(r"\bwe\b", re.I),
    "our_model": re.compile(r"\bour\s+(?:model|method|approach|system|framework|architecture)\b", re.I),
    "outperform": re.compile(r"\b(?:outperform\w*|state[\s-]*of[\s-]*the[\s-]*art|achiev\w+|improv\w+)\b", re.I),
    "setup": re.compile(r"\b(?:learning rate|batch size|dropout|optimi[sz]er|epochs?|hidden (?:size|units?)|dimension\w*|adam)\b", re.I),
    "baseline": re.compile(r"\b(?:baselines?|compare[sd]? (?:with|to|against))\b", re.I),
    "number": re.compile(r"\d"),
    "colon_list": re.compile(r"(?:follows|following|are|include)\s*:\s*$", re.I),
}

#: Coarse section kinds, matched in this order against the section heading.
SECTION_KINDS = (
    ("title", re.compile(r"^title$")),
    ("abstract", re.compile(r"^abstract$")),
    ("introduction", re.compile(r"introduc", re.I)),
    ("related", re.compile(r"related|background|previous|literature|prior work", re.I)),
    ("conclusion", re.compile(r"conclu|future work|summary", re.I)),
    ("setup", re.compile(r"implement|setup|set-up|setting|hyper|training detail|details", re.I)),
    ("baselines", re.compile(r"baseline|compar", re.I)),
    ("results", re.compile(r"result|ablation|analysis|evaluat|performance|discussion", re.I)),
    ("experiments", re.compile(r"experiment|dataset|data|corpus|task", re.I)),
    ("method", re.compile(r"model|method|approach|architecture|framework|network|encoder|attention|layer", re.I)),
)


@dataclass
class SentenceRow:
    """One sentence of one paper, labelled, with its context features."""

    sentence: str
    label: int
    paper_id: str
    index: int
    rel_position: float
    section: str
    section_kind: str
    rel_position_in_section: float
    is_heading: bool
    in_introduction: bool
    cues: dict
    prev_cues: dict

    def to_dict(self) -> dict:
        """The row as a plain JSON-able dict."""
        return asdict(self)


def section_kind(heading: str) -> str:
    """The coarse kind of a section heading (first match in :data:`SECTION_KINDS`), else
    ``"other"``."""
    for kind, pattern in SECTION_KINDS:
        if pattern.search(heading or ""):
            return kind
    return "other"


def cue_flags(sentence: str) -> dict:
    """``{cue name: 0/1}`` for every pattern of :data:`CUE_PATTERNS` found in the sentence."""
    return {name: int(bool(pattern.search(sentence or ""))) for name, pattern in CUE_PATTERNS.items()}


def paper_rows(paper: NCGPaper) -> list[SentenceRow]:
    """One :class:`SentenceRow` per sentence of ``paper``, in order."""
    n = len(paper.sentences)
    intro = introduction_mask(paper)
    # where each section run starts and ends, for the position within the section
    bounds = []
    start = 0
    for i in range(1, n + 1):
        if i == n or paper.sections[i] != paper.sections[i - 1]:
            bounds.extend([(start, i)] * (i - start))
            start = i
    rows = []
    prev = {name: 0 for name in CUE_PATTERNS}
    for i, sentence in enumerate(paper.sentences):
        lo, hi = bounds[i]
        cues = cue_flags(sentence)
        rows.append(
            SentenceRow(
                sentence=sentence,
                label=int(i in paper.contribution_lines),
                paper_id=paper.paper_id,
                index=i,
                rel_position=i / max(1, n - 1),
                section=paper.sections[i],
                section_kind=section_kind(paper.sections[i]),
                rel_position_in_section=(i - lo) / max(1, hi - lo - 1),
                is_heading=paper.is_heading[i],
                in_introduction=intro[i],
                cues=cues,
                prev_cues=prev,
            )
        )
        prev = cues
    return rows


def rows_from_papers(papers: Iterable[NCGPaper]) -> list[SentenceRow]:
    """All sentence rows of all papers, paper after paper."""
    rows: list[SentenceRow] = []
    for paper in papers:
        rows.extend(paper_rows(paper))
    return rows


def grouped_split(papers: Sequence[NCGPaper], dev_fraction: float = 0.2, seed: int = 0):
    """Split papers into ``(train, dev)`` lists BY PAPER (shuffled with ``seed``).

    ``dev`` holds ``round(dev_fraction * len(papers))`` papers (at least one, and at least
    one paper stays in ``train``, when there are two or more papers). A paper id that occurs
    twice is kept on one side.
    """
    if not 0.0 <= dev_fraction <= 1.0:
        raise ValueError(f"dev_fraction must be in [0, 1], got {dev_fraction}")
    ids = sorted({p.paper_id for p in papers})
    random.Random(seed).shuffle(ids)
    n_dev = round(dev_fraction * len(ids))
    if len(ids) >= 2 and dev_fraction > 0:
        n_dev = min(max(n_dev, 1), len(ids) - 1)
    dev_ids = set(ids[:n_dev])
    train = [p for p in papers if p.paper_id not in dev_ids]
    dev = [p for p in papers if p.paper_id in dev_ids]
    return train, dev


def grouped_folds(papers: Sequence[NCGPaper], k: int = 5, seed: int = 0) -> list[set]:
    """``k`` disjoint sets of paper ids covering all papers (shuffled with ``seed``, sizes
    differing by at most one): the test folds of grouped k-fold cross-validation."""
    return id_folds([p.paper_id for p in papers], k, seed)


def id_folds(paper_ids: Iterable[str], k: int = 5, seed: int = 0) -> list[set]:
    """:func:`grouped_folds` of paper ids: ``k`` disjoint sets covering the distinct ids (sorted,
    shuffled with ``seed``, dealt round-robin)."""
    ids = sorted(set(paper_ids))
    if k < 2 or k > len(ids):
        raise ValueError(f"need 2 <= k <= number of papers ({len(ids)}), got k={k}")
    random.Random(seed).shuffle(ids)
    return [set(ids[f::k]) for f in range(k)]
