"""The abstract sentence role tagger (``sentence_role_tagger``, facet classifier family).

All tests run on the tiny random backbone (``scholarly_nlp.ml.tiny_backbone``) and a few
real CSAbstruct / CSFCube abstracts from ../shared/data.
"""

from __future__ import annotations

import subprocess
import sys

import numpy
import pytest

from conftest import REPO, shared

pytest.importorskip("spacy_transformers")
pytest.importorskip("scholarly_facet_classifier.role_tagger")

from spacy.training import Example  # noqa: E402
from thinc.api import Adam, Model  # noqa: E402

from scholarly_nlp.doc.roles import ROLE_GROUP, ROLES, abstract_sentences  # noqa: E402
from scholarly_nlp.readers.abstracts import (  # noqa: E402
    AbstractRecord,
    abstract_doc,
    read_csabstruct,
    read_csfcube_abstracts,
)

PROJECT = REPO / "projects" / "aspect_embedder"
HIDDEN = 16


@pytest.fixture(scope="module")
def tiny_backbone(tmp_path_factory) -> str:
    """A tiny random BERT with MiniLM's vocabulary (skips without the default backbone)."""
    from scholarly_nlp.ml.backbones import make_tiny_backbone

    try:
        return str(make_tiny_backbone(tmp_path_factory.mktemp("roles") / "tiny"))
    except Exception as exc:  # the default backbone's tokenizer is needed
        pytest.skip(f"no tiny backbone: {exc}")


@pytest.fixture(scope="module")
def csabstruct_train():
    """The first 32 CSAbstruct training abstracts."""
    return read_csabstruct(shared("csabstruct", "train.jsonl"))[:32]


def make_nlp(backbone: str, records, overwrite: bool = False):
    """A blank pipeline with the shared transformer and the role tagger, initialised on ``records``."""
    import scholarly_nlp
    from scholarly_nlp.ml.abstract_spans import shared_transformer_config

    nlp = scholarly_nlp.blank()
    nlp.add_pipe("transformer", config=shared_transformer_config(backbone))
    nlp.add_pipe("sentence_role_tagger", config={"overwrite": overwrite, "model": {"hidden_width": HIDDEN}})
    docs = [abstract_doc(r, nlp) for r in records]
    examples = [Example(d.copy(), d) for d in docs]
    optimizer = nlp.initialize(lambda: examples)
    return nlp, examples, optimizer


@pytest.fixture(scope="module")
def trained(tiny_backbone, csabstruct_train):
    """(nlp, examples, optimizer) on 32 CSAbstruct abstracts, not yet updated."""
    return make_nlp(tiny_backbone, csabstruct_train)


def odd_docs(nlp, record):
    """A full abstract, a one-sentence abstract and a title-only paper (no abstract)."""
    one = AbstractRecord("one", "A title", record.sentences[:1])
    none = AbstractRecord("none", "Only a title here", [])
    return [abstract_doc(record, nlp), abstract_doc(one, nlp), abstract_doc(none, nlp)]


def test_output_shapes(trained, csabstruct_train):
    nlp, _, _ = trained
    docs = odd_docs(nlp, AbstractRecord("x", "", csabstruct_train[0].sentences))
    docs = list(nlp.get_pipe("transformer").pipe(docs))
    probs = nlp.get_pipe("sentence_role_tagger").model.predict(docs)
    n = len(abstract_sentences(docs[0]))
    assert n == len(csabstruct_train[0].sentences)
    assert [tuple(p.shape) for p in probs] == [(n, len(ROLES)), (1, len(ROLES)), (0, len(ROLES))]
    for p in probs[:2]:
        numpy.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-5)


class _Recorder:
    """A fake tok2vec: fixed random token vectors per Doc; records the gradients it gets."""

    width = 6

    def __init__(self):
        self.grads = None
        self.vectors = {}

    def model(self) -> Model:
        def forward(model, docs, is_train):
            out = [self.vectors.setdefault(id(doc), numpy.random.default_rng(len(doc)).normal(
                size=(len(doc), self.width)).astype("float32")) for doc in docs]

            def backprop(d_out):
                self.grads = d_out
                return []

            return out, backprop

        return Model("recorder", forward, dims={"nO": self.width})


def test_backprop_reaches_tok2vec(nlp, csabstruct_train):
    from scholarly_facet_classifier.role_model import SentenceRoleTagger

    recorder = _Recorder()
    model = SentenceRoleTagger(recorder.model(), hidden_width=8, dropout=0.0)
    docs = odd_docs(nlp, AbstractRecord("x", "Some title of the paper", csabstruct_train[1].sentences))
    model.initialize(X=docs)
    rng = numpy.random.default_rng(0)
    # The softmax starts from zero weights (no gradient to its input yet): take one step first.
    probs, backprop = model.begin_update(docs)
    backprop([rng.normal(size=p.shape).astype("float32") for p in probs])
    model.finish_update(Adam(0.05))
    probs, backprop = model.begin_update(docs)
    # The softmax layer takes the gradient of its logits (probs - gold for cross-entropy). With
    # rows that sum to zero, sum(d * log(probs)) has exactly that gradient wrt the logits.
    d_probs = [rng.normal(size=p.shape) for p in probs]
    d_probs = [(d - d.mean(axis=1, keepdims=True)).astype("float32") for d in d_probs]
    backprop(d_probs)
    assert [g.shape for g in recorder.grads] == [(len(d), recorder.width) for d in docs]
    full = docs[0]
    sents = abstract_sentences(full)
    title_end = sents[0].start
    assert title_end > 0 and not recorder.grads[0][:title_end].any()  # title tokens get no gradient
    assert all(recorder.grads[0][s.start:s.end].any() for s in sents)
    assert not recorder.grads[2].any()  # no abstract, no gradient

    # The gradient reaching a token vector matches a finite difference of sum(d * log(probs)).
    def objective():
        out = model.predict(docs)
        return float(sum((numpy.log(o.astype("float64")) * d).sum() for o, d in zip(out, d_probs)))

    tokvecs = recorder.vectors[id(full)]
    i, j, eps = sents[1].start, 2, 1e-2
    base = tokvecs[i, j]
    tokvecs[i, j] = base + eps
    up = objective()
    tokvecs[i, j] = base - eps
    down = objective()
    tokvecs[i, j] = base
    assert recorder.grads[0][i, j] == pytest.approx((up - down) / (2 * eps), rel=0.05, abs=1e-4)


def test_pipe_sets_roles_on_every_sentence(trained, csabstruct_train):
    nlp, _, _ = trained
    record = AbstractRecord("p", "A title", csabstruct_train[2].sentences)
    doc = nlp(abstract_doc(record, nlp))  # no labels: the tagger writes the roles
    sents = abstract_sentences(doc)
    assert sents and all(s._.role in ROLES for s in sents)
    assert len(doc.spans[ROLE_GROUP]) == len(sents) == len(doc._.role_scores)
    for row, span in zip(doc._.role_scores, doc.spans[ROLE_GROUP]):
        assert set(row) == set(ROLES) and sum(row.values()) == pytest.approx(1.0, rel=1e-4)
        assert span.label_ == max(row, key=row.get)
    empty = nlp(abstract_doc(AbstractRecord("t", "Title only", []), nlp))
    assert empty._.role_scores == [] and not empty.spans.get(ROLE_GROUP)


def test_overwrite_false_keeps_shipped_roles(trained):
    nlp, _, _ = trained
    record = read_csfcube_abstracts(shared("csfcube", "abstracts-csfcube-preds.jsonl"))[0]
    assert record.roles
    doc = nlp(abstract_doc(record, nlp))
    assert [s.label_ for s in doc.spans[ROLE_GROUP]] == [r for s, r in zip(record.sentences, record.roles)
                                                           if s.strip()]
    assert len(doc._.role_scores) == len(doc.spans[ROLE_GROUP])  # the tagger's opinion is still there
    tagger = nlp.get_pipe("sentence_role_tagger")
    tagger.cfg["overwrite"] = True
    try:
        doc = nlp(abstract_doc(record, nlp))
    finally:
        tagger.cfg["overwrite"] = False
    assert [s.label_ for s in doc.spans[ROLE_GROUP]] == [max(r, key=r.get) for r in doc._.role_scores]


def test_update_reduces_loss(tiny_backbone, csabstruct_train):
    nlp, examples, optimizer = make_nlp(tiny_backbone, csabstruct_train)
    optimizer.learn_rate = 0.01
    tagger = nlp.get_pipe("sentence_role_tagger")
    # Frozen transformer, as in configs/roles_frozen.cfg: it annotates once, the listener reads trf_data.
    for eg in examples:
        nlp.get_pipe("transformer")(eg.predicted)
    losses = []
    for _ in range(8):
        step = {}
        tagger.update(examples, sgd=optimizer, losses=step)
        losses.append(step["sentence_role_tagger"])
    assert losses[-1] < losses[0] - 0.05
    scores = nlp.get_pipe("sentence_role_tagger").score(
        [Example(tagger(eg.predicted), eg.reference) for eg in examples])
    assert 0.0 <= scores["roles_macro_f"] <= 1.0 and scores["roles_acc"] > 0.2


def test_unfrozen_update_trains_the_transformer(tiny_backbone, csabstruct_train):
    nlp, examples, optimizer = make_nlp(tiny_backbone, csabstruct_train[:4])
    torch_model = next(node for node in nlp.get_pipe("transformer").model.walk() if node.shims).shims[0]._model
    before = {k: v.detach().clone() for k, v in torch_model.named_parameters()}
    nlp.update(examples, sgd=optimizer)  # the softmax starts at zero: step 1 trains only the tagger
    nlp.update(examples, sgd=optimizer)
    after = dict(torch_model.named_parameters())
    assert any(not (before[k] == after[k]).all() for k in before)


def test_to_disk_round_trip(trained, csabstruct_train, tmp_path):
    import spacy

    nlp, _, _ = trained
    records = [AbstractRecord(r.paper_id, "A title", r.sentences) for r in csabstruct_train[3:6]]
    first = [d._.role_scores for d in nlp.pipe([abstract_doc(r, nlp) for r in records])]
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    second = [d._.role_scores for d in loaded.pipe([abstract_doc(r, loaded) for r in records])]
    assert len(first) == len(second) == 3
    for a, b in zip(first, second):
        numpy.testing.assert_allclose([[row[r] for r in ROLES] for row in a],
                                      [[row[r] for r in ROLES] for row in b], rtol=1e-5, atol=1e-6)


def test_role_metrics():
    from scholarly_facet_classifier.role_tagger import cohen_kappa, role_metrics

    gold = ["background", "method", "method", "result", "other"]
    pred = ["background", "method", "result", "result", "result"]
    m = role_metrics(gold, pred)
    assert m["accuracy"] == pytest.approx(0.6)
    assert m["per_label"]["method"]["f"] == pytest.approx(2 / 3)
    assert m["per_label"]["result"]["f"] == pytest.approx(0.5)
    # objective never occurs: left out of the macro average (background 1, method 2/3, result 1/2, other 0)
    assert m["macro_f1"] == pytest.approx((1 + 2 / 3 + 0.5 + 0) / 4)
    assert cohen_kappa(gold, gold) == pytest.approx(1.0)
    assert -1.0 <= m["kappa"] < 1.0


@pytest.mark.slow
def test_spacy_train_roles_config(tiny_backbone, tmp_path):
    import spacy

    config = PROJECT / "configs" / "roles.cfg"
    script = PROJECT / "scripts" / "roles_corpus.py"
    if not config.exists() or not script.exists():
        pytest.skip("projects/aspect_embedder role files not present")
    corpus = tmp_path / "roles.spacy"
    subprocess.run([sys.executable, str(script), str(shared("csabstruct", "dev.jsonl")), str(corpus),
                    "--limit", "8"], check=True, capture_output=True)
    result = subprocess.run(
        [sys.executable, "-m", "spacy", "train", str(config), "--output", str(tmp_path / "out"),
         "--paths.backbone", tiny_backbone, "--paths.train", str(corpus), "--paths.dev", str(corpus),
         "--training.max_steps", "4", "--training.max_epochs", "0", "--training.eval_frequency", "2"],
        capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    nlp = spacy.load(tmp_path / "out" / "model-best")
    assert nlp.pipe_names == ["transformer", "sentence_role_tagger"]
    record = read_csabstruct(shared("csabstruct", "dev.jsonl"))[0]
    doc = nlp(abstract_doc(AbstractRecord("d", "", record.sentences), nlp))
    assert len(doc.spans[ROLE_GROUP]) == len(abstract_sentences(doc)) > 0


@pytest.fixture
def roles_corpus():
    """The project's ``scripts/roles_corpus.py`` as a module."""
    import importlib.util

    script = PROJECT / "scripts" / "roles_corpus.py"
    if not script.exists():
        pytest.skip("projects/aspect_embedder/scripts/roles_corpus.py not present")
    spec = importlib.util.spec_from_file_location("roles_corpus", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_roles_corpus_keeps_roles(tmp_path, roles_corpus):
    import scholarly_nlp

    out = tmp_path / "c.spacy"
    assert roles_corpus.main([str(shared("csabstruct", "dev.jsonl")), str(out), "--limit", "3"]) == 0
    nlp = scholarly_nlp.blank()
    docs = list(scholarly_nlp.load_docbin(out, nlp.vocab))
    records = read_csabstruct(shared("csabstruct", "dev.jsonl"))[:3]
    assert len(docs) == 3
    for doc, record in zip(docs, records):
        assert [s._.role for s in abstract_sentences(doc)] == record.roles


def test_roles_corpus_adds_silver_abstracts_but_none_sharing_a_sentence_with_dev(tmp_path, roles_corpus):
    import json

    import scholarly_nlp
    from scholarly_nlp.readers import read_csfcube_abstracts

    # Four real CSFCube lines, then a fifth whose abstract carries one real dev sentence.
    csfcube_lines = shared("csfcube", "abstracts-csfcube-preds.jsonl").read_text().splitlines()[:5]
    dev = read_csabstruct(shared("csabstruct", "dev.jsonl"))
    leaking = json.loads(csfcube_lines[4])
    leaking["abstract"][1] = "  " + dev[10].sentences[2].upper() + " "
    silver = tmp_path / "silver.jsonl"
    silver.write_text("\n".join(csfcube_lines[:4] + [json.dumps(leaking)]) + "\n")
    out = tmp_path / "c.spacy"
    argv = [str(shared("csabstruct", "train.jsonl")), str(out), "--limit", "2", "--silver", str(silver),
            "--exclude", str(shared("csabstruct", "dev.jsonl"))]
    assert roles_corpus.main(argv) == 0
    docs = list(scholarly_nlp.load_docbin(out, scholarly_nlp.blank().vocab))
    gold = read_csabstruct(shared("csabstruct", "train.jsonl"))[:2]
    expected = [r.roles for r in gold] + [r.roles for r in read_csfcube_abstracts(silver)[:4]]
    assert [[s._.role for s in abstract_sentences(doc)] for doc in docs] == expected
    assert any(role == "objective" for roles in expected[2:] for role in roles)


def test_init_frozen_transformer_callback(tiny_backbone):
    import scholarly_nlp
    from scholarly_facet_classifier.role_tagger import init_frozen_transformer
    from scholarly_nlp.ml.abstract_spans import shared_transformer_config

    nlp = scholarly_nlp.blank()
    nlp.add_pipe("transformer", config=shared_transformer_config(tiny_backbone))
    nlp.add_pipe("sentence_role_tagger", config={"model": {"hidden_width": HIDDEN}})
    nlp._link_components()
    trf = nlp.get_pipe("transformer")
    assert not trf.model.attrs["has_transformer"]
    init_frozen_transformer("transformer")(nlp)
    assert trf.model.attrs["has_transformer"]
    assert [listener.get_dim("nO") for listener in trf.listeners] == [32]
