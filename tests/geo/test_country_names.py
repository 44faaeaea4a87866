"""Country names across languages (geo/country_names.py, CLDR data via Babel)."""

from __future__ import annotations

from geo.country_names import country_code, country_names, demonym_country, same_country


def test_a_country_is_known_by_its_name_in_each_language() -> None:
    assert country_code("Inde") == country_code("Índia") == country_code("India") == "IN"
    assert country_code("États-Unis") == country_code("estados unidos") == "US"
    assert country_names("IN", ("pt", "fr")) == ("Índia", "Inde")


def test_same_country_gives_the_other_names_folded() -> None:
    assert {"inde", "indien"} <= same_country("Índia")
    assert "india" not in same_country("Índia")  # its own folded spelling is not another name
    assert same_country("Recife") == set()  # no country's name


def test_regions_are_not_countries() -> None:
    assert country_code("Europe") is None and country_code("European Union") is None
    assert country_names("EU") == ()


def test_a_name_is_a_country_in_the_languages_asked() -> None:
    """French "Salvador" is El Salvador; in a Portuguese text it is the city."""
    assert country_code("Salvador") == "SV"
    assert country_code("Salvador", ("pt",)) is None and country_code("El Salvador", ("pt",)) == "SV"


def test_a_demonym_names_its_country_in_each_language() -> None:
    assert {demonym_country(w) for w in ("french", "francesa", "francaise")} == {"france"}
    assert demonym_country("brasileiro") == "brazil"
    assert demonym_country("recife") is None
