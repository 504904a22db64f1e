"""Evaluation of contribution linking (issue #6; Tanaka & Ushiku): hit@1, hit@5 and MRR.

The task: for an introduction sentence that states a contribution, rank the paper's body
paragraphs so that the first paragraph that explains the contribution comes first.

The development gold (``../shared/data/gold/contributions_dev.jsonl``) has one JSON object a
line: ``{"paper_id", "sentence", "paragraph_start", "acceptable_paragraph_starts"}``.
``paragraph_start`` is the first 80 characters of the gold paragraph (``null`` when no paragraph
explains the sentence; such items are skipped); ``acceptable_paragraph_starts`` lists the starts
both annotators chose. The sentence comes from a rough split of the TEI introduction, so it is
matched to our sentences by text (:func:`match_sentence`), and paragraphs are matched to the gold
starts by a normalised prefix (:func:`paragraph_matches`).

Candidate set: :func:`scholarly_nlp.introduction_and_body` (defined in
:mod:`scholarly_nlp.doc.structure`, shared with the contribution detector), used by every
baseline: the introduction's sentences are the queries, the body paragraphs after it (minus
related work, acknowledgements, references, conclusions) the candidates. On the dev gold no
gold paragraph lies in an excluded section (all 68 lie in the kept body).

Text normalisation (:func:`normalize_text`) is Unicode NFKC, case folding, GROBID's line-end
hyphenation undone (``"predic- tions"`` -> ``"predictions"``), punctuation to spaces and
whitespace collapsed; :func:`alnum_key` keeps letters and digits only, which makes prefix
comparison immune to whitespace and odd characters such as ``"…"``.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import unicodedata
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence, Union

from scholarly_nlp import EXCLUDED_BODY_TITLE, introduction_and_body

__all__ = [
    "ContributionGold",
    "LinkingQuery",
    "prepare_queries",
    "rank_queries",
    "alnum_key",
    "evaluate_rankings",
    "expected_random_metrics",
    "gold_paragraph_positions",
    "match_sentence",
    "normalize_text",
    "paragraph_matches",
    "read_contribution_gold",
    "sentence_similarity",
]

#: Default similarity a gold sentence needs to be matched to one of our sentences.
SENTENCE_MATCH_THRESHOLD = 0.6
#: Default similarity of a paragraph's prefix to a gold start (after :func:`alnum_key`).
PARAGRAPH_MATCH_THRESHOLD = 0.9

_HYPHEN_BREAK = re.compile(r"(\w)[-\u00ad\u2010]\s+(\w)")
_NON_WORD = re.compile(r"[^\w\s]+")
_WS = re.compile(r"\s+")

TextLike = Union[str, Any]  # a str or anything with a ``.text`` (a spaCy Span)


@dataclass(frozen=True)
class ContributionGold:
    """One gold item: a contribution sentence of ``paper_id`` and the paragraph(s) explaining it.

    ``paragraph_start`` is None when no paragraph explains the sentence. ``starts`` is every
    acceptable paragraph start (``paragraph_start`` first, duplicates removed). ``line`` is the
    1-based line of the gold file it came from (0 when built in code).
    """

    paper_id: str
    sentence: str
    paragraph_start: Optional[str]
    acceptable_paragraph_starts: tuple = ()
    line: int = 0
    starts: tuple = field(init=False)

    def __post_init__(self) -> None:
        starts = [self.paragraph_start] if self.paragraph_start else []
        starts += [s for s in self.acceptable_paragraph_starts if s]
        object.__setattr__(self, "starts", tuple(dict.fromkeys(starts)))

    @property
    def is_null(self) -> bool:
        """True when the annotators found no paragraph that explains the sentence."""
        return not self.starts


def read_contribution_gold(path: Union[str, Path]) -> list[ContributionGold]:
    """Read the contribution-linking gold (JSON lines) into :class:`ContributionGold` items.

    Blank lines are ignored. A line that is not a JSON object with a non-empty string
    ``paper_id`` and ``sentence``, a string-or-null ``paragraph_start`` and (optionally) a list
    of strings ``acceptable_paragraph_starts`` is skipped with a warning naming the file, the
    line number and the reason; the other lines are read.
    """
    path = Path(path)
    items = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                items.append(_gold_item(json.loads(line), number))
            except (ValueError, TypeError) as error:
                warnings.warn(f"{path}:{number}: skipped malformed gold line ({error})", stacklevel=2)
    return items


def _gold_item(record: Any, line: int) -> ContributionGold:
    """One validated gold item; ValueError/TypeError naming what is wrong."""
    if not isinstance(record, dict):
        raise TypeError(f"expected a JSON object, got {type(record).__name__}")
    for key in ("paper_id", "sentence"):
        if not isinstance(record.get(key), str) or not record[key].strip():
            raise ValueError(f"{key!r} must be a non-empty string")
    start = record.get("paragraph_start")
    if start is not None and not isinstance(start, str):
        raise ValueError("'paragraph_start' must be a string or null")
    acceptable = record.get("acceptable_paragraph_starts") or []
    if not isinstance(acceptable, list) or not all(isinstance(s, str) for s in acceptable):
        raise ValueError("'acceptable_paragraph_starts' must be a list of strings")
    return ContributionGold(record["paper_id"], record["sentence"], start, tuple(acceptable), line)


# --------------------------------------------------------------------------- text matching


def _text(value: TextLike) -> str:
    """The text of a str or of a Span-like object."""
    return value if isinstance(value, str) else str(getattr(value, "text", value))


def normalize_text(text: str) -> str:
    """NFKC, case-folded text with hyphenation undone, punctuation removed, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _HYPHEN_BREAK.sub(r"\1\2", text)
    text = _NON_WORD.sub(" ", text).replace("_", " ")
    return _WS.sub(" ", text).strip()


def alnum_key(text: str) -> str:
    """Only the letters and digits of :func:`normalize_text` (no spaces): a robust prefix key."""
    return "".join(ch for ch in normalize_text(text) if ch.isalnum())


def sentence_similarity(a: str, b: str) -> float:
    """Similarity in [0, 1] of two sentences after :func:`normalize_text`.

    The larger of difflib's ratio and, when one normalised text contains the other, the
    shorter's share of the longer's length (so a gold sentence that our segmenter split in
    two still matches its longer half well).
    """
    a, b = normalize_text(a), normalize_text(b)
    if not a or not b:
        return 0.0
    if a == b:
        return 1.0
    score = difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    if short in long:
        score = max(score, len(short) / len(long))
    return score


def match_sentence(gold_text: str, sentences: Sequence[TextLike],
                   threshold: float = SENTENCE_MATCH_THRESHOLD) -> Optional[int]:
    """Index of the sentence most similar to ``gold_text`` (:func:`sentence_similarity`).

    ``sentences`` are strings or Spans. None when no sentence reaches ``threshold`` (or
    ``sentences`` is empty). Ties go to the earlier sentence.
    """
    best, best_score = None, -1.0
    gold_norm = normalize_text(gold_text)
    for index, sentence in enumerate(sentences):
        text = _text(sentence)
        score = sentence_similarity(gold_norm, text)
        if score > best_score:
            best, best_score = index, score
    return best if best is not None and best_score >= threshold else None


def paragraph_matches(paragraph_text: TextLike, gold_starts: Union[str, Iterable[str]],
                      threshold: float = PARAGRAPH_MATCH_THRESHOLD) -> bool:
    """True when the paragraph starts with one of ``gold_starts``.

    Both sides are compared by :func:`alnum_key` (letters and digits only, so whitespace,
    hyphenation, punctuation and characters such as ``"…"`` do not matter). The gold start
    is a truncated prefix (80 characters), so the paragraph's key is cut to the gold key's
    length; an exact prefix matches, otherwise difflib's ratio of the two must reach
    ``threshold``. Gold starts shorter than 8 letters/digits never match (too ambiguous).
    """
    if isinstance(gold_starts, str):
        gold_starts = [gold_starts]
    para_key = alnum_key(_text(paragraph_text))
    for start in gold_starts:
        if not start:
            continue
        gold_key = alnum_key(start)
        if len(gold_key) < 8:
            continue
        prefix = para_key[: len(gold_key)]
        if prefix == gold_key:
            return True
        if difflib.SequenceMatcher(None, prefix, gold_key, autojunk=False).ratio() >= threshold:
            return True
    return False


def gold_paragraph_positions(paragraphs: Sequence[TextLike], gold_starts: Iterable[str]) -> list[int]:
    """Positions in ``paragraphs`` (strings or Spans) that :func:`paragraph_matches` the gold."""
    starts = [s for s in gold_starts if s]
    return [i for i, p in enumerate(paragraphs) if paragraph_matches(p, starts)]


# --------------------------------------------------------------------------- candidates


@dataclass(frozen=True)
class LinkingQuery:
    """A gold item made ready for a ranker.

    ``sentence_index`` is the matched introduction sentence (None when unmatched, or when the
    paper's Doc is missing), ``sentence_text`` its text (the query a system would see; None when
    unmatched), ``paragraphs`` the body paragraph spans (the candidates) and ``score`` the
    sentence similarity of the match.
    """

    gold: ContributionGold
    sentence_index: Optional[int]
    sentence_text: Optional[str]
    paragraphs: Optional[list]
    score: float = 0.0

    @property
    def matched(self) -> bool:
        """True when the gold sentence was matched to one of our introduction sentences."""
        return self.sentence_text is not None


def prepare_queries(gold: Sequence[ContributionGold], docs: dict, exclude: Optional[re.Pattern] = EXCLUDED_BODY_TITLE,
                    threshold: float = SENTENCE_MATCH_THRESHOLD) -> list[LinkingQuery]:
    """One :class:`LinkingQuery` per gold item: its sentence matched among the introduction
    sentences of ``docs[paper_id]`` (:func:`match_sentence`) and the body paragraphs of that Doc
    (:func:`introduction_and_body`, ``exclude`` passed on). A paper absent from ``docs`` gives an
    unmatched query."""
    split = {}
    queries = []
    for item in gold:
        doc = docs.get(item.paper_id)
        if doc is None:
            queries.append(LinkingQuery(item, None, None, None))
            continue
        if item.paper_id not in split:
            split[item.paper_id] = introduction_and_body(doc, exclude=exclude)
        sentences, body = split[item.paper_id]
        index = match_sentence(item.sentence, sentences, threshold=threshold)
        if index is None:
            queries.append(LinkingQuery(item, None, None, body))
            continue
        text = sentences[index].text.strip()
        queries.append(LinkingQuery(item, index, text, body, sentence_similarity(item.sentence, text)))
    return queries


def rank_queries(ranker: Any, queries: Sequence[LinkingQuery]) -> list[Optional[list]]:
    """``ranker.rank(sentence_text, paragraphs)`` for every query, as ranked paragraph lists
    (the input :func:`evaluate_rankings` takes); None for an unmatched query."""
    rankings = []
    for query in queries:
        if not query.matched:
            rankings.append(None)
            continue
        order = ranker.rank(query.sentence_text, query.paragraphs)
        rankings.append([query.paragraphs[i] for i in order])
    return rankings


# --------------------------------------------------------------------------- metrics


def evaluate_rankings(gold: Sequence[ContributionGold], rankings: Sequence[Optional[Sequence[TextLike]]],
                      ks: Sequence[int] = (1, 5)) -> dict:
    """hit@k and MRR of ranked paragraph lists against the gold, one ranking per gold item.

    ``rankings[i]`` is the *full* candidate list for ``gold[i]`` ranked best first (paragraph
    texts or Spans), or None when no ranking was produced because the gold sentence could not
    be matched to one of our sentences. Items whose ``paragraph_start`` is null are skipped
    (``n_skipped_null``); every other item is a query (``n_queries``, the denominator). A query
    scores 0 when its ranking is None (``n_unmatched_sentence``) or when no candidate matches a
    gold start (``n_gold_paragraph_missing``: the gold paragraph is not in our candidates at
    all). A hit@k is a gold-matching paragraph among the first k; MRR uses the first match.

    Returns ``{"hit_at_1", "hit_at_5", "mrr", "n_queries", "n_skipped_null",
    "n_unmatched_sentence", "n_gold_paragraph_missing", "per_query"}`` (a ``hit_at_<k>`` for
    each ``k`` in ``ks``); metrics are 0.0 when there is no query. ``per_query`` holds each
    metric's value for every query in gold order (``{"hit_at_1": [1.0, 0.0, ...], ...,
    "mrr": [reciprocal ranks]}``; a query that scores 0 is there as 0.0), so each metric is the
    mean of its list and two systems ranked on one gold can be compared query by query.
    """
    if len(gold) != len(rankings):
        raise ValueError(f"{len(gold)} gold items but {len(rankings)} rankings")
    for k in ks:
        if not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")
    def score(item: ContributionGold, ranking: Sequence[TextLike]) -> Optional[tuple[dict, float]]:
        positions = gold_paragraph_positions(ranking, item.starts)
        if not positions:
            return None
        first = positions[0] + 1
        return {k: 1.0 if first <= k else 0.0 for k in ks}, 1.0 / first

    return _aggregate(gold, rankings, ks, score)


def _aggregate(gold: Sequence[ContributionGold], lists: Sequence[Optional[Sequence[TextLike]]], ks: Sequence[int],
               score: Callable[[ContributionGold, Sequence[TextLike]], Optional[tuple[dict, float]]]) -> dict:
    """Mean hit@k and reciprocal rank over the gold's queries, with the counts and per-query
    values of :func:`evaluate_rankings`; ``score`` gives one item's (hits, rr), None when no
    candidate matches the gold."""
    per_query: dict[str, list[float]] = {**{f"hit_at_{k}": [] for k in ks}, "mrr": []}
    n_null = n_unmatched = n_missing = 0
    for item, candidates in zip(gold, lists):
        if item.is_null:
            n_null += 1
            continue
        scored = score(item, candidates) if candidates is not None else None
        if candidates is None:
            n_unmatched += 1
        elif scored is None:
            n_missing += 1
        hits, rr = scored if scored is not None else ({k: 0.0 for k in ks}, 0.0)
        for k in ks:
            per_query[f"hit_at_{k}"].append(hits[k])
        per_query["mrr"].append(rr)
    n_queries = len(per_query["mrr"])
    result: dict = {name: (sum(values) / n_queries if n_queries else 0.0) for name, values in per_query.items()}
    result.update({
        "n_queries": n_queries,
        "n_skipped_null": n_null,
        "n_unmatched_sentence": n_unmatched,
        "n_gold_paragraph_missing": n_missing,
        "per_query": per_query,
    })
    return result


def _expected_random(n: int, m: int, ks: Sequence[int]) -> tuple[dict, float]:
    """Expected hit@k and reciprocal rank of a uniformly random order of n items, m relevant."""
    if n < 1 or m < 1:
        return {k: 0.0 for k in ks}, 0.0
    m = min(m, n)
    total = math.comb(n, m)
    hits = {k: 1.0 - math.comb(n - min(k, n), m) / total for k in ks}
    # P(first relevant at rank r) = C(n - r, m - 1) / C(n, m)
    rr = sum(math.comb(n - r, m - 1) / total / r for r in range(1, n - m + 2))
    return hits, rr


def expected_random_metrics(gold: Sequence[ContributionGold], candidates: Sequence[Optional[Sequence[TextLike]]],
                            ks: Sequence[int] = (1, 5)) -> dict:
    """The metrics of :func:`evaluate_rankings` that a uniformly random ranking gets in expectation.

    ``candidates[i]`` is the (unranked) candidate list of ``gold[i]`` or None (unmatched
    sentence). With ``n`` candidates of which ``m`` match the gold, hit@k is
    ``1 - C(n-k, m) / C(n, m)`` and the reciprocal rank is averaged exactly over the rank of
    the first match. Same keys and counting as :func:`evaluate_rankings`.
    """
    if len(gold) != len(candidates):
        raise ValueError(f"{len(gold)} gold items but {len(candidates)} candidate lists")
    def score(item: ContributionGold, cands: Sequence[TextLike]) -> Optional[tuple[dict, float]]:
        m = len(gold_paragraph_positions(cands, item.starts))
        return _expected_random(len(cands), m, ks) if m else None

    return _aggregate(gold, candidates, ks, score)
