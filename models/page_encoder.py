"""Late-interaction page encoders: one multivector per page, one per query, scored by MaxSim.

Two implementations of one small interface (`PageEncoder`), so the page channel does
not care which is behind it:
- `TextTokenPageEncoder` (lite profile): the text model's token vectors (the page
  multivector is built from its chunks' tokens at ingestion);
- `ColPageEncoder` (visual profile): any colpali-engine family (ColPali, ColQwen2,
  ColQwen2_5, ColIdefics3/ColSmol) that reads the page image itself, loaded by model id
  or local directory; the family comes from the model's config (or is given).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
from PIL import Image

from models.errors import ModelUnavailable
from models.text_encoder import TextEncoder, model_slug

log = logging.getLogger(__name__)

Family = Literal["colpali", "colqwen2", "colqwen2_5", "colidefics3"]
FAMILIES: tuple[Family, ...] = ("colpali", "colqwen2", "colqwen2_5", "colidefics3")
# (model class, processor class) in colpali_engine.models
_CLASSES: dict[str, tuple[str, str]] = {
    "colpali": ("ColPali", "ColPaliProcessor"),
    "colqwen2": ("ColQwen2", "ColQwen2Processor"),
    "colqwen2_5": ("ColQwen2_5", "ColQwen2_5_Processor"),
    "colidefics3": ("ColIdefics3", "ColIdefics3Processor"),
}
# how the family shows in a config: architectures, model_type, or the model's name
_ARCHITECTURES = {
    "ColPali": "colpali",
    "ColQwen2": "colqwen2",
    "ColQwen2_5": "colqwen2_5",
    "ColIdefics3": "colidefics3",
}
_MODEL_TYPES = {
    "paligemma": "colpali",
    "qwen2_vl": "colqwen2",
    "qwen2_5_vl": "colqwen2_5",
    "idefics3": "colidefics3",
}
_NAME_HINTS = (
    ("colqwen2.5", "colqwen2_5"),
    ("colqwen2_5", "colqwen2_5"),
    ("colqwen2", "colqwen2"),
    ("colsmol", "colidefics3"),
    ("colidefics3", "colidefics3"),
    ("colpali", "colpali"),
)

ProgressFn = Callable[[int, int], None]  # (pages done, pages total)


@dataclass(frozen=True)
class PageVectors:
    """A page's multivector and where its image tokens sit, for pooling and heat-maps.

    `grids` lists the (rows, cols) patch grids of the image tokens in the order they
    appear among `vectors[image_rows]` (one grid for ColPali/ColQwen, one per tile plus
    the global view for ColIdefics3); empty when unknown (the lite text tokens)."""

    vectors: np.ndarray  # (n_tokens, dim) float32, L2-normalised rows
    image_rows: np.ndarray  # indices of the image-patch tokens in `vectors`
    grids: tuple[tuple[int, int], ...] = ()


class PageEncoder(Protocol):
    """What the page channel needs: a name for the collection, the vector size, and
    the query's multivector. Encoders that read page images also have embed_images."""

    slug: str
    dim: int

    def embed_queries(self, texts: Sequence[str]) -> list[np.ndarray]: ...


class TextTokenPageEncoder:
    """Lite profile: a query's multivector is its text-model token vectors."""

    def __init__(self, text: TextEncoder) -> None:
        self.text = text
        self.slug = text.slug
        self.dim = text.dim

    def embed_queries(self, texts: Sequence[str]) -> list[np.ndarray]:
        return [e.tokens for e in self.text.embed_with_tokens(list(texts))]


def auto_device(device: str = "auto") -> str:
    """cuda > mps > cpu unless a device is given."""
    if device != "auto":
        return device
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def detect_family(model: str, path: Path | None) -> Family:
    """The colpali-engine family of `model`: from its config.json (architectures, then
    model_type), from a PEFT adapter's base model, else from the name."""
    names = [model]
    if path is not None:
        for file in ("config.json", "adapter_config.json"):
            if (path / file).exists():
                cfg = json.loads((path / file).read_text())
                for arch in cfg.get("architectures") or []:
                    if arch in _ARCHITECTURES:
                        return _ARCHITECTURES[arch]  # type: ignore[return-value]
                if cfg.get("model_type") in _MODEL_TYPES:
                    return _MODEL_TYPES[cfg["model_type"]]  # type: ignore[return-value]
                names.append(str(cfg.get("base_model_name_or_path") or ""))
    for name in names:
        lowered = name.lower()
        for hint, family in _NAME_HINTS:
            if hint in lowered:
                return family  # type: ignore[return-value]
    raise ModelUnavailable(
        f"cannot tell which colpali-engine family the visual model {model!r} is (CARTA_VISUAL_MODEL); "
        f"set CARTA_VISUAL_FAMILY to one of {', '.join(FAMILIES)}"
    )


def _local_path(model: str) -> Path | None:
    path = Path(model).expanduser()
    if path.is_dir():
        return path
    try:  # a hub id already in the local cache (nothing is downloaded)
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(model, local_files_only=True))
    except Exception:
        return None


class ColPageEncoder:
    """A colpali-engine model + processor. Images are encoded in batches of
    `batch_size`; bf16 on a GPU, fp32 on the CPU."""

    def __init__(
        self,
        model: str,
        family: Family | None = None,
        device: str = "auto",
        batch_size: int = 4,
        max_visual_tokens: int | None = None,
        image_size: int | None = None,
    ) -> None:
        import torch

        path = _local_path(model)
        if path is None:
            raise ModelUnavailable(
                f"the visual model {model!r} (CARTA_VISUAL_MODEL) is neither a local directory nor in the "
                "Hugging Face cache; download it once (huggingface-cli download) or point CARTA_VISUAL_MODEL "
                "at a local directory"
            )
        self.family: Family = family or detect_family(model, path)
        self.device = auto_device(device)
        self.dtype = torch.float32 if self.device == "cpu" else torch.bfloat16
        self.batch_size = batch_size
        import colpali_engine.models as cm

        model_name, proc_name = _CLASSES[self.family]
        proc_kwargs: dict[str, Any] = {}
        if max_visual_tokens and self.family in ("colqwen2", "colqwen2_5"):
            proc_kwargs["max_num_visual_tokens"] = max_visual_tokens
        try:
            self.processor = getattr(cm, proc_name).from_pretrained(str(path), **proc_kwargs)
            self.model = (
                getattr(cm, model_name)
                .from_pretrained(str(path), torch_dtype=self.dtype, device_map=self.device)
                .eval()
            )
        except Exception as exc:  # OSError / ValueError / HF errors: all mean "not loadable as this class"
            raise ModelUnavailable(
                f"cannot load the visual model {model!r} (CARTA_VISUAL_MODEL) as {model_name}: "
                f"{exc.__class__.__name__}: {str(exc)[:200]}"
            ) from exc
        if image_size:
            self._set_image_size(image_size)
        self.slug = model_slug(model)
        self.dim = int(getattr(self.model, "dim", 128))
        self.model_id = model

    def _set_image_size(self, size: int) -> None:
        """Longest page edge fed to the model, where the family allows it (ColIdefics3
        tiles; ColQwen pixel budget). ColPali's input size is fixed by its weights."""
        ip = self.processor.image_processor
        if self.family == "colidefics3":
            ip.size = {"longest_edge": size}
        elif self.family in ("colqwen2", "colqwen2_5"):
            ip.max_pixels = size * size
            ip.size["longest_edge"] = ip.max_pixels
        else:
            log.info("CARTA_VISUAL_IMAGE_SIZE is ignored for ColPali (input size fixed by the model)")

    def _forward(self, batch: Any) -> Any:
        import torch

        batch = batch.to(self.model.device)
        with torch.inference_mode():
            out = self.model(**batch)
        return out.float().cpu()

    def embed_queries(self, texts: Sequence[str]) -> list[np.ndarray]:
        result: list[np.ndarray] = []
        for start in range(0, len(texts), self.batch_size * 4):
            batch = self.processor.process_queries(list(texts[start : start + self.batch_size * 4]))
            out = self._forward(batch)
            mask = batch["attention_mask"].bool().cpu()
            result += [_normalise(out[i][mask[i]].numpy()) for i in range(len(out))]
        return result

    def embed_images(
        self, images: Sequence[Image.Image], progress: ProgressFn | None = None
    ) -> list[PageVectors]:
        """Each image's multivector (padding removed) with its patch grids."""
        result: list[PageVectors] = []
        for start in range(0, len(images), self.batch_size):
            chunk = [im.convert("RGB") for im in images[start : start + self.batch_size]]
            batch = self.processor.process_images(chunk)
            out = self._forward(batch)
            mask = batch["attention_mask"].bool().cpu()
            image_mask = self.processor.get_image_mask(batch).cpu()
            for i in range(len(chunk)):
                keep = mask[i]
                vectors = _normalise(out[i][keep].numpy())
                image_rows = np.flatnonzero(image_mask[i][keep].numpy())
                result.append(PageVectors(vectors, image_rows, self._grids(batch, i, len(image_rows))))
            if progress:
                progress(len(result), len(images))
        return result

    def similarity_map(self, image: Image.Image, query: str) -> tuple[np.ndarray, list[tuple[int, int]]]:
        """Which patches of `image` the query's tokens match: per patch, the highest
        similarity with any query token (rows, cols), and the grid cell that each query
        token's MaxSim picks (its arg-max among all page tokens) when that is a patch.
        The grid is the page's whole view (ColIdefics3: its global image)."""
        page = self.embed_images([image])[0]
        q = self.embed_queries([query])[0]
        if not page.grids:
            raise ValueError(f"the {self.family} encoder gave no patch grid for this page")
        pick = len(page.grids) - 1 if self.family == "colidefics3" else 0
        offset = sum(r * c for r, c in page.grids[:pick])
        rows, cols = page.grids[pick]
        cells = page.image_rows[offset : offset + rows * cols]
        sim = q @ page.vectors.T  # (query tokens, page tokens)
        heat = sim[:, cells].max(axis=0).reshape(rows, cols)
        where = {int(token): i for i, token in enumerate(cells)}
        picked = [divmod(where[j], cols) for j in sim.argmax(axis=1).tolist() if j in where]
        return heat, picked

    def _grids(self, batch: Any, i: int, n_image: int) -> tuple[tuple[int, int], ...]:
        """Patch grids of image i's tokens, in token order."""
        if self.family in ("colqwen2", "colqwen2_5"):
            _, h, w = (int(x) for x in batch["image_grid_thw"][i])
            merge = int(self.processor.image_processor.merge_size)
            return ((h // merge, w // merge),)
        if self.family == "colidefics3":
            seq = int(self.processor.image_seq_len)
            side = math.isqrt(seq)
            return tuple((side, side) for _ in range(n_image // seq)) if side * side == seq else ()
        side = math.isqrt(n_image)
        return ((side, side),) if side * side == n_image else ()


def _normalise(x: np.ndarray) -> np.ndarray:
    x = np.nan_to_num(x.astype(np.float32))
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
