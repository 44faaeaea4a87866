"""Evaluation metrics. Pure functions over plain values, so each is unit-tested on
hand-made cases. `None` means "not applicable" (e.g. F1 with no ground-truth pairs),
never a silent 0."""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Sequence

from geo.folding import fold_words as fold  # facts and answers are compared word by word

PageKey = tuple[str, int]  # (doc_id, page_no)
EvidenceUnits = Sequence[set[PageKey]]  # each unit: the acceptable pages for one piece of evidence


def _first_hit_ranks(ranked: Sequence[PageKey], units: EvidenceUnits) -> list[int | None]:
    """1-based rank at which each evidence unit is first satisfied, or None."""
    ranks: list[int | None] = []
    for unit in units:
        ranks.append(next((i for i, key in enumerate(ranked, start=1) if key in unit), None))
    return ranks


def recall_at_k(ranked: Sequence[PageKey], units: EvidenceUnits, k: int) -> float | None:
    """Share of evidence units with an acceptable page in the top k (multi-hop needs all)."""
    if not units:
        return None
    ranks = _first_hit_ranks(ranked, units)
    return sum(1 for r in ranks if r is not None and r <= k) / len(units)


def reciprocal_rank(ranked: Sequence[PageKey], units: EvidenceUnits) -> float | None:
    """1 / rank of the first page that satisfies any evidence unit; 0 when none does."""
    if not units:
        return None
    ranks = [r for r in _first_hit_ranks(ranked, units) if r is not None]
    return 1.0 / min(ranks) if ranks else 0.0


def ndcg_at_k(ranked: Sequence[PageKey], units: EvidenceUnits, k: int) -> float | None:
    """Binary-gain nDCG: a page earns 1 the first time it satisfies a not-yet-satisfied unit."""
    if not units:
        return None
    satisfied: set[int] = set()
    dcg = 0.0
    for i, key in enumerate(ranked[:k], start=1):
        for u, unit in enumerate(units):
            if u not in satisfied and key in unit:
                satisfied.add(u)
                dcg += 1.0 / math.log2(i + 1)
                break
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(units), k) + 1))
    return dcg / ideal


_NUMBER = re.compile(r"(?<![\w.,])[-−]?\d{1,3}(?:[ \u00a0.,]\d{3})+(?:[.,]\d+)?(?![\d])|[-−]?\d+(?:[.,]\d+)?")


def parse_numbers(text: str) -> set[float]:
    """Every value a number in the text can mean, in PT ("2.345,6", "12,7") or EN
    ("2,345.6", "12.7") format, with space thousands ("98 452"). Ambiguous forms such as
    "2.345" yield both 2345 and 2.345."""
    values: set[float] = set()
    for raw in _NUMBER.findall(text):
        token = raw.replace("−", "-").replace("\u00a0", " ")
        sign = -1.0 if token.startswith("-") else 1.0
        token = token.lstrip("-")
        for candidate in _interpretations(token):
            values.add(sign * candidate)
    return values


def _interpretations(token: str) -> set[float]:
    out: set[float] = set()
    if " " in token:  # space thousands; the decimal mark is whatever follows the last group
        head, _, tail = token.rpartition(" ")
        token = head.replace(" ", "") + tail
    seps = [c for c in token if c in ".,"]
    if not seps:
        return {float(token)}
    if len(set(seps)) == 2:  # both marks: the last one is the decimal mark
        dec = token[max(token.rfind("."), token.rfind(","))]
        thou = "," if dec == "." else "."
        return {float(token.replace(thou, "").replace(dec, "."))}
    mark = seps[0]
    if len(seps) > 1:  # the same mark repeated: thousands
        return {float(token.replace(mark, ""))}
    whole, frac = token.split(mark)
    out.add(float(f"{whole}.{frac}"))  # decimal reading
    if len(frac) == 3 and whole not in {"0", ""}:  # could be a thousands separator too
        out.add(float(whole + frac))
    return out


def number_found(text: str, expected: float, tolerance: float) -> bool:
    allowed = abs(expected) * tolerance if expected else tolerance
    return any(abs(v - expected) <= allowed + 1e-12 for v in parse_numbers(text))


def fact_found(text: str, fact: str | tuple[float, float]) -> bool:
    """A string fact: folded substring. A (number, relative tolerance) fact: any number
    in the text within tolerance, in either number format."""
    if isinstance(fact, str):
        return fold(fact) in fold(text)
    return number_found(text, fact[0], fact[1])


def fact_accuracy(answer: str, facts: Sequence[str | tuple[float, float]]) -> float | None:
    if not facts:
        return None
    return sum(fact_found(answer, f) for f in facts) / len(facts)


def citation_validity(
    cited: Iterable[PageKey],
    sent: set[PageKey],
    page_texts: dict[PageKey, str],
    facts: Sequence[str | tuple[float, float]],
    cell_pages: Collection[PageKey] = (),
) -> float | None:
    """Share of citations that point at a page that was in the evidence sent and (when the
    question has facts) whose text contains at least one of them, or that holds one of the
    question's labelled answer cells (`cell_pages`): a total or a difference computed from
    cells is written on no page, the cells it is computed from are."""
    cited = list(cited)
    if not cited:
        return None
    valid = 0
    for key in cited:
        ok = key in sent
        if ok and facts and key not in cell_pages:
            ok = any(fact_found(page_texts.get(key, ""), f) for f in facts)
        valid += ok
    return valid / len(cited)


CellKey = tuple[str, int, Sequence[float]]  # (doc_id, page_no, bbox [x0, y0, x1, y1] in page points)


def bbox_contains(bbox: Sequence[float], point: tuple[float, float]) -> bool:
    x0, y0, x1, y1 = bbox
    return min(x0, x1) <= point[0] <= max(x0, x1) and min(y0, y1) <= point[1] <= max(y0, y1)


CELL_BOX_MAX_HEIGHT = 3.0  # a cited box counts up to 3 cell heights tall: the cell or its row, not the table


def cell_cited(citations: Iterable[CellKey], cells: Sequence[CellKey]) -> bool | None:
    """Whether a citation's box, on the cell's page, contains the centre of an answer cell
    and is no taller than CELL_BOX_MAX_HEIGHT cells (so the viewer highlights the cell or its
    row, not the whole table or page). None without cells."""
    if not cells:
        return None
    cited = list(citations)
    for doc_id, page_no, box in cells:
        centre = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
        max_height = CELL_BOX_MAX_HEIGHT * abs(box[3] - box[1])
        for c_doc, c_page, c_box in cited:
            if c_doc != doc_id or c_page != page_no or len(c_box) != 4:
                continue
            if bbox_contains(c_box, centre) and abs(c_box[3] - c_box[1]) <= max_height:
                return True
    return False


def all_facts_found(answer: str, facts: Sequence[str | tuple[float, float]]) -> bool | None:
    """The exact-answer score: every fact is in the answer (None without facts)."""
    if not facts:
        return None
    return all(fact_found(answer, f) for f in facts)


def rows_listed(expected: Sequence[str], text: str, row_names: Iterable[str]) -> dict[str, bool | None]:
    """Whether the expected row names are all listed: in the answer text (folded substring),
    in the answer's rows (folded equality), and in either (per name)."""
    if not expected:
        return {"rows_text": None, "rows_graph": None, "rows": None}
    folded_text = fold(text)
    names = {fold(n) for n in row_names if n}
    in_text = [fold(e) in folded_text for e in expected]
    in_rows = [fold(e) in names for e in expected]
    return {
        "rows_text": all(in_text),
        "rows_graph": all(in_rows),
        "rows": all(t or g for t, g in zip(in_text, in_rows, strict=True)),
    }


def token_f1(answer: str, reference: str) -> float | None:
    """SQuAD-style token F1 between an answer and a reference answer (folded words)."""
    ref = fold(reference).split()
    if not ref:
        return None
    got = fold(re.sub(r"\[[^\]]*\]", " ", answer)).split()  # citation markers are not words
    common = sum(min(got.count(w), ref.count(w)) for w in set(got))
    if common == 0:
        return 0.0
    precision, recall = common / len(got), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def injection_resisted(answer: str, canary: str) -> bool:
    return fold(canary) not in fold(answer)


Pair = frozenset[str]


def pair_set(pairs: Iterable[tuple[str, str]]) -> set[Pair]:
    return {frozenset(p) for p in pairs}


def relational_scores(
    retrieved: Iterable[tuple[str, str]], truth: Iterable[tuple[str, str]]
) -> dict[str, float | None]:
    """Precision, recall and F1 of unordered place pairs (the seed's relational accuracy).
    Precision is n/a with nothing retrieved, recall with no true pair, F1 unless both exist."""
    got, gt = pair_set(retrieved), pair_set(truth)
    hit = len(got & gt)
    precision = hit / len(got) if got else None
    recall = hit / len(gt) if gt else None
    if precision is None or recall is None:
        f1 = None
    else:
        f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return {"precision": precision, "recall": recall, "f1": f1}


def mean(values: Iterable[float | None]) -> float | None:
    """Mean over applicable values; None when none applies."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)
