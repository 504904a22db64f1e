"""The JSON Schema of the paper JSON export (``paper.schema.json``, format_version 2).

Other tools can validate an export with any JSON Schema (draft 2020-12) validator; in
Python, :func:`validate_export` does it with the ``jsonschema`` package::

    from scholarly_nlp.schema import validate_export
    validate_export(json.load(open("parsed/D14-1003.json")))
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

SCHEMA_FILE = "paper.schema.json"


@lru_cache(maxsize=1)
def load_schema() -> dict:
    """The export's JSON Schema as a dict."""
    return json.loads(resources.files(__name__).joinpath(SCHEMA_FILE).read_text(encoding="utf-8"))


def validate_export(data: Any) -> None:
    """Raise ``jsonschema.ValidationError`` unless ``data`` is a valid export (needs ``jsonschema``)."""
    try:
        import jsonschema
    except ImportError as exc:  # pragma: no cover - an optional dependency
        raise ImportError("validating an export needs the 'jsonschema' package (pip install 'jsonschema>=4,<5')") from exc
    schema = load_schema()
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is not None:
        raise error
