"""Adding plugin components to a pipeline by name, with a scholarly_nlp error for unknown names.

``nlp.add_pipe("typo")`` raises spaCy's generic ``ValueError`` [E002], listing every spaCy
factory. :func:`add_component` loads the plugins first and raises
:class:`~scholarly_nlp.errors.UnknownComponentError` (a ``ScholarlyNLPError``, which the
CLI prints as one line) naming the components scholarly_nlp plugins provide.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from spacy.language import Language

from .errors import UnknownComponentError
from .plugins import get_registry


def add_component(nlp: Language, factory: str, config: Optional[dict] = None, **add_pipe_options: Any) -> Callable:
    """Add the component made by ``factory`` to ``nlp`` and return it.

    ``config`` overrides the factory's defaults; ``add_pipe_options`` are those of
    ``Language.add_pipe`` (``name`` for the instance name, ``before``, ``after``,
    ``first``, ``last``, ``source``, ``validate``). Raises UnknownComponentError when no
    factory of that name exists.
    """
    registry = get_registry()
    if add_pipe_options.get("source") is None and not nlp.has_factory(factory):
        raise UnknownComponentError(factory, sorted(registry.components))
    return nlp.add_pipe(factory, config=config or {}, **add_pipe_options)
