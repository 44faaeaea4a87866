"""Precision and recall of the offline entity extractors (docgraph/extract.py) on the
hand-labelled mentions of eval/docgraph/entities.yaml, per kind and per language.

    .venv/bin/python scripts/eval_entities.py              # the table
    .venv/bin/python scripts/eval_entities.py --errors     # and every false positive and miss

Each passage (a corpus PDF page, or lines of it) is extracted as one chunk, with the
gazetteer tags ingestion would give it (GeoTagger over GeoNames, the passage's country
hint), so places are judged as the docgraph receives them. Organisations and programmes
are one class here ("org"). A prediction matches an unpaired label of the same kind when
their folded texts are equal, else when one contains the other; one to one, exact pairs
first. Unpaired predictions are false positives, unpaired labels misses. Kinds without an
extractor ("person") count in the labels (recall), never in precision.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

import pymupdf
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from docgraph.extract import Mention, extract  # noqa: E402
from geo.folding import fold_words  # noqa: E402
from geo.gazetteer import Gazetteer  # noqa: E402
from ingest.geotagging import GeoTagger  # noqa: E402
from service.settings import Settings  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("CARTA_CORPUS_DIR", REPO.parent / "shared" / "corpus"))
KEEP = 0.9  # an extractor is kept when its precision reaches this


def passage_text(spec: dict) -> str:
    with pymupdf.open(CORPUS / spec["file"]) as doc:
        text = doc[spec["page"]].get_text()
    if "lines" in spec:
        a, b = spec["lines"]
        text = "\n".join(text.split("\n")[a:b])
    return text


def labelled(spec: dict) -> list[tuple[str, str]]:
    return [(e["kind"], e["text"]) for e in spec["entities"] for _ in range(e.get("n", 1))]


def kind_of(m: Mention) -> str:
    return "org" if m.kind == "programme" else m.kind


def pair(gold: list[tuple[str, str]], predicted: list[tuple[str, str]]) -> tuple[list, list, list]:
    """(matched, false positives, misses)."""
    left = list(range(len(gold)))
    matched, unmatched = [], []
    pending = list(predicted)
    for exact in (True, False):
        still = []
        for kind, text in pending:
            p = fold_words(text)
            hit = next(
                (
                    i
                    for i in left
                    if gold[i][0] == kind
                    and (
                        p == fold_words(gold[i][1])
                        if exact
                        else (p in fold_words(gold[i][1]) or fold_words(gold[i][1]) in p)
                    )
                ),
                None,
            )
            if hit is None:
                still.append((kind, text))
            else:
                left.remove(hit)
                matched.append((kind, text, gold[hit][1]))
        pending = still
    unmatched = pending
    return matched, unmatched, [gold[i] for i in left]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--labels", type=Path, default=REPO / "eval" / "docgraph" / "entities.yaml")
    parser.add_argument("--errors", action="store_true", help="print every false positive and miss")
    args = parser.parse_args()
    settings = Settings()
    tagger = GeoTagger(
        Gazetteer.from_geonames(settings.gazetteer_min_population), settings.geo_min_confidence
    )
    spec = yaml.safe_load(args.labels.read_text())
    tp: Counter[tuple[str, str]] = Counter()
    fp: Counter[tuple[str, str]] = Counter()
    fn: Counter[tuple[str, str]] = Counter()
    errors: list[str] = []
    passages = [p for p in spec["passages"] if (CORPUS / p["file"]).exists()]
    for absent in {p["file"] for p in spec["passages"]} - {p["file"] for p in passages}:
        print(f"skipped (absent): {absent}")
    # as ingestion does: acronyms defined anywhere in a document are known on all its pages
    known: dict[str, dict[str, str]] = {}
    expansions: dict[str, dict[str, tuple[str, str]]] = {}
    for passage in passages:
        for m in extract(passage_text(passage)):
            if m.acronym and m.expansion:
                known.setdefault(passage["file"], {})[m.key] = m.kind
                expansions.setdefault(passage["file"], {})[m.expansion] = (m.key, m.kind)
    for passage in passages:
        text = passage_text(passage)
        tags = [t.to_payload() for t in tagger.tags(text, tagger.country_hint(text))]
        found = extract(text, known.get(passage["file"]), tags, expansions.get(passage["file"]))
        predicted = [(kind_of(m), m.text) for m in found]
        matched, false_pos, misses = pair(labelled(passage), predicted)
        lang = passage["lang"]
        where = f"{passage['file']} p{passage['page']}"
        for kind, *_ in matched:
            tp[(kind, lang)] += 1
        for kind, text_ in false_pos:
            fp[(kind, lang)] += 1
            errors.append(f"FP {where} {kind}: {text_!r}")
        for kind, text_ in misses:
            fn[(kind, lang)] += 1
            errors.append(f"miss {where} {kind}: {text_!r}")
    kinds = sorted({k for k, _ in tp | fp | fn})
    print(f"{'kind':8} {'lang':4} {'labels':>6} {'found':>6} {'right':>6} {'precision':>9} {'recall':>7}")
    for kind in kinds:
        for lang in ("pt", "en", "all"):
            langs = ("pt", "en") if lang == "all" else (lang,)
            t = sum(tp[(kind, x)] for x in langs)
            f = sum(fp[(kind, x)] for x in langs)
            n = sum(fn[(kind, x)] for x in langs)
            if t + f + n == 0:
                continue
            precision = f"{t / (t + f):.3f}" if t + f else "-"
            recall = t / (t + n) if t + n else 0.0
            print(f"{kind:8} {lang:4} {t + n:6d} {t + f:6d} {t:6d} {precision:>9} {recall:7.3f}")
    t, f, n = sum(tp.values()), sum(fp.values()), sum(fn.values())
    print(
        f"{'all':8} {'all':4} {t + n:6d} {t + f:6d} {t:6d} {t / max(t + f, 1):9.3f} {t / max(t + n, 1):7.3f}"
    )
    kept = [
        k
        for k in kinds
        if (tp_k := sum(v for (x, _), v in tp.items() if x == k))
        + sum(v for (x, _), v in fp.items() if x == k)
        and tp_k / (tp_k + sum(v for (x, _), v in fp.items() if x == k)) >= KEEP
    ]
    print(f"kept (precision >= {KEEP}): {', '.join(kept)}")
    if args.errors:
        print("\n".join(errors))


if __name__ == "__main__":
    main()
