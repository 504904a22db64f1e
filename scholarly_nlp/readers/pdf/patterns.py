"""Text patterns that several passes share: caption openers, numbered section heads, the
abstract label, sentence-final punctuation.
"""

from __future__ import annotations

import re


CAPTION_RE = re.compile(
    r"^(?P<word>Figures?|FIGURES?|Fig\.?|FIG\.?|Tables?|TABLES?|Tab\.)\s*"
    r"(?P<label>(?:[A-Z]\.?|S)?\d{1,3}(?:\.\d{1,2})?[a-z]?|[IVX]{1,5})"
    r"(?:\s?[-\u2013]\s?\d{1,3}[a-z]?)?"  # "Figures 5-7.": one caption for a plate of figures
    r"(?P<delim>\s*[:.|\u2014\u2013]|\s*$|\s+(?=[A-Z]))"
)
#: "2.1 Data", "3. Results", Wiley's "1 | INTRODUCTION"
NUMBERED_HEAD_RE = re.compile(r"^(?P<num>\d{1,2}(?:\.\d{1,2}){0,4})\.?\s+(?:\|\s+)?(?P<title>[^\W\d_].*)$")
ABSTRACT_RE = re.compile(
    r"^(?:abstract|a b s t r a c t)\b\s*[:.\u2014\u2013-]?\s*(?P<rest>.*)$", re.IGNORECASE
)
TERMINAL_PUNCT = (".", "!", "?", ":")
#: The end of a table-of-contents entry: a dot leader and its page ("....... 12"), or a page in
#: parentheses ("(p. 13)", "(pp. 4-6)", "(page 7)").
CONTENTS_ENTRY_RE = re.compile(r"(?:(?:\.\s?){4,}\s*\d*|\((?:pp?\.?|pages?)\s*\d+(?:\s*[-\u2013]\s*\d+)?\))$",
                               re.IGNORECASE)
#: A footnote's mark where its text opens: a number, or one to three signs ("*", "\u2217",
#: "\u2020", "\u2021", "\u00a7", "\u00b6"); a regex fragment, for the reader's classifier and
#: for the footnote block's label.
FOOTNOTE_MARK = r"\d{1,2}|[*\u2217\u2020\u2021\u00a7\u00b6]{1,3}"
