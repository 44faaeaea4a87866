"""JSON text decoded under a nesting limit, for every JSON a client sends (upload
metadata, GeoJSON documents and datasets, Overpass JSON).

The depth is measured on the raw text by one loop over its brackets (strings skipped),
before `json.loads` and before any recursive walk of the result (shapely, the feature
readers), so a body nested 200,000 deep costs one linear scan and a clear refusal
instead of a RecursionError somewhere inside.
"""

from __future__ import annotations

import json
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
        ValueError: not JSON."""
    check_json_depth(data, limit, what=what)
    try:
        return json.loads(data)  # bytes: the encoding (and a UTF-8 BOM) is detected
    except UnicodeDecodeError:
        assert isinstance(data, bytes)  # only bytes are decoded
        return json.loads(data.decode("latin-1"))
