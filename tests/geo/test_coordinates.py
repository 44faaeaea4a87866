"""Coordinates in free text: the forms Brazilian and English reports use, and the numbers that only
look like coordinates (dates, money, tables) and must be left alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyproj import Transformer

from geo.coordinates import CoordinateMatch, find_coordinates, valid_latlon

MARCO_ZERO = (-8.0631, -34.8711)  # Recife's Marco Zero square
BOA_VIAGEM = (-(8 + 7 / 60 + 11 / 3600), -(34 + 53 / 60 + 49 / 3600))  # 8°07'11"S 34°53'49"W
JAQUEIRA = (-8.0375, -34.9030)
SAMPLE_PDF = Path(__file__).resolve().parents[2] / "samples" / "relatorio_ambiental_recife_2024.pdf"


def _utm_to_latlon(epsg: int, easting: float, northing: float) -> tuple[float, float]:
    """Expected values, computed independently of the module (SIRGAS 2000 CRSs, not WGS84 UTM)."""
    lon, lat = Transformer.from_crs(f"EPSG:{epsg}", "EPSG:4326", always_xy=True).transform(easting, northing)
    return lat, lon


OLINDA_UL = _utm_to_latlon(31985, 288776, 9120760)  # SIRGAS 2000 / UTM 25S, Olinda raster corner
SAO_PAULO_SE = _utm_to_latlon(31983, 333000, 7395000)  # SIRGAS 2000 / UTM 23S


def _only(text: str, default_utm_zone: str | None = None) -> CoordinateMatch:
    found = find_coordinates(text, default_utm_zone)
    assert len(found) == 1, f"{text!r}: {found}"
    return found[0]


def _assert_at(match: CoordinateMatch, expected: tuple[float, float], tol: float = 1e-4) -> None:
    assert match.lat == pytest.approx(expected[0], abs=tol)
    assert match.lon == pytest.approx(expected[1], abs=tol)


@pytest.mark.parametrize(
    ("text", "expected", "fmt"),
    [
        ("-8.0631, -34.8711", MARCO_ZERO, "decimal"),
        ("(-8.0375; -34.9030)", JAQUEIRA, "decimal"),
        ("(-8,0375; -34,9030)", JAQUEIRA, "decimal"),
        ("(−8,0375; −34,9030)", JAQUEIRA, "decimal"),  # Unicode minus signs
        ("[-8.0375, -34.9030]", JAQUEIRA, "decimal"),
        ("-8.0631°, -34.8711°", MARCO_ZERO, "decimal"),
        ("lat -8.0631, lon -34.8711", MARCO_ZERO, "labelled"),
        ("latitude: -8.0631 longitude: -34.8711", MARCO_ZERO, "labelled"),
        ("Latitude: -8,0631; Longitude: -34,8711", MARCO_ZERO, "labelled"),
        ("latitude -8,0631 e longitude -34,8711", MARCO_ZERO, "labelled"),
        ("Longitude | -34.8711\nLatitude | -8.0631", MARCO_ZERO, "labelled"),
        ("Lat/Lon: 23.5, -77.1", (23.5, -77.1), "labelled"),
        ("Lon/Lat (WGS84): -34.8711, -8.0631", MARCO_ZERO, "labelled"),
        ("Coordenadas geográficas: -8,0631; -34,8711", MARCO_ZERO, "labelled"),
        ("Latitude: 8°07'11\" S Longitude: 34°53'49\" W", BOA_VIAGEM, "labelled"),
        ("8.0631 S, 34.8711 W", MARCO_ZERO, "decimal"),
        ("8.0631°S 34.8711°W", MARCO_ZERO, "decimal"),
        ("8,0631° S, 34,8711° O", MARCO_ZERO, "decimal"),
        ("34.8711° W, 8.0631° S", MARCO_ZERO, "decimal"),
        ("N 48.1351 E 11.5820", (48.1351, 11.5820), "decimal"),
        ("8°07'11\"S 34°53'49\"W", BOA_VIAGEM, "dms"),
        ("8° 07′ 11″ S, 34° 53′ 49″ W", BOA_VIAGEM, "dms"),
        ("8º07’11”S 34º53’49”O", BOA_VIAGEM, "dms"),
        ("8°07'11''S 34°53'49''W", BOA_VIAGEM, "dms"),
        ("S 8°07'11\" W 34°53'49\"", BOA_VIAGEM, "dms"),
        ("8°07'11\" Sul e 34°53'49\" Oeste", BOA_VIAGEM, "dms"),
        ("8°07.18'S 34°53.82'W", (-(8 + 7.18 / 60), -(34 + 53.82 / 60)), "dms"),
        ("-8°07'11\", -34°53'49\"", BOA_VIAGEM, "dms"),
        ("8°07'11\"S\n34°53'49\"W", BOA_VIAGEM, "dms"),  # OCR broke the line
    ],
)
def test_finds_degree_coordinates(text: str, expected: tuple[float, float], fmt: str) -> None:
    match = _only(text)
    _assert_at(match, expected)
    assert match.format == fmt
    assert match.text == text[match.start : match.end]


@pytest.mark.parametrize(
    ("text", "expected", "default_zone"),
    [
        ("UTM 25S 288776 9120760", OLINDA_UL, None),
        ("zona 25L E 288776 N 9120760", OLINDA_UL, None),
        ("SIRGAS 2000 / UTM zone 25S: 288776 mE 9120760 mN", OLINDA_UL, None),
        ("Fuso 25, hemisfério sul: N 9.120.760 E 288.776", OLINDA_UL, None),
        ("UTM 23K 333000 7395000", SAO_PAULO_SE, None),
        ("288776 mE 9120760 mN (UTM 25S)", OLINDA_UL, None),
        ("Ponto P1: E 288776; N 9120760", OLINDA_UL, "25S"),
        ("Ponto P1: E = 288776,25 / N = 9120760,75", _utm_to_latlon(31985, 288776.25, 9120760.75), "25 S"),
        ("Fuso 23: E 333000, N 7395000", SAO_PAULO_SE, "23S"),  # hemisphere from the caller's zone
    ],
)
def test_finds_utm_coordinates(text: str, expected: tuple[float, float], default_zone: str | None) -> None:
    match = _only(text, default_zone)
    _assert_at(match, expected, tol=1e-3)
    assert match.format == "utm"


def test_utm_zone_stated_earlier_in_the_text_applies_to_later_rows() -> None:
    text = "Coordenadas UTM, Fuso 25S (SIRGAS 2000)\nP1: E 288776; N 9120760\nP2: E 290100; N 9118000"
    first, second = find_coordinates(text)
    _assert_at(first, OLINDA_UL, tol=1e-3)
    _assert_at(second, _utm_to_latlon(31985, 290100, 9118000), tol=1e-3)


def test_utm_north_zone() -> None:
    _assert_at(_only("UTM 31N 448251 5411932"), _utm_to_latlon(32631, 448251, 5411932), tol=1e-3)


@pytest.mark.parametrize(
    ("text", "default_zone"),
    [
        ("E 288776 N 9120760", None),  # no zone anywhere
        ("Ponto 1: 288776 9120760", "25S"),  # unlabelled numbers need a zone right before them
        ("fuso 25, E=288776, N=9120760", None),  # hemisphere unstated, northing could be either
        ("UTM 25S 28877 9120760", None),  # easting out of range
    ],
)
def test_skips_utm_without_enough_information(text: str, default_zone: str | None) -> None:
    assert find_coordinates(text, default_zone) == []


def test_rejects_a_malformed_default_zone() -> None:
    with pytest.raises(ValueError, match="UTM zone"):
        find_coordinates("E 288776 N 9120760", default_utm_zone="zona sul")


@pytest.mark.parametrize(
    "text",
    [
        "Auto de infração lavrado em 18/03/2010 em Manacapuru",
        "Chuva acumulada até 2016-07-10",
        "Multa de R$ 39.000,00; reincidência R$ 12.500,00",
        "aumento de 12,7%, 3,2%",
        "Tabela 3  2.345 1.234",
        "Tabela 3: 2.345, 1.234",
        "crescimento decenal 1951-61 e 1961-71",
        "ver páginas 12, 13 e 14",
        "(2,345, 1,234)",  # decimal commas with a comma separator: ambiguous
        "(8.06; 34.87)",  # brackets, but too few decimals
        "8.0631, 34.8711",  # no sign, no label, no brackets
        "coeficientes -0.1234, -0.5678",  # statistics near (0, 0)
        "-1.2345, -2.3456, -3.4567",  # a list of numbers, not a pair
        "temperatura -2.50°C, -3.10°C",
        "inclinação de 15°, 30°",
        "10 N, 20 W",  # newtons and watts
        "lat 95.0, lon 10.0",  # impossible latitude
        "8°07'11\"N 34°53'49\"S",  # two latitudes
        "8°75'11\"S 34°53'49\"W",  # 75 minutes
        "Lat 8.0631 E, Lon 34.8711 W",  # hemisphere contradicts the label
        "lat -8.0631",  # half a coordinate
        "Boletim 26/2010, CONAMA Res. 274/2000",
        "vol. 3 N. 12, p. 45",
    ],
)
def test_ignores_numbers_that_are_not_coordinates(text: str) -> None:
    assert find_coordinates(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("(-34.9030; -8.0375)", (-34.9030, -8.0375)),  # both orders possible: written order wins
        ("(-134.9030; 8.0375)", (8.0375, -134.9030)),  # first cannot be a latitude: swapped
        ("longitude -34.8711, latitude -8.0631", MARCO_ZERO),  # labels decide
        ("34°53'49\"W 8°07'11\"S", BOA_VIAGEM),  # hemispheres decide
    ],
)
def test_axis_order(text: str, expected: tuple[float, float]) -> None:
    _assert_at(_only(text), expected)


RECIFE_PARAGRAPH = """Coordenadas dos pontos de referência
•  Parque da Jaqueira (-8,0375; -34,9030)
•  Praia de Boa Viagem: 8°07'11"S 34°53'49"W
•  Marco Zero: lat -8.0631, lon -34.8711
•  Jardim Botânico do Recife: 8°04'36"S, 34°57'33"W
•  Estação EST-05, Rio Tejipió (Afogados): -8.0835, -34.9190
•  Canto da imagem Landsat: UTM 25S 288776 9120760
Relatório de 18/03/2010, página 12; custo R$ 39.000,00 (12,7% do total).
Coordenadas em graus decimais (datum WGS 84) ou em graus, minutos e segundos."""


def test_mixed_paragraph_in_order() -> None:
    found = find_coordinates(RECIFE_PARAGRAPH)
    assert [m.format for m in found] == ["decimal", "dms", "labelled", "dms", "decimal", "utm"]
    expected = [
        JAQUEIRA,
        BOA_VIAGEM,
        MARCO_ZERO,
        (-(8 + 4 / 60 + 36 / 3600), -(34 + 57 / 60 + 33 / 3600)),
        (-8.0835, -34.9190),
        OLINDA_UL,
    ]
    for match, point in zip(found, expected, strict=True):
        _assert_at(match, point, tol=1e-3)
        assert RECIFE_PARAGRAPH[match.start : match.end] == match.text
    assert all(a.end <= b.start for a, b in zip(found, found[1:], strict=False))


def test_one_reading_per_span() -> None:
    """A labelled DMS pair is also a hemisphere DMS pair: it must come back once."""
    text = "Latitude: 8°07'11\"S, Longitude: 34°53'49\"W; Coordenadas: 8°07'11\"S 34°53'49\"W"
    found = find_coordinates(text)
    assert len(found) == 2
    assert found[0].end <= found[1].start


def test_confidence_ranks_explicit_forms_above_bare_pairs() -> None:
    def confidence(text: str) -> float:
        return _only(text).confidence

    dms = confidence("8°07'11\"S 34°53'49\"W")
    labelled = confidence("lat -8.0631, lon -34.8711")
    hemisphere = confidence("8.0631°S 34.8711°W")
    bracketed = confidence("(-8.0375; -34.9030)")
    bare = confidence("-8.0631, -34.8711")
    assert min(dms, labelled, hemisphere) > bracketed > bare
    assert all(0 < c <= 1 for c in (dms, labelled, hemisphere, bracketed, bare))


@pytest.mark.parametrize(
    ("lat", "lon", "ok"),
    [
        (-8.06, -34.87, True),
        (90, 180, True),
        (-90.0001, 0, False),
        (0, 180.5, False),
        (float("nan"), 0, False),
    ],
)
def test_valid_latlon(lat: float, lon: float, ok: bool) -> None:
    assert valid_latlon(lat, lon) is ok


def test_sample_recife_report_text_layer() -> None:
    """The sample PDF's page text, as ingestion extracts it, yields its seven reference points."""
    if not SAMPLE_PDF.exists():
        pytest.skip(f"{SAMPLE_PDF} not found")
    pymupdf = pytest.importorskip("pymupdf")
    with pymupdf.open(SAMPLE_PDF) as doc:
        text = "\n".join(page.get_text() for page in doc)
    found = find_coordinates(text)
    assert len(found) == 7
    assert all(-8.2 < m.lat < -7.9 and -35.0 < m.lon < -34.8 for m in found)
    assert any(m.text == "lat -8.0631, lon -34.8711" for m in found)
