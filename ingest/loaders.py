"""The loader interface: what a document format claims and what it produces.

Every format (ingest/formats/: pdf, image, raster, vector geodata, OpenStreetMap) is one
`FormatLoader`: it recognises its files by content (`sniff`), claims sniffed files
(`claims`), opens them into pages (`open`: a rendered image plus text blocks with boxes)
and says where the whole file is (`geo_tags`) and what kind of point its pages become
(`point_kind`). Everything that can reject the input (corrupt, encrypted, too many pages,
too many pixels, bad coordinates) happens in `open` and `geo_tags`, before anything is
stored. The registry in ingest/formats/__init__.py lists the loaders in sniffing order.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from PIL import Image

from ingest.geotagging import GeoTag

if TYPE_CHECKING:
    from ingest.tables import Table

BBox = tuple[float, float, float, float]  # x0, y0, x1, y1 in page units, origin top-left
PointKind = Literal["pdf_page", "image", "map"]


@dataclass(frozen=True)
class FileType:
    """What the content of a file is, e.g. FileType("application/pdf", "pdf")."""

    mime: str
    kind: str  # "pdf", "image", "geojson", "kml", "kmz", "osm" or "osm-pbf"


@dataclass(frozen=True)
class LoadOptions:
    """Rendering, OCR and size limits every loader applies."""

    render_dpi: int = 110
    max_render_pixels: int = 9_000_000  # a rendering's and an OCR picture's width * height
    ocr_enabled: bool = True
    ocr_languages: str = "por+eng"
    ocr_dpi: int = 300
    ocr_min_chars: int = 40
    max_pages: int = 2000
    max_image_pixels: int = 60_000_000
    # decoded PDF drawing instructions a page may execute, and a document in all
    # (ingest/formats/pdf_content.py: inflation and form bombs refused before rendering)
    max_page_content_bytes: int = 16 * 2**20
    max_content_bytes: int = 256 * 2**20
    layout: Literal["tables", "text"] = "tables"  # PDF tables kept as tables, or read as text
    table_timeout_s: float = 30.0  # a page's table detection budget; past it, the text path
    chart_tables: bool = True  # bar charts on pages with little text read into tables (ingest/charts.py)
    figure_text: bool = True  # pictures on text pages read by OCR (ingest/figure_text.py)


@dataclass
class TextBlock:
    """A run of text on a page and where it sits."""

    bbox: BBox  # in page units (PDF points; pixels for images), origin top-left
    text: str
    heading: bool = False  # a title or section heading (larger or bold type): the chunks' context


@dataclass
class LoadedPage:
    """One page as the pipeline indexes it."""

    page_no: int  # 1-based
    image: Image.Image
    width: float  # page size in the units of the block boxes
    height: float
    blocks: list[TextBlock]
    text_source: str  # "text", "ocr" or "none"
    # what applied to this page, without its number, e.g. "OCRed at 212 dpi instead of 300 (...)"
    warnings: list[str] = field(default_factory=list)
    # tables detected on the page (PDF, CARTA_LAYOUT=tables); their text is not in `blocks`
    tables: list[Table] = field(default_factory=list)


class OpenedDocument(Protocol):
    """A validated document whose pages can be loaded one at a time."""

    kind: str
    title: str | None
    page_count: int
    warnings: tuple[str, ...]  # for the ingest result (e.g. limits that applied)

    def pages(self) -> Iterator[LoadedPage]:
        """The pages in order, rendered and read one at a time."""
        ...

    def close(self) -> None:
        """Release what the document holds open."""
        ...


@dataclass(frozen=True)
class SourceFile:
    """An upload as the geo tagging of a format sees it: the bytes, the name it came
    with, and what may georeference it (sidecar files by suffix, or the folder of
    `source_path` for a file ingested from disk)."""

    data: bytes
    filename: str
    sidecars: dict[str, bytes] | None = None
    source_path: Path | None = None


class FormatLoader(Protocol):
    """One document format. A new format is one module implementing this and one entry
    in `ingest.formats.FORMATS`."""

    name: str

    def sniff(self, data: bytes) -> FileType | None:
        """The file type when the content is one of this format's, else None."""
        ...

    def claims(self, ftype: FileType, data: bytes) -> bool:
        """Whether this loader reads a file sniffed as `ftype`."""
        ...

    def open(self, data: bytes, ftype: FileType, options: LoadOptions) -> OpenedDocument:
        """The validated document (IngestError subclasses when it is refused)."""
        ...

    def geo_tags(self, source: SourceFile, ftype: FileType) -> list[GeoTag]:
        """Tags that hold for every page of the file (georeference, EXIF, features)."""
        ...

    def point_kind(self, tags: list[GeoTag]) -> PointKind:
        """The `kind` payload of the file's points, given its document tags."""
        ...
