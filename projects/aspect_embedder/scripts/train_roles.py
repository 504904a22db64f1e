"""Train the sentence role tagger on a frozen transformer, annotating each Doc once.

``spacy train configs/roles.cfg`` works, but with the shared transformer frozen it re-runs
the encoder over every batch of every epoch. Its output never changes, so this script runs
it once per Doc and then trains the tagger with the same config (model, optimizer, batch
size, dropout, corpora, initialisation) for as many epochs as asked, scoring the dev set
after each epoch, keeping the best and stopping after ``--patience`` epochs without a
better one: about 50x less encoder time on a CPU.

    python scripts/train_roles.py configs/roles.cfg OUTPUT_DIR --paths.train T.spacy --paths.dev D.spacy
        [--paths.backbone NAME] [--epochs 30] [--patience 3] [--seed 0]

OUTPUT_DIR gets ``model-best`` (the pipeline at the best dev macro-F1) and ``train_log.json``.
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
from thinc.api import fix_random_seed

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
    parser.add_argument("--seed", type=int, default=0)
    args, rest = parser.parse_known_args(argv)
    overrides = parse_config_overrides(rest)
    overrides["system.seed"] = args.seed
    config = util.load_config(args.config, overrides=overrides, interpolate=False)
    fix_random_seed(args.seed)
    started = time.time()
    nlp = init_nlp(config)
    training = registry.resolve(config.interpolate()["training"], schema=ConfigSchemaTraining)
    train_corpus, dev_corpus = resolve_dot_names(config.interpolate(), [training["train_corpus"],
                                                                        training["dev_corpus"]])
    train, dev = list(train_corpus(nlp)), list(dev_corpus(nlp))
    annotate(nlp, train)
    annotate(nlp, dev)
    encoded = time.time() - started
    print(f"encoded {len(train)} train and {len(dev)} dev abstracts once in {encoded:.0f} s")
    tagger = nlp.get_pipe(TAGGER)
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
        scores = evaluate(tagger, dev)
        log.append({"epoch": epoch, "loss": round(losses.get(TAGGER, 0.0), 3), "roles_acc": scores["roles_acc"],
                    "roles_macro_f": scores["roles_macro_f"]})
        print(json.dumps(log[-1]))
        if scores["roles_macro_f"] > best[0]:
            best = (scores["roles_macro_f"], epoch, tagger.model.to_bytes())
        elif epoch - best[1] >= args.patience:
            break
    tagger.model.from_bytes(best[2])
    final = evaluate(tagger, dev)
    nlp.meta["performance"] = {k: v for k, v in final.items()}
    (args.output / "model-best").mkdir(parents=True, exist_ok=True)
    nlp.to_disk(args.output / "model-best")
    summary = {"best_epoch": best[1], "dev": final, "train_abstracts": len(train), "dev_abstracts": len(dev),
               "encode_seconds": round(encoded), "seconds": round(time.time() - started), "log": log}
    (args.output / "train_log.json").write_text(json.dumps(summary, indent=2))
    print(f"best epoch {best[1]}: dev accuracy {final['roles_acc']:.3f}, macro-F1 {final['roles_macro_f']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
