"""JSON text decoded under a nesting limit, for every JSON a client sends (upload
metadata, GeoJSON documents and datasets, Overpass JSON).

The depth is measured on the raw text by one loop over its brackets (strings skipped),
before `json.loads` and before any recursive walk of the result (shapely, the feature
readers), so a body nested 200,000 deep costs one linear scan and a clear refusal
instead of a RecursionError somewhere inside.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from ingest.errors import JsonTooDeep

MAX_JSON_DEPTH = 64  # GeoJSON needs about 7 (FeatureCollection > features > Feature > MultiPolygon rings)

_KEEP = b'[]{}"'
_DROP = bytes(b for b in range(256) if b not in _KEEP)
_CHUNK = 1 << 20  # structural bytes per numpy step: bounds the scan's memory at a few MB


def json_depth(data: bytes | str, limit: int = MAX_JSON_DEPTH) -> int:
    """The nesting depth of JSON text (0 for a scalar), exact up to `limit + 1`: the scan
    stops once the limit is passed. Malformed text gets a depth too; json.loads refuses it.

    Runs at C speed, with no regex and no Python loop per byte: escaped backslashes, then
    escaped quotes, are removed (left to right, as JSON reads them), so every quote left
    opens or closes a string; everything but quotes and brackets is dropped; a bracket is
    outside strings when an even number of quotes precedes it; the depth is the highest
    running sum of +1 (open) / -1 (close) over those brackets (numpy, in chunks)."""
    if isinstance(data, bytes) and json.detect_encoding(data) not in ("utf-8", "utf-8-sig"):
        data = data.decode(json.detect_encoding(data), "replace")  # UTF-16/32: scan the characters
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    structural = raw.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _DROP)
    deepest = level = quotes = 0
    for start in range(0, len(structural), _CHUNK):
        count = min(_CHUNK, len(structural) - start)
        part = np.frombuffer(structural, dtype=np.uint8, count=count, offset=start)
        is_quote = part == ord('"')
        in_string = (np.cumsum(is_quote, dtype=np.int64) + quotes) % 2 == 1  # a quote itself counts as inside
        step = np.where(in_string | is_quote, 0, np.where((part == ord("[")) | (part == ord("{")), 1, -1))
        running = np.cumsum(step, dtype=np.int64) + level  # depth after each byte
        deepest, level = max(deepest, int(running.max())), int(running[-1])
        quotes += int(is_quote.sum())
        if deepest > limit:
            break
    return deepest


def check_json_depth(data: bytes | str, limit: int = MAX_JSON_DEPTH, *, what: str = "the JSON") -> None:
    """Raises JsonTooDeep when `data` nests arrays/objects more than `limit` deep."""
    if json_depth(data, limit) > limit:
        raise JsonTooDeep(f"{what} is nested more than {limit} levels deep; the limit is {limit}")


def load_json(data: bytes | str, limit: int = MAX_JSON_DEPTH, *, what: str = "the JSON") -> Any:
    """The decoded JSON, at most `limit` levels deep: UTF-8 (RFC 7946) with or without a
    BOM, UTF-16/32 too, and latin-1 for older shapefile exports.

    Raises:
        JsonTooDeep: nested deeper than `limit` (checked before decoding).
        json.JSONDecodeError (a ValueError): not JSON, or a string holding a lone surrogate."""
    check_json_depth(data, limit, what=what)
    try:
        value = json.loads(data)  # bytes: the encoding (and a UTF-8 BOM) is detected
    except UnicodeDecodeError:
        assert isinstance(data, bytes)  # only bytes are decoded
        data = data.decode("latin-1")
        value = json.loads(data)
    check_text(value, data)
    return value


# a \u escape of a UTF-16 surrogate (D800-DFFF): the only way JSON text holds a lone one
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_PAIR_OR_ESCAPE = re.compile(
    rb"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|" + _SURROGATE_ESCAPE.pattern
)


def check_text(value: Any, raw: bytes | str) -> None:
    """json.JSONDecodeError when a string of the decoded `value` holds a lone surrogate.
    json.loads reads "\\ud800" as one, but it is no text: SQLite, the store and the
    response encoder cannot encode it, so metadata {"note": "\\ud800"} answered 500 at
    upload. Only text that has such an escape is walked (at most MAX_JSON_DEPTH deep)."""
    if isinstance(raw, bytes) and json.detect_encoding(raw) not in ("utf-8", "utf-8-sig"):
        raw = raw.decode(json.detect_encoding(raw), "replace")  # UTF-16/32: search the characters
    text = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if _SURROGATE_ESCAPE.search(text) is None or _is_text(value):
        return
    escape, at = _lone_escape(text)
    raise json.JSONDecodeError(
        f"a string holds a lone UTF-16 surrogate ({escape} without its pair), which is not text",
        text.decode("utf-8", "replace"),
        at,
    )


def _lone_escape(text: bytes) -> tuple[str, int]:
    """The first surrogate escape that is not half of a high-low pair, and its offset."""
    lone = next((m for m in _PAIR_OR_ESCAPE.finditer(text) if len(m.group()) == 6), None)
    return (lone.group().decode(), lone.start()) if lone else ("\\uD800-\\uDFFF", 0)


def _is_text(value: Any) -> bool:
    """Whether every string (and key) of `value` encodes as UTF-8."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, dict):
        return all(_is_text(k) and _is_text(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_is_text(v) for v in value)
    return True
