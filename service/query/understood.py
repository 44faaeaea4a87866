"""How a question was understood, for the person who asked it: the place it named (and
the other places that name could be), the filters the request applied, and what the
geodata path read from it (its plan or constraints, and its notes). Built from what the
query path already resolved; it changes nothing about the answer."""

from __future__ import annotations

from typing import Any

from geo.gazetteer import Gazetteer, PlaceMatch
from service.query.types import SearchQuery

MAX_ALTERNATIVES = 3
MIN_ALTERNATIVE_CONFIDENCE = 0.05  # candidates below this are noise, not a "did you mean"


def understood(
    q: SearchQuery, gazetteer: Gazetteer | None, graph: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The `understood` block of /v1/ask and /v1/search (see service/api/schemas.py)."""
    as_filter = q.geo is not None and q.geo.kind == "place"
    resolved = q.geo.description if as_filter and q.geo is not None else None
    resolved = resolved or (q.prior.description if q.prior is not None else None)
    mentions = gazetteer.find_places(q.text) if gazetteer is not None and q.text else []
    place = _place(resolved, mentions) if resolved else None
    return {
        "place": place,
        "alternatives": _alternatives(place, mentions, gazetteer),
        "place_use": ("filter" if as_filter else "prior") if place else None,
        "filters": _filters(q),
        "geodata": _geodata(graph) if graph else None,
    }


def _place(description: dict[str, Any], mentions: list[PlaceMatch]) -> dict[str, Any]:
    """The resolved place, its country from the gazetteer when the description has none."""
    mention = next((m for m in mentions if m.place.id == description.get("place_id")), None)
    country = description.get("country") or (mention.place.country if mention is not None else None)
    return {
        "id": description.get("place_id"),
        "name": description.get("place"),
        "country": country,
        "lat": description.get("lat"),
        "lon": description.get("lon"),
        "confidence": description.get("confidence"),
    }


def _alternatives(
    place: dict[str, Any] | None, mentions: list[PlaceMatch], gazetteer: Gazetteer | None
) -> list[dict[str, Any]]:
    """Did you mean: the other places the question's place name could be (the gazetteer's
    next candidates); when no place was confident enough to use, the candidates of the
    first place name the question holds."""
    if gazetteer is None:
        return []
    if place is not None:
        mention = next((m for m in mentions if m.place.id == place["id"]), None)
        name = mention.text if mention is not None else str(place.get("name") or "")
        chosen = {place["id"]}
    else:
        name = mentions[0].text if mentions else ""
        chosen = set()
    if not name:
        return []
    candidates = [
        m
        for m in gazetteer.lookup(name)
        if m.place.id not in chosen and m.confidence >= MIN_ALTERNATIVE_CONFIDENCE
    ]
    # places in other countries first (Santa Cruz: PH, US, BR), then other states of one
    countries = {place.get("country")} if place is not None else set()
    picked: list[PlaceMatch] = []
    for m in candidates:
        if m.place.country not in countries and len(picked) < MAX_ALTERNATIVES:
            countries.add(m.place.country)
            picked.append(m)
    regions = {(m.place.country, m.place.admin1) for m in picked}
    for m in candidates:
        if len(picked) < MAX_ALTERNATIVES and (m.place.country, m.place.admin1) not in regions:
            regions.add((m.place.country, m.place.admin1))
            picked.append(m)
    return [
        {
            "id": m.place.id,
            "name": m.place.name,
            "country": m.place.country,
            "admin1": m.place.admin1,
            "kind": m.place.kind,
            "confidence": round(m.confidence, 3),
        }
        for m in picked
    ]


def _filters(q: SearchQuery) -> list[dict[str, Any]]:
    """Each restriction the request applied, as {"kind", "value"}."""
    out: list[dict[str, Any]] = []
    if q.doc_ids:
        out.append({"kind": "documents", "value": list(q.doc_ids)})
    if q.kinds:
        out.append({"kind": "page_kinds", "value": list(q.kinds)})
    if q.channels:
        out.append({"kind": "channels", "value": sorted(q.channels)})
    if q.geo is not None:
        out.append({"kind": f"geo_{q.geo.kind}", "value": _geo_value(q.geo.description)})
    if q.prior is not None:
        out.append({"kind": "geo_prior", "value": q.prior_mode})
    return out


def _geo_value(description: dict[str, Any]) -> str:
    if "place" in description:
        return str(description["place"])
    if "radius_m" in description:
        return f"{description['radius_m']:.0f} m around {description['lat']:.5f}, {description['lon']:.5f}"
    if "bbox" in description:
        return ", ".join(f"{v:.5f}" for v in description["bbox"])
    if "h3" in description:
        return f"{len(description['h3'])} H3 cells"
    return "polygon"


def _geodata(graph: dict[str, Any]) -> dict[str, Any]:
    """What the geodata path read: an analytical plan, relational constraints or an overview."""
    plan = graph.get("plan")
    if isinstance(plan, dict):
        target = plan.get("target") or {}
        area = plan.get("area") or {}
        return {
            "kind": "analytic",
            "operation": plan.get("operation"),
            "target": target.get("category") or target.get("dataset") or target.get("name_contains"),
            "attribute": plan.get("attribute"),
            "area": area.get("name") if area.get("kind") != "all" else None,
            "group_by": plan.get("group_by"),
            "notes": list(graph.get("notes") or []),
        }
    constraints = graph.get("constraints") or {}
    kind = "overview" if graph.get("kind") == "global" else "relational"
    area = graph.get("area") or {}
    return {
        "kind": kind,
        "operation": "zones" if kind == "overview" else "pairs",
        "target": ", ".join(constraints.get("categories") or []) or None,
        "attribute": None,
        "area": area.get("place") or constraints.get("place"),
        "radius_m": constraints.get("radius_m") if kind == "relational" else None,
        "group_by": None,
        "notes": list(graph.get("notes") or []),
    }
