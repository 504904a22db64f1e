"""Model code for component authors: thinc-wrapped Hugging Face scorers and encoders, and
the pipe mixins built on them. ``__all__`` is the declared API; the submodules are internal.

Importing the package registers its thinc architectures (``scholarly_nlp.CrossEncoder.v1``,
``scholarly_nlp.BiEncoderScorer.v1``, ``scholarly_nlp.BoostedTrees.v1``,
``scholarly_nlp.LogisticRegression.v1``; their modules
import thinc, which spaCy has already loaded, and no Hugging Face library or scikit-learn),
so a component that imports any name from here can name any of them in its config even
where the entry points are not installed. The other names are loaded on first access:
importing the package loads no ``transformers``, ``spacy_transformers`` or sentence encoder.
"""

from __future__ import annotations

from ..lazy_exports import lazy_exports
from .bi_encoder_scorer import BiEncoderScorer
from .boosted_trees import BoostedTrees
from .cross_encoder import CrossEncoder
from .logistic import LogisticRegression

_EXPORTS = {
    "fit_boosted_trees": "boosted_trees",
    "has_trees": "boosted_trees",
    "drop_trees": "boosted_trees",
    "fit_logistic_regression": "logistic",
    "has_weights": "logistic",
    "drop_weights": "logistic",
    "DEFAULT_BACKBONE": "backbones",
    "resolve_backbone": "backbones",
    "backbone_record_name": "backbones",
    "is_loaded": "cross_encoder",
    "score_pairs": "cross_encoder",
    "add_lora": "adapters",
    "is_adapted": "adapters",
    "load_encoder": "adapters",
    "load_pretrained": "adapters",
    "save_encoder": "adapters",
    "keep_loaded_delta": "adapters",
    "delta_bits_of": "adapters",
    "check_factor_bits": "weight_delta",
    "NewWeightRateShim": "head_rate_shim",
    "folder_from_bytes": "folder_bytes",
    "folder_to_bytes": "folder_bytes",
    "fix_malloc_mmap_threshold": "heap",
    "HuggingFaceModelPipe": "hf_pipe",
    "transformer_listener_config": "listener",
    "check_transformer_ran": "listener",
    "ListwiseRankingPipe": "listwise",
    "TrainingState": "training_state",
    "UntrainedComponentWarning": "training_state",
    "SentenceEncoder": "sentence_encoder",
    "cosine_matrix": "sentence_encoder",
    "mean_pool": "sentence_encoder",
    "shared_transformer_config": "abstract_spans",
    "title_abstract_windows": "abstract_spans",
    "N_POSITION_FEATURES": "sentence_sequence",
    "position_features": "sentence_sequence",
    "sentence_windows": "sentence_sequence",
    "sequence_batch": "sentence_sequence",
    "sentence_sequence_module": "sentence_sequence",
    "plain_encoder": "sentence_sequence",
}

__all__ = sorted({"BiEncoderScorer", "BoostedTrees", "CrossEncoder", "LogisticRegression", *_EXPORTS})

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
