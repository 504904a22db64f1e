"""The figure_embedder component, its losses, relations, recommender and evaluation, on real papers.

A tiny random-weight encoder and a small network keep every test fast; MiniLM is not loaded.
"""

from __future__ import annotations

import json

import numpy
import pytest
import spacy
from click.testing import CliRunner
from spacy.training import Example
from spacy.util import registry
from thinc.api import Adam, fix_random_seed

import scholarly_nlp
from scholarly_nlp import Block, FigureInfo, InlineRef, Paper, ScholarlyNLPError, paper_to_doc
from scholarly_nlp.ml.backbones import make_tiny_backbone
from scholarly_figure_embedder import similar_figures
from scholarly_figure_embedder.evaluation import (
    accuracy,
    build_pair_sets,
    evaluate_embedder,
    figure_pool,
    recommendation,
    tune_hybrid_weight,
    tune_threshold,
    WEIGHT_GRID,
)
from scholarly_figure_embedder.features import make_batch
from scholarly_figure_embedder.images import load_figure_image
from scholarly_figure_embedder.losses import LOSSES, pair_loss, triplets
from scholarly_figure_embedder.papers import read_papers
from scholarly_figure_embedder.recommend import Candidate, rank_candidates
from scholarly_figure_embedder.relations import (
    RelationTable,
    bibliography_citations,
    build_relations,
    clscisumm_citations,
    clscisumm_titles,
    corpus_relations,
    normalise_title,
)
from scholarly_figure_embedder.sampling import PairSampler
from scholarly_figure_embedder.text_vectors import TextVectorCache
from scholarly_figure_embedder.texts import context_sentences, figure_texts

from conftest import shared

SMALL_MODEL = {"encoder_width": 32, "text_width": 16, "image_size": 32, "conv_channels": [4, 8], "image_width": 8,
               "embedding_width": 16, "dropout": 0.0}
# C02-1050 and C04-1091 both cite the CL-SciSumm reference paper C00-2123 (co-citing);
# their figures have rendered images. The TEI papers have none.
PDFS = ["C02-1050", "C04-1091"]
TEIS = ["D14-1065", "D14-1003", "D14-1205", "D15-1126"]


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def tiny_backbone(tmp_path_factory):
    return make_tiny_backbone(tmp_path_factory.mktemp("backbones") / "tiny")


def make_nlp(backbone, **overrides):
    """A blank pipeline with a small figure_embedder over the tiny encoder (not initialised)."""
    nlp = scholarly_nlp.blank()
    config = {"encoder": str(backbone), "model": dict(SMALL_MODEL), **overrides}
    nlp.add_pipe("figure_embedder", config=config)
    return nlp


@pytest.fixture(scope="session")
def image_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("figure_images")


@pytest.fixture(scope="session")
def real_docs(image_dir):
    nlp = scholarly_nlp.blank()
    pdfs = [shared("pdfs", "acl", f"{pid}.pdf") for pid in PDFS]
    teis = [shared("tei", "acl", f"{pid}.tei.xml") for pid in TEIS]
    results = list(read_papers(pdfs + teis, nlp, image_dir))
    assert all(r.ok for r in results), [str(r.error) for r in results if not r.ok]
    return [r.doc for r in results]


@pytest.fixture(scope="session")
def relations():
    return RelationTable([("C02-1050", "C04-1091", "co_citing")])


@pytest.fixture(scope="session")
def trained_nlp(tiny_backbone, real_docs, relations, tmp_path_factory):
    """Initialised on the real papers (relations from a file) and trained for a few steps."""
    path = tmp_path_factory.mktemp("relations") / "relations.json"
    relations.save(path)
    fix_random_seed(0)
    nlp = make_nlp(tiny_backbone)
    examples = [Example(d.copy(), d) for d in real_docs]
    nlp.get_pipe("figure_embedder").initialize(lambda: examples, nlp=nlp, relations_path=str(path))
    optimizer = Adam(1e-3)
    for _ in range(4):
        nlp.get_pipe("figure_embedder").update(examples, sgd=optimizer)
    return nlp


def synthetic_paper(captions=(), image_paths=None, mention=True, paper_id="synthetic") -> Paper:
    """A small paper: a paragraph mentioning Figure 1 (when asked) and one figure per caption."""
    paragraph = "We describe the parser. Figure 1 shows the parser architecture. It has three layers."
    start = paragraph.index("Figure 1")
    refs = [InlineRef(start, start + len("Figure 1"), "figure", "fig_0")] if captions and mention else []
    blocks = [Block("title", "Neural parsing of papers"), Block("paragraph", paragraph, refs=refs)]
    figures = []
    for i, caption in enumerate(captions):
        blocks.append(Block("caption", caption, figure_id=f"fig_{i}"))
        path = image_paths[i] if image_paths else None
        figures.append(FigureInfo(id=f"fig_{i}", kind="figure", label=str(i + 1), image_path=path))
    return Paper(paper_id=paper_id, source="synthetic", reader="test", blocks=blocks, figures=figures)


def candidate_ids(doc) -> list[str]:
    return [f.id for f in doc._.figures if f.kind == "figure"]


# --------------------------------------------------------------------------- architecture and inference


def test_architecture_is_registered_and_declared():
    from importlib import metadata

    builder = registry.architectures.get("scholarly_figure_embedder.FigureEmbedder.v1")
    model = builder(**SMALL_MODEL)
    assert model.get_dim("nO") == 16
    names = {ep.name for ep in metadata.entry_points(group="spacy_architectures")}
    assert "scholarly_figure_embedder.FigureEmbedder.v1" in names


def test_vectors_have_the_configured_width_and_unit_norm(trained_nlp, real_docs):
    for doc in real_docs:
        doc = trained_nlp(doc.copy())
        vectors = doc._.figure_vectors
        assert list(vectors) == candidate_ids(doc) and vectors
        for vector in vectors.values():
            assert len(vector) == SMALL_MODEL["embedding_width"] and all(isinstance(x, float) for x in vector)
            assert numpy.linalg.norm(vector) == pytest.approx(1.0, abs=1e-4)


def test_pdf_figures_have_images_and_tei_figures_do_not(trained_nlp, real_docs):
    features = trained_nlp.get_pipe("figure_embedder").features(real_docs)
    assert all(f.image is not None and f.image.shape == (32, 32) for f in features[0])
    assert all(f.image is None for f in features[-1])


def test_missing_and_undecodable_images_use_the_missing_image_vector(trained_nlp, tmp_path, real_docs):
    corrupt = tmp_path / "corrupt.png"
    corrupt.write_bytes(b"\x89PNG\r\n\x1a\n this is not a PNG body")
    truncated = tmp_path / "truncated.png"
    valid = next(f.image_path for f in real_docs[0]._.figures if f.image_path)
    truncated.write_bytes(open(valid, "rb").read()[:60])
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    assert load_figure_image(str(corrupt)) is None and load_figure_image(str(truncated)) is None
    assert load_figure_image(str(empty)) is None and load_figure_image(str(tmp_path / "nope.png")) is None
    image = load_figure_image(valid, 32)
    assert image.shape == (32, 32) and image.dtype == numpy.uint8 and image.max() > 0

    same_caption = "Figure 1: The parser architecture."
    paths = [str(corrupt), None, str(tmp_path / "nope.png"), str(truncated), str(empty), valid]
    doc = paper_to_doc(synthetic_paper([same_caption] * len(paths), paths, mention=False), trained_nlp)
    vectors = trained_nlp(doc)._.figure_vectors
    assert len(vectors) == len(paths)
    rows = numpy.array([vectors[f"fig_{i}"] for i in range(len(paths))])
    assert numpy.isfinite(rows).all()
    # Same text, no usable image: the same (missing-image) input, the same embedding.
    for i in range(1, 5):
        numpy.testing.assert_allclose(rows[i], rows[0], atol=1e-5)
    assert not numpy.allclose(rows[5], rows[0], atol=1e-4)  # a real image changes the embedding


def test_defined_results_for_awkward_papers(trained_nlp):
    no_figures = trained_nlp(paper_to_doc(synthetic_paper(), trained_nlp))
    assert no_figures._.figure_vectors == {}
    one = trained_nlp(paper_to_doc(synthetic_paper(["Figure 1: The parser."]), trained_nlp))
    assert list(one._.figure_vectors) == ["fig_0"]
    empty = trained_nlp(paper_to_doc(synthetic_paper(["", "Figure 2:"], mention=False), trained_nlp))
    assert list(empty._.figure_vectors) == ["fig_0", "fig_1"]
    assert all(numpy.isfinite(v).all() for v in empty._.figure_vectors.values())
    embedder = trained_nlp.get_pipe("figure_embedder")
    for doc in (no_figures, one, empty):  # training on them never crashes
        losses = embedder.update([Example(doc, doc)], sgd=Adam(1e-3), losses={})
        assert numpy.isfinite(losses["figure_embedder"])
    assert similar_figures(one, "fig_0", [no_figures]) == []
    with pytest.raises(ScholarlyNLPError, match="no figure"):
        similar_figures(no_figures, "fig_0", [one])


def test_texts_are_caption_and_mention_context(real_docs):
    doc = paper_to_doc(synthetic_paper(["Figure 1: The parser architecture."]), scholarly_nlp.blank())
    (figure, text), = figure_texts(doc)
    assert text.caption == "The parser architecture."
    assert text.context == ("We describe the parser.", "Figure 1 shows the parser architecture.",
                            "It has three layers.")
    assert context_sentences(doc, figure, window=0) == ["Figure 1 shows the parser architecture."]
    for doc in real_docs:
        for figure, text in figure_texts(doc):
            body = list(doc.spans["paragraphs"]) + list(doc.spans["abstract"])
            body_mentions = [m for m in figure.mentions if any(b.start <= m.start < b.end for b in body)]
            assert bool(text.context) == bool(body_mentions)
            assert len(text.context) <= 3 * 3


# --------------------------------------------------------------------------- training


@pytest.mark.parametrize("loss", LOSSES)
def test_loss_gradients_match_finite_differences(loss):
    rng = numpy.random.default_rng(0)
    E = rng.normal(size=(5, 4)).astype(numpy.float64)
    left, right = [0, 0, 0, 1, 2], [1, 2, 3, 3, 4]
    targets = [1.0, 0.6, 0.0, 0.6, 0.0]
    options = {"scale": 3.0, "margin": 0.5}
    value, grad = pair_loss(loss, E, left, right, targets, **options)
    assert value >= 0.0
    eps = 1e-3
    for i in range(E.shape[0]):
        for j in range(E.shape[1]):
            plus, minus = E.copy(), E.copy()
            plus[i, j] += eps
            minus[i, j] -= eps
            numeric = (pair_loss(loss, plus, left, right, targets, **options)[0]
                       - pair_loss(loss, minus, left, right, targets, **options)[0]) / (2 * eps)
            assert grad[i, j] == pytest.approx(numeric, abs=2e-3)


def test_losses_hand_computed():
    E = numpy.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    value, _ = pair_loss("mse", E, [0, 0], [1, 2], [1.0, 1.0])
    assert value == pytest.approx((0.0 + 1.0) / 2)
    assert triplets(numpy.array([0, 0, 1]), numpy.array([1, 2, 2]), numpy.array([1.0, 0.0, 0.6])) == [(0, 1)]
    value, _ = pair_loss("triplet", E, [0, 0], [1, 2], [1.0, 0.0], margin=0.2)
    assert value == 0.0  # s(0,1)=1 beats s(0,2)=0 by more than the margin
    with pytest.raises(ValueError):
        pair_loss("hinge", E, [0], [1], [1.0])


@pytest.mark.parametrize("loss", LOSSES)
def test_update_reduces_loss_on_a_fixed_batch(tiny_backbone, real_docs, relations, loss):
    fix_random_seed(0)
    nlp = make_nlp(tiny_backbone, loss=loss)
    embedder = nlp.get_pipe("figure_embedder")
    embedder.relations = relations
    examples = [Example(d, d) for d in real_docs[:3]]
    embedder.initialize(lambda: examples, nlp=nlp)
    pairs = embedder.sampler.sample(embedder._batch_features(real_docs[:3]))  # fixed from here on
    assert set(pairs.targets) == {1.0, 0.6, 0.0}
    batch = make_batch(pairs.figures, 2 * SMALL_MODEL["encoder_width"], SMALL_MODEL["image_size"])
    optimizer = Adam(1e-3)
    values = []
    for _ in range(12):
        embeddings, backprop = embedder.model.begin_update(batch)
        value, grad = embedder.get_loss(examples, (embeddings, pairs))
        backprop(embedder.model.ops.asarray2f(grad))
        embedder.finish_update(optimizer)
        values.append(value)
    assert all(numpy.isfinite(values)) and values[0] > 0
    assert values[-1] < values[0]


def test_pair_sampler_targets_follow_the_relations(trained_nlp, relations):
    sampler = PairSampler(relations, ["co_citing"], seed=1)
    embedder = trained_nlp.get_pipe("figure_embedder")
    sampler.add(embedder.sampler.store.values())
    papers = [sampler.store["C02-1050"]]
    pairs = sampler.sample(papers)
    for left, right, target in zip(pairs.left, pairs.right, pairs.targets):
        a, b = pairs.figures[left].paper_id, pairs.figures[right].paper_id
        expected = 1.0 if a == b else 0.6 if relations.kind(a, b) else 0.0
        assert target == expected
    assert sampler.related_papers("C02-1050") == ["C04-1091"]
    assert PairSampler(relations, ["cites"]).related_papers("C02-1050") == []


def test_score_reports_aucs(trained_nlp, real_docs):
    embedder = trained_nlp.get_pipe("figure_embedder")
    docs = [trained_nlp(d.copy()) for d in real_docs]
    scores = embedder.score([Example(d, d) for d in docs])
    assert 0.0 <= scores["figure_same_auc"] <= 1.0
    assert 0.0 <= scores["figure_citing_auc"] <= 1.0


# --------------------------------------------------------------------------- serialisation


def test_to_disk_from_disk_round_trip(trained_nlp, real_docs, tmp_path):
    trained_nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    before = trained_nlp(real_docs[0].copy())._.figure_vectors
    after = loaded(real_docs[0].copy())._.figure_vectors
    assert list(before) == list(after)
    for key in before:
        numpy.testing.assert_allclose(before[key], after[key], atol=1e-5)
    restored = loaded.get_pipe("figure_embedder")
    assert restored.relations.kind("C02-1050", "C04-1091") == "co_citing"
    assert restored.cfg == trained_nlp.get_pipe("figure_embedder").cfg
    embedder = trained_nlp.get_pipe("figure_embedder")
    fresh = make_nlp(embedder.cfg["encoder"]).get_pipe("figure_embedder").from_bytes(embedder.to_bytes())
    numpy.testing.assert_allclose(fresh.predict([real_docs[0]])[0]["fig_0"], before["fig_0"], atol=1e-5)


def test_figure_vectors_survive_docbin_and_json(trained_nlp, real_docs, tmp_path):
    doc = trained_nlp(real_docs[0].copy())
    scholarly_nlp.save_docbin([doc], tmp_path / "docs.spacy")
    (from_bin,) = list(scholarly_nlp.load_docbin(tmp_path / "docs.spacy", trained_nlp.vocab))
    scholarly_nlp.save_json(doc, tmp_path / "doc.json")
    from_json = scholarly_nlp.load_json(tmp_path / "doc.json", trained_nlp.vocab)
    json.dumps(doc._.figure_vectors)
    for copy in (from_bin, from_json):
        assert list(copy._.figure_vectors) == list(doc._.figure_vectors)
        numpy.testing.assert_allclose(copy._.figure_vectors["fig_0"], doc._.figure_vectors["fig_0"], atol=1e-6)


def test_text_cache_round_trip_and_encoder_check(tiny_backbone, tmp_path):
    cache = TextVectorCache(str(tiny_backbone))
    vectors = cache.vectors(["a parser", "a tagger", "a parser"])
    assert vectors.shape == (3, 32) and len(cache) == 2
    numpy.testing.assert_allclose(vectors[0], vectors[2])
    cache.save(tmp_path / "cache.npz")
    other = TextVectorCache(str(tiny_backbone))
    assert other.load(tmp_path / "cache.npz") == 2
    numpy.testing.assert_allclose(other.vectors(["a tagger"])[0], vectors[1])
    assert other._encoder is None  # served from the cache, the encoder never loaded
    with pytest.raises(ScholarlyNLPError, match="encoder"):
        TextVectorCache("all-MiniLM-L6-v2").load(tmp_path / "cache.npz")


def test_wrong_encoder_width_is_a_clear_error(tiny_backbone, real_docs):
    nlp = make_nlp(tiny_backbone, model={**SMALL_MODEL, "encoder_width": 384})
    with pytest.raises(ScholarlyNLPError, match="encoder_width"):
        nlp(real_docs[2].copy())


def test_unknown_loss_is_rejected(tiny_backbone):
    with pytest.raises(ValueError, match="loss"):
        make_nlp(tiny_backbone, loss="hinge")


# --------------------------------------------------------------------------- citation relations


def test_clscisumm_citations_on_real_data():
    folder = shared("clscisumm")
    cites = clscisumm_citations(folder)
    assert "C00-2123" in cites["C02-1050"] and "C00-2123" in cites["C04-1091"]  # train-manual Citance_XML
    assert "C02-1025" in cites["I05-3013"]
    assert "A00-1031" in cites["W00-1326"]  # train-scisummnet citing_sentences.json
    assert not any(name.endswith(".txt") for name in cites)  # only the Citance_XML/*.xml files
    titles = clscisumm_titles(folder)
    assert titles["C02-1025"] == "Named Entity Recognition: A Maximum Entropy Approach Using Global Information"
    pdfs = ["C02-1025", "C02-1050", "C04-1091", "I05-3013", "P05-1045"]
    table = build_relations(cites, pdfs)
    assert table.kind("C02-1050", "C04-1091") == "co_citing"
    assert table.kind("I05-3013", "C02-1025") == "cites"
    assert table.kind("C02-1025", "C02-1050") is None
    assert table.restrict(["C02-1050", "C04-1091"]).pairs() == [("C02-1050", "C04-1091", "co_citing")]


def test_bibliography_titles_give_citations_on_real_tei():
    nlp = scholarly_nlp.blank()
    citing = scholarly_nlp.read(shared("tei", "acl", "D14-1175.tei.xml"), nlp=nlp)
    cited = scholarly_nlp.read(shared("tei", "acl", "P14-1062.tei.xml"), nlp=nlp)
    found = bibliography_citations([citing, cited], {"P14-1062": " ".join(s.text for s in cited.spans["title"])})
    assert found == {"D14-1175": {"P14-1062"}}
    table = corpus_relations([citing, cited])
    assert table.kind("D14-1175", "P14-1062") == "cites"
    assert normalise_title("  Déjà-Vu:  A  Parser! ") == "deja vu a parser"


def test_relation_table_json_round_trip(tmp_path):
    table = RelationTable([("b", "a", "co_citing"), ("a", "b", "cites"), ("c", "a", "co_citing")])
    assert table.kind("a", "b") == "cites"  # the stronger kind wins
    table.save(tmp_path / "relations.json")
    loaded = RelationTable.load(tmp_path / "relations.json")
    assert loaded.pairs() == table.pairs() and loaded.counts() == {"cites": 1, "co_citing": 1}
    assert loaded.related("a", ["co_citing"]) == {"c"}


# --------------------------------------------------------------------------- recommendation


@pytest.fixture(scope="session")
def tei_corpus():
    folder = shared("tei", "acl")
    nlp = scholarly_nlp.blank()
    return [scholarly_nlp.read(path, nlp=nlp) for path in sorted(folder.glob("*.tei.xml"))[:12]]


def test_tfidf_stage_ranks_the_own_papers_figures_above_random_ones(tei_corpus):
    own_share, chance = [], []
    for doc in tei_corpus:
        own = candidate_ids(doc)
        pool = sum(len(candidate_ids(d)) for d in tei_corpus) - 1
        for fig_id in own:
            hits = similar_figures(doc, fig_id, tei_corpus, k=len(own) - 1, same_paper=True)
            assert all((p, f) != (doc._.paper_id, fig_id) for p, f, _ in hits)
            own_share.append(sum(p == doc._.paper_id for p, _, _ in hits) / len(hits))
            chance.append((len(own) - 1) / pool)
    assert numpy.mean(own_share) > 3 * numpy.mean(chance)


def test_rerank_with_trained_embeddings_on_real_data(trained_nlp, real_docs):
    embedder = trained_nlp.get_pipe("figure_embedder")
    docs = [trained_nlp(d.copy()) for d in real_docs]
    pool = sum(len(candidate_ids(d)) for d in docs) - 1
    own_share, chance = [], []
    for doc in docs:
        own = candidate_ids(doc)
        for fig_id in own:
            hits = embedder.similar_figures(doc, fig_id, docs, k=5, same_paper=True)
            assert len(hits) == 5 and [s for _, _, s in hits] == sorted((s for _, _, s in hits), reverse=True)
            own_share.append(sum(p == doc._.paper_id for p, _, _ in hits) / 5)
            chance.append((len(own) - 1) / pool)
    assert numpy.mean(own_share) > 2 * numpy.mean(chance)
    # Weight 0 keeps the TF-IDF order; the embeddings only rerank the TF-IDF candidates.
    query = docs[0]
    tfidf_only = similar_figures(query, "fig_0", docs, k=5, embedder=embedder, weight=0.0)
    plain = similar_figures(query, "fig_0", docs, k=5, weight=0.0)
    assert [h[:2] for h in tfidf_only] == [h[:2] for h in plain]
    narrow = similar_figures(query, "fig_0", docs, k=5, embedder=embedder, n_candidates=2)
    assert {h[:2] for h in narrow} == {h[:2] for h in plain[:2]}


def test_the_query_papers_own_figures_are_not_neighbours_by_default(tei_corpus):
    doc = next(d for d in tei_corpus if len(candidate_ids(d)) >= 2)
    hits = similar_figures(doc, candidate_ids(doc)[0], tei_corpus, k=10)
    assert hits and all(paper != doc._.paper_id for paper, _, _ in hits)


def test_rank_candidates_interpolates_tfidf_and_embeddings():
    query = Candidate("q", "f", "neural parser architecture", numpy.array([1.0, 0.0]))
    candidates = [Candidate("a", "1", "neural parser architecture", numpy.array([0.0, 1.0])),
                  Candidate("b", "1", "neural tagger", numpy.array([1.0, 0.0])),
                  Candidate("q", "f", "neural parser architecture", numpy.array([1.0, 0.0]))]
    assert [i for i, _ in rank_candidates(query, candidates, k=3, weight=0.0)] == [0, 1]
    assert [i for i, _ in rank_candidates(query, candidates, k=3, weight=1.0)] == [1, 0]
    with pytest.raises(ValueError):
        rank_candidates(query, candidates, k=0)


def test_cli_similar_figures(tmp_path):
    from scholarly_nlp import cli as cli_module

    cli_module.get_registry().add_commands(cli_module.cli)
    files = [str(shared("tei", "acl", f"{pid}.tei.xml")) for pid in TEIS]
    runner = CliRunner()
    result = runner.invoke(cli_module.cli, ["similar-figures", files[0], "fig_0", *files, "-k", "3", "--tfidf-only"])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 3 and all(len(line.split("\t")) == 5 for line in lines)
    assert lines[0].startswith("1\t")
    result = runner.invoke(cli_module.cli, ["similar-figures", files[0], "fig_99", *files, "--tfidf-only"])
    assert result.exit_code == 1 and "no figure" in result.output
    both = runner.invoke(cli_module.cli, ["similar-figures", files[0], "fig_0", *files, "--tfidf-only", "--model", "x"])
    assert both.exit_code == 2 and "exclude each other" in both.output


def test_cli_similar_figures_uses_the_shipped_figure_embedder_by_default():
    from scholarly_nlp import cli as cli_module

    assert scholarly_nlp.pipeline_path("scholarly_core") is not None, "pip install -r requirements.txt"
    cli_module.get_registry().add_commands(cli_module.cli)
    files = [str(shared("tei", "acl", f"{pid}.tei.xml")) for pid in TEIS]
    default = CliRunner().invoke(cli_module.cli, ["similar-figures", files[0], "fig_0", *files, "-k", "3"])
    tfidf = CliRunner().invoke(cli_module.cli, ["similar-figures", files[0], "fig_0", *files, "-k", "3", "--tfidf-only"])
    assert default.exit_code == 0, default.output
    scores = lambda result: [line.split("\t")[1] for line in result.output.strip().splitlines()]
    assert scores(default) != scores(tfidf)  # the embeddings reranked


# --------------------------------------------------------------------------- evaluation


def test_tune_threshold_and_accuracy_hand_computed():
    scores = numpy.array([0.9, 0.8, 0.3, 0.4, 0.1, 0.2])
    labels = numpy.array([1, 1, 1, 0, 0, 0])
    threshold = tune_threshold(scores, labels)
    assert threshold == pytest.approx(0.25)  # 5 of 6 right, as with 0.6: ties go to the smaller threshold
    assert accuracy(scores, labels, threshold) == pytest.approx(5 / 6)
    assert tune_threshold(numpy.array([]), numpy.array([])) is None


def test_hybrid_weight_is_the_blend_that_separates_the_tuning_pairs():
    labels = numpy.array([1, 1, 0, 0])
    # TF-IDF alone mixes up pairs 1 and 2, the embedding alone pairs 0 and 3; a blend ranks all four right
    scores = {"tfidf": numpy.array([0.9, 0.2, 0.3, 0.1]), "embedding": numpy.array([0.3, 0.9, 0.1, 0.4])}
    weight = tune_hybrid_weight(scores, labels)
    blended = (1 - weight) * scores["tfidf"] + weight * scores["embedding"]
    assert accuracy(blended, labels, tune_threshold(blended, labels)) == 1.0
    assert weight == pytest.approx(0.2)  # the smallest weight of the grid that separates them: 0.1 does not
    assert accuracy(scores["tfidf"], labels, tune_threshold(scores["tfidf"], labels)) == 0.75
    # a signal that is already perfect keeps the smaller weight (ties go to TF-IDF alone)
    assert tune_hybrid_weight({"tfidf": numpy.array([0.9, 0.8, 0.1, 0.2]), "embedding": scores["embedding"]},
                              labels) == 0.0
    assert tune_hybrid_weight({"tfidf": numpy.array([]), "embedding": numpy.array([])}, numpy.array([])) is None


def test_pair_sets_are_balanced_and_labelled_right():
    pool = [Candidate(p, str(i), "x", None) for i, p in enumerate(["a", "a", "b", "b", "c", "d"])]
    table = RelationTable([("a", "b", "cites"), ("c", "d", "co_citing")])
    sets = build_pair_sets(pool, table, ["cites", "co_citing"])
    for name, pairs in sets.items():
        assert pairs.labels.sum() * 2 == len(pairs)
    same = sets["same"]
    for left, right, label in zip(same.left, same.right, same.labels):
        assert (pool[left].paper_id == pool[right].paper_id) == bool(label)
    citing = sets["citing"]
    assert len(citing) == 2 * min(4 + 1, 13 - 5)
    for left, right, label in zip(citing.left, citing.right, citing.labels):
        assert (table.kind(pool[left].paper_id, pool[right].paper_id) is not None) == bool(label)
    assert len(sets["citing_direct"]) == 2 * 4


def test_recommendation_report_on_a_small_pool():
    pool = [Candidate("a", "1", "parser speed", numpy.array([1.0, 0.0])),
            Candidate("a", "2", "parser accuracy", numpy.array([1.0, 0.0])),
            Candidate("b", "1", "tagger speed", numpy.array([0.0, 1.0])),
            Candidate("b", "2", "tagger accuracy", numpy.array([0.0, 1.0]))]
    report = recommendation(pool, RelationTable(), weight=1.0, relevance="same_paper")
    assert report["n_queries"] == 4
    assert report["tfidf_rerank"]["p@3"] == pytest.approx(1 / 3)  # the one relevant figure ranks first
    assert report["oracle"]["p@3"] == pytest.approx(1 / 3)
    assert 0.0 <= report["tfidf"]["p@3"] <= 1 / 3


def test_evaluate_embedder_end_to_end(trained_nlp, real_docs, relations):
    embedder = trained_nlp.get_pipe("figure_embedder")
    dev, test = real_docs[:3], real_docs[3:]
    report = evaluate_embedder(embedder, dev, test, relations, max_pairs=50)
    assert report["data"]["dev"]["figures_with_image"] > 0
    same = report["pairs"]["same"]
    for method in ("embedding", "tfidf", "hybrid"):
        assert 0.0 <= same[method]["accuracy"] <= 1.0 and same[method]["threshold"] is not None
    assert same["hybrid"]["weight"] in WEIGHT_GRID
    # the blend is tuned on the dev pairs, so there it is at least as accurate as either signal alone
    assert same["hybrid"]["dev_accuracy"] >= max(same["embedding"]["dev_accuracy"], same["tfidf"]["dev_accuracy"])
    assert same["hybrid_vs_tfidf"] is not None
    assert report["pairs"]["citing"]["n_test_pairs"] == 0  # no relation among the test papers
    for relevance in ("same_paper", "same_or_citing"):
        result = report["recommendation"][relevance]
        for method in ("tfidf", "tfidf_rerank", "tfidf_rerank_dev_tuned", "embedding_rerank_only"):
            assert 0.0 <= result[method]["p@3"] <= result["oracle"]["p@3"] + 1e-9
    pool = figure_pool(test, embedder.predict(test))
    assert len(pool) == sum(len(candidate_ids(d)) for d in test)
