"""What index/ raises.

Exception tree (each class also inherits the built-in in brackets):

    StoreError [RuntimeError]

No HTTP status here: service/api/errors.py maps each class to the API's answer.
"""

from __future__ import annotations


class StoreError(RuntimeError):
    """The store cannot be opened or used (wrong config, locked data dir, ...)."""
