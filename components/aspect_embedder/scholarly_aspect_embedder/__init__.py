"""Per-aspect paper embeddings (Kobayashi et al.): one vector each for a paper's title,
background, method and result.

The ``aspect_embedder`` pipe listens to the shared ``transformer`` pipe (one encoder pass
over title + abstract per paper), groups the token vectors by the aspect of the sentence
they belong to (``Span._.role`` of abstract sentences, set by ``sentence_role_tagger`` or
shipped with the data; objective counts as background), and pools each group with
attention: a learned query per aspect, a learned positional encoding added to the values,
and an output projection. ``doc._.aspect_vectors`` holds the four vectors,
``doc._.sentence_vectors`` one mean-pooled vector per title/abstract sentence (for
explanations), ``doc._.aspect_fallbacks`` which aspects had no sentence of their own.
"""

__version__ = "0.1.0"
