"""Readers of geodata files (OpenStreetMap, GeoJSON, CSV tables) shared by the document
formats (ingest/formats/) and the POI datasets of the graph (graph/sources.py): one
parser per file kind, returning plain records that each side turns into what it needs.
They raise `CorruptDocument` for a file they cannot read."""
