"""The document graph in SQLite: entities, aliases (the merges and why), mentions with
their chunk, relations, communities and their extractive summaries; a tenant column on
every row.

Incremental: `add_document` writes one document's mentions and relations; its
`delete_document` removes them, then every entity, alias and relation only it supported,
then recomputes the tenant's communities (those it touched and the rest: one Leiden run
over the tenant's relation graph, cheap at this size). Relations and aliases are kept per
document, so nothing needs recounting on delete. Erasure: secure_delete and a WAL
checkpoint (index/sqlite.py) leave no byte of a deleted document in the file.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from docgraph.extract import NAMED_KINDS, RELATION_INVERSE, Mention, extract, is_acronym, typed_relations
from docgraph.llm_extract import ChunkExtraction
from docgraph.resolve import EMBED_KINDS, Resolved, embeddable, merge_by_embedding, nearest, resolve
from geo.folding import fold, fold_words
from index.sqlite import Migration, add_column, checkpoint, connect, migrate, transaction

SENTENCE_CHARS = 280  # a mention's sentence, as kept for summaries and the API
SUMMARY_ENTITIES = 5
SUMMARY_SENTENCES = 3
# kinds whose entity, related to nothing, still forms a community (codes, dates, amounts do not)
LONE_KINDS = ("org", "programme", "law", "person", "product", "event")
T = TypeVar("T")
DocFilter = Callable[[str], bool]  # whether a document id may be shown to the caller
Embed = Callable[[list[str]], np.ndarray]  # texts -> unit vectors (the text encoder's embed)

SCHEMA = """
CREATE TABLE IF NOT EXISTS entities (
    tenant TEXT NOT NULL, id INTEGER PRIMARY KEY, key TEXT NOT NULL, kind TEXT NOT NULL,
    name TEXT NOT NULL, UNIQUE (tenant, key));
CREATE TABLE IF NOT EXISTS aliases (
    tenant TEXT NOT NULL, entity_id INTEGER NOT NULL, alias TEXT NOT NULL, rule TEXT NOT NULL,
    doc_id TEXT NOT NULL, page_no INTEGER NOT NULL, chunk_no INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS aliases_by_alias ON aliases (tenant, alias);
CREATE INDEX IF NOT EXISTS aliases_by_doc ON aliases (tenant, doc_id);
CREATE TABLE IF NOT EXISTS mentions (
    tenant TEXT NOT NULL, entity_id INTEGER NOT NULL, doc_id TEXT NOT NULL, page_no INTEGER NOT NULL,
    chunk_no INTEGER NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL, text TEXT NOT NULL,
    rule TEXT NOT NULL, extractor TEXT NOT NULL, sentence TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS mentions_by_entity ON mentions (tenant, entity_id);
CREATE INDEX IF NOT EXISTS mentions_by_doc ON mentions (tenant, doc_id);
CREATE TABLE IF NOT EXISTS relations (
    tenant TEXT NOT NULL, source INTEGER NOT NULL, target INTEGER NOT NULL, type TEXT NOT NULL,
    doc_id TEXT NOT NULL, count INTEGER NOT NULL, chunks TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS relations_by_doc ON relations (tenant, doc_id);
CREATE INDEX IF NOT EXISTS relations_by_source ON relations (tenant, source);
CREATE INDEX IF NOT EXISTS relations_by_target ON relations (tenant, target);
CREATE TABLE IF NOT EXISTS communities (
    tenant TEXT NOT NULL, entity_id INTEGER NOT NULL, community INTEGER NOT NULL,
    PRIMARY KEY (tenant, entity_id));
CREATE TABLE IF NOT EXISTS summaries (
    tenant TEXT NOT NULL, community INTEGER NOT NULL, entities TEXT NOT NULL, summary TEXT NOT NULL,
    PRIMARY KEY (tenant, community));
"""
# the LLM's per-chunk replies (docgraph/llm_extract.py), keyed by chunk hash; one row per
# document that holds the chunk, so deleting a document deletes its rows and no other's
LLM_CACHE = """
CREATE TABLE IF NOT EXISTS llm_extractions (
    tenant TEXT NOT NULL, doc_id TEXT NOT NULL, key TEXT NOT NULL, reply TEXT NOT NULL,
    PRIMARY KEY (tenant, doc_id, key));
CREATE INDEX IF NOT EXISTS llm_extractions_by_key ON llm_extractions (tenant, key);
"""
# the LLM's community reports (docgraph/llm_summaries.py), keyed by a hash of the community's
# content, with the documents that content came from: deleting any of them deletes the report
LLM_SUMMARIES = """
CREATE TABLE IF NOT EXISTS llm_summaries (
    tenant TEXT NOT NULL, key TEXT NOT NULL, reply TEXT NOT NULL, PRIMARY KEY (tenant, key));
CREATE TABLE IF NOT EXISTS llm_summary_sources (
    tenant TEXT NOT NULL, key TEXT NOT NULL, doc_id TEXT NOT NULL, PRIMARY KEY (tenant, key, doc_id));
CREATE INDEX IF NOT EXISTS llm_summary_sources_by_doc ON llm_summary_sources (tenant, doc_id);
"""
# the text encoder's vector of each entity name that embedding resolution compares
# (docgraph/resolve.py nearest_entity); deleted with its entity
NAME_VECTORS = """
CREATE TABLE IF NOT EXISTS name_vectors (
    tenant TEXT NOT NULL, entity_id INTEGER NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (tenant, entity_id));
"""
MIGRATIONS: list[Migration] = [
    SCHEMA,
    LLM_CACHE,
    # what the LLM said about a relation (docgraph/llm_extract.py); '' for the offline ones
    lambda conn: add_column(conn, "relations", "description", "TEXT NOT NULL DEFAULT ''"),
    LLM_SUMMARIES,
    NAME_VECTORS,
    # an embedding merge's cosine similarity (rule "embedding"); 0 for the other rules
    lambda conn: add_column(conn, "aliases", "similarity", "REAL NOT NULL DEFAULT 0"),
]


@dataclass(frozen=True)
class ChunkText:
    """A chunk as ingestion indexed it (its payload's fields)."""

    doc_id: str
    page_no: int
    chunk_no: int
    text: str
    geo_tags: Sequence[dict[str, Any]] = ()


@dataclass
class EntityRow:
    id: int
    kind: str
    name: str
    mentions: int
    documents: int
    aliases: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Said:
    """One mention's sentence, where it is (the chunk a global answer cites)."""

    sentence: str
    doc_id: str
    page_no: int
    chunk_no: int
    entity: str  # the entity's name


@dataclass
class CommunityEvidence:
    """A community as a caller sees it: its entities, the sentences that mention them (with
    their chunks) and the extractive summary made from them (global search reads this)."""

    id: int
    entity_ids: list[int]
    names: list[str]  # its most mentioned entities, at most SUMMARY_ENTITIES
    kinds: dict[str, int]  # members per kind
    mentions: int
    documents: list[str]
    summary: str
    said: list[Said]  # the summary's sentences first, then every other one (each once)
    members: list[tuple[str, str]] = field(default_factory=list)  # (name, kind), most mentioned first


def _sentence(text: str, start: int, end: int) -> str:
    """The sentence (or line) around a span, at most SENTENCE_CHARS."""
    if start < 0:
        return " ".join(text[:SENTENCE_CHARS].split())
    left = max(text.rfind(c, 0, start) for c in ".!?\n") + 1
    rights = [i for i in (text.find(c, end) for c in ".!?\n") if i >= 0]
    right = min(rights) + 1 if rights else len(text)
    sentence = " ".join(text[left:right].split())
    return sentence[:SENTENCE_CHARS]


def _locked(method: Callable[..., T]) -> Callable[..., T]:
    """Run a read of the store under its lock (the connection is shared by threads)."""

    @functools.wraps(method)
    def run(self: DocGraphStore, *args: Any, **kwargs: Any) -> T:
        with self._lock:
            return method(self, *args, **kwargs)

    return run


def detect_communities(edges: list[tuple[int, int, float]]) -> dict[int, int]:
    """Entity id -> community, by Leiden (leidenalg, modularity, seed 0); networkx Louvain
    when leidenalg is not installed."""
    if not edges:
        return {}
    nodes = sorted({n for a, b, _ in edges for n in (a, b)})
    try:
        import igraph
        import leidenalg
    except ImportError:
        import networkx as nx

        graph = nx.Graph()
        graph.add_weighted_edges_from(edges)
        groups = nx.community.louvain_communities(graph, weight="weight", seed=0)
        return {n: i for i, group in enumerate(sorted(groups, key=min)) for n in group}
    index = {n: i for i, n in enumerate(nodes)}
    graph = igraph.Graph(n=len(nodes), edges=[(index[a], index[b]) for a, b, _ in edges])
    graph.es["weight"] = [w for _, _, w in edges]
    partition = leidenalg.find_partition(graph, leidenalg.ModularityVertexPartition, weights="weight", seed=0)
    return {nodes[v]: c for c, members in enumerate(partition) for v in members}


class DocGraphStore:
    """One SQLite file holding every tenant's document graph."""

    def __init__(self, path: Path, embed: Embed | None = None, merge_similarity: float = 0.0) -> None:
        """`embed` and `merge_similarity` (> 0): resolution by name similarity (docgraph/resolve.py)."""
        self.path = path
        self.embed = embed
        self.merge_similarity = merge_similarity
        self._lock = threading.RLock()  # one connection for every thread: reads wait for a write
        self._conn = connect(path, synchronous="NORMAL")
        migrate(self._conn, MIGRATIONS)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # ------------------------------------------------------------------ write

    @_locked
    def known_acronyms(self, tenant: str) -> dict[str, str]:
        """Acronym key -> kind of every organisation or programme with a defined acronym."""
        rows = self._conn.execute(
            "SELECT DISTINCT e.key, e.kind FROM entities e JOIN aliases a ON a.entity_id = e.id "
            "WHERE e.tenant = ? AND a.rule = 'acronym'",
            (tenant,),
        )
        return {key.split(":", 1)[1]: kind for key, kind in rows}

    @_locked
    def known_expansions(self, tenant: str) -> dict[str, tuple[str, str]]:
        """Folded long form -> (acronym key, kind) of every defined acronym."""
        rows = self._conn.execute(
            "SELECT DISTINCT a.alias, e.key, e.kind FROM aliases a JOIN entities e ON e.id = a.entity_id "
            "WHERE a.tenant = ? AND a.rule = 'acronym'",
            (tenant,),
        )
        return {alias: (key.split(":", 1)[1], kind) for alias, key, kind in rows}

    def _aliases(self, tenant: str) -> dict[str, str]:
        rows = self._conn.execute(
            "SELECT a.alias, e.key FROM aliases a JOIN entities e ON e.id = a.entity_id WHERE a.tenant = ?",
            (tenant,),
        )
        return {alias: key for alias, key in rows}

    def add_document(
        self,
        tenant: str,
        chunks: Iterable[ChunkText],
        llm: Mapping[tuple[int, int], ChunkExtraction] | None = None,
    ) -> int:
        """Extract, resolve and store the mentions of one document's chunks (its previous
        rows replaced); returns how many mentions were stored. `llm`: (page_no, chunk_no) ->
        what the LLM found there (docgraph/llm_extract.py), added to the offline mentions
        where it does not overlap them."""
        chunks = list(chunks)
        if not chunks:
            return 0
        doc_ids = {c.doc_id for c in chunks}
        with self._lock:
            known = self.known_acronyms(tenant)
            expansions = self.known_expansions(tenant)
            found = [(c, extract(c.text, known, c.geo_tags, expansions)) for c in chunks]
            # the document's own definitions count everywhere in it, not only after them
            for _, mentions in found:
                for m in mentions:
                    if m.acronym and m.expansion:
                        known[m.key] = m.kind
                        expansions[m.expansion] = (m.key, m.kind)
            found = [(c, extract(c.text, known, c.geo_tags, expansions)) for c in chunks]
            llm_relations: dict[int, list[tuple[int, int, str, str]]] = {}
            for n, (chunk, mentions) in enumerate(found):
                extra = (llm or {}).get((chunk.page_no, chunk.chunk_no))
                if extra is not None:
                    merged, llm_relations[n] = merge_llm(mentions, extra)
                    found[n] = (chunk, merged)
            aliases = self._aliases(tenant)
            for _, mentions in found:
                for m in mentions:
                    if m.acronym and m.expansion:
                        aliases[m.expansion] = f"org:{m.key}"
            resolved_all = [[resolve(m, aliases) for m in mentions] for _, mentions in found]
            vectors = self._name_vectors(resolved_all)
            with transaction(self._conn):
                for doc_id in doc_ids:
                    self._delete_rows(tenant, doc_id)
                merged_keys: set[str] = set()
                if vectors:
                    resolved_all, merged_keys = self._merge_similar(tenant, resolved_all, vectors)
                stored = 0
                pairs: dict[tuple[str, int, int, str], list[str]] = defaultdict(list)  # -> chunk refs
                described: dict[tuple[str, int, int, str], str] = {}  # -> the LLM's description
                for n, (chunk, mentions) in enumerate(found):
                    resolved = resolved_all[n]
                    ids = [self._store_mention(tenant, chunk, r) for r in resolved]
                    stored += len(ids)
                    named = sorted({i for r, i in zip(resolved, ids, strict=True) if r.kind in NAMED_KINDS})
                    ref = f"{chunk.page_no}.{chunk.chunk_no}"
                    for x, a in enumerate(named):
                        for b in named[x + 1 :]:
                            pairs[(chunk.doc_id, a, b, "co-occurs")].append(ref)
                    typed = [(i, j, kind, "") for i, j, kind in typed_relations(chunk.text, mentions)]
                    for i, j, kind, description in [*typed, *llm_relations.get(n, [])]:
                        if ids[i] != ids[j]:
                            pairs[(chunk.doc_id, ids[i], ids[j], kind)].append(ref)
                            if description:
                                described.setdefault((chunk.doc_id, ids[i], ids[j], kind), description)
                # one "co-occurs" relation per pair of named entities sharing a chunk, and the
                # typed ones a pattern gave (source -> target), per document
                self._conn.executemany(
                    "INSERT INTO relations (tenant, source, target, type, doc_id, count, chunks, "
                    "description) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (tenant, a, b, k, d, len(refs), json.dumps(refs), described.get((d, a, b, k), ""))
                        for (d, a, b, k), refs in pairs.items()
                    ],
                )
                self._store_name_vectors(tenant, {k: v for k, v in vectors.items() if k not in merged_keys})
                self._refresh_communities(tenant)
        return stored

    def _name_vectors(self, resolved: list[list[Resolved]]) -> dict[str, np.ndarray]:
        """Entity key -> the vector of its name, for the mentions embedding may merge (none
        when it is off)."""
        if self.embed is None or self.merge_similarity <= 0:
            return {}
        names = {r.entity_key: r.name for rs in resolved for r in rs if embeddable(r)}
        if not names:
            return {}
        keys = list(names)
        found = np.asarray(self.embed([names[k] for k in keys]), dtype=np.float32)
        return dict(zip(keys, found, strict=True))

    def _merge_similar(
        self, tenant: str, resolved: list[list[Resolved]], vectors: dict[str, np.ndarray]
    ) -> tuple[list[list[Resolved]], set[str]]:
        """Mentions whose folded name is no entity yet, resolved to the entity of their kind
        whose name is nearest, when the cosine reaches merge_similarity (in text order: a
        name the document introduced first is a candidate for the later ones); and the keys
        so merged (they create no entity)."""
        existing = {
            key
            for (key,) in self._conn.execute("SELECT key FROM entities WHERE tenant = ?", (tenant,))
            if key in vectors
        }
        pool: dict[str, list[tuple[str, np.ndarray]]] = defaultdict(list)  # key prefix -> (key, vector)
        for key, blob in self._conn.execute(
            "SELECT e.key, v.vector FROM name_vectors v JOIN entities e ON e.id = v.entity_id "
            "WHERE v.tenant = ?",
            (tenant,),
        ):
            pool[key.split(":", 1)[0]].append((key, np.frombuffer(blob, dtype=np.float32)))
        target: dict[str, tuple[str, float]] = {}  # a new key -> (the entity key it merges into, cosine)
        for key in dict.fromkeys(r.entity_key for rs in resolved for r in rs if embeddable(r)):
            if key in existing or key in target:
                continue
            prefix = key.split(":", 1)[0]
            best = nearest(vectors[key], pool[prefix])
            if best is not None and best[1] >= self.merge_similarity:
                target[key] = best
            else:
                pool[prefix].append((key, vectors[key]))
        out = [
            [
                merge_by_embedding(r, *target[r.entity_key])
                if embeddable(r) and r.entity_key in target
                else r
                for r in rs
            ]
            for rs in resolved
        ]
        return out, set(target)

    def _store_name_vectors(self, tenant: str, vectors: dict[str, np.ndarray]) -> None:
        """The vectors of the entities this document created by their name (merge targets)."""
        for key, vector in vectors.items():
            row = self._conn.execute(
                "SELECT id FROM entities WHERE tenant = ? AND key = ?", (tenant, key)
            ).fetchone()
            if row is not None:
                self._conn.execute(
                    "INSERT OR IGNORE INTO name_vectors VALUES (?, ?, ?)",
                    (tenant, int(row[0]), np.asarray(vector, dtype=np.float32).tobytes()),
                )

    def _cached_reply(self, table: str, tenant: str, key: str) -> str | None:
        row = self._conn.execute(
            f"SELECT reply FROM {table} WHERE tenant = ? AND key = ? LIMIT 1", (tenant, key)
        ).fetchone()
        return None if row is None else str(row[0])

    @_locked
    def cached_extraction(self, tenant: str, key: str) -> str | None:
        """The LLM's stored reply for a chunk hash (any document of the tenant), or None."""
        return self._cached_reply("llm_extractions", tenant, key)

    @_locked
    def cache_extraction(self, tenant: str, doc_id: str, key: str, reply: str) -> None:
        with transaction(self._conn):
            self._conn.execute(
                "INSERT OR REPLACE INTO llm_extractions VALUES (?, ?, ?, ?)", (tenant, doc_id, key, reply)
            )

    def _entity_id(self, tenant: str, r: Resolved) -> int:
        row = self._conn.execute(
            "SELECT id, name FROM entities WHERE tenant = ? AND key = ?", (tenant, r.entity_key)
        ).fetchone()
        if row is not None:
            return int(row[0])
        cur = self._conn.execute(
            "INSERT INTO entities (tenant, key, kind, name) VALUES (?, ?, ?, ?)",
            (tenant, r.entity_key, r.kind, r.name),
        )
        return int(cur.lastrowid or 0)

    def _store_mention(self, tenant: str, chunk: ChunkText, r: Resolved) -> int:
        m = r.mention
        entity = self._entity_id(tenant, r)
        self._conn.execute(
            "INSERT INTO mentions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                tenant,
                entity,
                chunk.doc_id,
                chunk.page_no,
                chunk.chunk_no,
                m.start,
                m.end,
                " ".join(m.text.split()),
                r.rule,
                m.rule,
                _sentence(chunk.text, m.start, m.end),
            ),
        )
        for alias, rule in (
            (r.alias, "acronym"),
            (fold_words(m.text) if r.rule in ("alias", "embedding") else None, r.rule),
        ):
            if alias:
                self._conn.execute(
                    "INSERT INTO aliases (tenant, entity_id, alias, rule, doc_id, page_no, chunk_no, "
                    "similarity) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (tenant, entity, alias, rule, chunk.doc_id, chunk.page_no, chunk.chunk_no, r.similarity),
                )
        return entity

    def _delete_rows(self, tenant: str, doc_id: str) -> None:
        for table in ("mentions", "aliases", "relations"):
            self._conn.execute(f"DELETE FROM {table} WHERE tenant = ? AND doc_id = ?", (tenant, doc_id))
        self._conn.execute(
            "DELETE FROM entities WHERE tenant = ? AND id NOT IN "
            "(SELECT entity_id FROM mentions WHERE tenant = ?)",
            (tenant, tenant),
        )
        self._conn.execute(
            "DELETE FROM name_vectors WHERE tenant = ? AND entity_id NOT IN "
            "(SELECT id FROM entities WHERE tenant = ?)",
            (tenant, tenant),
        )
        self._rename_merged(tenant)

    def _rename_merged(self, tenant: str) -> None:
        """An entity of a kind embedding merges, whose name no mention left writes (the
        document that named it so is gone, another's variant remains), takes the name of
        its first mention left, and that name's vector: nothing of the gone document stays."""
        kinds = sorted(EMBED_KINDS)
        rows = self._conn.execute(
            "SELECT e.id, e.name, m.text FROM entities e "
            "JOIN mentions m ON m.tenant = e.tenant AND m.entity_id = e.id "
            f"WHERE e.tenant = ? AND e.kind IN ({','.join('?' * len(kinds))}) AND NOT EXISTS "
            "(SELECT 1 FROM mentions x WHERE x.tenant = e.tenant AND x.entity_id = e.id AND x.text = e.name) "
            "ORDER BY e.id, m.doc_id, m.page_no, m.chunk_no, m.start",
            (tenant, *kinds),
        ).fetchall()
        renamed: dict[int, str] = {}
        for entity_id, name, text in rows:
            if entity_id not in renamed and not is_acronym(name):
                renamed[entity_id] = text
        for entity_id, text in renamed.items():
            self._conn.execute("UPDATE entities SET name = ? WHERE id = ?", (text, entity_id))
            if self._conn.execute("SELECT 1 FROM name_vectors WHERE entity_id = ?", (entity_id,)).fetchone():
                self._conn.execute("DELETE FROM name_vectors WHERE entity_id = ?", (entity_id,))
                if self.embed is not None:
                    vector = np.asarray(self.embed([text]), dtype=np.float32)[0]
                    self._conn.execute(
                        "INSERT INTO name_vectors VALUES (?, ?, ?)", (tenant, entity_id, vector.tobytes())
                    )

    def delete_document(self, tenant: str, doc_id: str) -> None:
        """Remove the document's mentions, aliases, relations and cached LLM replies, the
        community reports its content fed, the entities only it supported, and refresh the
        communities; then checkpoint (nothing left in the WAL)."""
        with self._lock:
            with transaction(self._conn):
                self._delete_rows(tenant, doc_id)
                self._conn.execute(
                    "DELETE FROM llm_extractions WHERE tenant = ? AND doc_id = ?", (tenant, doc_id)
                )
                fed = [
                    r[0]
                    for r in self._conn.execute(
                        "SELECT key FROM llm_summary_sources WHERE tenant = ? AND doc_id = ?",
                        (tenant, doc_id),
                    )
                ]
                self._delete_summaries(tenant, fed)
                self._refresh_communities(tenant)
            checkpoint(self._conn)

    def _delete_summaries(self, tenant: str, keys: Sequence[str]) -> None:
        for key in keys:
            self._conn.execute("DELETE FROM llm_summaries WHERE tenant = ? AND key = ?", (tenant, key))
            self._conn.execute("DELETE FROM llm_summary_sources WHERE tenant = ? AND key = ?", (tenant, key))

    @_locked
    def cached_summary(self, tenant: str, key: str) -> str | None:
        """The LLM's stored community report for a content hash, or None."""
        return self._cached_reply("llm_summaries", tenant, key)

    @_locked
    def cache_summary(self, tenant: str, key: str, reply: str, doc_ids: Iterable[str]) -> None:
        """Keep a community report with the documents its content came from."""
        with transaction(self._conn):
            self._conn.execute("INSERT OR REPLACE INTO llm_summaries VALUES (?, ?, ?)", (tenant, key, reply))
            self._conn.executemany(
                "INSERT OR IGNORE INTO llm_summary_sources VALUES (?, ?, ?)",
                [(tenant, key, d) for d in sorted(set(doc_ids))],
            )

    @_locked
    def prune_summaries(self, tenant: str, keep: set[str]) -> int:
        """Delete the community reports whose key no current community has; how many."""
        stale = [
            r[0]
            for r in self._conn.execute("SELECT key FROM llm_summaries WHERE tenant = ?", (tenant,))
            if r[0] not in keep
        ]
        if stale:
            with transaction(self._conn):
                self._delete_summaries(tenant, stale)
        return len(stale)

    def _refresh_communities(self, tenant: str) -> None:
        """Leiden over the tenant's relation graph, and one extractive summary per community:
        its top entities and the sentences that mention them."""
        self._conn.execute("DELETE FROM communities WHERE tenant = ?", (tenant,))
        self._conn.execute("DELETE FROM summaries WHERE tenant = ?", (tenant,))
        weights: Counter[tuple[int, int]] = Counter()
        for a, b, n in self._conn.execute(
            "SELECT source, target, count FROM relations WHERE tenant = ?", (tenant,)
        ):
            weights[(a, b)] += n
        assignment = detect_communities([(a, b, float(w)) for (a, b), w in weights.items()])
        # a named entity no relation reaches is a community of its own (as an isolated vertex
        # is in Leiden), so a document naming one organisation still reaches global search
        loose = self._conn.execute(
            f"SELECT id FROM entities WHERE tenant = ? AND kind IN ({','.join('?' * len(LONE_KINDS))}) "
            "ORDER BY id",
            (tenant, *LONE_KINDS),
        ).fetchall()
        next_id = max(assignment.values(), default=-1) + 1
        for (entity_id,) in loose:
            if entity_id not in assignment:
                assignment[entity_id] = next_id
                next_id += 1
        self._conn.executemany(
            "INSERT INTO communities VALUES (?, ?, ?)", [(tenant, e, c) for e, c in assignment.items()]
        )
        members: dict[int, list[int]] = defaultdict(list)
        for entity, community in assignment.items():
            members[community].append(entity)
        for community, entities in members.items():
            names, summary = self._summarise(tenant, entities)
            self._conn.execute(
                "INSERT INTO summaries VALUES (?, ?, ?, ?)", (tenant, community, json.dumps(names), summary)
            )

    def _summarise(
        self, tenant: str, entities: list[int], visible: DocFilter | None = None
    ) -> tuple[list[str], str]:
        """A community's extractive summary: its most mentioned entities, then the
        sentences that mention them (over the documents `visible` accepts)."""
        marks = ",".join("?" * len(entities))
        rows = self._conn.execute(
            "SELECT e.id, e.name, m.doc_id, m.sentence FROM mentions m "
            f"JOIN entities e ON e.id = m.entity_id WHERE m.tenant = ? AND m.entity_id IN ({marks}) "
            "ORDER BY m.doc_id, m.page_no, m.chunk_no, m.start",
            (tenant, *entities),
        ).fetchall()
        counts: Counter[int] = Counter()
        names: dict[int, str] = {}
        said: dict[int, list[str]] = defaultdict(list)
        for entity_id, name, doc_id, sentence in rows:
            if visible is not None and not visible(doc_id):
                continue
            counts[entity_id] += 1
            names[entity_id] = name
            said[entity_id].append(sentence)
        top = sorted(counts, key=lambda e: (-counts[e], names[e]))[:SUMMARY_ENTITIES]
        sentences: list[str] = []
        for entity_id in top:
            for sentence in dict.fromkeys(said[entity_id]):
                if sentence not in sentences and len(sentences) < SUMMARY_SENTENCES:
                    sentences.append(sentence)
        shown = [names[e] for e in top]
        return shown, "; ".join(shown) + (": " + " … ".join(sentences) if sentences else "")

    # ------------------------------------------------------------------ read

    @_locked
    def search(
        self, tenant: str, query: str = "", limit: int = 50, visible: DocFilter | None = None
    ) -> list[EntityRow]:
        """Entities whose name, key or alias contains the folded query (all when empty),
        most mentioned first, counted over the documents `visible` accepts (all when None)."""
        folded = fold_words(query)
        # the query's own % and _ are text, not LIKE wildcards ('%' listed every entity)
        needle = "%" + folded.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = self._conn.execute(
            "SELECT e.id, e.kind, e.name, m.doc_id, COUNT(*) FROM entities e "
            "JOIN mentions m ON m.entity_id = e.id AND m.tenant = e.tenant WHERE e.tenant = ? AND "
            "(? = '' OR lower(e.name) LIKE ? ESCAPE '\\' OR e.key LIKE ? ESCAPE '\\' OR e.id IN "
            "(SELECT entity_id FROM aliases WHERE tenant = ? AND alias LIKE ? ESCAPE '\\')) "
            "GROUP BY e.id, m.doc_id",
            (tenant, folded, needle, needle, tenant, needle),
        ).fetchall()
        found: dict[int, EntityRow] = {}
        for entity_id, kind, name, doc_id, count in rows:
            if visible is not None and not visible(doc_id):
                continue
            row = found.setdefault(entity_id, EntityRow(entity_id, kind, name, 0, 0))
            row.mentions += count
            row.documents += 1
        out = sorted(found.values(), key=lambda r: (-r.mentions, r.name))[:limit]
        for row in out:
            row.aliases = self.aliases(tenant, row.id, visible)
        return out

    @_locked
    def aliases(self, tenant: str, entity_id: int, visible: DocFilter | None = None) -> list[str]:
        rows = self._conn.execute(
            "SELECT DISTINCT alias, doc_id FROM aliases WHERE tenant = ? AND entity_id = ? ORDER BY alias",
            (tenant, entity_id),
        )
        return list(dict.fromkeys(a for a, d in rows if visible is None or visible(d)))

    @_locked
    def entity(self, tenant: str, entity_id: int, visible: DocFilter | None = None) -> dict[str, Any] | None:
        """An entity with its mentions (doc, page, chunk), merges (alias, rule, where),
        relations and community, over the documents `visible` accepts; None when it has no
        mention there."""
        row = self._conn.execute(
            "SELECT id, kind, name FROM entities WHERE tenant = ? AND id = ?", (tenant, entity_id)
        ).fetchone()
        if row is None:
            return None
        ok = visible or (lambda _: True)
        mentions = [
            dict(r)
            for r in self._conn.execute(
                "SELECT doc_id, page_no, chunk_no, start, end, text, rule, extractor, sentence FROM mentions "
                "WHERE tenant = ? AND entity_id = ? ORDER BY doc_id, page_no, chunk_no, start",
                (tenant, entity_id),
            )
            if ok(r["doc_id"])
        ]
        if not mentions:
            return None
        merges = [
            dict(r)
            for r in self._conn.execute(
                "SELECT alias, rule, doc_id, page_no, chunk_no, similarity FROM aliases "
                "WHERE tenant = ? AND entity_id = ?",
                (tenant, entity_id),
            )
            if ok(r["doc_id"])
        ]
        community = self._conn.execute(
            "SELECT community FROM communities WHERE tenant = ? AND entity_id = ?", (tenant, entity_id)
        ).fetchone()
        summary = None
        if community is not None:
            if visible is None:
                stored = self._conn.execute(
                    "SELECT entities, summary FROM summaries WHERE tenant = ? AND community = ?",
                    (tenant, community[0]),
                ).fetchone()
                names, text = (json.loads(stored[0]), stored[1]) if stored else ([], "")
            else:  # summarised again over what the caller may see
                members = [
                    r[0]
                    for r in self._conn.execute(
                        "SELECT entity_id FROM communities WHERE tenant = ? AND community = ?",
                        (tenant, community[0]),
                    )
                ]
                names, text = self._summarise(tenant, members, visible)
            summary = {"id": community[0], "summary": text, "entities": names}
        return {
            "id": row[0],
            "kind": row[1],
            "name": row[2],
            "aliases": list(dict.fromkeys(m["alias"] for m in merges)),
            "merges": merges,
            "mentions": mentions,
            "relations": self.neighbours(tenant, entity_id, visible=visible),
            "community": summary,
        }

    @_locked
    def neighbours(
        self, tenant: str, entity_id: int, limit: int = 20, visible: DocFilter | None = None
    ) -> list[dict[str, Any]]:
        """Related entities, the strongest first, with the chunks the relation rests on."""
        rows = self._conn.execute(
            "SELECT CASE WHEN r.source = ? THEN r.target ELSE r.source END AS other, r.type, r.doc_id, "
            "r.count, r.chunks, r.source = ?, r.description FROM relations r "
            "WHERE r.tenant = ? AND (r.source = ? OR r.target = ?)",
            (entity_id, entity_id, tenant, entity_id, entity_id),
        ).fetchall()
        merged: dict[tuple[int, str], dict[str, Any]] = {}
        for other, kind, doc_id, count, chunks, outgoing, description in rows:
            if visible is not None and not visible(doc_id):
                continue
            if not outgoing:  # a typed relation read from its target: "superior-of"
                kind = RELATION_INVERSE.get(kind, kind)
            item = merged.setdefault(
                (other, kind), {"entity_id": other, "type": kind, "count": 0, "chunks": [], "description": ""}
            )
            item["count"] += count
            item["description"] = item["description"] or description
            for ref in json.loads(chunks):
                page_no, chunk_no = ref.split(".")
                item["chunks"].append({"doc_id": doc_id, "page_no": int(page_no), "chunk_no": int(chunk_no)})
        for item in merged.values():
            name = self._conn.execute(
                "SELECT name, kind FROM entities WHERE id = ?", (item["entity_id"],)
            ).fetchone()
            item["name"], item["kind"] = (name[0], name[1]) if name else ("", "")
        # the strongest first; at equal strength named things before codes
        return sorted(merged.values(), key=lambda r: (-r["count"], r["kind"] == "code", r["name"]))[:limit]

    @_locked
    def recognise(self, tenant: str, question: str) -> list[int]:
        """Entities the question names: by acronym (as a word; upper case when 3 letters or
        fewer, so "who" is not WHO), by name or alias (folded, as words)."""
        words = re.findall(r"[\w/.-]+", fold(question))
        folded = " " + " ".join(words) + " "
        tokens = set(re.findall(r"[\w]+", question))
        found: list[int] = []
        rows = self._conn.execute(
            "SELECT id, key, kind, name FROM entities WHERE tenant = ?", (tenant,)
        ).fetchall()
        alias_rows = self._conn.execute(
            "SELECT entity_id, alias FROM aliases WHERE tenant = ?", (tenant,)
        ).fetchall()
        for entity_id, key, kind, name in rows:
            if kind in ("date", "amount"):
                continue
            if kind in ("org", "programme") and is_acronym(name):
                acronym = key.split(":", 1)[1]
                if (len(acronym) > 3 and f" {acronym} " in folded) or name in tokens:
                    found.append(entity_id)
                continue
            if len(fold_words(name)) >= 4 and f" {fold_words(name)} " in folded:
                found.append(entity_id)
        for entity_id, alias in alias_rows:
            if entity_id not in found and len(alias) >= 6 and f" {alias} " in folded:
                found.append(entity_id)
        return found

    @_locked
    def mention_chunks(self, tenant: str, entity_ids: Sequence[int]) -> list[tuple[str, int, int, int]]:
        """(doc_id, page_no, chunk_no, mentions) of the chunks mentioning the entities, most first."""
        if not entity_ids:
            return []
        marks = ",".join("?" * len(entity_ids))
        rows = self._conn.execute(
            "SELECT doc_id, page_no, chunk_no, COUNT(*) AS n FROM mentions "
            f"WHERE tenant = ? AND entity_id IN ({marks}) GROUP BY doc_id, page_no, chunk_no "
            "ORDER BY n DESC, doc_id, page_no, chunk_no",
            (tenant, *entity_ids),
        )
        return [(r[0], int(r[1]), int(r[2]), int(r[3])) for r in rows]

    @_locked
    def community_evidence(self, tenant: str, visible: DocFilter | None = None) -> list[CommunityEvidence]:
        """Every community with a mention in the documents `visible` accepts (all when None),
        summarised over those documents only, the largest first."""
        rows = self._conn.execute(
            "SELECT c.community, e.id, e.name, e.kind, m.doc_id, m.page_no, m.chunk_no, m.sentence "
            "FROM communities c JOIN entities e ON e.id = c.entity_id AND e.tenant = c.tenant "
            "JOIN mentions m ON m.entity_id = e.id AND m.tenant = c.tenant WHERE c.tenant = ? "
            "ORDER BY m.doc_id, m.page_no, m.chunk_no, m.start",
            (tenant,),
        ).fetchall()
        members: dict[int, dict[int, tuple[str, str]]] = defaultdict(dict)
        counts: dict[int, Counter[int]] = defaultdict(Counter)
        said: dict[int, dict[int, list[Said]]] = defaultdict(lambda: defaultdict(list))
        for community, entity_id, name, kind, doc_id, page_no, chunk_no, sentence in rows:
            if visible is not None and not visible(doc_id):
                continue
            members[community][entity_id] = (name, kind)
            counts[community][entity_id] += 1
            said[community][entity_id].append(Said(sentence, doc_id, page_no, chunk_no, name))
        out = []
        for community, entities in members.items():
            count = counts[community]
            top = sorted(count, key=lambda e: (-count[e], entities[e][0]))
            ordered: list[Said] = []
            seen: set[str] = set()
            for entity_id in top:
                for s in said[community][entity_id]:
                    if s.sentence not in seen:
                        seen.add(s.sentence)
                        ordered.append(s)
            names = [entities[e][0] for e in top[:SUMMARY_ENTITIES]]
            head = [s for s in ordered if s.entity in names][:SUMMARY_SENTENCES]
            rest = [s for s in ordered if s not in head]
            summary = "; ".join(names) + (": " + " … ".join(s.sentence for s in head) if head else "")
            out.append(
                CommunityEvidence(
                    community,
                    top,
                    names,
                    dict(Counter(kind for _, kind in entities.values())),
                    sum(count.values()),
                    sorted({s.doc_id for lst in said[community].values() for s in lst}),
                    summary,
                    head + rest,
                    [entities[e] for e in top],
                )
            )
        return sorted(out, key=lambda c: (-c.mentions, c.id))

    @_locked
    def counts(self, tenant: str) -> dict[str, int]:
        """Rows per table for the tenant (tests, the ops view)."""
        tables = (
            "entities",
            "aliases",
            "mentions",
            "relations",
            "communities",
            "summaries",
            "llm_extractions",
            "llm_summaries",
            "llm_summary_sources",
            "name_vectors",
        )
        return {
            t: int(self._conn.execute(f"SELECT COUNT(*) FROM {t} WHERE tenant = ?", (tenant,)).fetchone()[0])
            for t in tables
        }


def merge_llm(
    offline: list[Mention], extra: ChunkExtraction
) -> tuple[list[Mention], list[tuple[int, int, str, str]]]:
    """The chunk's offline mentions plus the LLM's that overlap none of them (the offline
    extractors' spans win: their precision is measured), in text order, and the LLM's
    relations re-indexed into that list, with their descriptions (a relation whose end was
    dropped for an offline mention of the same span goes to that mention)."""
    kept = list(offline)
    where: dict[int, int] = {}
    for i, m in enumerate(extra.mentions):
        same = next((k for k, o in enumerate(offline) if o.start < m.end and m.start < o.end), None)
        if same is not None:
            where[i] = same
        else:
            where[i] = len(kept)
            kept.append(m)
    order = sorted(range(len(kept)), key=lambda k: (kept[k].start, kept[k].end))
    position = {old: new for new, old in enumerate(order)}
    relations = [
        (position[where[i]], position[where[j]], kind, extra.descriptions.get((i, j, kind), ""))
        for i, j, kind in extra.relations
    ]
    return [kept[k] for k in order], [r for r in relations if r[0] != r[1]]


def mentions_of(text: str) -> list[Mention]:
    """The mentions one text holds, no corpus context (the eval script, the timing table)."""
    return extract(text)
