"""`Carta`: the store, registry, encoders, ingestor, retriever and answerer, built once
from Settings and shared by the HTTP API and the CLI."""

from __future__ import annotations

import functools
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from docgraph.global_search import GlobalSearch
from docgraph.llm_extract import LLMExtractor
from docgraph.llm_summaries import CommunitySummariser
from docgraph.store import ChunkText, DocGraphStore
from geo.country_names import country_code
from geo.gazetteer import Gazetteer
from graph.channel import GraphChannel
from index.backends import open_store
from index.collections import (
    POOLED_VECTOR,
    Collections,
    lite_collections,
    pages_collection_name,
    visual_collection,
)
from index.page_images import PageImages
from index.pooling import pool
from index.registry import Document, Registry
from index.sqlite import checkpoint_file
from index.types import Filter
from index.vector_store import VectorStore
from models.errors import ModelUnavailable
from models.llm_client import LLMClient, LLMConfig
from models.sparse_encoder import SparseEncoder
from models.text_encoder import TextEncoder
from service.answer.extractive import ExtractiveAnswerer
from service.answer.gate import RelevanceGate, question_language
from service.answer.global_answer import global_answer_events, global_sources
from service.answer.graph import graph_answer
from service.answer.llm import LLMAnswerer, PageImage, PageText, answer_events, extractive_events
from service.answer.prompting import Budget
from service.answer.sentence_filler import BackgroundSentences
from service.answer.sentence_vectors import SentenceVectors
from service.answer.types import Answer, Event
from service.erasure import JOURNAL_NAME, ErasureJournal
from service.errors import DocumentNotFound
from service.jobs import JobStore
from service.query import dictionary
from service.query.channels import ChannelContext, build_channels
from service.query.channels.communities import GlobalChannel
from service.query.channels.entities import EntitiesChannel
from service.query.channels.graph import GraphEvidence, GraphEvidenceChannel
from service.query.geo_filter import GeoSpec, ResolvedGeo, point_test, resolve, resolve_place
from service.query.planner import PlannerLimits, QueryPlanner
from service.query.retrieval import Retriever
from service.query.router import asks_global
from service.query.types import PriorMode, SearchQuery, SearchResult
from service.query.visual import VisualProfile, reindex_message, with_visual
from service.settings import DEFAULT_CAPTION_PAGES, Settings

if TYPE_CHECKING:  # the document loaders import PyMuPDF (a second or more): built on first use
    from ingest.captions import Captioner
    from ingest.pipeline import Ingestor, IngestResult, ProgressFn
    from ingest.upload import IngestRequest

log = logging.getLogger(__name__)


PRIOR_MIN_CONFIDENCE = 0.6  # a prior only boosts (one more RRF list), so it may be bolder than a filter


def load_gazetteer(settings: Settings) -> Gazetteer:
    """GeoNames cities and countries plus the user's GeoJSON gazetteers."""
    gazetteer = Gazetteer.from_geonames(settings.gazetteer_min_population, settings.cache_dir)
    for path in settings.gazetteers:
        if not path.exists():
            raise FileNotFoundError(f"gazetteer {path} (CARTA_GAZETTEERS) does not exist")
        gazetteer.add_geojson(path)
    return gazetteer


def page_pooler(settings: Settings) -> Callable[[np.ndarray], np.ndarray]:
    """The lite page multivector's pooling (CARTA_PAGE_POOLING; sequential when it is off,
    for a collection that holds pooled vectors all the same: every page keeps one)."""
    method = "sequential" if settings.page_pooling == "off" else settings.page_pooling
    return functools.partial(pool, method=method, factor=settings.page_pool_factor)


def pages_hold_pooled(store: VectorStore, pages_name: str, settings: Settings) -> bool:
    """Whether the page collection holds pooled vectors: as stored (a data dir from before
    the pooled first stage opens as it is, exact MaxSim, until `carta reindex`), or for a
    new collection as CARTA_PAGE_POOLING says. Carta.reindex_needed tells the user."""
    stored = store.stored_vectors(pages_name)
    if stored is None:
        return settings.page_pooling != "off"
    return POOLED_VECTOR in stored


def load_visual(settings: Settings) -> tuple[VisualProfile | None, str | None]:
    """The visual encoders when the profile is `visual`; with CARTA_VISUAL_FALLBACK_LITE a
    model that cannot load leaves (None, why) and the lite channels serve alone.
    ModelUnavailable names the setting that is missing."""
    if settings.profile != "visual":
        return None, None
    from models.clip_encoder import ClipEncoder  # torch and open_clip: the visual profile only
    from models.page_encoder import ColPageEncoder

    try:
        if not settings.visual_model:
            raise ModelUnavailable(
                "the visual profile needs a ColPali-family model: set CARTA_VISUAL_MODEL to a model id in "
                "the Hugging Face cache or a local directory (or CARTA_PROFILE=lite)"
            )
        page = ColPageEncoder(
            settings.visual_model,
            family=settings.visual_family,
            device=settings.visual_device,
            batch_size=settings.visual_batch_size,
            max_visual_tokens=settings.visual_max_tokens,
            image_size=settings.visual_image_size,
        )
        clip = ClipEncoder(settings.clip_model, settings.clip_pretrained, settings.visual_device)
    except ModelUnavailable as exc:
        if not settings.visual_fallback_lite:
            raise
        log.warning("visual profile unavailable, serving the lite channels only: %s", exc)
        return None, str(exc)
    return (
        VisualProfile(
            page,
            clip,
            visual_collection(page.slug, page.dim, clip.slug, clip.dim),
            settings.visual_pooling,
            settings.visual_pool_factor,
            settings.visual_prefetch,
        ),
        None,
    )


def llm_config(settings: Settings) -> LLMConfig | None:
    """The endpoint from Settings, or None (extractive answers) when no URL is set."""
    if not settings.llm_base_url:
        return None
    return LLMConfig(
        base_url=settings.llm_base_url,
        model=settings.llm_model,
        api_key=settings.llm_api_key,
        timeout_s=settings.llm_timeout_s,
        max_retries=settings.llm_max_retries,
        max_tokens=settings.llm_max_tokens,
        temperature=settings.llm_temperature,
    )


def llm_budget(settings: Settings) -> Budget:
    """What an LLM prompt may carry (images, pixels, text tokens, answer length)."""
    return Budget(
        vision=settings.llm_vision,
        max_images=settings.llm_max_images,
        image_max_pixels=settings.llm_image_max_pixels,
        context_tokens=settings.llm_context_tokens,
        answer_words=settings.llm_answer_words,
    )


def llm_answerer(
    settings: Settings, gate: RelevanceGate, page_text: PageText, page_image: PageImage
) -> LLMAnswerer | None:
    """The configured LLM answerer, or None when CARTA_LLM_BASE_URL is unset."""
    config = llm_config(settings)
    if config is None:
        return None
    client = LLMClient(config)
    return LLMAnswerer(client, gate, llm_budget(settings), page_text, page_image, settings.llm_grade_evidence)


def captioner(settings: Settings) -> Captioner | None:
    """Chart/map page captions at ingestion (ingest/captions.py), when a vision LLM is
    configured and CARTA_CAPTION_PAGES is not 0."""
    config = llm_config(settings)
    default = DEFAULT_CAPTION_PAGES if config and settings.llm_vision else 0
    pages = default if settings.caption_pages is None else settings.caption_pages
    if config is None or pages <= 0:
        return None
    from ingest.captions import CaptionCache, Captioner

    cache = CaptionCache(settings.data_dir / "captions.sqlite3")
    return Captioner(LLMClient(config), cache, pages, settings.llm_image_max_pixels)


def open_graph(settings: Settings, gazetteer: Gazetteer | None, text: TextEncoder) -> GraphChannel | None:
    """The geospatial graph (POI datasets, MENTIONS, relational answers), None when off."""
    if not settings.graph_enabled:
        return None
    config = llm_config(settings)
    return GraphChannel(
        settings.graph_path,
        gazetteer,
        settings.graph_resolution,
        settings.graph_near_radius_m,
        settings.graph_near_max,
        settings.graph_area_radius_m,
        settings.graph_max_pairs,
        embed=text.embed,
        llm=LLMClient(config) if config else None,
        community_resolution=settings.graph_community_resolution,
        llm_summaries=settings.graph_llm_summaries,
        max_dataset_pois=settings.graph_max_dataset_pois,
    )


def docgraph_llm(settings: Settings, docgraph: DocGraphStore | None) -> LLMExtractor | None:
    """The LLM entity extractor when an LLM is configured and CARTA_DOCGRAPH_LLM_CHUNKS > 0."""
    config = llm_config(settings)
    if docgraph is None or config is None or settings.docgraph_llm_chunks == 0:
        return None
    return LLMExtractor(LLMClient(config), docgraph, settings.docgraph_llm_chunks)


def docgraph_summariser(settings: Settings, docgraph: DocGraphStore | None) -> CommunitySummariser | None:
    """The LLM's community reports when an LLM is configured and CARTA_DOCGRAPH_LLM_SUMMARIES > 0."""
    config = llm_config(settings)
    if docgraph is None or config is None or settings.docgraph_llm_summaries == 0:
        return None
    return CommunitySummariser(LLMClient(config), docgraph, settings.docgraph_llm_summaries)


def query_planner(
    settings: Settings, retriever: Retriever, docgraph: DocGraphStore | None
) -> QueryPlanner | None:
    """The query planner when CARTA_PLANNER is auto (routing by the LLM when one is
    configured) or translate (no routing: a question's translation searched too)."""
    if settings.planner == "off":
        return None
    config = llm_config(settings)
    return QueryPlanner(
        retriever.search,
        frozenset(c.selector for c in retriever.channels if c.selector),
        PlannerLimits(settings.planner_max_steps, settings.planner_max_tokens),
        recognise=docgraph.recognise if docgraph else None,
        llm=LLMClient(config) if config else None,
        text_language=retriever.text_language,
        route_questions=settings.planner == "auto",
    )


class Carta:
    """The service object: every collaborator is built here, from Settings, once."""

    def __init__(self, settings: Settings, text_encoder: TextEncoder | None = None) -> None:
        self.settings = settings
        dictionary.use(settings.dictionary_dir)  # the FreeDict word translations (read on first use)
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        self.text: TextEncoder = text_encoder or TextEncoder(
            settings.text_model, settings.device, settings.embed_batch_size, settings.text_bulk_bf16
        )
        self.sparse = SparseEncoder()
        # visual profile: page-image encoders (None in lite, or after a fallback: visual_error says why)
        self.visual: VisualProfile | None
        self.visual_error: str | None
        self.visual, self.visual_error = load_visual(settings)
        self.store: VectorStore = open_store(
            settings.data_dir,
            settings.qdrant_url,
            settings.qdrant_api_key,
            shards=settings.qdrant_shards,
            replication=settings.qdrant_replication,
        )
        # pages stored with pooled vectors (the default); False on a data dir from before them
        self.page_pooled = pages_hold_pooled(self.store, pages_collection_name(self.text.slug), settings)
        self.collections: Collections = with_visual(
            lite_collections(self.text.slug, self.text.dim, self.sparse.names, self.page_pooled),
            self.visual,
        )
        for spec in self.collections.all():
            self.store.ensure_collection(spec)
        self.gazetteer: Gazetteer | None = load_gazetteer(settings) if settings.geotag else None
        self.registry = Registry(settings.registry_path)
        self.images = PageImages(settings.pages_dir)
        self._ingestor: Ingestor | None = None
        self._ingestor_lock = threading.Lock()
        channels = ChannelContext(
            self.store,
            self.collections,
            self.sparse.names,
            visual=self.visual,
            prefetch_limit=settings.prefetch_limit,
            page_prefetch=settings.page_prefetch,
            page_two_stage=self.page_pooled and settings.page_pooling != "off",
            registry=self.registry,
            gazetteer=self.gazetteer,
        )
        text_language = settings.text_model_language or None  # empty: a multilingual model
        self.retriever = Retriever(self.text, self.sparse, build_channels(channels), text_language)
        self.docgraph: DocGraphStore | None = (
            DocGraphStore(
                settings.docgraph_path,
                embed=self.text.embed,
                merge_similarity=settings.docgraph_merge_similarity,
            )
            if settings.docgraph
            else None
        )
        self.entity_llm = docgraph_llm(settings, self.docgraph)
        self.community_llm = docgraph_summariser(settings, self.docgraph)
        self.sentence_vectors: SentenceVectors | None = (
            SentenceVectors(settings.sentence_vectors_path, self.text, text_language)
            if settings.sentence_vectors
            else None
        )
        # CARTA_SENTENCE_VECTORS_BACKGROUND: stored by a low-priority thread once a document is ready
        self.sentence_filler: BackgroundSentences | None = (
            BackgroundSentences(self.sentence_vectors)
            if self.sentence_vectors is not None and settings.sentence_vectors_background
            else None
        )
        self.gate = RelevanceGate(
            self.text,
            self.sparse,
            settings.min_relevance,
            sentence_vectors=self.sentence_vectors,
            text_language=text_language,
        )
        self.answerer = ExtractiveAnswerer(self.gate)
        self.graph: GraphChannel | None = open_graph(settings, self.gazetteer, self.text)
        self.graph_evidence = GraphEvidenceChannel(self.graph, self.registry) if self.graph else None
        self.llm: LLMAnswerer | None = llm_answerer(settings, self.gate, self.page_text, self.images.open)
        # Erasure: called with (tenant, doc_id) after a document's points, images and rows are
        # gone, so other stores derived from it (graph nodes, summaries, jobs) erase theirs.
        self.erasure_hooks: list[Callable[[str, str], None]] = []
        if self.graph is not None:
            self.erasure_hooks.append(self.graph.delete_document)
        # The job table lives with the service, not the API: an in-process `carta delete`
        # erases the finished jobs that name the file too.
        self.job_store = JobStore(settings.jobs_path)
        self.global_channel: GlobalChannel | None = None  # questions across the documents
        self.global_llm: LLMClient | None = None  # its map-reduce, when an LLM is configured
        if self.docgraph is not None:  # the document graph: extracted once a document is ready
            self.retriever.channels.append(
                EntitiesChannel(self.store, self.collections.chunks.name, self.docgraph)
            )
            self.global_channel = GlobalChannel(
                self.store,
                self.collections.chunks.name,
                GlobalSearch(self.docgraph, summaries=self.community_llm),
                self.registry,
                asks_global,
            )
            self.retriever.channels.append(self.global_channel)
            config = llm_config(settings)
            self.global_llm = LLMClient(config) if config else None
            self.erasure_hooks.append(self._erase_docgraph)
        if self.sentence_filler is not None:  # a pass in flight stores nothing for an erased document
            self.erasure_hooks.append(self.sentence_filler.cancel)
        elif self.sentence_vectors is not None:
            self.erasure_hooks.append(self.sentence_vectors.delete_document)
        self.planner = query_planner(settings, self.retriever, self.docgraph)
        self.erasure_hooks.append(self.job_store.delete_tenant_document)
        self.erasures = ErasureJournal(settings.data_dir / JOURNAL_NAME)
        self._closed = False
        self._resume_erasures()
        self._recover_interrupted()
        if stale := self.reindex_needed():
            log.warning(stale)

    @property
    def profile(self) -> str:
        """The profile actually served (lite after a visual fallback)."""
        return "visual" if self.visual else "lite"

    @property
    def ingestor(self) -> Ingestor:
        """The ingestion pipeline, built on first use (once, thread-safe): its document
        loaders import PyMuPDF, which a command that indexes nothing need not load."""
        with self._ingestor_lock:
            if self._ingestor is None:
                self._ingestor = self._build_ingestor()
            return self._ingestor

    def _build_ingestor(self) -> Ingestor:
        from ingest.geotagging import GeoTagger
        from ingest.loaders import LoadOptions
        from ingest.pipeline import Ingestor

        settings = self.settings
        ingestor = Ingestor(
            self.store,
            self.registry,
            self.images,
            self.text,
            self.sparse,
            self.collections,
            LoadOptions(
                render_dpi=settings.render_dpi,
                max_render_pixels=settings.max_render_pixels,
                ocr_enabled=settings.ocr_enabled,
                ocr_languages=settings.ocr_languages,
                ocr_dpi=settings.ocr_dpi,
                ocr_min_chars=settings.ocr_min_chars,
                max_pages=settings.max_pages,
                max_image_pixels=settings.max_image_pixels,
                max_page_content_bytes=settings.max_page_content_bytes,
                max_content_bytes=settings.max_content_bytes,
                layout=settings.layout,
                table_timeout_s=settings.table_timeout_s,
                chart_tables=settings.chart_tables,
                figure_text=settings.figure_text,
            ),
            chunk_chars=settings.chunk_chars,
            page_max_tokens=settings.page_max_tokens,
            max_upload_bytes=settings.max_upload_bytes,
            profile=self.profile,
            geotagger=GeoTagger(self.gazetteer, settings.geo_min_confidence) if settings.geotag else None,
            visual_points=self.visual.points if self.visual else None,
            page_pool=page_pooler(settings) if self.page_pooled else None,
            captioner=captioner(settings),
            read_ahead=settings.read_ahead_pages,
        )
        if ingestor.index_signature != self.index_signature:  # pragma: no cover - the two must agree
            raise RuntimeError(f"index signature {ingestor.index_signature!r} != {self.index_signature!r}")
        if self.graph is not None:
            ingestor.indexed_hooks["graph"] = self._index_graph_pages
        if self.docgraph is not None:  # the document graph: extracted once a document is ready
            ingestor.indexed_hooks["docgraph"] = self._index_docgraph
        if self.sentence_vectors is not None:
            ingestor.indexed_hooks["sentences"] = self._index_sentence_vectors
        return ingestor

    @property
    def index_signature(self) -> str:
        """What the registry records per document (profile and collections; the Ingestor
        records the same), known without building the ingestor."""
        visual = [self.collections.visual.name] if self.collections.visual else []
        return ":".join([self.profile, self.collections.chunks.name, *visual])

    def warm_up(self) -> None:
        """Load what the first query would otherwise wait for (the text model's weights,
        the GeoNames index, the bilingual dictionaries and CLDR's country names: 1.5 s of a
        first question's 1.7 s on a small index); `carta serve` runs it in the background
        after start-up."""
        self.text.embed(["warm-up"])
        if self.gazetteer is not None:
            self.gazetteer.find_places("Recife")
        dictionary.load()
        country_code("Brasil")

    def reindex_needed(self) -> str | None:
        """A message telling the user to re-index, if documents were indexed otherwise (or
        the pages lack the pooled vectors CARTA_PAGE_POOLING asks for)."""
        stale = self.registry.indexed_otherwise(self.index_signature)
        if stale:
            return reindex_message(len(stale), self.index_signature)
        if self.settings.page_pooling != "off" and not self.page_pooled:
            return (
                "the pages have no pooled vectors (indexed before CARTA_PAGE_POOLING): search is exact "
                "and slower on large corpora; run `carta reindex` to add them"
            )
        return None

    def _index_graph_pages(self, doc: Document, progress: ProgressFn | None = None) -> None:
        """Page nodes and MENTIONS edges from the geo payloads ingestion stored."""
        if self.graph is None or doc.status != "ready":
            return
        flt = Filter({"tenant": doc.tenant, "doc_id": doc.id})
        pages = [h.payload for h in self.store.scroll(self.collections.pages.name, flt)]
        self.graph.index_document(doc.tenant, doc.id, doc.title, pages)

    def _index_docgraph(self, doc: Document, progress: ProgressFn | None = None) -> None:
        """Entities, mentions and relations of a ready document's chunks (docgraph/): the
        offline extractors', plus the LLM's where one is configured (its chunks read
        reported as "entities" progress)."""
        if self.docgraph is None or doc.status != "ready":
            return
        from ingest.pipeline import Progress

        flt = Filter({"tenant": doc.tenant, "doc_id": doc.id})
        payloads = [h.payload for h in self.store.scroll(self.collections.chunks.name, flt)]
        chunks = [
            # no gazetteer places: precision 0.71 on eval/docgraph (< 0.9); the geo graph has them
            ChunkText(doc.id, p["page_no"], p["chunk_no"], p.get("text", ""))
            for p in sorted(payloads, key=lambda p: (p["page_no"], p["chunk_no"]))
        ]
        found = None
        if self.entity_llm is not None:
            report = (
                (lambda done, total: progress(Progress(doc.filename, "entities", done, total)))
                if progress
                else None
            )
            found, stats = self.entity_llm.extract_document(
                doc.tenant, doc.id, [((c.page_no, c.chunk_no), c.text) for c in chunks], report
            )
            log.info(
                "entities of %s/%s: %d chunks, %d LLM calls, %d cached, %d over budget, %d failed, "
                "%d+%d tokens",
                doc.tenant,
                doc.id,
                stats.chunks,
                stats.sent,
                stats.cached,
                stats.over_budget,
                stats.failed,
                stats.prompt_tokens,
                stats.completion_tokens,
            )
        self.docgraph.add_document(doc.tenant, chunks, found)
        self._refresh_community_reports(doc.tenant)

    def _erase_docgraph(self, tenant: str, doc_id: str) -> None:
        """The document's rows out of the document graph, then the reports of the communities
        it changed written again (docgraph/llm_summaries.py)."""
        assert self.docgraph is not None
        self.docgraph.delete_document(tenant, doc_id)
        self._refresh_community_reports(tenant)

    def _refresh_community_reports(self, tenant: str) -> None:
        """The LLM's reports of the communities that changed (none when it is off); never raises
        for the LLM, and a store error leaves the extractive summaries."""
        if self.community_llm is None:
            return
        try:
            stats = self.community_llm.refresh(tenant)
        except sqlite3.Error as exc:
            log.warning("community reports of %s not refreshed (%s); extractive summaries used", tenant, exc)
            return
        log.info(
            "community reports of %s: %d communities, %d LLM calls, %d cached, %d over budget, %d failed, "
            "%d pruned, %d+%d tokens",
            tenant,
            stats.communities,
            stats.sent,
            stats.cached,
            stats.over_budget,
            stats.failed,
            stats.pruned,
            stats.prompt_tokens,
            stats.completion_tokens,
        )

    def _index_sentence_vectors(self, doc: Document, progress: ProgressFn | None = None) -> None:
        """The vectors of a ready document's chunk sentences (service/answer/sentence_vectors.py),
        queued for the background pass when there is one; a store that cannot be written
        leaves the document to the gate's on-the-fly embedding."""
        if self.sentence_vectors is None or doc.status != "ready":
            return
        flt = Filter({"tenant": doc.tenant, "doc_id": doc.id})
        texts = [
            (h.payload.get("text", ""), h.payload.get("table") is not None)
            for h in self.store.scroll(self.collections.chunks.name, flt)
        ]
        if self.sentence_filler is not None:
            self.sentence_filler.submit(doc.tenant, doc.id, texts)
            return
        try:
            self.sentence_vectors.add_document(doc.tenant, doc.id, texts)
        except sqlite3.Error as exc:
            log.warning("sentence vectors of %s/%s not stored: %s", doc.tenant, doc.id, exc)

    def settle(self) -> None:
        """Wait for the background work of the documents ingested so far (their sentence
        vectors): a benchmark or a test that reads the stores calls it."""
        if self.sentence_filler is not None:
            self.sentence_filler.wait()

    def fill_sentence_vectors(self) -> int:
        """Store the sentence vectors of ready documents indexed before the store existed
        (their questions embed the sentences on the fly until then); returns how many
        documents were filled."""
        if self.sentence_vectors is None:
            return 0
        filled = 0
        for tenant, doc_id in self.registry.ids_with_status("ready"):
            doc = self.registry.get(tenant, doc_id)
            if doc is not None and not self.sentence_vectors.has_document(tenant, doc_id):
                self._index_sentence_vectors(doc)
                filled += 1
        self.settle()
        return filled

    def _recover_interrupted(self) -> None:
        """Documents left 'processing' by a crash are purged and marked failed, so no
        partial document is ever visible."""
        for tenant, doc_id in self.registry.ids_with_status("processing"):
            self.ingestor.purge(tenant, doc_id, keep_row=True)
            self.registry.set_status(tenant, doc_id, "failed", error="interrupted; upload the file again")
            log.warning("document %s/%s was interrupted during ingestion; marked failed", tenant, doc_id)

    def ingest(self, request: IngestRequest, progress: ProgressFn | None = None) -> IngestResult:
        """Index one file (`Ingestor.ingest`; the graph indexes its pages through the
        ingestor's hook)."""
        return self.ingestor.ingest(request, progress)

    def query(
        self,
        text: str,
        tenant: str,
        *,
        top_k: int = 5,
        doc_ids: list[str] | None = None,
        kinds: list[str] | None = None,
        channels: frozenset[str] | None = None,
        geo: GeoSpec | None = None,
        geo_prior: bool = True,
        geo_prior_mode: PriorMode | None = None,
        acl: list[str] | None = None,
    ) -> SearchQuery:
        """A search query with its geo filter resolved and, when no filter is given, the
        geo prior of a place the question names (unless turned off); `acl`: the caller's
        ACL tokens, matched inside every engine query."""
        q = SearchQuery(text, tenant, top_k, doc_ids, kinds, acl=acl)
        q.prior_mode = geo_prior_mode or self.settings.geo_prior_mode
        if channels:
            q.channels = channels
        q.geo = self.resolve_geo(geo)
        if q.geo is None and geo_prior and self.settings.geo_prior:
            q.prior = self.geo_prior(text)
        elif q.geo is not None:
            q.named = self.geo_prior(text)
        return q

    def resolve_geo(self, spec: GeoSpec | None) -> ResolvedGeo | None:
        """A request's geo filter as engine conditions (GeoFilterError when unusable)."""
        return resolve(spec, self.gazetteer) if spec is not None else None

    def geo_prior(self, question: str) -> ResolvedGeo | None:
        """The most confident place the question names, if any (for the geo prior channel)."""
        if self.gazetteer is None:
            return None
        matches = [m for m in self.gazetteer.find_places(question) if m.confidence >= PRIOR_MIN_CONFIDENCE]
        return resolve_place(max(matches, key=lambda m: m.confidence)) if matches else None

    def document(self, tenant: str, doc_id: str) -> Document:
        doc = self.registry.get(tenant, doc_id)
        if doc is None:
            raise DocumentNotFound(f"no document {doc_id!r}")
        return doc

    def delete(self, tenant: str, doc_id: str) -> dict[str, float]:
        """Erase the document: once this returns, its text, title, filename and metadata
        are in no file under the data dir (embedded store; see service/erasure.py). The
        request is journalled first, so a crash midway is finished at the next start.
        Synchronous, and it costs seconds (the vacuum rewrites each collection's segment):
        a delayed erasure would leave the data on disk for a window no caller can see.
        Returns timings in seconds."""
        self.document(tenant, doc_id)
        self.erasures.add(tenant, doc_id)
        if self.settings.erasure == "on_close":  # hidden now, off the disk at close / next start
            t0 = time.perf_counter()
            self._purge(tenant, doc_id)
            return {"purge_s": time.perf_counter() - t0, "total_s": time.perf_counter() - t0}
        return self._erase(tenant, doc_id)

    def _purge(self, tenant: str, doc_id: str) -> None:
        """Delete the document's points, images and rows, then run the erasure hooks."""
        self.ingestor.purge(tenant, doc_id)
        for hook in self.erasure_hooks:
            hook(tenant, doc_id)

    def _erase(self, tenant: str, doc_id: str, *, resume: bool = False) -> dict[str, float]:
        """Purge the document everywhere, then take what the stores keep of deleted data
        off the disk; the journal entry is cleared only when every step succeeded."""
        t0 = time.perf_counter()
        flt = Filter({"tenant": tenant, "doc_id": doc_id})
        # the collections holding its points (after a crash they may be deleted already
        # but not erased, so a resumed erasure goes through all of them)
        held = [s.name for s in self.collections.all() if resume or self.store.count(s.name, flt)]
        self._purge(tenant, doc_id)
        timings = {"purge_s": time.perf_counter() - t0}
        for name in held:
            for key, value in self.store.erase_deleted(name).items():
                timings[key] = timings.get(key, 0.0) + value
        t1 = time.perf_counter()
        sqlite_files = [self.settings.registry_path, self.settings.graph_path, self.settings.jobs_path]
        sqlite_files += [self.settings.docgraph_path, self.settings.sentence_vectors_path]
        stuck = [p.name for p in sqlite_files if not checkpoint_file(p)]
        timings["sqlite_s"] = time.perf_counter() - t1
        timings["total_s"] = time.perf_counter() - t0
        if stuck:  # a reader in another process held an old snapshot for seconds
            log.warning(
                "erasure of %s/%s: the WAL of %s is still in use; finished at the next start",
                tenant,
                doc_id,
                ", ".join(stuck),
            )
        else:
            self.erasures.remove(tenant, doc_id)
        log.info(
            "erased %s/%s in %.2fs (%s)",
            tenant,
            doc_id,
            timings["total_s"],
            ", ".join(f"{k}={v:.2f}" for k, v in timings.items()),
        )
        return timings

    def _resume_erasures(self) -> None:
        """Finish the erasures a crash (or a busy SQLite WAL) interrupted, and those
        CARTA_ERASURE=on_close deferred."""
        for tenant, doc_id in self.erasures.pending():
            log.info("erasing %s/%s (deferred or interrupted)", tenant, doc_id)
            self._erase(tenant, doc_id, resume=True)

    def page_chunks(self, tenant: str, doc_id: str, page_no: int) -> list[dict[str, Any]]:
        """The chunks of one page in reading order (payload: chunk_no, text, bbox)."""
        flt = Filter({"tenant": tenant, "doc_id": doc_id, "page_no": page_no})
        hits = self.store.scroll(self.collections.chunks.name, flt)
        return sorted((h.payload for h in hits), key=lambda p: p["chunk_no"])

    def search(self, query: SearchQuery) -> SearchResult:
        """The planned search when CARTA_PLANNER=auto, else the single-shot one."""
        return self.planner.search(query) if self.planner else self.retriever.search(query)

    def page_text(self, tenant: str, doc_id: str, page_no: int) -> str:
        return "\n".join(c["text"] for c in self.page_chunks(tenant, doc_id, page_no))

    def ask(self, query: SearchQuery) -> Answer:
        return next(e.data for e in self.ask_events(query, stream=False) if e.kind == "done")

    def ask_events(self, query: SearchQuery, stream: bool = True) -> Iterator[Event]:
        """evidence, token..., citations, done: by the graph for relational questions, else by the LLM
        when one is configured, else extractive."""
        result = self.search(query)
        if result.plan is not None and result.plan.get("router") != "none":
            yield Event("plan", result.plan)  # the routes and steps; a translation alone is in done's plan
        evidence = None
        if self.graph_evidence is not None:  # relational questions: the graph's verified pairs, not the LLM
            language = question_language(query.text)
            within = point_test(query.geo) if query.geo is not None else None  # the request's area
            evidence = self.graph_evidence.run(query.text, query.tenant, query.acl, language, within)
        found = None
        if evidence is None and self.global_channel is not None and self._asks_global(query, result):
            found = self.global_channel.ranked(query.tenant, query.text, query.acl, query.doc_ids)
        if evidence is not None and (
            _data_lacks(evidence) or _nothing_found(evidence) or _none_listed(evidence)
        ):
            # the loaded data lacks the asked category or attribute ("pontos de alagamento"),
            # or holds nothing that meets the question ("near which landmark is the sampling
            # point ON 200": no landmark pair in Salvador's data): the documents may still say
            # it; the data's answer, naming what it holds, stands only when they do not
            documents = next(e.data for e in self._document_events(query, result, False) if e.kind == "done")
            chosen = graph_answer(query.text, result, evidence) if documents.refused else documents
            events: Iterator[Event] = answer_events(chosen, result)
        elif evidence is not None:
            events = answer_events(graph_answer(query.text, result, evidence), result)
        elif found is not None and found.communities:  # across the documents: their communities
            sent = global_sources(
                found,
                lambda d, p: self.page_chunks(query.tenant, d, p),
                lambda d: doc.title if (doc := self.registry.get(query.tenant, d)) else d,
            )
            events = global_answer_events(
                query.text, result, found, sent, self.global_llm, self.settings.llm_context_tokens, stream
            )
        else:
            events = self._document_events(query, result, stream)
        for event in events:
            if event.kind == "done":
                event.data.geo_filter, event.data.geo_prior = result.geo_filter, result.geo_prior
                event.data.plan = result.plan
            yield event

    def _document_events(self, query: SearchQuery, result: SearchResult, stream: bool) -> Iterator[Event]:
        """The answer from the retrieved pages: by the LLM when one is configured, else extractive."""
        if self.llm:
            return self.llm.events(query.text, result, query.tenant, stream=stream)
        return extractive_events(
            self.answerer, query.text, result, lambda d, p: self.page_chunks(query.tenant, d, p)
        )

    @staticmethod
    def _asks_global(query: SearchQuery, result: SearchResult) -> bool:
        """Whether the question asks across the documents: the planner's route when it ran,
        else the router's rule; a query whose channels leave "global" out does not."""
        if query.channels is not None and "global" not in query.channels:
            return False
        if result.plan is not None and result.plan.get("router") != "none":
            return "global" in result.plan.get("routes", [])
        return asks_global(query.text)

    def close(self) -> None:
        """Finish deferred erasures, then close every store; closing twice does nothing."""
        if self._closed:
            return
        self._closed = True
        if self.sentence_filler is not None:  # the queued documents' vectors first (they read chunks)
            self.sentence_filler.close()
        self._resume_erasures()  # CARTA_ERASURE=on_close: the deleted documents leave the disk now
        self.store.close()
        self.registry.close()
        self.job_store.close()
        if self._ingestor is not None and self._ingestor.captioner is not None:
            self._ingestor.captioner.cache.close()
        if self.graph is not None:
            self.graph.close()
        if self.docgraph is not None:
            self.docgraph.close()
        if self.sentence_vectors is not None:
            self.sentence_vectors.close()


def _data_lacks(evidence: GraphEvidence) -> bool:
    """The graph's analytic plan asked for a category or attribute the loaded data lacks."""
    return evidence.analytic is not None and evidence.analytic.unknown is not None


def _none_listed(evidence: GraphEvidence) -> bool:
    """An analytic list or filter over the loaded data that found no feature ("Quais são as
    coordenadas do Parque da Jaqueira?" read as the parks in the bairro Jaqueira): the
    documents may name it; "none in the loaded data" stands only when they do not."""
    found = evidence.analytic
    return (
        found is not None
        and found.plan.operation in ("list", "filter")
        and not found.rows
        and not found.value
    )


def _nothing_found(evidence: GraphEvidence) -> bool:
    """A relational question over the loaded data that found no pair: no point and no pair,
    or points but none of the pairs it asks for ("Qual bairro teve mais pontos de
    alagamento?" read as bairro / flooding-point pairs, with no flooding point loaded)."""
    found = evidence.relational
    return (
        evidence.analytic is None
        and evidence.overview is None
        and found is not None
        and (
            not (found.pairs or found.pois or found.zones)
            or (bool(found.constraints.pairs) and not found.pairs)
        )
    )
