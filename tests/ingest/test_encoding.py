"""ingest/readers/encoding.py: the encodings spreadsheets save CSVs in are read; binary is not."""

from __future__ import annotations

import random

import pytest

from ingest.readers.encoding import NotText, decode_text, text_encoding

CSV = "nome;lat;lon\nEscola São João – Açaí €;-8,05;-34,9\n"


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        (CSV.encode("utf-8"), "utf-8"),
        (CSV.encode("utf-8-sig"), "utf-8-sig"),
        (CSV.encode("utf-16"), "utf-16"),  # with its BOM, as Excel's "Unicode text"
        (CSV.encode("utf-16-be"), "utf-16-be"),  # no BOM: NULs every other byte
        (CSV.encode("utf-16-le"), "utf-16-le"),
        (CSV.encode("utf-32"), "utf-32"),
        (CSV.encode("cp1252"), "cp1252"),  # Excel's "CSV" on a pt/en Windows machine
    ],
)
def test_each_encoding_is_told_and_decoded(data: bytes, encoding: str) -> None:
    assert text_encoding(data) == encoding
    assert decode_text(data) == CSV


def test_latin1_bytes_read_as_windows_1252() -> None:
    assert decode_text("Ñandú;1;2\n".encode("latin-1")) == "Ñandú;1;2\n"


def test_a_prefix_cut_inside_a_character_is_still_utf8() -> None:
    data = ("a" * 4095 + "ç").encode()  # byte 4096 is the first of "ç"'s two
    assert text_encoding(data[:4096], partial=True) == "utf-8"
    assert decode_text(data[:4096], partial=True) == "a" * 4095


@pytest.mark.parametrize(
    "junk", [random.Random(0).randbytes(5000), bytes(range(1, 32)) * 100, b"\x89PNG\r\n\x1a\n\x00\x00"]
)
def test_binary_is_not_text(junk: bytes) -> None:
    with pytest.raises(NotText):
        decode_text(junk)


def test_a_broken_utf16_file_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        decode_text("lat,lon\n".encode("utf-16") + b"\x00")  # an odd byte count: a cut character
