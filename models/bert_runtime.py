"""A BERT encoder's forward pass in NumPy, for sentence-transformers models that are a plain
BERT (`BertModel`, absolute positions, GELU) with mean pooling: all-MiniLM-L6-v2, the lite
profile's text model.

Why not torch: importing torch and sentence-transformers costs 5-10 s on a small machine,
more than a whole `carta search` may take. The weights (safetensors) and the tokenizer
(tokenizers, Rust) load in a fraction of a second, and a 6-layer, 384-wide encoder runs
at the same speed in NumPy's BLAS as in torch on the CPU. The outputs match
sentence-transformers to float32 rounding (tests/models/test_bert_runtime.py).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# Abramowitz & Stegun 7.1.26: erf to 1.5e-7, below float32 resolution at GELU's scale
_ERF_P = 0.3275911
_ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


@dataclass(frozen=True)
class BertShape:
    """What the model directory says about the encoder, read without loading weights."""

    dim: int
    max_tokens: int
    layers: int
    heads: int
    eps: float


def bert_shape(folder: Path) -> BertShape | None:
    """The shape of a sentence-transformers BERT folder this runtime can run, else None
    (another architecture, pooling or activation: the caller uses sentence-transformers)."""
    try:
        config = json.loads((folder / "config.json").read_text())
        modules = json.loads((folder / "modules.json").read_text())
        pooling = json.loads((folder / "1_Pooling" / "config.json").read_text())
        st_config = json.loads((folder / "sentence_bert_config.json").read_text())
    except (OSError, ValueError):
        return None
    types = [m.get("type", "") for m in modules]
    plain = (
        config.get("model_type") == "bert"
        and config.get("hidden_act") == "gelu"
        and config.get("position_embedding_type", "absolute") == "absolute"
        and types[:2] == ["sentence_transformers.models.Transformer", "sentence_transformers.models.Pooling"]
        and all(t == "sentence_transformers.models.Normalize" for t in types[2:])
        and pooling.get("pooling_mode_mean_tokens") is True
        and not any(
            v for k, v in pooling.items() if k.startswith("pooling_mode_") and k != "pooling_mode_mean_tokens"
        )
        and (folder / "model.safetensors").exists()
        and (folder / "tokenizer.json").exists()
    )
    if not plain:
        return None
    return BertShape(
        dim=int(config["hidden_size"]),
        max_tokens=int(st_config.get("max_seq_length") or config["max_position_embeddings"]),
        layers=int(config["num_hidden_layers"]),
        heads=int(config["num_attention_heads"]),
        eps=float(config.get("layer_norm_eps", 1e-12)),
    )


@dataclass(frozen=True)
class Encoded:
    """One text's last hidden states (special tokens included) and mean-pooled vector."""

    tokens: np.ndarray  # (n_tokens, dim) float32, [CLS] first and [SEP] last
    pooled: np.ndarray  # (dim,) float32, not normalised


class BertRuntime:
    """Tokenizer + weights of one BERT folder; `encode` runs batches of texts."""

    def __init__(self, folder: Path, shape: BertShape) -> None:
        from safetensors.numpy import load_file
        from threadpoolctl import ThreadpoolController
        from tokenizers import Tokenizer

        self.shape = shape
        self._blas = ThreadpoolController()
        # BLAS runs on one thread: on a small, busy machine OpenBLAS's worker threads spin and
        # cost 3-20x the product itself (a query: 0.6-2.4 s vs 0.12 s; 8 chunks, 1,600
        # tokens: 5.6 s vs 0.8 s of CPU). The limit is process-wide, so calls take it one at
        # a time and each restores what it found.
        self._one_thread = threading.Lock()
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=shape.max_tokens)
        w = load_file(str(folder / "model.safetensors"))
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in w else ""
        # matrices stored as (in, out), C-contiguous: x @ W is then BLAS's fast case
        self._w = {
            key: np.ascontiguousarray(
                v.T if key.startswith("encoder.") and v.ndim == 2 else v, dtype=np.float32
            )
            for key, v in ((k.removeprefix(prefix), v) for k, v in w.items())
            if v.dtype != np.int64
        }

    def encode(self, texts: list[str], batch_size: int = 32) -> list[Encoded]:
        """Each text's hidden states and pooled vector; texts of similar length share a
        batch, so little is spent on padding."""
        ids = [e.ids for e in self.tokenizer.encode_batch(texts)]
        with self._one_thread, self._blas.limit(limits=1, user_api="blas"):
            return self._encode(ids, batch_size)

    def _encode(self, ids: list[list[int]], batch_size: int) -> list[Encoded]:
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        result: list[Encoded | None] = [None] * len(ids)
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            hidden, mask = self._forward([ids[i] for i in batch])
            for row, i in enumerate(batch):
                n = int(mask[row].sum())
                tokens = hidden[row, :n]
                result[i] = Encoded(tokens=tokens, pooled=tokens.mean(axis=0))
        return result  # type: ignore[return-value]

    def _forward(self, ids: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        """Last hidden states (batch, length, dim) and the attention mask (batch, length)."""
        w, s = self._w, self.shape
        length = max(len(x) for x in ids)
        input_ids = np.zeros((len(ids), length), dtype=np.int64)
        mask = np.zeros((len(ids), length), dtype=np.float32)
        for row, x in enumerate(ids):
            input_ids[row, : len(x)] = x
            mask[row, : len(x)] = 1.0
        x = (
            w["embeddings.word_embeddings.weight"][input_ids]
            + w["embeddings.position_embeddings.weight"][:length]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], s.eps)
        bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]  # padding keys get no weight
        head = s.dim // s.heads
        for layer in range(s.layers):
            p = f"encoder.layer.{layer}."
            q, k, v = (
                np.ascontiguousarray(
                    _linear(x, w[p + f"attention.self.{name}.weight"], w[p + f"attention.self.{name}.bias"])
                    .reshape(len(ids), length, s.heads, head)
                    .transpose(0, 2, 1, 3)
                )
                for name in ("query", "key", "value")
            )
            scores = q @ np.ascontiguousarray(k.transpose(0, 1, 3, 2)) / np.float32(np.sqrt(head)) + bias
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(len(ids), length, s.dim)
            attended = _linear(
                context, w[p + "attention.output.dense.weight"], w[p + "attention.output.dense.bias"]
            )
            x = _layer_norm(
                x + attended,
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
                s.eps,
            )
            inner = _gelu(_linear(x, w[p + "intermediate.dense.weight"], w[p + "intermediate.dense.bias"]))
            out = _linear(inner, w[p + "output.dense.weight"], w[p + "output.dense.bias"])
            x = _layer_norm(x + out, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], s.eps)
        return x.astype(np.float32), mask


def _linear(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """x @ weight + bias (weight (in, out)) as one 2-D product (NumPy hands only those to BLAS)."""
    flat = x.reshape(-1, x.shape[-1]) @ weight
    flat += bias
    return flat.reshape(*x.shape[:-1], weight.shape[1])


def _layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + np.float32(eps)) * gamma + beta


def _gelu(x: np.ndarray) -> np.ndarray:
    """GELU with the exact erf (what BERT's "gelu" is), not the tanh approximation;
    computed in place on two buffers (the intermediate layer is the largest array)."""
    z = np.abs(x)
    z *= np.float32(1 / np.sqrt(2))
    t = z * np.float32(_ERF_P)
    t += 1.0
    np.reciprocal(t, out=t)
    poly = t * np.float32(_ERF_A[4])
    for a in reversed(_ERF_A[:4]):
        poly += np.float32(a)
        poly *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z  # 1 - erf(|x|)
    np.subtract(1.0, poly, out=poly)  # erf(|x|)
    poly *= np.sign(x)
    poly += 1.0
    poly *= x
    poly *= 0.5
    return poly
