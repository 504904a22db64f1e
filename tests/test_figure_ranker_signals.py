"""The figure ranker's text signals (mentions, referring paragraphs) and their rank fusion,
on real ACL TEI papers and on small papers built to isolate one behaviour."""

from __future__ import annotations

import numpy
import pytest
import spacy

import scholarly_nlp
from scholarly_nlp import Block, FigureInfo, InlineRef, Paper, paper_to_doc
from scholarly_figure_ranker.signals import (
    DEFAULT_SIGNALS,
    SIGNALS,
    abstract_vector,
    caption_dense_similarity,
    context_similarity,
    fuse_ranks,
    mention_counts,
    referring_paragraphs,
    signal_values,
)
from scholarly_figure_ranker.texts import abstract_sentences, caption_text

from conftest import shared
from test_figure_ranker import PAPERS, make_ranker_nlp, ranker_nlp, real_docs, tiny_backbone, tiny_encoder  # noqa: F401 (fixtures)


def test_mentions_and_referring_paragraphs_of_a_real_paper(real_docs):  # noqa: F811
    doc = real_docs[0]  # D14-1205: its four figures are referred to 1, 2, 1 and 0 times
    figures = [f for f in doc._.figures if f.kind == "figure"]
    assert list(mention_counts(figures).values()) == [1.0, 2.0, 1.0, 0.0]
    for figure in figures:
        paragraphs = referring_paragraphs(doc, figure)
        assert len(paragraphs) <= len(figure.mentions)
        for mention in figure.mentions:
            assert any(mention.text in text for text in paragraphs)
    similarity = context_similarity(doc, figures, abstract_sentences(doc))
    assert similarity[figures[3].id] == 0.0  # never referred to
    assert all(0.0 < similarity[f.id] <= 1.0 for f in figures[:3])


def paper_with_discussed_figures(abstract: str, paragraphs: list[tuple[str, str]]) -> Paper:
    """A paper whose body paragraphs each refer to one figure: (text with "Figure N", figure id)."""
    blocks = [Block("title", "A paper"), Block("abstract", abstract)]
    for text, figure_id in paragraphs:
        label = "Figure " + str(int(figure_id[-1]) + 1)
        start = text.index(label)
        blocks.append(Block("paragraph", text, refs=[InlineRef(start, start + len(label), "figure", figure_id)]))
    figures = [FigureInfo(id=f"fig_{i}", kind="figure", label=str(i + 1)) for i in range(3)]
    blocks += [Block("caption", f"Figure {i + 1}: Results.", figure_id=f"fig_{i}") for i in range(3)]
    return Paper(paper_id="built", source="test", reader="test", blocks=blocks, figures=figures)


def test_context_prefers_the_figure_whose_paragraph_shares_the_abstract_words(ranker_nlp):  # noqa: F811
    doc = paper_to_doc(paper_with_discussed_figures(
        "We translate chemical reaction diagrams into reaction graphs.",
        [("Training the reaction model took two hours, as Figure 1 shows.", "fig_0"),
         ("Figure 2 shows a chemical reaction diagram and the reaction graph we translate it into.", "fig_1"),
         ("Figure 2 also shows the graph's atoms.", "fig_1")]), ranker_nlp)
    figures = list(doc._.figures)
    assert mention_counts(figures) == {"fig_0": 1.0, "fig_1": 2.0, "fig_2": 0.0}
    similarity = context_similarity(doc, figures, abstract_sentences(doc))
    assert similarity["fig_1"] > similarity["fig_0"] and similarity["fig_2"] == 0.0


def test_fuse_ranks_hand_computed_with_shared_ranks_for_ties():
    signals = {"a": {"x": 3.0, "y": 2.0, "z": 1.0}, "b": {"x": 0.0, "y": 0.0, "z": 5.0}}
    fused = fuse_ranks(signals, ["x", "y", "z"])
    # b ranks z first and ties x and y, who share the average of ranks 2 and 3.
    assert fused == pytest.approx({"x": 1 / 61 + 1 / 62.5, "y": 1 / 62 + 1 / 62.5, "z": 1 / 63 + 1 / 61})
    flat = fuse_ranks({"a": {"x": 1.0, "y": 1.0}}, ["x", "y"])
    assert flat["x"] == flat["y"]  # a signal that cannot tell figures apart favours none


def test_component_fuses_its_signals_and_keeps_them(ranker_nlp, real_docs, tiny_backbone):  # noqa: F811
    assert ranker_nlp.get_pipe("figure_ranker").cfg["signals"] == list(DEFAULT_SIGNALS)  # the default
    caption_only = make_ranker_nlp(tiny_backbone, signals=["caption"])  # the same seeded head
    for paper_id, doc in zip(PAPERS, real_docs):
        ranker_nlp(doc)
        signals = doc._.figure_signals
        captioned = [f.id for f in doc._.figures if f.kind == "figure" and caption_text(f)]
        assert sorted(signals) == sorted(doc._.figure_scores) == sorted(captioned)
        by_signal = {name: {fid: values[name] for fid, values in signals.items()} for name in DEFAULT_SIGNALS}
        assert doc._.figure_scores == pytest.approx(fuse_ranks(by_signal, captioned))
        assert by_signal["mentions"] == {f.id: float(len(f.mentions)) for f in doc._.figures if f.id in signals}
        figures = {f["id"]: f for f in ranker_nlp.get_pipe("figure_ranker").analysis(doc)["figures"]}
        assert all(figures[fid]["signals"] == signals[fid] for fid in captioned)

        alone = caption_only(scholarly_nlp.read(shared("tei", "acl", f"{paper_id}.tei.xml"), nlp=caption_only))
        assert alone._.figure_scores == pytest.approx(by_signal["caption"])  # the cross-encoder alone
        assert set(next(iter(alone._.figure_signals.values()))) == {"caption"}


def test_every_signal_fuses_when_the_config_names_them(tiny_backbone, real_docs):  # noqa: F811
    everything = make_ranker_nlp(tiny_backbone, signals=list(SIGNALS), dense_encoder=str(tiny_backbone))
    for paper_id in PAPERS:
        doc = everything(scholarly_nlp.read(shared("tei", "acl", f"{paper_id}.tei.xml"), nlp=everything))
        signals = doc._.figure_signals
        by_signal = {name: {fid: values[name] for fid, values in signals.items()} for name in SIGNALS}
        assert doc._.figure_scores == pytest.approx(fuse_ranks(by_signal, list(signals)))
        assert all(set(values) == set(SIGNALS) for values in signals.values())


def test_the_project_and_the_shipped_pipeline_fuse_the_default_signals():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for config in (root / "projects/figure_ranker/configs/figure_ranker.cfg",
                   root / "pipelines/scholarly_core/scholarly_core/pipeline/config.cfg"):
        assert spacy.util.load_config(config, interpolate=False)["components"]["figure_ranker"]["signals"] \
            == list(DEFAULT_SIGNALS), config


@pytest.mark.parametrize("signals", [[], ["caption", "images"], ["mentions", "mentions"]])
def test_unknown_or_repeated_signals_are_refused(tiny_backbone, signals):  # noqa: F811
    with pytest.raises(ValueError, match="signals must be distinct names among"):
        make_ranker_nlp(tiny_backbone, signals=signals)


def test_a_nan_ranks_last_in_its_signal_and_spoils_nothing_else():
    fused = fuse_ranks({"a": {"x": float("nan"), "y": 2.0, "z": 1.0}}, ["x", "y", "z"])
    assert fused == pytest.approx({"x": 1 / 63, "y": 1 / 61, "z": 1 / 62})


def test_the_text_signals_sink_a_figure_the_paper_never_discusses(tiny_backbone):  # noqa: F811
    nlp = make_ranker_nlp(tiny_backbone, signals=["mentions", "context"])
    doc = nlp(paper_to_doc(paper_with_discussed_figures(
        "We translate chemical reaction diagrams into reaction graphs.",
        [("Figure 1 shows how long training took.", "fig_0"),
         ("Figure 2 shows a chemical reaction diagram and the reaction graph we translate it into.", "fig_1"),
         ("Figure 2 also shows the graph's atoms.", "fig_1")]), nlp))
    assert doc._.figure_ranking == ["fig_1", "fig_0", "fig_2"]  # fig_2 is never referred to
    assert doc._.central_figure == "fig_1"
    assert set(doc._.figure_signals["fig_2"]) == {"mentions", "context"}


def test_signals_come_from_the_pipeline_config_also_for_a_saved_pipeline(ranker_nlp, real_docs, tmp_path):  # noqa: F811
    ranker_nlp.to_disk(tmp_path / "pipeline")
    assert "signals" not in (tmp_path / "pipeline" / "figure_ranker" / "cfg").read_text()
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.get_pipe("figure_ranker").cfg["signals"] == list(DEFAULT_SIGNALS)
    override = {"components": {"figure_ranker": {"signals": ["caption"]}}}
    caption_only = spacy.load(tmp_path / "pipeline", config=override)
    assert caption_only.get_pipe("figure_ranker").cfg["signals"] == ["caption"]
    doc = caption_only(scholarly_nlp.read(shared("tei", "acl", f"{PAPERS[0]}.tei.xml"), nlp=caption_only))
    assert all(set(values) == {"caption"} for values in doc._.figure_signals.values())
    assert doc._.figure_scores == pytest.approx({fid: v["caption"] for fid, v in doc._.figure_signals.items()})


def test_caption_dense_is_the_cosine_of_the_mean_abstract_and_each_caption(real_docs, tiny_encoder):  # noqa: F811
    doc = real_docs[0]
    figures = [f for f in doc._.figures if f.kind == "figure" and caption_text(f)]
    query = abstract_sentences(doc)
    values = caption_dense_similarity(tiny_encoder, figures, query)
    abstract = tiny_encoder.encode(query).mean(axis=0)
    abstract = abstract / numpy.linalg.norm(abstract)
    for figure in figures:  # by hand, one caption at a time
        assert values[figure.id] == pytest.approx(float(tiny_encoder.encode([caption_text(figure)])[0] @ abstract),
                                                  abs=1e-5)
    assert len(set(values.values())) == len(figures) and all(-1.0 <= v <= 1.0 for v in values.values())
    assert caption_dense_similarity(tiny_encoder, figures, []) == {}  # no abstract, nothing to compare
    given = caption_dense_similarity(tiny_encoder, figures, query, abstract_vector(tiny_encoder, query))
    assert given == pytest.approx(values, abs=1e-6)  # a caller's abstract vector is the same one


def test_caption_dense_needs_an_encoder(real_docs):  # noqa: F811
    doc = real_docs[0]
    figures = [f for f in doc._.figures if f.kind == "figure"]
    with pytest.raises(ValueError, match="caption_dense signal needs a sentence encoder"):
        signal_values(doc, figures, abstract_sentences(doc), ["caption_dense"])


def test_the_component_reads_caption_dense_from_its_configured_encoder(tiny_backbone, tmp_path):  # noqa: F811
    from scholarly_nlp.ml import SentenceEncoder

    nlp = make_ranker_nlp(tiny_backbone, signals=["caption_dense"], dense_encoder=str(tiny_backbone))
    ranker = nlp.get_pipe("figure_ranker")
    doc = nlp(scholarly_nlp.read(shared("tei", "acl", f"{PAPERS[1]}.tei.xml"), nlp=nlp))
    figures = [f for f in doc._.figures if f.id in doc._.figure_scores]
    expected = caption_dense_similarity(SentenceEncoder(str(tiny_backbone)), figures, abstract_sentences(doc))
    assert doc._.figure_scores == pytest.approx(expected, abs=1e-5)
    encoder = ranker._dense_encoder
    nlp(scholarly_nlp.read(shared("tei", "acl", f"{PAPERS[2]}.tei.xml"), nlp=nlp))
    assert encoder is not None and ranker._dense_encoder is encoder  # loaded once, for every doc after
    # Like signals, the encoder is the pipeline config's: not saved with the weights.
    nlp.to_disk(tmp_path / "pipeline")
    assert "dense_encoder" not in (tmp_path / "pipeline" / "figure_ranker" / "cfg").read_text()
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.get_pipe("figure_ranker").cfg["dense_encoder"] == str(tiny_backbone)
    again = loaded(scholarly_nlp.read(shared("tei", "acl", f"{PAPERS[1]}.tei.xml"), nlp=loaded))
    assert again._.figure_scores == pytest.approx(doc._.figure_scores, abs=1e-5)
    # A load-time override wins, and a dense_encoder written into the weights' cfg is ignored.
    cfg_file = tmp_path / "pipeline" / "figure_ranker" / "cfg"
    cfg_file.write_text(cfg_file.read_text().replace("{", '{"dense_encoder": "written-into-cfg", ', 1))
    override = {"components": {"figure_ranker": {"dense_encoder": "another-encoder"}}}
    assert spacy.load(tmp_path / "pipeline", config=override).get_pipe("figure_ranker").cfg["dense_encoder"] \
        == "another-encoder"
    assert spacy.load(tmp_path / "pipeline").get_pipe("figure_ranker").cfg["dense_encoder"] == str(tiny_backbone)


def test_the_frozen_encoder_is_loaded_only_when_caption_dense_is_asked_and_has_work(
        ranker_nlp, real_docs, tiny_backbone):  # noqa: F811
    for doc in real_docs:
        ranker_nlp(doc)
    assert ranker_nlp.get_pipe("figure_ranker")._dense_encoder is None  # not among the default signals
    nlp = make_ranker_nlp(tiny_backbone, signals=["caption_dense"], dense_encoder="no-such-encoder")
    blocks = [Block("title", "A paper"), Block("abstract", "We translate chemical reaction diagrams.")]
    uncaptioned = Paper(paper_id="built", source="test", reader="test", blocks=blocks,
                        figures=[FigureInfo(id="fig_0", kind="figure", label="1")])
    doc = nlp(paper_to_doc(uncaptioned, nlp))  # no caption to score: the (missing) encoder is never loaded
    assert doc._.figure_scores == {} and nlp.get_pipe("figure_ranker")._dense_encoder is None
