"""The JSON depth scan (ingest/readers/jsontext.py) against json.loads on tricky text."""

from __future__ import annotations

import json

import pytest

from ingest.errors import JsonTooDeep
from ingest.readers.jsontext import MAX_JSON_DEPTH, check_json_depth, json_depth, load_json


def true_depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max(map(true_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(true_depth, value), default=0)
    return 0


@pytest.mark.parametrize(
    "value",
    [
        1,
        "[[[",
        [],
        {"a": [1, {"b": ["]]]}}", "\\", '"[', '\\\\"{']}]},
        [["\\"], [[["x\\\\"]]], '\\"]'],
        {'k\\"[': [[[[{}]]]]},
        ["é ü 中 [", [["\U0001f600{"]]],
    ],
)
def test_the_scan_agrees_with_the_decoded_depth(value: object) -> None:
    text = json.dumps(value, ensure_ascii=False)
    assert json_depth(text) == json_depth(text.encode()) == true_depth(value)
    assert json_depth(text.encode("utf-16")) == true_depth(value)


def test_the_scan_spans_chunks() -> None:
    from ingest.readers import jsontext

    value = [[["a[" * 10, [1, 2, [3]]]] for _ in range(50)]
    text = json.dumps(value)
    old, jsontext._CHUNK = jsontext._CHUNK, 7
    try:
        assert json_depth(text) == true_depth(value) == 5
    finally:
        jsontext._CHUNK = old


def test_deep_text_is_refused_with_the_limit_named() -> None:
    deep = "[" * 200_000 + "]" * 200_000
    with pytest.raises(JsonTooDeep, match=f"more than {MAX_JSON_DEPTH} levels deep"):
        check_json_depth(deep)
    with pytest.raises(JsonTooDeep):
        load_json(deep.encode())
    at_limit = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert true_depth(load_json(at_limit)) == MAX_JSON_DEPTH


def test_a_lone_surrogate_is_not_text() -> None:
    """json.loads reads "\\ud800" as a lone surrogate, which SQLite, the store and the
    response encoder cannot encode: metadata holding one answered 500 at upload."""
    for text in ('{"note": "\\ud800"}', '{"\\udfff": 1}', '["\\ud83d\\ude00", "x\\uDBFFy"]'):
        for data in (text, text.encode(), text.encode("utf-16")):
            with pytest.raises(json.JSONDecodeError, match="lone UTF-16 surrogate"):
                load_json(data)
    assert "\\ude00" in str(
        pytest.raises(json.JSONDecodeError, load_json, '["\\ud83d\\ude00", "\\ude00"]').value
    )
    assert load_json('{"a": "\\ud83d\\ude00"}') == {"a": "\U0001f600"}  # a pair is one character
    assert load_json('{"a": "\\\\ud800"}') == {"a": "\\ud800"}  # an escaped backslash, then text
