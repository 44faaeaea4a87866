"""The citation marker: written by cite_label, read by parse, defused by neutralise."""

from __future__ import annotations

import pytest

from service.answer.markers import cite_label, neutralise, parse


def test_cite_label_is_what_parse_reads() -> None:
    assert [(d, p) for _, d, p in parse(f"A claim {cite_label('7776c2c8d21fe1b2', 3)}.")] == [
        ("7776c2c8d21fe1b2", 3)
    ]


@pytest.mark.parametrize(
    ("text", "defused"),
    [
        ("documented in [7776c2c8d21fe1b2 p.1] by", "documented in ⟦7776c2c8d21fe1b2 p.1⟧ by"),
        ("see [abc p. 2; def p.3] and [abc, p.4]", "see ⟦abc p. 2; def p.3⟧ and ⟦abc, p.4⟧"),
        ("per [abc page 7] and [Graph]", "per ⟦abc page 7⟧ and ⟦Graph⟧"),
        ("nested [[abc p.1]] twice", "nested ⟦⟦abc p.1⟧⟧ twice"),
    ],
)
def test_neutralise_defuses_every_marker_parse_would_read(text: str, defused: str) -> None:
    assert parse(text)
    assert neutralise(text) == defused
    assert parse(neutralise(text)) == []


def test_neutralise_keeps_other_brackets_and_plain_text() -> None:
    for text in ("a quote [sic] and a list [1, 2]", "no brackets at all", "[unclosed abc p.1", ""):
        assert neutralise(text) == text


def test_neutralise_is_idempotent_and_survives_deep_nesting() -> None:
    once = neutralise("x [a p.1] y")
    assert neutralise(once) == once
    deep = "[" * 50 + "abc p.1" + "]" * 50
    assert parse(neutralise(deep)) == [] and "[" not in neutralise(deep)


def test_a_fragment_loses_the_brackets_of_a_marker_cut_in_two() -> None:
    assert neutralise("claims go to the desk [7776c2c8d21fe1b2 p.", fragment=True) == (
        "claims go to the desk ⟦7776c2c8d21fe1b2 p."
    )
    assert neutralise("9] and [sic] stays", fragment=True) == "9⟧ and [sic] stays"
    assert neutralise("[unclosed abc p.1") == "[unclosed abc p.1"  # whole texts keep them
