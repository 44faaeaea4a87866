"""The FreeDict reader (service/query/dictionary.py) on small dictd files written here, and
on Debian's when installed."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.query import dictionary
from service.query.dictionary import DEFAULT_DIR, english_of, lemmas, read_dictd, senses, translations_of
from service.query.translate import translate

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _b64(n: int) -> str:
    out = ""
    while True:
        out = _B64[n % 64] + out
        n //= 64
        if n == 0:
            return out


def write_dictd(folder: Path, stem: str, entries: dict[str, str]) -> None:
    """A dictd pair as dictfmt writes it: the .dict.dz (gzip) and a tab-separated index of
    base-64 offsets and lengths."""
    data, index = b"", []
    for head, body in entries.items():
        raw = f"{head} /ipa/\n{body}\n".encode()
        index.append(f"{head}\t{_b64(len(data))}\t{_b64(len(raw))}")
        data += raw
    (folder / f"{stem}.dict.dz").write_bytes(gzip.compress(data))
    (folder / f"{stem}.index").write_text(
        "00databaseinfo\tA\tB\n" + "\n".join(index) + "\n", encoding="utf-8"
    )


@pytest.fixture
def small(tmp_path: Path) -> Iterator[Path]:
    write_dictd(
        tmp_path,
        "freedict-por-eng",
        {
            "movimento": "movement",
            "banco": "1. bank\n2. bench\n3. easel, workbench",
            "cabeça": "head, pate",
            "país": "1. country, land (nation)\n2. realm",
        },
    )
    write_dictd(tmp_path, "freedict-eng-fra", {"rain": "pluie"})
    dictionary.use(tmp_path)
    yield tmp_path
    dictionary.use(DEFAULT_DIR)


def test_senses_keep_the_first_two_senses_plain_words_folded() -> None:
    assert senses("banco /b/\n1. bank\n2. bench\n3. easel, workbench") == ["bank", "bench"]
    assert senses("país /p/\n1. country, land (nation)\n2. realm") == ["country", "land", "realm"]
    assert senses("x /x/\nto go out, a b") == []  # phrases and words under three letters


def test_entries_are_read_both_ways_with_inflections(small: Path) -> None:
    assert read_dictd(small / "freedict-por-eng.index", small / "freedict-por-eng.dict.dz")["cabeca"] == [
        "head",
        "pate",
    ]
    assert translations_of("movimentos") == {"movement"}  # a plural, to its dictionary form
    assert translations_of("movement") == frozenset()  # English words get none (no false synonyms)
    assert "movimento" in dictionary._table()[1]["movement"]  # the entry read back, for is_english
    assert translations_of("paises") == {"country", "land", "realm"}
    assert translations_of("pluie") == {"rain"}  # read back from the en -> fr entry
    assert english_of("cabecas") == ["head", "pate"]
    assert english_of("rain") == []  # English is no source language
    assert translations_of("desconhecida") == frozenset()


def test_missing_dictionaries_leave_the_glossary_alone(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    dictionary.use(tmp_path / "nowhere")
    try:
        with caplog.at_level("INFO", logger="service.query.dictionary"):
            assert translations_of("movimento") == frozenset()
        assert "apt-get install dict-freedict-por-eng" in caplog.text
    finally:
        dictionary.use(DEFAULT_DIR)


def test_lemmas_try_the_dictionary_forms() -> None:
    assert "movimento" in lemmas("movimentos")
    assert "adotar" in lemmas("adotado")
    assert "head" in lemmas("heads")


@pytest.mark.skipif(not (DEFAULT_DIR / "freedict-por-eng.index").is_file(), reason="FreeDict not installed")
def test_debian_s_dictionaries_translate_everyday_words() -> None:
    from service.query.translate import translate

    assert "movement" in translations_of("movimentos")
    words = str(translate("Qual a frequência de detecção em pessoas com cirrose?", "pt")).split()
    assert {"frequency", "detection", "person", "cirrosis"} <= set(words)
    assert "guide" in translations_of("guia")
    assert "rain" in translations_of("pluie")


def test_the_answer_step_s_translations_follow_the_dictionaries_in_use(small: Path) -> None:
    from service.answer.content_words import translations

    assert "movement" in translations("movimento")
    dictionary.use(small / "empty")
    assert "movement" not in translations("movimento")  # the cache does not outlive the folder
    dictionary.use(small)
    assert "movement" in translations("movimento")


def test_a_translation_takes_the_senses_its_evidence_holds(small: Path) -> None:
    from service.query.translate import translate

    question = "Quantos bancos tem o bairro com mais chuva?"
    first = str(translate(question, "pt")).split()
    assert "bank" in first and "bench" in first  # the dictionary's first senses
    held = str(translate(question, "pt", prefer=lambda word: word == "bench")).split()
    assert "bench" in held and "bank" not in held
    # evidence holding no sense: the first senses stay
    assert translate(question, "pt", prefer=lambda word: False) == translate(question, "pt")


def test_an_inflected_word_whose_dictionary_form_english_writes_alike_is_kept(tmp_path: Path) -> None:
    """ "globais" has no entry of its own, but its dictionary form "global" is an English
    headword: the translation says "global" (and no such form, "reais" of "real" aside,
    is made up for a word English does not write alike)."""
    write_dictd(tmp_path, "freedict-eng-por", {"global": "global", "variable": "variável"})
    dictionary.use(tmp_path)
    try:
        words = str(translate("Quais variáveis globais e locais o sistema define?", "pt")).split()
    finally:
        dictionary.use(DEFAULT_DIR)
    assert "global" in words and "globais" not in words
    assert "locais" in words  # "local" is no headword here: the word stays as written
