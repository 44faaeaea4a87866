"""Tiny, randomly initialised models of the real visual classes, built offline at test time
(no weights in the repo): colpali-engine ColIdefics3, ColQwen2, ColQwen2_5, ColPali saved
with save_pretrained, and an open_clip model from a tiny registered config saved as a
`local-dir:` folder. Adapted from ../shared/reference/tiny_colpali_models.py."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

CORPUS = [
    "Describe the image.",
    "User: Assistant:",
    "Recife population 1.6 million",
    "What is the population of Recife?",
    "Where is Lisboa?",
    "user\nassistant\n",
    "the quick brown fox jumps over the lazy dog 0123456789",
]
TINY_CLIP_CFG = {
    "embed_dim": 32,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "head_width": 16, "patch_size": 16},
    "text_cfg": {"context_length": 32, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
}
QWEN_SPECIALS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
]


def _tokenizer(specials: list[str], bos: str | None = None, eos: str | None = None, pad: str = "<pad>"):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    fixed = [pad] + [s for s in [bos, eos] if s]
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=fixed + [s for s in specials if s not in fixed],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS * 20, trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token=pad,
        bos_token=bos,
        eos_token=eos,
        additional_special_tokens=[s for s in specials if s not in fixed],
    )


def _save(model, processor, out: Path) -> Path:
    """Random models have zero projection bias, which gives NaN rows for padded tokens
    under SDPA; trained checkpoints do not, so give the tiny one a bias too."""
    import torch

    for name in ("linear", "custom_text_proj"):
        layer = getattr(model, name, None)
        if layer is not None and layer.bias is not None:
            torch.nn.init.normal_(layer.bias, std=0.02)
    model.save_pretrained(out)
    processor.save_pretrained(out)
    return out


def colidefics3(out: Path) -> Path:
    from colpali_engine.models import ColIdefics3, ColIdefics3Processor
    from transformers import Idefics3Config, Idefics3ImageProcessor, Idefics3VisionConfig, LlamaConfig

    specials = ["<fake_token_around_image>", "<image>", "<end_of_utterance>", "<global-img>", "<|im_start|>"]
    specials += [f"<row_{i}_col_{j}>" for i in range(1, 7) for j in range(1, 7)]
    tok = _tokenizer(specials, bos="<|im_start|>", eos="<end_of_utterance>")
    img, patch, scale = 64, 16, 2
    ip = Idefics3ImageProcessor(
        size={"longest_edge": 2 * img}, max_image_size={"longest_edge": img}, do_image_splitting=True
    )
    proc = ColIdefics3Processor(
        image_processor=ip, tokenizer=tok, image_seq_len=(img // patch) ** 2 // scale**2
    )
    cfg = Idefics3Config(
        vision_config=Idefics3VisionConfig(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=2,
            image_size=img,
            patch_size=patch,
        ),
        text_config=LlamaConfig(
            vocab_size=len(tok),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=1,
            pad_token_id=tok.pad_token_id,
        ),
        scale_factor=scale,
        image_token_id=tok.convert_tokens_to_ids("<image>"),
        pad_token_id=tok.pad_token_id,
    )
    return _save(ColIdefics3(cfg).eval(), proc, out)


def _qwen_processors():
    from transformers import Qwen2VLImageProcessor, Qwen2VLVideoProcessor

    kw = dict(
        min_pixels=4 * 28 * 28, max_pixels=16 * 28 * 28, patch_size=14, temporal_patch_size=2, merge_size=2
    )
    return Qwen2VLImageProcessor(**kw), Qwen2VLVideoProcessor(**kw)


def _qwen_text_config(tok) -> dict:
    return dict(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        bos_token_id=None,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        rope_scaling={"type": "mrope", "mrope_section": [2, 3, 3]},
    )


def _qwen_ids(tok) -> dict:
    ids = {
        "image_token_id": "<|image_pad|>",
        "video_token_id": "<|video_pad|>",
        "vision_start_token_id": "<|vision_start|>",
        "vision_end_token_id": "<|vision_end|>",
    }
    return {k: tok.convert_tokens_to_ids(v) for k, v in ids.items()}


def colqwen2(out: Path) -> Path:
    from colpali_engine.models import ColQwen2, ColQwen2Processor
    from transformers import Qwen2VLConfig

    tok = _tokenizer(QWEN_SPECIALS, eos="<|im_end|>", pad="<|endoftext|>")
    ip, vp = _qwen_processors()
    proc = ColQwen2Processor(image_processor=ip, tokenizer=tok, video_processor=vp)
    cfg = Qwen2VLConfig(
        text_config=_qwen_text_config(tok),
        vision_config=dict(
            depth=1,
            embed_dim=32,
            hidden_size=32,
            num_heads=2,
            mlp_ratio=2,
            patch_size=14,
            spatial_merge_size=2,
            temporal_patch_size=2,
            in_channels=3,
        ),
        **_qwen_ids(tok),
    )
    return _save(ColQwen2(cfg).eval(), proc, out)


def colqwen2_5(out: Path) -> Path:
    from colpali_engine.models import ColQwen2_5, ColQwen2_5_Processor
    from transformers import Qwen2_5_VLConfig

    tok = _tokenizer(QWEN_SPECIALS, eos="<|im_end|>", pad="<|endoftext|>")
    ip, vp = _qwen_processors()
    proc = ColQwen2_5_Processor(image_processor=ip, tokenizer=tok, video_processor=vp)
    cfg = Qwen2_5_VLConfig(
        text_config=_qwen_text_config(tok),
        vision_config=dict(
            depth=1,
            hidden_size=32,
            intermediate_size=64,
            num_heads=2,
            out_hidden_size=32,
            patch_size=14,
            spatial_merge_size=2,
            temporal_patch_size=2,
            in_channels=3,
            window_size=56,
            fullatt_block_indexes=[0],
        ),
        **_qwen_ids(tok),
    )
    return _save(ColQwen2_5(cfg).eval(), proc, out)


def colpali(out: Path) -> Path:
    from colpali_engine.models import ColPali, ColPaliProcessor
    from transformers import GemmaConfig, PaliGemmaConfig, SiglipImageProcessor, SiglipVisionConfig

    tok = _tokenizer(["<image>"], bos="<bos>", eos="<eos>", pad="<pad>")
    img, patch = 32, 8
    ip = SiglipImageProcessor(size={"height": img, "width": img})
    ip.image_seq_length = (img // patch) ** 2
    proc = ColPaliProcessor(image_processor=ip, tokenizer=tok)
    cfg = PaliGemmaConfig(
        vision_config=SiglipVisionConfig(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=2,
            image_size=img,
            patch_size=patch,
            projection_dim=32,
        ),
        text_config=GemmaConfig(
            vocab_size=len(tok),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=1,
            head_dim=16,
        ),
        image_token_id=tok.convert_tokens_to_ids("<image>"),
        projection_dim=32,
        hidden_size=32,
    )
    cfg.text_config.num_image_tokens = ip.image_seq_length
    return _save(ColPali(cfg).eval(), proc, out)


def tiny_clip(out: Path) -> Path:
    """An open_clip `local-dir:` folder (config + weights) of a tiny registered config."""
    import open_clip
    import torch

    cfg_dir = out / "configs"
    cfg_dir.mkdir(parents=True, exist_ok=True)
    (cfg_dir / "carta-tiny-clip.json").write_text(json.dumps(TINY_CLIP_CFG))
    open_clip.add_model_config(cfg_dir)
    torch.manual_seed(0)
    model = open_clip.create_model("carta-tiny-clip", pretrained=None)
    folder = out / "carta-tiny-clip"
    folder.mkdir(exist_ok=True)
    (folder / "open_clip_config.json").write_text(
        json.dumps({"model_cfg": TINY_CLIP_CFG, "preprocess_cfg": {}})
    )
    torch.save(model.state_dict(), folder / "open_clip_pytorch_model.bin")
    return folder


BUILDERS: dict[str, Callable[[Path], Path]] = {
    "colidefics3": colidefics3,
    "colqwen2": colqwen2,
    "colqwen2_5": colqwen2_5,
    "colpali": colpali,
}


@functools.cache
def sample_pdf() -> bytes:
    """A 3-page PDF (cached: MuPDF writes a new file ID each time, i.e. other bytes)."""
    import pymupdf

    doc = pymupdf.open()
    texts = [
        "Recife population 1.6 million in 2022, capital of Pernambuco.",
        "Rainfall chart of Lisboa, monthly millimetres.",
        "Where is Lisboa? Portugal, on the Tagus river estuary.",
    ]
    for i, text in enumerate(texts):
        page = doc.new_page(width=300, height=400)
        page.insert_text((20, 40), text[:45], fontsize=11)
        page.insert_text((20, 60), text[45:], fontsize=11)
        page.draw_rect(
            pymupdf.Rect(30, 100 + 60 * i, 270, 300), color=(0, 0, 1), fill=(i / 3, 0.2, 0.8 - i / 4)
        )
    data = doc.tobytes()
    doc.close()
    return data


def visual_settings(models: TinyVisualModels, family: str) -> dict[str, Any]:
    """Settings overrides for a visual-profile Carta on the tiny models (small batches and
    first stage, no geotagging or OCR: the tests are about the visual channels)."""
    return {
        "profile": "visual",
        "visual_model": str(models.path(family)),
        "clip_model": f"local-dir:{models.path('clip')}",
        "visual_batch_size": 2,
        "visual_prefetch": 4,
        "geotag": False,
        "ocr_enabled": False,
    }


class TinyVisualModels:
    """Builds each tiny model once, on first use, under one session temp dir."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._built: dict[str, Path] = {}

    def path(self, family: str) -> Path:
        if family not in self._built:
            import torch

            torch.manual_seed(0)
            builder = tiny_clip if family == "clip" else BUILDERS[family]
            self._built[family] = builder(self.root / family)
        return self._built[family]


@pytest.fixture(scope="session")
def tiny_visual_models(tmp_path_factory: pytest.TempPathFactory) -> TinyVisualModels:
    return TinyVisualModels(tmp_path_factory.mktemp("tiny-visual-models"))
