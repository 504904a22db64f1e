"""Contribution detector: which introduction sentences of a paper state its contributions.

The spaCy factory is ``contribution_detector``; it writes ``doc._.contribution_scores`` and
``doc._.contribution_sentences``. :mod:`.ncg_docs` turns NLPContributionGraph papers into
training Docs; :mod:`.features` holds the sentence features both share.
"""

from .factory import ContributionDetector, make_contribution_detector

__all__ = ["ContributionDetector", "make_contribution_detector"]
