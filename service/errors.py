"""What service/ raises: the caller's request cannot be served as asked.

Exception tree (each class also inherits the built-in in brackets):

    ServiceError
    ├── NotFound [LookupError]
    │   ├── DocumentNotFound
    │   ├── PageNotFound
    │   ├── JobNotFound
    │   ├── KeyNotFound
    │   ├── TraceNotFound
    │   └── EntityNotFound
    ├── AuthError [PermissionError]
    │   ├── MissingKey
    │   ├── InvalidKey
    │   ├── Forbidden
    │   │   └── ReadOnlyKey
    │   └── ForbiddenGroup
    ├── RateLimited [RuntimeError]
    │   └── AuthThrottled
    ├── InvalidRequest [ValueError]
    │   ├── GeoFilterError
    │   ├── InvalidMetadata
    │   ├── InvalidGroups
    │   ├── BadSidecar
    │   ├── BadImage
    │   └── BadH3Cells
    └── Conflict [RuntimeError]
        ├── BeingIndexed
        ├── HiddenDuplicate
        ├── VisualProfileOff
        ├── GraphDisabled
        └── DocGraphDisabled

No HTTP status here: service/api/errors.py maps each class to the API's answer.
"""

from __future__ import annotations


class ServiceError(Exception):
    """Base of every error raised by service/."""


class NotFound(ServiceError, LookupError):
    """The thing asked for does not exist for this caller (absent and hidden look the same)."""


class DocumentNotFound(NotFound):
    """No document with that id that the caller may see."""


class PageNotFound(NotFound):
    """The document has no such page (or no image of it)."""


class JobNotFound(NotFound):
    """No ingestion job with that id that the caller may follow."""


class KeyNotFound(NotFound):
    """No active API key with that id in the caller's tenant."""


class TraceNotFound(NotFound):
    """No ask trace kept under that request id for the caller's tenant."""


class AuthError(ServiceError, PermissionError):
    """The caller has no usable credential, or may not do what it asked."""


class MissingKey(AuthError):
    """An API key is required and the request carries none."""


class InvalidKey(AuthError):
    """The API key is unknown or revoked."""


class Forbidden(AuthError):
    """The key may not do this (e.g. only admin keys manage keys)."""


class ReadOnlyKey(Forbidden):
    """A reader key tried to upload, delete or manage datasets."""


class ForbiddenGroup(AuthError):
    """The key tried to share a document with a group it is not in."""


class RateLimited(ServiceError, RuntimeError):
    """The key sent more requests than its rate limit allows."""

    retry_after_s = 1  # when the caller may try again (the API's Retry-After)


class AuthThrottled(RateLimited):
    """Too many wrong API keys from this client address; keys are not checked for a while."""

    def __init__(self, message: str, retry_after_s: int = 1) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class InvalidRequest(ServiceError, ValueError):
    """A value the caller sent cannot be used (the message says which and why)."""


class GeoFilterError(InvalidRequest):
    """A geo filter a user sent cannot be used (bad coordinates, unknown place, ...)."""


class InvalidMetadata(InvalidRequest):
    """An upload's metadata is not a JSON object."""


class InvalidGroups(InvalidRequest):
    """An ACL group name is not 1-64 letters, digits, '_' or '-'."""


class BadSidecar(InvalidRequest):
    """A sidecar file is not a world file, .prj or .aux.xml."""


class BadImage(InvalidRequest):
    """A query image cannot be decoded."""


class BadH3Cells(InvalidRequest):
    """The H3 cell list is empty, too long or holds ids that are not H3 cells."""


class Conflict(ServiceError, RuntimeError):
    """The request is valid but the service's state or configuration does not allow it now."""


class BeingIndexed(Conflict):
    """The document's ingestion job has not ended yet."""


class HiddenDuplicate(Conflict):
    """The tenant holds the same content in a document the caller may not see."""


class VisualProfileOff(Conflict):
    """The server runs without the visual profile that the request needs."""


class GraphDisabled(Conflict):
    """The graph is turned off (CARTA_GRAPH_ENABLED=false)."""


class EntityNotFound(NotFound):
    """No document-graph entity with that id mentioned in a document the caller may see."""


class DocGraphDisabled(Conflict):
    """The document graph is turned off (CARTA_DOCGRAPH=false)."""
