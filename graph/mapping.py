"""A PNG map of relational evidence (zone hexagons, POIs by category, pair lines) for the
CLI and reports. Plain lon/lat axes, no basemap (offline)."""

from __future__ import annotations

import io
from typing import Any


def render_png(geojson: dict[str, Any], title: str = "", size_px: int = 900) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(size_px / 100, size_px / 100), dpi=100)
    colours: dict[str, Any] = {}
    cmap = plt.get_cmap("tab10")
    for f in geojson.get("features", ()):
        kind, geom = f["properties"].get("kind"), f["geometry"]
        if kind == "zone":
            xs, ys = zip(*geom["coordinates"][0], strict=True)
            ax.fill(xs, ys, alpha=0.08, color="grey")
            ax.plot(xs, ys, color="grey", linewidth=0.6)
        elif kind == "pair":
            (x0, y0), (x1, y1) = geom["coordinates"]
            ax.plot([x0, x1], [y0, y1], color="black", linewidth=0.7, alpha=0.6)
    for f in geojson.get("features", ()):
        if f["properties"].get("kind") == "poi":
            cat = f["properties"]["category"]
            colour = colours.setdefault(cat, cmap(len(colours) % 10))
            x, y = f["geometry"]["coordinates"]
            ax.scatter([x], [y], s=18, color=colour, zorder=3, label=cat)
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles, strict=True))
    if unique:
        ax.legend(unique.values(), unique.keys(), loc="best", fontsize=8)
    ax.set_xlabel("longitude")
    ax.set_ylabel("latitude")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_title(title[:120], fontsize=9)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()
