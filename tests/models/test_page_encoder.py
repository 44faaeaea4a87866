"""The ColPali-family page encoder on tiny random models of the four real classes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from models.errors import ModelUnavailable
from models.page_encoder import ColPageEncoder, PageEncoder, TextTokenPageEncoder, auto_device, detect_family
from models.text_encoder import TextEncoder
from tests.tiny_visual import TinyVisualModels


def _pages() -> list[Image.Image]:
    pages = []
    for i, (w, h) in enumerate([(200, 300), (300, 200), (240, 240)]):
        im = Image.new("RGB", (w, h), "white")
        ImageDraw.Draw(im).rectangle([10, 10 + 20 * i, w - 10, h // 2], fill=(40 * i, 90, 200))
        pages.append(im)
    return pages


@pytest.mark.parametrize("family", ["colidefics3", "colqwen2", "colqwen2_5", "colpali"])
def test_family_from_config_batches_and_grids(tiny_visual_models: TinyVisualModels, family: str) -> None:
    path = tiny_visual_models.path(family)
    encoder = ColPageEncoder(str(path), batch_size=2)
    assert encoder.family == family and encoder.device == "cpu" and encoder.dim == 128
    seen: list[tuple[int, int]] = []
    pages = encoder.embed_images(_pages(), progress=lambda done, total: seen.append((done, total)))
    assert seen == [(2, 3), (3, 3)]  # batches of 2
    for pv in pages:
        assert pv.vectors.dtype == np.float32 and pv.vectors.shape[1] == 128
        np.testing.assert_allclose(np.linalg.norm(pv.vectors, axis=1), 1.0, rtol=1e-4)
        assert pv.grids and sum(r * c for r, c in pv.grids) == len(pv.image_rows) < len(pv.vectors)
    if family.startswith("colqwen"):  # the grid follows the page's aspect ratio
        (r0, c0), (r1, c1) = pages[0].grids[0], pages[1].grids[0]
        assert r0 > c0 and r1 < c1
    queries = encoder.embed_queries(["population of Recife", "where is Lisboa"])
    assert len(queries) == 2 and all(q.shape[1] == 128 for q in queries)
    # batching does not change the vectors
    alone = encoder.embed_images(_pages()[2:])[0].vectors
    np.testing.assert_allclose(alone, pages[2].vectors, atol=1e-4)


def test_same_interface_as_the_lite_token_encoder(
    tiny_visual_models: TinyVisualModels, text_encoder: TextEncoder
) -> None:
    encoders: list[PageEncoder] = [
        ColPageEncoder(str(tiny_visual_models.path("colpali"))),
        TextTokenPageEncoder(text_encoder),
    ]
    for encoder in encoders:
        (q,) = encoder.embed_queries(["population of Recife"])
        assert q.ndim == 2 and q.shape[1] == encoder.dim and encoder.slug


def test_image_size_and_visual_token_budget(tiny_visual_models: TinyVisualModels) -> None:
    big = Image.new("RGB", (900, 900), "white")
    path = str(tiny_visual_models.path("colqwen2_5"))
    small = ColPageEncoder(path, max_visual_tokens=4).embed_images([big])[0]
    large = ColPageEncoder(path, max_visual_tokens=16).embed_images([big])[0]
    assert len(small.image_rows) <= 4 < len(large.image_rows) <= 16
    idefics = str(tiny_visual_models.path("colidefics3"))
    one_tile = ColPageEncoder(idefics, image_size=64).embed_images([big])[0]
    tiles = ColPageEncoder(idefics, image_size=128).embed_images([big])[0]
    assert len(one_tile.grids) < len(tiles.grids)


def test_similarity_map_covers_the_patch_grid(tiny_visual_models: TinyVisualModels) -> None:
    encoder = ColPageEncoder(str(tiny_visual_models.path("colqwen2")))
    heat, picked = encoder.similarity_map(_pages()[0], "population of Recife")
    rows, cols = encoder.embed_images(_pages()[:1])[0].grids[0]
    assert heat.shape == (rows, cols) and np.isfinite(heat).all()
    assert all(0 <= r < rows and 0 <= c < cols for r, c in picked)


def test_family_detection_and_missing_weights(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(json.dumps({"model_type": "qwen2_5_vl"}))
    assert detect_family("anything", tmp_path / "m") == "colqwen2_5"
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "adapter_config.json").write_text(
        json.dumps({"base_model_name_or_path": "vidore/colSmol"})
    )
    assert detect_family("x", tmp_path / "a") == "colidefics3"
    assert detect_family("vidore/colqwen2-v1.0", None) == "colqwen2"
    with pytest.raises(ModelUnavailable, match="CARTA_VISUAL_FAMILY"):
        detect_family("my-model", None)
    missing = tmp_path / "nowhere"
    with pytest.raises(ModelUnavailable, match="CARTA_VISUAL_MODEL") as err:
        ColPageEncoder(str(missing))
    assert str(missing) in str(err.value)
    with pytest.raises(ModelUnavailable, match="vidore/colqwen2.5-v0.2"):
        ColPageEncoder("vidore/colqwen2.5-v0.2")  # not in the local cache; nothing is downloaded
    assert auto_device("cpu") == "cpu" and auto_device() in {"cuda", "mps", "cpu"}
