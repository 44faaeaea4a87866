"""Rules that split a multi-hop question into the sub-questions it joins (Portuguese and
English), so each part can be retrieved on its own: the planner (service/query/planner.py)
searches every part and keeps the best pages of each.

What is split:
- two questions joined by "and" / "e" ("How many X ... and what was Y ..."), and lists of
  asked things ("the A, the B and the C");
- "both A and B" / "tanto A quanto B", and comparisons ("between A and B", "A or B");
- "which X of the Y that ..." / "qual X dos Y que ...": the inner clause is a hop of its own.

A leading context ("For Assam,", "Segundo o relatório X,") and the names of the first part
go with a later part that only points back at them ("its", "do estado"), so each part can
be searched alone. Nothing is split inside a name or a number ("Mato Grosso e Goiás" is one
part when no question word follows the "e").
"""

from __future__ import annotations

import re

# Words that start an asked clause after "and" / "e" (a new question, or a new asked thing).
_CLAUSE_START_EN = (
    r"what|which|who|whom|whose|where|when|why|how|is|are|was|were|did|does|do|its|their|his|her|"
    r"the|that|this|these|those|in|to|from|for"
)
_CLAUSE_START_PT = (
    r"qual|quais|quanto|quanta|quantos|quantas|quem|onde|quando|como|por que|que|o|a|os|as|"
    r"seu|sua|seus|suas|em|no|na|nos|nas|do|da|para"
)
_AND = re.compile(
    rf",?\s+(?:and|e)\s+(?=(?:{_CLAUSE_START_EN}|{_CLAUSE_START_PT})\b)",
    re.IGNORECASE,
)
# A list of asked things: ", the B and the C" / ", o B e a C" after a question word.
_LIST_ITEM = re.compile(r",\s+(?=(?:the|o|a|os|as)\s)", re.IGNORECASE)
_BOTH = re.compile(
    r"\b(?:both|tanto)\s+(?P<a>.+?)\s+(?:and|quanto|como)\s+(?P<b>.+?)(?=[,?;:]|$)", re.IGNORECASE
)
_BETWEEN = re.compile(r"\b(?:between|entre)\s+(?P<a>.+?)\s+(?:and|e)\s+(?P<b>.+?)(?=[,?;:]|$)", re.IGNORECASE)
_OR = re.compile(r",\s*(?P<a>[^,?]+?)\s+(?:or|ou)\s+(?P<b>[^,?]+?)\s*(?=[,?]|$)", re.IGNORECASE)
_OF_THAT = re.compile(
    r"^(?:which|what|qual|quais)\s+\w+\s+(?:of|among|dos|das|do|da|de|entre os|entre as)\s+"
    r"(?P<inner>[^,?]+?)\s+(?:that|which|who|que|are|is|were|was|estão|está|são|é|foram)\b",
    re.IGNORECASE,
)
_CONTEXT = re.compile(
    r"^(?P<ctx>(?:for|in|according to|per|segundo|conforme|de acordo com|para|no|na|em)\b[^,]{3,80}),\s+",
    re.IGNORECASE,
)
_QUESTION_WORD = re.compile(
    r"\b(?:what|which|who|where|when|why|how|que|qual|quais|quanto|quanta|quantos|quantas|quem|onde|quando|como)\b",
    re.IGNORECASE,
)
_PREPOSITION = re.compile(r"^(?:no|na|nos|nas|em|do|da|in|on|at|from|for|to)\b", re.IGNORECASE)
# A part that points back at what an earlier part named.
_ANAPHOR = re.compile(
    r"\b(?:its|their|it|that (?:state|region|product|station|city)|the same|there|"
    r"seu|sua|seus|suas|dele|dela|deles|delas|do estado|da região|da regiao|do mesmo|da mesma|"
    r"na mesma|no mesmo|mesmo ano|same year|lá)\b",
    re.IGNORECASE,
)
_NAME = re.compile(r"\b[A-ZÀ-Ý][\wÀ-ÿ.-]*(?:\s+(?:d[aeo]s?\s+|of\s+|and\s+)?[A-ZÀ-Ý][\wÀ-ÿ.-]*)*")
_MIN_WORDS = 3  # a shorter part is a name or a fragment, not something to search
MAX_PARTS = 4


def _words(text: str) -> int:
    return len(re.findall(r"\w+", text))


def _names(text: str) -> list[str]:
    """Capitalised names and codes of `text`, the first word of the text excepted."""
    found = []
    for m in _NAME.finditer(text):
        if m.start() == 0 or not m[0].strip():
            continue
        found.append(m[0].strip())
    codes = re.findall(r"\b\w+[-/][\w/-]*\d[\w/-]*\b", text)
    found += [c for c in codes if any(ch.isalpha() for ch in c)]  # codes: CT-SMA-0427/2024, not 2001-2011
    return list(dict.fromkeys(found))


def _split_clauses(text: str) -> list[str]:
    """Parts joined by "and"/"e"; a part followed by "and the ..." is a list ("the A, the B
    and the C"), whose items are parts too."""
    parts = [p.strip(" ,;") for p in _AND.split(text)]
    out: list[str] = []
    for i, part in enumerate(parts):
        listed = i + 1 < len(parts) and re.match(r"(?:the|o|a|os|as)\s", parts[i + 1], re.IGNORECASE)
        items = [item.strip(" ,;") for item in _LIST_ITEM.split(part)] if listed else [part]
        if len(items) > 1 and all(_words(item) >= _MIN_WORDS for item in items):
            out.extend(items)
        else:
            out.append(part)
    return [p for p in out if p]


def _elliptic(part: str, first: str) -> str:
    """A part that is only a complement ("no relatório do Recife"), completed with the first
    part's head up to where the same preposition starts there."""
    m = _PREPOSITION.match(part)
    if part == first or not m:
        return part
    at = re.search(rf"\s{re.escape(m[0])}\s", first, re.IGNORECASE)
    return f"{first[: at.start()]} {part}" if at else part


def _with_context(part: str, context: str, first: str) -> str:
    """The part, searchable alone: the question's context, and the first part's names when
    the part only points back at them."""
    extra = []
    if context and context.lower() not in part.lower():
        extra.append(context)
    if part != first and _ANAPHOR.search(part):
        extra += [n for n in _names(first) if n.lower() not in part.lower()]
    return (", ".join(extra) + ": " + part) if extra else part


def decompose(question: str) -> list[str]:
    """The sub-questions of `question`, in order; [question] when it asks one thing."""
    text = " ".join(question.split()).rstrip(" ?")
    context = ""
    if (m := _CONTEXT.match(text)) and not _QUESTION_WORD.search(m["ctx"]):
        context, text = m["ctx"], text[m.end() :]
    parts: list[str] = []
    pair = _BOTH.search(text) or _BETWEEN.search(text)
    if pair and _words(pair["a"]) <= 8 and _words(pair["b"]) <= 10 and not _AND.search(text[pair.end() :]):
        head, tail = text[: pair.start()].rstrip(), text[pair.end() :]
        parts = [f"{head} {pair['a']}{tail}", f"{head} {pair['b']}{tail}"]
    else:
        for clause in _split_clauses(text):
            if (m := _OR.search(clause)) and _words(m["a"]) <= 4 and _words(m["b"]) <= 4:
                rest = clause[: m.start()] + clause[m.end() :]
                parts += [f"{rest} {m['a']}", f"{rest} {m['b']}"]
            else:
                parts.append(clause)
        if len(parts) == 1 and (m := _OF_THAT.search(text)):
            parts = [m["inner"], text]
    parts = [p for p in parts if _words(p) >= _MIN_WORDS]
    if len(parts) < 2:
        return [question]
    first = parts[0]
    out = [_with_context(_elliptic(p, first), context, first) for p in parts]
    return list(dict.fromkeys(out))[:MAX_PARTS]
