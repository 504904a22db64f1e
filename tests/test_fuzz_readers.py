"""A bounded fuzz run over mutated real TEI and PDF files (issue 15, item 7).

Each of ``TEI_INPUTS`` + ``PDF_INPUTS`` inputs is one seeded mutation (``tests/fuzzing.py``)
of a real file from the data root. Every input is read by ``scholarly_nlp.read`` in its own
forked child under a time limit and an address-space cap, and must end as a Doc or as a
library error that names the file (and as ``fuzzing.EXPECTED`` says where the mutation fixes
the answer: a file that declares XML entities is refused as unsafe, one duplicate ``xml:id``
still reads); an exception of another kind, a plain ``InputError`` that a safety
net made out of one, a timeout, a crash or running out of memory fails the test with one line per input (the mutation, the source file, the error and where it was
raised), so the failure can be remade alone with ``mutated_inputs(tei_sources(), 1, SEED,
start=i)`` (``pdf_sources()`` for the PDF inputs, numbered from ``TEI_INPUTS``).
Then one ``read_many`` batch over the same files must give one result per file, in order,
with the same Doc-or-error answer. ``benchmarks/fuzz_campaign.py`` runs a longer campaign.
"""

from __future__ import annotations

import multiprocessing
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

import fuzzing
from conftest import data_path
from fuzzing import Limits, MutatedInput, Outcome

pytestmark = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                                reason="the guard forks a child per read (POSIX only)")
needs_fuzz_data = pytest.mark.needs_data("tei/acl", "tei/biomed", "pdfs/acl", "pdf-pairs")

SEED = 15
TEI_INPUTS = 60
PDF_INPUTS = 20
TEI_FOLDERS = ("tei/acl", "tei/biomed")
PDF_FOLDERS = ("pdfs/acl", "pdf-pairs")
#: Smaller source files keep the run near a minute on two cores; the campaign takes any size.
MAX_TEI_BYTES = 60_000
MAX_PDF_BYTES = 100_000
#: Each read: far above a real paper's read time (under a second), far below a hang.
READ_LIMITS = Limits(seconds=20, memory_mb=3072)
JOBS = 2
#: Outcomes that end a guarded child: those inputs are left out of the read_many batch.
FATAL = ("timeout", "crash", "memory")


@dataclass
class FuzzRun:
    """Every input with the outcome of ``read``, and the ``read_many`` batch's results."""

    inputs: list[tuple[MutatedInput, Path]]
    read: dict[int, Outcome]
    batch: object  # a list of (path, Outcome), or the Outcome that ended the batch's child


def tei_sources() -> list[Path]:
    """The TEI files the run mutates."""
    return fuzzing.source_files(data_path(), TEI_FOLDERS, fuzzing.TEI_SUFFIX, MAX_TEI_BYTES)


def pdf_sources() -> list[Path]:
    """The PDF files the run mutates."""
    return fuzzing.source_files(data_path(), PDF_FOLDERS, fuzzing.PDF_SUFFIX, MAX_PDF_BYTES)


def fuzz_inputs() -> list[MutatedInput]:
    """The run's inputs: TEI mutations numbered from 0, then PDF ones."""
    return [*fuzzing.mutated_inputs(tei_sources(), TEI_INPUTS, SEED),
            *fuzzing.mutated_inputs(pdf_sources(), PDF_INPUTS, SEED, start=TEI_INPUTS)]


def read_many_outcomes(paths: list[str], nlp) -> list[tuple[str, Outcome]]:
    """Run one read_many batch; each result as (path, Outcome)."""
    import scholarly_nlp

    results = []
    for result in scholarly_nlp.read_many(paths, nlp):
        outcome = Outcome("doc") if result.ok else fuzzing.classify_error(result.error, result.path)
        results.append((result.path, outcome))
    return results


@pytest.fixture(scope="module")
def fuzz_run(tmp_path_factory) -> FuzzRun:
    """Write the inputs, read each alone in a guarded child, then all survivors in one read_many batch."""
    import scholarly_nlp
    import scholarly_nlp.readers.pdf  # noqa: F401 - imported once here, not in every child
    import scholarly_nlp.readers.tei  # noqa: F401

    nlp = scholarly_nlp.blank()
    folder = tmp_path_factory.mktemp("fuzz")
    inputs = [(item, item.write(folder)) for item in fuzz_inputs()]
    calls = [(item.index, (lambda p=str(path): fuzzing.read_outcome(lambda q: scholarly_nlp.read(q, nlp), p)))
             for item, path in inputs]
    by_index = {item.index: item for item, _ in inputs}
    read = {index: fuzzing.judge(by_index[index], outcome)
            for index, outcome in fuzzing.run_guarded(calls, READ_LIMITS, jobs=JOBS, workdir=str(folder))}
    survivors = [str(path) for item, path in inputs if read[item.index].kind not in FATAL]
    budget = Limits(seconds=60 + 3 * sum(o.seconds for o in read.values()), memory_mb=READ_LIMITS.memory_mb)
    ((_, batch),) = fuzzing.run_guarded([("batch", lambda: read_many_outcomes(survivors, nlp))], budget,
                                        workdir=str(folder))
    run = FuzzRun(inputs=inputs, read=read, batch=batch)
    print(f"\nfuzz run (seed {SEED}, {len(inputs)} inputs): read outcomes {fuzzing.counts(read.values())}")
    return run


@needs_fuzz_data
def test_the_inputs_are_reproducible_and_cover_every_kind_of_mutation():
    inputs = fuzz_inputs()
    assert len(inputs) == TEI_INPUTS + PDF_INPUTS
    (tei_again,) = fuzzing.mutated_inputs(tei_sources(), 1, SEED, start=7)  # one input, remade alone
    (pdf_again,) = fuzzing.mutated_inputs(pdf_sources(), 1, SEED, start=TEI_INPUTS + 3)
    assert (tei_again.data, pdf_again.data) == (inputs[7].data, inputs[TEI_INPUTS + 3].data)
    families = {item.mutation.split("_")[0] for item in inputs}
    assert {"xml", "pdf"} <= families and families - {"xml", "pdf"}, families  # and byte-level damage
    assert sum(item.data != item.source.read_bytes() for item in inputs) >= 0.9 * len(inputs)


@needs_fuzz_data
def test_every_mutated_input_reads_to_a_doc_or_an_error_naming_the_file(fuzz_run):
    failures = [fuzzing.describe(item, fuzz_run.read[item.index]) for item, _ in fuzz_run.inputs
                if not fuzz_run.read[item.index].accepted]
    assert not failures, (f"{len(failures)} of {len(fuzz_run.inputs)} mutated inputs (seed {SEED}) did not end as "
                          f"a Doc or a named error; outcomes {fuzzing.counts(fuzz_run.read.values())}:\n"
                          + "\n".join(failures))


@needs_fuzz_data
def test_read_many_reads_the_whole_batch_with_the_same_answers(fuzz_run):
    assert isinstance(fuzz_run.batch, list), f"the read_many batch did not finish: {fuzz_run.batch}"
    expected = [(str(path), fuzz_run.read[item.index]) for item, path in fuzz_run.inputs
                if fuzz_run.read[item.index].kind not in FATAL]
    assert [path for path, _ in fuzz_run.batch] == [path for path, _ in expected]
    by_path = {str(path): item for item, path in fuzz_run.inputs}
    problems = []
    for (path, got), (_, alone) in zip(fuzz_run.batch, expected):
        got = fuzzing.judge(by_path[path], got)
        if not got.accepted:
            problems.append(fuzzing.describe(by_path[path], got))
        elif (got.kind == "doc") != (alone.kind == "doc"):
            problems.append(f"{fuzzing.describe(by_path[path], got)} (read alone: {alone.kind})")
    assert not problems, f"{len(problems)} read_many results differ or are not accepted:\n" + "\n".join(problems)


# --------------------------------------------------------------------------- the guard itself


def hang(_path: str) -> None:
    """A reader that never returns."""
    import time

    while True:
        time.sleep(0.05)


def allocate(_path: str) -> bytes:
    """A reader that wants 8 GiB."""
    return bytes(8 << 30)


def test_the_guard_reports_hangs_crashes_and_memory_without_dying(tmp_path):
    import spacy.tokens  # noqa: F401 - read_outcome's import, done before the children fork

    limits = Limits(seconds=2, memory_mb=512)
    calls = [
        ("hang", lambda: fuzzing.read_outcome(hang, "x")),
        ("abort", lambda: os.abort()),
        ("memory", lambda: fuzzing.read_outcome(allocate, "x")),
        ("error", lambda: fuzzing.read_outcome(lambda p: int("x"), "x")),
    ]
    results = dict(fuzzing.run_guarded(calls, limits, jobs=2, workdir=str(tmp_path)))
    assert results["hang"].kind == "timeout" and "hang" in results["hang"].where
    assert (results["abort"].kind, results["abort"].error_class) == ("crash", "SIGABRT")
    assert results["memory"].kind == "memory"
    assert (results["error"].kind, results["error"].error_class) == ("unexpected", "ValueError")


def test_errors_are_classified_by_what_they_say(tmp_path):
    from scholarly_nlp.errors import InputError, MalformedInputError, PluginError

    path = str(tmp_path / "paper.tei.xml")
    assert fuzzing.classify_error(MalformedInputError(path, "is not XML"), path).kind == "named"
    assert fuzzing.classify_error(PluginError("no file here"), path).kind == "unnamed"
    try:
        try:
            float("x")
        except ValueError as cause:
            raise InputError(path, "could not be read (ValueError: ...)") from cause
    except InputError as wrapped:
        outcome = fuzzing.classify_error(wrapped, path)
    assert (outcome.kind, outcome.error_class) == ("wrapped", "InputError<-ValueError")
    assert fuzzing.classify_error(OverflowError("inf"), path).kind == "unexpected"
    net = InputError(path, "could not be built into a Doc (ValueError: [E088] Text of length 1234634 exceeds ...)")
    assert fuzzing.classify_error(net, path).error_class == "InputError<-ValueError"


def test_some_mutations_fix_the_answer(tmp_path):
    from scholarly_nlp.errors import MalformedInputError, UnsafeInputError

    path = str(tmp_path / "a.tei.xml")
    entities = MutatedInput(0, Path(path), "xml_encoding(utf-16-dtd)", b"", fuzzing.TEI_SUFFIX)
    assert fuzzing.judge(entities, Outcome("doc")).kind == "wrong_answer"
    malformed = fuzzing.classify_error(MalformedInputError(path, "is not XML"), path)
    assert fuzzing.judge(entities, malformed).kind == "wrong_answer"
    unsafe = fuzzing.classify_error(UnsafeInputError(path, "declares entities"), path)
    assert fuzzing.judge(entities, unsafe).kind == "named"
    plain = MutatedInput(0, Path(path), "xml_doctype(plain_doctype)", b"", fuzzing.TEI_SUFFIX)
    assert fuzzing.judge(plain, Outcome("doc")).kind == "doc"
    one_duplicate = MutatedInput(0, Path(path), "xml_corrupt_id(figure,x1,'dup:b3')", b"", fuzzing.TEI_SUFFIX)
    assert fuzzing.judge(one_duplicate, malformed).kind == "wrong_answer"
    assert fuzzing.judge(one_duplicate, Outcome("doc")).kind == "doc"
