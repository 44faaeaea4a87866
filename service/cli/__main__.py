"""`python -m service.cli ...`, the same as the `carta` command."""

from service.cli.main import app

app()
