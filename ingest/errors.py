"""Why a document was refused. Each error carries the HTTP status the API answers
with and a sentence a user can act on; nothing is stored when one is raised."""

from __future__ import annotations


class IngestError(Exception):
    status = 400
    code = "bad_document"


class EmptyFile(IngestError):
    code = "empty_file"


class UnsupportedType(IngestError):
    status = 415
    code = "unsupported_type"


class CorruptDocument(IngestError):
    status = 422
    code = "corrupt_document"


class EncryptedDocument(IngestError):
    status = 422
    code = "encrypted_document"


class BadCoordinates(IngestError):
    code = "bad_coordinates"


class TooLarge(IngestError):
    status = 413
    code = "too_large"
