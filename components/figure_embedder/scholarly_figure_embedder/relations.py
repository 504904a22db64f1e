"""Citation relations between papers: where they come from and the table the embedder uses.

Two sources of "A cites B" (paper ids are ACL Anthology ids, e.g. ``C02-1025``):

* CL-SciSumm: ``train-manual/<RP>/Citance_XML/<CP>.xml`` names each citing paper CP of the
  reference paper RP, and ``train-scisummnet/<RP>/citing_sentences.json`` lists
  ``citing_paper_id`` s (:func:`clscisumm_citations`);
* bibliographies: a paper's ``doc._.bibliography`` entry whose normalised title equals the
  normalised title of a known paper - another paper of the corpus, or a CL-SciSumm
  reference paper (:func:`bibliography_citations`).

From these, :func:`build_relations` relates two papers of the corpus when one cites the
other (kind ``"cites"``) or when both cite the same paper (kind ``"co_citing"``,
bibliographic coupling; the only relation CL-SciSumm gives between two citing papers).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import defaultdict
from itertools import combinations
from pathlib import Path
from typing import Iterable, Mapping, Optional, Union

from spacy.tokens import Doc

from scholarly_nlp import write_atomic

PathLike = Union[str, Path]
KINDS = ("cites", "co_citing")
MIN_TITLE_WORDS = 3  # shorter "titles" ("Introduction", "WordNet") match too many entries


def normalise_title(title: str) -> str:
    """Lower case ASCII letters and digits separated by single spaces ("" for no title)."""
    text = unicodedata.normalize("NFKD", title or "").encode("ascii", "ignore").decode("ascii").lower()
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text).split())


def clscisumm_citations(clscisumm_dir: PathLike) -> dict[str, set[str]]:
    """Citing paper id -> reference paper ids, from a CL-SciSumm data folder.

    Reads every ``*/<RP>/Citance_XML/*.xml`` (file stem = citing paper) and
    ``*/<RP>/citing_sentences.json``. A folder without either gives an empty mapping.
    """
    cites: dict[str, set[str]] = defaultdict(set)
    root = Path(clscisumm_dir)
    for citance in root.glob("*/*/Citance_XML/*.xml"):
        cites[citance.stem].add(citance.parent.parent.name)
    for listing in root.glob("*/*/citing_sentences.json"):
        try:
            entries = json.loads(listing.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        for entry in entries if isinstance(entries, list) else []:
            citing = entry.get("citing_paper_id") if isinstance(entry, dict) else None
            if citing:
                cites[str(citing)].add(listing.parent.name)
    return dict(cites)


def clscisumm_titles(clscisumm_dir: PathLike) -> dict[str, str]:
    """Reference paper id -> title (sentence ``sid="0"`` of ``Reference_XML/<RP>.xml``)."""
    from lxml import etree

    parser = etree.XMLParser(recover=True)
    titles = {}
    for file in Path(clscisumm_dir).glob("*/*/Reference_XML/*.xml"):
        try:
            root = etree.parse(str(file), parser).getroot()
        except (OSError, etree.XMLSyntaxError):
            continue
        if root is None:
            continue
        first = root.find(".//S[@sid='0']")
        if first is not None:
            title = " ".join("".join(first.itertext()).split())
            if title:
                titles[file.stem] = title
    return titles


def doc_title(doc: Doc) -> str:
    """The paper's title text ("" when the reader found none)."""
    return " ".join(span.text for span in doc.spans.get("title", [])).strip()


def bibliography_citations(docs: Iterable[Doc], titles: Mapping[str, str]) -> dict[str, set[str]]:
    """Paper id -> ids of the known papers (``titles``: id -> title) its bibliography cites.

    Matching is equality of :func:`normalise_title`; titles of fewer than
    ``MIN_TITLE_WORDS`` words are ignored, and a paper never cites itself.
    """
    by_title: dict[str, set[str]] = defaultdict(set)
    for paper_id, title in titles.items():
        key = normalise_title(title)
        if len(key.split()) >= MIN_TITLE_WORDS:
            by_title[key].add(paper_id)
    cites: dict[str, set[str]] = {}
    for doc in docs:
        paper_id = doc._.paper_id
        found = set()
        for entry in doc._.bibliography.values():
            found |= by_title.get(normalise_title(entry.get("title") or ""), set())
        found.discard(paper_id)
        if found:
            cites[paper_id] = found
    return cites


def merge_citations(*sources: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    """The union of several citing -> cited mappings."""
    merged: dict[str, set[str]] = defaultdict(set)
    for source in sources:
        for citing, cited in source.items():
            merged[citing] |= set(cited)
    return dict(merged)


class RelationTable:
    """Undirected relations between papers, each with a kind from :data:`KINDS`.

    When two papers are related in several ways, ``"cites"`` wins (it is the stronger).
    """

    def __init__(self, relations: Iterable[tuple[str, str, str]] = ()):
        self._kinds: dict[tuple[str, str], str] = {}
        self._neighbours: dict[str, set[str]] = defaultdict(set)
        for a, b, kind in relations:
            self.add(a, b, kind)

    @staticmethod
    def _key(a: str, b: str) -> tuple[str, str]:
        return (a, b) if a <= b else (b, a)

    def add(self, a: str, b: str, kind: str) -> None:
        """Relate papers ``a`` and ``b`` (ignored when a == b)."""
        if kind not in KINDS:
            raise ValueError(f"unknown relation kind {kind!r}; known: {', '.join(KINDS)}")
        if a == b:
            return
        key = self._key(a, b)
        if self._kinds.get(key) != "cites":
            self._kinds[key] = kind
        self._neighbours[a].add(b)
        self._neighbours[b].add(a)

    def kind(self, a: str, b: str) -> Optional[str]:
        """The relation kind of two papers, or None when they are not related."""
        return self._kinds.get(self._key(a, b))

    def related(self, paper_id: str, kinds: Optional[Iterable[str]] = None) -> set[str]:
        """The papers related to ``paper_id`` (by one of ``kinds``; all kinds when None)."""
        neighbours = self._neighbours.get(paper_id, set())
        if kinds is None:
            return set(neighbours)
        wanted = set(kinds)
        return {other for other in neighbours if self.kind(paper_id, other) in wanted}

    def pairs(self, kinds: Optional[Iterable[str]] = None) -> list[tuple[str, str, str]]:
        """(a, b, kind) for every relation (a < b), sorted; only ``kinds`` when given."""
        wanted = set(kinds) if kinds is not None else set(KINDS)
        return sorted((a, b, k) for (a, b), k in self._kinds.items() if k in wanted)

    def restrict(self, papers: Iterable[str]) -> "RelationTable":
        """The relations between papers of ``papers`` only."""
        keep = set(papers)
        return RelationTable((a, b, k) for a, b, k in self.pairs() if a in keep and b in keep)

    def __len__(self) -> int:
        return len(self._kinds)

    def counts(self) -> dict[str, int]:
        """Number of relations per kind."""
        counts = {kind: 0 for kind in KINDS}
        for kind in self._kinds.values():
            counts[kind] += 1
        return counts

    def to_json(self) -> dict:
        """JSON-able form: ``{"relations": [[a, b, kind], ...]}``."""
        return {"relations": [list(r) for r in self.pairs()]}

    @classmethod
    def from_json(cls, data: Mapping) -> "RelationTable":
        """Rebuild from :meth:`to_json` output."""
        return cls((str(a), str(b), str(k)) for a, b, k in data.get("relations", []))

    def save(self, path: PathLike) -> None:
        """Write the table as JSON (atomically)."""
        write_atomic(path, json.dumps(self.to_json(), indent=1))

    @classmethod
    def load(cls, path: PathLike) -> "RelationTable":
        """Read a table written by :meth:`save`."""
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))


def build_relations(citations: Mapping[str, Iterable[str]], papers: Iterable[str]) -> RelationTable:
    """Relations between the ``papers`` (ids) from citing -> cited mappings.

    ``"cites"``: one paper cites the other; ``"co_citing"``: both cite a same paper (which
    need not be among ``papers``).
    """
    corpus = set(papers)
    table = RelationTable()
    citers_of: dict[str, set[str]] = defaultdict(set)
    for citing, cited in citations.items():
        if citing not in corpus:
            continue
        for target in cited:
            citers_of[target].add(citing)
            if target in corpus:
                table.add(citing, target, "cites")
    for citers in citers_of.values():
        for a, b in combinations(sorted(citers), 2):
            if table.kind(a, b) is None:
                table.add(a, b, "co_citing")
    return table


def corpus_relations(docs: Iterable[Doc], clscisumm_dir: Optional[PathLike] = None) -> RelationTable:
    """The relation table of a corpus of paper Docs, from CL-SciSumm and their bibliographies.

    Bibliography titles are matched to the corpus papers' own titles and, with
    ``clscisumm_dir``, to the CL-SciSumm reference papers' titles.
    """
    docs = list(docs)
    titles = {doc._.paper_id: doc_title(doc) for doc in docs}
    sources = []
    if clscisumm_dir is not None and Path(clscisumm_dir).is_dir():
        sources.append(clscisumm_citations(clscisumm_dir))
        titles = {**clscisumm_titles(clscisumm_dir), **{k: v for k, v in titles.items() if v}}
    sources.append(bibliography_citations(docs, titles))
    return build_relations(merge_citations(*sources), [doc._.paper_id for doc in docs])
