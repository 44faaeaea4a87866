"""Exact distance joins on points, bucketed by H3 cell: candidates come from a point's
own cell and the grid ring that surely covers the radius, then every candidate distance
is computed (haversine, vectorised) and checked against the radius. No approximation
decides membership; the buckets only avoid comparing far-apart points.

Memory is bounded whatever the input: a bucket pair is compared in blocks of at most
MAX_BLOCK distances (query rows x candidate columns), never as one N x N matrix (200,000
points at one location would need 298 GiB), and the nearest-neighbour join keeps only a
running top-k per point between blocks."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

import h3
import numpy as np

from geo.distance import haversine_m_array

MAX_BLOCK = 1 << 20  # distances per block: 8 MiB of float64, a few times that in temporaries
QUERY_ROWS = 1024  # query points per top-k block: wide enough blocks, short candidate columns


def _blocks(n_rows: int, n_cols: int, max_block: int = MAX_BLOCK) -> tuple[int, int]:
    """(rows, cols) of a block of a n_rows x n_cols comparison with rows * cols <= max_block."""
    cols = max(1, min(n_cols, max_block))
    return max(1, min(n_rows, max_block // cols)), cols


def ring_k(resolution: int, radius_m: float) -> int:
    """Grid-disk size around a point's cell that contains every point within `radius_m`.
    Cells shrink to about half the average area away from the icosahedron face centres,
    so the width used is half the average flat-to-flat width (safe, a little generous)."""
    min_width = 0.5 * math.sqrt(3) * h3.average_hexagon_edge_length(resolution, unit="m")
    return max(1, math.ceil(radius_m / min_width))


def join_resolution(radius_m: float, max_k: int = 3) -> int:
    """The finest H3 resolution whose candidate disk for `radius_m` spans at most `max_k`
    rings: small cells keep the candidate area (and the distance matrix) small, few rings
    keep the per-cell overhead low. 500 m -> res 9 (about 4 km² of candidates instead of
    the ~36 km² of a res-7 disk)."""
    for res in range(12, -1, -1):
        if ring_k(res, radius_m) <= max_k:
            return res
    return 0


def cells_of(lats: Sequence[float], lons: Sequence[float], resolution: int) -> list[str]:
    return [h3.latlng_to_cell(la, lo, resolution) for la, lo in zip(lats, lons, strict=True)]


def _buckets(cells: Sequence[str]) -> dict[str, np.ndarray]:
    groups: dict[str, list[int]] = defaultdict(list)
    for i, cell in enumerate(cells):
        groups[cell].append(i)
    return {c: np.asarray(ix, dtype=np.int64) for c, ix in groups.items()}


def pairs_within(
    a_lat: np.ndarray,
    a_lon: np.ndarray,
    b_lat: np.ndarray,
    b_lon: np.ndarray,
    radius_m: float,
    resolution: int = 7,
    same_set: bool = False,
) -> list[tuple[int, int, float]]:
    """Every (i, j, metres) with point i of A and point j of B at most `radius_m` apart.
    With `same_set` (A is B) each unordered pair comes once (i < j) and i == j is skipped.
    The result itself holds every pair: callers bound it by bounding their inputs."""
    if len(a_lat) == 0 or len(b_lat) == 0:
        return []
    a_cells = cells_of(a_lat, a_lon, resolution)
    b_buckets = _buckets(cells_of(b_lat, b_lon, resolution))
    k = ring_k(resolution, radius_m)
    out: list[tuple[int, int, float]] = []
    for cell, a_all in _buckets(a_cells).items():
        cand = [b_buckets[c] for c in h3.grid_disk(cell, k) if c in b_buckets]
        if not cand:
            continue
        b_all = np.concatenate(cand)
        rows, cols = _blocks(len(a_all), len(b_all))
        for r0 in range(0, len(a_all), rows):
            a_ix = a_all[r0 : r0 + rows]
            for c0 in range(0, len(b_all), cols):
                b_ix = b_all[c0 : c0 + cols]
                d = haversine_m_array(  # (len(a_ix), len(b_ix))
                    a_lat[a_ix][:, None], a_lon[a_ix][:, None], b_lat[b_ix][None, :], b_lon[b_ix][None, :]
                )
                hit_r, hit_c = np.nonzero(d <= radius_m)
                for r, c in zip(hit_r.tolist(), hit_c.tolist(), strict=True):
                    i, j = int(a_ix[r]), int(b_ix[c])
                    if same_set and i >= j:
                        continue
                    out.append((i, j, float(d[r, c])))
    return out


def nearest_within(
    lats: np.ndarray,
    lons: np.ndarray,
    cells: Sequence[str],
    radius_m: float,
    max_neighbours: int,
    resolution: int,
    query: np.ndarray | None = None,
    candidates: np.ndarray | None = None,
) -> dict[int, list[tuple[int, float]]]:
    """For each point in `query` (default all): its nearest other points among
    `candidates` (default all) within `radius_m`, at most `max_neighbours`, nearest first,
    ties by index. Blocks of at most MAX_BLOCK distances; a running top-k per query point."""
    cand = np.arange(len(lats)) if candidates is None else np.asarray(candidates, dtype=np.int64)
    buckets = _buckets([cells[i] for i in cand.tolist()])
    buckets = {c: cand[ix] for c, ix in buckets.items()}  # positions -> point indices
    k = ring_k(resolution, radius_m)
    wanted = np.arange(len(lats)) if query is None else np.asarray(query, dtype=np.int64)
    by_cell: dict[str, list[int]] = defaultdict(list)
    for i in wanted.tolist():
        by_cell[cells[i]].append(i)
    out: dict[int, list[tuple[int, float]]] = {}
    for cell, q_list in by_cell.items():
        near = [buckets[c] for c in h3.grid_disk(cell, k) if c in buckets]
        b_all = np.sort(np.concatenate(near)) if near else np.zeros(0, dtype=np.int64)
        q_all = np.asarray(q_list, dtype=np.int64)
        rows = min(len(q_all), QUERY_ROWS)
        for r0 in range(0, len(q_all), rows):
            q_ix = q_all[r0 : r0 + rows]
            best_d, best_j = _top_k(lats, lons, q_ix, b_all, radius_m, max_neighbours)
            for r, i in enumerate(q_ix.tolist()):
                keep = np.isfinite(best_d[r])
                out[i] = list(zip(best_j[r][keep].tolist(), best_d[r][keep].tolist(), strict=True))
    return out


def _top_k(
    lats: np.ndarray, lons: np.ndarray, q_ix: np.ndarray, b_all: np.ndarray, radius_m: float, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """The `n` nearest of `b_all` (sorted point indices) to each of `q_ix` within the
    radius, as (distances, indices), each (len(q_ix), n), inf / -1 where fewer. Candidate
    columns come in blocks that double up to MAX_BLOCK / rows; a row whose n-th best
    distance is already 0 cannot improve (later candidates have higher indices), so points
    piled on one spot stop after the first narrow block."""
    best_d = np.full((len(q_ix), n), np.inf)
    best_j = np.full((len(q_ix), n), -1, dtype=np.int64)
    widest = max(n, MAX_BLOCK // max(1, len(q_ix)) - n)
    cols, c0 = min(4 * n + 1, widest), 0  # narrow first: piled-up points are settled by a few columns
    while c0 < len(b_all):
        b_ix = b_all[c0 : c0 + cols]
        c0, cols = c0 + len(b_ix), min(2 * cols, widest)
        d = haversine_m_array(  # (len(q_ix), len(b_ix))
            lats[q_ix][:, None], lons[q_ix][:, None], lats[b_ix][None, :], lons[b_ix][None, :]
        )
        d[(q_ix[:, None] == b_ix[None, :]) | (d > radius_m)] = np.inf
        cat_d = np.concatenate([best_d, d], axis=1)  # (rows, n + cols)
        cat_j = np.concatenate([best_j, np.broadcast_to(b_ix, d.shape)], axis=1)
        order = np.lexsort((cat_j, cat_d), axis=1)[:, :n]  # by distance, then index
        best_d, best_j = np.take_along_axis(cat_d, order, axis=1), np.take_along_axis(cat_j, order, axis=1)
        if not (best_d[:, -1] > 0).any():
            break
    best_j[~np.isfinite(best_d)] = -1
    return best_d, best_j
