"""Speed of ``scholarly-nlp analyze`` over the dev TEI papers, against its own model forward passes.

Issue 13, item 10: papers/second of what ``analyze`` does per paper (read the TEI into a Doc,
run the pipeline, build the analysis record and serialise it to JSON), the ratio of the time
spent inside the models' forward passes to the pipeline's time (target >= 0.8), and peak memory.

Per paper, one pass does what ``scholarly-nlp analyze`` does for it:

* **read**: ``scholarly_nlp.read(path, nlp=nlp)`` (the TEI reader and the Doc builder, as
  ``read_many`` does before ``run_pipeline``);
* **pipeline**: each pipe of ``nlp.pipeline`` called in turn (what ``nlp(doc)`` does), timed
  one by one, so every component gets its own line;
* **record**: ``scholarly_nlp.analysis_record(doc, nlp)`` and ``json.dumps`` (the file write
  of ``analyze`` is left out: it measures the disk, not the library).

The "bare model forward passes" are measured inside the same run, not re-created: a torch
forward pre-hook and hook on the top-level torch module of every component (the modules of its
thinc ``PyTorchShim``s, spacy-transformers' Hugging Face model included, and torch modules the
pipe holds outside thinc, such as a lazily loaded sentence encoder) sum the wall time of the
outermost forward calls only (a module called inside another hooked one is not counted twice),
attributed to the phase running at the time. Everything else (Hugging Face tokenisers, batching,
thinc conversions, the component's own Python) is overhead. ``forward / pipeline`` >= 0.8 is
the target; the per-component lines show where the overhead is. Modules are found after the
warm-up paper, so lazily loaded ones are hooked too; one that appears later is reported.

    python benchmarks/bench_analyze.py                       # scholarly_core, the 20 dev papers
    python benchmarks/bench_analyze.py --pipeline training/model-best --papers 2
    python benchmarks/bench_analyze.py --repeats 3 --json out.json [--gpu-id 0]

Prints markdown tables and writes JSON (``benchmarks/results/analyze.json`` unless ``--json``).
Peak memory is the process's ``ru_maxrss`` (imports and model loading included).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (DEFAULT_DATA_ROOT, RESULTS_DIR, ensure_repo_on_path, machine_info, markdown_table, pct, ratio,
                     write_json)

ensure_repo_on_path()

import torch  # noqa: E402
from thinc.api import Model, PyTorchShim  # noqa: E402

import scholarly_nlp  # noqa: E402

TARGET_RATIO = 0.8
GOLD_FILE = Path("gold") / "central_figures_dev.jsonl"
TEI_DIR = Path("tei") / "acl"
#: How deep :func:`torch_modules` looks through a pipe's attributes for torch modules.
_ATTRIBUTE_DEPTH = 4


def data_root() -> Path:
    """The shared data folder: ``SCHOLARLY_NLP_DATA`` when set, else ``../shared/data``."""
    return Path(os.environ.get("SCHOLARLY_NLP_DATA") or DEFAULT_DATA_ROOT)


def dev_papers(root: Path, limit: int | None = None) -> list[Path]:
    """The TEI files of the papers named in the central-figure dev gold, in the gold's order."""
    with open(root / GOLD_FILE, encoding="utf-8") as handle:
        ids = [json.loads(line)["paper_id"] for line in handle if line.strip()]
    paths = [root / TEI_DIR / f"{paper_id}.tei.xml" for paper_id in ids[:limit]]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"dev TEI missing: {', '.join(missing)}")
    return paths


def peak_rss_mib() -> float:
    """The process's peak resident set size so far, in MiB (``ru_maxrss`` is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _attribute_modules(obj, depth: int, seen: set, found: list) -> None:
    """Append the torch modules reachable from ``obj`` through attributes to ``found``.

    Follows thinc Models (their shims' modules) and the attributes of the library's own
    objects (classes from ``scholarly*`` modules), at most ``depth`` levels deep; ``seen``
    holds the ids of the objects already visited.
    """
    if id(obj) in seen or depth < 0:
        return
    seen.add(id(obj))
    if isinstance(obj, torch.nn.Module):
        found.append(obj)
    elif isinstance(obj, Model):
        for node in obj.walk():
            found += [shim._model for shim in node.shims if isinstance(shim, PyTorchShim)]
    elif type(obj).__module__.startswith("scholarly"):
        for value in _attributes(obj):
            _attribute_modules(value, depth - 1, seen, found)


def _attributes(obj) -> list:
    """``obj``'s attribute values (spaCy's TrainablePipe keeps ``model`` in a C slot, outside ``vars()``)."""
    return [getattr(obj, "model", None), *getattr(obj, "__dict__", {}).values()]


def torch_modules(pipe) -> list[torch.nn.Module]:
    """The outermost torch modules a pipe runs: none of them is a sub-module of another."""
    found: list[torch.nn.Module] = []
    seen = {id(pipe)}
    for value in _attributes(pipe):  # the pipe itself may come from any package (spacy-transformers)
        _attribute_modules(value, _ATTRIBUTE_DEPTH - 1, seen, found)
    unique = list({id(m): m for m in found}.values())
    return [m for m in unique
            if not any(other is not m and any(sub is m for sub in other.modules()) for other in unique)]


class ForwardTimer:
    """Wall time of the outermost forward calls of hooked torch modules, per phase.

    Set :attr:`phase` to the name of what runs next; the time of each outermost forward call
    (calls nested in another hooked module's forward are not counted again) goes to it.
    On a GPU the hooks synchronise, so the time is the kernels', not their launch.
    """

    def __init__(self, synchronize: bool = False):
        self.phase = "untracked"
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        #: Waits for the GPU's queued work (a no-op on CPU).
        self.sync = torch.cuda.synchronize if synchronize else (lambda: None)
        self._depth = 0
        self._start = 0.0
        self._handles: list = []
        self.hooked: set[int] = set()

    def hook(self, module: torch.nn.Module) -> None:
        """Time ``module``'s forward calls (once per module)."""
        if id(module) in self.hooked:
            return
        self.hooked.add(id(module))
        self._handles.append(module.register_forward_pre_hook(self._enter))
        self._handles.append(module.register_forward_hook(self._exit, always_call=True))

    def _enter(self, _module, _args) -> None:
        if self._depth == 0:
            self.sync()
            self._start = time.perf_counter()
        self._depth += 1

    def _exit(self, _module, _args, _output) -> None:
        self._depth -= 1
        if self._depth == 0:
            self.sync()
            self.seconds[self.phase] += time.perf_counter() - self._start
            self.calls[self.phase] += 1

    def remove(self) -> None:
        """Take every hook off again."""
        for handle in self._handles:
            handle.remove()
        self._handles.clear()


def analyze_paper(path: Path, nlp, timer: ForwardTimer, seconds: dict[str, float]) -> None:
    """What ``analyze`` does for one paper, adding each phase's wall time to ``seconds``.

    Phases: ``read``, ``pipe:<name>`` for every pipe, ``record`` (record + ``json.dumps``).
    """
    def phase(name: str, function, *args):
        timer.phase = name
        start = time.perf_counter()
        value = function(*args)
        timer.sync()
        seconds[name] += time.perf_counter() - start
        return value

    doc = phase("read", lambda: scholarly_nlp.read(path, nlp=nlp))
    for name, proc in nlp.pipeline:
        doc = phase(f"pipe:{name}", proc, doc)
    phase("record", lambda: json.dumps(scholarly_nlp.analysis_record(doc, nlp), ensure_ascii=False))
    timer.phase = "untracked"


def hook_pipeline(nlp, timer: ForwardTimer) -> dict[str, list[str]]:
    """Hook every pipe's outermost torch modules; per pipe, what was hooked (class, parameters)."""
    hooked = {}
    for name, pipe in nlp.pipeline:
        modules = torch_modules(pipe)
        for module in modules:
            timer.hook(module)
        hooked[name] = [f"{type(m).__name__} ({sum(p.numel() for p in m.parameters()):,} params)"
                        for m in modules]
    return hooked


def unhooked_modules(nlp, timer: ForwardTimer) -> list[str]:
    """Pipes' torch modules that appeared after hooking (loaded lazily after the warm-up)."""
    return [f"{name}: {type(m).__name__}" for name, pipe in nlp.pipeline
            for m in torch_modules(pipe) if id(m) not in timer.hooked]


def measure(nlp, paths: list[Path], repeats: int, gpu: bool) -> dict:
    """Warm up on one paper, hook the models, then time ``repeats`` passes over ``paths``."""
    timer = ForwardTimer(synchronize=gpu)
    warm_up: dict[str, float] = defaultdict(float)
    analyze_paper(paths[0], nlp, timer, warm_up)
    rss_after_warm_up = peak_rss_mib()
    hooked = hook_pipeline(nlp, timer)
    seconds: dict[str, float] = defaultdict(float)
    pass_seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        for path in paths:
            analyze_paper(path, nlp, timer, seconds)
        pass_seconds.append(time.perf_counter() - start)
    timer.remove()
    return {"seconds": dict(seconds), "forward_seconds": dict(timer.seconds), "forward_calls": dict(timer.calls),
            "pass_seconds": pass_seconds, "hooked_modules": hooked, "unhooked_modules": unhooked_modules(nlp, timer),
            "warm_up_seconds": round(sum(warm_up.values()), 3), "rss_after_warm_up_mib": round(rss_after_warm_up, 1)}


def summarise(raw: dict, papers: int, repeats: int) -> dict:
    """Per-paper seconds and forward shares of every phase, the totals and the ratios."""
    n = papers * repeats
    seconds, forward = raw["seconds"], raw["forward_seconds"]
    pipes = [k for k in seconds if k.startswith("pipe:")]
    pipeline_s = sum(seconds[k] for k in pipes)
    total_s = sum(seconds.values())
    forward_s = sum(forward.get(k, 0.0) for k in seconds)
    phases = {k: {"s_per_paper": seconds[k] / n, "forward_s_per_paper": forward.get(k, 0.0) / n,
                  "forward_calls_per_paper": raw["forward_calls"].get(k, 0) / n,
                  "share_of_end_to_end": ratio(seconds[k], total_s),
                  "forward_ratio": ratio(forward.get(k, 0.0), seconds[k])} for k in seconds}
    pipeline_forward_s = sum(forward.get(k, 0.0) for k in pipes)
    pipeline_ratio = ratio(pipeline_forward_s, pipeline_s)
    return {
        "phases": phases,
        "pipeline_s_per_paper": pipeline_s / n,
        "pipeline_forward_s_per_paper": pipeline_forward_s / n,
        "end_to_end_s_per_paper": total_s / n,
        "forward_s_per_paper": forward_s / n,
        "papers_per_s": ratio(n, total_s),
        "papers_per_s_best_pass": max(papers / s for s in raw["pass_seconds"]),
        "pipeline_papers_per_s": ratio(n, pipeline_s),
        "forward_over_pipeline": pipeline_ratio,
        "forward_over_end_to_end": ratio(forward_s, total_s),
        "target_forward_over_pipeline": TARGET_RATIO,
        "target_met": pipeline_ratio is not None and pipeline_ratio >= TARGET_RATIO,
        "forward_outside_pipeline_s": sum(v for k, v in forward.items() if k not in pipes),
    }


def _num(value: float | None, digits: int = 4) -> str:
    """A number for a table ("-" for None)."""
    return "-" if value is None else f"{value:.{digits}f}"


def report(result: dict) -> str:
    """The results as markdown: one row per phase, then the summary lines."""
    s = result["summary"]
    rows = [(name, _num(p["s_per_paper"]), pct(p["share_of_end_to_end"]), _num(p["forward_s_per_paper"]),
             _num(p["forward_ratio"], 2), f"{p['forward_calls_per_paper']:.1f}")
            for name, p in s["phases"].items()]
    rows.append(("**pipeline (all pipes)**", _num(s["pipeline_s_per_paper"]), pct(ratio(s["pipeline_s_per_paper"],
                 s["end_to_end_s_per_paper"])), _num(s["pipeline_forward_s_per_paper"]),
                 _num(s["forward_over_pipeline"], 2), ""))
    rows.append(("**end to end**", _num(s["end_to_end_s_per_paper"]), "100.0%", _num(s["forward_s_per_paper"]),
                 _num(s["forward_over_end_to_end"], 2), ""))
    table = markdown_table(["phase", "s/paper", "share", "forward s/paper", "forward / phase", "forward calls/paper"],
                           rows)
    memory = result["memory_mib"]
    verdict = "met" if s["target_met"] else "NOT met"
    lines = [
        f"pipeline {result['pipeline']} ({', '.join(result['pipes'])}), {result['papers']} papers x "
        f"{result['repeats']} repeat(s), {result['device']}, torch threads {result['torch_threads']}, "
        f"load average {result['load_average']}",
        "", table, "",
        f"end to end: {s['papers_per_s']:.3f} papers/s ({s['end_to_end_s_per_paper']:.3f} s/paper; best pass "
        f"{s['papers_per_s_best_pass']:.3f} papers/s); pipeline alone {s['pipeline_papers_per_s']:.3f} papers/s",
        f"forward / pipeline: {_num(s['forward_over_pipeline'], 3)} (target >= {TARGET_RATIO}: {verdict}); "
        f"forward / end to end: {_num(s['forward_over_end_to_end'], 3)}",
        f"peak RSS MiB: start {memory['start']}, after load {memory['after_load']}, after warm-up "
        f"{memory['after_warm_up']}, after run {memory['after_run']}",
        "hooked modules: " + "; ".join(f"{k}: {', '.join(v) or 'none'}" for k, v in result["hooked_modules"].items()),
    ]
    if result["unhooked_modules"]:
        lines.append("WARNING: modules loaded after the warm-up were not timed: "
                     + ", ".join(result["unhooked_modules"]))
    return "\n".join(lines)


def parse_args(argv=None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pipeline", default="scholarly_core", help="installed pipeline package or pipeline folder")
    parser.add_argument("--papers", type=int, default=None, help="first N dev papers (default: all 20)")
    parser.add_argument("--repeats", type=int, default=1, help="measured passes after a one-paper warm-up")
    parser.add_argument("--gpu-id", type=int, default=-1, help="GPU to run the pipeline on (-1: CPU)")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="shared data folder (default: $SCHOLARLY_NLP_DATA or ../shared/data)")
    parser.add_argument("--json", type=Path, default=RESULTS_DIR / "analyze.json", help="where to write the results")
    args = parser.parse_args(argv)
    if args.repeats < 1 or (args.papers is not None and args.papers < 1):
        parser.error("--papers and --repeats must be at least 1")
    return args


def main(argv=None) -> int:
    """Load the pipeline, measure, print the tables and write the JSON."""
    args = parse_args(argv)
    try:
        paths = dev_papers(args.data_dir or data_root(), args.papers)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rss_start = peak_rss_mib()
    try:
        nlp = scholarly_nlp.load(args.pipeline, gpu_id=args.gpu_id)
    except (scholarly_nlp.ScholarlyNLPError, OSError) as exc:  # OSError: a package without its trained pipeline
        print(f"error: cannot load pipeline {args.pipeline!r} ({exc}); pass --pipeline", file=sys.stderr)
        return 2
    rss_loaded = peak_rss_mib()
    raw = measure(nlp, paths, args.repeats, gpu=args.gpu_id >= 0)
    result = {
        "machine": machine_info(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "pipeline": str(args.pipeline),
        "pipes": nlp.pipe_names,
        "papers": len(paths),
        "paper_ids": [p.name.removesuffix(".tei.xml") for p in paths],
        "repeats": args.repeats,
        "device": f"GPU {args.gpu_id}" if args.gpu_id >= 0 else "CPU",
        "torch_threads": torch.get_num_threads(),
        "memory_mib": {"start": round(rss_start, 1), "after_load": round(rss_loaded, 1),
                       "after_warm_up": raw.pop("rss_after_warm_up_mib"), "after_run": round(peak_rss_mib(), 1)},
        "summary": summarise(raw, len(paths), args.repeats),
        **raw,
    }
    print(report(result))
    write_json(args.json, result)
    print(f"\nwritten: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
