"""`carta geocode`: the geo tags Carta would give a text (no store, no model)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from ingest.geotagging import GeoTagger
from service.carta import load_gazetteer
from service.cli.common import JsonOpt, fail, out, print_json
from service.settings import Settings


def geocode(
    text: Annotated[str, typer.Argument(help="Any text: coordinates and place names are looked up.")],
    country: Annotated[str | None, typer.Option(help="ISO2 country hint, e.g. BR.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Show the geo tags Carta would give a text (for debugging gazetteers and coordinates).

    "used" says whether a tag passes CARTA_GEO_MIN_CONFIDENCE."""
    settings = Settings()
    try:
        tagger = GeoTagger(load_gazetteer(settings), min_confidence=0.0)
    except FileNotFoundError as exc:
        fail(str(exc))
    tags = tagger.tags(text, country.upper() if country else None)
    rows = [t.to_payload() for t in tags]
    if as_json:
        print_json(rows)
        return
    table = Table("label", "source", "kind", "lat", "lon", "confidence", "country", "used")
    for t in tags:
        used = "yes" if t.confidence >= settings.geo_min_confidence else "no"
        table.add_row(
            t.label,
            t.source,
            t.kind,
            f"{t.lat:.5f}",
            f"{t.lon:.5f}",
            f"{t.confidence:.2f}",
            t.country or "",
            used,
        )
    out.print(table)
