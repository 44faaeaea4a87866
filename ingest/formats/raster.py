"""Rasters Pillow cannot show: multi-band satellite scenes, float DEMs and 16-bit grids
(GeoTIFF). They are sniffed as images and claimed here first; the page picture is a
stretched RGB preview, and they are georeferenced like any image (ingest/formats/image.py).
"""

from __future__ import annotations

import contextlib
import io

import numpy as np
import tifffile
from PIL import Image

from ingest.errors import CorruptDocument, TooLarge
from ingest.formats.image import PicturePages, image_document, picture_kind, picture_tags
from ingest.geotagging import GeoTag
from ingest.loaders import FileType, LoadOptions, PointKind, SourceFile

# Decoded bytes a raster may take per allowed pixel: 16 bands of uint8, four of float32
# (the preview reads three of them as float64 on top).
BYTES_PER_PIXEL = 16


class RasterLoader:
    """TIFFs that are not plain 8-bit grey/RGB/RGBA images."""

    name = "raster"

    def sniff(self, data: bytes) -> FileType | None:
        return None  # a raster is a TIFF: the image loader sniffs it

    def claims(self, ftype: FileType, data: bytes) -> bool:
        return ftype.kind == "image" and needs_raster_preview(data)

    def open(self, data: bytes, ftype: FileType, options: LoadOptions) -> PicturePages:
        try:
            image = raster_preview(data, options.max_image_pixels)
        except TooLarge:
            raise
        except Exception as exc:
            raise CorruptDocument(f"the raster cannot be decoded ({exc})") from exc
        return image_document(image, options)

    def geo_tags(self, source: SourceFile, ftype: FileType) -> list[GeoTag]:
        return picture_tags(source)

    def point_kind(self, tags: list[GeoTag]) -> PointKind:
        return picture_kind(tags)


def needs_raster_preview(data: bytes) -> bool:
    """True for TIFFs that are not plain 8-bit grey/RGB/RGBA images."""
    try:
        with tifffile.TiffFile(io.BytesIO(data)) as tif:
            page = tif.pages[0]
            bands = (
                1
                if page.ndim == 2
                else min(page.shape[0], page.shape[-1])
                if page.planarconfig == 2
                else (page.shape[-1])
            )
            return page.dtype != np.uint8 or bands not in {1, 3, 4}
    except Exception:  # not a TIFF tifffile can parse: let Pillow decide
        return False


def check_raster_size(page: tifffile.TiffPage, max_pixels: int) -> None:
    """TooLarge before decoding when the raster has more than `max_pixels` pixels, or its
    bands decode to more than BYTES_PER_PIXEL * `max_pixels` bytes. The sizes are the tags'
    (rows x columns, and every sample of every band): a 1 MB zlib TIFF of 3 x 512 x 204,800
    float32, whose shape (bands, rows, cols) passed as 1,536 "pixels", decoded to over 5 GB
    inside the upload request."""
    width, height = page.imagewidth, page.imagelength * max(page.imagedepth, 1)
    if width * height > max_pixels:
        raise TooLarge(
            f"the raster is {width}x{height} pixels; the limit is {max_pixels:,} pixels "
            "(CARTA_MAX_IMAGE_PIXELS)"
        )
    decoded = page.size * page.dtype.itemsize
    if decoded > BYTES_PER_PIXEL * max_pixels:
        raise TooLarge(
            f"the raster's {page.samplesperpixel} bands of {page.dtype} decode to {decoded:,} bytes; "
            f"the limit is {BYTES_PER_PIXEL * max_pixels:,} (CARTA_MAX_IMAGE_PIXELS x {BYTES_PER_PIXEL})"
        )


def raster_preview(data: bytes, max_pixels: int) -> Image.Image:
    """Bands 3-2-1 (true colour for Landsat-like stacks) or the single band, each stretched
    between its 2nd and 98th percentile, nodata and NaN shown black. TooLarge, before any
    pixel is decoded, past the limits of check_raster_size."""
    with tifffile.TiffFile(io.BytesIO(data)) as tif:
        page = tif.pages[0]
        check_raster_size(page, max_pixels)
        array = page.asarray()
        nodata = page.tags.get("GDAL_NODATA")
    if array.ndim == 3 and page.planarconfig == 2:  # (bands, rows, cols)
        array = np.moveaxis(array, 0, -1)
    if array.ndim == 3:
        array = array[..., [2, 1, 0]] if array.shape[-1] >= 3 else array[..., :1]
    else:
        array = array[..., None]
    array = array.astype(np.float64)
    invalid = ~np.isfinite(array)
    if nodata is not None:
        with contextlib.suppress(ValueError):
            invalid |= array == float(str(nodata.value).strip("\x00 "))
    out = np.zeros(array.shape, dtype=np.uint8)
    for band in range(array.shape[-1]):
        values = array[..., band][~invalid[..., band]]
        if values.size == 0:
            continue
        lo, hi = np.percentile(values, [2, 98])
        scaled = (array[..., band] - lo) / (hi - lo if hi > lo else 1.0)
        out[..., band] = np.clip(scaled * 255, 0, 255).astype(np.uint8)
    out[invalid] = 0
    image = Image.fromarray(out[..., 0] if out.shape[-1] == 1 else out)
    return image.convert("RGB")
