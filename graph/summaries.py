"""The extractive summary of a community (an H3 parent of zones), written from its
counted profile. The store writes it into each community node as the counts change, and
global search reads it back (or an LLM summary cached next to it), so both sides say
what the numbers are in the same words."""

from __future__ import annotations

from typing import Any

OPEN_DATA = "open-data reading (counts of the loaded datasets, not an official survey)"


def extractive_summary(cell: str, profile: dict[str, Any]) -> str:
    """A community as text: counts and dominant categories, labelled as an open-data reading."""
    cats = list(profile.get("categories", {}).items())
    top = ", ".join(f"{n} {c.replace('_', ' ')}" for c, n in cats[:6]) or "no point of interest"
    docs = len(profile.get("documents", []))
    return (
        f"Area {cell} ({profile.get('zones', 0)} zones): {profile.get('total', 0)} points of interest; "
        f"most common: {top}; mentioned by {docs} document(s). An {OPEN_DATA}."
    )
