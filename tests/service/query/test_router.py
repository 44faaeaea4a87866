"""The query router (service/query/router.py): rules offline, the LLM when configured
(the loopback OpenAI-protocol server scripted as a planning model)."""

from __future__ import annotations

import json

from models.llm_client import LLMClient, LLMConfig
from service.query.router import llm_route, rules_route
from tests.openai_protocol import OpenAIProtocolServer, Step

BUILT = frozenset({"dense", "bm25", "pages", "visual", "clip", "entities"})


def test_rules_route_by_the_questions_words_pt_and_en() -> None:
    assert rules_route("Qual a precipitação acumulada no Recife em 2024?", BUILT).routes == ("text",)
    chart = rules_route("According to the bar chart, how many flooding points did Casa Amarela have?", BUILT)
    assert chart.routes == ("text", "visual") and chart.channels == frozenset(
        {"dense", "bm25", "pages", "visual", "clip"}
    )
    assert "geodata" in rules_route("Quais escolas ficam perto do Parque da Jaqueira?", BUILT).routes
    assert "geodata" in rules_route("Which schools are within 500 m of Marco Zero?", BUILT).routes
    code = rules_route("O que prevê o contrato CT-SMA-0427/2024?", BUILT)
    assert "graph" in code.routes and "entities" in code.channels and code.why["graph"] == "CT-SMA-0427/2024"
    assert "global" in rules_route("O que os documentos dizem sobre o IBAMA?", BUILT).routes
    assert "global" in rules_route("What do the documents say about drainage?", BUILT).routes


def test_rules_route_uses_the_document_graphs_entities() -> None:
    seen: list[str] = []

    def recognise(text: str) -> list[int]:
        seen.append(text)
        return [7] if "secretaria" in text.lower() else []

    route = rules_route("Quais metas a Secretaria de Meio Ambiente publicou?", BUILT, recognise)
    assert route.routes == ("text", "graph") and route.why["graph"] == "1 known entities" and seen


def test_channels_not_built_are_not_chosen() -> None:
    lite = frozenset({"dense", "bm25", "pages"})
    assert rules_route("Mostre o mapa de alagamentos", lite).channels == lite


def test_multi_hop_questions_carry_their_parts() -> None:
    route = rules_route(
        "Qual o caixa da Northwind em setembro e qual a receita prevista para o 4º trimestre?", BUILT
    )
    assert route.multi_hop and len(route.sub_questions) == 2


def _client(server: OpenAIProtocolServer) -> LLMClient:
    return LLMClient(LLMConfig(base_url=server.url, model="test-model", timeout_s=5.0, max_retries=0))


def test_llm_route_reads_a_strict_json_plan(llm_server: OpenAIProtocolServer) -> None:
    plan = {
        "routes": ["graph", "text"],
        "sub_questions": ["Qual o custo do contrato?", "Qual o custo da nota?"],
    }
    llm_server.script(Step(text=json.dumps(plan)))
    route = llm_route(_client(llm_server), "Compare o custo do contrato e o da nota", BUILT)
    assert route.router == "llm" and route.routes == ("text", "graph")
    assert route.sub_questions == ("Qual o custo do contrato?", "Qual o custo da nota?")
    assert "entities" in route.channels
    sent = llm_server.requests[-1]
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["messages"][-1]["content"] == "Compare o custo do contrato e o da nota"


def test_llm_route_falls_back_to_the_rules_on_a_bad_reply(llm_server: OpenAIProtocolServer) -> None:
    llm_server.script(Step(text=json.dumps({"routes": ["everything"], "extra": 1})))
    route = llm_route(_client(llm_server), "Qual o gráfico de chuvas?", BUILT)
    assert route.router == "rules" and route.routes == ("text", "visual") and "llm" in route.why
    llm_server.script(Step(status=500, text="down"))
    assert llm_route(_client(llm_server), "Qual o gráfico de chuvas?", BUILT).router == "rules"
