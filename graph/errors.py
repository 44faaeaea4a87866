"""What graph/ raises.

Exception tree (each class also inherits the built-in in brackets):

    GraphError
    ├── DatasetNotFound [LookupError]
    ├── PoiFormatError [ValueError]
    ├── EmptyDataset [ValueError]
    ├── TooManyPois [ValueError]
    ├── BadAliases [ValueError]
    └── OverpassError [RuntimeError]

No HTTP status here: service/api/errors.py maps each class to the API's answer.
"""

from __future__ import annotations


class GraphError(Exception):
    """Base of every error raised by graph/."""


class DatasetNotFound(GraphError, LookupError):
    """No POI dataset with that id in the tenant."""


class PoiFormatError(GraphError, ValueError):
    """The upload is not a POI file this reader understands (message says why)."""


class EmptyDataset(GraphError, ValueError):
    """The file was readable but held no point of interest (message says what was skipped)."""


class TooManyPois(GraphError, ValueError):
    """The dataset holds more points of interest, property values or CSV columns than its
    cap (the message names which)."""


class OverpassError(GraphError, RuntimeError):
    """The Overpass server could not be reached or kept failing (message says how)."""


class BadAliases(GraphError, ValueError):
    """The property aliases of an upload are malformed or name properties the file lacks."""
