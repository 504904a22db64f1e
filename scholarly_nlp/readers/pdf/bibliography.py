"""The bibliography: whether its entries are numbered (so "[12]" in the text is a citation).

Consumes the first lines of the entries that classification skipped; produces a flag.
"""

from __future__ import annotations

import re


def numbered_bibliography(reference_lines: list[str]) -> bool:
    """Whether at least two entries open with "[N]" or "N. " (numeric citations)."""
    numbered = sum(1 for t in reference_lines if re.match(r"^\s*(?:\[\d{1,3}\]|\d{1,3}\.\s)", t))
    return numbered >= 2
