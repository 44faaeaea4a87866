"""`carta search` and `carta ask`, with the geo options both take."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from graph.mapping import render_png
from service.cli.client import CartaClient, GeoBody, Json
from service.cli.common import JsonOpt, ServerOpt, connect, console, fail, out, print_json

NearOpt = Annotated[
    str | None, typer.Option("--near", help='Point "lat,lon" or a place name ("Recife"); with --radius.')
]
RadiusOpt = Annotated[
    float | None, typer.Option("--radius", help="Radius in metres (with --near or --place).")
]
BboxOpt = Annotated[str | None, typer.Option("--bbox", help='"min_lon,min_lat,max_lon,max_lat".')]
PlaceOpt = Annotated[str | None, typer.Option("--place", help="A place name from the gazetteers.")]
H3Opt = Annotated[str | None, typer.Option("--h3", help="Comma-separated H3 cells (any resolution).")]
PriorOpt = Annotated[
    bool, typer.Option("--geo-prior/--no-geo-prior", help="Boost pages near a place the question names.")
]
TopKOpt = Annotated[int, typer.Option("--top-k", "-k", min=1, max=50, help="Pages to return.")]


def geo_body(
    near: str | None, radius: float | None, bbox: str | None, place: str | None, h3: str | None
) -> GeoBody | None:
    """The `geo` field of a search/ask request from the CLI's geo options."""
    body: GeoBody = {}
    if near and not is_point(near):  # --near "Recife": a place name
        place, near = near, None
    try:
        if near:
            lat, lon = (float(v) for v in near.split(","))
            body.update(lat=lat, lon=lon, radius_m=radius)
        if bbox:
            body["bbox"] = [float(v) for v in bbox.split(",")]
    except ValueError:
        fail('--near takes "lat,lon" and --bbox "min_lon,min_lat,max_lon,max_lat" (numbers)', code=2)
    if place:
        body["place"] = place
        if radius and not near:
            body["radius_m"] = radius
    if h3:
        body["h3"] = [c.strip() for c in h3.split(",") if c.strip()]
    if near and radius is None:
        fail("--near needs --radius (metres)", code=2)
    return body or None


def is_point(text: str) -> bool:
    """Whether `text` reads as "lat,lon" (two numbers)."""
    parts = text.split(",")
    try:
        return len(parts) == 2 and all(float(p) is not None for p in parts)
    except ValueError:
        return False


PASSAGES = "Passages (no composed answer):"
PASSAGES_AFTER = "(Passages (no composed answer): the text above quotes the evidence.)"


def print_streamed(client: CartaClient, question: str, top_k: int, geo: GeoBody | None, prior: bool) -> Json:
    """Print the answer's tokens as they come; return the final response (HTTP API shape)."""
    final: Json = {}
    for kind, data in client.ask_events(question, top_k=top_k, geo=geo, geo_prior=prior):
        if kind == "token":
            sys.stdout.write(data["text"])
            sys.stdout.flush()
        elif kind == "error":
            sys.stdout.write("\n")
            fail(data["error"]["message"])
        elif kind == "done":
            final = data
    sys.stdout.write("\n")
    return final


def print_citations(body: Json) -> None:
    for c in body["citations"]:
        out.print(f"  [{c['doc_id']} p.{c['page_no']}] {c['title']}", markup=False, highlight=False)
    for c in body.get("invalid_citations") or []:
        console.print(
            f"  [yellow]not in the evidence:[/yellow] [{c['doc_id']} p.{c['page_no']}] ({c['reason']})",
            markup=True,
            highlight=False,
        )


def _words(text: str) -> str:
    """A question or query of blanks or marks alone is a usage error (the API's 422)."""
    if not any(ch.isalnum() for ch in text):
        raise typer.BadParameter("it holds no letter or digit; write the question in words")
    return text


def search(
    query: Annotated[str, typer.Argument(help="Question or keywords (pt or en).", callback=_words)],
    top_k: TopKOpt = 5,
    near: NearOpt = None,
    radius: RadiusOpt = None,
    bbox: BboxOpt = None,
    place: PlaceOpt = None,
    h3: H3Opt = None,
    geo_prior: PriorOpt = True,
    server: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Find the pages that best match a query, optionally only near a place."""
    geo = geo_body(near, radius, bbox, place, h3)
    with connect(server) as client:
        body = client.search(query, top_k=top_k, geo=geo, geo_prior=geo_prior)
    if as_json:
        print_json(body)
        return
    table = Table("#", "doc", "page", "score", "channels", "excerpt")
    for i, hit in enumerate(body["results"], start=1):
        channels = " ".join(f"{k}#{v['rank']}" for k, v in hit["channels"].items())
        table.add_row(
            str(i),
            hit["doc_id"],
            str(hit["page_no"]),
            f"{hit['score']:.4f}",
            channels,
            hit["excerpt"][:80].replace("\n", " "),
        )
    out.print(table)


def ask(
    question: Annotated[str, typer.Argument(help="A question (pt or en).", callback=_words)],
    top_k: TopKOpt = 5,
    near: NearOpt = None,
    radius: RadiusOpt = None,
    bbox: BboxOpt = None,
    place: PlaceOpt = None,
    h3: H3Opt = None,
    geo_prior: PriorOpt = True,
    server: ServerOpt = None,
    as_json: JsonOpt = False,
    map_png: Annotated[
        Path | None, typer.Option("--map", help="Write the relational evidence map (PNG).")
    ] = None,
    stream: Annotated[
        bool | None,
        typer.Option("--stream/--no-stream", help="Print the answer as it is written (default on a TTY)."),
    ] = None,
) -> None:
    """Answer a question from the indexed documents (and POI datasets), with citations."""
    geo = geo_body(near, radius, bbox, place, h3)
    if stream is None:
        stream = sys.stdout.isatty() and not as_json and map_png is None
    with connect(server) as client:
        if stream and not as_json:
            final = print_streamed(client, question, top_k, geo, geo_prior)
            if final.get("status") == "passages":
                console.print(PASSAGES_AFTER, highlight=False)
            print_citations(final)
            return
        body = client.ask(question, top_k=top_k, geo=geo, geo_prior=geo_prior)
    if as_json:
        print_json(body)
        return
    if body.get("status") == "passages":
        out.print(PASSAGES, markup=False, highlight=False)
    out.print(body["answer"], markup=False, highlight=False)
    print_citations(body)
    if body.get("graph") and map_png:
        map_png.write_bytes(render_png(body["graph"]["geojson"], question))
        console.print(f"map: {map_png}")
