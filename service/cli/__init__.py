"""The `carta` command line: one module per command group."""

from service.cli.main import app

__all__ = ["app"]
