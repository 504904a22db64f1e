"""Projects and benchmarks use the declared API too (issue 16, item 3), as components do.

``tests/test_plugins.py`` holds every package under ``components/`` to the declared modules;
the Weasel projects' scripts and the benchmarks are users of the library in the same sense, so
a rename inside the core cannot break them silently either.
"""

from __future__ import annotations

from pathlib import Path

from test_plugins import _declared_api_violations

REPO = Path(__file__).resolve().parents[1]


def test_projects_and_benchmarks_import_only_the_declared_api():
    found = []
    for folder in ("projects", "benchmarks"):
        for source in sorted((REPO / folder).rglob("*.py")):
            found += _declared_api_violations(source, REPO)
    assert not found, "imports outside the declared API:\n" + "\n".join(found)
