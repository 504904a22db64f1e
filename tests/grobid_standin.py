"""A stand-in GROBID server for tests: loopback only, answers with real GROBID TEI.

It speaks the part of GROBID's REST API that grobid-client-python uses:

* ``GET /api/isalive`` -> ``true``;
* ``POST /api/processFulltextDocument`` (multipart, PDF in the ``input`` field) -> the real
  TEI that GROBID produced for that PDF, found by the sha256 of the uploaded bytes among the
  PDFs of ``tei/with-pdf/`` (each has ``<stem>.tei.xml`` beside it); HTTP 500 for any other
  PDF, like GROBID on a document it cannot parse.

Knobs a test may set before sending requests: ``fail_names`` (upload filenames answered
500), ``empty_names`` (answered 204 with no body, as GROBID does when it extracts nothing),
``busy_first`` (the first n full-text requests answered 503), ``delay`` (seconds before
each full-text answer) and ``hold_until`` (hold full-text answers until that many are in
flight at once, which proves the client really sends them concurrently).

It counts what it receives (``fulltext_count``, ``isalive_count``, ``max_in_flight``,
``uploads``) and refuses everything past ``request_limit`` so that a client stuck in a
retry loop fails a test instead of hanging it.
"""

from __future__ import annotations

import hashlib
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Optional

FULLTEXT_PATH = "/api/processFulltextDocument"
ISALIVE_PATH = "/api/isalive"
TEI_CONTENT_TYPE = "application/xml; charset=UTF-8"  # what GROBID itself sends


@dataclass
class Upload:
    """One full-text request as received: the file's name, digest and the other fields."""

    filename: str
    sha256: str
    fields: dict[str, str] = field(default_factory=dict)


class StandinGrobid:
    """A threaded HTTP server on 127.0.0.1 (free port) that mimics GROBID; use as a context
    manager or call start() and stop()."""

    def __init__(
        self, with_pdf_dir: Path, *, request_limit: int = 100, hold_timeout: float = 5.0
    ) -> None:
        self._tei_by_sha = _index_pairs(with_pdf_dir)
        self.request_limit = request_limit
        self.hold_timeout = hold_timeout
        self.fail_names: set[str] = set()
        self.empty_names: set[str] = set()
        self.busy_first = 0
        self.delay = 0.0
        self.hold_until = 0
        self.fulltext_count = 0
        self.isalive_count = 0
        self.max_in_flight = 0
        self.uploads: list[Upload] = []
        self._requests = 0
        self._in_flight = 0
        self._gate_open = False
        self._cond = threading.Condition()
        self._stopping = threading.Event()
        self._server: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> "StandinGrobid":
        """Bind 127.0.0.1 on a free port and serve in a daemon thread."""
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        server.daemon_threads = True
        server.standin = self  # type: ignore[attr-defined]
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Release held or delayed handlers, stop serving and close the socket."""
        self._stopping.set()
        with self._cond:
            self._cond.notify_all()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> "StandinGrobid":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The base URL to give a GROBID client."""
        assert self._server is not None, "start() the stand-in first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def request_count(self) -> int:
        """All requests received, of any kind."""
        with self._cond:
            return self._requests

    # -- answers (called from handler threads) ----------------------------------------

    def _admit(self) -> bool:
        """Count a request; False once the request limit is spent."""
        with self._cond:
            self._requests += 1
            return self._requests <= self.request_limit

    def answer_isalive(self) -> tuple[int, bytes, str]:
        with self._cond:
            self.isalive_count += 1
        return 200, b"true", "text/plain"

    def answer_fulltext(self, content_type: str, body: bytes) -> tuple[int, bytes, str]:
        parts = parse_multipart(content_type, body)
        if "input" not in parts:
            return 400, b"no 'input' field in the form", "text/plain"
        filename, pdf = parts.pop("input")
        digest = hashlib.sha256(pdf).hexdigest()
        fields = {name: value.decode("utf-8", "replace") for name, (_, value) in parts.items()}
        with self._cond:
            self.fulltext_count += 1
            self.uploads.append(Upload(filename, digest, fields))
            busy = self.fulltext_count <= self.busy_first
        if busy:
            return 503, b"", "text/plain"
        self._wait_before_answering()
        if filename in self.fail_names or digest not in self._tei_by_sha:
            return 500, f"[GENERAL] cannot process {filename}".encode(), "text/plain"
        if filename in self.empty_names:
            return 204, b"", TEI_CONTENT_TYPE
        return 200, self._tei_by_sha[digest].read_bytes(), TEI_CONTENT_TYPE

    def _wait_before_answering(self) -> None:
        """Apply hold_until and delay; both give way as soon as the stand-in stops."""
        with self._cond:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            if self.hold_until and self._in_flight >= self.hold_until:
                self._gate_open = True  # a latch: later arrivals and early leavers pass too
                self._cond.notify_all()
            if self.hold_until:
                self._cond.wait_for(
                    lambda: self._gate_open or self._stopping.is_set(), self.hold_timeout
                )
        try:
            if self.delay:
                self._stopping.wait(self.delay)
        finally:
            with self._cond:
                self._in_flight -= 1


class _Handler(BaseHTTPRequestHandler):
    """Routes requests to the StandinGrobid attached to the server."""

    def do_GET(self) -> None:  # noqa: N802 (http.server naming)
        standin: StandinGrobid = self.server.standin  # type: ignore[attr-defined]
        if not standin._admit():
            return self._send(500, b"stand-in request limit reached", "text/plain")
        if self.path == ISALIVE_PATH:
            return self._send(*standin.answer_isalive())
        self._send(404, b"not found", "text/plain")

    def do_POST(self) -> None:  # noqa: N802
        standin: StandinGrobid = self.server.standin  # type: ignore[attr-defined]
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if not standin._admit():
            return self._send(500, b"stand-in request limit reached", "text/plain")
        if self.path == FULLTEXT_PATH:
            return self._send(*standin.answer_fulltext(self.headers.get("Content-Type", ""), body))
        self._send(404, b"not found", "text/plain")

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if body:
                self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test): nothing left to answer

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass  # keep test output quiet


def parse_multipart(content_type: str, body: bytes) -> dict[str, tuple[str, bytes]]:
    """Split a multipart/form-data body into {field name: (filename, bytes)}, byte-exact.

    Written out rather than using ``cgi`` (deprecated, removed in Python 3.13) or
    ``email`` (which may rewrite line endings inside a binary part).
    """
    boundary = _boundary(content_type)
    fields: dict[str, tuple[str, bytes]] = {}
    for chunk in body.split(b"--" + boundary)[1:]:
        if chunk.startswith(b"--"):
            break  # the closing delimiter
        head, _, content = chunk.partition(b"\r\n\r\n")
        disposition = _header(head, b"content-disposition")
        name = _param(disposition, "name")
        if name is not None:
            # Each part ends with the CRLF that belongs to the next delimiter.
            fields[name] = (_param(disposition, "filename") or "", content[:-2])
    return fields


def closed_port_url() -> str:
    """A loopback URL where nothing listens (the port was bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def _index_pairs(with_pdf_dir: Path) -> dict[str, Path]:
    """sha256 of each PDF -> the TEI GROBID made from it (``<stem>.tei.xml``)."""
    pairs = {}
    for pdf in sorted(with_pdf_dir.glob("*.pdf")):
        tei = pdf.with_suffix(".tei.xml")
        if tei.is_file():
            pairs[hashlib.sha256(pdf.read_bytes()).hexdigest()] = tei
    return pairs


def _boundary(content_type: str) -> bytes:
    for piece in content_type.split(";"):
        key, _, value = piece.strip().partition("=")
        if key.lower() == "boundary":
            return value.strip('"').encode("latin-1")
    raise ValueError(f"no boundary in Content-Type {content_type!r}")


def _header(head: bytes, name: bytes) -> str:
    for line in head.split(b"\r\n"):
        key, _, value = line.partition(b":")
        if key.strip().lower() == name:
            return value.strip().decode("utf-8", "replace")
    return ""


def _param(header_value: str, name: str) -> Optional[str]:
    for piece in header_value.split(";")[1:]:
        key, _, value = piece.strip().partition("=")
        if key.lower() == name:
            return value.strip('"')
    return None
