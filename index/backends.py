"""The choice of vector-store backend: the one module that knows both implementations.

`vector_store.py` holds the contract the backends implement and retrieval code sees;
the backends import it, and this module imports the backends, so the contract never
has to import what implements it.
"""

from __future__ import annotations

from pathlib import Path

from index.edge_store import EdgeStore
from index.vector_store import VectorStore


def open_store(
    data_dir: Path,
    qdrant_url: str | None = None,
    api_key: str | None = None,
    shards: int | None = None,
    replication: int | None = None,
) -> VectorStore:
    """The embedded Edge engine under `data_dir/qdrant`, or a Qdrant server when a URL
    is configured (`shards`/`replication` for collections it creates on a cluster).
    `qdrant_url="local:<path>"` selects qdrant-client's local mode."""
    if qdrant_url:
        # imported here, not above: qdrant-client takes about a second to import and only
        # the server backend needs it (this is no cycle: server_store never imports this module)
        from index.server_store import ServerStore

        return ServerStore(qdrant_url, api_key=api_key, shards=shards, replication=replication)
    return EdgeStore(data_dir / "qdrant")
