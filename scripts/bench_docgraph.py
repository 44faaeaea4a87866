"""Document-graph cost per page over the corpus PDFs' text layer, one document at a time
into a fresh store; prints tables.

Offline: extraction (docgraph/extract.py) and extraction + resolution + storage
(DocGraphStore.add_document, communities included).
--llm: the LLM extraction (docgraph/llm_extract.py) against the loopback OpenAI-protocol
server (tests/openai_protocol.py) scripted as an extracting model (it names the offline
organisations of each passage): LLM calls, prompt and completion tokens per page (as the
server counts them: 4 characters a token over the messages; the strict schema a real
endpoint also reads is shown apart), under the default budget (CARTA_DOCGRAPH_LLM_CHUNKS)
and unbounded, then the same documents again (cache hits: no call); and the community reports
(docgraph/llm_summaries.py) the LLM writes after each document, under the default budget
(CARTA_DOCGRAPH_LLM_SUMMARIES): calls and tokens per page (again: only the communities whose
content changed are written).

    .venv/bin/python scripts/bench_docgraph.py [--llm]
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import pymupdf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from docgraph.extract import extract  # noqa: E402
from docgraph.llm_extract import LLMExtractor, response_format  # noqa: E402
from docgraph.llm_summaries import CommunitySummariser  # noqa: E402
from docgraph.store import ChunkText, DocGraphStore, detect_communities  # noqa: E402
from models.llm_client import LLMClient, LLMConfig  # noqa: E402
from service.settings import Settings  # noqa: E402
from tests.openai_protocol import OpenAIProtocolServer, part_texts  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("CARTA_CORPUS_DIR", REPO.parent / "shared" / "corpus"))
CHUNK_CHARS = 900  # as CARTA_CHUNK_CHARS: the store sees chunks of about this size


def chunks_of(doc_id: str, pages: list[str]) -> list[ChunkText]:
    out = []
    for page_no, text in enumerate(pages, start=1):
        for chunk_no, start in enumerate(range(0, max(len(text), 1), CHUNK_CHARS)):
            out.append(ChunkText(doc_id, page_no, chunk_no, text[start : start + CHUNK_CHARS]))
    return out


def main() -> None:
    files = sorted((CORPUS / "pdf").glob("*.pdf"))
    if not files:
        sys.exit(f"no corpus PDFs under {CORPUS / 'pdf'}")
    t = time.perf_counter()
    detect_communities([(1, 2, 1.0)])  # imports leidenalg/igraph: once per process, not per page
    print(f"community library import (once per process): {(time.perf_counter() - t) * 1e3:.0f} ms")
    print(f"{'document':48} {'pages':>5} {'mentions':>8} {'extract ms/page':>15} {'store ms/page':>13}")
    total_pages, total_extract, total_store = 0, 0.0, 0.0
    with tempfile.TemporaryDirectory() as tmp:
        store = DocGraphStore(Path(tmp) / "docgraph.sqlite3")
        for path in files:
            with pymupdf.open(path) as doc:
                pages = [page.get_text() for page in doc]
            t0 = time.perf_counter()
            mentions = sum(len(extract(text)) for text in pages)
            t1 = time.perf_counter()
            store.add_document("bench", chunks_of(path.stem, pages))
            t2 = time.perf_counter()
            n = max(len(pages), 1)
            total_pages += len(pages)
            total_extract += t1 - t0
            total_store += t2 - t1
            extract_ms, store_ms = (t1 - t0) * 1e3 / n, (t2 - t1) * 1e3 / n
            print(f"{path.name[:48]:48} {len(pages):5d} {mentions:8d} {extract_ms:15.2f} {store_ms:13.2f}")
        store.close()
    print(
        f"{'all':48} {total_pages:5d} {'':8} {total_extract * 1e3 / total_pages:15.2f} "
        f"{total_store * 1e3 / total_pages:13.2f}"
    )


def extracting_model(body: dict) -> str:
    """The scripted model's reply: the organisations and programmes the offline extractors
    find in the passage, each related to the next; a community's report: its first entity as
    the title, its first sentence as the summary and one finding."""
    if (body.get("response_format") or {}).get("json_schema", {}).get("name") == "community_report":
        text = part_texts(body)[-1]
        first = text.split("\n")[1].removeprefix("- ") if "\n" in text else ""
        sentence = next((line[4:] for line in text.splitlines() if line.startswith("[1] ")), "")
        finding = [{"text": sentence[:200], "sentences": [1]}]
        return json.dumps({"title": first, "summary": sentence[:300], "findings": finding})
    passage = part_texts(body)[-1].removeprefix("PASSAGE:\n")
    orgs = [m for m in extract(passage) if m.kind in ("org", "programme")]
    entities = [
        {"name": m.text.split(" (")[0], "kind": m.kind, "acronym": m.acronym, "description": ""} for m in orgs
    ]
    relations = [
        {"source": a["name"], "target": b["name"], "type": "related to", "description": ""}
        for a, b in zip(entities, entities[1:], strict=False)
    ]
    return json.dumps({"entities": entities, "relations": relations})


def bench_llm() -> None:
    files = sorted((CORPUS / "pdf").glob("*.pdf"))
    docs = []
    for path in files:
        with pymupdf.open(path) as doc:
            docs.append((path, chunks_of(path.stem, [page.get_text() for page in doc])))
    schema_tokens = len(json.dumps(response_format())) // 4
    budget = Settings.model_fields["docgraph_llm_chunks"].default
    report_budget = Settings.model_fields["docgraph_llm_summaries"].default
    print(f"strict schema sent with every call: ~{schema_tokens} tokens (not in the counts below)")
    print(
        f"{'budget':>9} {'run':>6} {'pages':>5} {'chunks':>6} {'calls':>5} {'cached':>6} "
        f"{'calls/page':>10} {'prompt tok/page':>15} {'compl tok/page':>14} {'ms/page':>8} "
        f"{'report calls':>12} {'report calls/page':>17} {'report tok/page':>15}"
    )
    with OpenAIProtocolServer() as server, tempfile.TemporaryDirectory() as tmp:
        server.responder = extracting_model
        client = LLMClient(LLMConfig(base_url=server.url, model="bench-model", max_retries=0))
        for label, max_chunks in ((str(budget), budget), ("none", 100_000)):
            store = DocGraphStore(Path(tmp) / f"docgraph-{label}.sqlite3")
            extractor = LLMExtractor(client, store, max_chunks)
            summariser = CommunitySummariser(client, store, report_budget)
            for run in ("first", "again"):
                pages = chunks = calls = cached = prompt = completion = 0
                reports = report_tokens = 0
                t0 = time.perf_counter()
                for path, doc_chunks in docs:
                    refs = [((c.page_no, c.chunk_no), c.text) for c in doc_chunks]
                    found, stats = extractor.extract_document("bench", path.stem, refs)
                    store.add_document("bench", doc_chunks, found)
                    written = summariser.refresh("bench")
                    reports += written.sent
                    report_tokens += written.prompt_tokens + written.completion_tokens
                    pages += max(c.page_no for c in doc_chunks)
                    chunks += stats.chunks
                    calls += stats.sent
                    cached += stats.cached
                    prompt += stats.prompt_tokens
                    completion += stats.completion_tokens
                ms = (time.perf_counter() - t0) * 1e3 / pages
                print(
                    f"{label:>9} {run:>6} {pages:5d} {chunks:6d} {calls:5d} {cached:6d} "
                    f"{calls / pages:10.2f} {prompt / pages:15.1f} {completion / pages:14.1f} {ms:8.1f} "
                    f"{reports:12d} {reports / pages:17.2f} {report_tokens / pages:15.1f}"
                )
            store.close()


if __name__ == "__main__":
    bench_llm() if "--llm" in sys.argv[1:] else main()
