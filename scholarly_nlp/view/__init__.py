"""See a paper: an analysed paper as one self-contained HTML page, and a run's index.

``scholarly_nlp.render(doc, nlp)`` returns the page; ``scholarly_nlp.display(doc, nlp)``
shows it in Jupyter (as displaCy's ``render(jupyter=True)`` does); ``scholarly-nlp analyze
--format html`` writes one page per paper and an ``index.html``.
"""

from __future__ import annotations

from typing import Any, Optional

from spacy.language import Language
from spacy.tokens import Doc

from .index_page import render_index
from .page import render


def display(doc: Doc, nlp: Optional[Language] = None, **options: Any) -> Any:
    """Show ``render(doc, nlp)`` in a Jupyter notebook (IPython's ``HTML``, returned)."""
    try:
        from IPython.display import HTML, display as show
    except ImportError as error:  # not in a notebook environment
        raise ImportError("scholarly_nlp.display needs IPython (a Jupyter notebook); use "
                          "scholarly_nlp.render(doc, nlp) for the HTML string") from error
    page = HTML(render(doc, nlp, **options))
    show(page)
    return page


__all__ = ["display", "render", "render_index"]
