"""Page images and thumbnails on disk."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from index.page_images import PageImages


@pytest.fixture
def images(tmp_path: Path) -> PageImages:
    return PageImages(tmp_path / "pages", thumb_width=120)


def _page(width: int = 600, height: int = 900) -> Image.Image:
    image = Image.new("RGB", (width, height), (255, 255, 255))
    image.paste((200, 20, 20), (0, 0, width // 2, height // 2))
    return image


def test_save_writes_webp_page_and_thumbnail(images: PageImages) -> None:
    images.save("default", "doc1", 3, _page())
    page_path = images.path("default", "doc1", 3)
    thumb_path = images.path("default", "doc1", 3, thumb=True)
    assert page_path == images.root / "default" / "doc1" / "p0003.webp"
    assert thumb_path == images.root / "default" / "doc1" / "p0003.thumb.webp"

    with Image.open(page_path) as page:
        assert page.format == "WEBP"
        assert page.size == (600, 900)
        r, g, b = page.convert("RGB").getpixel((100, 100))
        assert r > 150 and g < 80 and b < 80  # the pixels survived (lossy, but close)
    with Image.open(thumb_path) as thumb:
        assert thumb.format == "WEBP"
        assert thumb.size == (120, 180)  # thumbnail width, aspect ratio kept


def test_save_accepts_non_rgb_images(images: PageImages) -> None:
    images.save("default", "doc1", 1, Image.new("RGBA", (50, 20), (0, 0, 255, 128)))
    images.save("default", "doc1", 2, Image.new("L", (400, 1), 128))  # very wide: thumb keeps >= 1 px
    with Image.open(images.path("default", "doc1", 1)) as page:
        assert page.size == (50, 20)
    with Image.open(images.path("default", "doc1", 2, thumb=True)) as thumb:
        assert thumb.size == (120, 1)


def test_load_bytes_returns_the_files_or_none(images: PageImages) -> None:
    images.save("default", "doc1", 1, _page())
    data = images.load_bytes("default", "doc1", 1)
    assert data == images.path("default", "doc1", 1).read_bytes()
    assert Image.open(io.BytesIO(data)).size == (600, 900)
    thumb = images.load_bytes("default", "doc1", 1, thumb=True)
    assert thumb is not None and Image.open(io.BytesIO(thumb)).width == 120
    assert images.load_bytes("default", "doc1", 2) is None
    assert images.load_bytes("default", "other", 1) is None
    assert images.load_bytes("outro", "doc1", 1) is None


def test_files_of_lists_a_document_in_order(images: PageImages) -> None:
    assert images.files_of("default", "doc1") == []
    for n in (2, 1):
        images.save("default", "doc1", n, _page(60, 90))
    assert [p.name for p in images.files_of("default", "doc1")] == [
        "p0001.thumb.webp",
        "p0001.webp",
        "p0002.thumb.webp",
        "p0002.webp",
    ]


def test_delete_document_removes_only_its_folder(images: PageImages) -> None:
    images.save("default", "doc1", 1, _page(60, 90))
    images.save("default", "doc2", 1, _page(60, 90))
    images.save("outro", "doc1", 1, _page(60, 90))

    images.delete_document("default", "doc1")
    assert not (images.root / "default" / "doc1").exists()
    assert images.files_of("default", "doc1") == []
    assert images.load_bytes("default", "doc1", 1) is None
    assert len(images.files_of("default", "doc2")) == 2
    assert len(images.files_of("outro", "doc1")) == 2
    images.delete_document("default", "doc1")  # again: nothing to do, no error


@pytest.mark.parametrize("bad", ["../x", "..", ".", "a/b", "a\\b", "", "/etc", "x" * 129, "ção"])
def test_unsafe_path_components_are_refused(images: PageImages, tmp_path: Path, bad: str) -> None:
    victim = tmp_path / "x"
    victim.mkdir()
    (victim / "keep.txt").write_text("fica")
    with pytest.raises(ValueError):
        images.path(bad, "doc1", 1)
    with pytest.raises(ValueError):
        images.path("default", bad, 1)
    with pytest.raises(ValueError):
        images.save("default", bad, 1, _page(10, 10))
    with pytest.raises(ValueError):
        images.load_bytes(bad, "doc1", 1)
    with pytest.raises(ValueError):
        images.files_of("default", bad)
    with pytest.raises(ValueError):
        images.delete_document(bad, "doc1")
    with pytest.raises(ValueError):
        images.delete_document("default", bad)
    assert (victim / "keep.txt").read_text() == "fica"  # nothing outside the root was touched
