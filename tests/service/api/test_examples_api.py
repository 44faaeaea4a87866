"""/v1/examples: questions made from the tenant's own documents and POI datasets, in the
caller's language, that the service can then answer."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx

from service.carta import Carta
from tests.service.api.test_graph_api import wait_for_document
from tests.utils.documents import make_pdf
from tests.utils.servers import LiveServer


def poi_geojson() -> bytes:
    """Three cafés and two pharmacies in central Helsinki, a few tens of metres apart."""
    points = [("cafe", 24.9410, 60.1690), ("cafe", 24.9416, 60.1692), ("cafe", 24.9500, 60.1700)]
    points += [("pharmacy", 24.9412, 60.1691), ("pharmacy", 24.9600, 60.1750)]
    features = [
        {
            "type": "Feature",
            "properties": {"amenity": kind, "name": f"{kind} {i}"},
            "geometry": {"type": "Point", "coordinates": [lon, lat]},
        }
        for i, (kind, lon, lat) in enumerate(points)
    ]
    return json.dumps({"type": "FeatureCollection", "features": features}).encode()


def test_examples_come_from_the_tenants_data_and_are_answerable(serve: Callable[..., LiveServer]) -> None:
    live = serve()
    with httpx.Client(base_url=live.url, timeout=120) as client:
        assert client.get("/v1/examples").json() == {"questions": []}  # nothing held, nothing made up
        up = client.post("/v1/datasets", files={"file": ("helsinki.geojson", poi_geojson())})
        assert up.status_code == 201, up.text
        pdf = make_pdf([["Relatório de enchentes em Recife, 2024.", "As chuvas atingiram Olinda."]])
        doc_id = wait_for_document(
            client, client.post("/v1/documents", files={"file": ("r.pdf", pdf)}).json()
        )

        en = client.get("/v1/examples").json()["questions"]
        pt = client.get("/v1/examples", params={"language": "pt"}).json()["questions"]
        assert client.get("/v1/examples", params={"language": "fr"}).status_code == 422

    texts_en = [q["text"] for q in en]
    assert "Which cafes are within 200 m of pharmacies?" in texts_en
    assert "How many cafes are there?" in texts_en
    assert {q["language"] for q in en} == {"en"} and {q["language"] for q in pt} == {"pt"}
    assert "Quais cafés ficam a menos de 200 m de farmácias?" in [q["text"] for q in pt] or any(
        q["text"].startswith("Quais ") and "farmácias" in q["text"] for q in pt
    )
    from_doc = [q for q in en if q["source"] == "document"]
    assert [q["source_id"] for q in from_doc] == [doc_id]
    assert "Recife" in from_doc[0]["text"] or "Olinda" in from_doc[0]["text"]


def test_a_dataset_example_is_answered_by_the_graph(make_carta: Callable[..., Carta]) -> None:
    """The pairs question an example makes reaches the graph and comes back with pairs."""
    from service.suggestions import example_questions

    carta = make_carta()
    assert carta.graph is not None
    carta.graph.add_dataset(poi_geojson(), "helsinki.geojson", "t")
    [pairs, *_] = example_questions([], carta.page_chunks, carta.graph, "t", "en")
    answer = carta.ask(carta.query(pairs.text, "t"))
    assert answer.graph is not None and answer.graph["pairs"], answer.answer
    assert {(p["a_category"], p["b_category"]) for p in answer.graph["pairs"]} == {("cafe", "pharmacy")}
