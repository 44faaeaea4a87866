"""What the evaluation runs against: an in-process Carta or a running server over HTTP.
Both expose the same four calls, with results in the HTTP API's JSON shapes."""

from __future__ import annotations

from typing import Any, Protocol

import httpx

from service.api import schemas
from service.carta import Carta
from service.query.channels import CHANNELS
from service.query.geo_filter import GeoSpec
from service.query.types import SearchQuery

PageKey = tuple[str, int]


class Target(Protocol):
    supports_geo: bool

    def doc_ids(self) -> dict[str, str]:
        """File name -> document id of everything indexed."""

    def search(
        self,
        text: str,
        top_k: int,
        channels: frozenset[str],
        geo: dict | None = None,
        prior_mode: str | None = None,
    ) -> list[PageKey]:
        """Ranked pages; `prior_mode` picks the geo prior's mode, "off" turns it off,
        None keeps the service's default."""
        ...

    def ask(self, text: str, top_k: int, geo: dict | None = None) -> dict[str, Any]: ...

    def page_text(self, doc_id: str, page_no: int) -> str: ...


class InProcessTarget:
    supports_geo = True

    def __init__(self, carta: Carta, tenant: str) -> None:
        self.carta = carta
        self.tenant = tenant

    def doc_ids(self) -> dict[str, str]:
        return {d.filename: d.id for d in self.carta.registry.list(self.tenant, status="ready")}

    def _query(
        self, text: str, top_k: int, channels: frozenset[str], geo: dict | None, prior_mode: str | None = None
    ) -> SearchQuery:
        spec = GeoSpec(**geo) if geo else None
        mode = None if prior_mode in (None, "off") else prior_mode
        return self.carta.query(
            text,
            self.tenant,
            top_k=top_k,
            channels=channels,
            geo=spec,
            geo_prior=prior_mode != "off",
            geo_prior_mode=mode,  # type: ignore[arg-type]
        )

    def search(
        self,
        text: str,
        top_k: int,
        channels: frozenset[str] = CHANNELS,
        geo: dict | None = None,
        prior_mode: str | None = None,
    ) -> list[PageKey]:
        result = self.carta.search(self._query(text, top_k, channels, geo, prior_mode))
        return [(p.doc_id, p.page_no) for p in result.pages]

    def ask(self, text: str, top_k: int, geo: dict | None = None) -> dict[str, Any]:
        return schemas.ask_response(self.carta.ask(self._query(text, top_k, CHANNELS, geo))).model_dump()

    def page_text(self, doc_id: str, page_no: int) -> str:
        return "\n".join(c["text"] for c in self.carta.page_chunks(self.tenant, doc_id, page_no))


class HttpTarget:
    supports_geo = True

    def __init__(self, url: str, timeout: float = 120, api_key: str | None = None) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.Client(base_url=url.rstrip("/"), timeout=timeout, headers=headers)

    def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.client.request(method, path, **kwargs)
        response.raise_for_status()
        return response.json()

    def doc_ids(self) -> dict[str, str]:
        return {d["filename"]: d["id"] for d in self._json("GET", "/v1/documents") if d["status"] == "ready"}

    def search(
        self,
        text: str,
        top_k: int,
        channels: frozenset[str] = CHANNELS,
        geo: dict | None = None,
        prior_mode: str | None = None,
    ) -> list[PageKey]:
        body = {"query": text, "top_k": top_k, "channels": sorted(channels), "geo": geo}
        if prior_mode == "off":
            body["geo_prior"] = False
        elif prior_mode:
            body["geo_prior_mode"] = prior_mode
        return [(h["doc_id"], h["page_no"]) for h in self._json("POST", "/v1/search", json=body)["results"]]

    def ask(self, text: str, top_k: int, geo: dict | None = None) -> dict[str, Any]:
        return self._json("POST", "/v1/ask", json={"question": text, "top_k": top_k, "geo": geo})

    def page_text(self, doc_id: str, page_no: int) -> str:
        return self._json("GET", f"/v1/documents/{doc_id}/pages/{page_no}")["text"]
