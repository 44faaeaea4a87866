"""Does OCR output read as text? Tesseract run over a satellite scene or a DEM preview
"reads" texture as words ('Eat "AR = _ a pe'); indexing that puts junk in BM25 and in
answers. A picture's OCR text is kept only when it reads as text.

The measure is the share of the text's non-space characters that sit in word-like
tokens: alphabetic (accents, inner hyphens and apostrophes allowed), at least 3 letters,
a natural case pattern (lower, Title or UPPER), a vowel, no letter three times in a row
and no run of more than 4 consonants; numbers of two digits or more (2.025.045, 16/17,
99,62%) count too, so a scanned table reads as text. Short words ("a", "de", "of") count against the
share, but real prose in English or Portuguese still scores far above junk (tests:
tests/ingest/test_readable.py, with the corpus rasters and a rendered page of text).
A page's OCR text is kept whole when it scores at least PAGE_MIN_SCORE (junk of the
corpus rasters scores 0.26-0.40, the corpus charts 0.56-0.84, prose 0.8-0.95), else dropped.
"""

from __future__ import annotations

import re

from ingest.loaders import TextBlock

PAGE_MIN_SCORE = 0.5
_TOKEN = re.compile(r"\S+")
_EDGE_PUNCT = "\"'“”‘’«»()[]{}.,;:!?"
_VOWELS = set("aeiouyáàâãéêíóôõúü")
_CONSONANT_RUN = re.compile(r"[^aeiouyáàâãéêíóôõúü\W\d_]{5,}")
_TRIPLE = re.compile(r"(\w)\1\1")
_WORD = re.compile(r"^[^\W\d_]+(?:['’-][^\W\d_]+)*$")
_NUMBER = re.compile(r"^[-+]?\d[\d.,/:%-]*\d%?$")  # 2.025.045, 16/17, 99,62%, 2001-2011


def is_wordlike(token: str) -> bool:
    """Whether a token looks like a word of a language rather than OCR texture."""
    word = token.strip(_EDGE_PUNCT)
    if _NUMBER.match(word):
        return True
    if len(word) < 3 or not _WORD.match(word):
        return False
    if not (word.islower() or word.isupper() or word.istitle()):
        return False
    lower = word.lower()
    return bool(_VOWELS & set(lower)) and not _TRIPLE.search(lower) and not _CONSONANT_RUN.search(lower)


def reading_score(text: str) -> float:
    """The share of non-space characters in word-like tokens (0 for empty text)."""
    tokens = _TOKEN.findall(text)
    total = sum(len(t) for t in tokens)
    if total == 0:
        return 0.0
    return sum(len(t.strip(_EDGE_PUNCT)) for t in tokens if is_wordlike(t)) / total


def readable_blocks(blocks: list[TextBlock]) -> list[TextBlock]:
    """The OCR blocks worth indexing: all of them when the page reads as text, else none.
    Page level, not block level: a chart's axis ticks ("0", "os") are short blocks that
    would not pass alone, and a real page keeps what it had before this check."""
    return blocks if reading_score(" ".join(b.text for b in blocks)) >= PAGE_MIN_SCORE else []
