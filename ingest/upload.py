"""An upload and its one validation step.

`IngestRequest` is what `Ingestor.ingest` (and `Carta.ingest`, and a job) indexes. The
checks that can refuse it (the size limit, the sniffed type, opening the document,
its document geo tags) run here, in this order, for ingestion and for the upload-time
check of a job alike, so a bad file is refused before anything is stored. The upload
size limit (CARTA_MAX_UPLOAD_BYTES) is checked in `check_size` only; the HTTP body limit
in front of the API is a transport guard.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from geo.coordinates import valid_latlon
from ingest.errors import BadCoordinates, IngestError, TooLarge
from ingest.formats import loader_for
from ingest.geotagging import GeoTag
from ingest.loaders import FileType, FormatLoader, LoadOptions, OpenedDocument, SourceFile
from ingest.sniff import sniff


@dataclass(frozen=True)
class IngestRequest:
    """One file to index, e.g. IngestRequest(data, "enchentes.pdf", "prefeitura", acl=["defesa"]).

    `sidecars` (suffix -> bytes, e.g. ".pgw", ".prj") or the files next to `source_path`
    georeference a map raster; `metadata` is stored with the document ("lat"/"lon" geotag
    it); `acl`: the groups that may see it (empty = every key of the tenant)."""

    data: bytes
    filename: str
    tenant: str
    title: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    sidecars: dict[str, bytes] | None = None
    source_path: Path | None = None
    acl: list[str] = field(default_factory=list)

    @property
    def safe_filename(self) -> str:
        """The file's own name, without any folder a client sent along."""
        return PurePath(self.filename.replace("\\", "/")).name or "upload"


@dataclass
class OpenedUpload:
    """A request that passed every check: its type, its format, the opened document (to be
    closed by the caller) and the tags that hold for every page."""

    ftype: FileType
    loader: FormatLoader
    document: OpenedDocument
    document_tags: list[GeoTag]


def check_size(data: bytes, max_bytes: int) -> None:
    """Refuse an upload over CARTA_MAX_UPLOAD_BYTES (TooLarge)."""
    if len(data) > max_bytes:
        raise TooLarge(
            f"the file is {len(data):,} bytes; the limit is {max_bytes:,} (CARTA_MAX_UPLOAD_BYTES)"
        )


def sniff_upload(request: IngestRequest, max_bytes: int) -> FileType:
    """The first checks, cheap ones: the size limit and the type sniffed from the content."""
    check_size(request.data, max_bytes)
    return sniff(request.data)


def open_upload(request: IngestRequest, ftype: FileType, options: LoadOptions) -> OpenedUpload:
    """The document opened by its format and its document tags; raises the IngestError that
    refuses it (nothing is left open then)."""
    loader = loader_for(ftype, request.data)
    document = loader.open(request.data, ftype, options)
    try:
        tags = document_tags(request, ftype, loader)
    except IngestError:
        document.close()
        raise
    return OpenedUpload(ftype, loader, document, tags)


def validate_upload(request: IngestRequest, options: LoadOptions, max_bytes: int) -> FileType:
    """Every check ingestion makes before storing anything, without keeping the document
    open (a job's upload-time check); returns the sniffed type."""
    ftype = sniff_upload(request, max_bytes)
    open_upload(request, ftype, options).document.close()
    return ftype


def document_tags(
    request: IngestRequest, ftype: FileType, loader: FormatLoader | None = None
) -> list[GeoTag]:
    """Tags that hold for every page: user metadata lat/lon, then the format's own (a
    raster's georeference, a photo's EXIF GPS, the features of a GeoJSON/KML/OSM file).
    Invalid ones are refused (BadCoordinates)."""
    loader = loader or loader_for(ftype, request.data)
    source = SourceFile(request.data, request.safe_filename, request.sidecars, request.source_path)
    return metadata_tags(request.metadata) + loader.geo_tags(source, ftype)


def metadata_tags(metadata: dict[str, Any]) -> list[GeoTag]:
    """The tag of a document's user metadata "lat"/"lon" (both needed, as numbers in range)."""
    if "lat" not in metadata and "lon" not in metadata:
        return []
    try:
        lat, lon = float(metadata["lat"]), float(metadata["lon"])
    except (KeyError, TypeError, ValueError) as exc:
        raise BadCoordinates("metadata needs both 'lat' and 'lon' as numbers") from exc
    if not valid_latlon(lat, lon):
        raise BadCoordinates(f"metadata coordinates ({lat}, {lon}) are outside -90..90 / -180..180")
    return [GeoTag(lat, lon, "metadata", "user metadata", 1.0)]
