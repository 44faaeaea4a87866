"""The graph channel cites only ready pages the caller may see (index/acl.py)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from graph.channel import GraphChannel, MentioningPage
from graph.store import DocFilter
from index.acl import caller_tokens
from index.registry import Document, PageRecord, Registry
from service.query.channels.graph import GraphEvidenceChannel


class _Overview:
    zones = [{"h3": "87a8100c9ffffff"}]


class _FakeGraph:
    """Answers every question with a corpus-wide overview whose zones three pages mention."""

    def analyze(self, question: str, tenant: str, within: Any = None) -> None:
        return None  # no analytical plan: the question goes to the corpus-wide overview

    def answer_global(
        self, question: str, tenant: str, language: str, visible: DocFilter | None, within: Any = None
    ) -> Any:
        return _Overview()

    def pages_mentioning_zones(
        self, tenant: str, cells: Sequence[str], visible: DocFilter | None
    ) -> list[MentioningPage]:
        docs = [doc for doc in ("open", "finance", "busy") if visible is None or visible(doc)]
        return [MentioningPage(doc, 1, doc, f"excerpt of {doc}", 1) for doc in docs]


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[Registry]:
    registry = Registry(tmp_path / "registry.sqlite3")
    docs = (("open", [], "ready"), ("finance", ["finance"], "ready"), ("busy", [], "processing"))
    for doc_id, acl, status in docs:
        registry.put(
            Document(
                "t",
                doc_id,
                doc_id.title(),
                f"{doc_id}.pdf",
                "application/pdf",
                "pdf",
                10,
                "lite",
                pages=1,
                status=status,
                acl=acl,
            )
        )
        registry.put_pages([PageRecord("t", doc_id, 1, 600, 800, "text", 10, 1)])
    yield registry
    registry.close()


def _cited(channel: GraphEvidenceChannel, tokens: list[str] | None) -> list[str]:
    evidence = channel.run("which areas have the most schools?", "t", tokens, "en")
    assert evidence is not None and evidence.overview is not None
    return [page.doc_id for page in evidence.pages]


def test_graph_pages_are_ready_and_visible_to_the_caller(registry: Registry) -> None:
    fake: Any = _FakeGraph()
    graph: GraphChannel = fake
    channel = GraphEvidenceChannel(graph, registry)
    assert _cited(channel, caller_tokens([])) == ["open"]
    assert _cited(channel, caller_tokens(["finance"])) == ["open", "finance"]
    assert _cited(channel, None) == ["open", "finance"]
    page = channel.run("q", "t", None, "en").pages[0]  # type: ignore[union-attr]
    assert (page.title, page.bbox) == ("Open", [0.0, 0.0, 600.0, 800.0])
    # the filter the graph is asked with: ready documents the caller may see
    visible = channel.doc_filter("t", caller_tokens([]))
    assert [d for d in ("open", "finance", "busy", "gone") if visible(d)] == ["open"]
    assert [d for d in ("open", "finance", "busy") if channel.doc_filter("t", None)(d)] == ["open", "finance"]
