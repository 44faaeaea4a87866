"""Request and response bodies of the HTTP API (also the CLI's --json output)."""

from __future__ import annotations

import json
import logging
from typing import Annotated, Any, Literal, TypeVar
from urllib.parse import urlencode

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from geo.h3tags import MAX_QUERY_CELLS, MAX_QUERY_TOKENS
from index.registry import Document, PageRecord
from service.answer.extractive import Answer
from service.api.examples import ASK_EXAMPLE, SEARCH_EXAMPLE
from service.api.graph_schemas import GeoJSONPolygon, GraphEvidenceOut, ResolvedGeoOut, UsageOut, Wire
from service.auth import Role
from service.query.geo_filter import GeoSpec
from service.query.types import PriorMode, SearchResult

log = logging.getLogger(__name__)
WireT = TypeVar("WireT", bound=Wire)

PriorModeIn = PriorMode  # one definition, in service.query.types
# Bounds on a query's lists, so a body of a million items is one 422, not a million
# validation errors (each a dict of its own: gigabytes for a few MB of body).
MAX_DOC_IDS = 1000
MAX_KINDS = 10
# Their items: pydantic checks that a constrained str is text, so a JSON "\ud800" (a lone
# surrogate, which json.loads decodes) is a 422; unconstrained, it reached the store's
# filter, which cannot encode it (500).
DocIdIn = Annotated[str, Field(max_length=200)]
KindIn = Annotated[str, Field(max_length=64)]
PRIOR_MODE_HELP = (
    "How the geo prior ranks (default: CARTA_GEO_PRIOR_MODE): chunks within the place (filter), "
    "a distance-decay boost (decay), or the hashed H3 vector (h3vector)."
)


class GeoJSONPolygonIn(GeoJSONPolygon):
    """A request's polygon; its shape is checked by the geo filter (400 bad_geo_filter)."""

    type: str | None = Field(None, description='"Polygon".')
    coordinates: list[Any] | None = Field(None, description="Rings of [lon, lat] positions, closed.")


class GeoFilterIn(BaseModel):
    """Exactly one of: lat + lon + radius_m (metres, exact on points); bbox; a GeoJSON
    polygon; H3 cells (any resolution); a place name from the gazetteers (optionally
    with radius_m). Coordinates: lat/lon in degrees; bbox and polygon in GeoJSON order."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"example": {"lat": -8.0476, "lon": -34.877, "radius_m": 5000}},
    )
    lat: float | None = Field(None, ge=-90, le=90, description="Centre latitude (with lon and radius_m).")
    lon: float | None = Field(None, ge=-180, le=180, description="Centre longitude (with lat and radius_m).")
    radius_m: float | None = Field(
        None, gt=0, le=2_000_000, description="Radius in metres, around lat/lon or around the place."
    )
    bbox: list[float] | None = Field(
        None, min_length=4, max_length=4, description="[min_lon, min_lat, max_lon, max_lat]"
    )
    polygon: GeoJSONPolygonIn | None = Field(
        None, description='GeoJSON Polygon: {"type": "Polygon", "coordinates": [[[lon, lat], ...]]}'
    )
    # the cell cap (MAX_QUERY_CELLS) and the validity check answer 400 in the geo filter;
    # this bound only keeps a pathological body from being parsed into a huge list
    h3: list[str] | None = Field(
        None,
        max_length=10 * MAX_QUERY_CELLS,
        description=f"H3 cell ids, at most {MAX_QUERY_CELLS}; coarse cells may expand to at most "
        f"{MAX_QUERY_TOKENS:,} resolution-7 cells.",
    )
    place: str | None = Field(
        None, max_length=200, description="A place name from the gazetteers (pt or en), e.g. Recife."
    )

    def spec(self) -> GeoSpec:
        return GeoSpec(**self.model_dump())


def has_words(text: str) -> str:
    """A question or query must hold a letter or a digit: blanks or control characters alone
    were answered from whatever the search ranked first."""
    if not any(ch.isalnum() for ch in text):
        raise ValueError("it holds no letter or digit; write the question in words")
    return text


Words = Annotated[str, AfterValidator(has_words)]


class SearchRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"example": {"query": "enchentes em Recife", "top_k": 5, "kinds": ["pdf_page"]}},
    )
    query: Words = Field(..., min_length=1, max_length=2000, description="Question or keywords, pt or en.")
    top_k: int = Field(5, ge=1, le=50, description="How many pages to return.")
    doc_ids: list[DocIdIn] | None = Field(
        None, max_length=MAX_DOC_IDS, description=f"Only these documents (at most {MAX_DOC_IDS})."
    )
    kinds: list[KindIn] | None = Field(
        None, max_length=MAX_KINDS, description="Only these page kinds: pdf_page, image."
    )
    channels: list[Literal["dense", "bm25", "pages", "visual", "clip", "entities", "global"]] | None = Field(
        None,
        max_length=MAX_KINDS,
        description="Retrieval channels to run (default all); one channel alone is a baseline.",
    )
    geo: GeoFilterIn | None = Field(None, description="Only pages/chunks located there (before top-k).")
    geo_prior: bool = Field(True, description="Boost pages near a place the question names.")
    geo_prior_mode: PriorModeIn | None = Field(None, description=PRIOR_MODE_HELP)


class AskRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "example": {"question": "Quais são as coordenadas do Parque da Jaqueira?", "top_k": 5}
        },
    )
    question: Words = Field(..., min_length=1, max_length=2000, description="The question, pt or en.")
    top_k: int = Field(5, ge=1, le=50, description="How many evidence pages to answer from.")
    doc_ids: list[DocIdIn] | None = Field(
        None, max_length=MAX_DOC_IDS, description=f"Only these documents (at most {MAX_DOC_IDS})."
    )
    kinds: list[KindIn] | None = Field(
        None, max_length=MAX_KINDS, description="Only these page kinds: pdf_page, image."
    )
    geo: GeoFilterIn | None = Field(None, description="Only pages/chunks located there (before top-k).")
    geo_prior: bool = Field(True, description="Boost pages near a place the question names.")
    geo_prior_mode: PriorModeIn | None = Field(None, description=PRIOR_MODE_HELP)
    stream: bool = Field(
        False, description="Server-sent events: evidence, token..., citations, done (the full response)."
    )


class ErrorBody(BaseModel):
    code: str = Field(description="Stable machine-readable code, e.g. invalid_request, not_found.")
    message: str = Field(description="A sentence saying what is wrong and how to fix it.")


class ErrorResponse(BaseModel):
    """Every error the API answers (4xx and 5xx), and the SSE `error` event."""

    model_config = ConfigDict(
        json_schema_extra={
            "example": {"error": {"code": "invalid_request", "message": "body.question: Field required"}}
        }
    )

    error: ErrorBody = Field(description="What went wrong.")


class PageOut(BaseModel):
    page_no: int
    width: int
    height: int
    text_source: str
    chars: int
    chunks: int
    image_url: str
    thumbnail_url: str


class DocumentOut(BaseModel):
    id: str
    title: str
    filename: str
    mime: str
    kind: str
    size_bytes: int
    pages: int
    status: str
    error: str | None
    profile: str
    metadata: dict[str, Any]
    footprint: dict[str, Any] | None = Field(
        None, description="GeoJSON geometry of what the document is about."
    )
    acl: list[str] = Field(default_factory=list, description="Groups that may see it; empty = the tenant.")
    created_at: str
    updated_at: str


class DocumentDetail(DocumentOut):
    page_list: list[PageOut]


class PageChunk(BaseModel):
    chunk_no: int
    text: str
    bbox: list[float]


class PageText(BaseModel):
    doc_id: str
    page_no: int
    text_source: str
    text: str
    chunks: list[PageChunk]
    image_url: str
    page_size: list[float] | None = Field(None, description="Page size in the units of chunk bboxes.")
    locations: list[dict[str, float]] = Field(
        default_factory=list, description="Points the page is tagged with."
    )
    geo_tags: list[dict[str, Any]] = Field(
        default_factory=list, description="Places and coordinates found on the page."
    )


class JobOut(BaseModel):
    id: str
    status: Literal["queued", "running", "ready", "failed"]
    stage: str
    pages_done: int
    pages_total: int
    document_id: str | None
    error: str | None
    warnings: list[str] = []
    created_at: str
    updated_at: str


class UploadResponse(BaseModel):
    job: JobOut
    document: DocumentOut | None = Field(None, description="The document when it is already indexed.")
    created: bool = Field(..., description="False when this content was already indexed (idempotent upload).")
    warnings: list[str] = []


class IngestedOut(BaseModel):
    """A synchronous (CLI) ingestion's result."""

    document: DocumentOut
    created: bool
    warnings: list[str] = []
    seconds: dict[str, float] = Field(
        default_factory=dict,
        description="Wall seconds per ingestion stage (read, images, chunk, caption, embed, sparse, geotag, "
        "store, after) and their total; empty when the content was already indexed.",
    )


class KeyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    groups: list[str] = Field(default_factory=list, max_length=50)
    admin: bool = False
    role: Role | None = Field(
        None, description="reader, member or admin (default: admin with admin=true, else member)."
    )
    label: str = Field("", max_length=200)


class KeyOut(BaseModel):
    id: str
    tenant: str
    groups: list[str]
    admin: bool
    role: Role
    label: str
    created_at: str
    revoked_at: str | None


class KeyCreated(KeyOut):
    secret: str = Field(..., description="The API key; shown once, only its hash is stored.")


class ChannelOut(BaseModel):
    rank: int = Field(description="The page's 1-based rank in this channel's list.")
    score: float = Field(description="The channel's own score (not comparable across channels).")


class ChunkOut(BaseModel):
    chunk_no: int = Field(description="The chunk's number on its page.")
    text: str = Field(description="The chunk's text.")
    bbox: list[float] = Field(description="Where it sits on the page: [x0, y0, x1, y1] in page units.")
    page_size: list[float] = Field(description="[width, height] of the page in the units of bbox.")
    rank: int = Field(description="1-based rank among the page's chunks.")
    score: float = Field(description="The chunk's fused score.")


class PageHit(BaseModel):
    """One evidence page, with where each retrieval channel ranked it."""

    doc_id: str = Field(description="The document's id.")
    page_no: int = Field(description="1-based page number.")
    title: str = Field(description="The document's title.")
    filename: str = Field(description="The uploaded file's name.")
    kind: str = Field(description="pdf_page or image.")
    score: float = Field(description="Fused (reciprocal rank) score; higher ranks first.")
    channels: dict[str, ChannelOut] = Field(description="Rank and score per channel that found the page.")
    chunks: list[ChunkOut] = Field(description="The page's best chunks (at most 3).")
    excerpt: str = Field(description="A short passage of the page for display.")
    locations: list[dict[str, float]] = Field(
        default_factory=list, description="Points the page is tagged with: {lat, lon}."
    )
    image_url: str = Field(description="The rendered page image.")
    thumbnail_url: str = Field(description="A small page image.")
    heatmap_url: str | None = Field(
        None, description="Visual profile: PNG of the page patches that matched the query (late interaction)."
    )


class PlaceOut(BaseModel):
    id: str | None = Field(None, description="Gazetteer place id.")
    name: str | None = Field(None, description="The place's name.")
    country: str | None = Field(None, description="ISO country code, when known.")
    lat: float | None = Field(None, description="Latitude.")
    lon: float | None = Field(None, description="Longitude.")
    confidence: float | None = Field(None, description="How sure the match is, 0..1.")


class AlternativePlaceOut(BaseModel):
    id: str = Field(description="Gazetteer place id.")
    name: str = Field(description="The place's name.")
    country: str | None = Field(None, description="ISO country code.")
    admin1: str | None = Field(None, description="State or province code, when known.")
    kind: str = Field(description="city, state, country, ...")
    confidence: float = Field(description="How likely the name meant this place, 0..1.")


class AppliedFilter(BaseModel):
    kind: str = Field(description="documents, page_kinds, channels, geo_<kind> or geo_prior.")
    value: list[str] | str = Field(description="What it restricted to.")


class GeodataReading(BaseModel):
    """What the geodata path read from the question."""

    kind: str = Field(description="analytic (a plan), relational (pairs) or overview (zones).")
    operation: str | None = Field(None, description="count, argmax, group_by, pairs, zones, ...")
    target: str | None = Field(None, description="The category, dataset or name counted or ranked.")
    attribute: str | None = Field(None, description="The property aggregated or ranked by.")
    area: str | None = Field(None, description="Where: the place or layer named.")
    radius_m: float | None = Field(None, description="Pairs: the distance asked.")
    group_by: str | None = Field(None, description="Grouped by: a property, h3 or a layer.")
    notes: list[str] = Field(default_factory=list, description="Defaults and clamps applied while reading.")


class PlanPageOut(Wire):
    """A page one planner step retrieved."""

    doc_id: str = Field(description="The document's id.")
    page_no: int = Field(description="The 1-based page number.")


class PlanStepOut(Wire):
    """One retrieval step of the query planner (service/query/planner.py)."""

    step: int = Field(description="1-based step number.")
    kind: str = Field(description="question, sub-question, translation or missing terms.")
    query: str = Field(description="What this step searched for.")
    pages: list[PlanPageOut] = Field(description="Its best pages (at most 5).")
    new_pages: int = Field(description="Pages no earlier step had found.")
    missing: list[str] | None = Field(None, description="Key terms no page covered after this step.")


class PlanOut(Wire):
    """How the query planner retrieved the evidence (CARTA_PLANNER=auto)."""

    router: str = Field(
        description="rules, or llm when an LLM chose the routes; none when nothing was routed "
        "(CARTA_PLANNER=translate: only the translation searched)."
    )
    routes: list[str] = Field(description="text, visual, geodata, graph, global: what the question needs.")
    why: dict[str, str] = Field(description="Per route, what in the question chose it.")
    channels: list[str] | None = Field(None, description="The channels every step ran.")
    multi_hop: bool = Field(description="Whether the question was split into parts.")
    sub_questions: list[str] = Field(description="The parts, each searched on its own.")
    steps: list[PlanStepOut] = Field(description="Every search, in order.")
    missing: list[str] = Field(description="Key terms no evidence page covers at the end.")
    stopped: str = Field(description="covered, no progress, step limit, token limit or single question.")
    tokens: int = Field(description="Evidence tokens the checks read, plus LLM routing tokens.")
    limits: dict[str, int] = Field(description="max_steps and max_tokens (CARTA_PLANNER_MAX_*).")


class UnderstoodOut(BaseModel):
    """How the question was understood: shown to the user before the evidence."""

    place: PlaceOut | None = Field(None, description="The place the question (or the geo filter) named.")
    alternatives: list[AlternativePlaceOut] = Field(
        default_factory=list, description='"Did you mean": other places with that name.'
    )
    place_use: Literal["filter", "prior"] | None = Field(
        None, description="filter: only pages there; prior: pages there ranked higher."
    )
    filters: list[AppliedFilter] = Field(
        default_factory=list, description="Restrictions the request applied."
    )
    geodata: GeodataReading | None = Field(None, description="The geodata path's reading, when it answered.")


class SearchResponse(BaseModel):
    model_config = ConfigDict(json_schema_extra={"example": SEARCH_EXAMPLE})

    query: str = Field(description="The query as searched.")
    results: list[PageHit] = Field(description="Evidence pages, best first.")
    timings_ms: dict[str, float] = Field(description="Milliseconds per stage (encode, each channel, fuse).")
    geo_filter: ResolvedGeoOut | None = Field(None, description="What the request's geo filter resolved to.")
    geo_prior: ResolvedGeoOut | None = Field(
        None, description="The place the question named, if it boosted pages."
    )
    understood: UnderstoodOut | None = Field(None, description="How the query was understood.")
    plan: PlanOut | None = Field(
        None, description="CARTA_PLANNER=auto: routes, sub-questions and every retrieval step."
    )


class CitationOut(BaseModel):
    doc_id: str = Field(description="The cited document.")
    page_no: int = Field(description="The cited page.")
    title: str = Field(description="The document's title.")
    bbox: list[float] = Field(description="The cited passage's box on the page, in page units.")
    quote: str = Field(description="The cited passage.")
    image_url: str = Field(description="The page image.")


class InvalidCitationOut(BaseModel):
    doc_id: str = Field(description="The document the citation named.")
    page_no: int = Field(description="The page it named.")
    reason: str = Field(description="Why it does not count (not in the evidence sent).")


class GlobalChunkOut(BaseModel):
    """A chunk a community summary's sentence comes from."""

    doc_id: str = Field(description="The document.")
    page_no: int = Field(description="The page (1-based).")
    chunk_no: int = Field(description="The chunk of the page.")


class GlobalCommunityOut(BaseModel):
    """One document-graph community a global answer drew on."""

    id: int = Field(description="The community (Leiden over the tenant's entity relations).")
    score: float = Field(description="How well its summary matches the question.")
    why: list[str] = Field(description="What ranked it: named entities, topic words, an asked kind, size.")
    entities: int = Field(description="Its entities the caller may see.")
    chunks: list[GlobalChunkOut] = Field(description="The chunks behind its summary (the first few).")
    summary: Literal["llm", "extractive"] = Field(
        "extractive", description="llm: the LLM's cached report of the community was used; else extractive."
    )


class GlobalSearchOut(BaseModel):
    """How a question across the documents was answered from the document graph."""

    terms: list[str] = Field(description="The question's topic words (folded), its phrasing left out.")
    kinds: list[str] = Field(description="Entity kinds the question asks for (org, programme, law, ...).")
    named_entities: list[int] = Field(description="Entities the question names (ids).")
    communities: list[GlobalCommunityOut] = Field(description="The communities used, the best first.")
    llm: bool = Field(description="True when an LLM mapped and reduced them; false: extractive.")


class AnswerEntityOut(BaseModel):
    """A document-graph entity the answer names: the UI's chip, whose mentions are at
    GET /v1/entities/{id}."""

    id: int = Field(description="The entity (GET /v1/entities/{id} lists its mentions with their pages).")
    kind: str = Field(description="org, programme, law, code, place, person, ...")
    name: str = Field(description="Its name as the documents write it.")
    mentions: int = Field(description="Its mentions in the documents the caller may see.")
    documents: int = Field(description="How many of those documents mention it.")


class AskResponse(BaseModel):
    model_config = ConfigDict(json_schema_extra={"example": ASK_EXAMPLE})

    question: str = Field(description="The question as asked.")
    answer: str = Field(description="The answer text, with citation markers like [doc:page].")
    language: str = Field(description="The question's language (pt or en); the answer's too.")
    grounded: bool = Field(description="True when every claim is backed by a citation or computed data.")
    refused: bool = Field(description="True when the evidence does not answer the question.")
    status: Literal["answer", "passages", "refused"] = Field(
        "answer",
        description="What the user got: 'answer' (a sentence states the asked thing), 'passages' (the "
        "evidence's best passages, quoted with citations, but no composed answer) or 'refused' (not found).",
    )
    relevance: float = Field(description="How relevant the best evidence is, 0..1.")
    citations: list[CitationOut] = Field(description="The passages the answer cites.")
    evidence: list[PageHit] = Field(description="The evidence pages the answer was made from.")
    timings_ms: dict[str, float] = Field(description="Milliseconds per stage.")
    geo_filter: ResolvedGeoOut | None = Field(None, description="What the request's geo filter resolved to.")
    geo_prior: ResolvedGeoOut | None = Field(
        None, description="The place the question named, if it boosted pages."
    )
    graph: GraphEvidenceOut | None = Field(
        None, description="Relational evidence: zones, pois, pairs (a, b, categories, dist_m), geojson."
    )
    answerer: Literal["extractive", "llm"] = Field(
        "extractive", description="Who wrote the answer: quoted passages (extractive) or the LLM."
    )
    invalid_citations: list[InvalidCitationOut] = Field(
        default_factory=list, description="Citations pointing outside the evidence sent (not grounded)."
    )
    usage: UsageOut | None = Field(
        None, description="LLM path: model, budgets (images, pixels, context tokens), what was sent, tokens."
    )
    understood: UnderstoodOut | None = Field(None, description="How the question was understood.")
    plan: PlanOut | None = Field(
        None, description="CARTA_PLANNER=auto: routes, sub-questions and every retrieval step."
    )
    communities: GlobalSearchOut | None = Field(
        None,
        description="A question across the documents: the document-graph communities the answer was "
        "composed from (ids, scores, why they ranked, the chunks behind each summary) and whether an LLM "
        "reduced them.",
    )
    entities: list[AnswerEntityOut] = Field(
        default_factory=list,
        description="Document-graph entities the answer names (then the question), that the caller's "
        "documents mention; empty when the document graph is off.",
    )


class DatasetOut(BaseModel):
    id: str
    name: str
    filename: str
    kind: str
    pois: int
    roads: int
    duplicates: int
    skipped: int
    created_at: str


class DatasetProperty(BaseModel):
    """One property of a dataset's features, typed from its values."""

    name: str
    type: str = Field(description="number | date | boolean | string | json | mixed")
    count: int = Field(description="features that carry it")
    min: float | str | None = Field(default=None, description="numbers and dates")
    max: float | str | None = None
    samples: list[Any] = Field(default_factory=list)
    types: dict[str, int] | None = Field(default=None, description="values per type, for a mixed property")


class DatasetDetail(DatasetOut):
    """A dataset with its schema: what a question may filter, aggregate and group by."""

    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "id": "3f2a9c1e5b7d4a60",
                "name": "recife_escolas_municipais.geojson",
                "filename": "recife_escolas_municipais.geojson",
                "kind": "geojson",
                "pois": 223,
                "roads": 0,
                "duplicates": 0,
                "skipped": 0,
                "created_at": "2026-12-01T14:00:00+00:00",
                "features": 223,
                "polygons": 0,
                "properties": [
                    {
                        "name": "IDEB",
                        "type": "number",
                        "count": 183,
                        "min": 2.7,
                        "max": 6.1,
                        "samples": [4.3, 4.8],
                    },
                    {"name": "RPA", "type": "number", "count": 220, "min": 1, "max": 6, "samples": [6, 2, 1]},
                    {
                        "name": "Escola",
                        "type": "string",
                        "count": 223,
                        "samples": ["Escola Municipal Asa Branca"],
                    },
                ],
                "categories": {"school": 223},
                "aliases": {},
            }
        }
    )

    features: int = 0
    polygons: int = Field(default=0, description="features with a polygon (usable as zones and for group-by)")
    properties: list[DatasetProperty] = Field(default_factory=list)
    categories: dict[str, int] = Field(default_factory=dict)
    aliases: dict[str, list[str]] = Field(
        default_factory=dict, description="question words naming a property"
    )


class DatasetUploadResponse(BaseModel):
    dataset: DatasetOut
    created: bool


def image_url(doc_id: str, page_no: int, thumb: bool = False) -> str:
    return f"/v1/documents/{doc_id}/pages/{page_no}/{'thumbnail' if thumb else 'image'}"


def page_geo(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """Page size, tagged points and geo tags of a page, from its chunk payloads (deduplicated)."""
    points = {(p["lat"], p["lon"]) for ch in chunks for p in ch.get("location", [])}
    tags = {(t.get("label"), t.get("lat"), t.get("lon")): t for ch in chunks for t in ch.get("geo_tags", [])}
    return {
        "page_size": next((ch["page_size"] for ch in chunks if ch.get("page_size")), None),
        "locations": [{"lat": lat, "lon": lon} for lat, lon in sorted(points)],
        "geo_tags": list(tags.values()),
    }


def document_out(doc: Document) -> DocumentOut:
    data = doc.to_dict()
    data["footprint"] = json.loads(doc.footprint) if doc.footprint else None
    return DocumentOut.model_validate(data)


def document_detail(doc: Document, pages: list[PageRecord]) -> DocumentDetail:
    page_list = [
        PageOut(
            **p.to_dict(),
            image_url=image_url(doc.id, p.page_no),
            thumbnail_url=image_url(doc.id, p.page_no, thumb=True),
        )
        for p in pages
    ]
    return DocumentDetail(**document_out(doc).model_dump(), page_list=page_list)


def heatmap_url(doc_id: str, page_no: int, query: str) -> str:
    return f"/v1/documents/{doc_id}/pages/{page_no}/heatmap?{urlencode({'query': query})}"


def _page_hits(pages: list, query: str = "") -> list[PageHit]:
    return [
        PageHit(
            doc_id=p.doc_id,
            page_no=p.page_no,
            title=p.title,
            filename=p.filename,
            kind=p.kind,
            score=round(p.score, 6),
            channels={k: ChannelOut(rank=v.rank, score=round(v.score, 6)) for k, v in p.channels.items()},
            chunks=[ChunkOut.model_validate(c, from_attributes=True) for c in p.chunks[:3]],
            excerpt=p.excerpt,
            locations=p.locations,
            image_url=image_url(p.doc_id, p.page_no),
            thumbnail_url=image_url(p.doc_id, p.page_no, thumb=True),
            heatmap_url=heatmap_url(p.doc_id, p.page_no, query) if query and "visual" in p.channels else None,
        )
        for p in pages
    ]


def search_response(result: SearchResult, understood: dict[str, Any] | None = None) -> SearchResponse:
    return SearchResponse(
        query=result.query,
        results=_page_hits(result.pages, result.query),
        timings_ms=result.timings_ms,
        geo_filter=documented(ResolvedGeoOut, result.geo_filter),
        geo_prior=documented(ResolvedGeoOut, result.geo_prior),
        understood=understood,
        plan=result.plan,
    )


def citations_out(citations: list) -> list[CitationOut]:
    return [
        CitationOut(
            doc_id=c.doc_id,
            page_no=c.page_no,
            title=c.title,
            bbox=c.bbox,
            quote=c.quote,
            image_url=image_url(c.doc_id, c.page_no),
        )
        for c in citations
    ]


def page_hits(pages: list) -> list[PageHit]:
    return _page_hits(pages)


def documented(model: type[WireT], data: dict[str, Any] | None) -> WireT | None:
    """`data` as its documented model. A key whose value the model does not describe (its
    type changed before its schema did) is left out with a warning: the answer goes out
    without that detail, never as a 500."""
    if data is None:
        return None
    kept = dict(data)
    while True:
        try:
            return model.model_validate(kept)
        except ValidationError as exc:
            bad = {str(e["loc"][0]) for e in exc.errors() if e["loc"]} & set(kept)
            if not bad:
                raise
            log.warning("%s: %s left out, not as the schema says: %s", model.__name__, sorted(bad), exc)
            kept = {k: v for k, v in kept.items() if k not in bad}


def ask_response(
    answer: Answer, understood: dict[str, Any] | None = None, entities: list[AnswerEntityOut] | None = None
) -> AskResponse:
    return AskResponse(
        question=answer.question,
        answer=answer.answer,
        language=answer.language,
        grounded=answer.grounded,
        refused=answer.refused,
        status=answer.status,
        relevance=answer.relevance,
        citations=citations_out(answer.citations),
        evidence=_page_hits(answer.evidence, answer.question),
        timings_ms=answer.timings_ms,
        geo_filter=documented(ResolvedGeoOut, answer.geo_filter),
        geo_prior=documented(ResolvedGeoOut, answer.geo_prior),
        graph=documented(GraphEvidenceOut, answer.graph),
        answerer=answer.answerer,
        invalid_citations=[
            InvalidCitationOut(doc_id=c.doc_id, page_no=c.page_no, reason=c.reason)
            for c in answer.invalid_citations
        ],
        usage=documented(UsageOut, answer.usage),
        understood=understood,
        plan=answer.plan,
        communities=answer.communities,
        entities=entities or [],
    )


# ------------------------------------------------------------------ document graph (issue 19)


class EntityOut(BaseModel):
    """An entity of the document graph, with its mention counts over the caller's documents."""

    id: int
    kind: str  # org, programme, law, code, place, date, amount
    name: str
    mentions: int
    documents: int
    aliases: list[str] = []


class EntityMentionOut(BaseModel):
    doc_id: str
    page_no: int
    chunk_no: int
    start: int  # span in the chunk's text (-1 when unknown)
    end: int
    text: str
    rule: str  # how it was resolved to the entity: acronym, alias, folded-name, embedding
    extractor: str  # what found it: acronym(long), law, cnpj, company, gazetteer, ...
    sentence: str


class EntityMergeOut(BaseModel):
    """A merge: the alias a mention taught, by which rule, where."""

    alias: str
    rule: str
    doc_id: str
    page_no: int
    chunk_no: int
    similarity: float = 0.0  # rule "embedding": the cosine of the two names (0 for the other rules)


class EntityChunkOut(BaseModel):
    doc_id: str
    page_no: int
    chunk_no: int


class EntityRelationOut(BaseModel):
    entity_id: int
    name: str
    kind: str
    type: str  # co-occurs, subordinate-to / superior-of, or the LLM's verb ("directs")
    count: int
    chunks: list[EntityChunkOut]
    description: str = ""  # what the LLM said about it (LLM extraction), else empty


class EntityCommunityOut(BaseModel):
    id: int
    summary: str  # extractive: its top entities and the sentences that mention them
    entities: list[str]


class EntityDetailOut(BaseModel):
    id: int
    kind: str
    name: str
    aliases: list[str]
    merges: list[EntityMergeOut]
    mentions: list[EntityMentionOut]
    relations: list[EntityRelationOut]
    community: EntityCommunityOut | None = None


class ExampleOut(BaseModel):
    text: str = Field(description="The question.")
    language: Literal["en", "pt"] = Field(description="Its language.")
    source: Literal["document", "dataset"] = Field(description="What it was made from.")
    source_id: str = Field(description="The document or dataset id.")
    source_name: str = Field(description="The document's title or the dataset's name.")


class ExamplesResponse(BaseModel):
    """Example questions made from the caller's own documents and POI datasets."""

    questions: list[ExampleOut] = Field(description="At most 6, datasets first, then newest documents.")


class RoadProperties(BaseModel):
    id: str = Field(description="The road's graph node id (road:<source id>).")
    name: str = Field(description="Its name ('' when the data has none).")
    kind: str | None = Field(None, description="highway=* value (residential, primary, ...).")


class RoadGeometry(BaseModel):
    type: Literal["LineString"] = Field(description='"LineString".')
    coordinates: list[list[float]] = Field(description="[lon, lat] positions.")


class RoadFeature(BaseModel):
    type: Literal["Feature"] = Field("Feature", description='"Feature".')
    properties: RoadProperties = Field(description="What the road is.")
    geometry: RoadGeometry = Field(description="Where it runs.")


class RoadsOut(BaseModel):
    """A POI dataset's road lines, as a GeoJSON FeatureCollection."""

    type: Literal["FeatureCollection"] = Field("FeatureCollection", description='"FeatureCollection".')
    features: list[RoadFeature] = Field(description="The roads, by id.")
    total: int = Field(description="Roads the dataset holds.")
    truncated: bool = Field(description="True when more roads exist than were returned.")
