"""Train the sentence role tagger with a config's model, optimizer, batches and corpora.

Two kinds of tagger model:

* one that listens to the frozen shared transformer (``configs/roles_frozen.cfg``):
  ``spacy train`` would re-run the encoder over every batch of every epoch although its output
  never changes, so this script runs it once per Doc first (about 50x less encoder time on
  a CPU);
* one with its own fine-tuned encoder (``configs/roles.cfg``, ``AbstractRoleEncoder.v1``):
  nothing to pre-compute; each update runs and trains it.

The dev set is scored after each epoch (logged). ``--keep last`` (the project's choice, a
fixed schedule: issue 19 selects nothing on the reported dev set) saves the last epoch;
``--keep best`` saves the epoch with the best dev macro-F1 and stops after ``--patience``
epochs without a better one. The optimizer's schedules (a warm-up, a decay) step once per
update, as in ``spacy train``.

    python scripts/train_roles.py CONFIG OUTPUT_DIR --paths.train T.spacy --paths.dev D.spacy
        [--paths.backbone NAME] [--epochs 4] [--keep last|best] [--patience 3] [--seed 0] [--gpu-id N]

OUTPUT_DIR gets ``model-best`` (the kept pipeline) and ``train_log.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

from spacy import util
from spacy.cli._util import parse_config_overrides
from spacy.schemas import ConfigSchemaTraining
from spacy.training.initialize import init_nlp
from spacy.util import minibatch, registry, resolve_dot_names
from thinc.api import fix_random_seed, require_gpu

from scholarly_facet_classifier.role_encoder import owns_encoder

TAGGER = "sentence_role_tagger"


def annotate(nlp, examples, batch_size: int = 32) -> None:
    """Run the transformer over the predicted Docs once (sets ``doc._.trf_data``)."""
    transformer = nlp.get_pipe("transformer")
    for batch in minibatch(examples, batch_size):
        docs = [eg.predicted for eg in batch]
        transformer.set_annotations(docs, transformer.predict(docs))


def evaluate(tagger, examples) -> dict:
    """Tag the dev Docs and score them against their gold roles."""
    docs = [eg.predicted for eg in examples]
    tagger.set_annotations(docs, tagger.predict(docs))
    return tagger.score(examples)


def main(argv=None) -> int:
    """Train, keep the best epoch, save it."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--patience", type=int, default=3, help="stop after this many epochs without a better dev score")
    parser.add_argument("--keep", choices=("last", "best"), default="last",
                        help="save the last epoch (a fixed schedule) or the best on the dev set")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--gpu-id", type=int, default=-1, help="GPU to train on (-1: CPU)")
    args, rest = parser.parse_known_args(argv)
    overrides = parse_config_overrides(rest)
    overrides["system.seed"] = args.seed
    config = util.load_config(args.config, overrides=overrides, interpolate=False)
    if args.gpu_id >= 0:
        require_gpu(args.gpu_id)
    fix_random_seed(args.seed)
    started = time.time()
    nlp = init_nlp(config)
    training = registry.resolve(config.interpolate()["training"], schema=ConfigSchemaTraining)
    train_corpus, dev_corpus = resolve_dot_names(config.interpolate(), [training["train_corpus"],
                                                                        training["dev_corpus"]])
    train, dev = list(train_corpus(nlp)), list(dev_corpus(nlp))
    tagger = nlp.get_pipe(TAGGER)
    if not owns_encoder(tagger.model):  # a listener: encode once with the frozen transformer
        annotate(nlp, train)
        annotate(nlp, dev)
    encoded = time.time() - started
    print(f"prepared {len(train)} train and {len(dev)} dev abstracts in {encoded:.0f} s")
    optimizer = training["optimizer"]
    size = config.interpolate()["training"]["batcher"].get("size", 16)
    size = size if isinstance(size, int) else 16
    rng = random.Random(args.seed)
    log, best = [], (-1.0, 0, None)
    for epoch in range(1, args.epochs + 1):
        rng.shuffle(train)
        losses: dict = {}
        for batch in minibatch(train, size):
            tagger.update(batch, drop=training["dropout"], sgd=optimizer, losses=losses)
            optimizer.step_schedules()
        scores = evaluate(tagger, dev)
        log.append({"epoch": epoch, "loss": round(losses.get(TAGGER, 0.0), 3), "roles_acc": scores["roles_acc"],
                    "roles_macro_f": scores["roles_macro_f"]})
        print(json.dumps(log[-1]))
        if args.keep == "last":
            best = (scores["roles_macro_f"], epoch, None)
        elif scores["roles_macro_f"] > best[0]:
            best = (scores["roles_macro_f"], epoch, tagger.model.to_bytes())
        elif epoch - best[1] >= args.patience:
            break
    if best[2] is not None:
        tagger.model.from_bytes(best[2])
    final = evaluate(tagger, dev)
    nlp.meta["performance"] = {k: v for k, v in final.items()}
    (args.output / "model-best").mkdir(parents=True, exist_ok=True)
    nlp.to_disk(args.output / "model-best")
    summary = {"kept_epoch": best[1], "keep": args.keep, "dev": final, "train_abstracts": len(train), "dev_abstracts": len(dev),
               "encode_seconds": round(encoded), "seconds": round(time.time() - started), "log": log}
    (args.output / "train_log.json").write_text(json.dumps(summary, indent=2))
    print(f"kept epoch {best[1]} ({args.keep}): dev accuracy {final['roles_acc']:.3f}, macro-F1 {final['roles_macro_f']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
