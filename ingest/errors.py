"""Why a document was refused: a sentence a user can act on; nothing is stored when one
is raised.

Exception tree (each class also inherits the built-in in brackets):

    IngestError [ValueError]
    ├── EmptyFile
    ├── UnsupportedType
    ├── CorruptDocument
    ├── JsonTooDeep
    ├── EncryptedDocument
    ├── BadCoordinates
    └── TooLarge

No HTTP status or API code here: service/api/errors.py maps each class to the API's answer.
"""

from __future__ import annotations


class IngestError(ValueError):
    """Base of every refusal of an uploaded document."""


class EmptyFile(IngestError):
    """The upload has no bytes."""


class UnsupportedType(IngestError):
    """The file is not a format Carta reads (PDF, image, raster, GeoJSON/KML/KMZ, OSM)."""


class CorruptDocument(IngestError):
    """The file claims a supported format but cannot be read."""


class JsonTooDeep(IngestError):
    """JSON input nested deeper than the reader's limit (refused before it is decoded)."""


class EncryptedDocument(IngestError):
    """The document is password-protected."""


class BadCoordinates(IngestError):
    """The coordinates or georeference given with or inside the file are invalid."""


class TooLarge(IngestError):
    """The file (bytes, pixels, pages or features) is over a configured limit."""
