"""The service object builds cheaply: the ingestion pipeline and the GeoNames index wait for
their first use, and what the registry records is known without them."""

from __future__ import annotations

import sys
from collections.abc import Callable

from service.carta import Carta


def test_the_ingestor_is_built_on_first_use(make_carta: Callable[..., Carta]) -> None:
    carta = make_carta()
    assert carta._ingestor is None
    assert carta.reindex_needed() is None  # the signature check needs no pipeline
    ingestor = carta.ingestor
    assert carta.ingestor is ingestor  # once
    assert ingestor.index_signature == carta.index_signature == "lite:" + carta.collections.chunks.name
    assert "pymupdf" in sys.modules  # what it defers


def test_warm_up_loads_the_text_model(make_carta: Callable[..., Carta]) -> None:
    carta = make_carta()
    carta.warm_up()
    assert carta.text.loaded
