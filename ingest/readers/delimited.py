"""Delimited text tables (CSV with comma, semicolon or tab separators) as rows."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Any


def read_rows(text: str) -> Iterator[dict[str, Any]]:
    """The rows of a table with a header line, keyed by column name; the separator is
    sniffed from the first 4 KiB."""
    dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t") if text.strip() else csv.excel
    yield from csv.DictReader(io.StringIO(text), dialect=dialect)
