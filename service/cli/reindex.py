"""`carta reindex`: bring the data dir's documents up to the configured profile (in-process)."""

from __future__ import annotations

from service.cli.common import console, fail, open_carta


def reindex() -> None:
    """Bring documents indexed under another profile (lite/visual) up to the configured one,
    from the stored page images, give pages indexed before CARTA_PAGE_POOLING their pooled
    vectors and store the sentence vectors of documents indexed before there were any;
    documents indexed with another text model are listed."""
    from service.reindex import reindex as reindex_documents  # the pipeline (PyMuPDF): this command only

    carta = open_carta()
    try:
        report = reindex_documents(
            carta, lambda doc, done, total: console.print(f"{doc}: {done}/{total} pages")
        )
        filled = carta.fill_sentence_vectors()
    finally:
        carta.close()
    if report.pooled_pages:
        console.print(f"added pooled first-stage vectors to {report.pooled_pages} page(s)")
    console.print(f"re-indexed {len(report.reindexed)} document(s) for profile {carta.profile}")
    if filled:
        console.print(f"stored the sentence vectors of {filled} document(s)")
    if report.needs_upload:
        fail(
            f"{len(report.needs_upload)} document(s) use another text model; upload them again: "
            + ", ".join(report.needs_upload)
        )
