"""Pooled multivectors for the first stage of a two-stage late-interaction search.

A ColPali page has ~1,030 vectors; scoring all of them for every page is the cost of
exact MaxSim. The first stage scores a pooled multivector instead (tens of vectors),
then the engine reranks the survivors on the full one:
- "rowcol": mean of each row and each column of every image patch grid (as Qdrant
  recommends for ColPali), non-image tokens kept as they are;
- "blocks": means of k x k blocks of every patch grid (k = isqrt(`pool_factor`)), which
  keeps where things are on the page; non-image tokens kept;
- "hierarchical": colpali-engine's HierarchicalTokenPooler (clusters similar tokens,
  `pool_factor` tokens per cluster on average);
- "sequential": means of runs of `pool_factor` consecutive tokens (no grid needed; the
  lite text-token multivector).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

Pooling = Literal["rowcol", "blocks", "hierarchical", "sequential"]


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)).astype(np.float32)


def rowcol_pool(
    vectors: np.ndarray, image_rows: np.ndarray, grids: tuple[tuple[int, int], ...]
) -> np.ndarray:
    """Row and column means of each (rows, cols) grid of image tokens, plus the other tokens."""
    image = vectors[image_rows]
    pooled, start = [], 0
    for rows, cols in grids:
        block = image[start : start + rows * cols].reshape(rows, cols, -1)
        pooled += [block.mean(axis=1), block.mean(axis=0)]
        start += rows * cols
    if start < len(image):  # tokens not covered by a grid stay as they are
        pooled.append(image[start:])
    others = np.delete(vectors, image_rows, axis=0)
    return _unit(np.concatenate([*pooled, others]))


def block_pool(
    vectors: np.ndarray, image_rows: np.ndarray, grids: tuple[tuple[int, int], ...], side: int
) -> np.ndarray:
    """Means of side x side blocks of each grid (edge blocks smaller), plus the other tokens."""
    image = vectors[image_rows]
    pooled, start = [], 0
    for rows, cols in grids:
        block = image[start : start + rows * cols].reshape(rows, cols, -1)
        pooled += [
            block[r : r + side, c : c + side].reshape(-1, block.shape[-1]).mean(axis=0)
            for r in range(0, rows, side)
            for c in range(0, cols, side)
        ]
        start += rows * cols
    rest = [image[start:]] if start < len(image) else []
    others = np.delete(vectors, image_rows, axis=0)
    return _unit(np.concatenate([np.stack(pooled), *rest, others]))


def sequential_pool(vectors: np.ndarray, factor: int) -> np.ndarray:
    n = len(vectors)
    groups = [vectors[i : i + factor].mean(axis=0) for i in range(0, n, factor)]
    return _unit(np.stack(groups))


def hierarchical_pool(vectors: np.ndarray, factor: int) -> np.ndarray:
    import torch
    from colpali_engine.compression.token_pooling import HierarchicalTokenPooler

    pooled = HierarchicalTokenPooler().pool_embeddings([torch.from_numpy(vectors)], pool_factor=factor)
    return _unit(pooled[0].float().numpy())


def pool(
    vectors: np.ndarray,
    method: Pooling = "rowcol",
    factor: int = 8,
    image_rows: np.ndarray | None = None,
    grids: tuple[tuple[int, int], ...] = (),
) -> np.ndarray:
    """The first-stage multivector of a page. Without a patch grid, "rowcol"/"blocks" fall back
    to sequential pooling."""
    if len(vectors) <= 1:
        return _unit(vectors)
    if method == "hierarchical":
        return hierarchical_pool(vectors, factor)
    if method in ("rowcol", "blocks") and grids and image_rows is not None and len(image_rows):
        if method == "blocks":
            return block_pool(vectors, image_rows, grids, max(1, math.isqrt(factor)))
        return rowcol_pool(vectors, image_rows, grids)
    return sequential_pool(vectors, factor)
