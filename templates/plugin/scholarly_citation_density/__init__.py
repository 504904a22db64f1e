"""A scholarly_nlp plugin: the ``citation_density`` component and command (see README.md).

Nothing is imported here: scholarly_nlp loads :mod:`.plugin` through the ``scholarly_nlp``
entry point, and the hooks import the rest when they run.
"""

__version__ = "0.1.0"
