"""Pictures: PNG, JPEG, TIFF and WebP, decoded by Pillow.

An image becomes a one-page document at 1 pt per pixel. It is a map when it carries a
georeference (GeoTIFF tags, or a world file + .prj next to it or uploaded with it), and
a photo tagged at its EXIF GPS position otherwise, when it has one.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pymupdf
from PIL import Image, UnidentifiedImageError

from geo.georef import exif_location, georeference_raster
from ingest.errors import BadCoordinates, CorruptDocument, TooLarge
from ingest.formats.pdf import PdfPages
from ingest.geotagging import GeoTag
from ingest.loaders import FileType, LoadedPage, LoadOptions, PointKind, SourceFile
from ingest.readable import readable_blocks

WEBP = FileType("image/webp", "image")
_SIGNATURES: list[tuple[bytes, FileType]] = [
    (b"\x89PNG\r\n\x1a\n", FileType("image/png", "image")),
    (b"\xff\xd8\xff", FileType("image/jpeg", "image")),
    (b"II*\x00", FileType("image/tiff", "image")),
    (b"MM\x00*", FileType("image/tiff", "image")),
]


class ImageLoader:
    """Images Pillow decodes; their size is checked before the pixels are decoded."""

    name = "image"

    def sniff(self, data: bytes) -> FileType | None:
        head = data[:16]
        if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
            return WEBP
        return next((ftype for magic, ftype in _SIGNATURES if head.startswith(magic)), None)

    def claims(self, ftype: FileType, data: bytes) -> bool:
        return ftype.kind == "image"

    def open(self, data: bytes, ftype: FileType, options: LoadOptions) -> PicturePages:
        try:
            with Image.open(io.BytesIO(data)) as probe:
                width, height = probe.size
                if width * height > options.max_image_pixels:
                    raise TooLarge(
                        f"the image is {width}x{height} pixels; the limit is {options.max_image_pixels:,} "
                        "pixels (CARTA_MAX_IMAGE_PIXELS)"
                    )
                probe.seek(0)
                image = probe.convert("RGB")  # decodes fully: truncated files fail here
        except TooLarge:
            raise
        except Image.DecompressionBombError as exc:  # Pillow's own hard cap, far above ours
            raise TooLarge(f"the image is too large ({exc}); limit: CARTA_MAX_IMAGE_PIXELS") from exc
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
            raise CorruptDocument(f"the image cannot be decoded ({exc})") from exc
        return image_document(image, options)

    def geo_tags(self, source: SourceFile, ftype: FileType) -> list[GeoTag]:
        return picture_tags(source)

    def point_kind(self, tags: list[GeoTag]) -> PointKind:
        return picture_kind(tags)


class PicturePages(PdfPages):
    """A picture's page, whose OCR text is kept only when it reads as text
    (ingest/readable.py): tesseract reads a satellite scene's texture as junk words."""

    def pages(self) -> Iterator[LoadedPage]:
        for page in super().pages():
            if page.text_source == "ocr":
                blocks = readable_blocks(page.blocks)
                page = replace(page, blocks=blocks, text_source="ocr" if blocks else "none")
            yield page


def image_document(image: Image.Image, options: LoadOptions) -> PicturePages:
    """A one-page PDF at 1 pt per pixel carries the image, so OCR and boxes work as for PDFs."""
    pdf = pymupdf.open()
    page = pdf.new_page(width=image.width, height=image.height)
    buf = io.BytesIO()
    image.save(buf, "PNG")
    page.insert_image(page.rect, stream=buf.getvalue())
    return PicturePages(pdf, options, "image", None)


def picture_tags(source: SourceFile) -> list[GeoTag]:
    """A map's georeference (its footprint, tagged at the centre with the outline), else a
    photo's EXIF GPS position; an invalid georeference is refused."""
    try:
        footprint = georeference_raster(
            source.source_path or Path(source.filename), source.data, source.sidecars
        )
    except ValueError as exc:
        raise BadCoordinates(f"the map's georeference is invalid: {exc}") from exc
    if footprint is not None:
        lat, lon = footprint.center
        label = f"{footprint.source} {footprint.crs}"
        return [GeoTag(lat, lon, "raster", label, 1.0, ring=list(footprint.polygon))]
    if (gps := exif_location(source.data)) is not None:
        return [GeoTag(gps[0], gps[1], "exif", "EXIF GPS", 0.95)]
    return []


def picture_kind(tags: list[GeoTag]) -> PointKind:
    """A georeferenced picture is a map; any other is an image."""
    return "map" if any(t.source == "raster" for t in tags) else "image"
