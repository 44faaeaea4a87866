"""The HTTP API: the FastAPI app (app.py), one router per resource (routes/), typed
dependencies (deps.py) and app state (state.py), one middleware per file (middleware/),
the one error table (errors.py) and the SSE answer stream (streaming.py)."""
