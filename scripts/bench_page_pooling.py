"""Lite page channel latency on a real data dir: exact MaxSim over every page against the
pooled first stage + exact MaxSim rerank (CARTA_PAGE_POOLING), same pages, same questions,
same run, calls interleaved so machine load hits both alike.

    CARTA_PAGE_POOLING=sequential carta eval --data-dir /tmp/pooled ... # or carta ingest
    .venv/bin/python scripts/bench_page_pooling.py --data-dir /tmp/pooled \
        -q samples/questions.yaml -q eval/questions/corpus.yaml

The data dir must have been built with pooling on (its pages hold both `late` and
`late_pooled`), with the pooling settings of the environment. Reported per first-stage
width: p50/p95 of the page channel call (the query's token vectors already encoded), the
ratio to exact, and how often the top page / top 10 agree with exact MaxSim.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from benchlib import machine_facts, percentile  # noqa: E402

from index.collections import PAGE_VECTOR, POOLED_VECTOR  # noqa: E402
from index.types import Branch, Hit  # noqa: E402
from service.carta import Carta  # noqa: E402
from service.evaluation.questions import load_questions  # noqa: E402
from service.query.filters import engine_filter  # noqa: E402
from service.query.types import SearchQuery  # noqa: E402
from service.settings import Settings  # noqa: E402

LIMIT = 20  # the page channel's limit at top_k = 10 (top_k * 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("-q", "--questions", type=Path, action="append", required=True)
    parser.add_argument("--widths", default="20,50,100", help="first-stage widths (CARTA_PAGE_PREFETCH)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tenant", help="default: CARTA_DEFAULT_TENANT")
    args = parser.parse_args(argv)
    settings = Settings(data_dir=args.data_dir, geotag=False)
    if settings.page_pooling == "off":
        parser.error("set CARTA_PAGE_POOLING to the pooling the data dir was built with")
    carta = Carta(settings)
    pages = carta.collections.pages.name
    questions = [q.question for path in args.questions for q in load_questions(path)]
    widths = [int(w) for w in args.widths.split(",")]
    store = carta.store
    timings: dict[str, list[float]] = {"exact": [], **{f"w{w}": [] for w in widths}}
    top1 = dict.fromkeys(widths, 0)
    overlap = dict.fromkeys(widths, 0.0)
    for text in questions:
        tokens = carta.text.embed_with_tokens([text])[0].tokens.tolist()
        flt = engine_filter(SearchQuery(text, args.tenant or settings.default_tenant))
        first, second = Branch(POOLED_VECTOR, tokens), Branch(PAGE_VECTOR, tokens)
        calls: dict[str, Callable[[], list[Hit]]] = {
            "exact": functools.partial(store.search, pages, PAGE_VECTOR, tokens, flt, LIMIT),
            **{
                f"w{w}": functools.partial(
                    store.two_stage_search, pages, first, second, flt, LIMIT, max(w, LIMIT)
                )
                for w in widths
            },
        }
        results = {name: call() for name, call in calls.items()}  # warm-up, and the agreement
        for r in range(args.repeats):  # alternate the order so neither goes first every time
            for name, call in calls.items() if r % 2 == 0 else reversed(calls.items()):
                t = time.perf_counter()
                call()
                timings[name].append((time.perf_counter() - t) * 1e3)
        want = [h.id for h in results["exact"]]
        for w in widths:
            ids = [h.id for h in results[f"w{w}"]]
            top1[w] += bool(ids[:1] == want[:1])
            overlap[w] += len(set(ids[:10]) & set(want[:10])) / max(1, len(want[:10]))
    n_pages = store.count(pages)
    facts = machine_facts()
    print("machine:", ", ".join(f"{k}={v}" for k, v in facts.items()))
    print(
        f"{n_pages} pages in {pages} ({settings.page_pooling}, factor {settings.page_pool_factor}), "
        f"{len(questions)} questions x {args.repeats} repeats, limit {LIMIT}\n"
    )
    print("| page channel | p50 ms | p95 ms | p50 vs exact | top-1 = exact | top-10 overlap |")
    print("|---|---|---|---|---|---|")
    base = percentile(timings["exact"], 50)
    print(f"| exact MaxSim | {base:.2f} | {percentile(timings['exact'], 95):.2f} | 1.00x | - | - |")
    for w in widths:
        t = timings[f"w{w}"]
        p50 = percentile(t, 50)
        print(
            f"| pooled, prefetch {w} | {p50:.2f} | {percentile(t, 95):.2f} | {p50 / base:.2f}x "
            f"| {top1[w] / len(questions):.3f} | {overlap[w] / len(questions):.3f} |"
        )
    carta.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
