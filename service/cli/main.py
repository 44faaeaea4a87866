"""The `carta` command line, assembled: one module per command group, this file only
registers them.

Commands work on the local data dir by default. The embedded store allows one process
at a time, so while `carta serve` runs, send commands to it with `--server URL`.

    documents.py  ingest, list, delete     query.py   search, ask
    reindex.py    reindex                  eval.py    eval
    geo.py        geocode                  serve.py   serve
    poi.py        poi add|fetch|list|delete
    admin.py      keys create|list|revoke, audit
    erase.py      erase --verify
    entities.py   entities [QUERY], entities show ID
"""

from __future__ import annotations

import sys

import typer

from service.cli import admin, documents, erase, geo, poi, query, reindex, serve
from service.cli.entities import entities
from service.cli.eval import evaluate

app = typer.Typer(
    help="Carta: multimodal, geospatial document RAG.", no_args_is_help=True, pretty_exceptions_enable=False
)
app.add_typer(poi.poi_app, name="poi")
app.command()(documents.ingest)
app.command()(query.search)
app.command()(query.ask)
app.command("list")(documents.list_documents)
app.command()(documents.delete)
app.command()(reindex.reindex)
app.command("eval")(evaluate)
app.command()(geo.geocode)
app.command()(serve.serve)
app.add_typer(admin.keys_app, name="keys")
app.command("audit")(admin.audit)
app.command()(erase.erase)
app.command()(entities)


def main() -> None:  # pragma: no cover - console entry
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
