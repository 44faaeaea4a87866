"""Dense text embeddings and their token vectors (real all-MiniLM-L6-v2, loaded once)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from models.errors import ModelUnavailable
from models.text_encoder import BULK_TEXTS, DEFAULT_TEXT_MODEL, TextEncoder, model_slug, resolve_text_model

FLOOD_A = "Heavy rain flooded the streets of Recife and many families left their homes."
FLOOD_B = "Floods after intense rainfall forced residents of the city to evacuate."
REVENUE = "Quarterly revenue grew twelve percent thanks to strong software subscriptions."


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(resolve_text_model(DEFAULT_TEXT_MODEL))


def test_default_model_identity(text_encoder: TextEncoder) -> None:
    assert text_encoder.dim == 384
    assert text_encoder.slug == "all-minilm-l6-v2"
    assert text_encoder.max_tokens > 0


def test_dense_vectors_are_normalised(text_encoder: TextEncoder) -> None:
    vecs = text_encoder.embed([FLOOD_A, "Relatório de enchentes 2024", "x"])
    assert vecs.shape == (3, 384)
    assert vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert np.isfinite(vecs).all()


def test_empty_input_gives_empty_output(text_encoder: TextEncoder) -> None:
    assert text_encoder.embed([]).shape == (0, 384)
    assert text_encoder.embed_with_tokens([]) == []


def test_related_sentences_are_closer_than_unrelated(text_encoder: TextEncoder) -> None:
    a, b, c = text_encoder.embed([FLOOD_A, FLOOD_B, REVENUE])
    related, unrelated = float(a @ b), float(a @ c)
    assert related > unrelated + 0.2
    assert float(b @ c) < related


def test_embedding_is_deterministic_and_independent_of_batch(text_encoder: TextEncoder) -> None:
    alone = text_encoder.embed([FLOOD_A])[0]
    batched = text_encoder.embed([REVENUE, FLOOD_A, "curto"])[1]
    np.testing.assert_allclose(alone, batched, atol=1e-4)


def test_embed_with_tokens_matches_embed(text_encoder: TextEncoder) -> None:
    texts = [FLOOD_A, REVENUE]
    pooled = text_encoder.embed(texts)
    with_tokens = text_encoder.embed_with_tokens(texts)
    assert len(with_tokens) == 2
    for emb, vec in zip(with_tokens, pooled, strict=True):
        assert emb.dense.shape == (384,)
        assert emb.dense.dtype == np.float32
        assert float(np.linalg.norm(emb.dense)) == pytest.approx(1.0, abs=1e-5)
        np.testing.assert_allclose(emb.dense, vec, atol=1e-4)


def test_token_vectors_exclude_special_tokens_and_padding(text_encoder: TextEncoder, tokenizer) -> None:
    texts = ["Enchentes no Recife", FLOOD_A, "Relatório de enchentes 2024 com água e lama nos bairros"]
    embeddings = text_encoder.embed_with_tokens(texts)  # one batch: the short ones are padded
    for text, emb in zip(texts, embeddings, strict=True):
        n_tokens = len(tokenizer(text)["input_ids"])  # includes [CLS] and [SEP]
        assert emb.tokens.shape == (n_tokens - 2, 384)
        assert emb.tokens.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(emb.tokens, axis=1), 1.0, atol=1e-5)
    # Different texts of different lengths: no padding rows sneak in.
    assert len({e.tokens.shape[0] for e in embeddings}) == 3


def test_token_vectors_are_the_model_tokens(text_encoder: TextEncoder, tokenizer) -> None:
    # The same word in two contexts gives similar (contextual) token vectors; a token in an
    # unrelated sentence is further away.
    (a,) = text_encoder.embed_with_tokens(["flood"])
    (b,) = text_encoder.embed_with_tokens(["flood warning"])
    (c,) = text_encoder.embed_with_tokens(["revenue"])
    assert len(tokenizer("flood")["input_ids"]) == 3  # one word piece
    assert float(a.tokens[0] @ b.tokens[0]) > float(a.tokens[0] @ c.tokens[0])


def test_long_text_is_truncated_to_the_model_limit(text_encoder: TextEncoder) -> None:
    text = " ".join(["enchente"] * 2000)
    (emb,) = text_encoder.embed_with_tokens([text])
    assert emb.tokens.shape == (text_encoder.max_tokens - 2, 384)


@pytest.mark.parametrize(
    ("model", "slug"),
    [
        ("sentence-transformers/all-MiniLM-L6-v2", "all-minilm-l6-v2"),
        ("BAAI/bge-small-en-v1.5", "bge-small-en-v1-5"),
        ("/models/My_Model/", "my-model"),
        ("intfloat/multilingual-e5-small", "multilingual-e5-small"),
        ("!!!", "model"),
    ],
)
def test_model_slug_is_collection_name_safe(model: str, slug: str) -> None:
    assert model_slug(model) == slug


def test_model_slug_of_an_existing_local_dir(tmp_path: Path) -> None:
    folder = tmp_path / "Meu Modelo.v2"
    folder.mkdir()
    assert model_slug(str(folder)) == "meu-modelo-v2"


def test_resolve_text_model(tmp_path: Path) -> None:
    default = Path(resolve_text_model(DEFAULT_TEXT_MODEL))
    assert (default / "config.json").exists()
    assert resolve_text_model(str(tmp_path)) == str(tmp_path)
    assert resolve_text_model("org/some-model") == "org/some-model"  # a hub id, left as is


@pytest.mark.parametrize("kind", ["missing", "empty"])
def test_unloadable_model_dir_raises_model_unavailable(tmp_path: Path, kind: str) -> None:
    folder = tmp_path / "modelo"
    if kind == "empty":
        folder.mkdir()
    with pytest.raises(ModelUnavailable) as info:
        TextEncoder(str(folder))
    message = str(info.value)
    assert "CARTA_TEXT_MODEL" in message
    assert str(folder) in message


def test_bulk_calls_run_on_sentence_transformers_with_the_same_vectors() -> None:
    """More than BULK_TEXTS texts (ingestion) run on sentence-transformers, the 2.4x faster
    path there; questions stay on the NumPy runtime; both give the same vectors."""
    encoder = TextEncoder()  # its own instance: which backends are loaded is the point
    texts = [
        f"Chunk {i}: the Capibaribe river crosses Recife, {i} km from the sea." for i in range(BULK_TEXTS + 1)
    ]
    small = np.concatenate([encoder.embed(texts[i : i + 8]) for i in range(0, len(texts), 8)])
    assert encoder._runtime is not None and encoder._st is None  # small calls: no torch
    bulk = encoder.embed(texts)
    assert encoder._st is not None
    np.testing.assert_allclose(bulk, small, atol=1e-5)
    tokens = encoder.embed_with_tokens(texts)
    np.testing.assert_allclose(np.stack([t.dense for t in tokens]), small, atol=1e-5)


def test_ingestion_batches_run_on_torch_however_few_their_texts() -> None:
    """A batch of pages may hold fewer than BULK_TEXTS chunks: ingestion says bulk=True, and
    sentence-transformers (2.4x faster there) embeds it, with the runtime's vectors."""
    encoder = TextEncoder()
    texts = ["Olinda lies north of Recife.", "Chuva acumulada em julho: 412 mm."]
    bulk = encoder.embed_with_tokens(texts, bulk=True)
    assert encoder._st is not None and encoder._runtime is None
    small = encoder.embed_with_tokens(texts, bulk=False)
    assert encoder._runtime is not None
    for a, b in zip(bulk, small, strict=True):
        np.testing.assert_allclose(a.dense, b.dense, atol=1e-5)
        np.testing.assert_allclose(a.tokens, b.tokens, atol=1e-4)


def test_bf16_bulk_calls_keep_the_fp32_vectors_to_cosine_0_9999() -> None:
    """CARTA_TEXT_BULK_BF16: ingestion's torch calls under bf16 autocast, where the CPU has
    bf16 kernels; the vectors stay the fp32 ones to cosine 0.9999 (token vectors too), and
    small calls (questions) are fp32 on the NumPy runtime either way."""
    from models.text_encoder import _cpu_bf16

    if not _cpu_bf16():
        pytest.skip("this CPU has no bf16 kernels: bulk calls stay fp32")
    texts = [FLOOD_A, FLOOD_B, REVENUE, "Relatório de enchentes: 412 mm de chuva em julho no Recife."]
    fp32 = TextEncoder().embed_with_tokens(texts, bulk=True)
    encoder = TextEncoder(bulk_bf16=True)
    bf16 = encoder.embed_with_tokens(texts, bulk=True)
    for a, b in zip(fp32, bf16, strict=True):
        assert a.tokens.shape == b.tokens.shape and b.dense.dtype == np.float32
        assert float(a.dense @ b.dense) >= 0.9999
        assert float(np.sum(a.tokens * b.tokens, axis=1).min()) >= 0.999
    assert not np.array_equal(fp32[0].dense, bf16[0].dense)  # bf16 did run
    small = encoder.embed(texts[:2], bulk=False)
    np.testing.assert_allclose(small, np.stack([a.dense for a in fp32[:2]]), atol=1e-5)
