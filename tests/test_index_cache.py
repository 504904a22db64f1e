"""The per-Doc index caches free their entries with the Doc (issue 16, item 6).

``SentenceIndex.for_doc`` (scholarly_nlp.retrieval) and the contribution linker's
``PaperIndex.for_doc`` cache one index per Doc, keyed weakly by the Doc. The cached index
must not refer to its Doc strongly (a value that does keeps its own weak key alive, so
every Doc ever queried stayed in memory). Built from 200 Docs of real ACL TEI: querying
and dropping them leaves the caches empty, and cached results equal uncached ones.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from conftest import shared

from scholarly_nlp import introduction_and_body, paper_to_doc
from scholarly_nlp.readers.tei import read_tei
from scholarly_nlp.retrieval import SentenceIndex, top_sentences
from scholarly_contribution_linker.candidates import PaperIndex

N_DOCS = 200
QUERY = "We propose a neural model that improves translation quality on benchmark data sets."


@pytest.fixture(scope="module")
def papers():
    files = sorted(shared("tei", "acl").glob("*.tei.xml"))[:N_DOCS]
    assert len(files) == N_DOCS
    return [read_tei(f) for f in files]


def _sentence_hits(doc):
    """Cached path (top_sentences) and uncached path (a fresh index), as plain values."""
    cached = [(s.start, s.end, s.text, score) for s, score in top_sentences(QUERY, doc, k=5)]
    fresh = SentenceIndex(doc)
    sentences = list(doc.sents)
    uncached = [(sentences[i].start, sentences[i].end, sentences[i].text, score)
                for i, score in fresh.search(QUERY, 5)]
    return cached, uncached


def _paper_hits(doc):
    index = PaperIndex.for_doc(doc)
    sentences, paragraphs = introduction_and_body(doc)
    assert index.sentences == sentences and index.paragraphs == paragraphs
    assert [p.label_ for p in index.paragraphs] == [p.label_ for p in paragraphs]
    if not index.texts:
        return [], []
    cached = index.bm25(QUERY).tolist()
    uncached = PaperIndex(doc).bm25(QUERY).tolist()
    return cached, uncached


def test_caches_free_dropped_docs_and_match_uncached(papers, nlp):
    SentenceIndex.clear_cache()
    PaperIndex._cache.clear()
    gc.collect()
    refs = []
    for paper in papers:
        doc = paper_to_doc(paper, nlp)
        refs.append(weakref.ref(doc))
        if not list(doc.sents):
            continue
        cached, uncached = _sentence_hits(doc)
        assert cached == uncached
        assert SentenceIndex.for_doc(doc) is SentenceIndex.for_doc(doc)
        cached, uncached = _paper_hits(doc)
        assert np.allclose(cached, uncached) and len(cached) == len(uncached)
        assert PaperIndex.for_doc(doc) is PaperIndex.for_doc(doc)
    del doc
    gc.collect()
    assert all(ref() is None for ref in refs), "a cached index keeps its Doc alive"
    assert SentenceIndex.cache_size() == 0
    assert PaperIndex.cache_size() == 0


def test_live_doc_stays_cached_and_index_does_not_own_it(papers, nlp):
    doc = paper_to_doc(papers[0], nlp)
    index = SentenceIndex.for_doc(doc)
    before = SentenceIndex.builds
    assert SentenceIndex.for_doc(doc) is index and SentenceIndex.builds == before
    assert index.doc is doc and len(index) == len(list(doc.sents))
    paper_index = PaperIndex.for_doc(doc)
    del doc
    gc.collect()
    assert index.doc is None and paper_index.doc is None
    with pytest.raises(ReferenceError):
        index.sentences
    with pytest.raises(ReferenceError):
        paper_index.paragraphs


def test_edited_sentences_or_paragraphs_rebuild_the_index(papers, nlp):
    """The cache key is cheap (one token array), but still sees every edit an index depends on."""
    doc = paper_to_doc(papers[1], nlp)
    sentences = list(doc.sents)
    assert len(sentences) > 3
    index = SentenceIndex.for_doc(doc)
    assert SentenceIndex.for_doc(doc) is index
    doc[sentences[2].start].is_sent_start = False  # merge the third sentence into the second
    rebuilt = SentenceIndex.for_doc(doc)
    assert rebuilt is not index and len(rebuilt) == len(sentences) - 1
    assert SentenceIndex.for_doc(doc) is rebuilt

    paper_index = PaperIndex.for_doc(doc)
    paragraphs = list(doc.spans["paragraphs"])
    doc.spans["paragraphs"] = paragraphs[:-1]
    assert PaperIndex.for_doc(doc) is not paper_index
    assert SentenceIndex.for_doc(doc) is rebuilt  # paragraphs are not the sentence index's business
