"""An example third-party scholarly_nlp plugin (see the package README).

Nothing is imported here: scholarly_nlp loads :mod:`.plugin` through its entry point, and
spaCy loads :mod:`.spacy_factories` through ``spacy_factories``.
"""

__version__ = "0.1.0"
