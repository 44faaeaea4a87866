"""Example questions made from what a tenant holds, so a newcomer sees questions its own
documents and datasets can answer: a place a document names ("What are the coordinates
of Parque da Jaqueira?"), a cell of a table it holds, the categories of its POI datasets
("Which cafés are within 200 m of pharmacies?"). In the caller's language (pt or en);
only documents the caller may see."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal

from graph.categories import LABELS
from graph.channel import GraphChannel
from index.registry import Document

Language = Literal["en", "pt"]
MAX_DOCUMENTS = 4  # the newest ready documents looked at (one page each)
MAX_QUESTIONS = 6
MAX_NAME_CHARS = 60  # a longer place or cell label makes an unreadable question


@dataclass(frozen=True)
class Example:
    text: str
    language: Language
    source: Literal["document", "dataset"]
    source_id: str
    source_name: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


PageChunks = Callable[[str, str, int], list[dict[str, Any]]]  # (tenant, doc_id, page_no) -> payloads


def example_questions(
    docs: list[Document],
    page_chunks: PageChunks,
    graph: GraphChannel | None,
    tenant: str,
    language: Language,
) -> list[Example]:
    """Up to MAX_QUESTIONS questions: from the datasets first (they answer exactly), then
    one per document, newest first. `docs`: the caller's visible, ready documents."""
    out = dataset_questions(graph, tenant, language) if graph is not None else []
    newest = sorted(docs, key=lambda d: d.created_at, reverse=True)[:MAX_DOCUMENTS]
    for doc in newest:
        question = document_question(doc, page_chunks(tenant, doc.id, 1), language)
        if question is not None:
            out.append(question)
    seen: set[str] = set()
    unique = [e for e in out if not (e.text in seen or seen.add(e.text))]
    return unique[:MAX_QUESTIONS]


def label(category: str, language: Language) -> str:
    en, pt = LABELS.get(category, (category.replace("_", " "), category.replace("_", " ")))
    return pt if language == "pt" else en


def dataset_questions(graph: GraphChannel, tenant: str, language: Language) -> list[Example]:
    """A pairs question from the two largest categories, a count of the largest."""
    out: list[Example] = []
    for info in graph.datasets(tenant):
        schema = graph.store.dataset_schema(tenant, info.id) or {}
        ranked = sorted((schema.get("categories") or {}).items(), key=lambda kv: (-kv[1], kv[0]))
        cats = [c for c, n in ranked if n > 0]
        if not cats:
            continue
        a = label(cats[0], language)
        if len(cats) >= 2:
            b = label(cats[1], language)
            text = (
                f"Quais {a} ficam a menos de 200 m de {b}?"
                if language == "pt"
                else f"Which {a} are within 200 m of {b}?"
            )
            out.append(Example(text, language, "dataset", info.id, info.name))
        text = f"Quantos {a} existem?" if language == "pt" else f"How many {a} are there?"
        out.append(Example(text, language, "dataset", info.id, info.name))
    return out


def document_question(doc: Document, chunks: list[dict[str, Any]], language: Language) -> Example | None:
    """A table cell's question, else a named place's coordinates, else what the title says."""
    for chunk in chunks:
        table = chunk.get("table") or {}
        columns = [str(c).strip() for c in table.get("columns") or []]
        rows = table.get("rows") or []
        if len(columns) >= 2 and rows and rows[0]:
            row = str(rows[0][0].get("text", "")).strip()
            column = columns[1]
            if row and column and len(row) <= MAX_NAME_CHARS and len(column) <= MAX_NAME_CHARS:
                text = (
                    f"Qual é o valor de {column} para {row}?"
                    if language == "pt"
                    else f"What is the {column} of {row}?"
                )
                return Example(text, language, "document", doc.id, doc.title)
    for chunk in chunks:
        for tag in chunk.get("geo_tags") or []:
            name = str(tag.get("label") or "").strip()
            if name and len(name) <= MAX_NAME_CHARS and not name[0].isdigit():
                text = (
                    f"Quais são as coordenadas de {name}?"
                    if language == "pt"
                    else f"What are the coordinates of {name}?"
                )
                return Example(text, language, "document", doc.id, doc.title)
    title = doc.title.strip()
    if not title:
        return None
    text = f"O que diz o documento {title}?" if language == "pt" else f"What does {title} say?"
    return Example(text, language, "document", doc.id, doc.title)
