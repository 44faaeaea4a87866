"""open_clip embeddings with a tiny registered config (random weights saved at test time)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from models.clip_encoder import ClipEncoder
from models.errors import ModelUnavailable
from tests.tiny_visual import TinyVisualModels


def test_images_and_texts_share_one_normalised_space(tiny_visual_models: TinyVisualModels) -> None:
    folder = tiny_visual_models.path("clip")
    encoder = ClipEncoder(f"local-dir:{folder}", batch_size=2)
    images = [Image.new("RGB", (120, 80), c) for c in ("red", "green", "blue")]
    iv = encoder.embed_images(images)
    tv = encoder.embed_texts(["a red map", "a chart", "a photo"])
    assert iv.shape == tv.shape == (3, encoder.dim) == (3, 32)
    np.testing.assert_allclose(np.linalg.norm(iv, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(iv[1], encoder.embed_images(images[1:2])[0], atol=1e-5)  # batch-independent
    assert not np.allclose(iv[0], iv[1])
    # the registered config name with a weights file loads the same model
    named = ClipEncoder("carta-tiny-clip", pretrained=str(folder / "open_clip_pytorch_model.bin"))
    np.testing.assert_allclose(named.embed_texts(["a chart"])[0], tv[1], atol=1e-5)


def test_missing_weights_are_named(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match="CARTA_CLIP_PRETRAINED"):
        ClipEncoder("ViT-B-32")  # never random weights silently
    with pytest.raises(ModelUnavailable, match="CARTA_CLIP_MODEL"):
        ClipEncoder(f"local-dir:{tmp_path}")
    with pytest.raises(ModelUnavailable, match="CARTA_CLIP_PRETRAINED"):
        ClipEncoder("ViT-B-32", pretrained=str(tmp_path / "missing.pt"))
