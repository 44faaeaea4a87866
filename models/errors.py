"""Errors a user can act on: what is missing and how to provide it."""


class ModelUnavailable(RuntimeError):
    """A configured model cannot be loaded (weights missing, package absent)."""
