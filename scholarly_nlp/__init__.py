"""scholarly_nlp: scientific papers as spaCy Docs, with pluggable components.

The public API is what this module exports (the document API: reading, the paper model, Doc
building and serialisation, the Doc views, roles and structure helpers, errors, the plugin
API), plus the ``__all__`` of the declared sub-packages :mod:`scholarly_nlp.ml`,
:mod:`scholarly_nlp.retrieval`, :mod:`scholarly_nlp.metrics` and :mod:`scholarly_nlp.readers`
(dataset readers such as CSFCube's). Components and plugins use nothing else::

    import scholarly_nlp
    doc = scholarly_nlp.read("paper.pdf")          # or a GROBID .tei.xml
    doc._.figures, doc._.citances, doc._.sections, doc._.bibliography
"""

from __future__ import annotations

from .analysis import analysis_record
from .view import display, render
from .api import DocResult, blank, load, read, read_many
from .cache import cache_dir
from .pipelines import pipeline_path
from .doc.builder import paper_to_doc
from .doc.extensions import SPAN_GROUPS, install_extensions, set_extension
from .doc.serialize import (
    doc_from_json,
    doc_to_json,
    load_docbin,
    load_json,
    save_docbin,
    save_json,
    write_atomic,
)
from .doc.roles import (
    ASPECTS,
    QUERY_ASPECTS,
    ROLE_GROUP,
    ROLES,
    abstract_sentences,
    aspect_of_role,
    aspect_sentences,
    check_aspect,
    set_roles,
    title_span,
)
from .doc.structure import EXCLUDED_BODY_TITLE, INTRODUCTION_TITLE, introduction_and_body, introduction_range
from .doc.types import Citance, Figure, Section
from .errors import (
    EmptyDocumentError,
    EncryptedPDFError,
    GrobidProcessingError,
    GrobidUnavailableError,
    IncompatiblePipelineError,
    InputError,
    MalformedInputError,
    PluginError,
    ScholarlyNLPError,
    UnknownComponentError,
    UnknownFormatError,
    UnknownNameError,
    UnknownPipelineError,
    UnsafeInputError,
)
from .hookspecs import hookimpl
from .component_spec import ComponentSpec
from .components_api import add_component
from .paper import Author, BibEntry, Block, FigureInfo, InlineRef, Paper
from .paper import Section as PaperSection
from .plugins import PluginRegistry, get_registry
from .readers.dispatch import ReadResult, expand_inputs, read_paper, read_papers
from .readers.limits import ReadLimits
from .text.segmenter import split_sentences

__version__ = "0.1.2"

install_extensions()

__all__ = [
    "pipeline_path",
    "ASPECTS", "QUERY_ASPECTS", "ROLE_GROUP", "ROLES",
    "abstract_sentences", "aspect_of_role", "aspect_sentences", "check_aspect", "set_roles", "title_span",
    "Author", "BibEntry", "Block", "PaperSection", "ComponentSpec", "add_component", "Citance", "DocResult", "EmptyDocumentError", "EncryptedPDFError", "Figure", "FigureInfo",
    "GrobidProcessingError", "GrobidUnavailableError", "IncompatiblePipelineError", "InlineRef", "InputError", "MalformedInputError", "Paper",
    "PluginError", "PluginRegistry", "ReadLimits", "ReadResult", "SPAN_GROUPS", "ScholarlyNLPError", "Section",
    "UnknownComponentError", "UnknownFormatError", "UnknownNameError", "UnknownPipelineError", "analysis_record", "display", "render", "cache_dir", "load", "UnsafeInputError", "blank", "doc_from_json",
    "doc_to_json", "expand_inputs", "get_registry", "hookimpl", "install_extensions", "load_docbin", "load_json",
    "paper_to_doc", "read", "read_many", "read_paper", "read_papers", "save_docbin", "save_json", "set_extension",
    "split_sentences", "write_atomic",
    "EXCLUDED_BODY_TITLE", "INTRODUCTION_TITLE", "introduction_and_body", "introduction_range",
]
