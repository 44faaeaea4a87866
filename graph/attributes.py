"""Feature properties as typed attributes, and the schema of a dataset built from them.

A dataset's properties are kept whole so questions can filter and aggregate them
("IDEB > 5", "total de V014"): numbers (Portuguese decimal commas "5,4" and thousands
"1.234,5" too), dates (ISO or DD/MM/YYYY, kept as ISO text so they compare in order),
booleans and strings. Nested objects are flattened with dotted keys ("endereco.bairro");
lists are kept as JSON text. Digit strings with a leading zero ("007", postal codes) stay
strings: reading them as numbers would lose what they say.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from datetime import date, datetime
from typing import Any

MAX_SAMPLES = 5
MAX_CATEGORIES = 50
MAX_FLATTEN_DEPTH = 8  # deeper objects are kept as JSON text under their dotted key
MAX_EXACT_INT = 2**53  # larger integers are identifiers, kept as text

_INT_RE = re.compile(r"^[-+]?(0|[1-9]\d*)$")
_FLOAT_RE = re.compile(r"^[-+]?(\d+\.\d+|\d+\.|\.\d+|\d+(\.\d+)?[eE][-+]?\d+)$")
_PT_DECIMAL_RE = re.compile(r"^[-+]?\d+,\d+$")
_PT_THOUSANDS_RE = re.compile(r"^[-+]?\d{1,3}(\.\d{3})+(,\d+)?$")
_ISO_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[-+]\d{2}:?\d{2})?)?$")
_BR_DATE_RE = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{4})$")
_BOOLEANS = {"true": True, "false": False, "yes": True, "no": False, "sim": True, "nao": False, "não": False}


def value_type(value: Any) -> str:
    """'number', 'date', 'boolean', 'json' or 'string' of a coerced value."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str) and _ISO_DATE_RE.match(value):
        return "date"
    if isinstance(value, str) and value[:1] in "[{" and value[-1:] in "]}":
        return "json"
    return "string"


def _date(text: str) -> str | None:
    if _ISO_DATE_RE.match(text):
        try:
            datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return None
        return text
    if m := _BR_DATE_RE.match(text):
        day, month, year = (int(g) for g in m.groups())
        try:
            return date(year, month, day).isoformat()
        except ValueError:
            return None
    return None


def coerce(value: Any) -> Any:
    """The typed value of one property value (None for null, empty or non-finite)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if abs(value) <= MAX_EXACT_INT else str(value)  # beyond a float's precision: a code
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    text = str(value).strip()
    if not text:
        return None
    if _INT_RE.match(text):
        number = int(text)
        return number if abs(number) <= MAX_EXACT_INT else text
    number = None
    if _FLOAT_RE.match(text):
        number = float(text)
    elif _PT_DECIMAL_RE.match(text):
        number = float(text.replace(",", "."))
    elif _PT_THOUSANDS_RE.match(text):
        number = float(text.replace(".", "").replace(",", "."))
    if number is not None:
        return number if math.isfinite(number) else None
    if (flag := _BOOLEANS.get(text.lower())) is not None:
        return flag
    if (iso := _date(text)) is not None:
        return iso
    return text


def flatten(props: Mapping[str, Any], prefix: str = "", depth: int = 0) -> dict[str, Any]:
    """Properties with nested objects flattened to dotted keys, every value coerced."""
    out: dict[str, Any] = {}
    for key, value in props.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and depth < MAX_FLATTEN_DEPTH:
            out.update(flatten(value, f"{name}.", depth + 1))
            continue
        typed = coerce(value)
        if typed is not None:
            out[name] = typed
    return out


def as_number(value: Any) -> float | None:
    """A typed value as a number for aggregation; None for anything that is not one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def infer_schema(attrs: Iterable[Mapping[str, Any]], categories: Mapping[str, int]) -> dict[str, Any]:
    """{"features", "properties": [{name, type, count, min, max, samples, types}], "categories"}.

    A property's type is the one all its values share, else "mixed" (with the counts per
    type in `types`); min/max are given for numbers and dates."""
    stats: dict[str, dict[str, Any]] = {}
    features = 0
    for row in attrs:
        features += 1
        for name, value in row.items():
            s = stats.setdefault(name, {"count": 0, "types": {}, "min": None, "max": None, "samples": []})
            s["count"] += 1
            kind = value_type(value)
            s["types"][kind] = s["types"].get(kind, 0) + 1
            if kind in ("number", "date"):
                s["min"] = value if s["min"] is None or _lt(value, s["min"]) else s["min"]
                s["max"] = value if s["max"] is None or _lt(s["max"], value) else s["max"]
            if len(s["samples"]) < MAX_SAMPLES and value not in s["samples"]:
                s["samples"].append(value)
    properties = []
    for name, s in stats.items():
        types = s["types"]
        kind = next(iter(types)) if len(types) == 1 else "mixed"
        entry: dict[str, Any] = {"name": name, "type": kind, "count": s["count"], "samples": s["samples"]}
        if kind in ("number", "date", "mixed") and s["min"] is not None:
            entry |= {"min": s["min"], "max": s["max"]}
        if kind == "mixed":
            entry["types"] = types
        properties.append(entry)
    top = sorted(categories.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_CATEGORIES]
    return {"features": features, "properties": properties, "categories": dict(top)}


def _lt(a: Any, b: Any) -> bool:
    """a < b for two numbers or two ISO dates (a number and a date never compare)."""
    if isinstance(a, str) != isinstance(b, str):
        return isinstance(a, int | float)  # numbers order before dates in a mixed column
    return a < b
