"""`carta poi add|fetch|list|delete`: POI datasets for the graph, in-process or via --server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from geo.coordinates import valid_latlon
from graph.overpass import OverpassClient, OverpassError, around_query
from service.carta import load_gazetteer
from service.cli.client import Json
from service.cli.common import connect, console, fail, out, print_json
from service.settings import Settings

poi_app = typer.Typer(
    help="POI datasets (OSM PBF/XML, Overpass JSON, GeoJSON, CSV) for relational questions."
)

# the poi commands have always declared --server and --json without help text; kept so
PoiServerOpt = Annotated[str | None, typer.Option("--server", envvar="CARTA_SERVER")]
PoiJsonOpt = Annotated[bool, typer.Option("--json")]


def print_added(body: Json, as_json: bool, *, counts: bool = True) -> None:
    """The outcome of loading a dataset: its JSON, or one line with what it holds."""
    dataset, created = body["dataset"], body["created"]
    if as_json:
        print_json({"dataset": dataset, "created": created})
        return
    state = "added" if created else "already loaded"
    if not counts:
        out.print(f"{state} {dataset['id']} {dataset['name']}: {dataset['pois']} POIs", markup=False)
        return
    out.print(
        f"{state} {dataset['id']} {dataset['name']}: {dataset['pois']} POIs, {dataset['roads']} roads, "
        f"{dataset['duplicates']} duplicates, {dataset['skipped']} skipped",
        markup=False,
        highlight=False,
    )


@poi_app.command("add")
def add(
    path: Annotated[Path, typer.Argument(help="A POI file.", exists=True, dir_okay=False)],
    category: Annotated[str | None, typer.Option(help="Category of features that carry none.")] = None,
    server: PoiServerOpt = None,
    as_json: PoiJsonOpt = False,
) -> None:
    """Load a POI dataset (same content twice is a no-op)."""
    with connect(server) as client:
        body = client.add_dataset(path.read_bytes(), path.name, category=category)
    print_added(body, as_json)


def point_or_place(near: str, settings: Settings) -> tuple[float, float]:
    """(lat, lon) from "lat,lon" or a place name in the gazetteer."""
    parts = near.split(",")
    if len(parts) == 2:
        try:
            lat, lon = float(parts[0]), float(parts[1])
        except ValueError:
            pass
        else:
            if not valid_latlon(lat, lon):
                fail(f"({lat}, {lon}) is not a valid latitude,longitude", code=2)
            return lat, lon
    matches = load_gazetteer(settings).lookup(near)
    if not matches:
        fail(f"place {near!r} is not in the gazetteers; give --near as lat,lon", code=2)
    return matches[0].place.lat, matches[0].place.lon


@poi_app.command("fetch")
def fetch(
    near: Annotated[str, typer.Option(help='Centre: "lat,lon" or a place name ("Recife").')],
    tag: Annotated[
        list[str], typer.Option(help="OSM tag key=value to fetch, repeatable (e.g. amenity=school).")
    ],
    radius: Annotated[float, typer.Option(min=1, max=50_000, help="Metres around the centre.")] = 2000,
    category: Annotated[str | None, typer.Option(help="Category of features that carry none.")] = None,
    server: PoiServerOpt = None,
    as_json: PoiJsonOpt = False,
) -> None:
    """Fetch POIs from the Overpass API (CARTA_OVERPASS_URL) around a place and load them as a
    dataset. The answer is cached under the data dir, so running it again is offline."""
    settings = Settings()
    pairs = [t.split("=", 1) for t in tag]
    if not pairs or any(len(p) != 2 or not p[0] or not p[1] for p in pairs):
        fail("each --tag must be key=value, e.g. --tag amenity=school", code=2)
    lat, lon = point_or_place(near, settings)
    query = around_query(lat, lon, radius, [(k, v) for k, v in pairs])
    overpass = OverpassClient(settings.overpass_cache_dir, settings.overpass_url, settings.overpass_timeout_s)
    try:
        answer = overpass.fetch(query)
    except OverpassError as exc:
        fail(f"{exc} (CARTA_OVERPASS_URL={settings.overpass_url})")
    data = json.dumps(answer).encode()
    name = f"overpass-{'-'.join(t.replace('=', '_') for t in tag)}-{lat:.4f},{lon:.4f}-{radius:.0f}m.json"
    with connect(server) as client:
        body = client.add_dataset(data, name, category=category)
    print_added(body, as_json, counts=False)


@poi_app.command("list")
def list_datasets(server: PoiServerOpt = None, as_json: PoiJsonOpt = False) -> None:
    """List the loaded POI datasets."""
    with connect(server) as client:
        rows = client.datasets()
    if as_json:
        print_json(rows)
        return
    table = Table("id", "name", "kind", "pois", "roads", "created")
    for d in rows:
        table.add_row(d["id"], d["name"], d["kind"], str(d["pois"]), str(d["roads"]), d["created_at"])
    out.print(table)


@poi_app.command("delete")
def delete(
    dataset_id: Annotated[str, typer.Argument(help="Dataset id (see `carta poi list`).")],
    server: PoiServerOpt = None,
) -> None:
    """Delete a dataset: its POIs, roads, their edges and zone contributions."""
    with connect(server) as client:
        client.delete_dataset(dataset_id)
    console.print(f"deleted {dataset_id}")
