"""The service object builds cheaply: the ingestion pipeline and the GeoNames index wait for
their first use, and what the registry records is known without them."""

from __future__ import annotations

import sys
from collections.abc import Callable

from geo import country_names
from service.carta import Carta
from service.query import dictionary


def test_the_ingestor_is_built_on_first_use(make_carta: Callable[..., Carta]) -> None:
    carta = make_carta()
    assert carta._ingestor is None
    assert carta.reindex_needed() is None  # the signature check needs no pipeline
    ingestor = carta.ingestor
    assert carta.ingestor is ingestor  # once
    assert ingestor.index_signature == carta.index_signature == "lite:" + carta.collections.chunks.name
    assert "pymupdf" in sys.modules  # what it defers


def test_warm_up_loads_the_text_model_and_the_word_tables(make_carta: Callable[..., Carta]) -> None:
    carta = make_carta()
    dictionary.translations_of("agua")  # an earlier question's words stay cached after the tables go
    dictionary._table.cache_clear()
    country_names._tables.cache_clear()
    carta.warm_up()
    assert carta.text.loaded
    # the bilingual dictionaries and CLDR's country names, a first question's other second
    assert dictionary._table.cache_info().currsize == 1
    assert country_names._tables.cache_info().currsize == 1
