"""``scholarly_transformer``: the shared transformer, saved as a reference to its backbone.

spacy-transformers' ``transformer`` pipe writes the whole Hugging Face model into every
saved pipeline (88 MB for all-MiniLM-L6-v2). Here the shared transformer is frozen (the
role tagger and aspect embedder train heads over it), so its weights *are* the backbone's:
this subclass writes ``backbone.json`` (the backbone's name and a digest of its weights)
instead, and loading builds the model from the backbone the config names, resolved offline
(:func:`scholarly_nlp.ml.resolve_backbone`: the packaged MiniLM, or any name or folder a
user has). A transformer whose weights were fine-tuned is written whole, as its parent does.

It is otherwise spacy-transformers' ``Transformer`` (listeners, ``doc._.trf_data``), and
its default model is :func:`scholarly_nlp.ml.shared_transformer_config`'s: the title and
abstract of a paper, sentence-packed into windows.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable

import srsly
from spacy.language import Language
from spacy_transformers.pipeline_component import Transformer
from thinc.api import Model

from ..component_spec import ComponentSpec
from ..ml.abstract_spans import shared_transformer_config
from ..ml.adapters import BACKBONE_FILE, weights_digest
from ..ml.backbones import backbone_record_name

SPEC = ComponentSpec(
    name="scholarly_transformer",
    default_config={
        **shared_transformer_config(),
        "set_extra_annotations": {"@annotation_setters": "spacy-transformers.null_annotation_setter.v1"},
        "max_batch_items": 4096,
    },
    assigns=("doc._.trf_data",),
    extensions={"doc._.trf_data": {"default": None}},
)
"""The component's one declaration (the built-in plugin registers it)."""


@SPEC.factory
def make_scholarly_transformer(nlp: Language, name: str, model: Model, set_extra_annotations: Callable,
                               max_batch_items: int) -> "SharedTransformer":
    """spaCy factory of ``scholarly_transformer``."""
    return SharedTransformer(nlp.vocab, model, set_extra_annotations, max_batch_items=max_batch_items, name=name)


class SharedTransformer(Transformer):
    """spacy-transformers' ``Transformer`` that saves its backbone by reference (see the module)."""

    def _hf_model(self) -> Any:
        return self.model.transformer if self.model.attrs.get("has_transformer") else None

    def _backbone_digest(self) -> str:
        """The digest of the backbone as the config names it, loaded fresh."""
        from spacy_transformers.layers.transformer_model import huggingface_from_pretrained

        loaded = huggingface_from_pretrained(self.model.attrs["name"], self.model._init_tokenizer_config,
                                             self.model._init_transformer_config)
        return weights_digest(loaded.transformer)

    def to_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> None:
        """Write ``cfg`` and ``backbone.json``; the whole model only if it was fine-tuned."""
        path = Path(path)
        hf_model = self._hf_model()
        if hf_model is None:
            raise ValueError(f"{self.name}: the transformer is not loaded; call nlp.initialize() first")
        digest = weights_digest(hf_model)
        if digest != self._backbone_digest():
            super().to_disk(path, exclude=exclude)  # fine-tuned: the weights are its own
            return
        path.mkdir(parents=True, exist_ok=True)
        srsly.write_json(path / "cfg", self.cfg)
        record = {"backbone": backbone_record_name(self.model.attrs["name"]), "backbone_digest": digest,
                  "layout": "backbone"}
        (path / BACKBONE_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")

    def from_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> "SharedTransformer":
        """Load a reference folder by building the model from the configured backbone."""
        path = Path(path)
        record_file = path / BACKBONE_FILE
        if not record_file.exists():
            return super().from_disk(path, exclude=exclude)
        if (path / "cfg").exists():
            self.cfg.update(srsly.read_json(path / "cfg"))
        record = json.loads(record_file.read_text(encoding="utf-8"))
        if not Path(self.model.attrs["name"]).is_dir() and Path(record.get("backbone", "")).is_dir():
            self.model.attrs["name"] = record["backbone"]  # a relative folder name, recorded absolute
        self.model.initialize()
        digest = weights_digest(self._hf_model())
        if record.get("backbone_digest") and digest != record["backbone_digest"]:
            warnings.warn(f"{path}: the backbone {self.model.attrs['name']} is not the checkpoint this pipeline was "
                          f"trained with (digest {digest} != {record['backbone_digest']}); results may differ",
                          stacklevel=2)
        return self

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        """The :meth:`to_disk` folder as bytes (``nlp.to_bytes``, multiprocessing)."""
        from ..ml.folder_bytes import folder_to_bytes

        return folder_to_bytes(lambda p: self.to_disk(p, exclude=exclude))

    def from_bytes(self, data: bytes, *, exclude: Iterable[str] = tuple()) -> "SharedTransformer":
        """Load what :meth:`to_bytes` produced."""
        from ..ml.folder_bytes import folder_from_bytes

        return folder_from_bytes(data, lambda p: self.from_disk(p, exclude=exclude))

