"""`LocalClient` on the sample corpus: the HTTP API's bodies without a server, the streamed
answer ending in the same body as `ask`, and the errors a command turns into exit codes."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from service.carta import Carta
from service.cli.client import RequestFailed
from service.cli.local_client import USAGE_ERROR, LocalClient

QUESTION = "Quais são as coordenadas do Parque da Jaqueira?"


def test_streamed_answer_ends_with_the_body_ask_returns(sample_carta: Carta) -> None:
    client = LocalClient(sample_carta, "default")
    events = list(client.ask_events(QUESTION, top_k=5))
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "evidence" and kinds[-1] == "done" and "citations" in kinds
    done = events[-1][1]
    answer = client.ask(QUESTION, top_k=5)
    assert done["answer"] == answer["answer"] and done["citations"] == answer["citations"]
    assert {d["id"] for d in client.documents()} >= {c["doc_id"] for c in answer["citations"]}


def test_a_bad_geo_filter_is_a_usage_error(sample_carta: Carta) -> None:
    client = LocalClient(sample_carta, "default")
    with pytest.raises(RequestFailed, match="bbox") as caught:
        client.search("x", top_k=5, geo={"bbox": [1.0, 2.0]})
    assert caught.value.exit_code == USAGE_ERROR
    with pytest.raises(RequestFailed) as streamed:  # raised before the first event, not sent as one
        next(client.ask_events("x", top_k=5, geo={"place": "Atlantis-that-is-not"}))
    assert streamed.value.exit_code == USAGE_ERROR


def test_missing_things_fail_with_the_apis_message(make_carta: Callable[..., Carta]) -> None:
    client = LocalClient(make_carta(geotag=False), "default")
    with pytest.raises(RequestFailed, match="no document 'nope'") as doc:
        client.delete("nope")
    with pytest.raises(RequestFailed, match="no dataset 'nope'") as dataset:
        client.delete_dataset("nope")
    assert doc.value.exit_code == dataset.value.exit_code == 1
    with pytest.raises(RequestFailed, match="no point of interest") as empty:
        client.add_dataset(b'{"type": "FeatureCollection", "features": []}', "empty.geojson")
    assert empty.value.exit_code == USAGE_ERROR
    assert client.datasets() == []


def test_without_the_graph_poi_calls_say_so(make_carta: Callable[..., Carta]) -> None:
    client = LocalClient(make_carta(geotag=False, graph_enabled=False), "default")
    with pytest.raises(RequestFailed, match="CARTA_GRAPH_ENABLED=false"):
        client.datasets()
