"""H3 tokens for points and areas, and the seed's hashed multi-resolution H3 vector.

A point gets the cells that contain it at resolutions 7, 9 and 11, plus the k=1 ring
around its res-9 cell to soften cell borders (seed 001). An area (a map footprint, a
neighbourhood polygon) gets a covering whose resolution is chosen from its size so the
cell count stays bounded.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence

import h3

from geo.distance import haversine_m
from geo.shapes import geojson_ring_to_latlng_poly

RESOLUTIONS = (7, 9, 11)
RING_RESOLUTION = 9
MAX_AREA_CELLS = 400
# A query's H3 cells are matched against the stored point tokens (res 7, 9, 11), so a
# cell coarser than res 7 becomes all its res-7 children: 7 per resolution step, 823,543
# for one res-0 cell. Both caps are checked (by arithmetic) before anything is expanded.
MAX_QUERY_CELLS = 500
MAX_QUERY_TOKENS = 50_000  # about 3 res-2 or 20 res-3 cells; a few MB of filter
HASH_DIM = 1024  # the seed's hashed H3 vector size
GEO_POINT_FIELD = "geo_point"  # one point per unit, for distance-decay ranking


def field_name(resolution: int) -> str:
    return f"h3_r{resolution}"


def point_tokens(lat: float, lon: float) -> dict[str, list[str]]:
    """{"h3_r7": [...], "h3_r9": [cell + k=1 ring], "h3_r11": [...]} for one point."""
    tokens = {field_name(r): [h3.latlng_to_cell(lat, lon, r)] for r in RESOLUTIONS}
    ring_cell = tokens[field_name(RING_RESOLUTION)][0]
    tokens[field_name(RING_RESOLUTION)] = sorted(h3.grid_disk(ring_cell, 1), key=lambda c: c != ring_cell)
    return tokens


def merge_tokens(parts: Iterable[dict[str, list[str]]], limit: int = 200) -> dict[str, list[str]]:
    """Union per field, first-seen order, at most `limit` per field."""
    merged: dict[str, list[str]] = {}
    for part in parts:
        for name, cells in part.items():
            bucket = merged.setdefault(name, [])
            for cell in cells:
                if cell not in bucket and len(bucket) < limit:
                    bucket.append(cell)
    return merged


# The ring's bounding box may hold this many times `max_cells` cells at the chosen
# resolution: a square tilted 45 degrees fills half its box, a thin diagonal strip less.
BOX_CELLS_FACTOR = 25
EARTH_RADIUS_KM = 6371.0088


def area_resolution(ring_lonlat: Sequence[tuple[float, float]], max_cells: int = MAX_AREA_CELLS) -> int:
    """The finest resolution at which the polygon needs at most `max_cells` cells and its
    bounding box at most BOX_CELLS_FACTOR times that. The box is the bound h3 works within:
    the shoelace area reads a self-intersecting ring's lobes as cancelling (a bowtie is
    0 km2), so a 2-degree bowtie alone was covered at resolution 11, 15 million cells."""
    area_km2 = polygon_area_km2(ring_lonlat)
    box_km2 = bbox_area_km2(ring_lonlat)
    for res in range(11, -1, -1):
        cell_km2 = h3.average_hexagon_area(res, unit="km^2")
        if area_km2 / cell_km2 <= max_cells and box_km2 / cell_km2 <= BOX_CELLS_FACTOR * max_cells:
            return res
    return 0


def bbox_area_km2(ring_lonlat: Sequence[tuple[float, float]]) -> float:
    """The area on the sphere of the ring's lon/lat bounding box (exact for a lon/lat box)."""
    if not ring_lonlat:
        return 0.0
    lons, lats = [lon for lon, _ in ring_lonlat], [lat for _, lat in ring_lonlat]
    width = math.radians(min(max(lons) - min(lons), 360.0))
    height = math.sin(math.radians(max(lats))) - math.sin(math.radians(min(lats)))
    return EARTH_RADIUS_KM**2 * width * abs(height)


def area_cells(ring_lonlat: Sequence[tuple[float, float]], max_cells: int = MAX_AREA_CELLS) -> list[str]:
    """H3 covering of a polygon ring given as GeoJSON (lon, lat) pairs. Cells whose centre
    lies inside, plus the cells of the vertices so thin or small shapes are never empty."""
    res = area_resolution(ring_lonlat, max_cells)
    cells: set[str] = set()
    for part in _strips(ring_lonlat):
        if _has_extent(part):  # h3 raises H3FailedError on a ring of no width or no height
            cells.update(h3.polygon_to_cells(geojson_ring_to_latlng_poly(part), res))
    cells.update(h3.latlng_to_cell(lat, lon, res) for lon, lat in ring_lonlat)
    return sorted(cells)


def _has_extent(ring_lonlat: Sequence[tuple[float, float]]) -> bool:
    """Whether the ring spans some longitude and some latitude. A degenerate ring (one
    point repeated, a segment along a parallel or meridian) encloses no cell centre, and
    h3 refuses it: such a filter polygon answered 500 and such a GeoJSON feature failed
    its ingestion job. Its vertices' cells still cover it."""
    lons, lats = [lon for lon, _ in ring_lonlat], [lat for _, lat in ring_lonlat]
    return max(lons) > min(lons) and max(lats) > min(lats)


MAX_STRIP_DEGREES = 90.0  # h3 takes each edge the short way round: narrower than half the globe


def _strips(ring_lonlat: Sequence[tuple[float, float]]) -> list[Sequence[tuple[float, float]]]:
    """The ring itself, or, when it spans more than 180 degrees of longitude (a world map's
    -180..180 footprint), its bounding box cut into strips h3 reads as drawn: GeoJSON edges
    are straight in (lon, lat), while h3 takes the shorter way round the globe, so the world
    ring came out as the two cells of its corners."""
    lons, lats = [lon for lon, _ in ring_lonlat], [lat for _, lat in ring_lonlat]
    west, east = min(lons), max(lons)
    if east - west <= 180.0:
        return [ring_lonlat]
    south, north = min(lats), max(lats)
    steps = math.ceil((east - west) / MAX_STRIP_DEGREES)
    width = (east - west) / steps
    out = []
    for i in range(steps):
        w, e = west + i * width, west + (i + 1) * width
        out.append([(w, south), (e, south), (e, north), (w, north), (w, south)])
    return out


def circle_cells(lat: float, lon: float, radius_m: float, max_cells: int = MAX_AREA_CELLS) -> list[str]:
    """H3 cells overlapping a circle (to match areas against a radius filter): a disk of
    cells around the centre's cell, kept when they may reach into the circle.
    Grid disks, unlike polygons, also work for circles that reach over a pole."""
    area_km2 = math.pi * (radius_m / 1000) ** 2
    res = next(
        (r for r in range(11, -1, -1) if area_km2 / h3.average_hexagon_area(r, unit="km^2") <= max_cells), 0
    )
    edge_m = h3.average_hexagon_edge_length(res, unit="m")
    centre = h3.latlng_to_cell(lat, lon, res)
    k = math.ceil(radius_m / (math.sqrt(3) * edge_m)) + 1
    return sorted(cell for cell in h3.grid_disk(centre, k) if _distance_to_cell_m(lat, lon, cell) <= radius_m)


def _distance_to_cell_m(lat: float, lon: float, cell: str) -> float:
    """A lower bound of the distance from a point to a cell: to its centre minus its
    circumradius (0 inside), so a cell is kept whenever it may overlap the circle."""
    c_lat, c_lon = h3.cell_to_latlng(cell)
    circumradius = max(haversine_m(c_lat, c_lon, v_lat, v_lon) for v_lat, v_lon in h3.cell_to_boundary(cell))
    return max(0.0, haversine_m(lat, lon, c_lat, c_lon) - circumradius)


def polygon_area_km2(ring_lonlat: Sequence[tuple[float, float]]) -> float:
    """Approximate area of a lon/lat ring (equirectangular projection at its mean latitude)."""
    if len(ring_lonlat) < 3:
        return 0.0
    mean_lat = math.radians(sum(lat for _, lat in ring_lonlat) / len(ring_lonlat))
    kx, ky = 111.32 * math.cos(mean_lat), 110.57
    pts = [(lon * kx, lat * ky) for lon, lat in ring_lonlat]
    twice = sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(pts, pts[1:] + pts[:1], strict=True))
    return abs(twice) / 2


def is_h3_cell(value: object) -> bool:
    """Whether `value` is an H3 cell id string ("8928308280fffff"). Never raises: h3's own
    check raises OverflowError on hex strings wider than 64 bits and TypeError on non-strings."""
    if not isinstance(value, str) or not 0 < len(value) <= 16:
        return False
    try:
        return bool(h3.is_valid_cell(value))
    except (ValueError, TypeError, OverflowError):
        return False


def _target_resolution(cell: str) -> int:
    """The stored point-token resolution that matches `cell`: the nearest at or finer than it."""
    res = h3.get_resolution(cell)
    return next((r for r in RESOLUTIONS if r >= res), RESOLUTIONS[-1])


def distinct_cells(cells: Iterable[str]) -> list[str]:
    """Valid query cells without repeats and without cells inside another listed cell
    (they add nothing to an any-of match), in first-seen order."""
    unique = list(dict.fromkeys(cells))
    listed = set(unique)
    return [c for c in unique if not any(p in listed for p in _ancestors(c))]


def token_count(cells: Iterable[str]) -> int:
    """How many tokens `tokens_for_cells` will produce for these valid cells (an upper
    bound: counted, not expanded, so it costs nothing for a res-0 cell)."""
    total = 0
    for cell in distinct_cells(cells):
        res, target = h3.get_resolution(cell), _target_resolution(cell)
        total += h3.cell_to_children_size(cell, target) if target > res else 1
    return total


def tokens_for_cells(cells: Iterable[str], max_tokens: int = MAX_QUERY_TOKENS) -> list[str]:
    """Query cells of any resolution as tokens of the field that can match them: the
    nearest stored resolution at or below the cell's size (children of coarse cells).

    Raises:
        ValueError: the cells would expand to more than `max_tokens` tokens (checked first)."""
    cells = distinct_cells(cells)
    if (needed := token_count(cells)) > max_tokens:
        raise ValueError(f"the H3 cells expand to {needed:,} tokens; the limit is {max_tokens:,}")
    out: set[str] = set()
    for cell in cells:
        res, target = h3.get_resolution(cell), _target_resolution(cell)
        out.update(h3.cell_to_children(cell, target) if target > res else [h3.cell_to_parent(cell, target)])
    return sorted(out)


def hashed_h3_sparse(tokens: dict[str, list[str]], dim: int = HASH_DIM) -> tuple[list[int], list[float]]:
    """Seed 001: each token hashed (md5 mod dim) into a count vector, L2-normalised; kept
    as its non-zero (index, value) pairs, which gives the same dot products as the dense
    1024-d vector at a fraction of the storage."""
    counts: dict[int, float] = {}
    for name, cells in tokens.items():
        for cell in cells:
            slot = int(hashlib.md5(f"{name}:{cell}".encode()).hexdigest(), 16) % dim
            counts[slot] = counts.get(slot, 0.0) + 1.0
    norm = math.sqrt(sum(v * v for v in counts.values()))
    indices = sorted(counts)
    return indices, [counts[i] / norm for i in indices] if norm else []


def hashed_h3_vector(tokens: dict[str, list[str]], dim: int = HASH_DIM) -> list[float]:
    """The seed's dense form of `hashed_h3_sparse`."""
    vec = [0.0] * dim
    for i, v in zip(*hashed_h3_sparse(tokens, dim), strict=True):
        vec[i] = v
    return vec


AREA_FIELD = "h3_area"  # the covering cells of an area (map footprint, neighbourhood polygon)
AREA_UP_FIELD = "h3_area_up"  # the same cells plus all their ancestors


def _ancestors(cell: str) -> list[str]:
    return [h3.cell_to_parent(cell, r) for r in range(h3.get_resolution(cell))]


def area_tokens(cells: Iterable[str]) -> dict[str, list[str]]:
    """Payload fields that let a query covering at any resolution find this area."""
    cells = sorted(set(cells))
    up = set(cells)
    for cell in cells:
        up.update(_ancestors(cell))
    return {AREA_FIELD: cells, AREA_UP_FIELD: sorted(up)}


def area_query(cells: Iterable[str]) -> dict[str, list[str]]:
    """Match conditions (any of) for areas overlapping the query cells: an area cell equal
    to or coarser than a query cell (h3_area in query cells + their ancestors), or finer
    than one (h3_area_up holds the query cell)."""
    cells = sorted(set(cells))
    coarse = set(cells)
    for cell in cells:
        coarse.update(_ancestors(cell))
    return {AREA_FIELD: sorted(coarse), AREA_UP_FIELD: cells}
