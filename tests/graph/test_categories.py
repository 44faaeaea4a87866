from __future__ import annotations

from graph.categories import LABELS, SYNONYMS, category_label, normalise_name, normalise_tags


def test_osm_tags_normalise_to_one_category() -> None:
    assert normalise_tags({"amenity": "drinking_water"}) == "water_point"
    assert normalise_tags({"leisure": "park", "name": "Esplanadi"}) == "park"
    assert normalise_tags({"highway": "bus_stop"}) == "bus_stop"
    assert normalise_tags({"public_transport": "platform", "bus": "yes"}) == "bus_stop"
    assert normalise_tags({"amenity": "recycling"}) == "recycling"
    assert normalise_tags({"shop": "chemist"}) == "pharmacy"
    assert normalise_tags({"amenity": "Post Box"}) == "post_box"  # unknown amenity values are kept


def test_tags_that_name_no_poi_are_none() -> None:
    assert normalise_tags({"highway": "crossing"}) is None
    assert normalise_tags({"public_transport": "platform", "railway": "platform"}) is None
    assert normalise_tags({"building": "yes"}) is None


def test_names_in_portuguese_and_english_meet_on_one_key() -> None:
    assert normalise_name("Escolas") == normalise_name("school") == "school"
    assert normalise_name("Farmácia") == "pharmacy"
    assert normalise_name("drinking water") == "water_point"
    assert normalise_name("Ponto de reciclagem") == "recycling"
    assert normalise_name("Something Else") == "something_else"


def test_answers_name_categories_in_the_questions_language() -> None:
    assert category_label("school", "pt") == "escolas" and category_label("school", "en") == "schools"
    assert category_label("bus_stop", "pt") == "paradas de ônibus"
    assert category_label("some_new_kind", "pt") == "some new kind"  # a dataset's own category
    assert set(LABELS) >= set(SYNONYMS)  # every category the parser knows has a label
