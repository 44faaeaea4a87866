"""OCR text of a picture is kept only when it reads as text (ingest/readable.py)."""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib
import pytest
from PIL import Image, ImageDraw, ImageFont

from ingest.formats.image import ImageLoader
from ingest.loaders import LoadOptions
from ingest.ocr import tesseract_available
from ingest.readable import PAGE_MIN_SCORE, reading_score
from ingest.sniff import sniff
from tests.conftest import corpus_path

JUNK = 'Eat "AR = _ a pe Aa ad A À Eai! a ee k 7 N 17 4 ee ER MD sa "Fe da sa fadas rr Radios Ee, i pi'


def test_prose_tables_and_labels_read_as_text_and_texture_does_not() -> None:
    assert reading_score("The quick brown fox jumps over the lazy dog near Boa Viagem in 2023.") > 0.8
    assert (
        reading_score("O mapa mostra a cidade de Olinda e o rio Beberibe, com as escolas municipais.") > 0.7
    )
    assert reading_score("Região Área 16/17 (ha) Médio-Norte 2.025.045 Oeste 1.234.567") > 0.8
    assert reading_score("Oceano Atlântico Olinda Recife") == 1.0
    assert reading_score(JUNK) < PAGE_MIN_SCORE
    assert reading_score("") == 0.0


def _ocr_page(data: bytes):
    loader = ImageLoader()
    doc = loader.open(data, sniff(data), LoadOptions())
    try:
        return next(iter(doc.pages()))
    finally:
        doc.close()


@pytest.mark.skipif(not tesseract_available(), reason="tesseract is not installed")
def test_a_rendered_page_of_text_keeps_its_ocr() -> None:
    font_path = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
    font = ImageFont.truetype(str(font_path), 36)
    image = Image.new("RGB", (1400, 400), "white")
    draw = ImageDraw.Draw(image)
    lines = [
        "Flooding near schools in Boa Viagem",
        "Enchentes perto das escolas de Olinda",
        "Rainfall in July 2016",
    ]
    for i, line in enumerate(lines):
        draw.text((40, 40 + 110 * i), line, fill="black", font=font)
    buf = io.BytesIO()
    image.save(buf, "PNG")
    page = _ocr_page(buf.getvalue())
    text = " ".join(b.text for b in page.blocks)
    assert page.text_source == "ocr"
    assert "Boa Viagem" in text and "Olinda" in text


@pytest.mark.skipif(not tesseract_available(), reason="tesseract is not installed")
def test_the_ocr_of_a_satellite_picture_is_dropped() -> None:
    data = corpus_path("raster", "olinda_L7_truecolor.png").read_bytes()
    page = _ocr_page(data)
    assert page.blocks == [] and page.text_source == "none"
