"""Page images and thumbnails as WebP files: `<root>/<tenant>/<doc_id>/p0001.webp`."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from PIL import Image

_SAFE = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


def _safe(part: str) -> str:
    if not _SAFE.match(part) or part in {".", ".."}:
        raise ValueError(f"unsafe path component {part!r}")
    return part


class PageImages:
    def __init__(self, root: Path, thumb_width: int = 240, quality: int = 85) -> None:
        self.root = root
        self.thumb_width = thumb_width
        self.quality = quality

    def path(self, tenant: str, doc_id: str, page_no: int, thumb: bool = False) -> Path:
        name = f"p{page_no:04d}{'.thumb' if thumb else ''}.webp"
        return self.root / _safe(tenant) / _safe(doc_id) / name

    def save(self, tenant: str, doc_id: str, page_no: int, image: Image.Image) -> None:
        target = self.path(tenant, doc_id, page_no)
        target.parent.mkdir(parents=True, exist_ok=True)
        image = image.convert("RGB")
        image.save(target, "WEBP", quality=self.quality)
        ratio = self.thumb_width / image.width
        thumb = image.resize(
            (self.thumb_width, max(1, round(image.height * ratio))), Image.Resampling.LANCZOS
        )
        thumb.save(self.path(tenant, doc_id, page_no, thumb=True), "WEBP", quality=self.quality)

    def load_bytes(self, tenant: str, doc_id: str, page_no: int, thumb: bool = False) -> bytes | None:
        p = self.path(tenant, doc_id, page_no, thumb)
        return p.read_bytes() if p.exists() else None

    def open(self, tenant: str, doc_id: str, page_no: int) -> Image.Image | None:
        """The full-size page image, or None when it is not stored."""
        p = self.path(tenant, doc_id, page_no)
        if not p.exists():
            return None
        with Image.open(p) as image:
            image.load()
            return image.copy()

    def delete_document(self, tenant: str, doc_id: str) -> None:
        shutil.rmtree(self.root / _safe(tenant) / _safe(doc_id), ignore_errors=True)

    def files_of(self, tenant: str, doc_id: str) -> list[Path]:
        folder = self.root / _safe(tenant) / _safe(doc_id)
        return sorted(folder.glob("*")) if folder.exists() else []
