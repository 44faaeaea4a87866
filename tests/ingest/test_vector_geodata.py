"""GeoJSON, KML/KMZ and OSM files as documents: sniffing by content, features with validated
geometry, the rendered map page with one text block per feature, document geo tags,
and the whole path through Carta (text search, radius filter, footprint)."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable

import pytest
from shapely.geometry import Point, shape

from ingest.errors import BadCoordinates, CorruptDocument, TooLarge, UnsupportedType
from ingest.formats import open_document, vector
from ingest.formats.osm import osm_layer
from ingest.formats.vector import MAX_AREA_RINGS, MAX_TAGS, geodata_tags, parse_geodata
from ingest.loaders import LoadOptions
from ingest.sniff import sniff
from ingest.upload import IngestRequest, document_tags
from service.carta import Carta
from service.query.geo_filter import GeoSpec
from tests.conftest import corpus_path

ASA_BRANCA = (-8.124166667, -34.94925278)  # (lat, lon) of Escola Municipal Asa Branca
SALVADOR = (-12.97, -38.50)

KML = """<?xml version="1.0" encoding="UTF-8"?>
<!-- exported by hand -->
<kml xmlns="http://www.opengis.net/kml/2.2">
  <Document>
    <name>Pontos do Recife Antigo</name>
    <Placemark>
      <name>Marco Zero</name>
      <description><![CDATA[<p>Pra&ccedil;a <b>Rio Branco</b>, ponto inicial</p>]]></description>
      <ExtendedData>
        <Data name="tipo"><value>praça</value></Data>
        <Data name="bairro"><value>Recife</value></Data>
      </ExtendedData>
      <Point><coordinates>-34.8713, -8.0631,0</coordinates></Point>
    </Placemark>
    <Placemark>
      <name>Parque das Esculturas</name>
      <ExtendedData><SchemaData schemaUrl="#s"><SimpleData name="area_ha">1.2</SimpleData></SchemaData>
      </ExtendedData>
      <Polygon>
        <outerBoundaryIs><LinearRing><coordinates>
          -34.8695,-8.0640,0 -34.8680,-8.0640,0 -34.8680,-8.0625,0 -34.8695,-8.0625,0 -34.8695,-8.0640,0
        </coordinates></LinearRing></outerBoundaryIs>
        <innerBoundaryIs><LinearRing><coordinates>
          -34.8690,-8.0636 -34.8686,-8.0636 -34.8686,-8.0630 -34.8690,-8.0636
        </coordinates></LinearRing></innerBoundaryIs>
      </Polygon>
    </Placemark>
  </Document>
</kml>
""".encode()


def _geojson(*features: dict, **extra: object) -> bytes:
    return json.dumps({"type": "FeatureCollection", "features": list(features), **extra}).encode()


def _point(lon: float, lat: float, **props: object) -> dict:
    return {"type": "Feature", "geometry": {"type": "Point", "coordinates": [lon, lat]}, "properties": props}


# --- sniffing ---------------------------------------------------------------------------


def test_geojson_is_sniffed_by_content_with_bom_and_leading_whitespace() -> None:
    data = _geojson(_point(-34.9, -8.05, name="x"))
    for variant in (data, b"\xef\xbb\xbf" + data, b"\xef\xbb\xbf \n\t" + data, b"\r\n  " + data):
        ftype = sniff(variant)
        assert (ftype.mime, ftype.kind) == ("application/geo+json", "geojson")
    # a bare geometry or a single Feature is GeoJSON too
    assert sniff(b'{"type": "Point", "coordinates": [1, 2]}').kind == "geojson"
    assert sniff(json.dumps(_point(1, 2)).encode()).kind == "geojson"


@pytest.mark.parametrize(
    "data",
    [
        b'{"name": "config", "values": [1, 2, 3]}',
        b'{"type": "name", "properties": {"name": "EPSG:4326"}}',
        b'[{"type": "Feature"}]',
        b"\xef\xbb\xbf" + b'{"type": "Topology", "objects": {}}',
    ],
    ids=["plain-object", "other-type", "array", "topojson"],
)
def test_non_geo_json_is_unsupported(data: bytes) -> None:
    with pytest.raises(UnsupportedType) as info:
        sniff(data)
    assert "GeoJSON" in str(info.value) and "KML" in str(info.value)


def test_kml_is_sniffed_by_its_root_in_any_namespace() -> None:
    prefixed = b'<?xml version="1.0"?>\n<kml:kml xmlns:kml="http://www.opengis.net/kml/2.2"><kml:Document/></kml:kml>'
    for data in (KML, b"\xef\xbb\xbf" + KML, prefixed, b"<kml/>"):
        ftype = sniff(data)
        assert (ftype.mime, ftype.kind) == ("application/vnd.google-earth.kml+xml", "kml")
    with pytest.raises(UnsupportedType):
        sniff(b'<?xml version="1.0"?><gpx version="1.1"><wpt lat="1" lon="2"/></gpx>')


# --- parsing and validation -------------------------------------------------------------


def test_schools_geojson_features_text_and_capped_tags() -> None:
    data = corpus_path("poi", "recife_escolas_municipais.geojson").read_bytes()
    layer = parse_geodata(data, "geojson")
    assert len(layer.features) == 223
    asa = next(f for f in layer.features if f.name == "Escola Municipal Asa Branca")
    text = asa.text()
    assert text.startswith("Escola Municipal Asa Branca — ")
    assert "Endereco: R Maria Adelaide Castelo Branco, 55 - Cohab" in text and "IDEB: 6.1" in text

    tags = geodata_tags(data, "geojson")
    assert len(tags) == MAX_TAGS < 223
    assert {t.source for t in tags} == {"geodata"} and {t.kind for t in tags} == {"poi"}
    tag = next(t for t in tags if t.label == "Escola Municipal Asa Branca")
    assert (tag.lat, tag.lon, tag.confidence, tag.ring) == (*ASA_BRANCA, 1.0, None)


def test_schools_page_has_a_map_picture_and_one_block_per_feature() -> None:
    data = corpus_path("poi", "recife_escolas_municipais.geojson").read_bytes()
    opened = open_document(data, sniff(data), LoadOptions())
    assert opened.kind == "geojson" and opened.page_count == 1
    assert any("first 200 of 223" in w for w in opened.warnings)
    (page,) = list(opened.pages())
    opened.close()
    assert page.image.width == 1200 and 600 <= page.image.height <= 1800
    assert (page.width, page.height) == page.image.size and page.text_source == "text"
    assert len(page.blocks) == 223
    for block in page.blocks:  # a point's box is a marker-sized box inside the picture
        x0, y0, x1, y1 = block.bbox
        assert 0 <= x0 < x1 <= page.width and 0 <= y0 < y1 <= page.height
        assert x1 - x0 <= 13 and y1 - y0 <= 13
    # north is up: the northernmost school sits highest on the picture
    layer = parse_geodata(data, "geojson")
    north = max(range(223), key=lambda i: layer.features[i].geometry["coordinates"][1])
    assert page.blocks[north].bbox[1] == min(b.bbox[1] for b in page.blocks)


def test_neighbourhood_polygons_become_areas_with_rings() -> None:
    data = corpus_path("poi", "recife_bairros.geojson").read_bytes()
    layer = parse_geodata(data, "geojson")
    assert len(layer.features) == 94
    assert {f.geometry["type"] for f in layer.features} == {"Polygon"}
    names = {f.name for f in layer.features}
    assert {"BOA VIAGEM", "RECIFE"} <= names
    # KML-export styling attributes (tessellate, extrude, ...) stay out of the text
    assert all("tessellate" not in f.text() for f in layer.features)

    tags = geodata_tags(data, "geojson")
    assert len(tags) == 94 and {t.kind for t in tags} == {"area"}
    with_ring = [t for t in tags if t.ring]
    assert len(with_ring) == MAX_AREA_RINGS
    for tag, feature in zip(tags, layer.features, strict=True):  # representative point inside
        assert shape(feature.geometry).buffer(1e-9).contains(Point(tag.lon, tag.lat))

    (page,) = list(open_document(data, sniff(data), LoadOptions()).pages())
    assert len(page.blocks) == 94
    boa_viagem = next(b for b in page.blocks if b.text == "BOA VIAGEM")
    x0, y0, x1, y1 = boa_viagem.bbox
    assert 20 < x1 - x0 < page.width / 2 and 20 < y1 - y0 < page.height / 2


def test_kml_placemarks_point_and_polygon() -> None:
    layer = parse_geodata(KML, "kml")
    assert layer.title == "Pontos do Recife Antigo"
    marco, parque = layer.features
    assert marco.geometry == {"type": "Point", "coordinates": [-34.8713, -8.0631]}
    assert marco.text() == (
        "Marco Zero — description: Praça Rio Branco , ponto inicial; tipo: praça; bairro: Recife"
    )
    assert parque.geometry["type"] == "Polygon" and len(parque.geometry["coordinates"]) == 2
    assert parque.geometry["coordinates"][1][0] == parque.geometry["coordinates"][1][-1]  # closed
    assert parque.text() == "Parque das Esculturas — area_ha: 1.2"

    point_tag, area_tag = geodata_tags(KML, "kml")
    assert (point_tag.kind, point_tag.label, point_tag.lat, point_tag.lon) == (
        "poi",
        "Marco Zero",
        -8.0631,
        -34.8713,
    )
    assert area_tag.kind == "area" and area_tag.ring and len(area_tag.ring) == 5
    assert -34.8695 < area_tag.lon < -34.8680 and -8.0640 < area_tag.lat < -8.0625

    opened = open_document(KML, sniff(KML), LoadOptions())
    assert opened.title == "Pontos do Recife Antigo" and opened.warnings == ()
    (page,) = list(opened.pages())
    assert [b.text.split(" — ")[0] for b in page.blocks] == ["Marco Zero", "Parque das Esculturas"]


def test_kml_multigeometry_and_lines() -> None:
    kml = b"""<kml xmlns="http://www.opengis.net/kml/2.2"><Document>
      <Placemark><name>Rota</name><LineString><coordinates>
        -34.90,-8.00 -34.88,-8.00 -34.86,-8.00</coordinates></LineString></Placemark>
      <Placemark><name>Duas pontes</name><MultiGeometry>
        <Point><coordinates>-34.87,-8.06</coordinates></Point>
        <Point><coordinates>-34.88,-8.07</coordinates></Point>
      </MultiGeometry></Placemark>
    </Document></kml>"""
    route, bridges = parse_geodata(kml, "kml").features
    assert bridges.geometry["type"] == "MultiPoint"
    line_tag, multi_tag = geodata_tags(kml, "kml")
    assert line_tag.kind == "line" and (line_tag.lat, line_tag.lon) == pytest.approx((-8.00, -34.88))
    assert multi_tag.kind == "poi"


def test_out_of_range_coordinates_are_refused_clearly() -> None:
    data = _geojson(_point(-34.9, -8.05, name="ok"), _point(200.0, 10.0, name="Fora do mapa"))
    with pytest.raises(BadCoordinates) as info:
        open_document(data, sniff(data), LoadOptions())
    message = str(info.value)
    assert "feature 2" in message and "Fora do mapa" in message and "[200.0, 10.0]" in message
    assert "-180..180" in message and type(info.value) is BadCoordinates

    # projected coordinates (e.g. UTM) get a hint about the declared CRS
    utm = _geojson(
        _point(290_000.0, 9_110_000.0),
        crs={"type": "name", "properties": {"name": "urn:ogc:def:crs:EPSG::31985"}},
    )
    with pytest.raises(BadCoordinates, match="EPSG::31985"):
        parse_geodata(utm, "geojson")
    bad_kml = KML.replace(b"-34.8713, -8.0631", b"-34.8713, -98.0631")
    with pytest.raises(BadCoordinates, match="Marco Zero"):
        parse_geodata(bad_kml, "kml")


def test_broken_files_are_corrupt_and_huge_ones_too_large(monkeypatch: pytest.MonkeyPatch) -> None:
    truncated = _geojson(_point(-34.9, -8.05))[:-10]
    assert sniff(truncated).kind == "geojson"
    with pytest.raises(CorruptDocument, match="not valid JSON"):
        parse_geodata(truncated, "geojson")
    with pytest.raises(CorruptDocument, match="no features"):
        parse_geodata(_geojson(), "geojson")
    with pytest.raises(CorruptDocument, match="feature 1"):
        parse_geodata(
            _geojson({"type": "Feature", "geometry": {"type": "Point", "coordinates": ["a", 1]}}), "geojson"
        )
    with pytest.raises(CorruptDocument, match="well-formed"):
        parse_geodata(KML[:-20], "kml")
    with pytest.raises(CorruptDocument, match="entities"):
        parse_geodata(b'<!DOCTYPE kml [<!ENTITY a "aaaa">]><kml>&a;</kml>', "kml")

    monkeypatch.setattr(vector, "MAX_FEATURES", 3)
    with pytest.raises(TooLarge, match="4 features"):
        parse_geodata(_geojson(*[_point(1, i) for i in range(4)]), "geojson")
    monkeypatch.setattr(vector, "MAX_VERTICES", 5)
    line = {"type": "Feature", "geometry": {"type": "LineString", "coordinates": [[0, i] for i in range(6)]}}
    with pytest.raises(TooLarge, match="vertices"):
        parse_geodata(_geojson(line), "geojson")


def test_features_without_geometry_are_text_only() -> None:
    data = _geojson({"type": "Feature", "geometry": None, "properties": {"nome": "Sem lugar", "n": 3}})
    (page,) = list(open_document(data, sniff(data), LoadOptions()).pages())
    assert page.blocks[0].text == "Sem lugar — n: 3"
    assert page.blocks[0].bbox == (0.0, 0.0, page.width, page.height)
    assert geodata_tags(data, "geojson") == []


def test_document_tags_of_a_geodata_file_keep_metadata_tags() -> None:
    request = IngestRequest(KML, "pontos.kml", "default", metadata={"lat": -8.05, "lon": -34.9})
    tags = document_tags(request, sniff(KML))
    assert [t.source for t in tags] == ["metadata", "geodata", "geodata"]


# --- end to end -------------------------------------------------------------------------


def test_schools_geojson_end_to_end(make_carta: Callable[..., Carta]) -> None:
    data = corpus_path("poi", "recife_escolas_municipais.geojson").read_bytes()
    carta = make_carta()
    result = carta.ingest(IngestRequest(data, "recife_escolas_municipais.geojson", "default"))
    doc = result.document
    assert (doc.status, doc.kind, doc.mime, doc.pages) == ("ready", "geojson", "application/geo+json", 1)
    assert any("geo-tagged" in w for w in result.warnings)

    found = carta.search(carta.query("Escola Municipal Asa Branca IDEB", "default"))
    top = found.pages[0]
    assert (top.doc_id, top.page_no, top.kind) == (doc.id, 1, "map")
    assert any("Asa Branca" in c.text for c in top.chunks)

    near = GeoSpec(lat=ASA_BRANCA[0], lon=ASA_BRANCA[1], radius_m=300)
    hits = carta.search(carta.query("escola municipal", "default", geo=near)).pages
    assert [(p.doc_id, p.page_no) for p in hits] == [(doc.id, 1)]
    far = GeoSpec(lat=SALVADOR[0], lon=SALVADOR[1], radius_m=5000)
    assert carta.search(carta.query("escola municipal", "default", geo=far)).pages == []

    footprint = shape(json.loads(doc.footprint or "null"))
    assert footprint.contains(Point(-34.92, -8.05))  # central Recife
    min_lon, min_lat, max_lon, max_lat = footprint.bounds
    assert -35.1 < min_lon < max_lon < -34.8 and -8.2 < min_lat < max_lat < -7.9


def _kmz(kml: bytes, name: str = "doc.kml") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("images/icon.png", b"\x89PNG\r\n\x1a\n")
        archive.writestr(name, kml)
    return buffer.getvalue()


def test_kmz_is_a_zipped_kml() -> None:
    data = _kmz(KML)
    ftype = sniff(data)
    assert (ftype.mime, ftype.kind) == ("application/vnd.google-earth.kmz", "kmz")
    layer = parse_geodata(data, "kmz")
    assert [f.name for f in layer.features] == ["Marco Zero", "Parque das Esculturas"]
    assert [t.label for t in geodata_tags(data, "kmz")] == ["Marco Zero", "Parque das Esculturas"]
    # a zip without a KML is not a KMZ; a KMZ with a broken KML is corrupt
    plain_zip = io.BytesIO()
    with zipfile.ZipFile(plain_zip, "w") as archive:
        archive.writestr("notes.txt", "hello")
    with pytest.raises(UnsupportedType):
        sniff(plain_zip.getvalue())
    with pytest.raises(CorruptDocument):
        parse_geodata(_kmz(b"<kml><Placemark>"), "kmz")


def test_kmz_bomb_is_too_large(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vector, "MAX_KMZ_KML_BYTES", 1000)
    big = KML.replace(b"<!-- exported by hand -->", b"<!--" + b" " * 5000 + b"-->")
    with pytest.raises(TooLarge, match="uncompressed"):
        parse_geodata(_kmz(big), "kmz")


def test_osm_xml_named_ways_become_line_features() -> None:
    data = corpus_path("poi", "osmnx_planet_10.068,48.135_10.071,48.137.osm").read_bytes()
    ftype = sniff(data)
    assert (ftype.mime, ftype.kind) == ("application/vnd.openstreetmap.data+xml", "osm")
    layer = osm_layer(data, "osm")
    names = [f.name for f in layer.features]
    assert "Goethestraße" in names and "Haydnstraße" in names
    street = layer.features[names.index("Goethestraße")]
    assert street.geometry and street.geometry["type"] == "LineString"
    assert street.properties["highway"] == "residential" and street.properties["osm_id"].startswith("way/")
    for lon, lat in street.geometry["coordinates"]:  # [lon, lat] inside the file's bounds
        assert 10.067 < lon < 10.072 and 48.134 < lat < 48.138


def test_osm_pbf_pois_and_areas() -> None:
    data = corpus_path("poi", "pyrosm_test.osm.pbf").read_bytes()
    ftype = sniff(data)
    assert (ftype.mime, ftype.kind) == ("application/x-osm-pbf", "osm-pbf")
    layer = osm_layer(data, "osm-pbf")
    fuel = next(f for f in layer.features if f.name == "Neste Huttunen")
    assert fuel.properties["amenity"] == "fuel" and fuel.geometry == {
        "type": "Point",
        "coordinates": [26.945165, 60.5230514],
    }
    kinds = {f.geometry["type"] for f in layer.features if f.geometry}
    assert {"Point", "LineString", "Polygon"} <= kinds
    assert all(f.properties.get("osm_id") for f in layer.features)
    with pytest.raises(CorruptDocument):
        osm_layer(data[:4000], "osm-pbf")  # truncated


def test_osm_pbf_end_to_end(make_carta: Callable[..., Carta]) -> None:
    data = corpus_path("poi", "pyrosm_test.osm.pbf").read_bytes()
    carta = make_carta()
    doc = carta.ingest(IngestRequest(data, "kotka.osm.pbf", "default")).document
    assert (doc.status, doc.kind, doc.pages) == ("ready", "osm-pbf", 1)
    top = carta.search(carta.query("Neste Huttunen fuel station", "default")).pages[0]
    assert top.doc_id == doc.id and any("Neste Huttunen" in c.text for c in top.chunks)
    near = GeoSpec(lat=60.5230514, lon=26.945165, radius_m=200)
    hits = carta.search(carta.query("fuel", "default", geo=near)).pages
    assert [(p.doc_id, p.page_no) for p in hits] == [(doc.id, 1)]
    far = GeoSpec(lat=SALVADOR[0], lon=SALVADOR[1], radius_m=5000)
    assert carta.search(carta.query("fuel", "default", geo=far)).pages == []


def test_empty_rings_and_lines_are_read_and_drawn() -> None:
    """An empty hole, an empty outer ring or an empty LineString is valid GeoJSON; drawn,
    matplotlib raised on it ('vertices' must be 2D), so the ingestion job failed with an
    internal error."""
    square = [[-34.9, -8.1], [-34.8, -8.1], [-34.8, -8.0], [-34.9, -8.0], [-34.9, -8.1]]
    geometries = [
        {"type": "Polygon", "coordinates": [square, []]},
        {"type": "MultiPolygon", "coordinates": [[[]], [square]]},
        {"type": "LineString", "coordinates": []},
    ]
    features = [
        {"type": "Feature", "properties": {"name": f"f{i}"}, "geometry": g} for i, g in enumerate(geometries)
    ]
    data = json.dumps({"type": "FeatureCollection", "features": features}).encode()
    (page,) = list(open_document(data, sniff(data), LoadOptions()).pages())
    assert [b.text for b in page.blocks] == ["f0", "f1", "f2"]
