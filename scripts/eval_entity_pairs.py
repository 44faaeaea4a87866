"""The threshold of entity resolution by embedding similarity (docgraph/resolve.py, rule
"embedding"; CARTA_DOCGRAPH_MERGE_SIMILARITY): precision and recall of the merges the text
encoder's name vectors would make on the hand-labelled name pairs of
eval/docgraph/entity_pairs.yaml, per threshold, and the lowest threshold with no false merge.

    .venv/bin/python scripts/eval_entity_pairs.py            # the table and the threshold
    .venv/bin/python scripts/eval_entity_pairs.py --mine     # candidate pairs from the corpus, to label

A pair counts as merged at threshold t when the cosine of its two names is >= t and their
folded names differ (equal folded names are one entity by rule "folded-name"). --mine prints
the corpus's nearest name pairs (offline company names of every corpus PDF, per kind) above
--floor, for labelling by reading the files.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np
import pymupdf
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from docgraph.extract import extract  # noqa: E402
from docgraph.resolve import EMBED_KINDS, display_name  # noqa: E402
from geo.folding import fold_words  # noqa: E402
from models.text_encoder import TextEncoder  # noqa: E402
from service.settings import Settings  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("CARTA_CORPUS_DIR", REPO.parent / "shared" / "corpus"))
THRESHOLDS = (0.80, 0.85, 0.88, 0.90, 0.92, 0.93, 0.94, 0.95, 0.96, 0.97, 0.98)


def cosines(encoder: TextEncoder, pairs: list[tuple[str, str]]) -> np.ndarray:
    names = sorted({n for pair in pairs for n in pair})
    vectors = dict(zip(names, encoder.embed(names), strict=True))
    return np.array([float(vectors[a] @ vectors[b]) for a, b in pairs])


def mine(encoder: TextEncoder, floor: float) -> None:
    """The corpus's nearest distinct named pairs above `floor`, per kind, most similar first."""
    names: dict[str, set[str]] = {}
    for path in sorted((CORPUS / "pdf").glob("*.pdf")):
        with pymupdf.open(path) as doc:
            for page in doc:
                for m in extract(page.get_text()):
                    if m.kind in EMBED_KINDS and not m.acronym:
                        names.setdefault("org" if m.kind == "programme" else m.kind, set()).add(
                            display_name(m)
                        )
    for kind, found in sorted(names.items()):
        listed = sorted(found)
        vectors = encoder.embed(listed)
        sims = vectors @ vectors.T
        rows = []
        for i in range(len(listed)):
            for j in range(i + 1, len(listed)):
                if sims[i, j] >= floor and fold_words(listed[i]) != fold_words(listed[j]):
                    rows.append((float(sims[i, j]), listed[i], listed[j]))
        print(f"# {kind}: {len(listed)} names, {len(rows)} pairs >= {floor}")
        for sim, a, b in sorted(rows, reverse=True):
            print(f"{sim:.3f}\t{a}\t{b}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=Path, default=REPO / "eval" / "docgraph" / "entity_pairs.yaml")
    parser.add_argument("--mine", action="store_true", help="print candidate pairs from the corpus")
    parser.add_argument("--floor", type=float, default=0.8, help="--mine: the lowest cosine printed")
    args = parser.parse_args()
    settings = Settings()
    encoder = TextEncoder(settings.text_model)
    if args.mine:
        mine(encoder, args.floor)
        return
    spec = yaml.safe_load(args.pairs.read_text())["pairs"]
    pairs = [(p["a"], p["b"]) for p in spec]
    same = np.array([bool(p["same"]) for p in spec])
    langs = np.array([p["lang"] for p in spec])
    sims = cosines(encoder, pairs)
    distinct = np.array([fold_words(a) != fold_words(b) for a, b in pairs])
    print(
        f"{len(spec)} pairs ({int(same.sum())} same, {int((~same).sum())} different), model {encoder.model}"
    )
    print(
        f"{'threshold':>9} {'merged':>6} {'right':>5} {'precision':>9} {'recall':>6} "
        f"{'recall pt':>9} {'recall en':>9}"
    )
    chosen = None
    for t in THRESHOLDS:
        merged = (sims >= t) & distinct
        right = merged & same
        precision = right.sum() / merged.sum() if merged.sum() else 1.0
        recall = right.sum() / same.sum() if same.sum() else 0.0
        by_lang = [
            f"{(right & (langs == x)).sum() / max((same & (langs == x)).sum(), 1):9.3f}" for x in ("pt", "en")
        ]
        print(
            f"{t:9.2f} {int(merged.sum()):6d} {int(right.sum()):5d} {precision:9.3f} {recall:6.3f} "
            f"{' '.join(by_lang)}"
        )
        if chosen is None and precision == 1.0:
            chosen = t
    print(f"lowest threshold with no false merge: {chosen}")
    worst_different = max((float(s), a, b) for s, (a, b), y in zip(sims, pairs, same, strict=True) if not y)
    best_missed = [
        (round(float(s), 3), a, b)
        for s, (a, b), y in zip(sims, pairs, same, strict=True)
        if y and chosen and s < chosen
    ]
    sim, a, b = worst_different
    print(f"most similar different pair: {sim:.3f} {a!r} / {b!r}")
    print(f"same pairs below it: {len(best_missed)}")
    for row in sorted(best_missed, reverse=True)[:10]:
        print(f"  {row[0]:.3f} {row[1]!r} / {row[2]!r}")


if __name__ == "__main__":
    main()
