"""The registry of document formats, in sniffing order: the first loader that recognises
a file's content names its type, and the first that claims the type reads it.

Adding a format: one module under ingest/formats/ with a `FormatLoader`
(ingest/loaders.py) and one entry in FORMATS. PDF comes first because its header may
follow up to 1 KiB of junk; the raster loader precedes the image loader because both
claim TIFFs and it takes the ones Pillow cannot show.
"""

from __future__ import annotations

from ingest.formats.image import ImageLoader
from ingest.formats.osm import OsmLoader
from ingest.formats.pdf import PdfLoader
from ingest.formats.raster import RasterLoader
from ingest.formats.vector import VectorLoader
from ingest.geotagging import GeoTag
from ingest.loaders import FileType, FormatLoader, LoadOptions, OpenedDocument, PointKind

FORMATS: tuple[FormatLoader, ...] = (PdfLoader(), RasterLoader(), ImageLoader(), VectorLoader(), OsmLoader())
SUPPORTED = "PDF, PNG, JPEG, TIFF, WebP, GeoJSON, KML/KMZ or OpenStreetMap (.osm, .osm.pbf)"


def loader_for(ftype: FileType, data: bytes) -> FormatLoader:
    """The loader that reads a file sniffed as `ftype`."""
    for loader in FORMATS:
        if loader.claims(ftype, data):
            return loader
    raise RuntimeError(f"no registered format claims the sniffed kind {ftype.kind!r}")


def open_document(data: bytes, ftype: FileType, options: LoadOptions) -> OpenedDocument:
    """The validated document of a sniffed file (IngestError subclasses when refused)."""
    return loader_for(ftype, data).open(data, ftype, options)


def point_kind(ftype: FileType, tags: list[GeoTag]) -> PointKind:
    """The `kind` payload of a file of type `ftype` with these document tags, when the file
    itself is gone (`carta reindex`): the loaders that share a sniffed kind (raster and
    image) agree on it, so the content is not needed to pick one."""
    return loader_for(ftype, b"").point_kind(tags)
