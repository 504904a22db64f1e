"""Read PDFs through a GROBID server, with an on-disk TEI cache.

The HTTP side is delegated to grobid-client-python (``grobid_client.grobid_client``): this
module adds what a library user needs on top of it, namely configuration from the
environment, input checks before anything is sent, a content-addressed cache, a bounded
thread pool that never aborts a batch for one bad file, and the project's own errors.

Configuration:

* server URL: the ``url`` argument, else ``$SCHOLARLY_NLP_GROBID_URL``, else
  ``http://localhost:8070``;
* cache directory: the ``cache_dir`` argument, else ``$SCHOLARLY_NLP_CACHE/grobid``, else
  ``~/.cache/scholarly_nlp/grobid``.

A cache entry is named after the sha256 of the PDF's bytes and the request options that
change GROBID's output, so renaming or moving a PDF still hits the cache. The GROBID
version is *not* part of the key: clear the cache directory after upgrading the server.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator, Optional, Union

import requests

from ..cache import CACHE_ENV, cache_dir  # noqa: F401 (CACHE_ENV: re-exported beside URL_ENV)
from ..doc.serialize import write_atomic
from ..errors import (
    EmptyDocumentError,
    GrobidProcessingError,
    GrobidUnavailableError,
    MalformedInputError,
    ScholarlyNLPError,
)

if TYPE_CHECKING:
    from ..paper import Paper


def _import_client_quietly() -> tuple[type, type]:
    """Import grobid-client-python without letting it reconfigure the root logger.

    Its ``format`` subpackage calls ``logging.basicConfig(level=INFO)`` at import time,
    which would turn on INFO logging for the whole application that imports this reader.
    """
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        from grobid_client import grobid_client
    finally:
        root.setLevel(level)
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
    return grobid_client.GrobidClient, grobid_client.ServerUnavailableException


GrobidClient, ServerUnavailableException = _import_client_quietly()

PathLike = Union[str, Path]

URL_ENV = "SCHOLARLY_NLP_GROBID_URL"
DEFAULT_URL = "http://localhost:8070"
FULLTEXT_SERVICE = "processFulltextDocument"

# PDF readers accept the "%PDF-" header anywhere in the first 1024 bytes, so do we.
_PDF_MAGIC = b"%PDF-"
_MAGIC_WINDOW = 1024
_MAX_BODY_IN_REASON = 200

_log = logging.getLogger(__name__)


def default_cache_dir() -> Path:
    """The GROBID cache directory when none is given: ``grobid`` in :func:`scholarly_nlp.cache_dir`
    (``$SCHOLARLY_NLP_CACHE/grobid`` or ``~/.cache/scholarly_nlp/grobid``)."""
    return cache_dir("grobid")


class GrobidService:
    """A GROBID server with a TEI cache in front of it.

    ``concurrency`` bounds the requests in flight in :meth:`process`; ``timeout`` (seconds)
    bounds each request; ``consolidate`` asks GROBID to consolidate the header and the
    citations against external services (slow; needs a server with network access).
    ``busy_retry_wait`` is how long to wait before re-sending a document the server
    answered 503 (busy) to; grobid-client-python retries those without limit.
    """

    def __init__(
        self,
        url: Optional[str] = None,
        cache_dir: Optional[PathLike] = None,
        concurrency: int = 4,
        timeout: float = 60,
        consolidate: bool = False,
        *,
        busy_retry_wait: float = 5.0,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        self.url = (url or os.environ.get(URL_ENV) or DEFAULT_URL).rstrip("/")
        # Where the URL came from decides the advice when no server answers there.
        self.url_source = "argument" if url else ("env" if os.environ.get(URL_ENV) else "default")
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir else default_cache_dir()
        self.concurrency = concurrency
        self.timeout = timeout
        self.consolidate = consolidate
        # check_server=False: constructing a service must not touch the network; check()
        # and the first request do. No config.json is needed, the arguments cover it.
        self._client = GrobidClient(
            grobid_server=self.url,
            timeout=timeout,
            sleep_time=busy_retry_wait,
            check_server=False,
        )
        # The client logs every failed document (and every 503 retry) at WARNING/ERROR on
        # its own stderr handler; we turn those failures into exceptions, so its messages
        # go to our logger hierarchy at DEBUG level instead, where nothing prints them
        # unless an application asks for debug logging.
        self._client.logger = _QuietClientLog(_log.getChild("client"))

    def __repr__(self) -> str:
        return (
            f"GrobidService(url={self.url!r}, cache_dir={str(self.cache_dir)!r}, "
            f"concurrency={self.concurrency}, timeout={self.timeout}, "
            f"consolidate={self.consolidate})"
        )

    # -- server -----------------------------------------------------------------------

    def check(self) -> None:
        """Raise GrobidUnavailableError unless the server answers ``/api/isalive``."""
        try:
            alive, status = self._client.ping()
        except ServerUnavailableException as exc:
            raise GrobidUnavailableError(self.url, _connection_detail(exc), self.url_source) from exc
        if not alive:
            raise GrobidUnavailableError(self.url, f"/api/isalive answered HTTP {status}", self.url_source)

    # -- one document -----------------------------------------------------------------

    def tei_for(self, path: PathLike) -> bytes:
        """The GROBID full-text TEI of one PDF, from the cache or else from the server.

        Raises EmptyDocumentError / MalformedInputError for an empty or non-PDF file (before
        any request), GrobidProcessingError when the server fails on this file, and
        GrobidUnavailableError when no server answers.
        """
        pdf = read_pdf_bytes(path)
        entry = self._cache_path(pdf)
        cached = _read_cache(entry)
        if cached is not None:
            return cached
        tei = self._request(path, pdf)
        self._write_cache(entry, tei)
        return tei

    def _request(self, path: PathLike, pdf: bytes) -> bytes:
        """Send one PDF; return its TEI or raise the matching project error."""
        document = io.BytesIO(pdf)
        document.name = Path(path).name  # the multipart filename GROBID logs
        _, status, text = self._client.process_pdf(
            FULLTEXT_SERVICE,
            document,
            # The client defaults consolidate_header to True: say both explicitly.
            consolidate_header=self.consolidate,
            consolidate_citations=self.consolidate,
        )
        if status == 200 and text and text.strip():
            return text.encode("utf-8")
        # The client reports a refused connection as status 500 too, just like a
        # server-side failure; only asking the server again tells the two apart.
        self.check()
        raise GrobidProcessingError(path, _failure_reason(status, text, self.timeout))

    # -- many documents ---------------------------------------------------------------

    def process(
        self, paths: Iterable[PathLike]
    ) -> Iterator[tuple[PathLike, Union[bytes, Exception]]]:
        """Get the TEI of many PDFs, ``concurrency`` requests at a time.

        Yields ``(path, tei_bytes)`` or ``(path, exception)`` for every input, with the path
        as given. Order: inputs that need no request (cache hits, and files rejected as
        empty, not a PDF or unreadable) come first in input order; the others follow in
        completion order, so match results by path. One file's failure never stops the
        batch. When some file needs the server and none answers, GrobidUnavailableError is
        raised once, before anything is yielded.
        """
        immediate: list[tuple[PathLike, Union[bytes, Exception]]] = []
        pending: list[PathLike] = []
        for path in paths:
            try:
                cached = _read_cache(self._cache_path(read_pdf_bytes(path)))
            except (ScholarlyNLPError, OSError) as exc:
                immediate.append((path, exc))
                continue
            if cached is None:
                pending.append(path)
            else:
                immediate.append((path, cached))
        if pending:
            self.check()
        yield from self._run_pool(pending, immediate)

    def _run_pool(
        self,
        pending: list[PathLike],
        immediate: list[tuple[PathLike, Union[bytes, Exception]]],
    ) -> Iterator[tuple[PathLike, Union[bytes, Exception]]]:
        """Submit the pending files, yield the immediate results, then the pool's."""
        pool = ThreadPoolExecutor(
            max_workers=max(1, min(self.concurrency, len(pending))),
            thread_name_prefix="grobid",
        )
        try:
            # Each worker re-reads its file, so the bytes sent and the cache key always agree
            # even if the file changed since it was first hashed.
            futures: dict[Future[bytes], PathLike] = {
                pool.submit(self.tei_for, path): path for path in pending
            }
            yield from immediate
            for future in as_completed(futures):
                yield futures[future], _outcome(future)
        finally:
            # A consumer that stops early must not wait for documents nobody will read.
            pool.shutdown(wait=True, cancel_futures=True)

    # -- cache ------------------------------------------------------------------------

    def _cache_path(self, pdf: bytes) -> Path:
        """Where the TEI of these PDF bytes, under this service's options, is cached."""
        digest = hashlib.sha256(pdf).hexdigest()
        options = f"{FULLTEXT_SERVICE}-consolidate{int(self.consolidate)}"
        return self.cache_dir / f"{digest}.{options}.tei.xml"

    def _write_cache(self, entry: Path, tei: bytes) -> None:
        """Store a TEI atomically; a cache that cannot be written only costs a warning."""
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(entry, tei)  # the one atomic write (scholarly_nlp.write_atomic)
        except OSError as exc:
            _log.warning("could not cache GROBID TEI at %s: %s", entry, exc)


def read_pdf_bytes(path: PathLike) -> bytes:
    """The bytes of a PDF file; EmptyDocumentError or MalformedInputError when it is none."""
    data = Path(path).read_bytes()
    if not data.strip():
        raise EmptyDocumentError(path, "the file is empty, there is no PDF to send to GROBID")
    if _PDF_MAGIC not in data[:_MAGIC_WINDOW]:
        raise MalformedInputError(
            path, f"not a PDF (no '%PDF-' header in its first {_MAGIC_WINDOW} bytes)"
        )
    return data


def read_pdf_with_grobid(
    path: PathLike, *, service: Optional[GrobidService] = None, paper_id: Optional[str] = None
) -> "Paper":
    """Read a PDF into a Paper through a GROBID server (cached; see GrobidService).

    ``paper_id`` defaults to the file's stem. Raises the errors of GrobidService.tei_for
    and of the TEI parser.
    """
    from .tei import parse_tei  # imported late: the TEI reader is optional for this module

    service = service or GrobidService()
    tei = service.tei_for(path)
    paper = parse_tei(tei, source=str(path), paper_id=paper_id or Path(path).stem)
    paper.reader = "grobid"
    return paper


# -- helpers ---------------------------------------------------------------------------


class _QuietClientLog(logging.LoggerAdapter):
    """grobid-client-python's logger calls, all demoted to DEBUG (they repeat our errors)."""

    def __init__(self, logger: logging.Logger) -> None:
        super().__init__(logger, {})

    def log(self, level: int, msg: object, *args: object, **kwargs: object) -> None:
        if self.isEnabledFor(logging.DEBUG):
            msg, kwargs = self.process(msg, kwargs)
            self.logger.log(logging.DEBUG, msg, *args, **kwargs)


def _outcome(future: "Future[bytes]") -> Union[bytes, Exception]:
    """A finished future's TEI, or the project error (or OSError) it ended with."""
    try:
        return future.result()
    except (ScholarlyNLPError, OSError) as exc:
        return exc


def _read_cache(entry: Path) -> Optional[bytes]:
    """The cached TEI, or None on a miss (an empty entry counts as a miss)."""
    try:
        data = entry.read_bytes()
    except FileNotFoundError:
        return None
    return data or None


def _connection_detail(exc: Exception) -> str:
    """A few words on why the connection failed, instead of urllib3's long message."""
    cause = exc.__cause__
    if isinstance(cause, requests.exceptions.Timeout):
        return "no answer to /api/isalive in time"
    if "refused" in str(cause).lower():
        return "connection refused"
    return f"connection failed: {type(cause).__name__ if cause else 'unknown error'}"


def _failure_reason(status: int, text: Optional[str], timeout: float) -> str:
    """One phrase on why GROBID gave no TEI for a file, from the client's (status, text)."""
    body = " ".join((text or "").split())[:_MAX_BODY_IN_REASON]
    # The client means to report a read timeout as 408, but requests' exceptions are
    # IOErrors and its "could not open the file" branch catches them first, as a 400.
    if status == 408 or "timed out" in body.lower():
        return f"GROBID gave no answer within {timeout} s"
    if status == 200 or status == 204 or not body:
        return f"GROBID returned an empty answer (HTTP {status})"
    return f"GROBID failed on it (HTTP {status}: {body})"
