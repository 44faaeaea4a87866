"""The graph channel's dataset uploads (graph/channel.py): what reaches the store."""

from __future__ import annotations

from pathlib import Path

from graph.channel import GraphChannel


def test_a_different_csv_under_the_same_name_is_a_second_dataset_with_every_row(tmp_path: Path) -> None:
    channel = GraphChannel(tmp_path / "g.sqlite3")
    try:
        first, _ = channel.add_dataset(b"name,lat,lon\nA1,-8.05,-34.9\nA2,-8.06,-34.9\n", "pois.csv", "t")
        again = b"name,lat,lon\nB1,-8.07,-34.9\nB2,-8.08,-34.9\nB3,-8.09,-34.9\n"
        second, created = channel.add_dataset(again, "pois.csv", "t")
        assert created and second.id != first.id and (second.pois, second.duplicates) == (3, 0)
        assert len(channel.datasets("t")) == 2 and len(channel.store.poi_names("t")) == 5
        # an OSM-style file keeps global ids: the same node in two extracts is one POI
        cafe = b'{"type": "node", "id": 7, "lat": -8.1, "lon": -34.9, "tags": {"amenity": "cafe"}}'
        overpass = b'{"elements": [' + cafe + b"]}"
        channel.add_dataset(overpass, "cafes.json", "t")
        dup, _ = channel.add_dataset(overpass[:-1] + b', "x": 1}', "cafes.json", "t")
        assert (dup.pois, dup.duplicates) == (0, 1)
    finally:
        channel.close()


def test_answers_from_the_data_hold_inside_the_requests_area(tmp_path: Path) -> None:
    """Fuzzing: a count, nearest or pairs question over POI data ignored the request's geo
    filter (bbox/place/h3 of /v1/ask): it counted the whole dataset. `within` (the service's
    point test of the filter) restricts what the data answers from."""
    rows = "\n".join(
        [f"Escola Norte {i},-8.0{i},-34.90,school" for i in range(1, 4)]
        + [f"Escola Sul {i},-8.3{i},-34.90,school" for i in range(1, 3)]
    )
    channel = GraphChannel(tmp_path / "g.sqlite3")
    try:
        channel.add_dataset(f"name,lat,lon,category\n{rows}\n".encode(), "escolas.csv", "t")
        question = "How many schools are there?"
        assert channel.analyze(question, "t").value == 5
        north = channel.analyze(question, "t", within=lambda lat, lon: lat > -8.2)
        assert north is not None and north.value == 3
        nobody = channel.analyze(question, "t", within=lambda lat, lon: False)
        assert nobody is not None and nobody.value == 0
    finally:
        channel.close()
