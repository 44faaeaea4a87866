"""Search at scale: a 10k (or 100k) page lite index built through the service's own store,
collections and payload builders, then searched through Carta's real query path.

    .venv/bin/python scripts/bench_scale.py --pages 10000 --out bench/scale.json
    .venv/bin/python scripts/bench_scale.py --pages 100000 --queries 20 --grid-pages 0   # ~24 GB, ~35 min

What is real: the store (qdrant-edge, the collections Carta creates, fp16 multivectors, payload
indexes), the payloads (index/payloads.py: tenant, ACL tokens, state; ingest.geotagging.geo_payload:
location, H3 tokens, the hashed H3 vector), the BM25 sparse vectors (models.sparse_encoder), the
query path (Carta.search: the real text encoder, every lite channel, the engine filter with
tenant + ACL + state, fusion) and the geo filter (service.query.geo_filter.resolve, a radius).
What is synthetic: the page texts are windows of real corpus text (the PDFs' words, in their
order, so BM25 and the dense channel see real term statistics) but the token vectors are
built from a word table (each word's token vectors from the real text model, out of context,
plus noise for context), not from a forward pass per page, which would take hours here.
Questions are 6-12 word spans of a target page: they name words the page holds.

Reported: build time (upsert rate), disk and RSS per page, search p50/p95 in-process (and over
HTTP with --http) with and without a 5 km geo filter, the page channel alone, and recall@10
of the default fast path against exact MaxSim on the same index (page channel and end to end);
plus the pooled first stage's recall by factor and prefetch in numpy on the same vectors (how
the default was chosen).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from dataclasses import replace  # noqa: E402

from bench_store import GEO_BOX, GEO_CENTRE, GEO_RADIUS_M  # noqa: E402
from benchlib import disk_usage, machine_facts, percentile  # noqa: E402

from index.acl import caller_tokens  # noqa: E402
from index.collections import CHUNK_VECTOR, GEO_VECTOR, PAGE_VECTOR, POOLED_VECTOR  # noqa: E402
from index.payloads import chunk_payload, page_payload  # noqa: E402
from index.pooling import pool  # noqa: E402
from index.registry import Document  # noqa: E402
from index.types import SparseVec, StorePoint, VectorValue  # noqa: E402
from ingest.geotagging import GeoTag, geo_payload, hashed_location  # noqa: E402
from ingest.pipeline import point_id  # noqa: E402
from ingest.tables import TABLE_VERSION  # noqa: E402
from service.carta import Carta  # noqa: E402
from service.query.channels.pages import PagesChannel  # noqa: E402
from service.query.geo_filter import GeoSpec, resolve  # noqa: E402
from service.query.types import SearchQuery  # noqa: E402
from service.settings import Settings  # noqa: E402

CORPUS = Path(os.environ.get("CARTA_CORPUS", REPO.parent / "shared" / "corpus"))
PAGE_TOKENS = 256  # the lite shape: 256 x 384 (bench_store's "lite")
WORDS_PER_PAGE = 180  # ~256 word pieces
CHUNKS_PER_PAGE = 3
PAGES_PER_DOC = 20
TENANTS = ("acme", "prefeitura", "ngo")
GROUPS = ((), ("finance",), ("field",), ("finance", "field"))  # () = the whole tenant (public)
CONTEXT_NOISE = 0.6  # norm of the per-token noise relative to the word vector (context)
BATCH = 50  # pages per upsert
TOP_K = 10
WORD = re.compile(r"[^\W\d_]{2,}", re.UNICODE)


def corpus_words() -> list[str]:
    """The words of the corpus PDFs in reading order (PyMuPDF text layer)."""
    import pymupdf

    words: list[str] = []
    for pdf in sorted((CORPUS / "pdf").glob("*.pdf")):
        with pymupdf.open(pdf) as doc:
            for page in doc:
                words += WORD.findall(page.get_text())
    if len(words) < 10_000:
        raise SystemExit(f"too few corpus words under {CORPUS}/pdf ({len(words)}); set CARTA_CORPUS")
    return words


class WordTable:
    """Token vectors per word, from the real text model (each word encoded on its own)."""

    def __init__(self, carta: Carta, words: list[str], rng: np.random.Generator) -> None:
        vocab = sorted(set(words))
        self.dim = carta.text.dim
        self.rng = rng
        self.tokens: dict[str, np.ndarray] = {}
        for start in range(0, len(vocab), 512):
            batch = vocab[start : start + 512]
            for word, emb in zip(batch, carta.text.embed_with_tokens(batch), strict=True):
                self.tokens[word] = emb.tokens.astype(np.float32)

    def mean(self, words: list[str]) -> np.ndarray:
        """A chunk's dense vector: the mean of its words' token vectors."""
        return np.concatenate([self.tokens[w] for w in words]).mean(axis=0)

    def page(self, words: list[str]) -> np.ndarray:
        """A page multivector: its words' token vectors with context noise, unit rows."""
        x = np.concatenate([self.tokens[w] for w in words])
        x = np.resize(x, (PAGE_TOKENS, self.dim)) if len(x) >= PAGE_TOKENS // 2 else x  # pages: 256
        noise = self.rng.standard_normal(x.shape, dtype=np.float32)
        x = x + CONTEXT_NOISE * noise / np.linalg.norm(noise, axis=1, keepdims=True)
        return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def geo_tag(rng: random.Random) -> GeoTag:
    min_lat, min_lon, max_lat, max_lon = GEO_BOX
    lat, lon = rng.uniform(min_lat, max_lat), rng.uniform(min_lon, max_lon)
    return GeoTag(lat, lon, "text-coordinate", f"({lat:.4f}; {lon:.4f})", 0.9, country="BR")


def build(
    carta: Carta, words: list[str], table: WordTable, n_pages: int, seed: int, kept: np.ndarray
) -> dict[str, object]:
    """Documents of PAGES_PER_DOC pages, spread over tenants and ACL groups; every page gets
    CHUNKS_PER_PAGE chunks and a location in GEO_BOX (90 %; the rest unlocated)."""
    rng = random.Random(seed)
    pages_name, chunks_name = carta.collections.pages.name, carta.collections.chunks.name
    pooled = any(d.name == POOLED_VECTOR for d in carta.collections.pages.dense)
    pooling = carta.settings.page_pooling if carta.settings.page_pooling != "off" else "sequential"
    page_texts: dict[str, tuple[str, list[str], list[str]]] = {}  # doc/page -> tenant, ACL, words
    t0 = time.perf_counter()
    for d in range(0, n_pages, PAGES_PER_DOC):
        tenant = TENANTS[(d // PAGES_PER_DOC) % len(TENANTS)]
        doc = Document(
            tenant, f"doc{d // PAGES_PER_DOC:06d}", f"Report {d // PAGES_PER_DOC}", f"r{d}.pdf",
            "application/pdf", "pdf", 1, carta.index_signature, pages=PAGES_PER_DOC, status="ready",
            acl=list(rng.choice(GROUPS)), table_version=TABLE_VERSION,
        )  # fmt: skip
        carta.registry.put(doc)
        page_points, chunk_points = [], []
        for page_no in range(1, min(PAGES_PER_DOC, n_pages - d) + 1):
            start = rng.randrange(0, len(words) - WORDS_PER_PAGE)
            text_words = words[start : start + WORDS_PER_PAGE]
            located = rng.random() < 0.9
            geo = geo_payload([geo_tag(rng)]) if located else {}
            per_chunk = WORDS_PER_PAGE // CHUNKS_PER_PAGE
            chunk_words = [text_words[i : i + per_chunk] for i in range(0, WORDS_PER_PAGE, per_chunk)]
            texts = [" ".join(cw) for cw in chunk_words]
            tokens = table.page(text_words)
            if (n := d + page_no - 1) < len(kept):  # the numpy pooling grid's copy
                kept[n] = tokens
            for i, (cw, text, sparse) in enumerate(
                zip(chunk_words, texts, carta.sparse.embed_documents(texts), strict=True)
            ):
                dense = table.mean(cw)
                vectors: dict[str, VectorValue] = {
                    CHUNK_VECTOR: (dense / np.linalg.norm(dense)).tolist(),
                    **{k: SparseVec(*v) for k, v in sparse.items()},
                }
                if (hashed := hashed_location(geo)) is not None:
                    vectors[GEO_VECTOR] = SparseVec(*hashed)
                payload = chunk_payload(
                    doc, kind="pdf_page", page_no=page_no, chunk_no=i, text=text,
                    bbox=(50.0, 100.0 + 200 * i, 550.0, 280.0 + 200 * i), page_size=[612, 792],
                    geo=geo, state="ready",
                )  # fmt: skip
                chunk_points.append(StorePoint(point_id(tenant, doc.id, f"c{page_no}.{i}"), vectors, payload))
            page_vectors: dict[str, VectorValue] = {PAGE_VECTOR: tokens.tolist()}
            if pooled:
                factor = carta.settings.page_pool_factor
                page_vectors[POOLED_VECTOR] = pool(tokens, pooling, factor).tolist()
            payload = page_payload(
                doc, kind="pdf_page", page_no=page_no, text=" ".join(texts), page_size=[612, 792],
                text_source="text", geo=geo, state="ready",
            )  # fmt: skip
            page_id = point_id(tenant, doc.id, f"p{page_no}")
            page_points.append(StorePoint(page_id, page_vectors, payload))
            page_texts[f"{doc.id}/{page_no}"] = (tenant, doc.acl, text_words)
        carta.store.upsert(chunks_name, chunk_points)
        carta.store.upsert(pages_name, page_points)
        if (d // PAGES_PER_DOC) % 50 == 0:
            print(
                f"  built {d + len(page_points)} / {n_pages} pages, {time.perf_counter() - t0:.0f} s",
                flush=True,
            )
    return {"build_s": time.perf_counter() - t0, "page_texts": page_texts}


def questions(page_texts: dict, n: int, seed: int) -> list[tuple[str, SearchQuery]]:
    """(target page id, query): a 6-12 word span of a random page, asked by a caller of its
    tenant holding its ACL group (the ACL condition is in every engine filter)."""
    rng = random.Random(seed)
    out = []
    for page_id in rng.sample(sorted(page_texts), n):
        tenant, acl, words = page_texts[page_id]
        size = rng.randint(6, 12)
        start = rng.randrange(0, len(words) - size)
        out.append(
            (
                page_id,
                SearchQuery(" ".join(words[start : start + size]), tenant, TOP_K, acl=caller_tokens(acl)),
            )
        )
    return out


def rss_anon() -> int:
    """Resident memory that is not a mapped file (the engine maps its segments: those pages
    are page cache the kernel can drop, the anonymous ones are what the process holds)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) * 1024
    return 0


def timed(fn, *args) -> tuple[float, object]:
    t = time.perf_counter()
    result = fn(*args)
    return (time.perf_counter() - t) * 1e3, result


def measure(carta: Carta, qs: list[tuple[str, SearchQuery]], repeats: int) -> dict[str, object]:
    """Latency of each path, calls interleaved (machine load hits all alike), and the
    agreement of the fast paths with exact MaxSim on the same questions."""
    pages = carta.retriever.channel("pages")
    assert isinstance(pages, PagesChannel)
    near = resolve(GeoSpec(lat=GEO_CENTRE[0], lon=GEO_CENTRE[1], radius_m=GEO_RADIUS_M), None)
    variants = {
        "all": lambda q: q,
        "all+geo": lambda q: replace(q, geo=near),
        "pages": lambda q: replace(q, channels=frozenset({"pages"})),
        "pages+geo": lambda q: replace(q, channels=frozenset({"pages"}), geo=near),
    }
    fast_path = pages.two_stage
    ms: dict[str, list[float]] = {f"{mode} {v}": [] for mode in ("fast", "exact") for v in variants}
    recall: dict[str, list[float]] = {v: [] for v in variants}
    target_hit = {"fast": 0, "exact": 0}
    carta.search(qs[0][1])  # warm-up: model load, engine caches
    for r in range(repeats):
        for target, q in qs:
            modes = ("fast", "exact") if r % 2 == 0 else ("exact", "fast")
            tops: dict[str, dict[str, list[str]]] = {}
            for mode in modes:
                pages.two_stage = fast_path if mode == "fast" else False
                tops[mode] = {}
                for name, make in variants.items():
                    t, result = timed(carta.search, make(q))
                    ms[f"{mode} {name}"].append(t)
                    tops[mode][name] = [f"{p.doc_id}/{p.page_no}" for p in result.pages]
            if r == 0:
                for name in variants:
                    want = tops["exact"][name][:TOP_K]
                    got = tops["fast"][name][:TOP_K]
                    recall[name].append(len(set(want) & set(got)) / max(1, len(want)))
                for mode in ("fast", "exact"):
                    target_hit[mode] += target in tops[mode]["all"]
    pages.two_stage = fast_path
    stages: dict[str, list[float]] = {"encode": [], "channels": [], "fusion": []}
    for _, q in qs:  # where the time of the default path goes (all channels + geo)
        result = carta.search(replace(q, geo=near))
        for k in stages:
            stages[k].append(result.timings_ms[k])
    widths = prefetch_widths(carta, qs, near)
    return {
        "stages_ms_fast_all_geo": {k: round(percentile(v, 50), 1) for k, v in stages.items()},
        "page_channel_by_prefetch": widths,
        "latency_ms": {
            k: {"p50": round(percentile(v, 50), 1), "p95": round(percentile(v, 95), 1)} for k, v in ms.items()
        },
        "recall_at_10_vs_exact": {k: round(float(np.mean(v)), 3) for k, v in recall.items()},
        "target_page_in_top10": {k: round(v / len(qs), 3) for k, v in target_hit.items()},
    }


def maxsim(pages: np.ndarray, q: np.ndarray) -> np.ndarray:
    """MaxSim of query tokens q (m, d) against pages (n, t, d), in blocks of 1,000 pages."""
    out = np.empty(len(pages), dtype=np.float32)
    for s in range(0, len(pages), 1000):
        out[s : s + 1000] = (pages[s : s + 1000].astype(np.float32) @ q.T).max(axis=1).sum(axis=1)
    return out


def prefetch_widths(carta: Carta, qs: list[tuple[str, SearchQuery]], near: object) -> list[dict[str, object]]:
    """The page channel alone (with the geo filter) by first-stage width: latency and
    recall@10 against exact MaxSim, on the stored pooling factor."""
    pages = carta.retriever.channel("pages")
    assert isinstance(pages, PagesChannel)
    default, two_stage = pages.prefetch, pages.two_stage
    only = [replace(q, channels=frozenset({"pages"})) for _, q in qs]
    pages.two_stage = False
    exact = [[(p.doc_id, p.page_no) for p in carta.search(q).pages] for q in only]
    rows = []
    for width in (50, 100, 200, 400, 800) if two_stage else ():
        pages.two_stage, pages.prefetch = True, width
        ms, rec = [], []
        for q, want in zip(only, exact, strict=True):
            t, result = timed(carta.search, q)
            ms.append(t)
            rec.append(len(set(want) & {(p.doc_id, p.page_no) for p in result.pages}) / max(1, len(want)))
        p50, p95 = round(percentile(ms, 50), 1), round(percentile(ms, 95), 1)
        rows.append(
            {"prefetch": width, "p50_ms": p50, "p95_ms": p95, "recall_at_10": round(float(np.mean(rec)), 3)}
        )
    pages.prefetch, pages.two_stage = default, two_stage
    return rows


def pooling_grid(
    carta: Carta, kept: np.ndarray, qs: list[tuple[str, SearchQuery]]
) -> list[dict[str, object]]:
    """Recall@10 of a sequential-pooled first stage + exact rerank against exact MaxSim, by
    pooling factor and prefetch width, in numpy over the first pages of the index (no
    filter), with the real encoder's query tokens."""
    queries = [e.tokens for e in carta.text.embed_with_tokens([q.text for _, q in qs])]
    exact = [maxsim(kept, q) for q in queries]
    n, t, d = kept.shape
    rows = []
    for factor in (4, 8, 16, 32):
        pooled = np.empty((n, t // factor, d), dtype=np.float32)
        for s in range(0, n, 1000):  # in blocks: the fp32 copy of 10k pages would be 4 GB
            block = kept[s : s + 1000].astype(np.float32).reshape(-1, t // factor, factor, d).mean(axis=2)
            pooled[s : s + 1000] = block / np.linalg.norm(block, axis=-1, keepdims=True)
        first = [maxsim(pooled, q) for q in queries]
        for width in (50, 100, 200, 400):
            rec = []
            for ex, fs in zip(exact, first, strict=True):
                cand = np.argsort(-fs)[:width]
                got = set(cand[np.argsort(-ex[cand])][:TOP_K])
                rec.append(len(set(np.argsort(-ex)[:TOP_K]) & got) / TOP_K)
            rows.append({"factor": factor, "prefetch": width, "pooled_vectors": t // factor,
                         "recall_at_10": round(float(np.mean(rec)), 3)})  # fmt: skip
        del pooled
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=2, help="timed passes over the questions")
    parser.add_argument(
        "--grid-pages", type=int, default=10_000, help="pages in the numpy pooling grid (0: none)"
    )
    parser.add_argument("--data-dir", type=Path, help="default: a temporary folder, removed after")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="measure the index an earlier run left in --data-dir instead of building one",
    )
    parser.add_argument("--out", type=Path, default=REPO / "bench-scale.json")
    args = parser.parse_args(argv)
    facts = machine_facts()
    print("machine:", ", ".join(f"{k}={v}" for k, v in facts.items()))
    root = args.data_dir or Path(tempfile.mkdtemp(prefix="carta-scale-"))
    proc = psutil.Process()
    settings = Settings(data_dir=root, geotag=False, graph=False, docgraph=False)
    carta = Carta(settings)
    rss0, anon0 = proc.memory_info().rss, rss_anon()
    words = corpus_words()
    table = WordTable(carta, words, np.random.default_rng(0))
    print(
        f"{len(words)} corpus words, {len(table.tokens)} distinct; "
        f"{'measuring the index in' if args.reuse else 'building'} {args.pages} pages ...",
        flush=True,
    )
    saved = root / "bench-scale-pages.json"  # what --reuse needs: the build time and page texts
    if args.reuse:
        if not saved.exists():
            raise SystemExit(f"--reuse: no index from an earlier run in {root} ({saved.name} missing)")
        built = json.loads(saved.read_text())
        if built["pages"] != args.pages:
            raise SystemExit(f"--reuse: {root} holds {built['pages']} pages, not {args.pages}")
        kept = np.empty((0, PAGE_TOKENS, table.dim), dtype=np.float16)  # no vectors kept: no grid
    else:
        kept = np.empty((min(args.grid_pages, args.pages), PAGE_TOKENS, table.dim), dtype=np.float16)
        built = build(carta, words, table, args.pages, seed=1, kept=kept)
        if args.data_dir is not None:
            saved.write_text(json.dumps({"pages": args.pages, **built}))
    page_texts = built.pop("page_texts")
    carta.close()  # flushed, as a restarted server finds it
    disk = disk_usage(root / "qdrant")
    t = time.perf_counter()
    carta = Carta(settings)
    reopen_s = time.perf_counter() - t
    qs = questions(page_texts, args.queries, seed=2)
    result = measure(carta, qs, args.repeats)
    rss = proc.memory_info().rss - rss0
    anon = rss_anon() - anon0
    grid = pooling_grid(carta, kept, qs) if len(kept) else []
    carta.close()
    if args.data_dir is None:
        shutil.rmtree(root, ignore_errors=True)
    report = {
        "machine": facts,
        "pages": args.pages,
        "chunks": args.pages * CHUNKS_PER_PAGE,
        "questions": args.queries,
        "repeats": args.repeats,
        "settings": {k: getattr(settings, k) for k in ("page_pooling", "page_pool_factor", "page_prefetch")},
        "build_s": round(built["build_s"], 1),
        "build_pages_per_s": round(args.pages / built["build_s"], 1),
        "reopen_s": round(reopen_s, 2),
        "disk_bytes_per_page": disk // args.pages,
        "rss_bytes_per_page": max(rss, 0) // args.pages,
        "rss_anon_bytes_per_page": max(anon, 0) // args.pages,
        **result,
        "pooling_grid": grid,
    }
    print_table(report)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(f"written {args.out}")
    return 0


def print_table(r: dict) -> None:
    s = r["settings"]
    print(
        f"\n{r['pages']} pages + {r['chunks']} chunks, {r['questions']} questions x {r['repeats']}; "
        f"pooling {s['page_pooling']} factor {s['page_pool_factor']} prefetch {s['page_prefetch']}"
    )
    print(
        f"build {r['build_s']} s ({r['build_pages_per_s']} pages/s), reopen {r['reopen_s']} s, "
        f"disk {r['disk_bytes_per_page'] // 1000} kB/page, RSS {r['rss_bytes_per_page'] // 1000} kB/page "
        f"(anonymous {r['rss_anon_bytes_per_page'] // 1000} kB/page)\n"
    )
    print(
        "| search (in-process, Carta.search) | fast p50 ms | fast p95 ms | exact p50 ms "
        "| exact p95 ms | recall@10 vs exact |"
    )
    print("|---|---|---|---|---|---|")
    lat = r["latency_ms"]
    for name, rec in r["recall_at_10_vs_exact"].items():
        f, e = lat[f"fast {name}"], lat[f"exact {name}"]
        print(f"| {name} | {f['p50']} | {f['p95']} | {e['p50']} | {e['p95']} | {rec} |")
    print(f"\ntarget page in the top 10: {r['target_page_in_top10']}")
    print(f"default path, all channels + geo, p50 ms by stage: {r['stages_ms_fast_all_geo']}")
    if r["page_channel_by_prefetch"]:
        print("\n| page channel alone (no geo), prefetch | p50 ms | p95 ms | recall@10 vs exact |")
        print("|---|---|---|---|")
        for w in r["page_channel_by_prefetch"]:
            print(f"| {w['prefetch']} | {w['p50_ms']} | {w['p95_ms']} | {w['recall_at_10']} |")
    if r["pooling_grid"]:
        print(
            "\n| pooling factor | vectors/page | "
            + " | ".join(f"prefetch {w}" for w in (50, 100, 200, 400))
            + " |"
        )
        print("|---|---|---|---|---|---|")
        for factor in sorted({g["factor"] for g in r["pooling_grid"]}):
            row = [g for g in r["pooling_grid"] if g["factor"] == factor]
            print(
                f"| {factor} | {row[0]['pooled_vectors']} | "
                + " | ".join(str(g["recall_at_10"]) for g in row)
                + " |"
            )


if __name__ == "__main__":
    raise SystemExit(main())
