"""What every command module of the `carta` CLI shares: the two consoles, the one-line
failure, the options several command groups take, the files a folder argument names, and
`connect()`, which gives a command its CartaClient (--server or the local data dir)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console

from index.vector_store import StoreError
from models.errors import ModelUnavailable
from service.carta import Carta
from service.cli.client import CartaClient, ClientError
from service.cli.http_client import HttpClient
from service.cli.local_client import LocalClient
from service.settings import Settings

console = Console(stderr=True)  # progress, notes and errors
out = Console()  # results only, so that stdout can be piped (--json)

SUFFIXES = {
    ".pdf", ".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".geojson", ".kml", ".kmz", ".osm", ".pbf"
}  # fmt: skip

ServerOpt = Annotated[
    str | None,
    typer.Option("--server", envvar="CARTA_SERVER", help="Send the command to a running Carta at this URL."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON (stable shape, same as the HTTP API).")]


def fail(message: str, code: int = 1) -> NoReturn:
    """Print one red line on stderr and exit with `code` (2: the command was misused)."""
    console.print(f"[red]error:[/red] {message}")
    raise typer.Exit(code)


def print_json(body: Any) -> None:
    out.print_json(json.dumps(body, ensure_ascii=False))


def open_carta() -> Carta:
    """Carta on the local data dir; a held store or a missing model is a one-line failure."""
    try:
        carta = Carta(Settings())
    except (StoreError, ModelUnavailable) as exc:
        fail(str(exc))
    if message := carta.reindex_needed():
        console.print(f"[yellow]warning:[/yellow] {message}")
    return carta


@contextmanager
def connect(server: str | None) -> Iterator[CartaClient]:
    """The client a command talks to: the server at `server` (with CARTA_API_KEY), else an
    in-process Carta on the data dir. A ClientError becomes the one-line failure; the
    client is closed either way."""
    if server:
        client: CartaClient = HttpClient(server, api_key=Settings().api_key)
    else:
        carta = open_carta()
        client = LocalClient(carta, carta.settings.default_tenant)
    try:
        yield client
    except ClientError as exc:
        fail(exc.message, exc.exit_code)
    finally:
        client.close()


def iter_files(paths: list[Path]) -> Iterator[Path]:
    """The files the arguments name; a folder gives its supported files, recursively."""
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file())
        elif path.exists():
            yield path
        else:
            fail(f"no such file: {path}", code=2)
