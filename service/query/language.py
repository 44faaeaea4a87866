"""The language a retrieved text is written in (en, pt, fr, es), from its function words and
accents, or None when the text does not say (a table of numbers and names, a card written in
two languages). Fusion (service/query/fusion.py) uses it to know which pages a monolingual
text channel could not have matched to the question."""

from __future__ import annotations

import re
from collections import Counter

# Frequent function words of running text, per language; words two languages share often
# ("a", "as", "de", "en", "la") are left out, so each word votes for one language only.
_WORDS: dict[str, frozenset[str]] = {
    "en": frozenset(
        "the of and to is are was were for with by on that this from at which be it an or has have "
        "not its their than been these those per into also between".split()
    ),
    "pt": frozenset(
        "da do das dos e em para com que os na nas nos no por uma um ao aos são não pela pelo pelos "
        "pelas foi mais entre é à ou seu sua como sobre também".split()
    ),
    "fr": frozenset("le les et des du est dans pour une sur au aux par qui ont été sont ce cette".split()),
    "es": frozenset("el los y del las por una es con para al se lo está entre como".split()),
}
_ACCENTS: dict[str, str] = {"pt": "ãõçâêô", "fr": "èàùûëîœç", "es": "ñ¿¡"}
_WORD = re.compile(r"\w+", re.UNICODE)
MIN_VOTES = 3  # fewer function words: the text does not say its language
MIN_SHARE = 0.6  # the winning language's share of the votes; less: mixed or unclear


def text_language(text: str) -> str | None:
    """The language `text` is written in, or None when fewer than MIN_VOTES function words
    say it or no language has MIN_SHARE of them."""
    lowered = text.lower()
    counts = Counter(_WORD.findall(lowered))
    votes = {lang: sum(counts[word] for word in words) for lang, words in _WORDS.items()}
    for lang, accents in _ACCENTS.items():
        votes[lang] += min(sum(lowered.count(ch) for ch in accents), 3)  # accents confirm, not decide
    total = sum(votes.values())
    if total < MIN_VOTES:
        return None
    best = max(votes, key=lambda lang: votes[lang])
    return best if votes[best] >= MIN_SHARE * total else None
