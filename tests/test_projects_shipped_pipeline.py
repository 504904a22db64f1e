"""Every Weasel project ships its trained components in ``pipelines/scholarly_core`` and
evaluates the shipped pipeline by default, loading only the pipes it measures.

Read from the project files alone (nothing runs): ``vars.model`` is the installed package,
``vars.trained`` what training writes; ``package`` copies the project's components from
``${vars.trained}`` with the training data's name, licence and URL; ``all`` packages before it
evaluates and records the metrics last; the evaluate scripts load with ``components=``.
"""

from __future__ import annotations

import ast
import shlex

import pytest
import srsly

from conftest import REPO

PROJECTS = REPO / "projects"
SHIPPED = {
    "aspect_embedder": ["transformer", "sentence_role_tagger", "aspect_embedder"],
    "citance_linkage": ["citance_linker", "citance_facet_classifier"],
    "contribution_linker": ["contribution_detector", "contribution_linker"],
    "figure_embeddings": ["figure_embedder"],
    "figure_ranker": ["figure_ranker"],
}
PACKAGING = ["python", "-m", "scholarly_nlp.packaging"]


def project(name: str) -> tuple[dict, dict]:
    """(the project.yml, its commands by name), variables not substituted."""
    config = srsly.read_yaml(PROJECTS / name / "project.yml")
    return config, {command["name"]: command for command in config["commands"]}


def option_values(argv: list[str], option: str) -> list[str]:
    """Every value given to ``option`` in ``argv``."""
    return [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == option]


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_evaluate_defaults_to_the_shipped_pipeline_and_training_has_its_own_var(name):
    config, commands = project(name)
    assert config["vars"]["model"] == "scholarly_core"
    assert config["vars"]["trained"].startswith("training/")
    assert config["vars"]["pipelines"] == "../../pipelines"
    for command in commands.values():  # a package name is no file: never a dep or an output
        assert "${vars.model}" not in command.get("deps", []) + command.get("outputs", []), command["name"]
    assert any("${vars.model}" in line for line in commands["evaluate"]["script"])


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_package_copies_the_projects_components_with_their_data_sources(name):
    _, commands = project(name)
    (line,) = commands["package"]["script"]
    argv = shlex.split(line)
    assert argv[:5] == PACKAGING + ["add", "${vars.trained}"]
    assert option_values(argv, "--into") == ["${vars.pipelines}/scholarly_core"]
    assert option_values(argv, "--components") == [",".join(SHIPPED[name])]
    assert option_values(argv, "--project") == [name]
    sources = option_values(argv, "--source")
    assert sources and all(len(source.split("|")) == 3 and source.split("|")[2].startswith("https://")
                           for source in sources)
    assert commands["package"]["deps"] == ["${vars.trained}"]


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_record_metrics_names_the_package_project_and_keys(name):
    _, commands = project(name)
    lines = [shlex.split(line) for line in commands["record-metrics"]["script"]]
    for argv in lines:
        assert argv[:5] == PACKAGING + ["metrics", "${vars.pipelines}/scholarly_core"]
        assert option_values(argv, "--keys") and option_values(argv, "--metrics")
        assert set(option_values(argv, "--metrics")) <= set(commands["record-metrics"]["deps"])
    assert option_values(lines[0], "--project") == [name]


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_all_packages_then_evaluates_then_records(name):
    config, commands = project(name)
    steps = config["workflows"]["all"]
    trained = {"${vars.trained}", config["vars"]["trained"]}
    writes_trained = [i for i, step in enumerate(steps) if trained & set(commands[step].get("outputs", []))]
    assert writes_trained and writes_trained[-1] < steps.index("package") < steps.index("evaluate")
    assert steps[-1] == "record-metrics"
    assert set(config["workflows"]["smoke"]).isdisjoint({"package", "record-metrics"})


@pytest.mark.parametrize("script", sorted(PROJECTS.glob("*/scripts/evaluate*.py")), ids=lambda p: p.parent.parent.name + "/" + p.name)
def test_evaluate_scripts_load_only_the_pipes_they_measure(script):
    tree = ast.parse(script.read_text(encoding="utf-8"))
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
             and node.func.attr == "load" and isinstance(node.func.value, ast.Name)]
    assert not [c for c in calls if c.func.value.id == "spacy"], "spacy.load loads every pipe of the pipeline"
    loads = [c for c in calls if c.func.value.id == "scholarly_nlp"]
    if not loads:  # a script may load through a sibling evaluate script's loader, which is checked itself
        borrowed = [node for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                    and (script.parent / f"{node.module}.py").exists() and node.module.startswith("evaluate")
                    and any(alias.name.startswith("load") for alias in node.names)]
        assert borrowed, "the script neither loads with scholarly_nlp.load(components=...) nor uses a sibling's loader"
        return
    assert all(any(k.arg == "components" for k in c.keywords) for c in loads)
