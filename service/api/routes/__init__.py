"""One APIRouter module per resource."""
