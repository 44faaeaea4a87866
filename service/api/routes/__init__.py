"""One APIRouter module per resource: documents, search, ask, visual, datasets, jobs,
keys, ops and ui. Each defines `router`; service/api/app.py includes them."""
