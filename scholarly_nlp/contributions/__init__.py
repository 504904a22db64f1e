"""Contribution statements of papers (issue #6, the contribution linker).

Which introduction sentences state a paper's contributions, and which body paragraph explains
each. Step 1, contribution-sentence detection, starts from :mod:`.detector_data`: it turns
NLPContributionGraph papers (:mod:`scholarly_nlp.readers.ncg`) into labelled sentence rows
with context features, and splits them by paper. The linking step (sentence -> paragraph)
has its own modules in this package.
"""
