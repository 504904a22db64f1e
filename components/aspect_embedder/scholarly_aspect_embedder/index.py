"""A saved, memory-mapped vector index of paper aspects for similarity search on one aspect.

An index is a folder:

========================  ==============================================================
``meta.json``             format_version, model, width, aspect_weight, n, fingerprint
``papers.jsonl``          one row per paper: paper_id, title, source
``search-<aspect>.npy``   (n, 2*width) float32 aspect search vectors of each query aspect
                          (:data:`scholarly_nlp.QUERY_ASPECTS`; see :mod:`.vectors`)
``aspects.npy``           (n, 4, width) float32, NaN rows for missing aspects
``sentence_vectors.npy``  (total_sentences, width) float32
``sentence_offsets.npy``  (n+1,) int64: paper i's sentences are rows offsets[i]:offsets[i+1]
``sentences.jsonl``       one row per sentence: text, aspect
========================  ==============================================================

Arrays are written in chunks while Docs stream in, and opened with ``mmap_mode="r"``, so a
corpus larger than memory can be indexed and searched. Search is exact (a chunked scan with
a partial sort). Format 1 named the search vectors ``facet-<aspect>.npy`` and the weight
``facet_weight``; such an index is not read (the ``similar`` command rebuilds it).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional, Sequence, Union

import numpy
from spacy.tokens import Doc

from scholarly_nlp import (ASPECTS, QUERY_ASPECTS, ScholarlyNLPError, aspect_sentences, cache_dir, check_aspect,
                           title_span)
from .vectors import (ASPECT_WEIGHT, aspect_matrix, aspect_search_vectors, doc_aspect_vectors,
                      doc_sentence_vectors)

PathLike = Union[str, Path]

FORMAT_VERSION = 2
INDEX_DIRNAME = ".scholarly-index"
SEARCH_CHUNK_ROWS = 65536
_COPY_BYTES = 1 << 24


class IndexFormatError(ScholarlyNLPError):
    """A folder is not a readable aspect index (missing files, other format version)."""


def safe_model_tag(model_name: str) -> str:
    """A folder name for a model: its last path part, sanitised, plus a short hash of the name."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(str(model_name).rstrip("/\\")).name or "model")[-40:]
    return f"{base.strip('._') or 'model'}-{hashlib.sha1(str(model_name).encode()).hexdigest()[:8]}"


def index_path_for(corpus_path: PathLike, model_name: str, *, in_corpus: bool = False) -> Path:
    """Where the index of a corpus lives.

    By default in scholarly_nlp's cache (:func:`scholarly_nlp.cache_dir`:
    ``aspect-index/<corpus name>-<hash of its absolute path>/<model tag>``), so a user's
    corpus folder is never written to. With ``in_corpus``: ``CORPUS/.scholarly-index/<tag>``
    for a folder, ``CORPUS.scholarly-index/<tag>`` for a file. A glob's corpus is the folder
    before its first wildcard.
    """
    corpus = str(corpus_path)
    if not os.path.exists(corpus) and re.search(r"[*?\[]", corpus):
        parts = Path(corpus).parts
        fixed = [p for p in parts[: next(i for i, p in enumerate(parts) if re.search(r"[*?\[]", p))]]
        corpus = str(Path(*fixed)) if fixed else "."
    if not in_corpus:
        absolute = os.path.abspath(corpus)
        key = hashlib.sha256(absolute.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        name = re.sub(r"[^\w.-]+", "_", os.path.basename(absolute.rstrip(os.sep)) or "corpus")[:60]
        return cache_dir("aspect-index", f"{name}-{key}", safe_model_tag(model_name))
    if os.path.isdir(corpus):
        return Path(corpus) / INDEX_DIRNAME / safe_model_tag(model_name)
    return Path(corpus + INDEX_DIRNAME) / safe_model_tag(model_name)


def corpus_fingerprint(files: Iterable[PathLike], model_name: str) -> str:
    """A hash of the sorted input file names, sizes and mtimes, and the model name."""
    digest = hashlib.sha256(str(model_name).encode())
    for path in sorted(os.path.abspath(str(p)) for p in files):
        try:
            stat = os.stat(path)
            digest.update(f"\0{path}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
        except OSError:
            digest.update(f"\0{path}\0missing".encode())
    return digest.hexdigest()


class _NpyAppender:
    """Writes a .npy file whose first dimension is only known at the end: rows go to a raw
    file in chunks, and :meth:`finish` prefixes the header."""

    def __init__(self, path: Path, row_shape: tuple[int, ...], dtype: Any = numpy.float32):
        self.path, self.row_shape, self.dtype = path, tuple(row_shape), numpy.dtype(dtype)
        self.raw_path = path.with_suffix(".raw")
        self.handle = open(self.raw_path, "wb")
        self.rows = 0

    def append(self, rows: numpy.ndarray) -> None:
        """Append rows of shape (m, *row_shape)."""
        rows = numpy.ascontiguousarray(rows, dtype=self.dtype).reshape((-1,) + self.row_shape)
        self.handle.write(rows.tobytes())
        self.rows += rows.shape[0]

    def finish(self) -> None:
        """Write the .npy (header, then the raw rows) and delete the raw file."""
        self.handle.close()
        header = {"descr": numpy.lib.format.dtype_to_descr(self.dtype), "fortran_order": False,
                  "shape": (self.rows,) + self.row_shape}
        with open(self.path, "wb") as out, open(self.raw_path, "rb") as raw:
            numpy.lib.format.write_array_header_2_0(out, header)
            shutil.copyfileobj(raw, out, _COPY_BYTES)
        os.remove(self.raw_path)


class _IndexWriter:
    """Builds an index folder from chunks of papers (aspect arrays plus sentences)."""

    def __init__(self, path: Path, width: int, model_name: str, aspect_weight: float):
        self.path, self.width, self.model_name, self.aspect_weight = path, width, model_name, aspect_weight
        path.mkdir(parents=True)
        self.search_vectors = {a: _NpyAppender(path / f"search-{a}.npy", (2 * width,)) for a in QUERY_ASPECTS}
        self.aspects = _NpyAppender(path / "aspects.npy", (len(ASPECTS), width))
        self.sentence_vectors = _NpyAppender(path / "sentence_vectors.npy", (width,))
        self.offsets = [0]
        self.papers = open(path / "papers.jsonl", "w", encoding="utf-8")
        self.sentences = open(path / "sentences.jsonl", "w", encoding="utf-8")

    def add(self, papers: Sequence[dict], aspects: numpy.ndarray, sentence_vectors: Optional[numpy.ndarray] = None,
            sentences: Sequence[dict] = (), sentence_counts: Optional[Sequence[int]] = None) -> None:
        """Add ``len(papers)`` papers: their (m, 4, width) aspects, and their sentences in order."""
        for aspect, appender in self.search_vectors.items():
            appender.append(aspect_search_vectors(aspects, aspect, self.aspect_weight))
        self.aspects.append(aspects)
        for paper in papers:
            self.papers.write(json.dumps(paper, ensure_ascii=False) + "\n")
        counts = sentence_counts if sentence_counts is not None else [0] * len(papers)
        for count in counts:
            self.offsets.append(self.offsets[-1] + int(count))
        if sentence_vectors is not None and len(sentence_vectors):
            self.sentence_vectors.append(sentence_vectors)
        for sentence in sentences:
            self.sentences.write(json.dumps(sentence, ensure_ascii=False) + "\n")

    def finish(self, fingerprint: Optional[str]) -> None:
        """Finish every file and write ``meta.json`` last."""
        for appender in [*self.search_vectors.values(), self.aspects, self.sentence_vectors]:
            appender.finish()
        self.papers.close()
        self.sentences.close()
        numpy.save(self.path / "sentence_offsets.npy", numpy.asarray(self.offsets, dtype=numpy.int64))
        meta = {"format_version": FORMAT_VERSION, "model": self.model_name, "width": self.width,
                "aspect_weight": self.aspect_weight, "n": self.aspects.rows, "fingerprint": fingerprint}
        (self.path / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")

    def abort(self) -> None:
        """Close the open files (the caller removes the folder)."""
        for handle in [*(a.handle for a in self.search_vectors.values()), self.aspects.handle,
                       self.sentence_vectors.handle, self.papers, self.sentences]:
            handle.close()


def _build_into(path: PathLike, fill) -> Path:
    """Run ``fill(tmp_folder)`` then move the finished folder to ``path`` (replacing it)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        fill(tmp)
        if path.exists():
            old = path.with_name(f"{path.name}.old-{os.getpid()}")
            os.replace(path, old)
            shutil.rmtree(old, ignore_errors=True)
        os.replace(tmp, path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return path


def doc_rows(doc: Doc) -> tuple[dict, numpy.ndarray, Optional[numpy.ndarray], list[dict]]:
    """A Doc's paper row, (4, width) aspects, sentence vectors (or None) and sentence rows.

    MissingAspectVectorsError without aspect vectors; ScholarlyNLPError when the sentence
    vectors do not match :func:`~scholarly_nlp.doc.roles.aspect_sentences`.
    """
    aspects = aspect_matrix(doc_aspect_vectors(doc))
    title = title_span(doc)
    meta = doc._.paper_meta or {}
    paper = {"paper_id": doc._.paper_id, "title": title.text if title is not None else "", "source": meta.get("source")}
    vectors = doc_sentence_vectors(doc)
    if vectors is None:
        return paper, aspects, None, []
    items = aspect_sentences(doc)
    if len(items) != len(vectors) or (len(vectors) and vectors.shape[1] != aspects.shape[1]):
        raise ScholarlyNLPError(f"paper {doc._.paper_id}: sentence_vectors has shape {vectors.shape} but the paper has "
                                f"{len(items)} sentences of width {aspects.shape[1]}; rerun the aspect_embedder")
    return paper, aspects, vectors, [{"text": s.text, "aspect": a} for s, a in items]


class AspectIndex:
    """A saved aspect index: papers, their aspect search vectors, aspects and sentence vectors.

    Build with :meth:`build` (Docs) or :meth:`from_arrays`; open with :meth:`load`.
    """

    def __init__(self, path: Path, meta: dict, papers: list[dict], search_vectors: dict[str, numpy.ndarray],
                 aspects: numpy.ndarray, sentence_vectors: numpy.ndarray, sentence_offsets: numpy.ndarray):
        self.path = path
        self.meta = meta
        self.papers = papers
        self.search_vectors = search_vectors
        self.aspects = aspects
        self.sentence_vectors = sentence_vectors
        self.sentence_offsets = sentence_offsets
        self._line_starts: Optional[numpy.ndarray] = None
        self._rows_by_id: Optional[dict[str, list[int]]] = None
        self._sq_norms: dict[str, numpy.ndarray] = {}

    # -- building ---------------------------------------------------------------------------

    @classmethod
    def build(cls, docs: Iterable[Doc], path: PathLike, *, model_name: str, fingerprint: Optional[str] = None,
              chunk_size: int = 1024, aspect_weight: float = ASPECT_WEIGHT) -> "AspectIndex":
        """Index Docs processed by the aspect embedder, streaming them in chunks, and load it.

        MissingAspectVectorsError (naming the paper) for a Doc without ``aspect_vectors``.
        """
        def fill(tmp: Path) -> None:
            writer: Optional[_IndexWriter] = None
            try:
                for chunk in _chunks(map(doc_rows, docs), chunk_size):
                    if writer is None:
                        writer = _IndexWriter(tmp, chunk[0][1].shape[1], model_name, aspect_weight)
                    _check_width(chunk, writer.width)
                    vectors = [v for _p, _a, v, _s in chunk if v is not None and len(v)]
                    writer.add([p for p, _a, _v, _s in chunk], numpy.stack([a for _p, a, _v, _s in chunk]),
                               numpy.concatenate(vectors) if vectors else None,
                               [s for _p, _a, _v, rows in chunk for s in rows],
                               [len(rows) for _p, _a, _v, rows in chunk])
                writer = writer or _IndexWriter(tmp, 0, model_name, aspect_weight)
                writer.finish(fingerprint)
            except BaseException:
                if writer is not None:
                    writer.abort()
                raise

        return cls.load(_build_into(path, fill))

    @classmethod
    def from_arrays(cls, path: PathLike, aspects: numpy.ndarray, paper_ids: Sequence[str], *, model_name: str,
                    titles: Optional[Sequence[str]] = None, fingerprint: Optional[str] = None,
                    aspect_weight: float = ASPECT_WEIGHT, chunk_size: int = 65536) -> "AspectIndex":
        """Index raw (n, 4, width) aspect vectors (NaN rows for missing aspects), no sentences.

        ``aspects`` may be a memory map; it is read ``chunk_size`` papers at a time.
        """
        n, _four, width = aspects.shape
        if len(paper_ids) != n:
            raise ValueError(f"{len(paper_ids)} paper ids for {n} aspect rows")

        def fill(tmp: Path) -> None:
            writer = _IndexWriter(tmp, width, model_name, aspect_weight)
            try:
                for start in range(0, n, chunk_size):
                    stop = min(n, start + chunk_size)
                    rows = [{"paper_id": str(paper_ids[i]), "title": titles[i] if titles is not None else "",
                             "source": None} for i in range(start, stop)]
                    writer.add(rows, numpy.asarray(aspects[start:stop], dtype=numpy.float32),
                               sentence_counts=[0] * (stop - start))
                writer.finish(fingerprint)
            except BaseException:
                writer.abort()
                raise

        return cls.load(_build_into(path, fill))

    # -- loading ----------------------------------------------------------------------------

    @classmethod
    def load(cls, path: PathLike, mmap: bool = True) -> "AspectIndex":
        """Open an index folder; arrays are memory-mapped read-only unless ``mmap=False``."""
        path = Path(path)
        meta = read_meta(path)
        if meta is None:
            raise IndexFormatError(f"{path} is not an aspect index (no readable meta.json)")
        if meta.get("format_version") != FORMAT_VERSION:
            raise IndexFormatError(f"{path}: index format {meta.get('format_version')} is not "
                                   f"{FORMAT_VERSION}; rebuild it")
        mode = "r" if mmap else None
        try:
            search_vectors = {a: numpy.load(path / f"search-{a}.npy", mmap_mode=mode) for a in QUERY_ASPECTS}
            aspects = numpy.load(path / "aspects.npy", mmap_mode=mode)
            sentence_vectors = numpy.load(path / "sentence_vectors.npy", mmap_mode=mode)
            offsets = numpy.load(path / "sentence_offsets.npy")
            with open(path / "papers.jsonl", encoding="utf-8") as fh:
                papers = [json.loads(line) for line in fh]
        except (OSError, ValueError) as exc:
            raise IndexFormatError(f"{path}: the index is incomplete or damaged ({exc}); rebuild it") from exc
        n = meta["n"]
        shapes_ok = (all(m.shape[0] == n for m in [*search_vectors.values(), aspects])
                     and sentence_vectors.shape[0] == offsets[-1])
        if len(papers) != n or len(offsets) != n + 1 or not shapes_ok:
            raise IndexFormatError(f"{path}: the index files do not match meta.json; rebuild it")
        return cls(path, meta, papers, search_vectors, aspects, sentence_vectors, offsets)

    # -- reading ----------------------------------------------------------------------------

    def __len__(self) -> int:
        """The number of papers."""
        return int(self.meta["n"])

    @property
    def width(self) -> int:
        """The width of one aspect vector."""
        return int(self.meta["width"])

    @property
    def aspect_weight(self) -> float:
        """The aspect weight the stored aspect search vectors were made with."""
        return float(self.meta["aspect_weight"])

    @property
    def fingerprint(self) -> Optional[str]:
        """The corpus fingerprint stored at build time (None when none was given)."""
        return self.meta.get("fingerprint")

    def rows_for(self, paper_id: Optional[str]) -> list[int]:
        """Rows of the papers with this id (usually zero or one)."""
        if self._rows_by_id is None:
            self._rows_by_id = {}
            for row, paper in enumerate(self.papers):
                self._rows_by_id.setdefault(paper["paper_id"], []).append(row)
        return list(self._rows_by_id.get(paper_id, []))

    def paper_aspects(self, row: int) -> numpy.ndarray:
        """The (4, width) aspect matrix of a paper (NaN rows for missing aspects)."""
        return numpy.asarray(self.aspects[row], dtype=numpy.float32)

    def paper_sentences(self, row: int) -> tuple[list[dict], numpy.ndarray]:
        """A paper's sentence rows ({text, aspect}) and their (m, width) vectors."""
        start, stop = int(self.sentence_offsets[row]), int(self.sentence_offsets[row + 1])
        lines = self._sentence_line_starts()
        with open(self.path / "sentences.jsonl", "rb") as fh:
            fh.seek(int(lines[start]))
            chunk = fh.read(int(lines[stop] - lines[start]))
        rows = [json.loads(line) for line in chunk.split(b"\n") if line.strip()]
        return rows, numpy.asarray(self.sentence_vectors[start:stop], dtype=numpy.float32)

    def _sentence_line_starts(self) -> numpy.ndarray:
        """Byte offset of each line of ``sentences.jsonl`` (plus the file size), found once."""
        if self._line_starts is None:
            starts, pos = [0], 0
            with open(self.path / "sentences.jsonl", "rb") as fh:
                for line in fh:
                    pos += len(line)
                    starts.append(pos)
            self._line_starts = numpy.asarray(starts, dtype=numpy.int64)
        return self._line_starts

    def _row_sq_norms(self, aspect: str, chunk_rows: int) -> numpy.ndarray:
        """Squared norms of an aspect's search-vector rows, computed in chunks once and cached."""
        if aspect not in self._sq_norms:
            matrix = self.search_vectors[aspect]
            self._sq_norms[aspect] = numpy.concatenate(
                [numpy.einsum("ij,ij->i", matrix[i:i + chunk_rows], matrix[i:i + chunk_rows])
                 for i in range(0, len(self), chunk_rows)] or [numpy.zeros(0, numpy.float32)])
        return self._sq_norms[aspect]

    def search(self, query_vector: numpy.ndarray, aspect: str, k: int, exclude: Iterable[int] = (),
               chunk_rows: int = SEARCH_CHUNK_ROWS) -> list[tuple[int, float]]:
        """The ``k`` rows nearest to an aspect search vector, as (row, Euclidean distance), nearest first.

        Exact: rows are scanned ``chunk_rows`` at a time, keeping each chunk's best ``k`` by a
        partial sort; the kept rows' distances are then recomputed exactly (float64). Rows in
        ``exclude`` are skipped; ties keep the lower row first.
        """
        check_aspect(aspect)
        if k < 1:
            raise ValueError(f"k must be at least 1, not {k}")
        matrix = self.search_vectors[aspect]
        query = numpy.asarray(query_vector, dtype=numpy.float32).reshape(-1)
        if len(self) and query.shape[0] != matrix.shape[1]:
            raise ValueError(f"query vector has width {query.shape[0]}, the index {matrix.shape[1]}")
        excluded = numpy.fromiter(exclude, dtype=numpy.int64)
        norms = self._row_sq_norms(aspect, chunk_rows)
        best_rows = []
        for start in range(0, len(self), chunk_rows):
            block = matrix[start:start + chunk_rows]
            sq = norms[start:start + len(block)] - 2.0 * (block @ query) + float(query @ query)
            dist = numpy.sqrt(numpy.maximum(sq, 0.0))
            local = excluded[(excluded >= start) & (excluded < start + len(block))] - start
            dist[local] = numpy.inf
            keep = numpy.argpartition(dist, k - 1)[:k] if k < len(dist) else numpy.arange(len(dist))
            keep = keep[numpy.isfinite(dist[keep])]
            best_rows.append(keep + start)
        if not best_rows:
            return []
        rows = numpy.sort(numpy.concatenate(best_rows))
        # The expansion |x|² - 2x·q + |q|² loses precision near 0: recompute the kept distances.
        dists = numpy.linalg.norm(numpy.asarray(matrix[rows], dtype=numpy.float64) - query, axis=1)
        order = numpy.lexsort((rows, dists))[:k]
        return [(int(rows[i]), float(dists[i])) for i in order]


def read_meta(path: PathLike) -> Optional[dict]:
    """An index folder's ``meta.json``, or None when it is missing or unreadable."""
    try:
        return json.loads((Path(path) / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _chunks(items: Iterable[Any], size: int) -> Iterator[list]:
    """Lists of up to ``size`` consecutive items."""
    chunk: list = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _check_width(chunk: list, width: int) -> None:
    """ScholarlyNLPError naming the first paper whose aspect width differs from the index's."""
    for paper, aspects, _v, _s in chunk:
        if aspects.shape[1] != width:
            raise ScholarlyNLPError(f"paper {paper['paper_id']}: aspect vectors of width {aspects.shape[1]}, "
                                    f"the index has width {width}")
