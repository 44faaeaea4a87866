"""The citation marker `[doc_id p.N]`: how Carta writes it (`cite_label`), how an answer's
markers are read (`parse`), and how a marker that a document wrote is defused
(`neutralise`).

Only markers Carta's answerers or the LLM wrote are citations. A retrieved text can hold
marker look-alikes (a PDF that says "documented in [7776c2c8d21fe1b2 p.1]"); quoted into
an answer or sent to the LLM as is, they would read as Carta's own citations and the UI
would link them. So every text taken from a document passes `neutralise` before it goes
into an answer or a prompt: the brackets of whatever `parse` would read become `⟦ ⟧`.
The text stays readable, `parse` no longer sees a citation in it, and the UI (which links
only `[...]`) shows it as plain text.
"""

from __future__ import annotations

import re

# one bracket may hold several: [abc p.2], [abc p. 2; def p.3], [abc, p.2]
BRACKET = re.compile(r"\[([^\[\]]{1,400})\]")
ONE = re.compile(r"([A-Za-z0-9_.:-]+?)\s*,?\s+(?:p|pp|page|pág|pag)\.?\s*(\d{1,5})\b", re.IGNORECASE)
GRAPH_LABEL = "[graph]"
OPEN_QUOTED, CLOSE_QUOTED = "⟦", "⟧"  # U+27E6/U+27E7: NFKC keeps them, no citation regex reads them
_GRAPH = re.compile(r"\[\s*graph\s*\]", re.IGNORECASE)
_PASSES = 8  # nested look-alikes ("[[a p.1]]") need one pass per level; deeper ones lose all brackets


def cite_label(doc_id: str, page_no: int) -> str:
    """The marker Carta writes for a page: `[doc_id p.N]`."""
    return f"[{doc_id} p.{page_no}]"


def parse(answer: str) -> list[tuple[int, str, int]]:
    """(offset, doc_id, page_no) of every page citation in the text."""
    found = []
    for bracket in BRACKET.finditer(answer):
        for one in ONE.finditer(bracket.group(1)):
            found.append((bracket.start(), one.group(1), int(one.group(2))))
    return found


def neutralise(text: str, *, fragment: bool = False) -> str:
    """`text` (taken from a document) with every citation look-alike defused: the brackets
    of `[id p.N]`-shaped markers and of `[graph]` become ⟦ ⟧, other brackets stay.

    `fragment`: the text is a piece cut from a longer one (a quoted sentence), so a marker
    may have been cut in two ("... desk [7776c2c8d21fe1b2 p." | "9] ..."); its unmatched
    brackets are defused too.

    >>> neutralise("documented in [7776c2c8d21fe1b2 p.1] by the vendor [sic]")
    'documented in ⟦7776c2c8d21fe1b2 p.1⟧ by the vendor [sic]'
    """
    if "[" not in text and not (fragment and "]" in text):
        return text
    for _ in range(_PASSES):
        defused = _GRAPH.sub(_quoted, BRACKET.sub(_defuse, text))
        if defused == text:
            return _unmatched_defused(text) if fragment else text
        text = defused
    # a look-alike nested deeper than _PASSES levels: no square bracket survives
    return text.replace("[", OPEN_QUOTED).replace("]", CLOSE_QUOTED)


def _defuse(bracket: re.Match[str]) -> str:
    return _quoted(bracket) if ONE.search(bracket.group(1)) else bracket.group(0)


def _quoted(match: re.Match[str]) -> str:
    return OPEN_QUOTED + match.group(0)[1:-1] + CLOSE_QUOTED


def _unmatched_defused(text: str) -> str:
    """`text` with the square brackets that have no partner turned into ⟦ ⟧."""
    opened: list[int] = []
    unmatched: list[int] = []
    for i, ch in enumerate(text):
        if ch == "[":
            opened.append(i)
        elif ch == "]":
            if opened:
                opened.pop()
            else:
                unmatched.append(i)
    if not opened and not unmatched:
        return text
    chars = list(text)
    for i in opened + unmatched:
        chars[i] = OPEN_QUOTED if chars[i] == "[" else CLOSE_QUOTED
    return "".join(chars)
