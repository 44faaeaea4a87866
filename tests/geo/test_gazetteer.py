"""Gazetteer: folding, alternates, disambiguation, user polygons, free-text mentions, speed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from geo.folding import fold
from geo.gazetteer import Gazetteer, Place, PlaceMatch, name_key
from tests.conftest import corpus_path

RECIFE = (-8.0539, -34.8811)  # (lat, lon)

PT_PARAGRAPH_NO_PLACES = (
    "O relatório apresenta os resultados do monitoramento realizado durante o primeiro semestre. "
    "Segundo a Secretaria de Meio Ambiente, a qualidade da água melhorou em relação ao ano anterior, "
    "embora ainda existam pontos críticos. A Defesa Civil recomenda que os moradores evitem áreas de "
    "risco durante as chuvas fortes. Os dados foram coletados pela equipe técnica e revisados pelo "
    "Conselho Municipal. Para mais informações, consulte o Anexo II e a Tabela 3, que trazem a série "
    "histórica completa. Como prevê o Plano Diretor, a Prefeitura fará novas Audiências Públicas em "
    "Março, com apoio da Universidade Federal e do Ministério Público. Todos os Bairros serão ouvidos; "
    "a Coordenação de Saneamento acompanhará a Limpeza dos Canais, a Drenagem e a Coleta Seletiva."
)
EN_PARAGRAPH_NO_PLACES = (
    "The annual report summarises the findings of the field survey carried out in the spring. According "
    "to the Department of Environmental Protection, water quality improved compared with the previous "
    "year, although several critical points remain. Emergency services advise residents to avoid "
    "flood-prone areas during heavy rain. The data were collected by the technical team and reviewed by "
    "the Advisory Board. For further details, see Annex B and Table 4, which present the complete time "
    "series. Mobile teams will return in March to repeat the measurements, and the final Report will be "
    "published by the Board in Autumn. Chapter Two describes the Methods; Appendix C lists the Sampling "
    "Stations, the Laboratory Procedures and the Quality Assurance Plan approved by the Steering Committee."
)


@pytest.fixture(scope="module")
def gaz() -> Gazetteer:
    return Gazetteer.from_geonames()


@pytest.fixture(scope="module")
def recife_gaz() -> Gazetteer:
    g = Gazetteer.from_geonames()
    g.add_geojson(corpus_path("poi", "recife_bairros.geojson"))
    return g


def top(matches: list[PlaceMatch]) -> Place:
    assert matches, "no candidates"
    return matches[0].place


# ----------------------------------------------------------------------------- index


def test_build_is_cached_per_process() -> None:
    """The GeoNames index is built once per process (its speed is measured by
    scripts/bench_foundation.py, not here)."""
    first = Gazetteer.from_geonames()
    second = Gazetteer.from_geonames()
    assert second._base is first._base


def test_unsupported_threshold_is_refused() -> None:
    with pytest.raises(ValueError, match="min_population"):
        Gazetteer.from_geonames(20000)


def test_names_are_accent_and_case_folded(gaz: Gazetteer) -> None:
    assert fold("São Paulo") == "sao paulo"
    assert name_key("SÃO  PAULO") == name_key("sao paulo") == name_key("São-Paulo") == "sao paulo"
    ids = {top(gaz.lookup(n)).id for n in ("São Paulo", "sao paulo", "SAO PAULO", "Sao Paulo")}
    assert len(ids) == 1
    assert top(gaz.lookup("sao paulo")).country == "BR"


def test_latin_alternate_names_are_indexed(gaz: Gazetteer) -> None:
    lisbon = top(gaz.lookup("Lisboa"))
    assert (lisbon.name, lisbon.country, lisbon.kind) == ("Lisbon", "PT", "city")
    assert top(gaz.lookup("Lisbon")).id == lisbon.id


def test_noise_alternates_are_not_indexed(gaz: Gazetteer) -> None:
    assert gaz.lookup("REC") == []  # IATA code of Recife
    assert gaz.lookup("lei xi fei") == []  # lower-case romanisation of a Chinese name
    assert all(m.place.name != "Recife" for m in gaz.lookup("Pernambuco"))  # historic name, now the state


def test_countries_with_portuguese_names(gaz: Gazetteer) -> None:
    brasil, brazil = top(gaz.lookup("Brasil")), top(gaz.lookup("Brazil"))
    assert brasil.id == brazil.id and brasil.kind == "country" and brasil.country == "BR"
    assert abs(brasil.lat - -15.8) < 1 and abs(brasil.lon - -47.9) < 1  # at Brasília
    assert top(gaz.lookup("Alemanha")).country == "DE"
    assert top(gaz.lookup("Estados Unidos")).country == "US"


# ----------------------------------------------------------------------------- disambiguation


def test_recife(gaz: Gazetteer) -> None:
    recife = top(gaz.lookup("Recife"))
    assert (recife.name, recife.country, recife.kind, recife.source) == ("Recife", "BR", "city", "geonames")
    assert recife.id.startswith("geonames:") and recife.population > 1_000_000


def test_salvador_is_the_bahia_city_not_the_country(gaz: Gazetteer) -> None:
    for hint in ("BR", None):
        salvador = top(gaz.lookup("Salvador", country_hint=hint))
        assert (salvador.country, salvador.kind, salvador.admin1) == ("BR", "city", "05")
    assert all(m.place.kind != "country" for m in gaz.lookup("Salvador"))
    el_salvador = top(gaz.lookup("El Salvador"))
    assert (el_salvador.kind, el_salvador.country) == ("country", "SV")


def test_amazonas_cities(gaz: Gazetteer) -> None:
    for name in ("Manaus", "Manacapuru"):
        place = top(gaz.lookup(name))
        assert (place.country, place.admin1, place.kind) == ("BR", "04", "city"), name
    assert top(gaz.lookup("Amazonas")).kind == "state"


def test_paris_follows_the_country_hint(gaz: Gazetteer) -> None:
    assert top(gaz.lookup("Paris")).country == "FR"
    assert top(gaz.lookup("Paris", country_hint="US")).country == "US"


@pytest.mark.parametrize(
    "name, country", [("Porto Alegre", "BR"), ("Helsinki", "FI"), ("Natal", "BR"), ("New York", "US")]
)
def test_well_known_cities(gaz: Gazetteer, name: str, country: str) -> None:
    assert top(gaz.lookup(name)).country == country


def test_near_point_decides_between_same_named_cities(recife_gaz: Gazetteer) -> None:
    ceara = top(recife_gaz.lookup("Boa Viagem", near=(-5.13, -39.73)))
    assert (ceara.kind, ceara.admin1) == ("city", "06")
    assert top(recife_gaz.lookup("Campo Grande", near=RECIFE)).kind == "area"


def test_confidence_is_bounded_and_higher_for_unambiguous_big_cities(gaz: Gazetteer) -> None:
    for name in ("Helsinki", "Paris", "Santa Cruz", "Springfield", "Salvador", "Recife"):
        for m in gaz.lookup(name):
            assert 0.0 <= m.confidence <= 1.0
    helsinki = gaz.lookup("Helsinki")[0].confidence
    assert helsinki > gaz.lookup("Santa Cruz")[0].confidence
    assert helsinki > gaz.lookup("Springfield")[0].confidence
    assert gaz.lookup("Recife", country_hint="BR")[0].confidence > 0.9
    paris = gaz.lookup("Paris")
    assert paris[0].confidence > paris[1].confidence


# ----------------------------------------------------------------------------- user gazetteers


def test_recife_bairros_load_as_areas(recife_gaz: Gazetteer) -> None:
    path = corpus_path("poi", "recife_bairros.geojson")
    g = Gazetteer()  # user places only
    assert g.add_geojson(path) == 94
    boa_viagem = top(g.lookup("BOA VIAGEM"))
    assert (boa_viagem.kind, boa_viagem.name, boa_viagem.source) == ("area", "Boa Viagem", "recife_bairros")
    assert boa_viagem.id == "recife_bairros:Boa Viagem"
    assert boa_viagem.geometry is not None and boa_viagem.geometry["type"] == "Polygon"
    min_lon, min_lat, max_lon, max_lat = boa_viagem.bbox or (0, 0, 0, 0)
    assert min_lon <= boa_viagem.lon <= max_lon and min_lat <= boa_viagem.lat <= max_lat
    assert -8.2 < boa_viagem.lat < -8.0 and -35.0 < boa_viagem.lon < -34.8  # lng/lat not swapped
    assert top(g.lookup("Alto Santa Terezinha")).name == "Alto Sta. Terezinha"  # abbreviation spelt out


def test_bairro_beats_same_named_city_elsewhere(recife_gaz: Gazetteer) -> None:
    boa_viagem = top(recife_gaz.lookup("Boa Viagem"))
    assert (boa_viagem.kind, boa_viagem.source, boa_viagem.country) == ("area", "recife_bairros", "BR")
    assert any(m.place.kind == "city" for m in recife_gaz.lookup("Boa Viagem"))  # Boa Viagem, Ceará


def test_bairro_named_after_its_city_does_not_hide_the_city(recife_gaz: Gazetteer) -> None:
    matches = recife_gaz.lookup("Recife")
    assert matches[0].place.kind == "city" and matches[0].confidence > 0.6
    assert any(m.place.kind == "area" for m in matches[1:])


def test_user_places_stay_on_their_instance(recife_gaz: Gazetteer) -> None:
    assert all(m.place.kind != "area" for m in Gazetteer.from_geonames().lookup("Casa Amarela"))


def test_census_tracts_merge_by_auto_detected_name(tmp_path: Path) -> None:
    path = corpus_path("poi", "olinda1_setores_censitarios.geojson")
    names = {f["properties"].get("NM_BAIR") for f in json.loads(path.read_text())["features"]} - {None}
    g = Gazetteer()
    assert g.add_geojson(path) == len(names)  # "NM_BAIR" detected, one place per bairro
    rio_doce = top(g.lookup("rio doce"))
    assert rio_doce.kind == "area" and rio_doce.source == "olinda1_setores_censitarios"
    assert rio_doce.geometry is not None and rio_doce.geometry["type"] in ("Polygon", "MultiPolygon")


def test_geojson_with_explicit_property_and_source(tmp_path: Path) -> None:
    square = [[[-34.90, -8.10], [-34.89, -8.10], [-34.89, -8.09], [-34.90, -8.09], [-34.90, -8.10]]]
    features = [
        _feature("Vila Teste", {"type": "Polygon", "coordinates": square}),
        _feature("Poço", {"type": "Point", "coordinates": [-34.9, -8.0]}),
    ]
    path = tmp_path / "custom.geojson"
    path.write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    g = Gazetteer()
    assert g.add_geojson(path, name_property="rotulo", source="meu", country="BR") == 2
    area, poi = top(g.lookup("vila teste")), top(g.lookup("POCO"))
    assert (area.kind, area.source, area.country, area.id) == ("area", "meu", "BR", "meu:Vila Teste")
    assert (poi.kind, poi.geometry, poi.bbox) == ("poi", None, None)
    assert (poi.lat, poi.lon) == (-8.0, -34.9)


def _feature(name: str, geometry: dict) -> dict:
    return {"type": "Feature", "properties": {"rotulo": name}, "geometry": geometry}


# ----------------------------------------------------------------------------- free text


def test_portuguese_report_finds_bairros_and_city(recife_gaz: Gazetteer) -> None:
    text = "Relatório sobre enchentes em Boa Viagem e Casa Amarela, no Recife, Pernambuco"
    matches = recife_gaz.find_places(text, country_hint="BR")
    found = {m.text: m.place for m in matches}
    assert found["Boa Viagem"].kind == "area" and found["Boa Viagem"].source == "recife_bairros"
    assert found["Casa Amarela"].kind == "area"
    assert (found["Recife"].kind, found["Recife"].source) == ("city", "geonames")
    assert set(found) <= {"Boa Viagem", "Casa Amarela", "Recife", "Pernambuco"}
    if "Pernambuco" in found:
        assert found["Pernambuco"].kind == "state"
    for m in matches:
        assert text[m.start : m.end] == m.text
        assert 0.0 < m.confidence <= 1.0
    assert [m.start for m in matches] == sorted(m.start for m in matches)


def test_other_places_of_the_text_pick_the_bairro(recife_gaz: Gazetteer) -> None:
    matches = recife_gaz.find_places("Chuvas em Campo Grande e no Recife.")
    (campo_grande,) = [m for m in matches if m.text == "Campo Grande"]
    assert campo_grande.place.kind == "area"
    elsewhere = recife_gaz.find_places("Reunião em Campo Grande, Mato Grosso do Sul.")
    assert elsewhere[0].place.kind == "city" and elsewhere[0].place.admin1 == "11"


def test_longest_match_wins_and_matches_do_not_overlap(gaz: Gazetteer) -> None:
    text = "Obras em Rio Grande do Norte, São José dos Campos e Rio de Janeiro."
    matches = gaz.find_places(text, country_hint="BR")
    assert [m.text for m in matches] == ["Rio Grande do Norte", "São José dos Campos", "Rio de Janeiro"]
    assert matches[0].place.kind == "state"
    assert all(a.end <= b.start for a, b in zip(matches, matches[1:], strict=False))


def test_state_context_and_accentless_text(gaz: Gazetteer) -> None:
    (sp_state,) = gaz.find_places("no estado de São Paulo")
    assert sp_state.place.kind == "state"
    (sp_city,) = gaz.find_places("Moro em Sao Paulo.")
    assert sp_city.place.kind == "city" and sp_city.text == "Sao Paulo"


def test_capitalisation_and_stopwords(gaz: Gazetteer) -> None:
    assert gaz.find_places("fomos a natal de carro") == []  # lower case: not a name
    assert [m.place.country for m in gaz.find_places("Fomos a Natal de carro.")] == ["BR"]
    assert gaz.find_places("Para mais detalhes. Nice work.") == []
    assert gaz.find_places("Moro perto da praia.") == []  # sentence start: small town names need more
    assert [m.place.kind for m in gaz.find_places("Belém do Pará")] in (["city"], ["city", "state"])
    assert gaz.find_places("Maria dos Santos chegou.") == []  # a surname, not the city


@pytest.mark.parametrize("text", [PT_PARAGRAPH_NO_PLACES, EN_PARAGRAPH_NO_PLACES])
@pytest.mark.parametrize("hint", [None, "BR", "US"])
def test_no_false_positives_in_ordinary_prose(recife_gaz: Gazetteer, text: str, hint: str | None) -> None:
    assert recife_gaz.find_places(text, country_hint=hint) == []


def test_english_text(gaz: Gazetteer) -> None:
    text = "Floods in Helsinki and Lisbon were smaller than the 2024 event in Porto Alegre, Brazil."
    found = {m.text: m.place.country for m in gaz.find_places(text)}
    assert found == {"Helsinki": "FI", "Lisbon": "PT", "Porto Alegre": "BR", "Brazil": "BR"}


def _best(gaz: Gazetteer, text: str) -> dict[str, tuple[str, str | None, float]]:
    return {m.text: (m.place.name, m.place.country, m.confidence) for m in gaz.find_places(text)}


def test_a_region_after_a_comma_settles_the_namesake(gaz: Gazetteer) -> None:
    found = _best(gaz, "The water utility in Springfield, Illinois, issued a boil order.")
    name, country, conf = found["Springfield"]
    assert country == "US" and conf >= 0.5
    place = next(m.place for m in gaz.find_places("Springfield, Illinois") if m.text == "Springfield")
    assert place.admin1 == "IL"
    bolivia = next(
        m for m in gaz.find_places("Officials in Santa Cruz, Bolivia, said") if m.text == "Santa Cruz"
    )
    assert bolivia.place.country == "BO" and bolivia.confidence >= 0.5
    # the region may come a few words on: "Valença, no interior do Rio de Janeiro"
    text = "Em Valença, no baixo sul da Bahia, a maré subiu; já Valença, no interior do Rio de Janeiro, não."
    valencas = [m for m in gaz.find_places(text) if m.text == "Valença"]
    assert [m.place.admin1 for m in valencas] == ["05", "21"]  # GeoNames admin1: Bahia, Rio de Janeiro


def test_a_place_list_at_a_sentence_start_is_read_as_names(gaz: Gazetteer) -> None:
    found = _best(gaz, "Lima, Peru, and La Paz, Bolivia, are the capitals most exposed to glacier retreat.")
    assert found["Lima"][1] == "PE" and found["Lima"][2] >= 0.5
    assert "Vitória" in _best(gaz, "Vitória e Vila Velha concentram 40% da frota de veículos do estado.")


def test_a_city_name_that_starts_a_longer_name_is_weak_evidence(gaz: Gazetteer) -> None:
    teimosa = _best(gaz, "Moradores da comunidade de Brasília Teimosa reclamam do esgoto.")
    assert teimosa["Brasília"][2] < 0.5  # the Recife bairro, not the capital
    assert _best(gaz, "Moradores de Brasília reclamam do trânsito.")["Brasília"][2] >= 0.5


def test_unsure_names_near_each_other_support_each_other(gaz: Gazetteer) -> None:
    """Mutual support: neither name settles its namesake alone (Portland ME/OR, Salem
    MA/OR/IN, Victoria HK/BC), but the readings that lie together win and grow surer."""
    alone = {m.text: m for t in ("Storms hit Portland.", "Storms hit Salem.") for m in gaz.find_places(t)}
    pair = {m.text: m for m in gaz.find_places("Storms hit Portland and Salem overnight.")}
    assert {(m.place.country, m.place.admin1) for m in pair.values()} == {("US", "OR")}
    assert all(pair[name].confidence > alone[name].confidence for name in ("Portland", "Salem"))
    assert all(m.confidence >= 0.5 for m in pair.values())
    canada = gaz.find_places("Ferries between Vancouver and Victoria were cancelled on Monday.")
    assert [(m.place.country, m.place.admin1) for m in canada] == [("CA", "02"), ("CA", "02")]
    assert gaz.find_places("Rain in Victoria.")[0].place.country != "CA"  # alone it is Hong Kong's


def test_a_named_country_lowers_no_place_outside_it(gaz: Gazetteer) -> None:
    """ "Talks in Geneva on aid for Mozambique": the country is no evidence against a city
    elsewhere (its capital is no measure of nearness), so Geneva keeps its own confidence."""
    alone = gaz.find_places("Talks in Geneva ended.")[0]
    with_country = gaz.find_places("Talks in Geneva on aid for Mozambique ended.")[0]
    assert with_country.place.id == alone.place.id and with_country.confidence == alone.confidence


def test_a_state_named_after_its_countrys_capital_yields_to_the_city(gaz: Gazetteer) -> None:
    """ "Washington" alone is the capital (a national capital's own name is preferred over
    its namesakes, and a state named after a big city of its country yields to it); a list
    of states still reads it as the state."""
    best = gaz.lookup("Washington")[0]
    assert (best.place.kind, best.place.admin1) == ("city", "DC") and best.confidence >= 0.5
    states = gaz.find_places("Oregon, Idaho and Washington ban open fires this summer.")
    assert [m.place.kind for m in states] == ["state", "state", "state"]


def test_far_apart_big_places_are_no_cluster_to_be_far_from(gaz: Gazetteer) -> None:
    """Coherence lowers a reading far from the text's cluster of places; a text whose big
    places are themselves continents apart has none, so the capital keeps its confidence.
    A small far namesake next to a metropolis is still lowered ("a Ribeira" of Salvador)."""
    trip = gaz.find_places("Officials travelled from Washington to Brasília and Recife last week.")
    assert [(m.place.country, m.confidence >= 0.5) for m in trip] == [
        ("US", True),
        ("BR", True),
        ("BR", True),
    ]
    assert trip[0].place.admin1 == "DC"
    salvador = {
        m.text: m
        for m in gaz.find_places("Moradores de Salvador lotaram a Penha e a Ribeira no domingo.", "BR")
    }
    assert salvador["Ribeira"].confidence < 0.5


def test_a_list_of_states_reads_its_ambiguous_names_as_states(gaz: Gazetteer) -> None:
    table = "Utah 1,000\nVermont 2,000\nVirginia 3,000\nWashington 4,000\nWest Virginia 5,000\nWisconsin 6"
    kinds = {m.place.name: m.place.kind for m in gaz.find_places(table, "US")}
    assert kinds["Washington"] == "state" and kinds["Virginia"] == "state"
    # alone, or next to cities, Washington is still the capital
    assert gaz.find_places("The meeting took place in Washington.", "US")[0].place.kind == "city"
