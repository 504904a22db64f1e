"""``python -m scholarly_nlp.ml.tiny_backbone PATH``: write the tiny random-weight backbone.

The projects' smoke workflows and tests use it in place of all-MiniLM-L6-v2 (same
vocabulary, a few thousand weights) so that a full train/evaluate run takes minutes on CPU.
"""

import sys
from pathlib import Path

from .backbones import make_tiny_backbone

if __name__ == "__main__":
    print(make_tiny_backbone(Path(sys.argv[1] if len(sys.argv) > 1 else "smoke/tiny_backbone")))
