"""The encoding of an uploaded text file (a CSV): spreadsheets save CSVs as UTF-16 with a
BOM ("Unicode text") or as Windows-1252 (Excel on a Portuguese or English machine) as often
as UTF-8, and refusing those was a refusal of ordinary files.

The rule, in order: a byte order mark names the encoding (UTF-8, UTF-16, UTF-32); NUL bytes
without one are UTF-16 when they fall on every other byte (ASCII text in UTF-16), else the
file is binary and refused; then UTF-8 when the whole file decodes as UTF-8 (a Windows-1252
file with any accented letter does not: its bytes 0xC0-0xFF are not followed by 0x80-0xBF);
else Windows-1252 (its five unassigned bytes read as U+FFFD). Decoded text with
more than 1% control characters (other than tab, line feed, carriage return and form feed)
is binary too: `NotText`, a ValueError.
"""

from __future__ import annotations

import codecs

_BOMS = (  # UTF-32 LE first: its BOM starts with UTF-16 LE's
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_SAMPLE = 65_536  # characters checked for control characters
_CONTROLS = frozenset(chr(c) for c in range(32) if chr(c) not in "\t\n\r\f") | {"\x7f"}


class NotText(ValueError):
    """The bytes are not text in an encoding Carta reads (binary data)."""


def text_encoding(data: bytes, *, partial: bool = False) -> str:
    """The codec name `data` decodes with (see the module docstring); NotText for binary
    data. Only the first 4 KiB are looked at for NUL bytes; UTF-8 is tried on all of it
    (`partial`: but for a character cut at the end)."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name
    head = data[:4096]
    if b"\x00" in head:
        even, odd = head[0::2].count(0), head[1::2].count(0)
        if even == 0 and odd * 4 >= len(head) // 2:  # "a\0b\0": ASCII text in UTF-16 LE
            return "utf-16-le"
        if odd == 0 and even * 4 >= len(head) // 2:
            return "utf-16-be"
        raise NotText("it holds NUL bytes: binary data, not text")
    try:
        codecs.getincrementaldecoder("utf-8")().decode(data, final=not partial)
    except UnicodeDecodeError:
        return "cp1252"
    return "utf-8"


def decode_text(data: bytes, *, partial: bool = False) -> str:
    """`data` as text (NotText, or UnicodeDecodeError for a broken UTF-16/32 file, both
    ValueErrors). `partial`: `data` is the start of a file, which may end inside a character
    (that character is left out)."""
    encoding = text_encoding(data, partial=partial)
    if encoding == "cp1252":  # a single-byte code: no partial characters
        text = data.decode("cp1252", errors="replace")
    else:
        text = codecs.getincrementaldecoder(encoding)().decode(data, final=not partial)
    sample = text[:_SAMPLE]
    if sample and sum(ch in _CONTROLS for ch in sample) > len(sample) / 100:
        raise NotText("it is mostly control characters: binary data, not text")
    return text
