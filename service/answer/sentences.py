"""How a chunk's text is cut into the sentences the relevance gate scores and the
sentence-vector store embeds at ingestion: one definition, so both cut the same way."""

from __future__ import annotations

import re

EMBED_CHARS = 300  # a sentence is embedded from its first EMBED_CHARS characters
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")

# a line break inside a sentence: the line does not end like one and the next goes on in
# lower case or with a number ("...troisième région solaire en France avec" | "945 MW raccordés")
_CONTINUED = re.compile(r"(?<![.!?;:])\n+(?=[a-zà-ÿ0-9])")


def sentences(text: str, *, table: bool = False) -> list[str]:
    """The sentences of a chunk's text. PDF text blocks break paragraphs into lines that are
    not sentences; a break followed by lower case or a number continues the sentence. A
    table chunk's lines are its rows: each stays one line."""
    if not table:
        text = _CONTINUED.sub(" ", text)
    return [" ".join(s.split()) for s in _SENTENCE.split(text) if s.strip()]
