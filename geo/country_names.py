"""Country names in the languages Carta reads, from the CLDR data Babel ships.

A Portuguese question names "Índia" or "Estados Unidos", the French report writes "Inde" and
"États-Unis", the English one "India" and "United States": the same country, and the answer's
evidence check (service/answer/gate.py) and the gazetteer (geo/gazetteer.py) must see it so.
CLDR's territory names are kept by the Unicode consortium for every locale; writing such a
table by hand (as the gazetteer first did for Portuguese) covers a few dozen countries in one
language. Only ISO 3166 countries are kept: CLDR's regions ("Europe", "Americas") and
pseudo-territories are not countries.
"""

from __future__ import annotations

import re
from functools import lru_cache

from geo.folding import fold

NAME_LANGUAGES = ("en", "pt", "fr", "es", "de", "it")  # the corpus' and the users' languages
_HYPHENS = re.compile(r"[-‐‑‒–—_]+")
_ISO_COUNTRY = re.compile(r"^[A-Z]{2}$")
# CLDR codes of two letters that are no country ("EU" European Union, "UN", "EZ" Eurozone,
# "QO" Outlying Oceania, "XA"/"XB" pseudo-locales, "ZZ" unknown)
_NOT_COUNTRIES = frozenset({"EU", "EZ", "UN", "QO", "XA", "XB", "ZZ"})


def spaced(name: str) -> str:
    """A name folded, hyphens as spaces, one space between words ("États-Unis" = "etats unis")."""
    return " ".join(_HYPHENS.sub(" ", fold(name)).split())


@lru_cache(maxsize=1)
def _tables() -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """(ISO code -> {language: its name there}; spaced name in any language -> ISO code)."""
    from babel import Locale

    names: dict[str, dict[str, str]] = {}
    for language in NAME_LANGUAGES:
        for code, name in Locale.parse(language).territories.items():
            if _ISO_COUNTRY.match(code) and code not in _NOT_COUNTRIES:
                names.setdefault(code, {})[language] = name
    by_name: dict[str, str] = {}
    for code, written in names.items():
        for name in written.values():
            by_name.setdefault(spaced(name), code)
    return names, by_name


def country_names(iso: str, languages: tuple[str, ...] = NAME_LANGUAGES) -> tuple[str, ...]:
    """The country's names in `languages` as CLDR writes them, in that order, each once; ()
    for a code CLDR does not know."""
    written = _tables()[0].get(iso.upper(), {})
    return tuple(dict.fromkeys(written[lang] for lang in languages if lang in written))


def country_code(name: str, languages: tuple[str, ...] = NAME_LANGUAGES) -> str | None:
    """The ISO code of a country named in one of `languages` ("Inde" -> "IN"), else None.
    Give the text's own language where it is known: French "Salvador" is El Salvador, a
    Portuguese text's "Salvador" the city."""
    code = _tables()[1].get(spaced(name))
    if code is None or languages == NAME_LANGUAGES:
        return code
    return code if spaced(name) in {spaced(n) for n in country_names(code, languages)} else None


def same_country(name: str) -> set[str]:
    """The other names (spaced) of the country `name` names in one of NAME_LANGUAGES; empty
    for a name that is no country's."""
    code = country_code(name)
    if code is None:
        return set()
    return {spaced(n) for n in country_names(code)} - {spaced(name)}


@lru_cache(maxsize=1)
def longest_country_words() -> int:
    """The most words a country's name has (a question's names are matched up to this long)."""
    return max(len(name.split()) for name in _tables()[1])


# Demonyms and the country (or Europe) they stand for, folded, in en / pt / fr: CLDR, read
# above, names countries but not their peoples. The answer step (service/answer/gate.py
# name_forms) reads "French region" over a page saying "France"; the regular English "-an"
# forms ("Indian" = "India") are derived there and need no entry.
_DEMONYMS: dict[str, str] = {
    **dict.fromkeys(("french", "frances", "francesa", "francais", "francaise"), "france"),
    **dict.fromkeys(("german", "alemao", "alema", "allemand", "allemande"), "germany"),
    **dict.fromkeys(("british",), "united kingdom"),
    **dict.fromkeys(("spanish", "espanhol", "espanhola", "espagnol", "espagnole"), "spain"),
    **dict.fromkeys(("portuguese", "portugues", "portuguesa", "portugais", "portugaise"), "portugal"),
    **dict.fromkeys(("dutch", "holandes", "holandesa", "neerlandais"), "netherlands"),
    **dict.fromkeys(("swiss", "suico", "suica", "suisse"), "switzerland"),
    **dict.fromkeys(("chinese", "chines", "chinesa", "chinois", "chinoise"), "china"),
    **dict.fromkeys(("japanese", "japones", "japonesa", "japonais", "japonaise"), "japan"),
    **dict.fromkeys(("greek", "grego", "grega", "grec", "grecque"), "greece"),
    **dict.fromkeys(("turkish", "turco", "turca", "turc", "turque"), "turkey"),
    **dict.fromkeys(("polish", "polones", "polonesa", "polonais", "polonaise"), "poland"),
    **dict.fromkeys(("danish", "dinamarques", "danois", "danoise"), "denmark"),
    **dict.fromkeys(("swedish", "sueco", "sueca", "suedois", "suedoise"), "sweden"),
    **dict.fromkeys(("finnish", "finlandes", "finlandais"), "finland"),
    **dict.fromkeys(("irish", "irlandes", "irlandais"), "ireland"),
    **dict.fromkeys(("czech", "tcheco", "tcheque"), "czechia"),
    **dict.fromkeys(("brazilian", "brasileiro", "brasileira", "bresilien", "bresilienne"), "brazil"),
    **dict.fromkeys(("european", "europeu", "europeia", "europeen", "europeenne"), "europe"),
    **dict.fromkeys(("italiano", "italiana", "italien", "italienne"), "italy"),
    # not "indiana": the US state of that name is no Indian one
    **dict.fromkeys(("indiano", "indien", "indienne"), "india"),
    **dict.fromkeys(("mexicano", "mexicana", "mexicain", "mexicaine"), "mexico"),
    **dict.fromkeys(("canadense", "canadien", "canadienne"), "canada"),
    **dict.fromkeys(("americano", "americana", "americain", "americaine", "american"), "united states"),
}


def demonyms(country: str) -> set[str]:
    """The folded demonyms of a country named in English ("france" -> "french", "francais",
    "francesa", ...); empty for a name that is no country listed here."""
    return {word for word, place in _DEMONYMS.items() if place == country}


def demonym_country(word: str) -> str | None:
    """The English name of the country a folded demonym stands for ("francesa" -> "france"),
    or None for a word that is none."""
    return _DEMONYMS.get(word)
