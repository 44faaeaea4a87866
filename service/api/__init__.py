"""The HTTP API: FastAPI app (app.py), one router per resource (routes/), error table (errors.py)."""
