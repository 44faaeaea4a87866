"""`carta reindex`: bring the data dir's documents up to the configured profile (in-process)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from service.cli.common import console, fail, open_carta


def reindex(
    source: Annotated[
        list[Path] | None,
        typer.Option(
            help="Files or folders holding the uploaded files: tables cut by an older chunking are cut again."
        ),
    ] = None,
) -> None:
    """Bring documents indexed under another profile (lite/visual) up to the configured one,
    from the stored page images, give pages indexed before CARTA_PAGE_POOLING their pooled
    vectors, cut again (from --source) the tables an older table chunking cut, and store the
    sentence vectors of documents indexed before there were any; documents indexed with
    another text model, or with older tables and no file given, are listed."""
    from service.reindex import reindex as reindex_documents  # the pipeline (PyMuPDF): this command only

    carta = open_carta()
    try:
        report = reindex_documents(
            carta, lambda doc, done, total: console.print(f"{doc}: {done}/{total} pages"), source or ()
        )
        filled = carta.fill_sentence_vectors()
    finally:
        carta.close()
    if report.pooled_pages:
        console.print(f"added pooled first-stage vectors to {report.pooled_pages} page(s)")
    console.print(f"re-indexed {len(report.reindexed)} document(s) for profile {carta.profile}")
    if report.tables_rebuilt:
        console.print(f"cut the tables of {len(report.tables_rebuilt)} document(s) again")
    if report.tables_outdated:
        console.print(
            f"[yellow]warning:[/yellow] {len(report.tables_outdated)} document(s) hold tables of an older "
            "chunking; pass their files with --source to cut them again: " + ", ".join(report.tables_outdated)
        )
    if filled:
        console.print(f"stored the sentence vectors of {filled} document(s)")
    if report.needs_upload:
        fail(
            f"{len(report.needs_upload)} document(s) use another text model; upload them again: "
            + ", ".join(report.needs_upload)
        )
