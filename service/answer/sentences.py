"""How a chunk's text is cut into the sentences the relevance gate scores and the
sentence-vector store embeds at ingestion, and which of them it also embeds translated: one
definition, so both cut and translate the same way."""

from __future__ import annotations

import re
from functools import lru_cache

from service.query.dictionary import dictionaries_read
from service.query.language import text_language
from service.query.translate import translate

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


def in_encoder_language(sentence: str, passage: str, encoder_language: str | None) -> str | None:
    """The sentence's word-for-word translation into the text encoder's language (English:
    translate.py reads Portuguese and French into it), when its passage is written in another;
    None when the passage's language is the encoder's or unclear, or too few words translate.
    An English-only encoder embeds "Le parc métropolitain progresse de 8,6 % avec 820 MW
    raccordés en 2020" far from "how much capacity was connected to the mainland fleet"."""
    if encoder_language != "en":
        return None
    language = text_language(passage)
    if language is None or language == encoder_language:
        return None
    return _translated(sentence, language, dictionaries_read())


@lru_cache(maxsize=16384)  # the same evidence sentences come back question after question
def _translated(sentence: str, language: str, _read: int) -> str | None:
    """translate(), cached while the same dictionaries are in use (`_read` counts them)."""
    return translate(sentence, language)
