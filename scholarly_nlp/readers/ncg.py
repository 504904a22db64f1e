"""Reader for the NLPContributionGraph corpus (SemEval-2021 Task 11), as published.

Each paper is one folder ``<task>/<n>/`` holding three files:

* ``<arxiv-id>-Grobid-out.txt``: GROBID's plain text. The first block is ``title``, the
  title line, ``abstract``, the abstract paragraph, and usually the first section heading
  (``Introduction``) with its paragraphs; every later block starts after a blank line with
  the section heading, then one paragraph a line.
* ``<arxiv-id>-Stanza-out.txt``: the same text split into sentences by Stanza, one a line
  (tokens separated by spaces: ``large - scale``). Headings are lines of their own; the
  markers ``title`` and ``abstract`` are lines 1 and 3 (or 4 when the title took two lines).
* ``sentences.txt``: the 1-based line numbers, in the Stanza file, of the sentences that
  state the paper's contributions (research problem, approach, results, hyper-parameters...).

:func:`read_ncg_paper` reads one folder into an :class:`NCGPaper`;
:func:`iter_ncg_papers` walks a corpus root and warns about (and skips) any folder that
cannot be read.

Section headings (``NCGPaper.sections`` / ``is_heading``) are recovered by aligning the
GROBID text to the Stanza lines (:func:`find_headings`). The heuristic:

1. *Candidates* in the GROBID text: the first line of each blank-line-separated block, and
   any line of the first block after the abstract paragraph (the first section heading sits
   there); a candidate must look like a heading (:func:`looks_like_heading`: at most 14
   words, starts with a letter or digit, no final ``. , ; : ?``, no URL, not a bare number,
   no ``word: lowercase`` run-in sentence, at most one comma, no ``. `` sentence break after
   a leading numbering such as ``II.``, at least one capital letter unless it is GROBID's
   ``narrative``, its name for a section that had no heading).
2. *Alignment*, in document order: each candidate is matched to the next Stanza line (or
   two or three consecutive lines: Stanza sometimes splits ``Bi-directional / LSTM layer``)
   whose text equals the heading ignoring whitespace and case, or equals its tail when the
   dropped head is a numbering (``II.``, ``3.1``, ``A.``) or the tail is at least 60% of the
   heading (Stanza's text sometimes drops a leading word). A candidate that matches nothing (Stanza dropped the block) is
   skipped; the search for the next candidate starts after the last match.
3. Stanza's ``title`` / ``abstract`` marker lines are headings too. Every sentence's section
   is the text of the last heading at or before it (the GROBID spelling, untokenised);
   sentences before the first heading are in section ``title``.

Known limits: GROBID sometimes starts a block with the first line of a paragraph or a list
item (``Storing Freebase: this first phase parses``) that passes the filter, and then a
spurious heading starts a "section"; section numbers are mostly absent, so the reader does
not know section levels (:func:`introduction_mask` handles the case that matters).
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional, Union

from ..errors import EmptyDocumentError, InputError, MalformedInputError

PathLike = Union[str, Path]

__all__ = [
    "NCGPaper",
    "read_ncg_paper",
    "iter_ncg_papers",
    "ncg_folders",
    "looks_like_heading",
    "find_headings",
    "introduction_mask",
]

GROBID_SUFFIX = "-Grobid-out.txt"
STANZA_SUFFIX = "-Stanza-out.txt"
LABELS_NAME = "sentences.txt"

_NUMBERING = re.compile(r"^(?:[ivxlc]+\.?|[a-h]\.?|\d+(?:\.\d+)*\.?)$")
_RUN_IN = re.compile(r":\s+[a-z]")
_INTRO = re.compile(r"introduc", re.I)
_INTRO_SUBHEAD = re.compile(r"contribution|motivation", re.I)


@dataclass
class NCGPaper:
    """One NLPContributionGraph paper.

    ``sentences`` are the Stanza file's lines (index ``i`` is line ``i + 1``);
    ``contribution_lines`` are 0-based indices into ``sentences``; ``sections[i]`` is the
    heading sentence ``i`` falls under (``"title"``, ``"abstract"``, then GROBID's heading
    text) and ``is_heading[i]`` tells whether sentence ``i`` is itself a heading line.
    """

    paper_id: str
    task: str
    sentences: list[str]
    contribution_lines: set[int]
    sections: list[str]
    is_heading: list[bool]
    grobid_text: str = ""
    folder: Optional[str] = None
    files: dict = field(default_factory=dict)

    def __len__(self) -> int:
        """Number of sentences (Stanza lines)."""
        return len(self.sentences)

    @property
    def labels(self) -> list[int]:
        """1 for each contribution sentence, 0 otherwise, aligned with ``sentences``."""
        return [int(i in self.contribution_lines) for i in range(len(self.sentences))]

    @property
    def in_introduction(self) -> list[bool]:
        """Whether each sentence is a non-heading sentence of the introduction (see
        :func:`introduction_mask`)."""
        return introduction_mask(self)


def _norm(text: str) -> str:
    return re.sub(r"\s+", "", text).lower()


def looks_like_heading(line: str) -> bool:
    """Whether a GROBID line could be a section heading (the filter of step 1 in the module
    docstring): short, starts with a letter or digit, no sentence punctuation at its end."""
    text = line.strip()
    if not text or len(text.split()) > 14 or len(text) > 120:
        return False
    if not text[0].isalnum() or text[-1] in ".,;:?":
        return False
    if "http" in text.lower() or "www." in text.lower() or text.count(",") > 1:
        return False
    if _NUMBERING.match(text.lower()) or not re.search(r"[A-Za-z]{3}", text):
        return False
    if _RUN_IN.search(text):
        return False
    if text == text.lower() and text != "narrative":  # no capital at all: a table cell or label
        return False
    words = text.split()
    while len(words) > 1 and _NUMBERING.match(words[0].lower()):
        words = words[1:]
    if re.search(r"\.\s", " ".join(words)):  # two sentences run together: a reference or text
        return False
    return True


def _grobid_candidates(grobid_text: str) -> list[str]:
    """Heading candidates of the GROBID text, in document order (step 1)."""
    lines = grobid_text.split("\n")
    try:
        abstract_at = next(i for i, line in enumerate(lines[:8]) if line.strip() == "abstract")
    except StopIteration:
        abstract_at = 0
    candidates = []
    in_front_block = True
    for i, line in enumerate(lines):
        if i <= abstract_at + 1:
            continue
        if not line.strip():
            in_front_block = False
            continue
        block_start = not lines[i - 1].strip()
        if (block_start or in_front_block) and looks_like_heading(line):
            candidates.append(line.strip())
    return candidates


def _tail_match(heading: str, text: str) -> bool:
    if not text:
        return False
    if heading == text:
        return True
    if heading.endswith(text):
        head = heading[: len(heading) - len(text)]
        return bool(_NUMBERING.match(head)) or len(text) >= 0.6 * len(heading)
    return False


def find_headings(sentences: list[str], grobid_text: str) -> dict[int, tuple[int, str]]:
    """Align GROBID heading candidates to Stanza lines (step 2 of the module docstring).

    Returns ``{first_line_index: (number_of_lines, heading_text)}`` for every matched
    heading, ``heading_text`` in GROBID's spelling.
    """
    normed = [_norm(s) for s in sentences]
    found: dict[int, tuple[int, str]] = {}
    start = 0
    for heading in _grobid_candidates(grobid_text):
        target = _norm(heading)
        for i in range(start, len(normed)):
            if not normed[i] or normed[i] not in target:
                continue
            matched = 0
            joined = ""
            for k in range(1, 4):
                if i + k > len(normed):
                    break
                joined += normed[i + k - 1]
                if _tail_match(target, joined):
                    matched = k
                    break
                if len(joined) >= len(target):
                    break
            if matched:
                found[i] = (matched, heading)
                start = i + matched
                break
    return found


def _sections(sentences: list[str], grobid_text: str) -> tuple[list[str], list[bool]]:
    n = len(sentences)
    is_heading = [False] * n
    sections = ["title"] * n
    marks: dict[int, tuple[int, str]] = {}
    if n and sentences[0].strip() == "title":
        marks[0] = (1, "title")
    for i in range(min(n, 8)):
        if sentences[i].strip() == "abstract":
            marks[i] = (1, "abstract")
            break
    abstract_at = max((i for i, (_, h) in marks.items() if h == "abstract"), default=-1)
    for i, value in find_headings(sentences, grobid_text).items():
        if i > abstract_at:
            marks[i] = value
    current = "title"
    i = 0
    while i < n:
        if i in marks:
            k, current = marks[i]
            for j in range(i, min(n, i + k)):
                is_heading[j] = True
                sections[j] = current
            i += k
            continue
        sections[i] = current
        i += 1
    return sections, is_heading


def introduction_mask(paper: NCGPaper) -> list[bool]:
    """Non-heading sentences of the introduction.

    The introduction starts at the first heading containing "introduc" (or, when there is
    none, at the first heading after the abstract) and runs to the next heading, except
    that headings mentioning "contribution" or "motivation" are taken for subsections of
    the introduction and do not end it.
    """
    n = len(paper.sentences)
    mask = [False] * n
    heads = [
        i
        for i in range(n)
        if paper.is_heading[i]
        and (i == 0 or not paper.is_heading[i - 1] or paper.sections[i] != paper.sections[i - 1])
    ]
    body_heads = [i for i in heads if paper.sections[i] not in ("title", "abstract")]
    start = next((i for i in body_heads if _INTRO.search(paper.sections[i])), None)
    if start is None and body_heads:
        start = body_heads[0]
    if start is None:
        return mask
    for i in range(start, n):
        if paper.is_heading[i]:
            if i > start and paper.sections[i] != paper.sections[start] and not _INTRO_SUBHEAD.search(paper.sections[i]):
                break
            continue
        mask[i] = True
    return mask


def _one_file(folder: Path, suffix: str) -> Path:
    matches = sorted(p for p in folder.iterdir() if p.name.endswith(suffix) and p.is_file())
    if not matches:
        raise InputError(folder, f"no '*{suffix}' file in the NCG paper folder")
    if len(matches) > 1:
        names = ", ".join(p.name for p in matches)
        raise MalformedInputError(folder, f"more than one '*{suffix}' file ({names})")
    return matches[0]


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        warnings.warn(f"{path}: not UTF-8, decoded as cp1252", stacklevel=3)
        text = data.decode("cp1252", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _read_labels(path: Path, n_sentences: int, stanza_path: Path) -> set[int]:
    lines: set[int] = set()
    for lineno, raw in enumerate(_read_text(path).split("\n"), start=1):
        value = raw.strip()
        if not value:
            continue
        if not value.isdigit():
            raise MalformedInputError(path, f"line {lineno}: {value!r} is not a line number")
        number = int(value)
        if not 1 <= number <= n_sentences:
            raise MalformedInputError(
                path,
                f"line {lineno}: sentence {number} is out of range "
                f"({stanza_path.name} has {n_sentences} lines)",
            )
        lines.add(number - 1)
    return lines


def read_ncg_paper(folder: PathLike, paper_id: Optional[str] = None) -> NCGPaper:
    """Read one NLPContributionGraph paper folder (``<task>/<n>/``).

    ``paper_id`` defaults to ``"<task>/<n>"`` from the folder's last two path parts.
    Raises :class:`~scholarly_nlp.errors.InputError` (missing file, naming the folder),
    :class:`~scholarly_nlp.errors.EmptyDocumentError` (empty Stanza file) or
    :class:`~scholarly_nlp.errors.MalformedInputError` (a line of ``sentences.txt`` that
    is not a number or is out of range), each naming the file.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(folder, "not a directory (expected an NCG paper folder <task>/<n>/)")
    stanza_path = _one_file(folder, STANZA_SUFFIX)
    grobid_path = _one_file(folder, GROBID_SUFFIX)
    labels_path = folder / LABELS_NAME
    if not labels_path.is_file():
        raise InputError(folder, f"no '{LABELS_NAME}' file in the NCG paper folder")

    stanza_text = _read_text(stanza_path)
    if stanza_text.endswith("\n"):
        stanza_text = stanza_text[:-1]
    sentences = stanza_text.split("\n") if stanza_text.strip() else []
    if not sentences:
        raise EmptyDocumentError(stanza_path, "the Stanza file holds no sentences")
    grobid_text = _read_text(grobid_path)
    contribution_lines = _read_labels(labels_path, len(sentences), stanza_path)
    sections, is_heading = _sections(sentences, grobid_text)
    task = folder.parent.name
    return NCGPaper(
        paper_id=paper_id or f"{task}/{folder.name}",
        task=task,
        sentences=sentences,
        contribution_lines=contribution_lines,
        sections=sections,
        is_heading=is_heading,
        grobid_text=grobid_text,
        folder=str(folder),
        files={"stanza": str(stanza_path), "grobid": str(grobid_path), "labels": str(labels_path)},
    )


def _folder_key(path: Path):
    return (path.parent.name, int(path.name) if path.name.isdigit() else 10**9, path.name)


def ncg_folders(root: PathLike) -> list[Path]:
    """The paper folders under ``root``: ``root/<task>/<n>/`` (or ``root`` itself, or
    ``root/<n>/`` when ``root`` is one task), sorted by task and number."""
    root = Path(root)
    if not root.is_dir():
        raise InputError(root, "not a directory (expected the NLPContributionGraph root)")

    def is_paper(p: Path) -> bool:
        return (p / LABELS_NAME).exists() or any(
            c.name.endswith((STANZA_SUFFIX, GROBID_SUFFIX)) for c in p.iterdir() if c.is_file()
        )

    if is_paper(root):
        return [root]
    folders = []
    for child in sorted(c for c in root.iterdir() if c.is_dir()):
        if is_paper(child):
            folders.append(child)
        else:
            folders.extend(g for g in child.iterdir() if g.is_dir())
    return sorted(folders, key=_folder_key)


def iter_ncg_papers(root: PathLike) -> Iterator[NCGPaper]:
    """Yield every readable paper under ``root`` (see :func:`ncg_folders`).

    A folder that cannot be read is skipped with a :class:`UserWarning` naming it and the
    reason; the walk goes on.
    """
    for folder in ncg_folders(root):
        try:
            yield read_ncg_paper(folder)
        except (InputError, OSError, ValueError) as exc:
            warnings.warn(f"skipping NCG paper folder {folder}: {exc}", stacklevel=2)
