"""The bridge from spaCy's entry points to scholarly_nlp's pluggy plugins.

spaCy imports every ``spacy_factories`` entry point when it creates a ``Language``. The
core declares one (``scholarly_nlp = scholarly_nlp.spacy_bridge:PLUGINS_LOADED``), so
importing this module loads the pluggy plugins, which register their component factories
and extensions. Thus ``spacy.load(path)`` of a saved scholarly_nlp pipeline works in a
fresh interpreter with nothing imported by hand. Loading is guarded: a broken plugin only
warns (see :mod:`scholarly_nlp.plugins`).
"""

from __future__ import annotations

from .doc.extensions import install_extensions
from .plugins import get_registry

#: The loaded registry; the entry point names this attribute. It exists (as None) before
#: loading starts, so that a plugin whose hook creates a Language while the plugins load
#: (spaCy then loads this entry point again) finds it instead of failing.
PLUGINS_LOADED = None
install_extensions()
PLUGINS_LOADED = get_registry()
