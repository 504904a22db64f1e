"""The weakly supervised triplet loss of the aspect embedder.

A training batch holds groups of Docs that describe the same paper (an anchor and its
positives, e.g. a paper's abstract and the citances other papers wrote about it); every
Doc of another group is a negative. Kobayashi et al. train on the mean of the aspect
vectors; we add the same triplet loss per query aspect (background, method, result) so each
aspect vector is pulled toward the matching aspect of the positive. Distances are
Euclidean between L2-normalised vectors, as the search ranks. A paper may sit in two groups
(its own, and a co-citation group): a Doc of the same paper as the anchor or the positive is
never their negative. A group may also name the query aspects it teaches (a co-citation from
a methods context says the two papers share a method, not a background): its triples then
count only in those aspects' losses, not in the paper mean's or the other aspects'.
"""

from __future__ import annotations

from typing import Collection, Hashable, List, Optional, Sequence, Tuple

import numpy

from scholarly_nlp import ASPECTS, QUERY_ASPECTS


def triplet_indices(groups: Sequence[Optional[Hashable]],
                    papers: Optional[Sequence[Optional[Hashable]]] = None) -> List[Tuple[int, int, int]]:
    """(anchor, positive, negative) index triples: same group vs every other group.

    Docs whose group is None take part only as negatives. With ``papers`` (one paper id per
    Doc, None for unknown), a Doc of the anchor's or the positive's paper is not their negative.
    """
    papers = list(papers) if papers is not None else [None] * len(groups)
    if len(papers) != len(groups):
        raise ValueError(f"{len(groups)} groups but {len(papers)} paper ids")
    triples = []
    for a, ga in enumerate(groups):
        if ga is None:
            continue
        negatives = [n for n, gn in enumerate(groups) if gn != ga]
        for p, gp in enumerate(groups):
            if p == a or gp != ga:
                continue
            own = {papers[a], papers[p]} - {None}
            triples.extend((a, p, n) for n in negatives if papers[n] not in own)
    return triples


def aspect_triplet_loss(vectors, groups: Sequence[Optional[Hashable]], margin: float = 0.2,
                        aspect_weight: float = 1.0,
                        papers: Optional[Sequence[Optional[Hashable]]] = None,
                        aspects: Optional[Sequence[Optional[Collection[str]]]] = None) -> Tuple[float, numpy.ndarray]:
    """Loss and its gradient for a (B, n_aspects, width) array of aspect vectors.

    Mean hinge ``max(0, margin + d(a, p) - d(a, n))`` over all triples (see
    :func:`triplet_indices` for ``papers``), on the normalised mean of the aspect vectors, plus
    ``aspect_weight`` times the same on each query aspect's vector. ``aspects`` gives, per Doc,
    the query aspects its group teaches (None: the mean and every aspect; every Doc of a group
    must say the same); a triple whose anchor names some counts only in those aspects' hinges.
    Each hinge is the mean over the triples it counts, so in a batch that mixes restricted and
    unrestricted groups a restricted aspect's hinge averages over more triples than the others.
    Returns ``(loss, d_vectors)``; both are 0 without any triple.
    """
    import torch

    host = numpy.asarray(vectors.get() if hasattr(vectors, "get") else vectors, dtype="float32")
    taught = _taught_aspects(aspects, groups)
    triples = triplet_indices(groups, papers)
    if not triples:
        return 0.0, numpy.zeros_like(host)
    x = torch.tensor(host, requires_grad=True)
    normed = torch.nn.functional.normalize(x, dim=-1)
    paper = torch.nn.functional.normalize(normed.mean(dim=1), dim=-1)

    def hinge(v, keep):
        chosen = [t for t in triples if keep(taught[t[0]])]
        if not chosen:
            return v.sum() * 0.0
        a, p, n = (torch.tensor(col) for col in zip(*chosen))
        return torch.relu(margin + (v[a] - v[p]).norm(dim=-1) - (v[a] - v[n]).norm(dim=-1)).mean()

    loss = hinge(paper, lambda names: names is None)
    for aspect in QUERY_ASPECTS:
        loss = loss + aspect_weight * hinge(normed[:, ASPECTS.index(aspect)],
                                            lambda names, aspect=aspect: names is None or aspect in names)
    loss.backward()
    return float(loss.item()), x.grad.numpy()


def _taught_aspects(aspects, groups: Sequence[Optional[Hashable]]) -> list:
    """Per Doc, None (everything) or the frozenset of query aspects its group teaches.

    ValueError for a length that is not the groups', an unknown or empty aspect list, or two
    Docs of one group that name different aspects.
    """
    if aspects is None:
        return [None] * len(groups)
    if len(aspects) != len(groups):
        raise ValueError(f"{len(groups)} groups but {len(aspects)} aspect restrictions")
    taught, per_group = [], {}
    for group, names in zip(groups, aspects):
        if names is not None:
            names = [names] if isinstance(names, str) else list(names)
            if not names:
                raise ValueError(f"group {group!r} teaches an empty list of aspects: leave the restriction "
                                 "out (every aspect) or leave the group out")
            unknown = [name for name in names if name not in QUERY_ASPECTS]
            if unknown:
                raise ValueError(f"group {group!r} names {unknown!r}; a group teaches the query aspects "
                                 f"{', '.join(QUERY_ASPECTS)}")
            names = frozenset(names)
        if group is not None:
            if per_group.setdefault(group, names) != names:
                raise ValueError(f"the Docs of group {group!r} name different aspects "
                                 f"({_shown(per_group[group])} and {_shown(names)})")
        taught.append(names)
    return taught


def _shown(names) -> str:
    return "all" if names is None else ", ".join(sorted(names))
