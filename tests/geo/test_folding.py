"""Accent and case folding."""

from __future__ import annotations

import pytest

from geo.folding import fold, fold_words


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("São Paulo", "sao paulo"),
        ("SAO PAULO", "sao paulo"),
        ("Ação, CORAÇÃO!", "acao, coracao!"),
        ("Øresund Łódź Straße", "oresund lodz strasse"),  # letters NFKD leaves whole, and ß
        ("Ｆｕｌｌｗｉｄｔｈ", "fullwidth"),  # compatibility forms decompose too
    ],
)
def test_fold(text: str, folded: str) -> None:
    assert fold(text) == folded


def test_fold_keeps_spacing_and_fold_words_collapses_it() -> None:
    assert fold("  Recife\n\tPE ") == "  recife\n\tpe "
    assert fold_words("  Récife\n\tPE ") == "recife pe"
