"""`carta poi add|list|delete`: POI datasets for the graph, in-process or via --server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

poi_app = typer.Typer(
    help="POI datasets (OSM PBF/XML, Overpass JSON, GeoJSON, CSV) for relational questions."
)


def _local(action: str, *args: Any) -> Any:
    """Run one GraphChannel call on an in-process Carta; errors become one-line failures."""
    from graph.channel import DatasetNotFound, EmptyDataset, PoiFormatError
    from service.cli import main as cli

    carta = cli.open_carta()
    try:
        if carta.graph is None:
            cli.fail("the graph is turned off (CARTA_GRAPH_ENABLED=false)")
        return getattr(carta.graph, action)(*args)
    except (PoiFormatError, EmptyDataset) as exc:
        cli.fail(str(exc), code=2)
    except DatasetNotFound as exc:
        cli.fail(str(exc.args[0]))
    finally:
        carta.close()


def _tenant() -> str:
    from service.settings import Settings

    return Settings().default_tenant


@poi_app.command("add")
def add(
    path: Annotated[Path, typer.Argument(help="A POI file.", exists=True, dir_okay=False)],
    category: Annotated[str | None, typer.Option(help="Category of features that carry none.")] = None,
    server: Annotated[str | None, typer.Option("--server", envvar="CARTA_SERVER")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Load a POI dataset (same content twice is a no-op)."""
    from service.cli import main as cli

    if server:
        files = {"file": (path.name, path.read_bytes())}
        body = cli.server_call(server, "POST", "/v1/datasets", files=files, data={"category": category or ""})
        dataset, created = body["dataset"], body["created"]
    else:
        info, created = _local("add_dataset", path.read_bytes(), path.name, _tenant(), category)
        dataset = info.to_dict()
    if as_json:
        cli.out.print_json(json.dumps({"dataset": dataset, "created": created}))
        return
    state = "added" if created else "already loaded"
    cli.out.print(
        f"{state} {dataset['id']} {dataset['name']}: {dataset['pois']} POIs, {dataset['roads']} roads, "
        f"{dataset['duplicates']} duplicates, {dataset['skipped']} skipped",
        markup=False,
        highlight=False,
    )


def _where(near: str, settings: Any) -> tuple[float, float]:
    """(lat, lon) from "lat,lon" or a place name in the gazetteer."""
    from service.cli import main as cli

    parts = near.split(",")
    if len(parts) == 2:
        try:
            lat, lon = float(parts[0]), float(parts[1])
        except ValueError:
            pass
        else:
            from geo.coordinates import valid_latlon

            if not valid_latlon(lat, lon):
                cli.fail(f"({lat}, {lon}) is not a valid latitude,longitude", code=2)
            return lat, lon
    from service.carta import load_gazetteer

    matches = load_gazetteer(settings).lookup(near)
    if not matches:
        cli.fail(f"place {near!r} is not in the gazetteers; give --near as lat,lon", code=2)
    return matches[0].place.lat, matches[0].place.lon


@poi_app.command("fetch")
def fetch(
    near: Annotated[str, typer.Option(help='Centre: "lat,lon" or a place name ("Recife").')],
    tag: Annotated[
        list[str], typer.Option(help="OSM tag key=value to fetch, repeatable (e.g. amenity=school).")
    ],
    radius: Annotated[float, typer.Option(min=1, max=50_000, help="Metres around the centre.")] = 2000,
    category: Annotated[str | None, typer.Option(help="Category of features that carry none.")] = None,
    server: Annotated[str | None, typer.Option("--server", envvar="CARTA_SERVER")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Fetch POIs from the Overpass API (CARTA_OVERPASS_URL) around a place and load them as a
    dataset. The answer is cached under the data dir, so running it again is offline."""
    from graph.overpass import OverpassClient, OverpassError, around_query
    from service.cli import main as cli
    from service.settings import Settings

    settings = Settings()
    pairs = [t.split("=", 1) for t in tag]
    if not pairs or any(len(p) != 2 or not p[0] or not p[1] for p in pairs):
        cli.fail("each --tag must be key=value, e.g. --tag amenity=school", code=2)
    lat, lon = _where(near, settings)
    query = around_query(lat, lon, radius, [(k, v) for k, v in pairs])
    client = OverpassClient(settings.overpass_cache_dir, settings.overpass_url, settings.overpass_timeout_s)
    try:
        answer = client.fetch(query)
    except OverpassError as exc:
        cli.fail(f"{exc} (CARTA_OVERPASS_URL={settings.overpass_url})")
    data = json.dumps(answer).encode()
    name = f"overpass-{'-'.join(t.replace('=', '_') for t in tag)}-{lat:.4f},{lon:.4f}-{radius:.0f}m.json"
    if server:
        files = {"file": (name, data)}
        body = cli.server_call(server, "POST", "/v1/datasets", files=files, data={"category": category or ""})
        dataset, created = body["dataset"], body["created"]
    else:
        info, created = _local("add_dataset", data, name, _tenant(), category)
        dataset = info.to_dict()
    if as_json:
        cli.out.print_json(json.dumps({"dataset": dataset, "created": created}))
        return
    state = "added" if created else "already loaded"
    cli.out.print(f"{state} {dataset['id']} {dataset['name']}: {dataset['pois']} POIs", markup=False)


@poi_app.command("list")
def list_datasets(
    server: Annotated[str | None, typer.Option("--server", envvar="CARTA_SERVER")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """List the loaded POI datasets."""
    from service.cli import main as cli

    if server:
        rows = cli.server_call(server, "GET", "/v1/datasets")
    else:
        rows = [d.to_dict() for d in _local("datasets", _tenant())]
    if as_json:
        cli.out.print_json(json.dumps(rows))
        return
    table = Table("id", "name", "kind", "pois", "roads", "created")
    for d in rows:
        table.add_row(d["id"], d["name"], d["kind"], str(d["pois"]), str(d["roads"]), d["created_at"])
    cli.out.print(table)


@poi_app.command("delete")
def delete(
    dataset_id: Annotated[str, typer.Argument(help="Dataset id (see `carta poi list`).")],
    server: Annotated[str | None, typer.Option("--server", envvar="CARTA_SERVER")] = None,
) -> None:
    """Delete a dataset: its POIs, roads, their edges and zone contributions."""
    from service.cli import main as cli

    if server:
        cli.server_call(server, "DELETE", f"/v1/datasets/{dataset_id}")
    else:
        _local("delete_dataset", _tenant(), dataset_id)
    cli.console.print(f"deleted {dataset_id}")
