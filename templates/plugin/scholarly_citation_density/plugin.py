"""The module named by the ``scholarly_nlp`` entry point: the plugin's hook implementations.

Each hook imports what it needs inside its body, so loading the plugin costs nothing until
a hook runs, and heavy libraries (none here) would never load at plugin import.
"""

from __future__ import annotations

from typing import Any

from scholarly_nlp import hookimpl


@hookimpl
def register_components(register: Any) -> None:
    """``citation_density``: citances per body section, stored in ``doc._.citation_density``
    (the component's spec, :data:`.component.SPEC`, declares the attribute too)."""
    from .component import SPEC, make_citation_density

    register(SPEC, make_citation_density)


@hookimpl
def register_commands(cli: Any) -> None:
    """``scholarly-nlp citation-density PATH...``."""
    from .commands import citation_density_command

    cli.add_command(citation_density_command)
