"""The channel registry (service/query/channels/): the names a query selects, the order
of the fused lists, and the places that must agree with the registry."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

from service.api import schemas
from service.carta import Carta
from service.query.channels import CHANNEL_TYPES, CHANNELS, EncodedQuery
from service.query.geo_filter import resolve_place
from service.query.types import PRIOR_MODES, PriorMode, SearchQuery
from service.settings import Settings

ROOT = Path(__file__).resolve().parents[3]


def test_the_api_channel_names_are_the_registry_names() -> None:
    field = schemas.SearchRequest.model_json_schema()["properties"]["channels"]
    listed = next(option for option in field["anyOf"] if option.get("type") == "array")
    assert set(listed["items"]["enum"]) == CHANNELS
    assert {"dense", "bm25", "pages", "visual", "clip", "entities", "global"} == CHANNELS


def test_selectors_are_unique() -> None:
    selectors = [t.selector for t in CHANNEL_TYPES if t.selector is not None]
    assert len(selectors) == len(set(selectors))


def test_the_prior_modes_are_defined_once() -> None:
    assert get_args(PriorMode) == PRIOR_MODES
    assert Settings.model_fields["geo_prior_mode"].annotation == PriorMode
    field = schemas.SearchRequest.model_json_schema()["properties"]["geo_prior_mode"]
    listed = next(option for option in field["anyOf"] if "enum" in option)
    assert tuple(listed["enum"]) == PRIOR_MODES


def test_lite_channels_in_fusion_order(sample_carta: Carta) -> None:
    names = [c.name for c in sample_carta.retriever.channels]
    # no visual encoders in lite; the document graph's channels last (CARTA_DOCGRAPH)
    assert names == ["dense", *sample_carta.sparse.names, "pages", "geo", "maps", "entities", "global"]


def test_only_selected_channels_apply_and_the_prior_needs_a_chunk_branch(sample_carta: Carta) -> None:
    retriever = sample_carta.retriever
    emb = sample_carta.text.embed_with_tokens(["recife"])[0]
    sparse = sample_carta.sparse.embed_query("recife")

    def applying(q: SearchQuery) -> list[str]:
        encoded = EncodedQuery(q, emb.dense, emb.tokens, sparse)
        return [c.name for c in retriever.channels if c.applies(encoded)]

    assert applying(SearchQuery("recife", "default", channels=frozenset({"pages"}))) == ["pages"]
    gazetteer = sample_carta.gazetteer
    assert gazetteer is not None
    prior = resolve_place(gazetteer.lookup("Recife")[0])
    assert applying(SearchQuery("recife", "default", channels=frozenset({"pages"}), prior=prior)) == ["pages"]
    with_dense = applying(SearchQuery("recife", "default", channels=frozenset({"dense"}), prior=prior))
    assert with_dense == ["dense", "geo"]


def test_no_imports_inside_functions_in_query_and_answer() -> None:
    """Cycles are not dodged with a late import (issue 13): every import is at module level."""
    late = []
    for package in ("service/query", "service/answer"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    late += [
                        f"{path.relative_to(ROOT)}:{inner.lineno}"
                        for inner in ast.walk(node)
                        if isinstance(inner, ast.Import | ast.ImportFrom)
                    ]
    assert late == []
