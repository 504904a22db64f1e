"""spaCy's own discovery path: the module named by the ``spacy_factories`` entry point.

spaCy imports it whenever it creates a ``Language``; importing it registers the factory
(unless the scholarly_nlp plugin path already did, with the same function), so
``spacy.load`` of a saved pipeline works even with the pluggy plugin disabled.
"""

from __future__ import annotations

from spacy.language import Language

from .keyword_tagger import ASSIGNS, DEFAULT_CONFIG, FACTORY_NAME, make_keyword_tagger

if not Language.has_factory(FACTORY_NAME):
    Language.factory(FACTORY_NAME, default_config=dict(DEFAULT_CONFIG), assigns=ASSIGNS, func=make_keyword_tagger)

#: The attribute the entry point names.
example_keyword_tagger = make_keyword_tagger
