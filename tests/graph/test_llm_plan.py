"""Question -> GeoPlan by an LLM answering a strict JSON schema (over real HTTP against the
OpenAI-protocol test server): a valid plan is used and executed by code; a plan naming a
property or category the data lacks, or an unusable reply, falls back to the rules' plan."""

from __future__ import annotations

import json
from typing import Any

import pytest

from graph.llm_parser import LLMPlanParser
from graph.plan import GeoPlan, plan_json_schema
from graph.plan_parser import Catalog, DatasetEntry, PlanRuleParser
from models.llm_client import LLMClient, LLMConfig
from tests.openai_protocol import OpenAIProtocolServer, Step

QUESTION = "Qual escola tem o maior IDEB?"
CATALOG = Catalog(
    [
        DatasetEntry(
            "ds1",
            "escolas.geojson",
            {
                "properties": [{"name": "IDEB", "type": "number"}, {"name": "RPA", "type": "number"}],
                "categories": {"school": 3},
            },
        )
    ],
    {"school": 3},
    [],
)


def plan_reply(**over: Any) -> str:
    plan = GeoPlan(operation="argmin", target={"category": "school"}, attribute="IDEB").model_dump()
    return json.dumps(plan | over)


@pytest.fixture
def parser(llm_server: OpenAIProtocolServer) -> LLMPlanParser:
    client = LLMClient(LLMConfig(llm_server.url, "test-model", timeout_s=5.0, max_retries=0))
    return LLMPlanParser(client, PlanRuleParser())


def _strict(schema: dict[str, Any]) -> None:
    """OpenAI strict mode: every object closed, every property required."""
    if schema.get("type") == "object":
        assert schema["additionalProperties"] is False and set(schema["required"]) == set(
            schema["properties"]
        )
        for sub in schema["properties"].values():
            _strict(sub)
    if "items" in schema:
        _strict(schema["items"])


def test_a_valid_plan_is_used_and_the_request_carries_the_strict_schema(
    parser: LLMPlanParser, llm_server: OpenAIProtocolServer
) -> None:
    llm_server.script(Step(text=plan_reply()))
    plan = parser.parse(QUESTION, CATALOG)
    assert plan is not None and plan.operation == "argmin" and "plan by the LLM" in plan.notes
    (request,) = llm_server.requests
    fmt = request["response_format"]["json_schema"]
    assert fmt["strict"] is True and fmt["schema"] == plan_json_schema(["school"], ["IDEB", "RPA"])
    _strict(fmt["schema"])
    assert fmt["schema"]["properties"]["attribute"]["enum"] == ["IDEB", "RPA", None]


@pytest.mark.parametrize(
    "step",
    [
        Step(text=plan_reply(attribute="alunos")),  # a property the data lacks
        Step(text=plan_reply(target={"category": "spaceport", "dataset": None, "name_contains": None})),
        Step(text=plan_reply(operation="median")),  # not an operation
        Step(text="The school with the highest IDEB is Asa Branca."),  # an answer, not a plan
        Step(status=500),
    ],
    ids=["unknown-attribute", "unknown-category", "bad-operation", "not-json", "http-500"],
)
def test_an_unusable_plan_falls_back_to_the_rules(
    parser: LLMPlanParser, llm_server: OpenAIProtocolServer, step: Step
) -> None:
    llm_server.script(step)
    plan = parser.parse(QUESTION, CATALOG)
    rules = PlanRuleParser().parse(QUESTION, CATALOG)
    assert plan is not None and rules is not None
    assert (plan.operation, plan.attribute) == (rules.operation, rules.attribute) == ("argmax", "IDEB")
    assert "LLM plan unusable: rule plan used" in plan.notes


def test_a_question_the_rules_find_not_analytical_costs_no_llm_call(
    parser: LLMPlanParser, llm_server: OpenAIProtocolServer
) -> None:
    assert parser.parse("What does the report say about floods?", CATALOG) is None
    assert llm_server.requests == []
