"""The read path and the interfaces: retrieval, answering, HTTP API and CLI."""
