"""Write a tiny random-weight BERT with the default backbone's vocabulary (smoke runs, tests)."""

import sys

from scholarly_nlp.ml.backbones import make_tiny_backbone

if __name__ == "__main__":
    print(make_tiny_backbone(sys.argv[1] if len(sys.argv) > 1 else "smoke/tiny_backbone"))
