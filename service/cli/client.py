"""`CartaClient`: the one way the CLI commands and `carta eval` talk to Carta.

Two implementations: `LocalClient` (service/cli/local_client.py) on an in-process Carta
over the data dir, and `HttpClient` (service/cli/http_client.py) against a running
`carta serve` (`--server URL`, CARTA_API_KEY). Every body they return is the HTTP API's
JSON, so a command prints the same text and --json whichever one it has.

Exceptions (both clients raise only these for a request Carta refuses):

    ClientError
    ├── ServerUnreachable   (also ConnectionError)
    └── RequestFailed       (also RuntimeError)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

from service.query.types import PriorMode

Json = dict[str, Any]
# the `geo` field of a search/ask request: the HTTP API's GeoFilterIn as JSON
GeoBody = dict[str, Any]
# (pages done, pages in total or None while unknown) while a document is indexed
ProgressFn = Callable[[int, int | None], None]


class ClientError(Exception):
    """A command could not be done; `message` is the one line the CLI prints."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code  # the CLI's exit status: 2 for a usage error, else 1


class ServerUnreachable(ClientError, ConnectionError):
    """No answer from the server at --server (refused, timed out, cut off)."""


class RequestFailed(ClientError, RuntimeError):
    """Carta answered and refused or failed the request (an HTTP error status in-process or not)."""


class CartaClient(Protocol):
    """What a command may ask of Carta, for the caller's tenant; bodies in the HTTP API's JSON."""

    def documents(self) -> list[Json]:
        """Every document the caller may see (DocumentOut)."""
        ...

    def ingest(self, path: Path, *, title: str | None = None, on_progress: ProgressFn | None = None) -> Json:
        """Index one file (and its georeference sidecars); IngestError when it is refused.
        Returns {document, created, warnings} (over HTTP also the finished `job`)."""
        ...

    def delete(self, doc_id: str) -> None:
        """Delete a document with everything derived from it."""
        ...

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
        """Ranked pages (SearchResponse); `channels` None runs them all."""
        ...

    def ask(self, question: str, *, top_k: int, geo: GeoBody | None = None, geo_prior: bool = True) -> Json:
        """An answer with citations (AskResponse)."""
        ...

    def ask_events(
        self, question: str, *, top_k: int, geo: GeoBody | None = None, geo_prior: bool = True
    ) -> Iterator[tuple[str, Json]]:
        """(event, data) of a streamed answer: evidence, token..., citations, done; or error."""
        ...

    def page_text(self, doc_id: str, page_no: int) -> str:
        """The indexed text of one page."""
        ...

    def datasets(self) -> list[Json]:
        """The loaded POI datasets."""
        ...

    def add_dataset(self, data: bytes, filename: str, *, category: str | None = None) -> Json:
        """Load a POI dataset: {dataset, created}."""
        ...

    def delete_dataset(self, dataset_id: str) -> None:
        """Delete a POI dataset with its POIs, roads and edges."""
        ...

    def entities(self, query: str, *, limit: int = 50) -> list[Json]:
        """Document-graph entities whose name, acronym or alias contains `query` (EntityOut)."""
        ...

    def entity(self, entity_id: int) -> Json:
        """One entity with its mentions, relations and community (EntityDetailOut)."""
        ...

    def close(self) -> None:
        """Release the store (in-process) or the connection pool (HTTP)."""
        ...
