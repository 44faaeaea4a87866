"""The app's middleware, one per module: body_limit (413 while an upload streams in) and
request_context (request id, access log, metrics)."""
