"""Per-file time, memory and input limits on reading, and special files (issue 15, items 2-3).

A file over a limit fails alone with an InputError naming the limit, and the next file is
read, with one worker or several. Checks that a regression would turn into a hang or an
endless read run inside a limited child (``guarded``), so that they fail instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from pdf_samples import flate_bomb_pdf, paragraph_lines, pdf_bytes, text_page
from scholarly_nlp import Block, Paper, PluginRegistry, hookimpl
from scholarly_nlp.errors import InputError
from scholarly_nlp.readers import limits as read_limits
from scholarly_nlp.readers.dispatch import read_paper, read_papers
from scholarly_nlp.readers.limits import ReadLimits, run_limited

TEI = (
    '<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><fileDesc><titleStmt><title level="a" type="main">'
    "A small paper</title></titleStmt></fileDesc></teiHeader><text><body><div><head>Introduction</head>"
    "<p>Reading a folder with a FIFO in it must not hang.</p></div></body></text></TEI>"
)


def read_costly(path, **_options):
    """A ``.costly`` file says what reading it costs: its first word."""
    kind = Path(path).read_text(encoding="utf-8").split()[0]
    if kind == "sleep":
        time.sleep(60)
    elif kind == "allocate":
        blob = bytearray(2 << 30)  # 2 GiB at once
        del blob
    elif kind == "abort":
        os.abort()  # what pdfium does on a hostile file
    elif kind == "warn":
        warnings.warn(f"{path}: a note from the reader")
    elif kind == "odd":
        raise OddError(path)
    return Paper(paper_id=Path(path).stem, source=str(path), reader="costly", blocks=[Block(kind="title", text=kind)])


class OddError(InputError):
    """A plugin's error whose constructor takes other arguments than InputError's (it cannot be
    rebuilt from what InputError pickles)."""

    def __init__(self, path):
        super().__init__(path, "an odd failure")


class CostlyPlugin:
    @hookimpl
    def register_readers(self, register):
        register("costly", read_costly, extensions=(".costly",))


@pytest.fixture
def costly_registry() -> PluginRegistry:
    registry = PluginRegistry(strict=True, allow=[]).load()
    registry.add_plugin(CostlyPlugin(), "costly")
    return registry


def costly_files(tmp_path: Path, kinds: list[str]) -> list[str]:
    paths = []
    for i, kind in enumerate(kinds):
        path = tmp_path / f"{i}_{kind}.costly"
        path.write_text(kind, encoding="utf-8")
        paths.append(str(path))
    return paths


SMALL = ReadLimits(time_s=5, memory_mib=256)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_file_over_its_time_or_memory_fails_alone(costly_registry, tmp_path, workers):
    paths = costly_files(tmp_path, ["ok", "sleep", "ok", "allocate", "ok"])
    started = time.monotonic()
    results = list(read_papers(paths, "costly", costly_registry, workers=workers, limits=SMALL))
    assert time.monotonic() - started < 30  # the sleeper was killed, not waited for
    assert [r.path for r in results] == paths
    assert [r.ok for r in results] == [True, False, True, False, True]
    assert str(results[1].error) == (f"{paths[1]}: exceeded the 5 s time limit "
                                     "(raise it with $SCHOLARLY_NLP_READ_TIME_LIMIT)")
    assert str(results[3].error).startswith(f"{paths[3]}: exceeded the 256 MiB memory limit")
    assert all(isinstance(results[i].error, InputError) for i in (1, 3))


def test_a_reader_that_aborts_the_process_costs_its_file_only(costly_registry, tmp_path):
    paths = costly_files(tmp_path, ["ok", "abort", "ok"])
    results = list(read_papers(paths, "costly", costly_registry, limits=SMALL))
    assert [r.ok for r in results] == [True, False, True]
    assert "worker process died while reading it (killed by SIGABRT" in str(results[1].error)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_flate_bomb_fails_its_file_only(tmp_path, workers):
    bomb, paper = tmp_path / "bomb.pdf", tmp_path / "paper.pdf"
    bomb.write_bytes(flate_bomb_pdf(512))  # 0.5 MB inflating to 512 MiB
    paper.write_bytes(pdf_bytes([text_page(612, 792, paragraph_lines(612, 792))]))
    results = list(read_papers([str(bomb), str(paper)], workers=workers,
                               limits=ReadLimits(time_s=60, memory_mib=128)))
    assert not results[0].ok and "exceeded the 128 MiB memory limit" in str(results[0].error)
    assert results[1].ok and "recovers paragraphs" in results[1].paper.blocks[0].text


@pytest.mark.parametrize("workers", [1, 2])
def test_warnings_of_a_reader_in_a_child_process_are_raised_here(costly_registry, tmp_path, workers):
    paths = costly_files(tmp_path, ["warn", "ok"])
    with pytest.warns(UserWarning, match="a note from the reader") as caught:
        results = list(read_papers(paths, "costly", costly_registry, workers=workers, limits=SMALL))
    assert all(r.ok for r in results) and paths[0] in str(caught[0].message)


def test_which_readers_read_in_a_child_process():
    limits = ReadLimits()
    assert limits.isolates("pdf") and limits.isolates("a_plugin_format")
    assert not limits.isolates("tei") and not limits.isolates("clscisumm")  # lxml in this process
    assert not limits.isolates("grobid", io_bound=True)  # waits on a server with its own timeouts
    assert not ReadLimits(time_s=None, memory_mib=None).isolates("pdf")


def test_limits_come_from_the_environment(monkeypatch):
    monkeypatch.setenv(read_limits.TIME_LIMIT_ENV, "12")
    monkeypatch.setenv(read_limits.MEMORY_LIMIT_ENV, "none")
    monkeypatch.setenv(read_limits.MAX_INPUT_ENV, "1.5")
    assert ReadLimits.from_env() == ReadLimits(time_s=12.0, memory_mib=None, max_input_mib=1.5)
    monkeypatch.delenv(read_limits.TIME_LIMIT_ENV)
    assert ReadLimits.from_env().time_s == 300
    monkeypatch.setenv(read_limits.MEMORY_LIMIT_ENV, "lots")
    with pytest.raises(ValueError, match="SCHOLARLY_NLP_READ_MEMORY_LIMIT"):
        ReadLimits.from_env()


def test_a_file_over_the_input_size_limit_is_not_read(tmp_path):
    path = tmp_path / "big.tei.xml"
    path.write_text(TEI + " " * 4096, encoding="utf-8")
    with pytest.raises(InputError, match=r"over the 0\.002 MiB input size limit"):
        read_paper(path, limits=ReadLimits(max_input_mib=0.002))
    assert read_paper(path).title == "A small paper"


# -- special files ------------------------------------------------------------------------------


def guarded(function, *args):
    """``function(*args)`` in a limited child: a hang or an endless read fails the test."""
    return run_limited(function, args, ReadLimits(time_s=60, memory_mib=512), "the guarded check")


def outcomes(inputs: list[str]) -> list[tuple[str, bool, str]]:
    return [(Path(r.path).name, r.ok, str(r.error or r.paper.title)) for r in read_papers(inputs)]


@pytest.fixture
def special_folder(tmp_path) -> Path:
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "a_paper.tei.xml").write_text(TEI, encoding="utf-8")
    os.mkfifo(folder / "b_fifo.tei.xml")  # sniffing it blocked until a writer came
    (folder / "c_zero.tei.xml").symlink_to("/dev/zero")  # read until memory ran out
    return folder


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_and_a_device_in_a_folder_are_skipped_with_a_reason(special_folder):
    results = guarded(outcomes, [str(special_folder)])
    fifo, zero = special_folder / "b_fifo.tei.xml", special_folder / "c_zero.tei.xml"
    assert results == [
        ("a_paper.tei.xml", True, "A small paper"),
        ("b_fifo.tei.xml", False, f"{fifo}: is not a regular file (FIFO)"),
        ("c_zero.tei.xml", False, f"{zero}: is not a regular file (character device)"),
    ]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_special_files_matched_by_a_glob_are_reported_too(special_folder):
    results = guarded(outcomes, [str(special_folder / "*.xml")])
    assert [(name, ok) for name, ok, _ in results] == [
        ("a_paper.tei.xml", True), ("b_fifo.tei.xml", False), ("c_zero.tei.xml", False)]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_one_special_file_read_alone_fails_with_its_reason(special_folder):
    def read_one(path):
        try:
            read_paper(path, "tei")
        except InputError as exc:
            return str(exc)
        return "read"

    assert guarded(read_one, str(special_folder / "b_fifo.tei.xml")).endswith("is not a regular file (FIFO)")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_the_tei_reader_called_directly_refuses_special_files(special_folder):
    from scholarly_nlp.readers.tei import read_tei

    def read_direct(path):
        try:
            read_tei(path)
        except InputError as exc:
            return str(exc)
        return "read"

    assert guarded(read_direct, str(special_folder / "b_fifo.tei.xml")).endswith("is not a regular file (FIFO)")
    assert guarded(read_direct, str(special_folder / "c_zero.tei.xml")).endswith(
        "is not a regular file (character device)")
    assert guarded(read_direct, str(special_folder / "a_paper.tei.xml")) == "read"


def test_a_child_forked_after_parallel_tokenizing_prints_no_tokenizers_warning(backbone):
    # analyze loads a pipeline (Hugging Face tokenizers run in parallel) and then forks a child
    # per PDF: tokenizers' fork handler printed a four-line warning into every run's output
    script = (
        "import os, sys\n"
        "from transformers import AutoTokenizer\n"
        "from scholarly_nlp.readers.limits import ReadLimits, run_limited\n"
        f"tokenizer = AutoTokenizer.from_pretrained({backbone!r})\n"
        "tokenizer(['a sentence about figures'] * 512)\n"
        "assert run_limited(len, ('abc',), ReadLimits(time_s=60), 'x') == 3\n"
        "print(os.environ.get('TOKENIZERS_PARALLELISM'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TOKENIZERS_PARALLELISM"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert "huggingface/tokenizers" not in done.stderr
    assert done.stdout.strip() == "None"  # the parent's environment is left as it was


@pytest.mark.parametrize("workers", [1, 2])
def test_an_error_that_cannot_cross_processes_fails_its_file_only(costly_registry, tmp_path, workers):
    paths = costly_files(tmp_path, ["odd", "ok"])
    results = list(read_papers(paths, "costly", costly_registry, workers=workers, limits=SMALL))
    assert [r.ok for r in results] == [False, True]
    assert isinstance(results[0].error, InputError) and "an odd failure" in str(results[0].error)


def test_a_fork_that_fails_fails_its_file_and_leaks_nothing(costly_registry, tmp_path, monkeypatch):
    paths = costly_files(tmp_path, ["ok", "ok"])
    open_fds = len(os.listdir("/proc/self/fd"))

    def no_fork():
        raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr(read_limits.os, "fork", no_fork)
    results = list(read_papers(paths, "costly", costly_registry, limits=SMALL))
    assert [str(r.error) for r in results] == [f"{p}: could not start the reader's process (Cannot allocate memory)"
                                               for p in paths]
    assert len(os.listdir("/proc/self/fd")) == open_fds


def test_a_torn_answer_from_the_child_fails_its_file(tmp_path):
    with pytest.raises(InputError, match="could not be received"):
        read_limits._unpack(b"\x80\x05truncated", "torn.pdf", SMALL)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux")
def test_a_reader_child_dies_with_its_parent(tmp_path):
    pid_file = tmp_path / "child.pid"
    script = (
        "import os, time\n"
        "from scholarly_nlp.readers.limits import ReadLimits, run_limited\n"
        "def loop(path):\n"
        "    open(path, 'w').write(str(os.getpid()))\n"
        "    time.sleep(600)\n"
        f"run_limited(loop, ({str(pid_file)!r},), ReadLimits(time_s=600), 'loop')\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 120
        while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
            time.sleep(0.2)
        child = int(pid_file.read_text())
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 30
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    """A process that runs (a zombie waiting for its reaper counts as dead)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status
