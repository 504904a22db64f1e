"""Model code: thinc-wrapped Hugging Face scorers and encoders.

Importing the package registers its thinc architectures (``scholarly_nlp.CrossEncoder.v1``,
``scholarly_nlp.BiEncoderScorer.v1``), so a component that imports any of its modules can
name either in its config even where the entry points are not installed.
"""

from .bi_encoder_scorer import BiEncoderScorer
from .cross_encoder import CrossEncoder

__all__ = ["BiEncoderScorer", "CrossEncoder"]
