"""The relational evidence in the shapes the answer path and the API return: three blocks
(zones + scores; POIs with id, category, coordinates, H3; relations with dist_m), a GeoJSON
FeatureCollection (POIs, pair lines, zone hexagons) and a short answer text."""

from __future__ import annotations

from typing import Any

from geo.shapes import cell_to_geojson_polygon
from graph.categories import category_label
from graph.retrieval import RelationalResult
from graph.store import PoiRow

MAX_LISTED_PAIRS = 10


def poi_dict(r: PoiRow) -> dict[str, Any]:
    return {"id": r.id, "name": r.name, "category": r.category, "lat": r.lat, "lon": r.lon, "h3": r.h3}


def zone_feature(zone: dict[str, Any]) -> dict[str, Any]:
    """A scored zone ({"h3", "score", "total", ...}) as a GeoJSON hexagon Feature."""
    return {
        "type": "Feature",
        "geometry": cell_to_geojson_polygon(zone["h3"]),
        "properties": {"kind": "zone", "h3": zone["h3"], "score": zone["score"], "total": zone["total"]},
    }


def geojson(result: RelationalResult) -> dict[str, Any]:
    features: list[dict[str, Any]] = [zone_feature(z) for z in result.zones]
    for r in result.pois:
        features.append(
            {
                "type": "Feature",
                "geometry": {"type": "Point", "coordinates": [r.lon, r.lat]},
                "properties": {"kind": "poi", **poi_dict(r)},
            }
        )
    for p in result.pairs:
        features.append(
            {
                "type": "Feature",
                "geometry": {"type": "LineString", "coordinates": [[p.a.lon, p.a.lat], [p.b.lon, p.b.lat]]},
                "properties": {"kind": "pair", "a": p.a.id, "b": p.b.id, "dist_m": p.dist_m},
            }
        )
    return {"type": "FeatureCollection", "features": features}


def graph_block(result: RelationalResult) -> dict[str, Any]:
    """`AskResponse.graph`: zones, pois, pairs, geojson (+ the parsed constraints and area)."""
    return {
        "constraints": result.constraints.to_dict(),
        "area": result.area.to_dict(),
        "zones": result.zones,
        "pois": [poi_dict(r) for r in result.pois],
        "pairs": [
            {
                "a": p.a.id,
                "b": p.b.id,
                "a_category": p.a.category,
                "b_category": p.b.category,
                "dist_m": p.dist_m,
            }
            for p in result.pairs
        ],
        "rings": result.rings,
        "truncated": result.truncated,
        "notes": result.constraints.defaulted + result.notes,
        "geojson": geojson(result),
    }


def context_blocks(result: RelationalResult) -> str:
    """The three evidence blocks as text for an LLM prompt (data, never instructions)."""
    zones = "\n".join(
        f"- {z['h3']} score={z['score']} total={z['total']} {z['categories']}" for z in result.zones
    )
    pois = "\n".join(
        f"- {r.id} | {r.category} | {r.name or '-'} | {r.lat:.6f},{r.lon:.6f} | {r.h3}" for r in result.pois
    )
    pairs = "\n".join(f"- {p.a.id} -- {p.b.id}: {p.dist_m:.1f} m" for p in result.pairs)
    return f"ZONES\n{zones or '-'}\nPOIS\n{pois or '-'}\nRELATIONS (dist_m)\n{pairs or '-'}"


def _label(r: PoiRow) -> str:
    return f"{r.name} ({r.id})" if r.name else r.id


def answer_text(result: RelationalResult, language: str) -> str:
    """Pairs stated with their distances; the reading is from open data, not a diagnosis."""
    c = result.constraints
    where = f" in {result.area.place}" if result.area.place else ""
    pair_names = "; ".join(f"{category_label(a, language)}/{category_label(b, language)}" for a, b in c.pairs)
    n = len(result.pairs)
    listed = result.pairs[:MAX_LISTED_PAIRS]
    lines = [f"{_label(p.a)} - {_label(p.b)}: {p.dist_m:.0f} m" for p in listed]
    if language == "pt":
        where = f" em {result.area.place}" if result.area.place else ""
        head = (
            f"{n} par(es) {pair_names} a até {c.radius_m:.0f} m{where}"
            " (distâncias verificadas, dados abertos)."
            if n
            else f"Nenhum par {pair_names} a até {c.radius_m:.0f} m{where} nos conjuntos de dados carregados."
        )
        more = f"\n... e mais {n - len(listed)}." if n > len(listed) else ""
    else:
        head = (
            f"{n} {pair_names} pair(s) within {c.radius_m:.0f} m{where} (verified distances, open data)."
            if n
            else f"No {pair_names} pair within {c.radius_m:.0f} m{where} in the loaded datasets."
        )
        more = f"\n... and {n - len(listed)} more." if n > len(listed) else ""
    return head + ("\n" + "\n".join(lines) if lines else "") + more
