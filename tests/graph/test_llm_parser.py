"""Question -> constraints by an LLM with a strict JSON schema, over real HTTP against the
OpenAI-protocol test server: a good reply is used, an unusable one falls back to the rules,
the request carries the schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graph.channel import GraphChannel
from graph.llm_parser import LLMConstraintParser
from graph.parser import MAX_RADIUS_M, RuleParser, constraints_schema
from graph.sources import Parsed, Poi
from models.llm_client import LLMClient, LLMConfig
from tests.openai_protocol import OpenAIProtocolServer, Step

QUESTION = "Which schools are close to a park?"


def reply(**over: object) -> str:
    body = {
        "categories": ["school", "park"],
        "pairs": [["school", "park"]],
        "radius_m": 250,
        "place": None,
        "zones": None,
    }
    return json.dumps(body | over)


@pytest.fixture
def parser(llm_server: OpenAIProtocolServer) -> LLMConstraintParser:
    client = LLMClient(LLMConfig(llm_server.url, "test-model", timeout_s=5.0, max_retries=0))
    return LLMConstraintParser(client, RuleParser())


def test_a_good_structured_reply_is_used_and_the_request_carries_the_schema(
    parser: LLMConstraintParser, llm_server: OpenAIProtocolServer
) -> None:
    llm_server.script(Step(text=reply(place="Recife", zones=3)))
    got = parser.parse(QUESTION, known=["post_box"])
    rules = RuleParser().parse(QUESTION)
    assert rules.radius_m == 500  # the rules would default the radius; the LLM's 250 m wins
    assert got.radius_m == 250 and got.pairs == (("school", "park"),) and got.relational
    assert got.place == "Recife" and got.zones == 3 and "parsed by the LLM" in got.defaulted
    (request,) = llm_server.requests
    fmt = request["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"] == constraints_schema(["post_box"])
    assert "post_box" in fmt["json_schema"]["schema"]["properties"]["categories"]["items"]["enum"]
    assert QUESTION in request["messages"][-1]["content"]


@pytest.mark.parametrize(
    "step",
    [
        Step(text="Sure! The constraints are school and park."),  # not JSON
        Step(text=reply(categories=["spaceport"])),  # category outside the schema's enum
        Step(text=reply(extra="x")),  # additional property
        Step(text=reply(pairs=[["school"]])),  # a pair of one
        Step(text=reply(radius_m="near")),  # wrong type
        Step(status=500),  # the endpoint fails
    ],
    ids=["not-json", "unknown-category", "extra-key", "short-pair", "wrong-type", "http-500"],
)
def test_an_unusable_reply_falls_back_to_the_rules(
    parser: LLMConstraintParser, llm_server: OpenAIProtocolServer, step: Step
) -> None:
    question = "Quais escolas ficam a menos de 300 metros de um parque?"
    llm_server.script(step)
    got = parser.parse(question)
    rules = RuleParser().parse(question)
    assert (got.categories, got.pairs, got.radius_m) == (rules.categories, rules.pairs, rules.radius_m)
    assert got.radius_m == 300 and got.relational
    assert "LLM constraints unusable: rule parser used" in got.defaulted
    assert len(llm_server.requests) == 1


def test_a_question_naming_no_place_kind_costs_no_llm_call(
    parser: LLMConstraintParser, llm_server: OpenAIProtocolServer
) -> None:
    got = parser.parse("What did the 2024 budget report say about taxes?")
    assert llm_server.requests == [] and not got.relational


def test_an_endpoint_without_structured_output_gets_the_schema_in_the_prompt(
    parser: LLMConstraintParser, llm_server: OpenAIProtocolServer
) -> None:
    llm_server.script(Step(status=400), Step(text=reply()), Step(text=reply(radius_m=120)))
    assert parser.parse(QUESTION).radius_m == 250
    assert parser.parse(QUESTION).radius_m == 120  # remembered: no second try with response_format
    first, second, third = llm_server.requests
    assert "response_format" in first and "response_format" not in second and "response_format" not in third
    assert '"radius_m"' in second["messages"][0]["content"]
    assert "JSON schema" in third["messages"][0]["content"]


def test_llm_values_are_clamped_like_the_rules(
    parser: LLMConstraintParser, llm_server: OpenAIProtocolServer
) -> None:
    llm_server.script(Step(text=reply(radius_m=90_000, zones=900, pairs=[], categories=["school"])))
    got = parser.parse(QUESTION)
    assert got.radius_m == MAX_RADIUS_M and got.zones == 50
    assert got.pairs == (("school", "school"),)
    assert any("clamped" in n for n in got.defaulted)


def test_channel_uses_the_llm_parser_when_given_a_client(
    tmp_path: Path, llm_server: OpenAIProtocolServer
) -> None:
    client = LLMClient(LLMConfig(llm_server.url, "test-model", timeout_s=5.0, max_retries=0))
    channel = GraphChannel(tmp_path / "g.sqlite3", llm=client)
    try:
        items = [
            Poi("s:1", "S1", "school", -8.0600, -34.9000),
            Poi("p:1", "P1", "park", -8.0610, -34.9000),
            Poi("p:2", "P2", "park", -8.0660, -34.9000),
        ]
        channel.store.add_dataset("t", Parsed(items), "f.csv", "csv", b"x")
        # ~111 m and ~667 m from the school: the rules' 500 m default keeps one pair, the LLM's 1 km both
        llm_server.script(Step(text=reply(radius_m=1000)))
        result = channel.answer("schools next to parks", "t")
        assert result is not None and result.constraints.radius_m == 1000
        assert sorted(p.b.id for p in result.pairs) == ["p:1", "p:2"]
        assert llm_server.requests[0]["response_format"]["json_schema"]["name"] == "constraints"
    finally:
        channel.close()
