"""Relations of the document graph: co-occurrence in a chunk, and a typed relation where
the words between two organisations give the type ("vinculada ao", "a unit of"), read
from either end; a relation only one document supported leaves with it."""

from __future__ import annotations

from pathlib import Path

from docgraph.store import ChunkText, DocGraphStore

PT = (
    "O Instituto Brasileiro do Meio Ambiente e dos Recursos Naturais Renováveis (IBAMA), autarquia federal "
    "vinculada ao Ministério do Meio Ambiente (MMA), aplicou a multa."
)
EN = "The International Technical Support Organization (ITSO), a unit of the Acme Corporation (AC), wrote it."


def _relations(store: DocGraphStore, name: str) -> set[tuple[str, str]]:
    [entity] = [e for e in store.search("t", name) if e.name == name]
    return {(r["type"], r["name"]) for r in store.neighbours("t", entity.id)}


def test_typed_relations_in_both_languages_and_their_deletion(tmp_path: Path) -> None:
    store = DocGraphStore(tmp_path / "docgraph.sqlite3")
    store.add_document("t", [ChunkText("pt", 1, 0, PT)])
    store.add_document("t", [ChunkText("en", 1, 0, EN)])
    assert _relations(store, "IBAMA") == {("co-occurs", "MMA"), ("subordinate-to", "MMA")}
    assert _relations(store, "MMA") == {("co-occurs", "IBAMA"), ("superior-of", "IBAMA")}
    assert ("subordinate-to", "AC") in _relations(store, "ITSO")
    store.delete_document("t", "pt")
    assert store.search("t", "ibama") == [] and store.search("t", "mma") == []
    assert ("subordinate-to", "AC") in _relations(store, "ITSO")
    store.close()
