"""`carta erase --verify DOC_ID`: prove that a deleted document left nothing on disk.

The scan reads the files of the local data dir (CARTA_DATA_DIR) directly, never through a
server: it must run on the machine that holds them. It opens no store, so it also runs
beside a `carta serve` on the same data dir, whose deletes have flushed everything by the
time they answer; the output says when a server holds the dir.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from service.cli.common import JsonOpt, console, fail, out, print_json
from service.erasure import verify
from service.settings import Settings


def erase(
    doc_id: Annotated[str, typer.Argument(help="The id of the deleted document.")],
    verify_: Annotated[
        bool, typer.Option("--verify", help="Scan every file of the data dir for the document (required).")
    ] = False,
    tenant: Annotated[
        str | None, typer.Option(help="The tenant it was deleted from (default: CARTA_DEFAULT_TENANT).")
    ] = None,
    marker: Annotated[
        list[str] | None,
        typer.Option("--marker", help="Text the document held (a title, a filename, a phrase); repeatable."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Scan the data dir (raw, LZ4 and zlib-decoded bytes) for a deleted document's id and
    markers; exit 0 when nothing is found, 1 otherwise. The scan cannot see a Qdrant server."""
    if not verify_:
        fail("only --verify is supported: a delete already erases (carta delete DOC_ID)", code=2)
    settings = Settings()
    if not settings.data_dir.is_dir():
        fail(f"no data dir at {settings.data_dir} (CARTA_DATA_DIR)", code=2)
    tenant = tenant or settings.default_tenant
    result = verify(settings.data_dir, doc_id, marker or [])
    still_there = tenant in result.registered_in
    body = {**result.to_dict(), "tenant": tenant, "qdrant_server": settings.qdrant_url}
    body["clean"] = result.clean and not still_there
    if as_json:
        print_json(body)
        raise typer.Exit(0 if body["clean"] else 1)
    if result.held_by_server:
        console.print(
            f"[yellow]note:[/yellow] a running Carta (carta serve) holds {settings.data_dir}; the scan "
            "reads what it has flushed, which after a delete returns is everything"
        )
    if settings.qdrant_url:
        console.print(
            f"[yellow]note:[/yellow] the vectors live on the Qdrant server {settings.qdrant_url}, which "
            "this scan cannot read; it erases on its own schedule (see index/server_store.py)"
        )
    if still_there:
        console.print(f"[red]document {doc_id} is not deleted in tenant {tenant!r}[/red]")
    if others := [t for t in result.registered_in if t != tenant]:
        console.print(f"[yellow]note:[/yellow] tenant(s) {', '.join(others)} hold the same document id")
    if result.erasure_pending:
        console.print("[red]its erasure was interrupted; it finishes when Carta next starts[/red]")
    table = Table("file", "marker", "raw", "lz4", "zlib", title="hits")
    for hit in result.hits:
        table.add_row(hit.path, hit.marker, str(hit.raw), str(hit.lz4), str(hit.zlib))
    for hit in result.kept_by_design:
        table.add_row(
            hit.path, hit.marker + " (id, kept by design)", str(hit.raw), str(hit.lz4), str(hit.zlib)
        )
    if table.rows:
        out.print(table)
    verdict = "[green]clean[/green]" if body["clean"] else "[red]NOT erased[/red]"
    out.print(
        f"{verdict}: {len(result.markers)} marker(s), {result.files_scanned} files, "
        f"{result.bytes_scanned / 1e6:.1f} MB scanned, {len(result.hits)} hit(s) in {settings.data_dir}"
    )
    raise typer.Exit(0 if body["clean"] else 1)
