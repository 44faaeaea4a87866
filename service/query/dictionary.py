"""Word translations from the FreeDict bilingual dictionaries that Debian ships in dictd
format (packages dict-freedict-por-eng, -eng-por, -fra-eng, -eng-fra; about 10k headwords
each, GPL data). The hand glossary of service/query/translate.py keeps the report words a
general dictionary lacks ("autuação", "safra", "balneabilidade"); this adds the everyday
vocabulary around them ("movimentos" = "movements", "guia" = "guide", "cabeça" = "head"),
so that a Portuguese or French question meets the words of an English page and back.

Read once, lazily, from CARTA_DICTIONARY_DIR (service/settings.py; Debian's /usr/share/dictd
by default). When the files are missing the glossary alone is used and one log line says
how to install them: answers still work, they only match fewer words across languages.
"""

from __future__ import annotations

import gzip
import logging
import re
from functools import lru_cache
from pathlib import Path

from geo.folding import fold

log = logging.getLogger(__name__)

DEFAULT_DIR = Path("/usr/share/dictd")
DICTIONARIES = ("freedict-por-eng", "freedict-fra-eng", "freedict-eng-por", "freedict-eng-fra")
INSTALL_HINT = "apt-get install " + " ".join(f"dict-{stem}" for stem in DICTIONARIES)
MAX_SENSES = 2  # the first senses only: later ones are rare uses ("banco": bank, bench, ... easel)
MAX_WORDS = 4  # translations kept per headword
MIN_LETTERS = 3

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_SENSE = re.compile(r"^\s*(\d+)\.\s*(.*)$")
_PLAIN_WORD = re.compile(rf"^[a-z]{{{MIN_LETTERS},}}$")

_folder = DEFAULT_DIR
_uses = 0  # how many times the folder changed: callers key their caches on it


def use(folder: Path) -> None:
    """Read the dictionaries from `folder` (the settings' dictionary_dir) from now on."""
    global _folder, _uses
    if folder != _folder:
        _folder = folder
        _uses += 1
        translations_of.cache_clear()
        _table.cache_clear()


def dictionaries_read() -> int:
    """A number that changes whenever another dictionary folder is used (for callers' caches)."""
    return _uses


def _b64(text: str) -> int:
    """dictd's base-64 offsets and lengths."""
    n = 0
    for ch in text:
        n = n * 64 + _B64.index(ch)
    return n


def senses(body: str) -> list[str]:
    """The translations of one dictd entry, in order of its senses: the headword line (with
    its pronunciation) dropped, sense numbers and notes in parentheses removed, every
    comma- or semicolon-separated translation that is one plain word, folded."""
    words: list[str] = []
    sense = 1
    for line in body.splitlines()[1:]:
        m = _SENSE.match(line)
        if m:
            sense, line = int(m[1]), m[2]
        if sense > MAX_SENSES:
            break
        line = re.sub(r"\([^)]*\)|\[[^]]*\]|<[^>]*>", " ", line)
        for part in re.split(r"[,;]", line):
            word = fold(part.strip())
            if _PLAIN_WORD.match(word) and word not in words:
                words.append(word)
    return words[:MAX_WORDS]


def read_dictd(index: Path, data: Path) -> dict[str, list[str]]:
    """headword (folded, one plain word) -> its translations, from a dictd index + .dict.dz."""
    text = gzip.decompress(data.read_bytes())
    out: dict[str, list[str]] = {}
    for line in index.read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) != 3 or parts[0].startswith("00database"):
            continue
        head = fold(parts[0])
        if not _PLAIN_WORD.match(head):
            continue
        start, length = _b64(parts[1]), _b64(parts[2])
        words = senses(text[start : start + length].decode("utf-8", "replace"))
        if words:
            out.setdefault(head, [])
            out[head] += [w for w in words if w not in out[head] and w != head]
    return out


@lru_cache(maxsize=1)
def _table() -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """(Portuguese or French word -> English words, English word -> Portuguese and French
    words), all folded, each entry read both ways, in the dictionaries' order of senses."""
    to_english: dict[str, list[str]] = {}
    from_english: dict[str, list[str]] = {}
    missing = []
    for stem in DICTIONARIES:
        index, data = _folder / f"{stem}.index", _folder / f"{stem}.dict.dz"
        if not (index.is_file() and data.is_file()):
            missing.append(stem)
            continue
        try:
            entries = read_dictd(index, data)
        except (OSError, ValueError, EOFError) as exc:
            log.warning("Dictionary %s could not be read (%s); it is left out.", index, exc)
            continue
        forward, backward = (
            (from_english, to_english) if stem.startswith("freedict-eng") else (to_english, from_english)
        )
        for head, words in entries.items():
            _extend(forward, head, words)
            for word in words:  # "movimento" -> "movement" read back: "movement" -> "movimento"
                _extend(backward, word, [head])
    if missing:
        log.info(
            "FreeDict dictionaries %s not found in %s: cross-language word matching uses the glossary "
            "alone. Install them with: %s (or set CARTA_DICTIONARY_DIR).",
            ", ".join(missing),
            _folder,
            INSTALL_HINT,
        )
    return (
        {w: tuple(t) for w, t in to_english.items()},
        {w: tuple(t) for w, t in from_english.items()},
    )


def _extend(table: dict[str, list[str]], word: str, words: list[str]) -> None:
    known = table.setdefault(word, [])
    known += [w for w in words if w not in known]


# inflected ending -> dictionary-form endings to try (plurals, participles, 3rd person; pt, fr, en)
_LEMMA_ENDINGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("oes", ("ao",)),
    ("aes", ("ao",)),
    ("ais", ("al",)),
    ("eis", ("el",)),
    ("ies", ("y",)),
    ("ados", ("ar",)),
    ("adas", ("ar",)),
    ("ado", ("ar",)),
    ("ada", ("ar",)),
    ("idos", ("er", "ir")),
    ("idas", ("er", "ir")),
    ("ido", ("er", "ir")),
    ("ida", ("er", "ir")),
    ("ees", ("er",)),
    ("ee", ("er",)),
    ("ou", ("ar",)),
    ("am", ("ar", "er", "ir")),
    ("em", ("er", "ir")),
    ("ed", ("", "e")),
    ("ing", ("", "e")),
    ("es", ("", "e", "er")),  # "raccordés" (folded) -> "raccorder"
    ("s", ("",)),
    ("a", ("ar",)),
    ("e", ("er", "ir", "re")),
)


def lemmas(word: str) -> list[str]:
    """The word and the dictionary forms it may be an inflection of ("movimentos" ->
    "movimento", "adotado" -> "adotar", "heads" -> "head"); the dictionary keeps the ones it has."""
    out = [word]
    for ending, bases in _LEMMA_ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= MIN_LETTERS:
            out += [word[: -len(ending)] + base for base in bases]
    return out


@lru_cache(maxsize=65536)
def translations_of(word: str) -> frozenset[str]:
    """The English translations of a folded Portuguese or French word (or of its dictionary
    form); empty when none. English words get none: read back through French or Portuguese
    they come home as false synonyms ("income" -> "revenu" -> "revenue")."""
    return frozenset(english_of(word, most=MAX_WORDS))


def english_of(word: str, most: int = 2) -> list[str]:
    """The first English translations of a folded Portuguese or French word ([] when none)."""
    to_english, _ = _table()
    return next((list(to_english[form][:most]) for form in lemmas(word) if form in to_english), [])


def load() -> None:
    """Read the dictionaries now (a first question would otherwise wait for them)."""
    _table()


def is_headword(word: str) -> bool:
    """Whether a folded Portuguese or French word is itself a headword of the dictionaries
    ("estado", "tratado", "medida": nouns), not only a form of one ("registrado")."""
    return word in _table()[0]


def is_english(word: str) -> bool:
    """Whether a folded word is an English headword of the dictionaries ("area", "total")."""
    return word in _table()[1]
