"""Document, image and raster bytes for tests, built in memory: a text PDF, an encrypted or
scanned one, an image in any Pillow format, text rendered to pixels, a world file.

    make_pdf(["page one", ["page two, line 1", "page two, line 2"]])
    image_bytes(320, 200, color=(240, 240, 240))          # a PNG
    world_file(0.5, 0.0, 0.0, -0.5, 10.25, 50.75)          # .pgw text: A D B E C F

Coordinates inside a PDF page are PDF points (1/72 inch) from the top-left corner."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

import pymupdf
from PIL import Image

A4 = (595.0, 842.0)  # (width, height) in points
Color = str | int | tuple[int, ...]
Box = tuple[float, float, float, float]  # (x0, y0, x1, y1) in points


def make_pdf(
    pages: Sequence[str | Sequence[str]],
    *,
    page_size: tuple[float, float] = A4,
    fontsize: float = 12,
    origin: tuple[float, float] = (72, 100),
    line_step: float = 30,
    textbox: Box | None = None,
    title: str | None = None,
    password: str | None = None,
) -> bytes:
    """A PDF with a text layer: one page per item, each a line or a list of lines.

    Args:
        pages: the text of each page; lines start at `origin` and go down by `line_step`.
        page_size: (width, height) of every page in points.
        fontsize: font size in points (Helvetica).
        origin: (x, y) of the first line's baseline start.
        line_step: points between two lines' baselines.
        textbox: write each page's text wrapped inside this box instead, lines joined by newlines.
        title: the document's metadata title.
        password: encrypt with AES-256, this user password (the owner password is derived).
    """
    doc = pymupdf.open()
    for lines in pages:
        page = doc.new_page(width=page_size[0], height=page_size[1])
        lines = [lines] if isinstance(lines, str) else list(lines)
        if textbox is not None:
            page.insert_textbox(pymupdf.Rect(*textbox), "\n".join(lines), fontsize=fontsize)
            continue
        for i, line in enumerate(lines):
            page.insert_text((origin[0], origin[1] + i * line_step), line, fontsize=fontsize)
    if title:
        doc.set_metadata({"title": title})
    if password is None:
        data = doc.tobytes()
    else:
        data = doc.tobytes(
            encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw=password, owner_pw=f"{password}-owner"
        )
    doc.close()
    return data


def image_bytes(
    width: int = 8,
    height: int = 6,
    *,
    color: Color = "white",
    mode: str = "RGB",
    fmt: str = "PNG",
    exif: Image.Exif | None = None,
) -> bytes:
    """An image of one colour, encoded in `fmt` (any format Pillow writes: PNG, JPEG, TIFF, WEBP)."""
    buffer = io.BytesIO()
    image = Image.new(mode, (width, height), color)
    if exif is None:
        image.save(buffer, fmt)
    else:
        image.save(buffer, fmt, exif=exif)
    return buffer.getvalue()


def text_image(text: str, *, dpi: int = 200, size: tuple[float, float] = (420, 120)) -> bytes:
    """A PNG of `text` rendered to pixels: an image without a text layer, as a scanner makes.
    `size` is the rendered area in points (pixels = points * dpi / 72)."""
    src = pymupdf.open()
    page = src.new_page(width=size[0], height=size[1])
    page.insert_text((20, 70), text, fontsize=28)
    png = page.get_pixmap(dpi=dpi).tobytes("png")
    src.close()
    return png


def scanned_pdf(text: str, *, dpi: int = 200) -> bytes:
    """A one-page PDF whose only content is `text_image(text)`: no text layer, OCR needed."""
    doc = pymupdf.open()
    page = doc.new_page(width=420, height=120)
    page.insert_image(page.rect, stream=text_image(text, dpi=dpi))
    data = doc.tobytes()
    doc.close()
    return data


def world_file(a: float, d: float, b: float, e: float, c: float, f: float) -> bytes:
    """A world file's six lines in file order: x pixel size A, rotations D and B, y pixel size
    E (negative: north up), and (C, F) the CENTRE of the upper-left pixel, in the CRS's units."""
    return "\n".join(repr(v) for v in (a, d, b, e, c, f)).encode() + b"\n"


def write_world_filed_raster(path: Path, image: bytes, world: bytes, prj: bytes | str) -> Path:
    """Write a raster with its world file (.pgw for a .png, .jgw for .jpg, ...) and .prj next
    to it, as a GIS exports a map; returns the raster's path."""
    suffix = path.suffix.lower()
    path.write_bytes(image)
    path.with_suffix(f".{suffix[1]}{suffix[-1]}w").write_bytes(world)
    path.with_suffix(".prj").write_bytes(prj.encode() if isinstance(prj, str) else prj)
    return path


def float_tiff(shape: tuple[int, ...], *, tile: int = 16, **kwargs: object) -> bytes:
    """A zlib float32 TIFF of zeros written tile by tile: a few kB for millions of pixels
    (a "TIFF bomb"). `shape` is (rows, cols), (bands, rows, cols) with
    planarconfig="separate" or (rows, cols, bands); the other kwargs go to tifffile."""
    import numpy as np
    import tifffile

    zeros = np.zeros((tile, tile), np.float32)
    planes = shape[0] if kwargs.get("planarconfig") == "separate" else 1
    rows, cols = shape[-2:] if kwargs.get("planarconfig") == "separate" else shape[:2]
    tiles = planes * -(-rows // tile) * -(-cols // tile)
    buf = io.BytesIO()
    tifffile.imwrite(
        buf,
        (zeros for _ in range(tiles)),
        shape=shape,
        dtype="float32",
        tile=(tile, tile),
        compression="zlib",
        **kwargs,
    )
    return buf.getvalue()


def content_bomb_pdf(decoded_bytes: int, *, layers: int = 2, op: bytes = b"0 0 m 1 1 l S\n") -> bytes:
    """A one-page PDF whose content stream decodes to `decoded_bytes` of `op` repeated,
    Flate-compressed `layers` times ([/FlateDecode /FlateDecode]): 300 MB of operators
    in a few kB. Built a MiB at a time, never held whole."""
    import zlib

    chunk = op * (2**20 // len(op))
    stream = b""
    for layer in range(layers):
        packer = zlib.compressobj(9)
        parts: list[bytes] = []
        if layer == 0:
            left = decoded_bytes
            while left > 0:
                parts.append(packer.compress(chunk[:left]))
                left -= len(chunk)
        else:
            parts.append(packer.compress(stream))
        parts.append(packer.flush())
        stream = b"".join(parts)
    doc = pymupdf.open()
    page = doc.new_page()
    xref = doc.get_new_xref()
    doc.update_object(xref, "<<>>")
    doc.update_stream(xref, stream, compress=False)
    doc.xref_set_key(xref, "Filter", "[" + "/FlateDecode " * layers + "]")
    page.set_contents(xref)
    data = doc.tobytes()
    doc.close()
    return data


def form_bomb_pdf(levels: int, fan: int) -> bytes:
    """A one-page PDF that draws a form drawing a form ... `levels` deep, each drawing the
    next `fan` times; the innermost strokes one line `fan` times: fan ** levels lines from
    a stream of a few hundred bytes each."""
    doc = pymupdf.open()
    page = doc.new_page()
    inner = 0
    for level in range(levels):
        xref = doc.get_new_xref()
        resources = f"<</XObject <</X {inner} 0 R>>>>" if level else "<<>>"
        doc.update_object(xref, f"<</Type/XObject/Subtype/Form/BBox[0 0 600 800]/Resources {resources}>>")
        doc.update_stream(xref, (b"/X Do\n" if level else b"0 0 m 100 100 l S\n") * fan)
        inner = xref
    contents = doc.get_new_xref()
    doc.update_object(contents, "<<>>")
    doc.update_stream(contents, b"/X Do\n")
    page.set_contents(contents)
    doc.xref_set_key(page.xref, "Resources", f"<</XObject <</X {inner} 0 R>>>>")
    data = doc.tobytes(deflate=True)
    doc.close()
    return data
