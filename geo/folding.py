"""Accent and case folding, so spelling variants of a name or word compare equal.

"São Paulo", "SAO PAULO" and "sao paulo" all fold to "sao paulo". The gazetteer keys
its names on it, the graph matches categories and POI names with it, the answerers
and the evaluation compare words with it: one rule everywhere, so a name the gazetteer
found is found again by every later comparison.
"""

from __future__ import annotations

import re
import unicodedata

# letters NFKD does not decompose into a base letter plus a combining mark
_SPECIAL = str.maketrans({"ø": "o", "æ": "ae", "œ": "oe", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i"})
_COMBINING_RE = re.compile(r"[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")


def fold(text: str) -> str:
    """Accent- and case-folded text (same length in words; spacing and punctuation kept)."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return _COMBINING_RE.sub("", decomposed).translate(_SPECIAL)


def fold_words(text: str) -> str:
    """`fold` with runs of whitespace collapsed to one space and the ends stripped, for
    comparing texts word by word ("São  Paulo\\n" -> "sao paulo")."""
    return " ".join(fold(text).split())
