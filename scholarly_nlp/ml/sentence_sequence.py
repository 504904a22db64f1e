"""Sequential sentence classification with a fine-tuned encoder: the torch module and its inputs.

Two components tag every sentence of a stretch of a paper with an encoder that reads the
sentences together (Cohan et al. 2019, sequential sentence classification): the role tagger
(abstract sentences, five roles) and the contribution detector's introduction tagger (one
sigmoid per introduction sentence). Both use what is here:

1. :func:`sentence_windows`: the sentences as ``[CLS] s1 [SEP] s2 [SEP] ...`` word-piece windows
   of whole consecutive sentences, so a sentence's pieces attend to its neighbours; a text
   longer than one window continues in the next;
2. :func:`sequence_batch`: the torch inputs of a batch of such texts, with a pooling matrix
   that averages each sentence's pieces out of its own text's windows;
3. :func:`sentence_sequence_module`: the encoder, then per sentence the mean of its last
   hidden states plus :func:`position_features`, a layer-normalised projection, a
   bidirectional LSTM over the text's sentences (packed: a text's output does not depend on
   its batch) and a linear layer to the labels' logits.

The head's parameters are under ``head.`` (``project``, ``lstm``, ``out``) and the encoder's
under ``encoder.``, so a head saves and loads apart from the encoder.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, List, Sequence, Tuple

import numpy

N_POSITION_FEATURES = 3

Window = List[int]
SentenceSpan = Tuple[int, int, int]
"""A sentence's ``(window, start, end)``: its word pieces in the batch's window list."""


def position_features(n: int) -> numpy.ndarray:
    """An ``(n, 3)`` float32 array: relative position ``i/(n-1)`` (0 when n == 1), is_first, is_last."""
    out = numpy.zeros((n, N_POSITION_FEATURES), dtype="float32")
    if n == 0:
        return out
    out[:, 0] = numpy.arange(n, dtype="float32") / max(n - 1, 1)
    out[0, 1] = 1.0
    out[n - 1, 2] = 1.0
    return out


def sentence_windows(tokenizer: Any, sentences: Sequence[str], sentence_tokens: int,
                     max_length: int) -> Tuple[List[Window], List[SentenceSpan]]:
    """Word-piece windows ``[CLS] s_i [SEP] s_i+1 [SEP] ...`` of whole consecutive sentences
    (each cut to ``sentence_tokens`` pieces; a window holds at most ``max_length`` pieces) and
    each sentence's ``(window, start, end)``."""
    if sentence_tokens < 1 or max_length < sentence_tokens + 2:
        raise ValueError(f"sentence_tokens must be >= 1 and max_length >= sentence_tokens + 2, "
                         f"got {sentence_tokens!r}, {max_length!r}")
    windows: List[Window] = [[tokenizer.cls_token_id]]
    spans: List[SentenceSpan] = []
    for sentence in sentences:
        piece = (tokenizer(sentence, add_special_tokens=False)["input_ids"] or [tokenizer.unk_token_id])[:sentence_tokens]
        if len(windows[-1]) + len(piece) + 1 > max_length:
            windows.append([tokenizer.cls_token_id])
        window = windows[-1]
        spans.append((len(windows) - 1, len(window), len(window) + len(piece)))
        window.extend(piece)
        window.append(tokenizer.sep_token_id)
    return windows, spans


def sequence_batch(encoded: Sequence[Tuple[List[Window], List[SentenceSpan]]], device: Any = "cpu") -> dict:
    """The torch inputs of :func:`sentence_sequence_module` for a batch of texts, each given as
    its ``(windows, sentence spans)`` (:func:`sentence_windows`); every text has at least one
    sentence. ``windows`` (texts, most windows) indexes each text's windows among all the
    batch's (padding: one past the last, a window of zeros); ``pooling`` (texts, sentences,
    most windows x pieces) averages each sentence's pieces out of its own text's windows only,
    so a text's output does not depend on its batch. A span with ``end == start`` (a sentence
    left without pieces) pools nothing: its vector is its position alone. ``lengths`` stays on
    the CPU, as ``pack_padded_sequence`` wants it."""
    import torch

    all_windows = [window for windows, _ in encoded for window in windows]
    length = max(len(window) for window in all_windows)
    most = max(len(spans) for _, spans in encoded)
    most_windows = max(len(windows) for windows, _ in encoded)
    input_ids = numpy.zeros((len(all_windows), length), dtype="int64")
    mask = numpy.zeros_like(input_ids)
    for row, window in enumerate(all_windows):
        input_ids[row, : len(window)] = window
        mask[row, : len(window)] = 1
    windows_of = numpy.full((len(encoded), most_windows), len(all_windows), dtype="int64")
    pooling = numpy.zeros((len(encoded), most, most_windows * length), dtype="float32")
    positions = numpy.zeros((len(encoded), most, N_POSITION_FEATURES), dtype="float32")
    first_window = 0
    for text, (windows, spans) in enumerate(encoded):
        windows_of[text, : len(windows)] = numpy.arange(first_window, first_window + len(windows))
        for k, (window, start, end) in enumerate(spans):
            if end > start:
                pooling[text, k, window * length + start : window * length + end] = 1.0 / (end - start)
        positions[text, : len(spans)] = position_features(len(spans))
        first_window += len(windows)
    arrays = {"input_ids": input_ids, "attention_mask": mask, "windows": windows_of, "pooling": pooling,
              "positions": positions}
    inputs = {key: torch.from_numpy(value).to(device) for key, value in arrays.items()}
    inputs["lengths"] = torch.from_numpy(numpy.asarray([len(spans) for _, spans in encoded], dtype="int64"))
    return inputs


def sentence_sequence_module(encoder: Any, n_labels: int, hidden: int, dropout: float) -> Any:
    """A torch module: ``encoder`` (a Hugging Face encoder, maybe LoRA-wrapped) and a sentence-
    sequence head (``hidden`` even: the projection's and the BiLSTM's width) with ``n_labels``
    logits per sentence; called with :func:`sequence_batch`'s inputs, it returns
    ``(texts, sentences, n_labels)`` logits."""
    if hidden < 2 or hidden % 2:
        raise ValueError(f"hidden width must be an even number >= 2, got {hidden!r}")
    return _module_class()(encoder, n_labels, hidden, dropout)


@lru_cache(maxsize=None)
def _module_class() -> type:
    # defined once, on first use (torch loads late); the encoder is an argument, not captured
    import torch

    class SentenceSequenceModule(torch.nn.Module):
        """A Hugging Face encoder over windows of sentences and a sentence-sequence head."""

        def __init__(self, encoder: Any, n_labels: int, hidden: int, dropout: float):
            super().__init__()
            self.encoder = encoder
            self.head = torch.nn.ModuleDict({
                "project": torch.nn.Sequential(torch.nn.Linear(encoder.config.hidden_size + N_POSITION_FEATURES, hidden),
                                               torch.nn.LayerNorm(hidden), torch.nn.GELU(), torch.nn.Dropout(dropout)),
                "lstm": torch.nn.LSTM(hidden, hidden // 2, batch_first=True, bidirectional=True),
                "out": torch.nn.Sequential(torch.nn.Dropout(dropout), torch.nn.Linear(hidden, n_labels)),
            })

        def forward(self, input_ids, attention_mask, windows, pooling, positions, lengths):
            """Logits (texts, sentences, labels) from :func:`sequence_batch`'s inputs."""
            states = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            padded = torch.cat([states, states.new_zeros((1, *states.shape[1:]))])
            own = padded[windows].reshape(windows.shape[0], -1, states.shape[-1])  # (texts, windows x pieces, width)
            sentences = torch.cat([torch.bmm(pooling.to(own.dtype), own), positions.to(own.dtype)], dim=-1)
            projected = self.head["project"](sentences)
            packed = torch.nn.utils.rnn.pack_padded_sequence(projected, lengths.cpu(), batch_first=True,
                                                             enforce_sorted=False)
            context, _ = self.head["lstm"](packed)
            context, _ = torch.nn.utils.rnn.pad_packed_sequence(context, batch_first=True,
                                                                total_length=projected.shape[1])
            return self.head["out"](context)

    return SentenceSequenceModule


def plain_encoder(source: str) -> Tuple[Any, List[str]]:
    """A Hugging Face encoder (no task head) from a name or folder, and the keys it lacked
    (:func:`.adapters.load_pretrained`); the unused-pooler warning is silenced."""
    import transformers
    from transformers import AutoModel

    from .adapters import load_pretrained

    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()
    try:
        return load_pretrained(AutoModel.from_pretrained, source)
    finally:
        transformers.logging.set_verbosity(verbosity)
