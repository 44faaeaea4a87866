"""Run question sets against Carta and score them, with the single-channel baselines
(BM25-only, dense-only) measured in the same run. Carta is any CartaClient: in-process
(LocalClient) or a running server (HttpClient), so both give the same numbers."""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Literal

from service.cli.client import CartaClient, GeoBody, RequestFailed
from service.evaluation import metrics as m
from service.evaluation.metrics import PageKey
from service.evaluation.questions import NumberFact, Question
from service.query.types import PriorMode

SYSTEMS: dict[str, frozenset[str]] = {
    "carta": frozenset({"dense", "bm25", "pages"}),
    "bm25-only": frozenset({"bm25"}),
    "dense-only": frozenset({"dense"}),
    "pages-only": frozenset({"pages"}),  # the page multivector channel alone (CARTA_PAGE_POOLING)
}
# the geo prior's ranking modes beside the configured default ("carta"): every channel,
# only the prior differs (docs/evaluation.md); "off" is carta without the prior
PRIOR_VARIANTS: dict[str, PriorMode | Literal["off"]] = {
    "carta prior=filter": "filter",
    "carta prior=decay": "decay",
    "carta prior=h3vector": "h3vector",
    "carta prior=off": "off",
}
K = 10
LATENCY_KEYS = ("search_p50", "search_p95", "ask_p50", "ask_p95", "pages_search_p50", "pages_search_p95")


@dataclass
class QuestionResult:
    set: str
    id: str
    type: str
    language: str
    skipped: str | None = None
    retrieval: dict[str, dict[str, float | None]] = field(default_factory=dict)  # system -> metric
    answer: dict[str, Any] = field(default_factory=dict)
    latency_ms: dict[str, float] = field(default_factory=dict)


def _facts(q: Question) -> list[str | tuple[float, float]]:
    return [(f.number, f.tolerance) if isinstance(f, NumberFact) else f for f in q.facts]


def indexed_files(client: CartaClient) -> dict[str, str]:
    """File name -> document id of every ready document."""
    return {d["filename"]: d["id"] for d in client.documents() if d["status"] == "ready"}


def ranked_pages(
    client: CartaClient,
    text: str,
    channels: frozenset[str],
    geo: GeoBody | None,
    prior_mode: PriorMode | Literal["off"] | None = None,
    top_k: int = K,
) -> list[PageKey]:
    """The top `top_k` pages; `prior_mode` picks the geo prior's mode, "off" turns the prior
    off, None keeps the service's default. A search's channel lists grow with `top_k`, so the
    top 5 of a top-10 search may hold a page that /v1/ask's top-5 search does not."""
    body = client.search(
        text,
        top_k=top_k,
        channels=channels,
        geo=geo,
        geo_prior=prior_mode != "off",
        geo_prior_mode=None if prior_mode == "off" else prior_mode,
    )
    return [(h["doc_id"], h["page_no"]) for h in body["results"]]


def loaded_datasets(client: CartaClient) -> set[str]:
    """File names of the POI datasets loaded (geodata questions need theirs); none when the
    graph is off."""
    try:
        return {d["filename"] for d in client.datasets()}
    except RequestFailed:
        return set()


def _skip_reason(q: Question, doc_ids: dict[str, str], datasets: set[str] | None = None) -> str | None:
    missing = sorted({e.doc for e in q.evidence if e.doc not in doc_ids})
    if missing:
        return f"not indexed: {', '.join(missing)}"
    absent = sorted(set(q.datasets) - (datasets or set()))
    return f"dataset not loaded: {', '.join(absent)}" if absent else None


def answer_status(answer: dict[str, Any]) -> str:
    """What the user got: "answer", "passages" or "refused" (Answer.status; a server that
    does not send it yet is read from `refused`)."""
    return answer.get("status") or ("refused" if answer["refused"] else "answer")


def _cell_keys(q: Question, doc_ids: dict[str, str]) -> list[m.CellKey]:
    return [(doc_ids[c.doc], c.page, c.bbox) for c in q.cells or [] if c.doc in doc_ids]


def run_question(
    q: Question,
    set_name: str,
    client: CartaClient,
    doc_ids: dict[str, str],
    datasets: set[str] | None = None,
) -> QuestionResult:
    result = QuestionResult(set_name, q.id, q.type, q.language)
    result.skipped = _skip_reason(q, doc_ids, datasets)
    if result.skipped:
        return result
    units = [{(doc_ids[e.doc], p) for p in e.pages} for e in q.evidence]
    geo = q.geo.model_dump(exclude_none=True) if q.geo else None
    if q.type == "relational":
        return _run_relational(q, result, client, geo)
    if q.type == "geodata":
        return _run_geodata(q, result, client, geo)
    for system, channels in SYSTEMS.items():
        t = time.perf_counter()
        ranked = ranked_pages(client, q.question, channels, geo)
        if system == "carta":
            result.latency_ms["search"] = (time.perf_counter() - t) * 1e3
        if system == "pages-only":
            result.latency_ms["pages_search"] = (time.perf_counter() - t) * 1e3
        result.retrieval[system] = {
            "recall@1": m.recall_at_k(ranked, units, 1),
            "recall@5": m.recall_at_k(ranked, units, 5),
            "recall@10": m.recall_at_k(ranked, units, 10),
            "mrr": m.reciprocal_rank(ranked, units),
            "ndcg@10": m.ndcg_at_k(ranked, units, 10),
        }
    for system, mode in PRIOR_VARIANTS.items():
        ranked = ranked_pages(client, q.question, SYSTEMS["carta"], geo, prior_mode=mode)
        result.retrieval[system] = {
            "recall@1": m.recall_at_k(ranked, units, 1),
            "recall@5": m.recall_at_k(ranked, units, 5),
            "mrr": m.reciprocal_rank(ranked, units),
        }
    t = time.perf_counter()
    answer = client.ask(q.question, top_k=5, geo=geo)
    result.latency_ms["ask"] = (time.perf_counter() - t) * 1e3
    # citations the answer's checker flagged (LLM path: outside the evidence sent) count as invalid
    flagged: list[PageKey] = [(c["doc_id"], c["page_no"]) for c in answer.get("invalid_citations") or []]
    cited: list[PageKey] = [(c["doc_id"], c["page_no"]) for c in answer["citations"]] + flagged
    sent = {(e["doc_id"], e["page_no"]) for e in answer["evidence"]} - set(flagged)
    facts = _facts(q)
    texts = {key: client.page_text(*key) for key in set(cited)} if facts else {}
    answerable = q.type != "unanswerable"
    cited_boxes: list[m.CellKey] = [
        (c["doc_id"], c["page_no"], c.get("bbox") or []) for c in answer["citations"]
    ]
    result.answer = {
        "text": answer["answer"],
        "refused": answer["refused"],
        "status": answer_status(answer),
        "refusal_correct": answer["refused"] != answerable,
        "answerable_not_refused": (not answer["refused"]) if answerable else None,
        "cell_citation": m.cell_cited(cited_boxes, _cell_keys(q, doc_ids)),
        "fact_accuracy": m.fact_accuracy(answer["answer"], facts) if answerable else None,
        "citation_validity": m.citation_validity(
            cited, sent, texts, facts, {(doc, page) for doc, page, _ in _cell_keys(q, doc_ids)}
        ),
        "cited_expected_page": (any(k in u for u in units for k in cited) if units else None),
        "token_f1": m.token_f1(answer["answer"], q.reference) if q.reference else None,
        "injection_resisted": m.injection_resisted(answer["answer"], q.canary) if q.canary else None,
        "grounded": answer.get("grounded"),
        "invalid_citations": len(flagged),
        "answerer": answer.get("answerer", "extractive"),
        "usage": _usage(answer.get("usage")),
    }
    return result


USAGE_KEYS = ("images_sent", "image_pixels_sent", "context_tokens_est", "prompt_tokens", "completion_tokens")


def _usage(usage: dict[str, Any] | None) -> dict[str, Any] | None:
    """What one LLM answer consumed (None on the extractive path)."""
    if not usage:
        return None
    return {k: usage.get(k) for k in (*USAGE_KEYS, "model", "llm_calls")}


def _run_relational(
    q: Question, result: QuestionResult, client: CartaClient, geo: GeoBody | None
) -> QuestionResult:
    """Pairs returned in the answer's graph evidence against the ground-truth pairs."""
    t = time.perf_counter()
    answer = client.ask(q.question, top_k=5, geo=geo)
    result.latency_ms["ask"] = (time.perf_counter() - t) * 1e3
    returned = (answer.get("graph") or {}).get("pairs")
    if returned is None:
        result.skipped = "the answer carries no graph evidence (pairs) yet"
        return result
    scores = m.relational_scores([(p["a"], p["b"]) for p in returned], [(p.a, p.b) for p in q.pairs or []])
    result.answer = {
        "text": answer["answer"],
        "refused": answer["refused"],
        **{f"pairs_{k}": v for k, v in scores.items()},
    }
    return result


def _run_geodata(
    q: Question, result: QuestionResult, client: CartaClient, geo: GeoBody | None
) -> QuestionResult:
    """Exact answer (every fact in the text) and the rows it lists (in the text, or by name
    in `graph.rows`) against the truth of scripts/geodata_truth.py."""
    t = time.perf_counter()
    answer = client.ask(q.question, top_k=5, geo=geo)
    result.latency_ms["ask"] = (time.perf_counter() - t) * 1e3
    rows = (answer.get("graph") or {}).get("rows") or []
    names = [str(r.get("name") or "") for r in rows if isinstance(r, dict)]
    result.answer = {
        "text": answer["answer"],
        "refused": answer["refused"],
        "status": answer_status(answer),
        "answerable_not_refused": not answer["refused"],
        "fact_accuracy": m.fact_accuracy(answer["answer"], _facts(q)),
        "exact": m.all_facts_found(answer["answer"], _facts(q)),
        **m.rows_listed(q.rows or [], answer["answer"], names),
    }
    return result


def run(sets: dict[str, list[Question]], client: CartaClient, progress: Any = None) -> list[QuestionResult]:
    doc_ids = indexed_files(client)
    datasets = loaded_datasets(client) if any(q.datasets for qs in sets.values() for q in qs) else set()
    results = []
    for set_name, questions in sets.items():
        for q in questions:
            try:
                results.append(run_question(q, set_name, client, doc_ids, datasets))
            except RequestFailed as exc:  # one failed answer (LLM endpoint, HTTP error) does not end the run
                failed = QuestionResult(set_name, q.id, q.type, q.language, skipped=f"failed: {exc.message}")
                results.append(failed)
            if progress:
                progress(len(results))
    return results


RETRIEVAL_METRICS = ("recall@1", "recall@5", "recall@10", "mrr", "ndcg@10")
ANSWER_METRICS = (
    "fact_accuracy",
    "citation_validity",
    "cited_expected_page",
    "refusal_correct",
    "token_f1",
    "injection_resisted",
    "grounded",
    "invalid_citations",
    "pairs_precision",
    "pairs_recall",
    "pairs_f1",
)
# answer status split, refusals on answerable questions, table cells and geodata rows
STATUSES = ("answer", "passages", "refused")
OUTCOME_METRICS = ("answerable_not_refused", "cell_citation", "exact", "rows", "rows_text", "rows_graph")


def summarize(results: list[QuestionResult]) -> dict[str, Any]:
    """Means per set x system (retrieval), per set x type (answers), latency percentiles."""
    scored = [r for r in results if not r.skipped]
    retrieval: dict[str, dict[str, dict[str, float | None]]] = defaultdict(dict)
    by_type: dict[str, dict[str, dict[str, float | None]]] = defaultdict(dict)
    groups: dict[str, list[QuestionResult]] = defaultdict(list)
    for r in scored:
        groups[r.set].append(r)
        groups["all"].append(r)
    for group, rs in groups.items():
        for system in [*SYSTEMS, *PRIOR_VARIANTS]:
            retrieval[group][system] = {
                metric: m.mean(r.retrieval.get(system, {}).get(metric) for r in rs)
                for metric in RETRIEVAL_METRICS
            } | {"n": sum(1 for r in rs if r.retrieval.get(system, {}).get("recall@1") is not None)}
    types = sorted({r.type for r in scored})
    outcomes: dict[str, dict[str, float | None]] = {}
    for qtype in types:
        rs = [r for r in scored if r.type == qtype]
        row: dict[str, float | None] = {"n": len(rs)}
        for metric in ANSWER_METRICS:
            row[metric] = m.mean(
                None if r.answer.get(metric) is None else float(r.answer[metric]) for r in rs
            )
        for system in SYSTEMS:
            row[f"{system} recall@5"] = m.mean(r.retrieval.get(system, {}).get("recall@5") for r in rs)
        by_type[qtype] = row  # type: ignore[assignment]
        outcomes[qtype] = _outcomes(rs)
    outcomes["all"] = _outcomes(scored)
    usages = [r.answer["usage"] for r in scored if r.answer.get("usage")]
    llm_usage = {k: m.mean(u.get(k) for u in usages) for k in USAGE_KEYS} if usages else None
    searches = [r.latency_ms["search"] for r in scored if "search" in r.latency_ms]
    asks = [r.latency_ms["ask"] for r in scored if "ask" in r.latency_ms]
    pages = [r.latency_ms["pages_search"] for r in scored if "pages_search" in r.latency_ms]
    return {
        "questions": len(results),
        "scored": len(scored),
        "skipped": {r.id: r.skipped for r in results if r.skipped},
        "retrieval": retrieval,
        "by_type": by_type,
        "outcomes": outcomes,
        "refusals": {
            "unanswerable_refused": m.mean(
                float(r.answer["refusal_correct"]) for r in scored if r.type == "unanswerable" and r.answer
            ),
            "answerable_not_refused": m.mean(
                None
                if r.answer.get("answerable_not_refused") is None
                else float(r.answer["answerable_not_refused"])
                for r in scored
            ),
        },
        "answerers": sorted({r.answer["answerer"] for r in scored if r.answer.get("answerer")}),
        "invalid_citations": sum(r.answer.get("invalid_citations") or 0 for r in scored),
        "llm_usage_mean": llm_usage,
        "latency_ms": {
            "search_p50": m.percentile(searches, 50),
            "search_p95": m.percentile(searches, 95),
            "ask_p50": m.percentile(asks, 50),
            "ask_p95": m.percentile(asks, 95),
            "pages_search_p50": m.percentile(pages, 50),
            "pages_search_p95": m.percentile(pages, 95),
        },
    }


def _outcomes(rs: list[QuestionResult]) -> dict[str, float | None]:
    """Share of each answer status and the means of the outcome metrics over `rs`."""
    statuses = [r.answer["status"] for r in rs if r.answer.get("status")]
    row: dict[str, float | None] = {"n": len(rs)}
    for status in STATUSES:
        row[status] = statuses.count(status) / len(statuses) if statuses else None
    for metric in OUTCOME_METRICS:
        row[metric] = m.mean(None if r.answer.get(metric) is None else float(r.answer[metric]) for r in rs)
    return row


def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def markdown(summary: dict[str, Any]) -> str:
    lines = [
        f"# Carta evaluation\n\n{summary['scored']} of {summary['questions']} questions scored"
        f" ({len(summary['skipped'])} skipped, reasons in results.json).\n",
        "## Page retrieval (baselines measured in the same run)\n",
        "| set | system | n | R@1 | R@5 | R@10 | MRR | nDCG@10 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for group, systems in summary["retrieval"].items():
        for system, row in systems.items():
            lines.append(
                f"| {group} | {system} | {row['n']} | "
                + " | ".join(_fmt(row[k]) for k in RETRIEVAL_METRICS)
                + " |"
            )
    answerers = ", ".join(summary.get("answerers") or []) or "n/a"
    lines += [
        "",
        f"## Answers by question type (carta; answerer: {answerers})\n",
        f"Citations flagged outside the evidence sent: {summary.get('invalid_citations', 0)}"
        " (counted invalid in 'citation valid').\n",
        "| type | n | answer acc. (facts) | citation valid | cited expected page | refusal correct "
        "| token F1 | injection resisted | grounded | flagged citations | pairs P | pairs R | pairs F1 "
        + "".join(f"| R@5 {s} " for s in SYSTEMS)
        + "|",
        "|---" * (len(ANSWER_METRICS) + len(SYSTEMS) + 2) + "|",
    ]
    for qtype, row in summary["by_type"].items():
        cells = [row["n"], *(row[k] for k in ANSWER_METRICS), *(row[f"{s} recall@5"] for s in SYSTEMS)]
        lines.append(f"| {qtype} | " + " | ".join(_fmt(c) for c in cells) + " |")
    refusals = summary.get("refusals") or {}
    lines += [
        "",
        "## Answer status, refusals, table cells, geodata rows (carta)\n",
        f"Refusal correct on unanswerable: {_fmt(refusals.get('unanswerable_refused'))};"
        f" on answerable (not refused): {_fmt(refusals.get('answerable_not_refused'))}.\n",
        "| type | n | status answer | passages | refused | not refused (answerable) | cell citation "
        "| exact (all facts) | rows listed | rows in text | rows in graph.rows |",
        "|---" * (len(STATUSES) + len(OUTCOME_METRICS) + 2) + "|",
    ]
    for qtype, row in (summary.get("outcomes") or {}).items():
        cells = [row["n"], *(row[k] for k in STATUSES), *(row[k] for k in OUTCOME_METRICS)]
        lines.append(f"| {qtype} | " + " | ".join(_fmt(c) for c in cells) + " |")
    usage = summary.get("llm_usage_mean")
    if usage:
        lines += [
            "",
            "## LLM usage per answer (mean)\n",
            "| " + " | ".join(USAGE_KEYS) + " |",
            "|" + "---|" * len(USAGE_KEYS),
            "| " + " | ".join(_fmt(usage[k]) for k in USAGE_KEYS) + " |",
        ]
    lat = summary["latency_ms"]
    lines += [
        "",
        "## Latency (carta, in this run)\n",
        "| search p50 | search p95 | ask p50 | ask p95 | pages-only search p50 | pages-only search p95 |",
        "|---|---|---|---|---|---|",
        "| " + " | ".join(f"{_fmt(lat.get(k))} ms" for k in LATENCY_KEYS) + " |",
    ]
    return "\n".join(lines) + "\n"
