"""Entity resolution: which entity a mention is, and why.

Rules, in order (the first that applies decides, and is recorded with the mention):
- "acronym": an organisation or programme is its acronym ("IBAMA", "Ibama" and
  "Instituto Brasileiro do Meio Ambiente ... (IBAMA)" are one entity); the expansion a
  definition gives becomes an alias of it ("alias" rows say which mention taught it).
- "alias": a name (a company, a place) whose folded form is a known alias of an entity.
- "folded-name": otherwise the folded name, normalised code or law is the key.
- "embedding": a named thing (organisation, programme, person, product, event) whose folded
  name is no entity yet, but whose name's vector (the text encoder's) is within the measured
  cosine threshold of an entity of its kind (CARTA_DOCGRAPH_MERGE_SIMILARITY, measured by
  scripts/eval_entity_pairs.py on eval/docgraph/entity_pairs.yaml): "Mineração Taboca S/A"
  is "Mineradora Taboca S.A.". The alias row keeps the similarity. Acronyms, laws, codes,
  dates and amounts never merge this way (their keys are exact).

A merge is a row (the alias, or the mention's rule), never a rewrite: deleting the
document that taught an alias deletes the alias, and its mentions with it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from docgraph.extract import Mention
from geo.folding import fold_words


@dataclass(frozen=True)
class Resolved:
    """A mention with the entity key it resolves to and the rule that decided it."""

    mention: Mention
    entity_key: str  # "<kind>:<key>" (unique per tenant)
    kind: str
    name: str  # the entity's display name, when this mention creates it
    rule: str  # acronym, alias, folded-name
    alias: str | None = None  # a folded expansion this mention teaches (a definition)
    similarity: float = 0.0  # rule "embedding": the cosine of its name to the entity's


EMBED_KINDS = frozenset({"org", "programme", "person", "product", "event"})


def display_name(m: Mention) -> str:
    """The entity's name as shown: "IBAMA", "Lei 9605/1998", "JUMA PARTICIPAÇÕES S.A."."""
    if m.kind in ("org", "programme") and m.acronym:
        return m.acronym.upper()
    if m.kind == "law" and m.expansion:
        return m.expansion
    return " ".join(m.text.split())


def resolve(m: Mention, aliases: Mapping[str, str]) -> Resolved:
    """The entity of mention `m`; `aliases`: folded alias -> entity key, the tenant's known
    expansions (plus those the same document defines)."""
    if m.kind in ("org", "programme") and m.acronym:
        key = f"org:{m.key}"  # programmes and organisations share acronyms' namespace
        return Resolved(m, key, m.kind, display_name(m), "acronym", alias=m.expansion)
    folded = fold_words(m.text)
    if m.kind in ("org", "programme", "place") and folded in aliases:
        return Resolved(m, aliases[folded], m.kind, display_name(m), "alias")
    prefix = "org" if m.kind == "programme" else m.kind
    return Resolved(m, f"{prefix}:{m.key}", m.kind, display_name(m), "folded-name")


def embeddable(r: Resolved) -> bool:
    """Whether embedding similarity may merge this mention: a named thing kept by its folded name."""
    return r.rule == "folded-name" and r.kind in EMBED_KINDS


def nearest(vector: np.ndarray, pool: Sequence[tuple[str, np.ndarray]]) -> tuple[str, float] | None:
    """The entity key of `pool` (key, unit vector) whose vector is closest to `vector`, with
    the cosine; None for an empty pool."""
    if not pool:
        return None
    sims = np.stack([v for _, v in pool]) @ vector
    best = int(np.argmax(sims))
    return pool[best][0], float(sims[best])


def merge_by_embedding(r: Resolved, entity_key: str, similarity: float) -> Resolved:
    """`r` resolved to `entity_key` by embedding similarity."""
    return replace(r, entity_key=entity_key, rule="embedding", similarity=round(similarity, 4))
