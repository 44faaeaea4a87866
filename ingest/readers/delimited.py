"""Delimited text tables (CSV with comma, semicolon or tab separators) as rows."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Any

DELIMITERS = ",;\t"


def read_rows(text: str) -> Iterator[dict[str, Any]]:
    """The rows of a table with a header line, keyed by column name. Raises csv.Error on
    a row the csv module cannot read (a field over its size limit)."""
    yield from csv.DictReader(io.StringIO(text), **_format(text))


def _format(text: str) -> dict[str, Any]:
    """The csv format: the dialect sniffed from the first 4 KiB, else (the sniffer gives up
    on some files, one with a long quoted field among them, and that was a 500) the
    separator the header line uses most."""
    if not text.strip():
        return {"dialect": csv.excel}
    try:
        return {"dialect": csv.Sniffer().sniff(text[:4096], delimiters=DELIMITERS)}
    except csv.Error:
        header = text.split("\n", 1)[0]
        return {"dialect": csv.excel, "delimiter": max(DELIMITERS, key=header.count)}
