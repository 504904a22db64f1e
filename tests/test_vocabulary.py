"""Vocabulary (issue 16, item 6): "facet" means the CL-SciSumm citation facet only.

CSFCube's query facets (background, method, result) are *aspects* in scholarly_nlp:
``QUERY_ASPECTS``, ``check_aspect``, the aspect embedder's ``aspect_search_vector``,
``similar(..., aspect=...)``. No identifier of the library or of the aspect embedder may
call one of them a facet again; strings, comments and docstrings may (CSFCube's published
file names and its task's own name keep the word). Also: the metrics read no file.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import scholarly_nlp
from scholarly_nlp import ASPECTS, QUERY_ASPECTS, UnknownNameError, check_aspect

REPO = Path(__file__).resolve().parent.parent
LIBRARY = REPO / "scholarly_nlp"
CITATION_FACET_MODULES = (
    LIBRARY / "metrics" / "facets.py",
    LIBRARY / "metrics" / "clscisumm.py",
    *sorted((LIBRARY / "readers").glob("clscisumm*.py")),
)
"""The modules about citation facets: their own identifiers may say facet."""


def identifiers(tree: ast.AST):
    """``(name, line)`` of every identifier of a module: names, attributes, definitions,
    arguments, keywords and imported names (strings, comments and docstrings are not)."""
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Name):
            yield node.id, line
        elif isinstance(node, ast.Attribute):
            yield node.attr, line
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.name, line
        elif isinstance(node, ast.arg):
            yield node.arg, line
        elif isinstance(node, ast.keyword) and node.arg:
            yield node.arg, node.value.lineno
        elif isinstance(node, ast.ImportFrom):
            yield from ((part, line) for part in (node.module or "").split(".") if part)
            for alias in node.names:
                yield from ((name, line) for name in (alias.name, alias.asname) if name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield from ((part, line) for part in alias.name.split("."))
                if alias.asname:
                    yield alias.asname, line
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            yield from ((name, line) for name in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            yield node.name, line


def citation_facet_names() -> set[str]:
    """What other modules may use: the citation-facet modules' names and top-level definitions."""
    names = set()
    for path in CITATION_FACET_MODULES:
        names.add(path.stem)
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def facet_identifiers(source: Path, allowed: set[str]) -> list[str]:
    """``file:line: name`` for each identifier of ``source`` that contains "facet" (any case)."""
    tree = ast.parse(source.read_text(encoding="utf-8"))
    return sorted({f"{source.relative_to(REPO) if source.is_relative_to(REPO) else source.name}:{line}: {name}"
                   for name, line in identifiers(tree) if "facet" in name.lower() and name not in allowed})


def checked_files() -> list[Path]:
    """scholarly_nlp/ (bar the citation-facet modules) and the aspect embedder package."""
    library = [p for p in LIBRARY.rglob("*.py") if p not in CITATION_FACET_MODULES]
    embedder = sorted((REPO / "components" / "aspect_embedder" / "scholarly_aspect_embedder").rglob("*.py"))
    assert len(library) > 50 and len(embedder) >= 10, (len(library), len(embedder))
    return sorted(library) + embedder


def test_facet_means_the_citation_facet_only():
    allowed = citation_facet_names()
    assert {"facet_f1", "FACET_LABELS", "normalize_facet"} <= allowed
    found = [hit for source in checked_files() for hit in facet_identifiers(source, allowed)]
    assert not found, ('"facet" is the citation facet only; CSFCube\'s query facets are aspects '
                       "(QUERY_ASPECTS, check_aspect):\n" + "\n".join(found))


def test_the_vocabulary_check_reads_identifiers_not_text(tmp_path):
    source = tmp_path / "sample.py"
    source.write_text('"""A facet docstring."""\n'
                      "# a facet comment\n"
                      "from scholarly_nlp.metrics import facet_f1\n"
                      "def similar(doc, facet='method'):\n"
                      "    label = 'facet'\n"
                      "    return rank(doc, query_facet=facet)\n", encoding="utf-8")
    found = facet_identifiers(source, citation_facet_names())
    assert found == ["sample.py:4: facet", "sample.py:6: facet", "sample.py:6: query_facet"], found


def test_query_aspects_replace_the_facets():
    assert QUERY_ASPECTS == ASPECTS[1:] == ("background", "method", "result")
    assert check_aspect("result") == "result"
    with pytest.raises(UnknownNameError, match="Unknown aspect 'title'") as info:
        check_aspect("title")
    assert info.value.kind == "aspect"
    assert not {"FACETS", "check_facet"} & (set(scholarly_nlp.__all__) | set(dir(scholarly_nlp)))


def test_metrics_read_no_files():
    """Metrics stay pure: no module of scholarly_nlp.metrics opens a file or imports file I/O."""
    file_modules = {"json", "os", "io", "pathlib", "csv", "gzip", "shutil"}
    found = []
    for source in sorted((LIBRARY / "metrics").glob("*.py")):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            where = f"{source.name}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Import):
                found += [f"{where}: import {a.name}" for a in node.names if a.name.split(".")[0] in file_modules]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in file_modules:
                found.append(f"{where}: from {node.module} import ...")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open":
                found.append(f"{where}: open(...)")
    assert not found, "file reading belongs in scholarly_nlp.readers:\n" + "\n".join(found)
