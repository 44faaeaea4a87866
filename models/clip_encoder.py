"""CLIP (open_clip) single-vector embeddings: images, map rasters, chart images and page
thumbnails on one side, query text (or a query image) on the other, in one space.

The model is an open_clip name plus weights: `model="ViT-B-32", pretrained=<file or tag>`,
or `model="local-dir:/path"` (open_clip_config.json + weights). Random weights are never
used silently: without `pretrained` a named architecture is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image

from models.errors import ModelUnavailable
from models.page_encoder import auto_device
from models.text_encoder import model_slug


class ClipEncoder:
    def __init__(
        self,
        model: str = "ViT-B-32",
        pretrained: str | None = None,
        device: str = "auto",
        batch_size: int = 16,
    ) -> None:
        import open_clip
        import torch

        self.device = auto_device(device)
        self.batch_size = batch_size
        if model.startswith("local-dir:"):
            folder = Path(model.removeprefix("local-dir:")).expanduser()
            if not (folder / "open_clip_config.json").exists():
                raise ModelUnavailable(
                    f"the CLIP model folder {folder} (CARTA_CLIP_MODEL) has no open_clip_config.json; "
                    "point CARTA_CLIP_MODEL at 'local-dir:<folder with config and weights>'"
                )
            model = f"local-dir:{folder}"
        elif not pretrained:
            raise ModelUnavailable(
                f"the CLIP model {model!r} needs weights: set CARTA_CLIP_PRETRAINED to a weights file or an "
                "open_clip tag already in the local cache, or CARTA_CLIP_MODEL to 'local-dir:<folder>'"
            )
        try:
            self.model, _, self.preprocess = open_clip.create_model_and_transforms(
                model, pretrained=pretrained, device=self.device
            )
            self.tokenizer = open_clip.get_tokenizer(model)
        except Exception as exc:  # RuntimeError / OSError / ValueError / KeyError: not loadable
            raise ModelUnavailable(
                f"cannot load the CLIP model {model!r} (CARTA_CLIP_MODEL) with weights {pretrained!r} "
                f"(CARTA_CLIP_PRETRAINED): {exc.__class__.__name__}: {str(exc)[:200]}"
            ) from exc
        self.model.eval()
        if self.device != "cpu":
            self.model = self.model.to(torch.bfloat16)
        self.dim = int(self.model.text_projection.shape[1]) if hasattr(self.model, "text_projection") else 0
        self.dim = self.dim or int(self.embed_texts(["x"]).shape[1])
        self.slug = model_slug(model.removeprefix("local-dir:"))

    def _run(self, fn, batch) -> np.ndarray:  # noqa: ANN001 - torch callables
        import torch

        with torch.inference_mode():
            out = fn(batch.to(self.device)).float().cpu().numpy()
        return (out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)).astype(np.float32)

    def embed_images(self, images: Sequence[Image.Image]) -> np.ndarray:
        """(len(images), dim) L2-normalised vectors."""
        import torch

        dtype = next(self.model.parameters()).dtype
        parts = [
            self._run(
                self.model.encode_image,
                torch.stack(
                    [self.preprocess(im.convert("RGB")) for im in images[i : i + self.batch_size]]
                ).to(dtype),
            )
            for i in range(0, len(images), self.batch_size)
        ]
        return np.concatenate(parts) if parts else np.zeros((0, self.dim), dtype=np.float32)

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        parts = [
            self._run(self.model.encode_text, self.tokenizer(list(texts[i : i + 64])))
            for i in range(0, len(texts), 64)
        ]
        return np.concatenate(parts) if parts else np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
