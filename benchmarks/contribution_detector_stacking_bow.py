"""Contribution-sentence detection: does stacking lift the shipped detector's own stage 1?

``contribution_detector_stacking.py`` stacks boosted trees on logistic regressions (scikit-learn
TF-IDF + context, with and without frozen MiniLM embeddings). The shipped ``contribution_detector``
is a different stage 1: spaCy's ``TextCatBOW.v3`` over the sentence's n-grams and context
pseudo-tokens, trained by ``spacy train`` with the project's ``configs/detector.cfg`` (100 steps).
Before a stacked detector can ship on that recipe, this measures whether the same stage 2 lifts
it, on the same 142 / 35 split, with the same stage-2 features (title similarity from frozen
MiniLM included) and candidates:

* stage 1 ``textcat_bow``: the project's config trained by ``spacy.cli.train.train`` (its
  ``model-last``, seed 0) on the training papers; out-of-fold scores from one such run per fold
  of grouped 5-fold CV;
* optionally a second stage-1 input beside it, one of the logistic regressions of
  ``contribution_detector_embeddings.py`` (``embedding``, ``embedding_context``,
  ``tfidf_context_embedding``): the shipped detector holds ``embedding_context`` as its
  ``embedding_scorer``;
* stage 2: ``scholarly_nlp.BoostedTrees.v1`` over the relational and introduction features,
  with and without the cue windows, both tree settings; chosen by out-of-fold F1 on the
  training papers only; reported over fold seeds 0, 1, 2 with paired bootstraps against
  ``tfidf_context`` and against ``textcat_bow`` itself.

    python benchmarks/contribution_detector_stacking_bow.py [--data DIR] [--seeds 0 1 2] [--out FILE.json]
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO_ROOT  # noqa: E402
from contribution_detector_stacking import TREE_SETTINGS, Stacker, arguments, finish, run, stacking_inputs  # noqa: E402

BOW = "textcat_bow"
DETECTOR_CONFIG = REPO_ROOT / "projects" / "contribution_linker" / "configs" / "detector.cfg"
INPUTS = {BOW: (BOW,), "embedding+" + BOW: ("embedding", BOW), "embedding_context+" + BOW: ("embedding_context", BOW),
          "tfidf_context_embedding+" + BOW: ("tfidf_context_embedding", BOW)}
CANDIDATES = [(inputs, cues, trees) for inputs in INPUTS for cues in (False, True) for trees in TREE_SETTINGS]


class BowStacker(Stacker):
    """A :class:`Stacker` whose ``textcat_bow`` stage 1 is the shipped detector's training recipe."""

    def __init__(self, *args, docs: dict, steps: int = 100, **kwargs):
        super().__init__(*args, **kwargs)
        self.docs, self.steps = docs, steps

    def prepare(self, name: str, papers_train) -> None:
        """The TextCatBOW recipe has nothing to choose; the logistic regressions choose C."""
        if name != BOW:
            super().prepare(name, papers_train)

    def stage1(self, name: str, train_ids, test_ids) -> dict:
        """Stage-1 probabilities of ``test_ids``; for ``textcat_bow``, from ``spacy train`` with
        the project's detector config on ``train_ids`` (``model-last``)."""
        if name != BOW:
            return super().stage1(name, train_ids, test_ids)
        from scholarly_contribution_detector.stacking import train_stage1

        nlp = train_stage1([self.docs[pid] for pid in train_ids], DETECTOR_CONFIG, steps=self.steps)
        detector = nlp.get_pipe("contribution_detector")
        out = {}
        for pid in test_ids:
            (_, probs), = detector.predict_stage1([self.docs[pid]])
            if len(probs) != len(self.rows_of[pid]):
                raise ValueError(f"{pid}: {len(probs)} detector scores for {len(self.rows_of[pid])} introduction rows")
            out[pid] = numpy.asarray(probs, dtype=numpy.float64)
        return out


def main(argv=None) -> dict:
    """Command line (see the module docstring)."""
    import spacy
    from scholarly_contribution_detector.ncg_docs import ncg_doc

    args = arguments(argv, __doc__.splitlines()[0], "contribution_detector_stacking_bow.json")
    warnings.filterwarnings("ignore")
    started = time.perf_counter()
    papers, train, held_ids, rows_of, emb_of, context, cues = stacking_inputs(args.data)
    nlp = spacy.blank("en")
    docs = {p.paper_id: ncg_doc(p, nlp) for p in papers if p.paper_id in emb_of}
    stacker = BowStacker([p.paper_id for p in train], held_ids, rows_of, emb_of, context, cues, docs=docs)
    report = {"n_train_papers": len(stacker.train_ids), "n_held_out_papers": len(stacker.held_ids),
              **run(stacker, train, args.seeds, candidates=CANDIDATES, inputs_of=INPUTS)}
    return finish(report, args.out, started)


if __name__ == "__main__":
    main()
