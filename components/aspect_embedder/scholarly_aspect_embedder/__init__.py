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

Paper similarity on one query aspect over those vectors (CSFCube's "faceted" similarity),
the task harness of this component: :mod:`.vectors` holds the one scoring definition,
:mod:`.index` the saved vector index, :mod:`.search` :func:`similar` (also the
``scholarly-nlp similar`` command, :mod:`.cli`), :mod:`.baselines`, :mod:`.pipeline_ranker`
and :mod:`.csfcube_eval` the CSFCube evaluation.
Importing the package installs the component's ``._`` attributes (its :data:`.factory.SPEC`).
"""

from .factory import SPEC
from .index import AspectIndex, corpus_fingerprint, index_path_for
from .search import SentenceMatch, SimilarPaper, similar
from .vectors import ASPECT_WEIGHT, MissingAspectVectorsError, aspect_cosines, aspect_search_vector, paper_vector

SPEC.install_extensions()

__version__ = "0.1.0"

__all__ = [
    "ASPECT_WEIGHT",
    "AspectIndex",
    "MissingAspectVectorsError",
    "SentenceMatch",
    "SimilarPaper",
    "aspect_cosines",
    "aspect_search_vector",
    "corpus_fingerprint",
    "index_path_for",
    "paper_vector",
    "similar",
]
