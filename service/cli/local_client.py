"""`LocalClient`: the CartaClient on an in-process Carta, acting as the data dir's owner
(the default tenant, no ACL). Domain errors a user can act on become `RequestFailed` with
the message the HTTP API would send; a bad geo filter or POI file is a usage error (exit 2)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from graph.channel import DatasetNotFound, EmptyDataset, GraphChannel, PoiFormatError
from models.llm_client import LLMError
from service.api import schemas
from service.auth import Principal
from service.carta import Carta, DocumentNotFound
from service.cli.client import GeoBody, Json, ProgressFn, RequestFailed
from service.errors import DocGraphDisabled, EntityNotFound
from service.query.geo_filter import GeoFilterError, GeoSpec
from service.query.types import PriorMode, SearchQuery

USAGE_ERROR = 2


class LocalClient:
    """CartaClient on `carta`, for `tenant`; closing it closes the Carta."""

    def __init__(self, carta: Carta, tenant: str) -> None:
        self.carta = carta
        self.tenant = tenant

    def documents(self) -> list[Json]:
        return [schemas.document_out(d).model_dump() for d in self.carta.registry.list(self.tenant)]

    def ingest(self, path: Path, *, title: str | None = None, on_progress: ProgressFn | None = None) -> Json:
        from ingest.upload import IngestRequest  # the document loaders: PyMuPDF, for this command only

        result = self.carta.ingest(
            IngestRequest(path.read_bytes(), path.name, self.tenant, title=title, source_path=path),
            # pages only: the "entities" stage counts chunks the LLM reads, not pages
            (lambda p: on_progress(p.done, p.total) if p.stage != "entities" else None)
            if on_progress
            else None,
        )
        return schemas.IngestedOut(
            document=schemas.document_out(result.document),
            created=result.created,
            warnings=result.warnings,
            seconds=result.seconds,
        ).model_dump()

    def delete(self, doc_id: str) -> None:
        try:
            self.carta.delete(self.tenant, doc_id)
        except DocumentNotFound as exc:
            raise RequestFailed(str(exc)) from exc

    def _query(
        self,
        text: str,
        top_k: int,
        geo: GeoBody | None,
        geo_prior: bool,
        geo_prior_mode: PriorMode | None = None,
        channels: frozenset[str] | None = None,
    ) -> SearchQuery:
        try:
            return self.carta.query(
                text,
                self.tenant,
                top_k=top_k,
                channels=channels,
                geo=GeoSpec(**geo) if geo else None,
                geo_prior=geo_prior,
                geo_prior_mode=geo_prior_mode,
            )
        except GeoFilterError as exc:
            raise RequestFailed(str(exc), USAGE_ERROR) from exc

    def search(
        self,
        query: str,
        *,
        top_k: int,
        geo: GeoBody | None = None,
        geo_prior: bool = True,
        geo_prior_mode: PriorMode | None = None,
        channels: frozenset[str] | None = None,
    ) -> Json:
        q = self._query(query, top_k, geo, geo_prior, geo_prior_mode, channels)
        return schemas.search_response(self.carta.search(q)).model_dump()

    def ask(self, question: str, *, top_k: int, geo: GeoBody | None = None, geo_prior: bool = True) -> Json:
        q = self._query(question, top_k, geo, geo_prior)
        try:
            return schemas.ask_response(self.carta.ask(q)).model_dump()
        except LLMError as exc:
            raise RequestFailed(exc.message) from exc

    def ask_events(
        self, question: str, *, top_k: int, geo: GeoBody | None = None, geo_prior: bool = True
    ) -> Iterator[tuple[str, Json]]:
        from service.api.streaming import error_body, event_data  # the web framework: streamed asks only

        q = self._query(question, top_k, geo, geo_prior)
        try:
            for event in self.carta.ask_events(q):
                yield event.kind, event_data(event)
        except Exception as exc:  # noqa: BLE001 - shown as the server would send it
            yield "error", error_body(exc)[1]

    def page_text(self, doc_id: str, page_no: int) -> str:
        return self.carta.page_text(self.tenant, doc_id, page_no)

    def _graph(self) -> GraphChannel:
        if self.carta.graph is None:
            raise RequestFailed("the graph is turned off (CARTA_GRAPH_ENABLED=false)")
        return self.carta.graph

    def datasets(self) -> list[Json]:
        return [d.to_dict() for d in self._graph().datasets(self.tenant)]

    def add_dataset(self, data: bytes, filename: str, *, category: str | None = None) -> Json:
        try:
            info, created = self._graph().add_dataset(data, filename, self.tenant, category)
        except (PoiFormatError, EmptyDataset) as exc:
            raise RequestFailed(str(exc), USAGE_ERROR) from exc
        return {"dataset": info.to_dict(), "created": created}

    def delete_dataset(self, dataset_id: str) -> None:
        try:
            self._graph().delete_dataset(self.tenant, dataset_id)
        except DatasetNotFound as exc:
            raise RequestFailed(str(exc)) from exc

    def entities(self, query: str, *, limit: int = 50) -> list[Json]:
        from service.api.routes.entities import entity_list  # the web framework: entity commands only

        try:
            return [e.model_dump() for e in entity_list(self.carta, self._owner(), query, limit)]
        except DocGraphDisabled as exc:
            raise RequestFailed(str(exc)) from exc

    def entity(self, entity_id: int) -> Json:
        from service.api.routes.entities import entity_detail

        try:
            return entity_detail(self.carta, self._owner(), entity_id).model_dump()
        except (DocGraphDisabled, EntityNotFound) as exc:
            raise RequestFailed(str(exc)) from exc

    def _owner(self) -> Principal:
        """The data dir's owner: every document of the tenant."""
        return Principal("local", self.tenant, admin=True)

    def close(self) -> None:
        self.carta.close()
