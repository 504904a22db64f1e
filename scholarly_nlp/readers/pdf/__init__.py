"""The built-in PDF reader: a paper's PDF to a :class:`~scholarly_nlp.paper.Paper`, no GROBID needed.

It works in passes over words and lines (never over every character in Python), one module
each; :func:`~scholarly_nlp.readers.pdf.reader.read_pdf` runs them in this order:

- ``document``: check and open the file (and, after extraction, require a text layer);
- ``extraction``: pypdfium2 gives each page's text; every word gets the box of its first and
  last character, words become line *segments* (a wide gap, as between columns or table
  cells, starts a new segment); ``typography`` reads fonts and sizes;
- ``furniture``: running headers and footers, page numbers, review line numbers and text set
  at an angle in the margin (download stamps, arXiv's id) are dropped;
- ``layout``: each page is cut into columns at its gutter (a page whose front matter hides
  it takes the paper's usual one) and read band by band (a full-width band, then the left
  column, then the right one);
- ``blocks``: lines are grouped into visual blocks by spacing, size and weight;
- ``captions`` and ``floats``: each caption gets the figure region next to it (``graphics``):
  the graphics and the non-body text between the caption and the nearest body text; that
  region is left out of the paragraphs;
- ``title`` and ``classification``: blocks become the title, the abstract, headings,
  paragraphs (split on indentation, continued across columns and pages), footnotes and
  display formulas (``formulas``: math blocks with their printed number, or with a relation),
  or are dropped (front matter); the reference list's blocks are set aside;
- ``bibliography``: the reference list is cut into entries (printed numbers, hanging or
  first-line indents, gaps) and ``reference_parser`` reads each one's authors, year, title,
  venue and DOI;
- ``assembly``: units become the Paper's blocks (``dehyphenation``), paragraphs get their
  inline references (``figure_mentions``: figures, tables and formulas; ``citations`` finds the citation markers and links
  them to the entries by number, or by first author and year);
- ``front_matter``: the authors under the title, with their affiliations and e-mail addresses;
- ``images``: on request, each figure's region is rendered to a PNG.
"""

from .images import RENDER_SCALE
from .reader import PathLike, read_pdf

__all__ = ["RENDER_SCALE", "PathLike", "read_pdf"]
