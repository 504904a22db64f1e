"""Citance facet classification (CL-SciSumm Task 1B): why is a reference paper cited?

Each citance that cites a reference paper (``doc._.incoming_citances`` of the reference
paper's Doc) gets one or more of the discourse facets Aim, Hypothesis, Implication, Method
and Results. The ``citance_facet_classifier`` pipe is multi-label: one sigmoid per facet
over a thinc model (``scholarly_facet_classifier.TfidfLinear.v1``, TF-IDF n-grams and a linear
layer, by default; or ``scholarly_facet_classifier.TransformerClassifier.v1``, a fine-tuned Hugging
Face encoder), trained with binary cross-entropy; a citance gets every facet whose
probability reaches the threshold, and at least its most probable one.
"""

__version__ = "0.1.0"
