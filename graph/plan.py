"""The analytical plan of a geodata question: one pydantic model for the offline rules
(graph/plan_parser.py) and the LLM (graph/llm_parser.py, strict JSON schema), executed
exactly by code (graph/analytics.py), never by the LLM.

"Qual escola tem o maior IDEB?" ->
GeoPlan(operation="argmax", target=Target(category="school"), attribute="IDEB").
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Operation = Literal[
    "count",
    "list",
    "filter",
    "argmax",
    "argmin",
    "sum",
    "avg",
    "min",
    "max",
    "group_by",
    "nearest",
    "distance",
    "pairs",
]
OPERATIONS: tuple[str, ...] = Operation.__args__  # type: ignore[attr-defined]
Comparison = Literal[">", ">=", "<", "<=", "=", "!="]
AGGREGATES = ("sum", "avg", "min", "max", "argmax", "argmin")  # operations that need a numeric attribute
MAX_K = 50


class Target(BaseModel):
    """What is counted or ranked: a category of POIs, a dataset, or features whose name holds
    a word (a file without categories: "santa_casa_hospital" for "hospital")."""

    model_config = ConfigDict(extra="forbid")

    category: str | None = None
    dataset: str | None = None
    name_contains: str | None = None
    tag: str | None = None  # the OSM tag value asked for when the category groups several (pub in bar)


class AttributeFilter(BaseModel):
    """A condition on one attribute: IDEB > 5, V014 >= 1000, RPA = 6."""

    model_config = ConfigDict(extra="forbid")

    attribute: str
    op: Comparison
    value: float | str | bool


class PlanArea(BaseModel):
    """Where: the whole dataset, a gazetteer place, a polygon feature of a loaded layer,
    a circle around a point, or a bbox [west, south, east, north]."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["all", "place", "polygon", "circle", "bbox"] = "all"
    name: str | None = None
    dataset: str | None = None  # the polygon layer's dataset id
    feature: str | None = None  # the polygon feature's id
    lat: float | None = None
    lon: float | None = None
    radius_m: float | None = Field(default=None, ge=0)
    bbox: list[float] | None = None


class Reference(BaseModel):
    """A point the question measures from: a place name, a POI, or coordinates."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    lat: float | None = None
    lon: float | None = None


class GeoPlan(BaseModel):
    """One analytical question, as the code that answers it reads it."""

    model_config = ConfigDict(extra="forbid")

    operation: Operation
    target: Target = Field(default_factory=Target)
    attribute: str | None = None  # the aggregated / ranked property (sum of V014, max IDEB)
    filters: list[AttributeFilter] = Field(default_factory=list)
    area: PlanArea = Field(default_factory=PlanArea)
    group_by: str | None = None  # a property name, "h3", or "layer:<dataset id>" (polygons)
    order: Literal["desc", "asc"] = "desc"  # groups: largest first, or smallest first
    k: int = Field(default=1, ge=1, le=MAX_K)  # nearest k
    references: list[Reference] = Field(default_factory=list)  # nearest: 1, distance: 2
    radius_m: float | None = None  # pairs
    pair_categories: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


def plan_json_schema(categories: list[str], attributes: list[str]) -> dict[str, Any]:
    """The strict JSON schema an LLM answers with (every key required, nulls allowed,
    no extra keys); categories and attributes limited to what the tenant holds."""
    nullable_str = {"type": ["string", "null"]}
    nullable_num = {"type": ["number", "null"]}
    cat = {"type": ["string", "null"], "enum": [*categories, None]} if categories else nullable_str
    attr = {"type": ["string", "null"], "enum": [*attributes, None]} if attributes else nullable_str

    def obj(props: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "additionalProperties": False, "required": list(props), "properties": props}

    return obj(
        {
            "operation": {"type": "string", "enum": list(OPERATIONS)},
            "target": obj(
                {"category": cat, "dataset": nullable_str, "name_contains": nullable_str, "tag": nullable_str}
            ),
            "attribute": attr,
            "filters": {
                "type": "array",
                "items": obj(
                    {
                        "attribute": {"type": "string", "enum": attributes}
                        if attributes
                        else {"type": "string"},
                        "op": {"type": "string", "enum": [">", ">=", "<", "<=", "=", "!="]},
                        "value": {"type": ["number", "string", "boolean"]},
                    }
                ),
            },
            "area": obj(
                {
                    "kind": {"type": "string", "enum": ["all", "place", "polygon", "circle", "bbox"]},
                    "name": nullable_str,
                    "dataset": nullable_str,
                    "feature": nullable_str,
                    "lat": nullable_num,
                    "lon": nullable_num,
                    "radius_m": nullable_num,
                    "bbox": {"type": ["array", "null"], "items": {"type": "number"}},
                }
            ),
            "group_by": nullable_str,
            "order": {"type": "string", "enum": ["desc", "asc"]},
            "k": {"type": "integer", "minimum": 1, "maximum": MAX_K},
            "references": {
                "type": "array",
                "items": obj({"name": nullable_str, "lat": nullable_num, "lon": nullable_num}),
            },
            "radius_m": nullable_num,
            "pair_categories": {"type": "array", "items": {"type": "string"}},
            "notes": {"type": "array", "items": {"type": "string"}},
        }
    )
