"""State: vector collections (embedded Qdrant Edge or a Qdrant server), the document
registry (SQLite) and the page-image blob store."""
