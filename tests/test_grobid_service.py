"""End-to-end tests of the GROBID service reader against a loopback stand-in server.

The stand-in answers with the real TEI GROBID produced for the three PDFs of
``shared/data/tei/with-pdf``; requests go through grobid-client-python unchanged.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scholarly_nlp.errors import (
    EmptyDocumentError,
    GrobidProcessingError,
    GrobidUnavailableError,
    MalformedInputError,
)
from scholarly_nlp.readers.grobid_service import (
    CACHE_ENV,
    DEFAULT_URL,
    URL_ENV,
    GrobidService,
    read_pdf_with_grobid,
)

try:  # tests/ is a rootdir-relative directory today; keep working if it becomes a package
    from grobid_standin import StandinGrobid, closed_port_url
except ImportError:  # pragma: no cover
    from tests.grobid_standin import StandinGrobid, closed_port_url

from conftest import data_path

WITH_PDF = data_path("tei", "with-pdf")
STEMS = ["2020.acl-main.207", "N18-3011", "journal.pone.0319315"]

# Checked at test time by tests/conftest.py (skip, or fail under SCHOLARLY_NLP_REQUIRE_DATA=1).
pytestmark = pytest.mark.needs_data(*(f"tei/with-pdf/{s}.pdf" for s in STEMS))


def pdf(stem: str) -> Path:
    return WITH_PDF / f"{stem}.pdf"


def real_tei(stem: str) -> bytes:
    return (WITH_PDF / f"{stem}.tei.xml").read_bytes()


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path):
    """No test reads the user's configuration or cache, or goes through a proxy."""
    monkeypatch.delenv(URL_ENV, raising=False)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "env-cache"))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture
def standin():
    with StandinGrobid(WITH_PDF) as server:
        yield server


@pytest.fixture
def service(standin, tmp_path):
    return GrobidService(url=standin.url, cache_dir=tmp_path / "cache", busy_retry_wait=0.01)


# -- one document ----------------------------------------------------------------------


def test_real_pdfs_come_back_as_the_real_tei(service, standin):
    for stem in STEMS:
        assert service.tei_for(pdf(stem)) == real_tei(stem)
    assert standin.fulltext_count == 3
    assert [u.filename for u in standin.uploads] == [f"{s}.pdf" for s in STEMS]


def test_default_request_asks_for_no_consolidation(service, standin):
    service.tei_for(pdf("N18-3011"))
    fields = standin.uploads[0].fields
    assert "consolidateHeader" not in fields and "consolidateCitations" not in fields


def test_cache_hit_makes_no_request(service, standin, tmp_path):
    first = service.tei_for(pdf("N18-3011"))
    assert service.tei_for(pdf("N18-3011")) == first
    # A fresh service on the same directory, and a renamed copy of the PDF, both hit it.
    again = GrobidService(url=standin.url, cache_dir=service.cache_dir)
    copy = tmp_path / "renamed.pdf"
    copy.write_bytes(pdf("N18-3011").read_bytes())
    assert again.tei_for(copy) == first
    assert standin.request_count == 1
    entries = list(service.cache_dir.iterdir())
    assert len(entries) == 1 and entries[0].name.endswith(".tei.xml")  # no temp file left


def test_cache_key_includes_the_options(service, standin):
    service.tei_for(pdf("N18-3011"))
    consolidating = GrobidService(url=standin.url, cache_dir=service.cache_dir, consolidate=True)
    assert consolidating.tei_for(pdf("N18-3011")) == real_tei("N18-3011")
    assert standin.fulltext_count == 2
    assert standin.uploads[1].fields["consolidateHeader"] == "1"
    assert standin.uploads[1].fields["consolidateCitations"] == "1"
    assert len(list(service.cache_dir.iterdir())) == 2


def test_busy_server_is_retried(service, standin):
    standin.busy_first = 2
    assert service.tei_for(pdf("N18-3011")) == real_tei("N18-3011")
    assert standin.fulltext_count == 3


def test_server_error_is_a_processing_error_and_not_cached(service, standin):
    standin.fail_names = {"N18-3011.pdf"}
    with pytest.raises(GrobidProcessingError) as caught:
        service.tei_for(pdf("N18-3011"))
    assert caught.value.path == str(pdf("N18-3011"))
    assert "HTTP 500" in str(caught.value)
    standin.fail_names = set()
    assert service.tei_for(pdf("N18-3011")) == real_tei("N18-3011")


def test_empty_answer_is_a_processing_error(service, standin):
    standin.empty_names = {"N18-3011.pdf"}
    with pytest.raises(GrobidProcessingError, match="empty answer"):
        service.tei_for(pdf("N18-3011"))
    assert not service.cache_dir.exists() or not any(service.cache_dir.iterdir())


def test_timeout_is_a_processing_error(standin, tmp_path):
    standin.delay = 3
    slow = GrobidService(url=standin.url, cache_dir=tmp_path / "cache", timeout=0.3)
    started = time.monotonic()
    with pytest.raises(GrobidProcessingError, match="no answer within 0.3 s"):
        slow.tei_for(pdf("N18-3011"))
    assert time.monotonic() - started < 2


# -- inputs rejected before any request ------------------------------------------------


def test_empty_and_non_pdf_files_are_rejected_before_any_request(service, standin, tmp_path):
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    text = tmp_path / "notes.pdf"
    text.write_text("this is not a PDF\n")
    with pytest.raises(EmptyDocumentError, match="empty.pdf"):
        service.tei_for(empty)
    with pytest.raises(MalformedInputError, match="notes.pdf"):
        service.tei_for(text)
    results = dict(service.process([empty, text]))
    assert isinstance(results[empty], EmptyDocumentError)
    assert isinstance(results[text], MalformedInputError)
    assert standin.request_count == 0


# -- many documents --------------------------------------------------------------------


def test_process_runs_requests_concurrently(standin, tmp_path):
    standin.hold_until = 3  # nobody is answered until all three requests are in flight
    service = GrobidService(url=standin.url, cache_dir=tmp_path / "cache", concurrency=3)
    started = time.monotonic()
    results = dict(service.process([pdf(s) for s in STEMS]))
    assert time.monotonic() - started < standin.hold_timeout
    assert standin.max_in_flight == 3
    assert results == {pdf(s): real_tei(s) for s in STEMS}


def test_process_respects_the_concurrency_bound(standin, tmp_path):
    service = GrobidService(url=standin.url, cache_dir=tmp_path / "cache", concurrency=1)
    results = dict(service.process([pdf(s) for s in STEMS]))
    assert set(results) == {pdf(s) for s in STEMS}
    assert standin.max_in_flight == 1


def test_one_failure_does_not_abort_the_batch(service, standin, tmp_path):
    standin.fail_names = {"N18-3011.pdf"}
    bogus = tmp_path / "bogus.pdf"
    bogus.write_text("plain text")
    results = dict(service.process([pdf(s) for s in STEMS] + [bogus]))
    failed = results.pop(pdf("N18-3011"))
    assert isinstance(failed, GrobidProcessingError) and "N18-3011.pdf" in str(failed)
    assert isinstance(results.pop(bogus), MalformedInputError)
    assert results == {pdf(s): real_tei(s) for s in STEMS if s != "N18-3011"}


def test_process_serves_cache_hits_without_contacting_the_server(service, standin):
    service.tei_for(pdf("N18-3011"))
    before = standin.request_count
    assert list(service.process([pdf("N18-3011")])) == [(pdf("N18-3011"), real_tei("N18-3011"))]
    assert standin.request_count == before


# -- no server -------------------------------------------------------------------------


def test_no_server_is_one_clear_error(tmp_path):
    url = closed_port_url()
    service = GrobidService(url=url, cache_dir=tmp_path / "cache")
    with pytest.raises(GrobidUnavailableError) as caught:
        service.check()
    message = str(caught.value)
    assert url in message and "docker run" in message and "connection refused" in message
    with pytest.raises(GrobidUnavailableError):
        service.tei_for(pdf("N18-3011"))
    batch = service.process([pdf(s) for s in STEMS])
    with pytest.raises(GrobidUnavailableError):
        next(batch)  # raised up front, before any per-file result


# -- configuration ---------------------------------------------------------------------


def test_url_comes_from_the_environment(standin, monkeypatch, tmp_path):
    assert GrobidService().url == DEFAULT_URL
    monkeypatch.setenv(URL_ENV, standin.url + "/")
    service = GrobidService(cache_dir=tmp_path / "cache")
    assert service.url == standin.url
    service.check()
    assert service.tei_for(pdf("N18-3011")) == real_tei("N18-3011")
    assert standin.isalive_count == 1 and standin.fulltext_count == 1
    assert GrobidService(url="http://127.0.0.1:1").url == "http://127.0.0.1:1"


def test_cache_dir_comes_from_the_environment(tmp_path):
    assert GrobidService().cache_dir == tmp_path / "env-cache" / "grobid"
    assert GrobidService(cache_dir=tmp_path / "mine").cache_dir == tmp_path / "mine"


# -- Paper -----------------------------------------------------------------------------


def test_read_pdf_with_grobid_gives_a_grobid_paper(service):
    paper = read_pdf_with_grobid(pdf("2020.acl-main.207"), service=service)
    assert paper.reader == "grobid"
    assert paper.paper_id == "2020.acl-main.207"
    assert paper.source == str(pdf("2020.acl-main.207"))
    assert paper.title
    named = read_pdf_with_grobid(pdf("2020.acl-main.207"), service=service, paper_id="p1")
    assert named.paper_id == "p1"


def test_importing_the_reader_leaves_logging_alone():
    # grobid-client-python calls logging.basicConfig(level=INFO) when imported.
    code = (
        "import logging, scholarly_nlp.readers.grobid_service; "
        "root = logging.getLogger(); print(root.level, len(root.handlers))"
    )
    repo = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == [str(logging.WARNING), "0"]


# -- the CLI end to end ------------------------------------------------------------------


def test_cli_parse_through_grobid_with_one_failing_file(standin, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from scholarly_nlp.cli import cli

    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cli-cache"))
    standin.fail_names = {"N18-3011.pdf"}
    out = tmp_path / "out"
    args = ["parse", *(str(pdf(s)) for s in STEMS), "--out", str(out), "--grobid-url", standin.url]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    assert f"{len(STEMS)} file(s): {len(STEMS) - 1} ok, 1 failed" in result.output
    assert "N18-3011.pdf" in result.output
    written = sorted(p.name for p in out.glob("*.json"))
    assert written == sorted(f"{s}.json" for s in STEMS if s != "N18-3011")
    import json

    data = json.loads((out / "2020.acl-main.207.json").read_text())
    assert data["title"].startswith("SPECTER")
