"""Geo-filtered search and ask over HTTP: exact radius/bbox/polygon/H3/place filters,
maps found by footprint, the geo prior, and bad geo input as clear 4xx."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import h3
import httpx
import pytest

from geo.distance import haversine_m
from ingest.upload import IngestRequest
from service.carta import Carta
from service.query.geo_filter import GeoSpec
from tests.conftest import corpus_path
from tests.utils.api import ingest_via_api
from tests.utils.documents import make_pdf
from tests.utils.servers import LiveServer

MARCO_ZERO = (-8.0631, -34.8711)


@pytest.fixture(scope="module")
def geo_server(
    tmp_path_factory: pytest.TempPathFactory, text_encoder: object, samples_dir: Path
) -> Iterator[str]:
    from tests.conftest import settings_for

    # the geo filters and priors on their own: a Portuguese question's translation, searched
    # too by default (CARTA_PLANNER=translate), finds Salvador's report by its name alone
    settings = settings_for(tmp_path_factory.mktemp("geo-data"), planner="off")
    carta = Carta(settings, text_encoder=text_encoder)  # type: ignore[arg-type]
    with LiveServer(carta) as live, httpx.Client(base_url=live.url, timeout=120) as client:
        for name in ["relatorio_ambiental_recife_2024.pdf", "quarterly_report_q3_2024.pdf"]:
            ingest_via_api(client, name, (samples_dir / name).read_bytes())
        salvador = corpus_path("pdf", "br_balneabilidade_salvador_26-2010.pdf")
        ingest_via_api(client, salvador.name, salvador.read_bytes())
        raster = corpus_path("raster", "olinda_L7_truecolor.png")
        sidecars = [
            (raster.with_suffix(s).name, raster.with_suffix(s).read_bytes()) for s in (".pgw", ".prj")
        ]
        ingest_via_api(client, raster.name, raster.read_bytes(), sidecars)
        yield live.url
    carta.close()


@pytest.fixture
def client(geo_server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=geo_server, timeout=120) as c:
        yield c


def search(client: httpx.Client, query: str, **body: object) -> dict:
    r = client.post("/v1/search", json={"query": query, "top_k": 10, **body})
    assert r.status_code == 200, r.text
    return r.json()


def by_name(client: httpx.Client) -> dict[str, dict]:
    return {d["filename"]: d for d in client.get("/v1/documents").json()}


def test_map_raster_is_georeferenced_from_its_world_file(client: httpx.Client) -> None:
    doc = by_name(client)["olinda_L7_truecolor.png"]
    ring = doc["footprint"]["coordinates"][0]
    lons, lats = [p[0] for p in ring], [p[1] for p in ring]
    assert min(lons) == pytest.approx(-34.917, abs=0.01) and max(lons) == pytest.approx(-34.826, abs=0.01)
    assert min(lats) == pytest.approx(-8.041, abs=0.01) and max(lats) == pytest.approx(-7.950, abs=0.01)


def test_radius_filter_is_exact_on_points(client: httpx.Client) -> None:
    hits = search(
        client,
        "qualidade da água estação",
        geo={"lat": MARCO_ZERO[0], "lon": MARCO_ZERO[1], "radius_m": 3000},
        kinds=["pdf_page"],
    )["results"]
    assert hits
    for hit in hits:
        assert any(haversine_m(p["lat"], p["lon"], *MARCO_ZERO) <= 3000 for p in hit["locations"]), hit
    recife = by_name(client)["relatorio_ambiental_recife_2024.pdf"]["id"]
    assert {h["doc_id"] for h in hits} == {recife}
    # nothing indexed lies within 3 km of Helsinki
    assert (
        search(client, "qualidade da água", geo={"lat": 60.17, "lon": 24.94, "radius_m": 3000})["results"]
        == []
    )


def test_map_is_found_by_footprint_overlap(client: httpx.Client) -> None:
    olinda = by_name(client)["olinda_L7_truecolor.png"]["id"]
    # a small circle inside the scene, away from its centre
    inside = search(client, "mapa", geo={"lat": -7.96, "lon": -34.90, "radius_m": 1000}, kinds=["map"])[
        "results"
    ]
    assert [h["doc_id"] for h in inside] == [olinda]
    assert inside[0]["kind"] == "map"
    far = search(client, "mapa", geo={"lat": -12.97, "lon": -38.50, "radius_m": 5000}, kinds=["map"])[
        "results"
    ]
    assert far == []


def test_bbox_polygon_and_h3_filters(client: httpx.Client) -> None:
    salvador = by_name(client)["br_balneabilidade_salvador_26-2010.pdf"]["id"]
    box = search(client, "praia", geo={"bbox": [-38.7, -13.1, -38.2, -12.8]})["results"]
    assert box and {h["doc_id"] for h in box} == {salvador}
    ring = [[-38.7, -13.1], [-38.2, -13.1], [-38.2, -12.8], [-38.7, -12.8], [-38.7, -13.1]]
    poly = search(client, "praia", geo={"polygon": {"type": "Polygon", "coordinates": [ring]}})["results"]
    assert [(h["doc_id"], h["page_no"]) for h in poly] == [(h["doc_id"], h["page_no"]) for h in box]
    cell = h3.latlng_to_cell(*MARCO_ZERO, 8)
    near_cell = search(client, "Marco Zero", geo={"h3": [cell]})["results"]
    recife = by_name(client)["relatorio_ambiental_recife_2024.pdf"]["id"]
    assert near_cell and {h["doc_id"] for h in near_cell} == {recife}


def test_place_filter_and_geo_prior(client: httpx.Client) -> None:
    salvador = by_name(client)["br_balneabilidade_salvador_26-2010.pdf"]["id"]
    body = search(client, "qualidade da água das praias", geo={"place": "Salvador"})
    assert body["geo_filter"]["place"] == "Salvador" and {h["doc_id"] for h in body["results"]} == {salvador}
    prior = search(client, "qualidade da água das praias em Salvador")
    assert prior["geo_filter"] is None and prior["geo_prior"]["place"] == "Salvador"
    assert prior["results"][0]["doc_id"] == salvador and "geo" in prior["results"][0]["channels"]
    off = search(client, "qualidade da água das praias em Salvador", geo_prior=False)
    assert off["geo_prior"] is None and all("geo" not in h["channels"] for h in off["results"])
    answer = client.post("/v1/ask", json={"question": "Quais praias de Salvador estão impróprias?"}).json()
    assert answer["geo_prior"]["place"] == "Salvador"


@pytest.mark.parametrize(
    ("geo", "status"),
    [
        ({"lat": 100, "lon": 0, "radius_m": 10}, 422),
        ({"lat": -8, "lon": -34}, 400),  # no radius
        ({"place": "Xyzzyville Qwerty"}, 400),
        ({"bbox": [10, 10, 5, 5]}, 400),
        ({"h3": ["not-a-cell"]}, 400),
        ({"place": "Recife", "bbox": [-35, -9, -34, -8]}, 400),
        ({"polygon": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1]]]}}, 400),
    ],
)
def test_bad_geo_filters_are_4xx(client: httpx.Client, geo: dict, status: int) -> None:
    r = client.post("/v1/search", json={"query": "x", "geo": geo})
    assert r.status_code == status, r.text
    assert r.json()["error"]["message"]


def test_bad_coordinates_on_upload_store_nothing(
    make_carta: Callable[..., Carta], samples_dir: Path, tmp_path: Path
) -> None:
    carta = make_carta()
    with LiveServer(carta) as live, httpx.Client(base_url=live.url, timeout=120) as client:
        png = corpus_path("raster", "olinda_L7_truecolor.png")
        bad = client.post(
            "/v1/documents",
            files=[
                ("file", (png.name, png.read_bytes())),
                ("sidecars", ("x.pgw", b"28.5\n0\n0\nnot-a-number\n")),
            ],
        )
        assert bad.status_code == 400 and bad.json()["error"]["code"] == "bad_coordinates"
        meta = client.post(
            "/v1/documents",
            files={"file": ("q.pdf", (samples_dir / "quarterly_report_q3_2024.pdf").read_bytes())},
            data={"metadata": '{"lat": 95, "lon": 10}'},
        )
        assert meta.status_code == 400 and "outside" in meta.json()["error"]["message"]
        assert client.get("/v1/documents").json() == []
        assert carta.store.count(carta.collections.chunks.name) == 0
        ok = ingest_via_api(
            client,
            "q.pdf",
            (samples_dir / "quarterly_report_q3_2024.pdf").read_bytes(),
            metadata='{"lat": -23.55, "lon": -46.63}',
        )
        assert ok["status"] == "ready"
        hits = client.post(
            "/v1/search", json={"query": "revenue", "geo": {"lat": -23.55, "lon": -46.63, "radius_m": 100}}
        ).json()
        assert hits["results"] and all(h["doc_id"] == ok["id"] for h in hits["results"])


def _pdf(text: str) -> bytes:
    return make_pdf([text], origin=(72, 72), fontsize=11)


@pytest.mark.parametrize("radius_m", [250.0, 1000.0, 5000.0])
def test_radius_never_returns_a_point_just_outside(make_carta: Callable[..., Carta], radius_m: float) -> None:
    """Points 1 % inside and 1 % outside the radius, north, east, south and west of the centre."""
    from service.query.geo_filter import GeoSpec

    carta = make_carta(geotag=False)
    lat0, lon0 = -8.0631, -34.8711
    metres_per_deg_lat = haversine_m(lat0, lon0, lat0 + 1, lon0)
    metres_per_deg_lon = haversine_m(lat0, lon0, lat0, lon0 + 1)
    expected_inside = set()
    for i, (dy, dx) in enumerate([(1, 0), (0, 1), (-1, 0), (0, -1)]):
        for factor in (0.99, 1.01):
            d = radius_m * factor
            lat, lon = lat0 + dy * d / metres_per_deg_lat, lon0 + dx * d / metres_per_deg_lon
            name = f"ponto {i} fator {factor} relatório de campo"
            result = carta.ingest(
                IngestRequest(_pdf(name), f"{i}-{factor}.pdf", "default", metadata={"lat": lat, "lon": lon})
            )
            if haversine_m(lat, lon, lat0, lon0) <= radius_m:
                expected_inside.add(result.document.id)
    assert len(expected_inside) == 4
    q = carta.query(
        "relatório de campo", "default", top_k=20, geo=GeoSpec(lat=lat0, lon=lon0, radius_m=radius_m)
    )
    found = {p.doc_id for p in carta.search(q).pages}
    assert found == expected_inside


@pytest.mark.parametrize("mode", ["filter", "decay", "h3vector"])
def test_every_geo_prior_mode_ranks_the_named_place_first(client: httpx.Client, mode: str) -> None:
    """The three priors of docs/evaluation.md: the geo list starts at the named city, and the
    response says which mode ranked it."""
    salvador = by_name(client)["br_balneabilidade_salvador_26-2010.pdf"]["id"]
    body = search(client, "relatório ambiental de qualidade da água em Salvador", geo_prior_mode=mode)
    assert body["geo_prior"]["place"] == "Salvador" and body["geo_prior"]["mode"] == mode
    geo_list = sorted(
        (h for h in body["results"] if "geo" in h["channels"]), key=lambda h: h["channels"]["geo"]["rank"]
    )
    assert geo_list[0]["doc_id"] == salvador
    off = search(client, "relatório ambiental de qualidade da água em Salvador", geo_prior=False)
    # the Recife report matches the words better: only the prior lifts Salvador's report
    ranks = [[h["doc_id"] for h in r["results"]].index(salvador) for r in (body, off)]
    assert ranks[0] < ranks[1]


def test_under_a_geo_filter_the_chosen_pages_are_read_by_the_question(
    make_carta: Callable[..., Carta],
) -> None:
    """A geo filter keeps the chunks carrying a place in the area, and the IMEA maize table's
    row of "Médio-Norte" carries none (a region the gazetteer does not know). The page is
    chosen by the area; its chunks are then ranked by the question without the filter, so
    the row that answers is on the page's evidence and answers."""
    path = corpus_path("pdf", "br_imea_milho_safra_16-17.pdf")
    carta = make_carta(ocr_enabled=False)
    doc = carta.ingest(IngestRequest(path.read_bytes(), path.name, "default")).document
    question = "Qual a área de milho da safra 16/17 na região Médio-Norte?"
    mato_grosso = GeoSpec(bbox=[-61.63, -18.04, -50.22, -7.35])
    result = carta.search(carta.query(question, "default", geo=mato_grosso))
    page = next(p for p in result.pages if p.doc_id == doc.id)
    assert any("2.025.045" in c.text for c in page.chunks[:4])
    answer = carta.ask(carta.query(question, "default", geo=mato_grosso))
    assert not answer.refused and "2.025.045" in answer.answer, answer.answer
