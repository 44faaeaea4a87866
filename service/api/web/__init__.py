"""The web UI's static files (plain ES modules, no build step); routes/ui.py serves them."""

from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).parent / "static"
