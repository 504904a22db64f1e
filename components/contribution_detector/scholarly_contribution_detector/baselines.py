"""TF-IDF logistic-regression baselines of contribution-sentence detection, over the
sentence rows of :mod:`.data`.

:class:`Featurizer` turns :class:`~.data.SentenceRow` s into a sparse matrix: TF-IDF (word
1-2 grams, sublinear tf, min_df 2) of the sentence text, and with ``context=True`` also
TF-IDF of the section heading words and dense context features (coarse section kind,
position bins, heading and introduction flags, cue phrases in the sentence and the one
before, cues crossed with the introduction flag). :func:`fit_predict` fits a logistic
regression (liblinear, C=1, balanced class weights) on training rows and returns the
positive-class probabilities of test rows. Used by ``benchmarks/contribution_detection_cv.py``
and by the ``evaluate-detector`` command of ``projects/contribution_linker``.

Needs scikit-learn and scipy (in the repository's ``requirements.txt``; imported only when
called, so the component itself does not depend on them).
"""

from __future__ import annotations

import numpy

from .data import CUE_PATTERNS, SECTION_KINDS

__all__ = ["Featurizer", "fit_predict"]


class Featurizer:
    """Fits the vectorisers on training rows and turns rows into a sparse matrix."""

    def __init__(self, context: bool):
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.context = context
        self.text = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True, lowercase=True)
        self.section = TfidfVectorizer(min_df=2, lowercase=True)

    def _dense(self, rows) -> numpy.ndarray:
        kinds = [k for k, _ in SECTION_KINDS] + ["other"]
        cues = list(CUE_PATTERNS)
        out = numpy.zeros((len(rows), len(kinds) + 10 + 3 + 3 * len(cues)), dtype=numpy.float32)
        for r, row in enumerate(rows):
            col = 0
            out[r, kinds.index(row.section_kind)] = 1.0
            col += len(kinds)
            out[r, col + min(9, int(row.rel_position * 10))] = 1.0
            col += 10
            out[r, col] = row.rel_position_in_section
            out[r, col + 1] = float(row.is_heading)
            out[r, col + 2] = float(row.in_introduction)
            col += 3
            for j, name in enumerate(cues):
                out[r, col + j] = row.cues[name]
                out[r, col + len(cues) + j] = row.prev_cues[name]
                out[r, col + 2 * len(cues) + j] = row.cues[name] * float(row.in_introduction)
        return out

    def fit_transform(self, rows):
        """Fit on ``rows`` and return their feature matrix."""
        return self._matrix(rows, fit=True)

    def transform(self, rows):
        """The feature matrix of ``rows`` with the fitted vectorisers."""
        return self._matrix(rows, fit=False)

    def _matrix(self, rows, fit: bool):
        from scipy.sparse import csr_matrix, hstack

        text_features = self.text.fit_transform if fit else self.text.transform
        text = text_features([r.sentence for r in rows])
        if not self.context:
            return text
        section_features = self.section.fit_transform if fit else self.section.transform
        section = section_features([r.section for r in rows])
        return hstack([text, section, csr_matrix(self._dense(rows))]).tocsr()


def fit_predict(train_rows, test_rows, context: bool) -> numpy.ndarray:
    """Probabilities of the positive class for ``test_rows`` from a model fitted on ``train_rows``."""
    from sklearn.linear_model import LogisticRegression

    featurizer = Featurizer(context)
    x_train = featurizer.fit_transform(train_rows)
    model = LogisticRegression(C=1.0, solver="liblinear", class_weight="balanced", max_iter=1000)
    model.fit(x_train, numpy.array([r.label for r in train_rows]))
    return model.predict_proba(featurizer.transform(test_rows))[:, 1]
