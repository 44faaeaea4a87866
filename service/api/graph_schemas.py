"""Typed OpenAPI schemas for the parts of /v1/ask and /v1/search the query path builds as
plain dicts: the resolved geo filter and geo prior, the graph evidence (relational pairs,
a corpus-wide overview or an analytical plan's rows) and the LLM usage.

The wire format stays exactly what those dicts hold: every model here keeps unknown keys
(extra="allow") and writes back only the keys it was given (`Wire`), so a key the
query path adds later still reaches the client, and no key appears as null that was
absent before."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from graph.plan import GeoPlan

Number = int | float  # an int stays an int on the wire (3, not 3.0)


class Wire(BaseModel):
    """A documented dict: its known keys typed, other keys kept, absent keys left out."""

    model_config = ConfigDict(extra="allow")

    @model_serializer(mode="wrap")
    def _given_keys_only(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        keep = self.model_fields_set | set(self.__pydantic_extra__ or {})
        return {k: v for k, v in data.items() if k in keep}


class GeoJSONPolygon(Wire):
    type: str = Field(description='"Polygon" (or "MultiPolygon").')
    coordinates: list[Any] = Field(description="Rings of [lon, lat] positions, as GeoJSON nests them.")


class ResolvedGeoOut(Wire):
    """What a geo filter or geo prior resolved to: the keys of its kind only."""

    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "place": "Recife",
                "place_id": "geonames:3390760",
                "lat": -8.05389,
                "lon": -34.88111,
                "source": "geonames",
                "confidence": 0.92,
                "radius_m": 10000.0,
            }
        }
    )

    place: str | None = Field(None, description="The gazetteer place's name (a place filter or prior).")
    place_id: str | None = Field(None, description="Its gazetteer id.")
    country: str | None = Field(None, description="ISO country code, when the place is a country.")
    source: str | None = Field(None, description="The gazetteer it came from.")
    confidence: Number | None = Field(None, description="How sure the match is, 0..1.")
    lat: Number | None = Field(None, description="Centre latitude (radius filter or place).")
    lon: Number | None = Field(None, description="Centre longitude (radius filter or place).")
    radius_m: Number | None = Field(None, description="Radius in metres, when matched by distance.")
    area: bool | None = Field(None, description="True when matched inside the place's polygon.")
    bbox: list[Number] | None = Field(None, description="[min_lon, min_lat, max_lon, max_lat].")
    polygon: GeoJSONPolygon | None = Field(None, description="The GeoJSON polygon filtered by.")
    h3: list[str] | None = Field(None, description="The H3 cells filtered by.")
    mode: str | None = Field(None, description="Geo prior only: filter, decay or h3vector.")


class GeoJSONGeometry(Wire):
    type: str = Field(description="Point, Polygon, MultiPolygon, LineString, ...")
    coordinates: list[Any] | None = Field(None, description="GeoJSON coordinates ([lon, lat] order).")


class FeatureProperties(Wire):
    """A map feature's properties; `kind` says what it is."""

    kind: str | None = Field(None, description="zone, poi, row or area.")
    id: str | None = Field(None, description="POI or feature id.")
    name: str | None = Field(None, description="Its name, when known.")
    category: str | None = Field(None, description="POI category.")
    h3: str | None = Field(None, description="H3 cell (zones and POIs).")
    score: Number | None = Field(None, description="Zone score.")
    total: int | None = Field(None, description="POIs in the zone.")


class GeoJSONFeature(Wire):
    type: str = Field(description='"Feature".')
    geometry: GeoJSONGeometry | None = Field(None, description="Where it is.")
    properties: FeatureProperties = Field(default_factory=FeatureProperties, description="What it is.")


class FeatureCollection(Wire):
    type: str = Field(description='"FeatureCollection".')
    features: list[GeoJSONFeature] = Field(default_factory=list, description="The map's features.")


class ZoneOut(Wire):
    """An H3 zone the graph scored for the question."""

    h3: str = Field(description="The zone's H3 cell.")
    score: Number = Field(description="How well the zone matches the asked categories.")
    total: int | None = Field(None, description="POIs in the zone.")
    categories: dict[str, int] | None = Field(None, description="POIs per category in the zone.")
    documents: list[str] | None = Field(None, description="Documents that mention places in the zone.")
    place: str | None = Field(None, description="The nearest named place (overview answers).")
    community: str | None = Field(None, description="The parent cell grouping zones (overview answers).")


class CommunityOut(Wire):
    """A group of zones with an extractive summary (corpus-wide answers)."""

    h3: str = Field(description="The community's H3 cell.")
    score: Number = Field(description="Its score for the asked categories.")
    zones: int | None = Field(None, description="Zones in it.")
    total: int | None = Field(None, description="POIs in it.")
    categories: dict[str, int] | None = Field(None, description="POIs per category.")
    summary: str | None = Field(None, description="What it holds, in a sentence.")


class PoiOut(Wire):
    id: str = Field(description="POI id (e.g. osm:n123).")
    name: str | None = Field(None, description="Its name, when the data has one.")
    category: str = Field(description="Its category.")
    lat: Number = Field(description="Latitude.")
    lon: Number = Field(description="Longitude.")
    h3: str | None = Field(None, description="Its H3 cell.")


class PairOut(Wire):
    """Two POIs within the asked distance of each other."""

    a: str = Field(description="First POI's id (see pois).")
    b: str = Field(description="Second POI's id.")
    a_category: str = Field(description="First POI's category.")
    b_category: str = Field(description="Second POI's category.")
    dist_m: Number = Field(description="Distance in metres.")


class ConstraintsOut(Wire):
    """What the relational question asked for, as parsed."""

    categories: list[str] | None = Field(None, description="The categories named.")
    pairs: list[list[str]] | None = Field(None, description="Category pairs to relate.")
    radius_m: Number | None = Field(None, description="The distance asked (clamped to the limits).")
    place: str | None = Field(None, description="The place named, if any.")
    zones: int | None = Field(None, description="How many zones to rank, if asked.")
    notes: list[str] | None = Field(None, description="Defaults applied while parsing.")


class AreaOut(Wire):
    kind: str = Field(description="all, circle or polygon.")
    place: str | None = Field(None, description="The place the area comes from.")
    lat: Number | None = Field(None, description="Circle centre latitude.")
    lon: Number | None = Field(None, description="Circle centre longitude.")
    radius_m: Number | None = Field(None, description="Circle radius in metres.")


class AnalyticRowOut(Wire):
    """One feature of an analytical answer (a count's members, a ranking's rows, a group)."""

    name: str | None = Field(None, description="The feature's (or group's) name.")
    value: Any = Field(None, description="The computed value: the attribute, a count, a distance.")
    id: str | None = Field(None, description="The feature's id.")
    lat: Number | None = Field(None, description="Latitude.")
    lon: Number | None = Field(None, description="Longitude.")
    category: str | None = Field(None, description="Its category.")


class DatasetRef(Wire):
    id: str = Field(description="Dataset id.")
    name: str | None = Field(None, description="Dataset name.")


class UnknownOut(Wire):
    """What the question asked of that the datasets do not hold, and what they do hold."""

    kind: str | None = Field(None, description='"attribute" or "category".')
    name: str | None = Field(None, description="The attribute or category asked of (None: none was named).")
    available: list[str] | None = Field(None, description="What the datasets hold instead.")
    by_dataset: dict[str, list[str]] | None = Field(
        None, description="Attributes: each dataset's file name -> its numeric attributes."
    )


class GraphEvidenceOut(Wire):
    """Relational evidence computed from the loaded geodata. Relational answers carry
    constraints, area, zones, pois, pairs; corpus-wide ones kind="global", zones and
    communities; analytical ones plan, value, rows. All carry notes and geojson."""

    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "constraints": {
                    "categories": ["cafe", "pharmacy"],
                    "pairs": [["cafe", "pharmacy"]],
                    "radius_m": 100.0,
                    "place": "Helsinki",
                    "zones": None,
                    "notes": [],
                },
                "area": {"kind": "polygon", "place": "Helsinki"},
                "zones": [{"h3": "891126d3693ffff", "score": 2.0, "total": 7, "categories": {"cafe": 4}}],
                "pois": [
                    {"id": "osm:n1", "name": "Café Aalto", "category": "cafe", "lat": 60.168, "lon": 24.94}
                ],
                "pairs": [
                    {
                        "a": "osm:n1",
                        "b": "osm:n2",
                        "a_category": "cafe",
                        "b_category": "pharmacy",
                        "dist_m": 42.5,
                    }
                ],
                "rings": 0,
                "truncated": False,
                "notes": [],
                "geojson": {"type": "FeatureCollection", "features": []},
            }
        }
    )

    kind: str | None = Field(None, description='"global" for a corpus-wide overview.')
    constraints: ConstraintsOut | None = Field(None, description="What the question asked for, as parsed.")
    area: AreaOut | None = Field(None, description="Where the graph looked.")
    zones: list[ZoneOut] | None = Field(None, description="Scored H3 zones.")
    communities: list[CommunityOut] | None = Field(None, description="Zone groups (overview answers).")
    pois: list[PoiOut] | None = Field(None, description="The POIs the pairs name.")
    pairs: list[PairOut] | None = Field(None, description="POI pairs within the distance.")
    rings: int | None = Field(None, description="How many rings of neighbouring zones were added.")
    truncated: bool | None = Field(None, description="True when more results exist than were returned.")
    llm: bool | None = Field(None, description="True when an LLM wrote the overview (map-reduce).")
    plan: GeoPlan | None = Field(None, description="The analytical plan executed (analytical answers).")
    value: Any = Field(None, description="The analytical answer's value (a count, a sum, ...).")
    rows: list[AnalyticRowOut] | None = Field(None, description="The analytical answer's rows.")
    total: int | None = Field(None, description="Rows before truncation.")
    unknown: UnknownOut | None = Field(
        None, description="Set instead of a value when the asked attribute or category is not in the data."
    )
    datasets: list[DatasetRef] | None = Field(None, description="Datasets the answer was computed from.")
    notes: list[str] | None = Field(None, description="Parser and executor notes (defaults, clamps).")
    geojson: FeatureCollection | None = Field(None, description="The evidence as map features.")


class BudgetOut(Wire):
    vision: bool | None = Field(None, description="Whether page images may be sent.")
    max_images: int | None = Field(None, description="At most this many images.")
    image_max_pixels: int | None = Field(None, description="At most this many pixels per image.")
    context_tokens: int | None = Field(None, description="Context token budget.")
    answer_words: int | None = Field(None, description="Answer length budget in words.")


class UsageOut(Wire):
    """The LLM path's accounting: model, calls, budgets and what was sent, tokens."""

    model: str | None = Field(None, description="The LLM model name.")
    llm_calls: int | None = Field(None, description="LLM calls made for this answer.")
    prompt_tokens: int | None = Field(None, description="Prompt tokens, as the LLM reported.")
    completion_tokens: int | None = Field(None, description="Completion tokens, as the LLM reported.")
    uncited_sentences: int | None = Field(None, description="Answer sentences without a citation.")
    grades: dict[str, str] | None = Field(None, description="Evidence grades by page label, when graded.")
    pages_sent: int | None = Field(None, description="Evidence pages sent to the LLM.")
    images_sent: int | None = Field(None, description="Page images sent.")
    image_pixels_sent: int | None = Field(None, description="Pixels of the images sent.")
    context_tokens_est: int | None = Field(None, description="Estimated context tokens sent.")
    budget: BudgetOut | None = Field(None, description="The budgets the prompt was built under.")
