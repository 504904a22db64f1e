"""Per-file limits on reading: time, memory and input size.

A hostile file must cost bounded time and memory, and no library may take the process
down: pdfium aborts the interpreter when an allocation fails, and no Python timeout can
interrupt a C library that loops. So a reader that calls into such a library reads each file
in a forked child process, with its address space capped (``RLIMIT_AS``) and a deadline after
which the child is killed; the file then fails alone with an :class:`InputError` naming the
limit, and the batch goes on. The built-in XML readers (``tei``, ``clscisumm``) read in the
calling process: lxml's parser limits and the input size cap bound them, and a fork per file
would cost more than the read. Readers registered as ``io_bound`` (``grobid``) wait on a server
with its own timeouts and run in the calling process too.

The defaults come from environment variables (a number, or ``0``/``none`` for no limit):

- ``SCHOLARLY_NLP_READ_TIME_LIMIT``: seconds per file (default 300);
- ``SCHOLARLY_NLP_READ_MEMORY_LIMIT``: MiB a reader may map beyond what the process held when
  it started reading the file (default 4096);
- ``SCHOLARLY_NLP_MAX_INPUT_MIB``: the largest input file read at all (default 512).

Children are forked, so on systems other than Linux (Windows, macOS) time and memory are not
limited; the input size cap holds everywhere.
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import selectors
import signal
import stat
import sys
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

from ..errors import InputError

TIME_LIMIT_ENV = "SCHOLARLY_NLP_READ_TIME_LIMIT"
MEMORY_LIMIT_ENV = "SCHOLARLY_NLP_READ_MEMORY_LIMIT"
MAX_INPUT_ENV = "SCHOLARLY_NLP_MAX_INPUT_MIB"
TOKENIZERS_PARALLELISM_ENV = "TOKENIZERS_PARALLELISM"

DEFAULT_TIME_LIMIT_S = 300.0
DEFAULT_MEMORY_LIMIT_MIB = 4096
DEFAULT_MAX_INPUT_MIB = 512

#: Readers trusted to read in the calling process (bounded by lxml's limits and the input cap).
IN_PROCESS_READERS = frozenset({"tei", "clscisumm"})

_MIB = 1 << 20
_PR_SET_PDEATHSIG = 1
#: CPU seconds a child may use beyond its time limit before the kernel stops it.
_CPU_GRACE_S = 5


@dataclass(frozen=True)
class ReadLimits:
    """What reading one file may cost; ``None`` lifts a limit.

    ``time_s`` and ``memory_mib`` hold for readers that read in a child process (every reader
    but those in ``in_process`` and the ``io_bound`` ones); ``max_input_mib`` for every file.
    """

    time_s: Optional[float] = DEFAULT_TIME_LIMIT_S
    memory_mib: Optional[int] = DEFAULT_MEMORY_LIMIT_MIB
    max_input_mib: Optional[float] = DEFAULT_MAX_INPUT_MIB
    in_process: frozenset = field(default=IN_PROCESS_READERS)

    @classmethod
    def from_env(cls) -> ReadLimits:
        """The limits the environment variables set (the defaults where unset)."""
        return cls(
            time_s=_env_limit(TIME_LIMIT_ENV, DEFAULT_TIME_LIMIT_S),
            memory_mib=_env_limit(MEMORY_LIMIT_ENV, DEFAULT_MEMORY_LIMIT_MIB, int),
            max_input_mib=_env_limit(MAX_INPUT_ENV, DEFAULT_MAX_INPUT_MIB),
        )

    def isolates(self, reader: str, io_bound: bool = False) -> bool:
        """Whether the ``reader`` reads each file in a limited child process."""
        limited = self.time_s is not None or self.memory_mib is not None
        return limited and not io_bound and reader not in self.in_process and can_fork()


def resolve_limits(limits: Optional[ReadLimits]) -> ReadLimits:
    """``limits``, or those of the environment when None."""
    return limits if limits is not None else ReadLimits.from_env()


def _env_limit(name: str, default: float, kind: Callable = float) -> Optional[Any]:
    value = os.environ.get(name, "").strip().lower()
    if not value:
        return kind(default)
    if value in ("0", "none", "off", "unlimited"):
        return None
    try:
        number = kind(float(value))
    except ValueError:
        raise ValueError(f"${name} must be a number, or 0/none for no limit (it is {value!r})") from None
    return number if number > 0 else None


def can_fork() -> bool:
    """Whether readers can be isolated in forked children here: on Linux only (macOS does not
    enforce ``RLIMIT_AS``, and forking a threaded process there without exec is unsafe)."""
    return hasattr(os, "fork") and sys.platform.startswith("linux")


# -- the input file --------------------------------------------------------------------------


_KINDS = (
    (stat.S_ISDIR, "directory"),
    (stat.S_ISFIFO, "FIFO"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
    (stat.S_ISSOCK, "socket"),
)


def check_input_file(path: str, limits: ReadLimits) -> None:
    """Refuse what cannot be read as a paper: a missing path, anything but a regular file (a
    FIFO would block the read, ``/dev/zero`` never ends), an unreadable or oversized file."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise InputError(path, "does not exist") from None
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        kind = next((name for test, name in _KINDS if test(info.st_mode)), "special file")
        raise InputError(path, f"is not a regular file ({kind})")
    if not os.access(path, os.R_OK):
        raise InputError(path, "cannot be read (permission denied)")
    cap = limits.max_input_mib
    if cap is not None and info.st_size > cap * _MIB:
        raise InputError(path, f"is {info.st_size / _MIB:.3g} MiB, over the {_number(cap)} MiB input size limit "
                               f"(raise it with ${MAX_INPUT_ENV})")


# -- reading in a limited child ----------------------------------------------------------------


def run_limited(function: Callable[..., Any], args: tuple, limits: ReadLimits, path: str) -> Any:
    """``function(*args)`` in a forked child held to ``limits``; its value or its exception.

    Warnings the child raised are raised again here. A child over its time is killed; one
    over its memory fails (Python's ``MemoryError``) or is aborted by its library: either way
    the file gets an InputError naming the limit, and this process is untouched.
    """
    read_end, write_end = os.pipe()
    parent = os.getpid()
    try:
        with warnings.catch_warnings(), _tokenizers_quiet_across_fork():
            # Python 3.12 warns on forking a threaded process; the child only runs the reader
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError as exc:  # no memory or no process slot for a child: this file fails, the batch goes on
        os.close(read_end)
        os.close(write_end)
        raise InputError(path, f"could not start the reader's process ({exc.strerror or exc})") from exc
    if pid == 0:  # the child: never returns
        _child(read_end, write_end, parent, function, args, limits)
    os.close(write_end)
    try:
        payload, timed_out = _collect(read_end, pid, limits.time_s)
    finally:
        os.close(read_end)
    if timed_out:
        raise InputError(path, f"exceeded the {_number(limits.time_s)} s time limit (raise it with ${TIME_LIMIT_ENV})")
    _, status, usage = os.wait4(pid, 0)
    if len(payload) > 8 and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return _unpack(payload[8:], path, limits)
    start_rss = int.from_bytes(payload, "little") if len(payload) == 8 else usage.ru_maxrss * 1024
    raise _death(path, status, usage.ru_maxrss * 1024 - start_rss, limits)


@contextmanager
def _tokenizers_quiet_across_fork() -> Iterator[None]:
    """Hugging Face tokenizers prints a warning in a child forked after it ran in parallel,
    unless TOKENIZERS_PARALLELISM is set; set it (false: the child never tokenizes) for the
    moment of the fork only, so the parent's own setting stays as the user left it."""
    previous = os.environ.get(TOKENIZERS_PARALLELISM_ENV)
    os.environ.setdefault(TOKENIZERS_PARALLELISM_ENV, "false")
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(TOKENIZERS_PARALLELISM_ENV, None)


def _child(read_end: int, write_end: int, parent: int, function: Callable[..., Any], args: tuple,
           limits: ReadLimits) -> None:
    code = 1
    try:
        os.close(read_end)
        _die_with_parent(parent)
        if limits.time_s is not None:
            _cap_cpu_time(limits.time_s)
        faulthandler.disable()  # a library's abort is reported in one line by the parent
        # first the memory it started with, so that a death can be measured against its cap
        _write_all(write_end, _resident_bytes().to_bytes(8, "little"))
        if limits.memory_mib is not None:
            _cap_address_space(limits.memory_mib)
        with recorded_warnings() as notes:
            try:
                outcome = ("value", function(*args))
            except BaseException as exc:  # noqa: BLE001 - every failure goes back to the parent
                outcome = ("memory", None) if _out_of_memory(exc) else ("error", exc)
        _write_all(write_end, _pack(outcome, notes))
        code = 0
    finally:
        os._exit(code)


def _die_with_parent(parent: int) -> None:
    """Ask Linux to kill this child when its parent dies (a killed batch must not leave a reader
    looping on a hostile file); exit at once if the parent is already gone."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the parent's deadline is the only guard
        pass
    if os.getppid() != parent:
        os._exit(1)


def _cap_cpu_time(time_s: float) -> None:
    """A kernel-enforced backstop to the parent's deadline: a few seconds of CPU beyond it."""
    import resource

    seconds = int(time_s) + _CPU_GRACE_S
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds))
    except (ValueError, OSError):  # a lower hard limit is already in force
        pass


def _out_of_memory(exc: BaseException) -> bool:
    """A MemoryError, or an error a reader wrapper raised from one."""
    return isinstance(exc, MemoryError) or isinstance(exc.__cause__, MemoryError)


def _pack(outcome: tuple, notes: list) -> bytes:
    notes = [note if _crosses(note) else (UserWarning, note[1], note[2], note[3]) for note in notes]
    try:
        data = pickle.dumps((outcome, notes))
        pickle.loads(data)  # an error class whose constructor takes other arguments fails only here
        return data
    except MemoryError:
        return pickle.dumps((("memory", None), []))
    except Exception as exc:  # a value or plugin error that cannot cross processes: keep its message
        kind, value = outcome
        if kind == "value":
            message = f"the reader's result could not be sent back ({type(exc).__name__}: {exc})"
        else:
            message = getattr(value, "reason", None) or f"{type(value).__name__}: {value}"
            message = f"{message} ({type(exc).__name__} sending it back)"
        return pickle.dumps((("unpicklable", message), []))


def _crosses(note: tuple) -> bool:
    """Whether a warning note survives the trip to the parent (a plugin's warning class may not)."""
    try:
        pickle.loads(pickle.dumps(note))
        return True
    except Exception:
        return False


def _unpack(payload: bytes, path: str, limits: ReadLimits) -> Any:
    try:
        (kind, value), notes = pickle.loads(payload)
    except Exception as exc:  # a torn or foreign payload: this file fails, the batch goes on
        raise InputError(path, f"the reader's result could not be received ({type(exc).__name__}: {exc})") from exc
    replay_warnings(notes)
    if kind == "value":
        return value
    if kind == "memory":
        raise _memory_error(path, limits)
    if kind == "unpicklable":
        raise InputError(path, value)
    raise value


@contextmanager
def recorded_warnings() -> Iterator[list]:
    """Record the warnings raised inside, as picklable notes for :func:`replay_warnings` in
    another process (a worker's warnings would be lost otherwise)."""
    notes: list = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # the receiving process's filters decide
        try:
            yield notes
        finally:
            notes.extend((w.category, str(w.message), w.filename, w.lineno) for w in caught)


def replay_warnings(notes: list) -> None:
    """Raise here the warnings :func:`recorded_warnings` noted in another process."""
    for category, message, filename, lineno in notes:
        warnings.warn_explicit(message, category, filename, lineno)


def _collect(read_end: int, pid: int, time_s: Optional[float]) -> tuple[bytes, bool]:
    """Everything the child writes, or (b"", True) after killing it at its deadline."""
    deadline = None if time_s is None else time.monotonic() + time_s
    chunks = []
    with selectors.DefaultSelector() as selector:
        selector.register(read_end, selectors.EVENT_READ)
        try:
            while True:
                wait = None if deadline is None else max(0.0, deadline - time.monotonic())
                if not selector.select(wait):
                    _kill(pid)
                    return b"", True
                chunk = os.read(read_end, _MIB)
                if not chunk:
                    return b"".join(chunks), False
                chunks.append(chunk)
        except BaseException:  # interrupted (Ctrl-C): the child goes too
            _kill(pid)
            raise


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _death(path: str, status: int, growth: int, limits: ReadLimits) -> InputError:
    """The error for a child that died without answering, ``growth`` bytes above the
    resident memory it started with at its peak."""
    if os.WIFSIGNALED(status):
        how = f"killed by {_signal_name(os.WTERMSIG(status))}"
    else:
        how = f"exit status {os.waitstatus_to_exitcode(status)}"
    # pdfium aborts on a failed allocation without a word: a death after the resident memory
    # grew by a good part of the cap (a growing buffer fails at about half of it) is the cap's
    if limits.memory_mib is not None and growth >= 0.4 * limits.memory_mib * _MIB:
        return _memory_error(path, limits, f": the reader's process was {how}")
    return InputError(path, f"the reader's worker process died while reading it ({how}: a library aborted on "
                            "this file)")


def _memory_error(path: str, limits: ReadLimits, detail: str = "") -> InputError:
    return InputError(path, f"exceeded the {limits.memory_mib} MiB memory limit{detail} (raise it with "
                            f"${MEMORY_LIMIT_ENV})")


def _cap_address_space(memory_mib: int) -> None:
    import resource

    cap = _mapped_bytes() + memory_mib * _MIB
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _mapped_bytes() -> int:
    """This process's address space now (the child inherits the parent's, torch and all)."""
    return _statm(0)


def _resident_bytes() -> int:
    return _statm(1)


def _statm(field_index: int) -> int:
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[field_index]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _number(value: float) -> str:
    return f"{value:g}"
