"""Geocoding precision/recall of the geo tagger on hand-labelled place mentions.

    .venv/bin/python scripts/eval_geocoding.py                    # eval/geocoding/mentions.yaml
    .venv/bin/python scripts/eval_geocoding.py --out /tmp/geo.json --min-confidence 0.3

Each passage of the labelled set is tagged with `GeoTagger.tags(text, country_hint)` over
GeoNames (cities >= 15 000 inhabitants, countries, states, continents) plus the user
gazetteers the passage lists (recife_bairros: <corpus>/poi/recife_bairros.geojson). A
prediction is correct when it lies within `tolerance_km` of a labelled place of the same
passage; predictions and labels are paired one-to-one, greedily, closest pair first (a
coordinate prediction pairs with a written-coordinate label, a place-name prediction with a
place label, before any cross pairing). Unpaired predictions are false positives, unpaired
labels misses.

Reported: precision, recall and F1 overall, per language, per source (place names from the
gazetteer vs coordinates written in the text), at confidence thresholds; recall per kind of
label and over the labels the gazetteer could match at all; every false positive and miss
with a diagnosis (absent from the gazetteer, not recognised in the text, resolved to another
place of the same name, below the confidence cut). Passages needing a user gazetteer that
is not on this machine are skipped and listed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from geo.distance import haversine_km  # noqa: E402
from geo.folding import fold  # noqa: E402
from geo.gazetteer import Gazetteer, PlaceMatch  # noqa: E402
from ingest.geotagging import REGION_KINDS, GeoTag, GeoTagger  # noqa: E402

DEFAULT_MENTIONS = REPO / "eval" / "geocoding" / "mentions.yaml"
DEFAULT_CORPUS = Path(os.environ.get("CARTA_CORPUS_DIR", REPO.parent / "shared" / "corpus"))
USER_GAZETTEERS = {"recife_bairros": Path("poi") / "recife_bairros.geojson"}
THRESHOLDS = (0.5, 0.7, 0.9)
COORDINATE_TOLERANCE_KM = 0.5
LANGUAGES = ("pt", "en")
LABEL_KINDS = ("city", "neighbourhood", "landmark", "region", "coordinate")
SOURCES = {"gazetteer": "place", "text-coordinate": "coordinate"}  # prediction source -> label type
PASSAGE_KEYS = frozenset({"id", "language", "country_hint", "text", "gazetteers", "mentions", "coordinates"})


# --------------------------------------------------------------------------- labelled set


@dataclass(frozen=True)
class Label:
    text: str  # the mention as written ("" for coordinates)
    lat: float
    lon: float
    tolerance_km: float
    kind: str  # city, neighbourhood, landmark, region, coordinate

    @property
    def type(self) -> str:
        return "coordinate" if self.kind == "coordinate" else "place"


@dataclass(frozen=True)
class Passage:
    id: str
    language: str
    country_hint: str | None
    text: str
    gazetteers: tuple[str, ...]
    labels: tuple[Label, ...]


def load_passages(path: Path) -> list[Passage]:
    """The labelled set, checked: unknown keys, languages, kinds, coordinates or mention texts
    that do not occur in the passage are errors (a typo must not silently become a miss)."""
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(raw, list):
        raise ValueError(f"{path}: expected a list of passages")
    passages, seen = [], set()
    for item in raw:
        pid = item.get("id")
        if not pid or pid in seen:
            raise ValueError(f"{path}: missing or duplicate passage id {pid!r}")
        seen.add(pid)
        if unknown := set(item) - PASSAGE_KEYS:
            raise ValueError(f"{pid}: unknown keys {sorted(unknown)}")
        if item.get("language") not in LANGUAGES:
            raise ValueError(f"{pid}: language must be one of {LANGUAGES}")
        text = item["text"]
        labels = []
        for m in item.get("mentions") or ():
            kind = m.get("kind", "city")
            if kind not in LABEL_KINDS or kind == "coordinate":
                raise ValueError(f"{pid}: bad kind {kind!r} for {m.get('text')!r}")
            if fold(m["text"]) not in fold(text):
                raise ValueError(f"{pid}: mention {m['text']!r} does not occur in the text")
            labels.append(Label(m["text"], *_latlon(pid, m), float(m["tolerance_km"]), kind))
        for c in item.get("coordinates") or ():
            tol = float(c.get("tolerance_km", COORDINATE_TOLERANCE_KM))
            labels.append(Label("", *_latlon(pid, c), tol, "coordinate"))
        gazetteers = tuple(item.get("gazetteers") or ())
        if unknown_gaz := set(gazetteers) - set(USER_GAZETTEERS):
            raise ValueError(f"{pid}: unknown gazetteers {sorted(unknown_gaz)}")
        hint = item.get("country_hint")
        passages.append(Passage(pid, item["language"], hint, text, gazetteers, tuple(labels)))
    return passages


def _latlon(pid: str, item: dict[str, Any]) -> tuple[float, float]:
    lat, lon = float(item["lat"]), float(item["lon"])
    if not (-90 <= lat <= 90 and -180 <= lon <= 180):
        raise ValueError(f"{pid}: invalid coordinates {lat}, {lon}")
    return lat, lon


# --------------------------------------------------------------------------- matching


def category(item: GeoTag | Label) -> str:
    """coordinate, region (state, country, continent) or local: what a prediction or label is."""
    if isinstance(item, Label):
        return item.kind if item.kind in ("coordinate", "region") else "local"
    if item.source == "text-coordinate":
        return "coordinate"
    return "region" if item.kind in REGION_KINDS else "local"


def match(preds: Sequence[GeoTag], labels: Sequence[Label]) -> list[tuple[int, int, float]]:
    """One-to-one (prediction index, label index, km) pairs within each label's tolerance,
    greedy: same-category pairs (coordinate, region, local place) before cross-category ones,
    then closest first. A country tag sits at its capital: it must pair with the country
    label, not steal the capital's."""
    pairs = []
    for pi, p in enumerate(preds):
        p_cat = category(p)
        for li, lab in enumerate(labels):
            d = haversine_km(p.lat, p.lon, lab.lat, lab.lon)
            if d <= lab.tolerance_km:
                pairs.append((p_cat != category(lab), d, pi, li))
    pairs.sort()
    used_p: set[int] = set()
    used_l: set[int] = set()
    out = []
    for _, d, pi, li in pairs:
        if pi not in used_p and li not in used_l:
            used_p.add(pi)
            used_l.add(li)
            out.append((pi, li, d))
    return out


@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, n_preds: int, n_labels: int, n_matched: int) -> None:
        self.tp += n_matched
        self.fp += n_preds - n_matched
        self.fn += n_labels - n_matched

    def metrics(self) -> dict[str, float | int]:
        p = self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0
        r = self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        return {
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "precision": round(p, 4),
            "recall": round(r, 4),
            "f1": round(f1, 4),
        }


@dataclass
class Result:
    """One passage's predictions (all, before any threshold) and its labels."""

    passage: Passage
    preds: list[GeoTag]
    spans: list[PlaceMatch] = field(default_factory=list)  # the gazetteer's raw mentions, for diagnosis


def score(
    results: Sequence[Result],
    keep_pred: Callable[[GeoTag], bool] = lambda p: True,
    keep_label: Callable[[Label], bool] = lambda lab: True,
) -> Counts:
    """Counts over a subset of predictions and labels, matched afresh per passage."""
    counts = Counts()
    for r in results:
        preds = [p for p in r.preds if keep_pred(p)]
        labels = [lab for lab in r.passage.labels if keep_label(lab)]
        counts.add(len(preds), len(labels), len(match(preds, labels)))
    return counts


# --------------------------------------------------------------------------- running


def build_taggers(
    passages: Sequence[Passage], corpus: Path, min_population: int, min_confidence: float
) -> tuple[dict[tuple[str, ...], GeoTagger], dict[str, str]]:
    """One tagger per distinct set of user gazetteers; sets with a missing file are left out
    (returned as gazetteer name -> reason)."""
    taggers: dict[tuple[str, ...], GeoTagger] = {}
    missing: dict[str, str] = {}
    for names in sorted({p.gazetteers for p in passages}):
        gazetteer = Gazetteer.from_geonames(min_population)
        ok = True
        for name in names:
            path = corpus / USER_GAZETTEERS[name]
            if not path.exists():
                missing[name] = f"{path} not found (set --corpus)"
                ok = False
                continue
            gazetteer.add_geojson(path, source=name)
        if ok:
            taggers[names] = GeoTagger(gazetteer, min_confidence=min_confidence)
    return taggers, missing


def run(passages: Sequence[Passage], taggers: dict[tuple[str, ...], GeoTagger]) -> list[Result]:
    results = []
    for p in passages:
        tagger = taggers.get(p.gazetteers)
        if tagger is None:
            continue
        preds = tagger.tags(p.text, p.country_hint)
        assert tagger.gazetteer is not None
        spans = tagger.gazetteer.find_places(p.text, country_hint=p.country_hint)
        results.append(Result(p, preds, spans))
    return results


# --------------------------------------------------------------------------- diagnosis


def _place_str(name: str, country: str | None, kind: str) -> str:
    return f"{name} ({country or '-'}, {kind})"


def _spans_for(label: Label, result: Result) -> list[PlaceMatch]:
    """Gazetteer mentions overlapping an occurrence of the label's text."""
    folded, origin = [], []  # folded characters and the index of the character each came from
    for i, ch in enumerate(result.passage.text):
        for f in fold(ch):
            folded.append(f)
            origin.append(i)
    text, needle = "".join(folded), fold(label.text)
    occurrences, start = [], text.find(needle)
    while start >= 0:
        occurrences.append((origin[start], origin[start + len(needle) - 1] + 1))
        start = text.find(needle, start + 1)
    return [s for s in result.spans for a, b in occurrences if s.start < b and a < s.end]


def diagnose_miss(
    label: Label, result: Result, tagger: GeoTagger, paired_with: dict[str, Label]
) -> dict[str, Any]:
    """Why a label was missed. `paired_with`: place id of each paired prediction -> its label."""
    entry: dict[str, Any] = {
        "passage": result.passage.id,
        "text": label.text or "(written coordinate)",
        "kind": label.kind,
        "lat": label.lat,
        "lon": label.lon,
    }
    if label.type == "coordinate":
        entry["reason"] = "coordinate not read from the text"
        return entry
    gazetteer = tagger.gazetteer
    assert gazetteer is not None
    near = [
        m
        for m in gazetteer.lookup(label.text, country_hint=result.passage.country_hint)
        if haversine_km(m.place.lat, m.place.lon, label.lat, label.lon) <= label.tolerance_km
    ]
    entry["in_gazetteer"] = bool(near)
    spans = _spans_for(label, result)
    if spans:
        s = max(spans, key=lambda s: s.end - s.start)
        d = haversine_km(s.place.lat, s.place.lon, label.lat, label.lon)
        entry["predicted"] = _place_str(s.place.name, s.place.country, s.place.kind)
        entry["predicted_km"] = round(d, 1)
        entry["confidence"] = s.confidence
        entry["counted"] = s.confidence >= tagger.min_confidence  # an unpaired one is a false positive
        other = paired_with.get(s.place.id)
        if d <= label.tolerance_km and not entry["counted"]:
            entry["reason"] = f"right place, confidence {s.confidence} below min_confidence"
        elif d <= label.tolerance_km and other is not None:
            entry["reason"] = f"right place, but its tag was paired with label {other.text or 'coordinate'!r}"
        elif d <= label.tolerance_km:
            entry["reason"] = "right place, but the tag was dropped (dedupe or tag cap)"
        elif fold(s.text) != fold(label.text):
            entry["reason"] = f"text read as another name ({s.text!r})"
        elif near:
            entry["reason"] = "resolved to another place of the same name"
        else:
            entry["reason"] = "absent from the gazetteer; another place of that name was tagged"
    elif near:
        entry["reason"] = "in the gazetteer but not recognised in the text"
    else:
        entry["reason"] = "absent from the gazetteer"
    return entry


def diagnose_false_positive(pred: GeoTag, result: Result) -> dict[str, Any]:
    if pred.source == "gazetteer":
        written = sorted({s.text for s in result.spans if s.place.id == pred.place_id})
    else:
        written = [pred.label]
    nearest = min(
        ((haversine_km(pred.lat, pred.lon, lab.lat, lab.lon), lab) for lab in result.passage.labels),
        key=lambda dl: dl[0],
        default=None,
    )
    entry: dict[str, Any] = {
        "passage": result.passage.id,
        "text": " / ".join(written) or pred.label,
        "predicted": _place_str(pred.label, pred.country, pred.kind),
        "source": pred.source,
        "lat": round(pred.lat, 4),
        "lon": round(pred.lon, 4),
        "confidence": pred.confidence,
    }
    if nearest is not None:
        entry["nearest_label"] = nearest[1].text or "(written coordinate)"
        entry["nearest_label_km"] = round(nearest[0], 1)
    return entry


# --------------------------------------------------------------------------- report


def evaluate(
    results: Sequence[Result],
    taggers: dict[tuple[str, ...], GeoTagger],
    thresholds: Sequence[float],
) -> dict[str, Any]:
    report: dict[str, Any] = {"overall": score(results).metrics()}
    report["by_language"] = {
        lang: score([r for r in results if r.passage.language == lang]).metrics() for lang in LANGUAGES
    }
    report["by_source"] = {
        src: score(results, lambda p, s=src: p.source == s, lambda lab, t=typ: lab.type == t).metrics()
        for src, typ in SOURCES.items()
    }
    report["by_threshold"] = {
        f"{t:.2f}": score(results, lambda p, t=t: p.confidence >= t).metrics() for t in thresholds
    }
    # recall per label kind and over the labels some gazetteer entry could match
    kinds: dict[str, Counts] = {k: Counts() for k in LABEL_KINDS}
    reachable = Counts()
    false_positives, misses = [], []
    for r in results:
        tagger = taggers[r.passage.gazetteers]
        pairs = match(r.preds, r.passage.labels)
        matched_p = {pi for pi, _, _ in pairs}
        matched_l = {li for _, li, _ in pairs}
        for li, lab in enumerate(r.passage.labels):
            hit = li in matched_l
            kinds[lab.kind].add(0, 1, int(hit))
            if not hit:
                paired_with = {r.preds[pi].place_id or "": r.passage.labels[lj] for pi, lj, _ in pairs}
                miss = diagnose_miss(lab, r, tagger, paired_with)
                misses.append(miss)
                if lab.type == "place" and miss.get("in_gazetteer"):
                    reachable.add(0, 1, 0)
            elif lab.type == "place":
                reachable.add(0, 1, 1)
        unpaired = [p for pi, p in enumerate(r.preds) if pi not in matched_p]
        false_positives += [diagnose_false_positive(p, r) for p in unpaired]
    report["recall_by_kind"] = {
        k: {"labels": c.tp + c.fn, "tp": c.tp, "recall": c.metrics()["recall"]}
        for k, c in kinds.items()
        if c.tp + c.fn
    }
    report["place_labels_in_gazetteer"] = {
        "labels": reachable.tp + reachable.fn,
        "tp": reachable.tp,
        "recall": reachable.metrics()["recall"],
    }
    report["false_positives"] = false_positives
    report["misses"] = misses
    return report


def _table(report: dict[str, Any], min_confidence: float) -> str:
    rows = [("overall", report["overall"])]
    rows += [(f"language {k}", v) for k, v in report["by_language"].items()]
    rows += [(f"source {k}", v) for k, v in report["by_source"].items()]
    rows += [
        (f"confidence >= {k}{' (= all)' if float(k) <= min_confidence else ''}", v)
        for k, v in report["by_threshold"].items()
    ]
    width = max(len(name) for name, _ in rows)
    lines = [f"{'':<{width}}  {'tp':>4} {'fp':>4} {'fn':>4}  {'P':>6} {'R':>6} {'F1':>6}"]
    for name, m in rows:
        lines.append(
            f"{name:<{width}}  {m['tp']:>4} {m['fp']:>4} {m['fn']:>4}  "
            f"{m['precision']:>6.3f} {m['recall']:>6.3f} {m['f1']:>6.3f}"
        )
    lines.append("")
    kinds = (f"{k} {v['tp']}/{v['labels']} ({v['recall']:.3f})" for k, v in report["recall_by_kind"].items())
    lines.append("recall by label kind: " + ", ".join(kinds))
    g = report["place_labels_in_gazetteer"]
    lines.append(f"recall over place labels in the gazetteer: {g['tp']}/{g['labels']} ({g['recall']:.3f})")
    return "\n".join(lines)


def _error_lines(report: dict[str, Any]) -> str:
    lines = [f"false positives ({len(report['false_positives'])}):"]
    for fp in report["false_positives"]:
        near = ""
        if "nearest_label" in fp:
            near = f"; nearest label {fp['nearest_label']!r} {fp['nearest_label_km']} km"
        lines.append(f"  {fp['passage']}: {fp['text']!r} -> {fp['predicted']} conf {fp['confidence']}{near}")
    lines.append(f"misses ({len(report['misses'])}):")
    for m in report["misses"]:
        pred = ""
        if "predicted" in m:
            cut = "" if m["counted"] else ", under the cut"
            pred = f" [tagged {m['predicted']}, {m['predicted_km']} km off, conf {m['confidence']}{cut}]"
        lines.append(f"  {m['passage']}: {m['text']!r} ({m['kind']}): {m['reason']}{pred}")
    return "\n".join(lines)


def _predictions(results: Sequence[Result]) -> list[dict[str, Any]]:
    return [
        {
            "id": r.passage.id,
            "predictions": [
                {
                    "label": p.label,
                    "source": p.source,
                    "kind": p.kind,
                    "country": p.country,
                    "lat": round(p.lat, 5),
                    "lon": round(p.lon, 5),
                    "confidence": p.confidence,
                }
                for p in r.preds
            ],
        }
        for r in results
    ]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mentions", type=Path, default=DEFAULT_MENTIONS, help="labelled passages (YAML)")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="shared corpus (for poi/*.geojson)")
    ap.add_argument("--out", type=Path, default=Path("geocoding-results.json"), help="JSON report")
    ap.add_argument("--min-population", type=int, default=15000, choices=(500, 1000, 5000, 15000))
    ap.add_argument("--min-confidence", type=float, default=0.5, help="GeoTagger cut (production: 0.5)")
    ap.add_argument("--thresholds", default=",".join(map(str, THRESHOLDS)), help="confidence cuts reported")
    ap.add_argument("--quiet", action="store_true", help="print the table only, not the error lists")
    args = ap.parse_args(argv)
    thresholds = [float(t) for t in args.thresholds.split(",") if t.strip()]

    passages = load_passages(args.mentions)
    taggers, missing = build_taggers(passages, args.corpus, args.min_population, args.min_confidence)
    results = run(passages, taggers)
    skipped = [p.id for p in passages if p.gazetteers not in taggers]
    report = evaluate(results, taggers, thresholds)
    evaluated = [r.passage for r in results]
    summary = {
        "mentions_file": str(args.mentions),
        "min_population": args.min_population,
        "min_confidence": args.min_confidence,
        "thresholds": thresholds,
        "passages": len(evaluated),
        "passages_by_language": {lang: sum(p.language == lang for p in evaluated) for lang in LANGUAGES},
        "place_mentions": sum(lab.type == "place" for p in evaluated for lab in p.labels),
        "coordinates": sum(lab.type == "coordinate" for p in evaluated for lab in p.labels),
        "predictions": sum(len(r.preds) for r in results),
        "skipped_passages": skipped,
        "missing_gazetteers": missing,
    }
    out = {"summary": summary, **report, "passages": _predictions(results)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    print(
        f"{summary['passages']} passages ({summary['passages_by_language']}), "
        f"{summary['place_mentions']} place mentions + {summary['coordinates']} written coordinates, "
        f"{summary['predictions']} predictions (GeoNames >= {args.min_population}, "
        f"min_confidence {args.min_confidence})"
    )
    if skipped:
        print(f"skipped {len(skipped)} passages, missing gazetteers: {missing}")
    print(_table(report, args.min_confidence))
    if not args.quiet:
        print()
        print(_error_lines(report))
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
