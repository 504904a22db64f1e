"""Every hook is documented and tested (as datasette checks its plugin hooks).

For each hookspec in ``scholarly_nlp/hookspecs.py``:

* ``docs/plugins.md`` has a heading with the hook's exact signature
  (``### `register_components(register)` ``), and its section names every parameter of the
  ``register(...)`` call the hookspec's docstring declares, says ``firstresult`` when the
  hook is one, and holds a Python example implementing the hook with ``@hookimpl``;
* a test function named ``test_hook_<hook name>`` exists in a test module other than this
  one (``tests/test_plugin_hooks.py`` has one per hook).

And the guide stays true: it documents no hook that does not exist, names the entry-point
group and the environment variables as ``scholarly_nlp.plugins`` spells them, and its
Python examples import only ``scholarly_nlp``'s public API.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from pathlib import Path

import pytest

import scholarly_nlp
from scholarly_nlp import hookspecs, plugins

from conftest import REPO

DOCS = REPO / "docs" / "plugins.md"
TESTS = REPO / "tests"
HEADING = re.compile(r"^(#{2,6})\s+`?([A-Za-z_]\w*)\(([^)]*)\)`?\s*$")
FENCE = re.compile(r"^([ ]*)```python\n(.*?)^[ ]*```", re.MULTILINE | re.DOTALL)


def python_blocks(text: str) -> list[str]:
    """The ```python fenced blocks of a Markdown text, dedented (also those inside list items)."""
    return [textwrap.dedent(code) for _indent, code in FENCE.findall(text)]


def hooks() -> dict[str, object]:
    """The hookspec functions of scholarly_nlp, by name."""
    marker = f"{hookspecs.PROJECT_NAME}_spec"
    return {name: f for name, f in vars(hookspecs).items() if inspect.isfunction(f) and hasattr(f, marker)}


def signature(function) -> str:
    return f"{function.__name__}({', '.join(inspect.signature(function).parameters)})"


def is_firstresult(function) -> bool:
    return bool(getattr(function, f"{hookspecs.PROJECT_NAME}_spec").get("firstresult"))


def register_parameters(function) -> list[str]:
    """The parameter names of the ``register(...)`` call the hookspec's docstring declares."""
    doc = inspect.getdoc(function) or ""
    start = doc.find("register(")
    if start < 0:
        return []
    depth, end = 0, None
    for i in range(start + len("register"), len(doc)):
        depth += {"(": 1, ")": -1}.get(doc[i], 0)
        if depth == 0:
            end = i + 1
            break
    assert end, f"{function.__name__}: unbalanced register(...) in its docstring"
    call = ast.parse(" ".join(doc[start:end].split()), mode="eval").body
    return [a.id for a in call.args if isinstance(a, ast.Name)] + [k.arg for k in call.keywords if k.arg]


def doc_sections() -> dict[str, tuple[str, str]]:
    """Hook-like headings of docs/plugins.md: name -> (signature as written, section text)."""
    lines = DOCS.read_text(encoding="utf-8").splitlines()
    found: dict[str, tuple[str, str]] = {}
    for i, line in enumerate(lines):
        match = HEADING.match(line)
        if not match:
            continue
        level = len(match.group(1))
        end = next((j for j in range(i + 1, len(lines))
                    if re.match(rf"^#{{1,{level}}}\s", lines[j])), len(lines))
        name, args = match.group(2), match.group(3)
        assert name not in found, f"docs/plugins.md documents {name} twice"
        found[name] = (f"{name}({', '.join(a.strip() for a in args.split(',') if a.strip())})",
                       "\n".join(lines[i + 1:end]))
    return found


def test_there_are_hooks_to_check():
    assert {"register_components", "sniff_format"} <= set(hooks())


@pytest.mark.parametrize("name", sorted(hooks()))
def test_every_hook_is_documented(name):
    function = hooks()[name]
    sections = doc_sections()
    assert name in sections, f"hook {name} has no heading `{signature(function)}` in docs/plugins.md"
    written, text = sections[name]
    assert written == signature(function), f"hook {name}: docs/plugins.md says {written}, the hookspec is {signature(function)}"
    missing = [p for p in register_parameters(function) if not re.search(rf"\b{p}\b", text)]
    assert not missing, f"hook {name}: docs/plugins.md does not describe register(...) parameters {missing}"
    if is_firstresult(function):
        assert "firstresult" in text, f"hook {name} is firstresult; its section in docs/plugins.md must say so"
    examples = [code for code in python_blocks(text) if "@hookimpl" in code and f"def {name}(" in code]
    assert examples, f"hook {name}: its section in docs/plugins.md has no ```python example with @hookimpl def {name}("
    for code in examples:
        ast.parse(code)


def test_every_hook_has_a_test():
    this = Path(__file__).resolve()
    defined: set[str] = set()
    for path in sorted(TESTS.glob("test_*.py")):
        if path.resolve() == this:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        defined |= {node.name for node in ast.walk(tree)
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_hook_")}
    missing = [name for name in sorted(hooks())
               if not any(test == f"test_hook_{name}" or test.startswith(f"test_hook_{name}_") for test in defined)]
    assert not missing, f"hooks without a test_hook_<name> test under tests/: {', '.join(missing)}"


def test_the_guide_documents_no_hook_that_does_not_exist():
    hook_like = {name for name in doc_sections() if name.startswith(("register_", "sniff_"))}
    stale = sorted(hook_like - set(hooks()))
    assert not stale, f"docs/plugins.md documents hooks that scholarly_nlp/hookspecs.py does not define: {stale}"


def test_the_guide_names_the_entry_point_group_and_environment_variables():
    text = DOCS.read_text(encoding="utf-8")
    for name in (plugins.ENTRY_POINT_GROUP, plugins.ENV_STRICT, plugins.ENV_ALLOW, plugins.ENV_DISABLE,
                 "spacy_factories", "scholarly_nlp.spacy_bridge:PLUGINS_LOADED"):
        assert name in text, f"docs/plugins.md does not mention {name}"


def test_the_guides_examples_use_only_the_public_api():
    public = set(scholarly_nlp.__all__)
    for code in python_blocks(DOCS.read_text(encoding="utf-8")):
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.ImportFrom) and node.module == "scholarly_nlp":
                missing = [a.name for a in node.names if a.name not in public]
                assert not missing, f"docs/plugins.md example imports {missing}, not in scholarly_nlp.__all__"
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("scholarly_nlp."):
                pytest.fail(f"docs/plugins.md example imports from {node.module}, not the public API")
            elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                  and node.value.id == "scholarly_nlp"):
                assert node.attr in public, f"docs/plugins.md example uses scholarly_nlp.{node.attr}, not public"
