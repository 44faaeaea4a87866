"""The note every table read from a chart's picture carries in its title (ingest/charts.py,
ingest/chart_lines.py), so an answer says its value is an estimate. Its own module: the
answer step reads it without importing the chart readers (OCR, PyMuPDF)."""

TITLE_NOTE = "values read from the chart image, not printed figures"
