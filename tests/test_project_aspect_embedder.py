"""The aspect_embedder Weasel project: the evaluate interface on a CSFCube directory
(official ranked pools, metrics per query aspect and all, baselines), bad input, the smoke
workflow, and the similar command with the pipeline the smoke workflow trains."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
import torch
from click.testing import CliRunner
from spacy.training import Example

import scholarly_nlp
from scholarly_nlp import QUERY_ASPECTS
from scholarly_nlp.cli import cli
from scholarly_nlp.ml.abstract_spans import shared_transformer_config
from scholarly_nlp.ml.backbones import make_tiny_backbone
from scholarly_nlp.ml.listener import transformer_listener_config

from conftest import REPO, shared

PROJECT = REPO / "projects" / "aspect_embedder"
SCRIPTS = PROJECT / "scripts"
OUTPUTS = ("corpus", "training", "metrics", "output", "smoke", "assets", "__pycache__", "project.lock")
METRICS = ("MAP", "NDCG%20", "NDCG@20", "MRR", "R@20")


def run(args, cwd, timeout=900):
    """Run a command; return the CompletedProcess (text output)."""
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def mini_csfcube(tmp_path_factory):
    """Two queries per query aspect with 30-candidate pools, in the published layout."""
    out = tmp_path_factory.mktemp("csfcube") / "mini"
    proc = run([sys.executable, str(SCRIPTS / "mini_csfcube.py"), str(shared("csfcube")), str(out)], cwd=out.parent)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out


@pytest.fixture(scope="module")
def tiny_pipeline(tmp_path_factory):
    """transformer (tiny random backbone) + sentence_role_tagger + aspect_embedder, saved."""
    root = tmp_path_factory.mktemp("aspect_pipeline")
    backbone = make_tiny_backbone(root / "tiny")
    torch.manual_seed(0)
    nlp = scholarly_nlp.blank()
    nlp.add_pipe("transformer", config=shared_transformer_config(str(backbone)))
    listener = transformer_listener_config()
    nlp.add_pipe("sentence_role_tagger", config={"model": {"@architectures": "scholarly_facet_classifier.SentenceRoleTagger.v1",
                                                           "tok2vec": listener}})
    nlp.add_pipe("aspect_embedder", config={"model": {"@architectures": "scholarly_aspect_embedder.AttentionAspectPooler.v1",
                                                      "width": 32, "tok2vec": listener}})
    records = scholarly_nlp.readers.read_csabstruct(shared("csabstruct", "dev.jsonl"))[:4]
    docs = [scholarly_nlp.readers.abstract_doc(r, nlp) for r in records]
    nlp.initialize(lambda: [Example(d.copy(), d) for d in docs])
    nlp.to_disk(root / "model")
    return root / "model"


def test_evaluate_writes_official_pools_and_metrics_per_aspect_and_all(tmp_path, mini_csfcube, tiny_pipeline):
    out, metrics_path = tmp_path / "out", tmp_path / "metrics" / "csfcube.json"
    proc = run([sys.executable, str(SCRIPTS / "evaluate.py"), str(tiny_pipeline), str(mini_csfcube), str(out),
                str(metrics_path), "--baselines", "tfidf,bm25"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    for aspect in QUERY_ASPECTS:
        anns = json.loads((mini_csfcube / f"test-pid2anns-csfcube-{aspect}.json").read_text())
        pools = json.loads((out / f"test-pid2pool-csfcube-aspect_embedder-{aspect}-ranked.json").read_text())
        assert set(pools) == set(anns)
        for qpid, ranked in pools.items():
            assert sorted(c for c, _ in ranked) == sorted(anns[qpid]["cands"])
            distances = [d for _, d in ranked]
            assert distances == sorted(distances)
        assert (out / "baselines" / f"test-pid2pool-csfcube-bm25-{aspect}-ranked.json").exists()
    metrics = json.loads(metrics_path.read_text())
    baselines = [metrics["baselines"][b]["all"] for b in ("tfidf", "bm25")]
    for block in [metrics[a] for a in QUERY_ASPECTS + ("all",)] + baselines:
        assert set(METRICS) <= set(block) and all(0.0 <= block[m] <= 100.0 for m in METRICS)
    assert metrics["all"]["num_queries"] == sum(metrics[a]["num_queries"] for a in QUERY_ASPECTS) == 6
    assert metrics["folds"]["all"]["fold1_dev"]["num_queries"] == 6


def test_evaluate_bad_input_is_one_line(tmp_path, mini_csfcube, tiny_pipeline):
    not_csfcube = run([sys.executable, str(SCRIPTS / "evaluate.py"), str(tiny_pipeline), str(tmp_path),
                       str(tmp_path / "o"), str(tmp_path / "m.json")], cwd=tmp_path)
    assert not_csfcube.returncode != 0 and "Traceback" not in not_csfcube.stderr
    assert "not a CSFCube directory" in not_csfcube.stderr
    no_model = run([sys.executable, str(SCRIPTS / "evaluate.py"), str(tmp_path / "missing"), str(mini_csfcube),
                    str(tmp_path / "o"), str(tmp_path / "m.json")], cwd=tmp_path)
    assert no_model.returncode != 0 and "Traceback" not in no_model.stderr
    assert "no trained pipeline" in no_model.stderr


def test_evaluate_roles_interface_scores_a_csabstruct_format_file(tmp_path, mini_csfcube, tiny_pipeline):
    """weasel run evaluate-roles . --vars.csabstruct_file FILE --vars.output_dir DIR: top-level
    accuracy and macro-F1 in metrics/roles.json over exactly that file's sentences, whose
    predictions land in the output folder; the CSFCube agreement is kept."""
    project_dir = tmp_path / "project"
    project_dir.mkdir()
    shutil.copy(PROJECT / "project.yml", project_dir / "project.yml")
    shutil.copytree(SCRIPTS, project_dir / "scripts")
    lines = shared("csabstruct", "dev.jsonl").read_text(encoding="utf-8").splitlines()[:3]
    held_back = tmp_path / "test.jsonl"
    held_back.write_text("\n".join(lines) + "\n", encoding="utf-8")
    n_sentences = sum(len(json.loads(line)["sentences"]) for line in lines)
    proc = run([sys.executable, "-m", "weasel", "run", "evaluate-roles", str(project_dir),
                "--vars.model", str(tiny_pipeline), "--vars.csabstruct_file", str(held_back),
                "--vars.output_dir", str(tmp_path / "out"), "--vars.csfcube_dir", str(mini_csfcube),
                "--vars.csabstruct_dir", str(shared("csabstruct"))], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    metrics = json.loads((project_dir / "metrics" / "roles.json").read_text())
    rows = [json.loads(line) for line in (tmp_path / "out" / "roles_predictions.jsonl").read_text().splitlines()]
    assert metrics["n_sentences"] == len(rows) == n_sentences
    assert metrics["csabstruct_file"] == str(held_back)
    assert metrics["accuracy"] == pytest.approx(sum(r["gold"] == r["predicted"] for r in rows) / len(rows))
    assert 0.0 <= metrics["macro_f1"] <= 1.0 and metrics["macro_f1"] == metrics["csabstruct_dev"]["macro_f1"]
    assert metrics["csfcube_agreement"]["docs"] > 0
    # the baselines, fitted on CSAbstruct train, score the same sentences; the tagger is tested
    # against each by resampling the 3 abstracts
    assert set(metrics["baselines"]) == set(metrics["vs_baselines"]) == {"position", "tfidf_position"}
    for name, baseline in metrics["baselines"].items():
        assert baseline["n"] == n_sentences and baseline["n_train_abstracts"] == 1668
        test = metrics["vs_baselines"][name]
        assert test["n_items"] == 3
        for metric in ("accuracy", "macro_f1"):
            assert test[metric]["delta"] == pytest.approx(metrics[metric] - baseline[metric])
        assert f"sentence_role_tagger - {name}: accuracy " in proc.stdout


def load_evaluate_roles():
    """scripts/evaluate_roles.py as a module of its own name (project scripts share names)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("aspect_project_evaluate_roles", SCRIPTS / "evaluate_roles.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_role_baselines_skip_blank_sentences_and_an_unreadable_training_file(tmp_path):
    """The baselines tag the sentences the tagger tags (abstract_doc drops blank ones); without
    their training file they are skipped and the tagger's own numbers stand."""
    from scholarly_nlp.readers import AbstractRecord, read_csabstruct

    evaluate_roles = load_evaluate_roles()
    records = read_csabstruct(shared("csabstruct", "dev.jsonl"))[:4]
    first = records[0]
    records[0] = AbstractRecord(first.paper_id, first.title, first.sentences[:1] + ["  "] + first.sentences[1:],
                                first.roles[:1] + ["other"] + first.roles[1:])
    rows = [{"paper_id": r.paper_id, "sentence": i, "gold": role, "predicted": role}  # a perfect tagger
            for r in records for i, role in enumerate(role for s, role in zip(r.sentences, r.roles) if s.strip())]
    baselines, versus = evaluate_roles.baseline_report(rows, records, ["position"], shared("csabstruct", "train.jsonl"))
    assert baselines["position"]["n"] == len(rows) == sum(len(r.sentences) for r in records) - 1
    assert versus["position"]["n_items"] == 4
    assert versus["position"]["accuracy"]["delta"] == pytest.approx(1.0 - baselines["position"]["accuracy"])
    baselines, versus = evaluate_roles.baseline_report(rows, records, ["position"], tmp_path / "missing.jsonl")
    assert "cannot read the baselines' training file" in baselines["position"]["skipped"]
    assert "skipped" in versus["position"]


@pytest.mark.slow
def test_smoke_workflow_and_similar_with_its_model(tmp_path):
    project = tmp_path / "aspect_embedder"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns(*OUTPUTS))
    proc = run([sys.executable, "-m", "weasel", "run", "smoke", str(project),
                f"--vars.csfcube_dir={shared('csfcube')}", f"--vars.csabstruct_dir={shared('csabstruct')}",
                f"--vars.scisummnet_dir={shared('clscisumm', 'train-scisummnet')}"], cwd=tmp_path, timeout=1500)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    metrics = json.loads((project / "smoke" / "metrics" / "csfcube.json").read_text())
    assert metrics["all"]["num_queries"] == 6 and set(metrics["baselines"]) == {"tfidf", "bm25"}
    assert set(metrics["vs_baselines"]) == {"tfidf", "bm25"}
    for name, test in metrics["vs_baselines"].items():  # the bootstrap is over the same 6 query-aspect pairs
        assert test["n_queries"] == 6 and test["ci_low"] <= test["delta"] <= test["ci_high"]
        assert test["delta"] == pytest.approx(metrics["all"]["MAP"] - metrics["baselines"][name]["all"]["MAP"], abs=0.02)
    log = json.loads((project / "smoke" / "training" / "aspect-model" / "train_log.json").read_text())
    assert log["pairs"] == 16 and [e["epoch"] for e in log["log"]] == [0, 1]
    # a fixed schedule: the last epoch is kept whatever the dev fold says; a second seed is only reported
    assert log["keep"] == "last" and log["kept_epoch"] == 1 and set(log["seeds"]) == {"0", "1"}
    spread = log["seed_spread"]["mean"]
    assert len(spread["values"]) == 2 and spread["std"] >= 0
    assert spread["values"][1] == log["log"][1]["dev"]["mean"]["MAP"]  # seed 0, the saved head, trains last
    model = project / "smoke" / "training" / "aspect-model"
    corpus = project / "smoke" / "csfcube" / "abstracts-csfcube-preds.jsonl"
    query = json.loads((project / "smoke" / "csfcube" / "test-pid2anns-csfcube-method.json").read_text())
    qpid = next(iter(query))
    scholarly_nlp.get_registry().add_commands(cli)  # ``similar`` is the aspect embedder plugin's command
    result = CliRunner().invoke(cli, ["similar", qpid, str(corpus), "--aspect", "method", "-k", "3", "--model",
                                      str(model), "--json"])
    assert result.exit_code == 0, result.output
    hits = [json.loads(line) for line in result.output.splitlines() if line.startswith("{")]
    assert len(hits) == 3 and qpid not in {h["paper_id"] for h in hits}
    assert all(h["explanation"]["query_sentence"] and "method" in h["aspect_scores"] for h in hits)


def test_holdout_split_of_csabstruct_train_is_seeded_disjoint_and_complete(tmp_path):
    """The selection split that role-tagger recipes are chosen on (never dev): real CSAbstruct train."""
    source = shared("csabstruct", "train.jsonl")
    records = [line for line in source.read_text(encoding="utf8").splitlines() if line.strip()]
    outputs = []
    for name in ("a", "b"):
        proc = run([sys.executable, str(SCRIPTS / "holdout_split.py"), str(source), str(tmp_path / name),
                    "--fraction", "0.15", "--seed", "19"], cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-2000:]
        outputs.append({part: (tmp_path / name / f"{part}.jsonl").read_text(encoding="utf8").splitlines()
                        for part in ("train", "heldout")})
    first, second = outputs
    assert first == second  # same input, fraction and seed: the same split
    assert len(first["heldout"]) == round(0.15 * len(records)) == 250
    assert not set(first["train"]) & set(first["heldout"])
    assert sorted(first["train"] + first["heldout"]) == sorted(records)
    assert first["train"] == [r for r in records if r in set(first["train"])]  # input order kept
    assert first["heldout"] == [r for r in records if r in set(first["heldout"])]
    other = run([sys.executable, str(SCRIPTS / "holdout_split.py"), str(source), str(tmp_path / "c"),
                 "--fraction", "0.15", "--seed", "20"], cwd=tmp_path)
    assert other.returncode == 0
    assert (tmp_path / "c" / "heldout.jsonl").read_text(encoding="utf8").splitlines() != first["heldout"]


def test_holdout_split_refuses_a_fraction_it_cannot_honour(tmp_path):
    """A fraction outside (0, 1) or a file too small to split is one clear line naming the file."""
    source = tmp_path / "one.jsonl"
    source.write_text('{"sentences": ["x"], "labels": ["background_label"]}\n', encoding="utf8")
    for fraction in ("0", "1.5", "0.15", "0.9"):  # 0.15 and 0.9 of one record: none or all held out
        proc = run([sys.executable, str(SCRIPTS / "holdout_split.py"), str(source), str(tmp_path / "out"),
                    "--fraction", fraction], cwd=tmp_path)
        assert proc.returncode == 1
        assert proc.stderr.startswith(str(source)) and len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_holdout_split_keeps_records_whole_and_drops_blank_lines(tmp_path):
    """One record per newline: blank lines, CRLF and a missing final newline change nothing, and a
    record holding a raw U+2028 (valid JSON) stays one record."""
    records = [json.dumps({"sentences": [f"Sentence {i}\u2028continued."], "labels": ["method_label"]},
                          ensure_ascii=False) for i in range(12)]
    assert "\u2028" in records[0]
    layouts = {"plain": "\n".join(records) + "\n", "crlf_blank": "\r\n".join(records[:6]) + "\r\n\r\n  \r\n"
               + "\r\n".join(records[6:])}
    outputs = {}
    for name, text in layouts.items():
        source = tmp_path / f"{name}.jsonl"
        source.write_text(text, encoding="utf8")
        proc = run([sys.executable, str(SCRIPTS / "holdout_split.py"), str(source), str(tmp_path / name),
                    "--fraction", "0.25", "--seed", "3"], cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-2000:]
        outputs[name] = [(tmp_path / name / f"{part}.jsonl").read_bytes() for part in ("train", "heldout")]
    assert outputs["plain"] == outputs["crlf_blank"]
    train, heldout = (part.decode("utf8").split("\n")[:-1] for part in outputs["plain"])
    assert len(heldout) == 3 and len(train) == 9
    assert sorted(train + heldout) == sorted(records)
    assert all(json.loads(line)["labels"] == ["method_label"] for line in train + heldout)


def test_aspect_pairs_adds_the_abstracts_of_papers_cited_by_one_sentence_as_a_group(tmp_path):
    """--cocitations: A00-2004 and P01-1064 are cited by one sentence of one citing paper in
    ScisummNet (real folders); A00-1031 is not co-cited with either, so it is in no co-citation group."""
    source = shared("clscisumm", "train-scisummnet")
    corpus = tmp_path / "scisummnet"
    corpus.mkdir()
    for paper in ("A00-2004", "P01-1064", "A00-1031"):
        shutil.copytree(source / paper, corpus / paper)
    queries = tmp_path / "no_queries.csv"
    out = tmp_path / "pairs.spacy"
    proc = run([sys.executable, str(SCRIPTS / "aspect_pairs.py"), str(corpus), str(queries), str(out),
                "--cocitations"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "3 pairs written" in proc.stdout and "1 co-cited pairs added" in proc.stdout
    nlp = scholarly_nlp.blank()
    docs = list(scholarly_nlp.load_docbin(out, nlp.vocab))
    groups = [doc._.paper_meta["aspect_group"] for doc in docs]
    assert groups.count("cocited:A00-2004+P01-1064") == 2
    cocited = [doc for doc in docs if doc._.paper_meta["aspect_group"].startswith("cocited:")]
    own = {doc._.paper_id: doc.text for doc in docs if doc._.paper_meta["aspect_group"] in ("A00-2004", "P01-1064")
           and not doc._.paper_id.endswith("#citances")}
    # The co-citation group holds the two papers' own title + abstract Docs, not their citances.
    assert sorted(doc._.paper_id for doc in cocited) == ["A00-2004", "P01-1064"]
    assert "A00-1031" in groups and not any("A00-1031" in g for g in groups if g.startswith("cocited:"))
    assert all(doc.text == own[doc._.paper_id] for doc in cocited)

    plain = tmp_path / "plain.spacy"
    proc = run([sys.executable, str(SCRIPTS / "aspect_pairs.py"), str(corpus), str(queries), str(plain)], cwd=tmp_path)
    assert proc.returncode == 0 and "co-cited" not in proc.stdout
    plain_docs = list(scholarly_nlp.load_docbin(plain, nlp.vocab))
    assert len(plain_docs) == 6 and not any(doc._.paper_meta["aspect_group"].startswith("cocited:") for doc in plain_docs)
    # Each citances Doc names the paper it is a view of, so that paper is never its negative.
    papers = ("A00-1031", "A00-2004", "P01-1064")
    assert sorted((doc._.paper_id, doc._.paper_meta.get("aspect_paper")) for doc in plain_docs) == sorted(
        [(paper, None) for paper in papers] + [(f"{paper}#citances", paper) for paper in papers])
    assert not any("aspect_group_aspects" in doc._.paper_meta for doc in docs + plain_docs)

    # --cocitation-facets: the shipped facet classifier reads the co-citing sentence ("In this paper,
    # we selected for comparison three systems ...: TextTiling, C99 (Choi, 2000) and TextSeg ...") as
    # Method, so the group teaches the method aspect only; the papers' own pairs stay unrestricted.
    # (This follows the shipped classifier: retraining it may change the facet.)
    faceted = tmp_path / "faceted.spacy"
    proc = run([sys.executable, str(SCRIPTS / "aspect_pairs.py"), str(corpus), str(queries), str(faceted),
                "--cocitations", "--cocitation-facets", "scholarly_core"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "aspects taught: method 1; 0 left out" in proc.stdout
    found = sorted((doc._.paper_meta["aspect_group"], doc._.paper_id,
                    list(doc._.paper_meta.get("aspect_group_aspects") or []) or None)
                   for doc in scholarly_nlp.load_docbin(faceted, nlp.vocab))
    assert found == sorted([(paper, paper, None) for paper in papers]
                           + [(paper, f"{paper}#citances", None) for paper in papers]
                           + [("cocited:A00-2004+P01-1064", paper, ["method"]) for paper in ("A00-2004", "P01-1064")])
    proc = run([sys.executable, str(SCRIPTS / "aspect_pairs.py"), str(corpus), str(queries), str(faceted),
                "--cocitation-facets", "scholarly_core"], cwd=tmp_path)
    assert proc.returncode != 0 and "--cocitation-facets needs --cocitations" in proc.stderr
    assert len(list(scholarly_nlp.load_docbin(plain, nlp.vocab))) == 6
