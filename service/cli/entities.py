"""`carta entities [QUERY]` and `carta entities show ID`: the document graph's entities,
in-process or via --server."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from service.cli.common import JsonOpt, ServerOpt, connect, fail, out, print_json


def entities(
    words: Annotated[
        list[str] | None,
        typer.Argument(help="Part of a name, acronym or alias; or `show ID` for one entity."),
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=500, help="Entities listed at most.")] = 50,
    server: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List the entities the documents mention (most mentioned first), or show one."""
    words = words or []
    if words and words[0] == "show":
        if len(words) != 2 or not words[1].isdigit():
            fail("usage: carta entities show ID (a number from `carta entities`)", code=2)
        show(int(words[1]), server, as_json)
        return
    with connect(server) as client:
        found = client.entities(" ".join(words), limit=limit)
    if as_json:
        print_json(found)
        return
    table = Table("id", "kind", "name", "mentions", "documents")
    for e in found:
        table.add_row(str(e["id"]), e["kind"], e["name"], str(e["mentions"]), str(e["documents"]))
    out.print(table)


def show(entity_id: int, server: str | None, as_json: bool) -> None:
    with connect(server) as client:
        body = client.entity(entity_id)
    if as_json:
        print_json(body)
        return
    out.print(f"[bold]{body['name']}[/bold] ({body['kind']}, id {body['id']})")
    for alias in body["aliases"]:
        out.print(f"  alias: {alias}")
    table = Table("document", "page", "chunk", "as written", "rule")
    for m in body["mentions"]:
        table.add_row(m["doc_id"], str(m["page_no"]), str(m["chunk_no"]), m["text"], m["rule"])
    out.print(table)
    if body["relations"]:
        out.print("related: " + ", ".join(f"{r['name']} ({r['count']})" for r in body["relations"]))
    if body["community"]:
        out.print(f"community {body['community']['id']}: {body['community']['summary']}")
