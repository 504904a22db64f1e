"""Central-figure ranking: which figure of a paper is its visual summary?

Yamamoto et al.'s method: a cross-encoder scores (abstract sentence, caption) pairs and a
figure's score is the sum over the abstract's sentences. It is trained without labels from
the paper's own structure: a sentence that mentions figure i should score higher with
caption i than with the paper's other captions (margin ranking loss).

The component fuses that caption score, by reciprocal rank fusion, with an untrained signal
of how the paper discusses each figure: how often it refers to the figure. A second one, how
similar the referring paragraphs are to the abstract, is there on request (:mod:`.signals`).
"""

__version__ = "0.1.0"
