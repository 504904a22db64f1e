"""Doubling benchmark: does reading cost grow as O(n log n) with the size of the input?

Each case builds its own input at sizes n, 2n, 4n and 8n (generated, no data needed), times
one step on it, and prints the seconds per size and the ratio t(2n) / t(n) between
consecutive sizes: about 2 (a little over) for O(n log n), about 4 for a quadratic path.

Cases (``CASES``; each is ``make_input(n, tmpdir) -> input`` and ``run(input)``, so more can
be added, e.g. PDF ones):

``tei-figure-refs``
    ``scholarly_nlp.read`` of a TEI with n figures and n figure refs without ``@target``
    (each resolved by its "Figure k" text), one ref per paragraph.
``tei-paragraphs``
    ``scholarly_nlp.read`` of a TEI with n paragraphs (two ``<s>`` sentences, a citation and
    a figure ref each; a numbered section per 20 paragraphs). Past ~2,500 paragraphs the
    Doc text is over spaCy's default ``max_length`` of 1,000,000 characters (the shared
    pipeline's limit is raised, so that code which still checked it can be timed too).
``tei-punctuation-run``
    ``scholarly_nlp.read`` of a TEI whose one paragraph holds a run of n brackets without a
    space (seeded random ``(``, ``[``, ``)``, ``]``): a hostile input on which spaCy's
    tokenizer alone is quadratic.
``doc-from-json``
    ``doc_from_json`` of the JSON export (``doc_to_json``, through ``json.dumps``/``loads``)
    of a paper Doc of about n tokens, with a tokenizer that has not seen the text (as in a
    fresh process: ``load_json`` re-tokenises the text).
``doc-from-json-glued``
    the same for a Doc of n tokens of a real paper (the first TEI under
    ``acl/`` of ``--tei-root``, repeated; a generated one without the data) with no
    whitespace between them, as from a PDF whose spaces were lost: one run without a space,
    on which spaCy's tokenizer is quadratic.

Sizes start at each case's base n (``--quick``: a tenth of it, for a check in seconds).
Each size is timed ``--repeat`` times (best reported, process-CPU and wall); once one run
takes over ``--max-seconds``, the larger sizes of that case are skipped.

Usage::

    python benchmarks/bench_scaling.py [--quick] [--cases tei-figure-refs doc-from-json]
                                       [--steps 4] [--repeat 1] [--max-seconds 120]
                                       [--tei-root ../shared/data/tei] [--out FILE]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from _common import DEFAULT_TEI_ROOT, RESULTS_DIR, ensure_repo_on_path, machine_info, markdown_table, ratio, write_json

ensure_repo_on_path()


@dataclass(frozen=True)
class Case:
    """One scaling case: how to build an input of size n, and the step that is timed on it."""

    make_input: Callable[[int, Path], Any]
    run: Callable[[Any], object]
    base_n: int
    unit: str
    #: A short description of a built input (its real size), for the table; optional.
    describe: Optional[Callable[[Any], str]] = None


# --------------------------------------------------------------------------- TEI generation

_TEI_START = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><fileDesc><titleStmt>'
    '<title level="a" type="main">A generated paper for the scaling benchmark</title></titleStmt></fileDesc>'
    '<encodingDesc><appInfo><application version="0.8.0" ident="GROBID"/></appInfo></encodingDesc>'
    '<profileDesc><abstract><div><p><s>We measure how reading cost grows with the size of a paper.</s></p></div>'
    '</abstract></profileDesc></teiHeader><text><body>'
)
_BIB_ENTRIES = 20


def _bibliography() -> str:
    entries = "".join(
        f'<biblStruct xml:id="b{k}"><analytic><title level="a">Reference title {k}</title>'
        f'<author><persName><forename>Ann</forename><surname>Author{k}</surname></persName></author></analytic>'
        f'<monogr><title level="m">Proceedings of a conference</title><imprint><date when="20{k:02d}"/></imprint>'
        f'</monogr></biblStruct>'
        for k in range(_BIB_ENTRIES)
    )
    return f"<back><div><listBibl>{entries}</listBibl></div></back>"


def _tei(body: str, floats: str = "") -> str:
    return f"{_TEI_START}{body}{floats}</body>{_bibliography()}</text></TEI>\n"


def _figure(k: int) -> str:
    return (f'<figure xml:id="fig_{k}"><head>Figure {k}:</head><label>{k}</label>'
            f'<figDesc>The result of experiment {k} on the development set.</figDesc></figure>')


def figure_refs_tei(n: int) -> str:
    """A TEI with n figures and n paragraphs, each with one untargeted ref "Figure k"."""
    paragraphs = "".join(
        f'<p>The curve in <ref type="figure">Figure {k}</ref> rises with the size of the training set.</p>'
        for k in range(1, n + 1)
    )
    return _tei(f'<div><head n="1">Results</head>{paragraphs}</div>', "".join(_figure(k) for k in range(1, n + 1)))


def _paragraph(k: int) -> str:
    bib = k % _BIB_ENTRIES
    return (
        f'<p><s>Paragraph {k} reports that the proposed model improves over the baseline by a clear margin on '
        f'every benchmark we tried <ref type="bibr" target="#b{bib}">(Author{bib}, 20{bib:02d})</ref>.</s> '
        f'<s>The gain holds for long and short documents alike, as <ref type="figure" target="#fig_1">Figure 1</ref> '
        f'shows, and it does not depend on the random seed or on the order of the training examples.</s></p>'
    )


def paragraphs_tei(n: int, per_section: int = 20) -> str:
    """A TEI with n paragraphs in numbered sections of ``per_section`` paragraphs."""
    divs = []
    for first in range(0, n, per_section):
        number = first // per_section + 1
        body = "".join(_paragraph(k) for k in range(first, min(n, first + per_section)))
        divs.append(f'<div><head n="{number}">Section {number}</head>{body}</div>')
    return _tei("".join(divs), _figure(1))


def punctuation_run_tei(n: int, seed: int = 0) -> str:
    """A TEI with a title and one paragraph: a run of n random brackets without whitespace."""
    rng = random.Random(seed)
    run = "".join(rng.choice("([)]") for _ in range(n))
    return _tei(f'<div><head n="1">Results</head><p>The run follows. {run} It ended.</p></div>')


def _write(tmpdir: Path, name: str, text: str) -> Path:
    path = tmpdir / name
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- cases

_NLP: list = []
#: Where ``doc-from-json-glued`` takes its real paper from (``--tei-root``).
TEI_ROOT = [DEFAULT_TEI_ROOT]


def blank_nlp():
    """One shared ``scholarly_nlp.blank()`` (loaded once, untimed, on first use).

    Its ``max_length`` is raised so that a version of scholarly_nlp which still refused
    texts over 1,000,000 characters can be timed at the larger sizes too.
    """
    if not _NLP:
        import scholarly_nlp

        nlp = scholarly_nlp.blank()
        nlp.max_length = 10**9
        _NLP.append(nlp)
    return _NLP[0]


def read_tei_doc(path: Path) -> object:
    """TEI file -> paper Doc with the shared blank pipeline."""
    import scholarly_nlp

    return scholarly_nlp.read(path, nlp=blank_nlp(), format="tei")


def make_figure_refs(n: int, tmpdir: Path) -> Path:
    """The TEI of the ``tei-figure-refs`` case, written under ``tmpdir``."""
    return _write(tmpdir, f"figure-refs-{n}.tei.xml", figure_refs_tei(n))


def make_paragraphs(n: int, tmpdir: Path) -> Path:
    """The TEI of the ``tei-paragraphs`` case, written under ``tmpdir``."""
    return _write(tmpdir, f"paragraphs-{n}.tei.xml", paragraphs_tei(n))


def make_punctuation_run(n: int, tmpdir: Path) -> Path:
    """The TEI of the ``tei-punctuation-run`` case, written under ``tmpdir``."""
    return _write(tmpdir, f"punctuation-{n}.tei.xml", punctuation_run_tei(n))


#: Tokens of one generated paragraph (measured on ``_paragraph``; the Doc adds a few more).
_TOKENS_PER_PARAGRAPH = 60


def paper_doc(n: int, tmpdir: Path) -> Any:
    """A paper Doc of about n tokens (generated paragraphs)."""
    return read_tei_doc(make_paragraphs(max(1, n // _TOKENS_PER_PARAGRAPH), tmpdir))


def json_export(doc: Any) -> dict:
    """``doc``'s JSON export as ``load_json`` would see it, with the export's tokenizer cache dropped."""
    from scholarly_nlp.doc import serialize

    data = json.loads(json.dumps(serialize.doc_to_json(doc)))
    # doc_from_json re-tokenises the text with a cached blank tokenizer; a new one has not seen
    # the text, as in a process that only loads (the tokenizer's own cache would hide the cost).
    serialize._tokenizer.cache_clear()
    serialize._tokenizer(doc.lang_)
    return data


def make_json_export(n: int, tmpdir: Path) -> dict:
    """The JSON export of a paper Doc of about n tokens."""
    return json_export(paper_doc(n, tmpdir))


def paper_words(n: int, tmpdir: Path) -> list[str]:
    """n tokens of a real paper (the first ACL TEI, repeated), else of a generated one."""
    real = sorted(TEI_ROOT[0].glob("acl/*.tei.xml"))[:1]
    doc = read_tei_doc(real[0]) if real else paper_doc(n, tmpdir)
    words = [token.text for token in doc if not token.is_space]
    return (words * (n // len(words) + 1))[:n]


def make_glued_json_export(n: int, tmpdir: Path) -> dict:
    """The JSON export of a Doc of a paper's n tokens with no whitespace between them."""
    from spacy.tokens import Doc

    words = paper_words(n, tmpdir)
    return json_export(Doc(blank_nlp().vocab, words=words, spaces=[False] * len(words)))


def rebuild_from_json(data: dict) -> object:
    """``doc_from_json`` with the shared blank pipeline's vocab."""
    from scholarly_nlp.doc.serialize import doc_from_json

    return doc_from_json(data, blank_nlp())


def _file_size(path: Path) -> str:
    return f"{path.stat().st_size / 1e6:.1f} MB"


def _token_count(data: dict) -> str:
    return f"{data['doc']['tokens']['count']:,} tokens, {len(data['doc']['text']):,} chars"


CASES: dict[str, Case] = {
    "tei-figure-refs": Case(make_figure_refs, read_tei_doc, base_n=2500, unit="figures + refs", describe=_file_size),
    "tei-paragraphs": Case(make_paragraphs, read_tei_doc, base_n=800, unit="paragraphs", describe=_file_size),
    "tei-punctuation-run": Case(make_punctuation_run, read_tei_doc, base_n=2000, unit="characters in the run",
                                describe=_file_size),
    "doc-from-json": Case(make_json_export, rebuild_from_json, base_n=12000, unit="tokens", describe=_token_count),
    "doc-from-json-glued": Case(make_glued_json_export, rebuild_from_json, base_n=12000, unit="tokens",
                                describe=_token_count),
}


# --------------------------------------------------------------------------- measuring


def time_once(run: Callable[[Any], object], value: Any) -> tuple[float, float]:
    """(wall seconds, process-CPU seconds) of one ``run(value)``, garbage collected before."""
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    run(value)
    return time.perf_counter() - wall, time.process_time() - cpu


def measure_case(name: str, case: Case, sizes: list[int], repeat: int, max_seconds: float) -> list[dict]:
    """One row per size: best wall and CPU seconds over ``repeat`` runs, or the error / skip reason."""
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="bench_scaling_") as tmp:
        for n in sizes:
            row: dict[str, Any] = {"n": n}
            rows.append(row)
            if rows[:-1] and rows[-2].get("wall_s", 0.0) > max_seconds:
                row["skipped"] = f"the previous size took over {max_seconds:g} s"
                continue
            print(f"[bench] {name} n={n} ...", file=sys.stderr, flush=True)
            value = case.make_input(n, Path(tmp))
            row["input"] = case.describe(value) if case.describe else ""
            try:
                times = [time_once(case.run, value) for _ in range(repeat)]
            except Exception as exc:  # a size the code refuses is a result, not the end of the run
                row["error"] = f"{type(exc).__name__}: {str(exc)[:120]}"
                continue
            row["wall_s"], row["cpu_s"] = min(t[0] for t in times), min(t[1] for t in times)
            previous = rows[-2] if len(rows) > 1 else {}
            row["ratio_cpu"] = ratio(row["cpu_s"], previous["cpu_s"]) if "cpu_s" in previous else None
            row["ratio_wall"] = ratio(row["wall_s"], previous["wall_s"]) if "wall_s" in previous else None
    return rows


# --------------------------------------------------------------------------- reporting


def _cell(value: Optional[float], spec: str) -> str:
    return "-" if value is None else format(value, spec)


def case_table(rows: list[dict]) -> str:
    """A markdown table of one case: size, input, seconds, doubling ratios."""
    header = ["n", "input", "CPU s", "wall s", "t(2n)/t(n) CPU", "t(2n)/t(n) wall"]
    lines = []
    for row in rows:
        if "wall_s" not in row:
            lines.append([row["n"], row.get("input", ""), row.get("error") or row.get("skipped", ""), "-", "-", "-"])
            continue
        lines.append([row["n"], row["input"], _cell(row["cpu_s"], ".3f"), _cell(row["wall_s"], ".3f"),
                      _cell(row["ratio_cpu"], ".2f"), _cell(row["ratio_wall"], ".2f")])
    return markdown_table(header, lines)


def print_report(out: dict) -> None:
    """Print one table per case."""
    m = out["machine"]
    print(f"Doubling benchmark {m['date']}, Python {m['python']}, {m['cpu_count']} CPUs, "
          f"best of {out['repeat']} run(s) per size\n")
    for name, rows in out["cases"].items():
        print(f"## {name} (n = {CASES[name].unit})\n")
        print(case_table(rows))
        print()


# --------------------------------------------------------------------------- main


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="start at a tenth of each case's base size")
    parser.add_argument("--cases", nargs="*", default=None, choices=sorted(CASES), help="run only these cases")
    parser.add_argument("--steps", type=int, default=4, help="sizes per case: n, 2n, ... (default 4: up to 8n)")
    parser.add_argument("--repeat", type=int, default=1, help="timed runs per size (best is reported)")
    parser.add_argument("--max-seconds", type=float, default=120.0,
                        help="skip a case's larger sizes once one run takes longer than this")
    parser.add_argument("--tei-root", type=Path, default=DEFAULT_TEI_ROOT,
                        help="data folder whose acl/ gives doc-from-json-glued its paper")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "bench_scaling.json", help="JSON output file")
    return parser.parse_args(argv)


def sizes_for(case: Case, quick: bool, steps: int) -> list[int]:
    """n, 2n, 4n, ... from the case's base size (a tenth of it with ``--quick``)."""
    base = max(1, case.base_n // 10) if quick else case.base_n
    return [base * 2**i for i in range(steps)]


def main(argv: Optional[list[str]] = None) -> int:
    """Run the selected cases, print their tables, write the JSON."""
    args = parse_args(argv)
    names = args.cases or list(CASES)
    TEI_ROOT[0] = args.tei_root
    out: dict[str, Any] = {"machine": machine_info(), "quick": args.quick, "repeat": args.repeat, "cases": {}}
    blank_nlp()  # loading the pipeline is not part of any case
    for name in names:
        case = CASES[name]
        out["cases"][name] = measure_case(name, case, sizes_for(case, args.quick, args.steps), args.repeat,
                                          args.max_seconds)
    print_report(out)
    write_json(args.out, out)
    print(f"JSON written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
