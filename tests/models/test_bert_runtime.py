"""The NumPy BERT runtime gives sentence-transformers' vectors (the real all-MiniLM-L6-v2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from models.bert_runtime import BertRuntime, bert_shape
from models.text_encoder import DEFAULT_TEXT_MODEL, TextEncoder, resolve_text_model

TEXTS = [
    "Quais são as coordenadas do Parque da Jaqueira?",
    "flood risk in Recife",
    "x",
    "Relatório de enchentes 2024 com água e lama nos bairros " * 30,  # past the 256-token limit
]


@pytest.fixture(scope="module")
def folder() -> Path:
    return Path(resolve_text_model(DEFAULT_TEXT_MODEL))


def test_the_default_model_runs_on_numpy(folder: Path) -> None:
    shape = bert_shape(folder)
    assert shape is not None and (shape.dim, shape.max_tokens, shape.layers) == (384, 256, 6)


def test_vectors_match_sentence_transformers(folder: Path) -> None:
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(folder), device="cpu").encode(
        TEXTS, output_value=None, show_progress_bar=False
    )
    encoded = BertRuntime(folder, bert_shape(folder)).encode(TEXTS, batch_size=2)
    for ours, ref in zip(encoded, reference, strict=True):
        n = int(ref["attention_mask"].sum())
        tokens = ref["token_embeddings"][:n].numpy()
        assert ours.tokens.shape == tokens.shape
        np.testing.assert_allclose(ours.tokens, tokens, atol=2e-4)
        pooled = ours.pooled / np.linalg.norm(ours.pooled)
        assert float(pooled @ ref["sentence_embedding"].numpy()) > 0.99999
    assert encoded[3].tokens.shape[0] == 256


def test_other_architectures_are_left_to_sentence_transformers(folder: Path, tmp_path: Path) -> None:
    copy = tmp_path / "model"
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("*.safetensors"))
    assert bert_shape(copy) is None  # no safetensors weights
    (copy / "model.safetensors").touch()
    config = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps({**config, "hidden_act": "gelu_new"}))
    assert bert_shape(copy) is None
    (copy / "config.json").write_text(json.dumps(config))
    assert bert_shape(copy) is not None


def test_the_text_encoder_loads_on_first_use(folder: Path) -> None:
    encoder = TextEncoder()
    assert (encoder.dim, encoder.slug, encoder.loaded) == (384, "all-minilm-l6-v2", False)
    assert encoder.embed(["enchente"]).shape == (1, 384)
    assert encoder.loaded
