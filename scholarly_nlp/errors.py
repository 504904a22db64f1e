"""One exception hierarchy for everything scholarly_nlp raises on purpose.

Every error that concerns an input file carries the file's path and the reason, and its
``str()`` is one sentence a user can act on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Union

PathLike = Union[str, Path]


class ScholarlyNLPError(Exception):
    """Base class of all errors raised by scholarly_nlp and its plugins."""


class InputError(ScholarlyNLPError):
    """A problem with one input file: names the file and the reason."""

    def __init__(self, path: Optional[PathLike], reason: str):
        self.path = str(path) if path is not None else None
        self.reason = reason
        where = f"{self.path}: " if self.path else ""
        super().__init__(f"{where}{reason}")

    def __reduce__(self):
        # Picklable with its own arguments: errors come back from reader worker processes.
        return (type(self), (self.path, self.reason))


class MalformedInputError(InputError):
    """The file is not well-formed for its format (broken XML, truncated PDF...)."""


class UnsafeInputError(InputError):
    """The file carries constructs that are refused for safety (XML entities, DTDs)."""


class EmptyDocumentError(InputError):
    """The file parsed but holds no usable text (empty file, image-only PDF, TEI without body)."""


class EncryptedPDFError(InputError):
    """The PDF is encrypted and cannot be read without a password."""


class UnknownFormatError(InputError):
    """No registered reader recognises the file."""


class GrobidUnavailableError(ScholarlyNLPError):
    """No GROBID server answered at the configured URL.

    ``url_source`` says where the URL came from, so the advice fits: ``"default"`` (nothing
    configured: start a server, or name yours), ``"env"`` (``$SCHOLARLY_NLP_GROBID_URL``)
    or ``"argument"`` (given explicitly, e.g. ``--grobid-url``: check it).
    """

    START_SERVER = "docker run --rm -p 8070:8070 grobid/grobid:0.8.1"

    def __init__(self, url: str, detail: str = "", url_source: str = "default"):
        self.url = url
        self.url_source = url_source
        extra = f" ({detail})" if detail else ""
        if url_source == "argument":
            advice = f"is a server running there and is the URL right? Start one with '{self.START_SERVER}'."
        elif url_source == "env":
            advice = (f"the URL comes from $SCHOLARLY_NLP_GROBID_URL: start a server there with "
                      f"'{self.START_SERVER}', or correct that variable.")
        else:
            advice = (f"start one with '{self.START_SERVER}', or name your server with --grobid-url "
                      "or $SCHOLARLY_NLP_GROBID_URL.")
        self.detail = detail
        super().__init__(f"No GROBID server answers at {url}{extra}; {advice}")

    def __reduce__(self):
        return (type(self), (self.url, self.detail, self.url_source))


class GrobidProcessingError(InputError):
    """The GROBID server answered but could not process the file (HTTP 500, timeout...)."""


class PluginError(ScholarlyNLPError):
    """A plugin failed to load or to register (raised only in strict mode)."""


class UnknownComponentError(ScholarlyNLPError):
    """A pipeline asked for a component no installed plugin registers."""

    def __init__(self, name: str, known: list[str]):
        self.name = name
        self.known = list(known)
        known_list = ", ".join(sorted(known)) or "none"
        super().__init__(
            f"Unknown component {name!r}: no installed scholarly_nlp plugin registers it "
            f"(known: {known_list})."
        )

    def __reduce__(self):
        return (type(self), (self.name, self.known))


class UnknownPipelineError(ScholarlyNLPError):
    """A pipeline name that is neither an installed pipeline package nor a pipeline folder."""

    def __init__(self, name: str):
        self.name = name
        super().__init__(
            f"no trained pipeline at {name}: it is neither an installed pipeline package nor a folder with a "
            f"config.cfg. Install the shipped scholarly_core (pip install -r requirements.txt at the repository "
            f"root), or pass the folder a training run wrote ('weasel run all' in a project, e.g. "
            f"projects/figure_ranker/training/model-best)."
        )

    def __reduce__(self):
        return (type(self), (self.name,))


class IncompatiblePipelineError(ScholarlyNLPError):
    """A pipeline built for another version of scholarly_nlp than the installed one."""

    def __init__(self, path: str, required: str, installed: str, built_with: Optional[str] = None):
        self.path, self.required, self.installed, self.built_with = path, required, installed, built_with
        built = f" (built with {built_with})" if built_with else ""
        super().__init__(
            f"{path}: this pipeline needs scholarly_nlp {required}{built}, but {installed} is installed. Install a "
            f"matching scholarly_nlp, or retrain and package the pipeline with this one (weasel run all in its projects)."
        )

    def __reduce__(self):
        return (type(self), (self.path, self.required, self.installed, self.built_with))


class UnknownNameError(ScholarlyNLPError):
    """A reader, metric or aspect name that nothing registered."""

    def __init__(self, kind: str, name: str, known: list[str]):
        self.kind = kind
        self.name = name
        self.known = list(known)
        known_list = ", ".join(sorted(known)) or "none"
        super().__init__(f"Unknown {kind} {name!r} (known: {known_list}).")

    def __reduce__(self):
        return (type(self), (self.kind, self.name, self.known))
