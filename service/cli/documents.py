"""`carta ingest`, `carta list`, `carta delete`: the documents, in-process or via --server."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ingest.errors import IngestError
from service.cli.common import JsonOpt, ServerOpt, connect, console, fail, iter_files, out, print_json


def ingest(
    paths: Annotated[
        list[Path], typer.Argument(help="Files or folders (PDF, images, GeoJSON, KML/KMZ, OSM).")
    ],
    title: Annotated[str | None, typer.Option(help="Title (single file only).")] = None,
    server: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Index documents; re-ingesting the same content is a no-op."""
    files = list(iter_files(paths))
    if not files:
        fail("no supported files found", code=2)
    if title and len(files) > 1:
        fail("--title applies to a single file", code=2)
    from service.api.errors import error_code  # the web framework's error table: this command only

    results: list[dict[str, Any]] = []
    failures = 0
    with (
        connect(server) as client,
        Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            disable=as_json,
        ) as bar,
    ):
        for path in files:
            task = bar.add_task(path.name, total=None)
            try:
                body = client.ingest(
                    path,
                    title=title,
                    on_progress=lambda done, total, t=task: bar.update(t, completed=done, total=total),
                )
            except IngestError as exc:
                failures += 1
                results.append({"file": str(path), "error": {"code": error_code(exc), "message": str(exc)}})
                bar.update(task, description=f"{path.name} [red]{exc}")
                continue
            results.append({"file": str(path), **body})
            bar.update(
                task,
                description=f"{path.name} [green]{body['document']['id']}"
                f"{'' if body['created'] else ' (already indexed)'}{_took(body)}",
            )
    if as_json:
        print_json(results)
    if failures:
        raise typer.Exit(1)


def _took(body: dict[str, Any]) -> str:
    """' in 12.4 s (embed 7.9 s)': the time and its biggest stage, when the body has them."""
    seconds = {k: v for k, v in body.get("seconds", {}).items() if k != "total"}
    if not seconds:
        return ""
    stage = max(seconds, key=seconds.__getitem__)
    return f" in {body['seconds'].get('total', sum(seconds.values())):.1f} s ({stage} {seconds[stage]:.1f} s)"


def list_documents(server: ServerOpt = None, as_json: JsonOpt = False) -> None:
    """List indexed documents."""
    with connect(server) as client:
        docs = client.documents()
    if as_json:
        print_json(docs)
        return
    table = Table("id", "title", "kind", "pages", "status")
    for d in docs:
        table.add_row(d["id"], d["title"], d["kind"], str(d["pages"]), d["status"])
    out.print(table)


def delete(
    doc_id: Annotated[str, typer.Argument(help="Document id (see `carta list`).")], server: ServerOpt = None
) -> None:
    """Delete a document with all its vectors, page images and registry rows."""
    with connect(server) as client:
        client.delete(doc_id)
    console.print(f"deleted {doc_id}")
