"""A geodata plan runs only over data about the place it asks of (graph/coverage.py): a
place outside every loaded dataset, or one neither the gazetteer nor the data knows, leaves
the question to the documents instead of summing an unrelated dataset. Synthetic datasets:
a population grid in Porto Alegre and cafés in Helsinki."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from geo.gazetteer import Gazetteer
from graph.channel import GraphChannel
from tests.utils.geodata import TENANT

POA_POPULATION = [120, 0, 340, 75, 910, 15]
HELSINKI_CAFES = 4


def _grid_csv() -> bytes:
    rows = ["id,lon,lat,population"]
    for n, pop in enumerate(POA_POPULATION):
        rows.append(f"h{n},{-51.22 + 0.01 * n:.4f},{-30.03 - 0.005 * n:.4f},{pop}")
    return "\n".join(rows).encode()


def _cafes_csv() -> bytes:
    rows = ["name,lon,lat"] + [
        f"Kahvila {n},{24.94 + 0.002 * n:.4f},{60.17:.4f}" for n in range(HELSINKI_CAFES)
    ]
    return "\n".join(rows).encode()


@pytest.fixture(scope="module")
def channel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GraphChannel]:
    ch = GraphChannel(tmp_path_factory.mktemp("cov") / "g.sqlite3", Gazetteer.from_geonames(15000))
    ch.add_dataset(_grid_csv(), "poa_grid.csv", TENANT, "hexagon")
    ch.add_dataset(_cafes_csv(), "helsinki_cafes.csv", TENANT, "cafe")
    yield ch
    ch.close()


@pytest.mark.parametrize(
    "question",
    [
        "What was Nagaland's total population in the 2011 census?",  # no gazetteer knows it
        "What is the total population of Nagaland?",
        "What is the total population of Recife?",  # a city 3,000 km from the grid
        "What is the total population of India?",  # a country no dataset lies in
        "What is the total population of Bahia?",  # a state no dataset lies in
        "What is the total population of Helsinki?",  # the cafés' city, but the grid is asked
        "How many cafés are there in Porto Alegre?",  # the grid's city, but the cafés are asked
    ],
)
def test_a_place_the_data_does_not_cover_is_left_to_the_documents(
    channel: GraphChannel, question: str
) -> None:
    assert channel.plan(question, TENANT) is not None  # read as a plan ...
    assert channel.analyze(question, TENANT) is None  # ... but not run on data of another place


@pytest.mark.parametrize(
    "question",
    [
        "What is the total population of Porto Alegre?",
        "What is the total population in Brazil?",
        "What is the total population of Rio Grande do Sul?",
        "What is the total population of the grid?",
    ],
)
def test_a_place_the_data_covers_is_answered_from_it(channel: GraphChannel, question: str) -> None:
    result = channel.analyze(question, TENANT)
    assert result is not None and result.plan.operation == "sum"
    assert result.value == sum(POA_POPULATION)


def test_another_languages_name_of_the_datas_place_is_not_refused(channel: GraphChannel) -> None:
    """ "Helsinque" is in no gazetteer, but the dataset's file is named after Helsinki."""
    result = channel.analyze("Quantos cafés há em Helsinque?", TENANT)
    assert result is not None and result.value == HELSINKI_CAFES
