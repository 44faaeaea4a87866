"""Explainability for the visual channel: a heat-map PNG of which page patches matched
the query (late interaction), drawn over the page image."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image, ImageDraw

MAX_SIDE = 1200


def render_heatmap(page: Image.Image, heat: np.ndarray, picked: list[tuple[int, int]]) -> bytes:
    """`heat` (rows, cols) similarities scaled to transparent..red over the page; the
    cells that query tokens' MaxSim picked are outlined. PNG bytes."""
    page = page.convert("RGB")
    if max(page.size) > MAX_SIDE:
        page.thumbnail((MAX_SIDE, MAX_SIDE))
    lo, hi = float(heat.min()), float(heat.max())
    norm = (heat - lo) / (hi - lo) if hi > lo else np.zeros_like(heat)
    alpha = Image.fromarray((norm * 170).astype(np.uint8), "L").resize(page.size, Image.Resampling.BILINEAR)
    red = Image.new("RGB", page.size, (230, 20, 20))
    out = Image.composite(red, page, alpha)
    rows, cols = heat.shape
    cw, ch = page.width / cols, page.height / rows
    draw = ImageDraw.Draw(out)
    for r, c in set(picked):
        draw.rectangle([c * cw, r * ch, (c + 1) * cw - 1, (r + 1) * ch - 1], outline=(255, 200, 0), width=2)
    buf = io.BytesIO()
    out.save(buf, "PNG")
    return buf.getvalue()
