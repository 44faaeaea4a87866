"""Example bodies for the OpenAPI document: one request and one response per route, keyed
by (method, path). service/api/openapi.py puts them in the schema; the OpenAPI test fails
on a route that has none, so a new route needs its row here."""

from __future__ import annotations

from typing import Any

DOC_ID = "9b1f3c2a7d4e5f60"
PAGE_HIT: dict[str, Any] = {
    "doc_id": DOC_ID,
    "page_no": 1,
    "title": "Parques do Recife",
    "filename": "parques_recife.pdf",
    "kind": "pdf_page",
    "score": 0.0328,
    "channels": {"dense": {"rank": 1, "score": 0.71}, "bm25_pt": {"rank": 1, "score": 12.4}},
    "chunks": [
        {
            "chunk_no": 3,
            "text": "Parque da Jaqueira (-8,0375; -34,9030)",
            "bbox": [72.0, 410.5, 380.2, 424.0],
            "page_size": [595.0, 842.0],
            "rank": 1,
            "score": 0.0328,
        }
    ],
    "excerpt": "Parque da Jaqueira (-8,0375; -34,9030)",
    "locations": [{"lat": -8.0375, "lon": -34.903}],
    "image_url": f"/v1/documents/{DOC_ID}/pages/1/image",
    "thumbnail_url": f"/v1/documents/{DOC_ID}/pages/1/thumbnail",
    "heatmap_url": None,
}
UNDERSTOOD: dict[str, Any] = {
    "place": {"id": "geonames:3390760", "name": "Recife", "country": "BR", "lat": -8.05, "lon": -34.9},
    "alternatives": [
        {"id": "geonames:0000001", "name": "Recife", "country": "PT", "kind": "city", "confidence": 0.1}
    ],
    "place_use": "prior",
    "filters": [{"kind": "geo_prior", "value": "filter"}],
    "geodata": None,
}
SEARCH_EXAMPLE: dict[str, Any] = {
    "query": "parques no Recife",
    "results": [PAGE_HIT],
    "timings_ms": {"encode": 8.1, "dense": 3.2, "bm25": 1.4, "fuse": 0.2},
    "geo_filter": None,
    "geo_prior": {
        "place": "Recife",
        "place_id": "geonames:3390760",
        "lat": -8.05,
        "lon": -34.9,
        "mode": "filter",
    },
    "understood": UNDERSTOOD,
}
ASK_EXAMPLE: dict[str, Any] = {
    "question": "Quais são as coordenadas do Parque da Jaqueira?",
    "answer": f"Parque da Jaqueira (-8,0375; -34,9030) [{DOC_ID}:1]",
    "language": "pt",
    "grounded": True,
    "refused": False,
    "status": "answer",
    "relevance": 0.82,
    "citations": [
        {
            "doc_id": DOC_ID,
            "page_no": 1,
            "title": "Parques do Recife",
            "bbox": [72.0, 410.5, 380.2, 424.0],
            "quote": "Parque da Jaqueira (-8,0375; -34,9030)",
            "image_url": f"/v1/documents/{DOC_ID}/pages/1/image",
        }
    ],
    "evidence": [PAGE_HIT],
    "timings_ms": {"retrieve": 21.0, "answer": 4.2},
    "geo_filter": None,
    "geo_prior": None,
    "graph": None,
    "answerer": "extractive",
    "invalid_citations": [],
    "usage": None,
    "understood": {**UNDERSTOOD, "place": None, "alternatives": [], "place_use": None, "filters": []},
}
DOCUMENT: dict[str, Any] = {
    "id": DOC_ID,
    "title": "Parques do Recife",
    "filename": "parques_recife.pdf",
    "mime": "application/pdf",
    "kind": "pdf",
    "size_bytes": 184220,
    "pages": 3,
    "status": "ready",
    "error": None,
    "profile": "lite",
    "metadata": {"source": "prefeitura"},
    "footprint": {"type": "Point", "coordinates": [-34.903, -8.0375]},
    "acl": [],
    "created_at": "2026-12-01T14:00:00+00:00",
    "updated_at": "2026-12-01T14:00:05+00:00",
}
PAGE: dict[str, Any] = {
    "page_no": 1,
    "width": 932,
    "height": 1318,
    "text_source": "pdf",
    "chars": 2140,
    "chunks": 6,
    "image_url": f"/v1/documents/{DOC_ID}/pages/1/image",
    "thumbnail_url": f"/v1/documents/{DOC_ID}/pages/1/thumbnail",
}
JOB: dict[str, Any] = {
    "id": "job_5e2c1a",
    "status": "ready",
    "stage": "done",
    "pages_done": 3,
    "pages_total": 3,
    "document_id": DOC_ID,
    "error": None,
    "warnings": [],
    "created_at": "2026-12-01T14:00:00+00:00",
    "updated_at": "2026-12-01T14:00:05+00:00",
}
KEY: dict[str, Any] = {
    "id": "k_3a9f",
    "tenant": "acme",
    "groups": ["finance"],
    "admin": False,
    "role": "member",
    "label": "reporting bot",
    "created_at": "2026-12-01T14:00:00+00:00",
    "revoked_at": None,
}
DATASET: dict[str, Any] = {
    "id": "3f2a9c1e5b7d4a60",
    "name": "helsinki_pois.geojson",
    "filename": "helsinki_pois.geojson",
    "kind": "geojson",
    "pois": 1843,
    "roads": 12,
    "duplicates": 0,
    "skipped": 2,
    "created_at": "2026-12-01T14:00:00+00:00",
}
ENTITY: dict[str, Any] = {
    "id": 7,
    "kind": "org",
    "name": "Agência Nacional de Águas",
    "mentions": 12,
    "documents": 3,
    "aliases": ["ANA"],
}
UPLOAD_FORM = {
    "file": "(binary) parques_recife.pdf",
    "metadata": '{"source": "prefeitura"}',
    "groups": "finance",
}
SSE_ASK = (
    'event: evidence\ndata: {"evidence": [...]}\n\nevent: token\ndata: {"text": "Parque"}\n\n'
    'event: citations\ndata: {"citations": [...], "grounded": true}\n\n'
    "event: done\ndata: {...AskResponse}\n\n"
)

# (method, path) -> {"request": body example (JSON or form), "response": the success body}
ROUTE_EXAMPLES: dict[tuple[str, str], dict[str, Any]] = {
    ("get", "/healthz"): {
        "response": {
            "status": "ok",
            "profile": "lite",
            "visual_unavailable": None,
            "reindex_needed": False,
            "text_model": "multilingual-e5-small",
            "collections": ["text"],
        }
    },
    ("get", "/readyz"): {
        "response": {
            "status": "ready",
            "checks": {"store": "ok", "registry": "ok", "text_model": "ok", "jobs": "ok"},
        }
    },
    ("get", "/metrics"): {
        "response": '# HELP carta_requests_total Requests\ncarta_requests_total{route="/v1/ask"} 3.0\n'
    },
    ("get", "/v1/traces/{request_id}"): {
        "response": {
            "request_id": "3c9e",
            "question": "Onde fica o Parque da Jaqueira?",
            "channels": {},
            "timings_ms": {},
        }
    },
    ("get", "/v1/documents"): {"response": [DOCUMENT]},
    ("post", "/v1/documents"): {
        "request": UPLOAD_FORM,
        "response": {
            "job": {**JOB, "status": "queued", "stage": "queued", "pages_done": 0, "document_id": None},
            "document": None,
            "created": True,
            "warnings": [],
        },
    },
    ("get", "/v1/documents/{doc_id}"): {"response": {**DOCUMENT, "page_list": [PAGE]}},
    ("delete", "/v1/documents/{doc_id}"): {"response": {"deleted": DOC_ID}},
    ("get", "/v1/documents/{doc_id}/pages/{page_no}"): {
        "response": {
            "doc_id": DOC_ID,
            "page_no": 1,
            "text_source": "pdf",
            "text": "Parque da Jaqueira (-8,0375; -34,9030)",
            "chunks": [
                {
                    "chunk_no": 3,
                    "text": "Parque da Jaqueira (-8,0375; -34,9030)",
                    "bbox": [72.0, 410.5, 380.2, 424.0],
                }
            ],
            "image_url": f"/v1/documents/{DOC_ID}/pages/1/image",
            "page_size": [595.0, 842.0],
            "locations": [{"lat": -8.0375, "lon": -34.903}],
            "geo_tags": [{"label": "Parque da Jaqueira", "lat": -8.0375, "lon": -34.903}],
        }
    },
    ("get", "/v1/documents/{doc_id}/pages/{page_no}/image"): {"response": "(binary WebP image)"},
    ("get", "/v1/documents/{doc_id}/pages/{page_no}/thumbnail"): {"response": "(binary WebP image)"},
    ("get", "/v1/documents/{doc_id}/pages/{page_no}/heatmap"): {"response": "(binary PNG image)"},
    ("post", "/v1/search"): {
        "request": {"query": "parques no Recife", "top_k": 5},
        "response": SEARCH_EXAMPLE,
    },
    ("post", "/v1/ask"): {
        "request": {"question": "Quais são as coordenadas do Parque da Jaqueira?", "top_k": 5},
        "response": ASK_EXAMPLE,
        "stream": SSE_ASK,
    },
    ("post", "/v1/search/image"): {
        "request": {"file": "(binary) photo.png", "top_k": "5"},
        "response": SEARCH_EXAMPLE,
    },
    ("get", "/v1/datasets"): {"response": [DATASET]},
    ("post", "/v1/datasets"): {
        "request": {"file": "(binary) helsinki_pois.geojson"},
        "response": {"dataset": DATASET, "created": True},
    },
    ("get", "/v1/datasets/{dataset_id}"): {
        "response": {
            **DATASET,
            "features": 1843,
            "polygons": 0,
            "properties": [],
            "categories": {"cafe": 412, "pharmacy": 61},
            "aliases": {},
        }
    },
    ("get", "/v1/datasets/{dataset_id}/roads"): {
        "response": {
            "type": "FeatureCollection",
            "features": [
                {
                    "type": "Feature",
                    "properties": {"id": "road:w4512", "name": "Mannerheimintie", "kind": "primary"},
                    "geometry": {"type": "LineString", "coordinates": [[24.938, 60.170], [24.934, 60.174]]},
                }
            ],
            "total": 1,
            "truncated": False,
        }
    },
    ("delete", "/v1/datasets/{dataset_id}"): {"response": {"deleted": "3f2a9c1e5b7d4a60"}},
    ("get", "/v1/jobs/{job_id}"): {"response": JOB},
    ("get", "/v1/jobs/{job_id}/events"): {
        "response": (
            'event: progress\ndata: {"stage": "embed", "pages_done": 2, "pages_total": 3}\n\n'
            "event: done\ndata: {...JobOut}\n\n"
        )
    },
    ("get", "/v1/keys"): {"response": [KEY]},
    ("post", "/v1/keys"): {
        "request": {"groups": ["finance"], "role": "member", "label": "reporting bot"},
        "response": {**KEY, "secret": "carta_sk_5f1c...e9"},
    },
    ("delete", "/v1/keys/{key_id}"): {"response": {"revoked": "k_3a9f"}},
    ("get", "/v1/entities"): {"response": [ENTITY]},
    ("get", "/v1/entities/{entity_id}"): {
        "response": {
            "id": 7,
            "kind": "org",
            "name": "Agência Nacional de Águas",
            "aliases": ["ANA"],
            "merges": [{"alias": "ANA", "rule": "acronym", "doc_id": DOC_ID, "page_no": 2, "chunk_no": 1}],
            "mentions": [],
            "relations": [],
            "community": None,
        }
    },
    ("get", "/v1/examples"): {
        "response": {
            "questions": [
                {
                    "text": "Quais são as coordenadas do Parque da Jaqueira?",
                    "source": "document",
                    "source_id": DOC_ID,
                }
            ]
        }
    },
    ("get", "/ui/config"): {
        "response": {
            "tile_url": None,
            "tile_attribution": None,
            "max_upload_bytes": 52428800,
            "profile": "lite",
        }
    },
    ("get", "/ui/h3"): {
        "response": {
            "type": "FeatureCollection",
            "features": [
                {
                    "type": "Feature",
                    "properties": {"h3": "87818d8c9ffffff", "resolution": 7},
                    "geometry": {
                        "type": "Polygon",
                        "coordinates": [[[-34.9, -8.05], [-34.89, -8.05], [-34.9, -8.04], [-34.9, -8.05]]],
                    },
                }
            ],
        }
    },
}
