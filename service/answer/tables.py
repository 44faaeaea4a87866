"""Answers read from a table's cells, without an LLM.

A chunk cut from a table carries its cell grid (payload "table", TABLE_FIELDS in
index/payloads.py). A question that names a row and a column ("Nagaland", "2001-2011") is
answered by the cell where they cross; one that asks for the largest or smallest value of
a column or a row by the argmax/argmin over it (total rows and columns left out); one that
asks for a total by the table's total row or column, or by the sum of a complete column.

Labels meet the question through ingest/values.py: names folded, dates in any spelling
("18 de agosto de 2017" = "18-ago-17"), periods ("2001-11" = "2001-2011"), numbers with
any separators. Each matched term weighs by how rare it is among the table's labels, and
a label that states values the question does not ask for loses a little ("15/16" in a
row about two seasons). When no row or no column is the one clear best, or the question
names something the chosen cell does not address, the answer is None and the sentence
path answers: a table answer is a cell the question points at, never a guess.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from geo.folding import fold
from ingest.values import find_periods, parse_date, parse_number, split_tokens
from service.answer.gate import key_terms
from service.answer.markers import cite_label, neutralise
from service.answer.types import Citation
from service.query.types import ChunkEvidence, PageEvidence

Operation = Literal["lookup", "argmax", "argmin", "total", "sum"]

_STOPWORDS = frozenset(
    """a o os as um uma uns umas de do da dos das em no na nos nas ao aos por para pelo pela pelos pelas
    com sem que qual quais quanto quantos quanta quantas quando onde como foi foram era eram e ou se seu
    sua seus suas teve tiveram tem ter estava estavam esta este isso segundo sobre entre ate qual
    the an of in on at to for by with from and or is was were are be been had has have did does do
    what which who whom whose how much many when where according value values there this that its
    their it as than""".split()
)
_ARGMAX = frozenset(
    "largest highest most biggest greatest maximum max top maior maiores maximo maxima mais".split()
)
_ARGMIN = frozenset(
    "lowest smallest least fewest minimum min menor menores minimo minima menos baixo baixa".split()
)
_TOTAL_ASKED = frozenset("total totais soma sum overall somado somados".split())
_TOTAL_LABEL = re.compile(
    r"\b(?:total|totals|totais|totales|grand total|sum|soma|geral|overall|all india|all states|country|"
    r"brasil|brazil|pais)\b"
)
_EMPTY = frozenset(["", "-", "–", "—", "..", "...", "n/a", "na", "nd", "n.d."])
_UNIT_GROUP = re.compile(r"\(([^()]{1,24})\)")
_PERCENT = frozenset(["per cent", "percent", "%", "pct", "porcentagem", "percentual", "pourcentage"])
_UNIT = re.compile(
    r"(?:(?:rs|r\$|us\$|inr|usd|brl|eur)\.?\s*(?:in\s*\d+|mil|milhoes|mi|bi)?"
    r"|[a-z$€£]{1,5}\.?(?:/[a-z]{1,4})?(?:\s+[a-z]{1,5})?|\d+\s*[a-z]{1,4}|in\s+\d+)"
)
_NUMBER_WITH_UNIT = re.compile(r"([-−+]?\d[\d.,  ]*)\s*(?:p\.\s?p\.|[a-z%$€]{1,4}\.?)", re.IGNORECASE)
_CODE = re.compile(r"\d{5,}")  # an identifier written as a bare number (an A.I., a protocol)
_WORD_PARTS = re.compile(r"[\w'-]+")

TEMPLATES: dict[str, dict[str, str]] = {
    "lookup": {
        "en": "{lead}the value of {measure} for {entity} is {value} {cite}.",
        "pt": "{lead}o valor de {measure} para {entity} é {value} {cite}.",
    },
    "lookup_time": {
        "en": "{lead}the value for {entity} in {time} was {value} {cite}.",
        "pt": "{lead}o valor de {entity} em {time} era {value} {cite}.",
    },
    "argmax": {
        "en": "{lead}{entities} had the highest value {of_line}: {value} {cite}.",
        "pt": "{lead}{entities} {verb} o maior valor {of_line}: {value} {cite}.",
    },
    "argmin": {
        "en": "{lead}{entities} had the lowest value {of_line}: {value} {cite}.",
        "pt": "{lead}{entities} {verb} o menor valor {of_line}: {value} {cite}.",
    },
    "total": {
        "en": "{lead}the total of {line} ({total}) is {value} {cite}.",
        "pt": "{lead}o total de {line} ({total}) é {value} {cite}.",
    },
    "sum": {
        "en": "{lead}the sum of {line} over its {n} rows is {value} {cite}.",
        "pt": "{lead}a soma de {line} nas suas {n} linhas é {value} {cite}.",
    },
}
LEAD = {"en": 'According to the table "{title}", ', "pt": 'Segundo a tabela "{title}", '}
LEAD_UNTITLED = {"en": "According to the table, ", "pt": "Segundo a tabela, "}
TIME_PREPOSITION = {"en": ("of", "in"), "pt": ("de", "em")}
AND = {"en": "and", "pt": "e"}


@dataclass
class Cell:
    text: str
    bbox: list[float]
    number: float | None
    chunk: ChunkEvidence

    @property
    def empty(self) -> bool:
        return self.text.strip().lower() in _EMPTY


@dataclass
class EvidenceTable:
    """One table as the evidence holds it: the body rows of its chunks on one page, merged
    in table order, and what it knows about them."""

    page: PageEvidence
    title: str
    columns: list[str]
    rows: list[list[Cell]]
    complete: bool  # every body row is here (argmax and sums need them all)
    page_text: str  # the page's chunks that are not this table: context such as the month of a report
    label_columns: list[int] = field(default_factory=list)  # the columns that name rows
    total_rows: set[int] = field(default_factory=set)
    total_columns: set[int] = field(default_factory=set)


@dataclass
class TableAnswer:
    """A sentence composed from table cells, with one citation per cell it reads."""

    text: str
    citations: list[Citation]
    operation: Operation
    score: float


@dataclass
class _Match:
    index: int
    score: float
    matched: set[str]


def evidence_tables(pages: Sequence[PageEvidence]) -> list[EvidenceTable]:
    """The tables of the pages' chunks, one per (page, table_no), best page first."""
    tables = []
    for page in pages:
        groups: dict[int, list[ChunkEvidence]] = {}
        for chunk in page.chunks:
            if chunk.table and chunk.table.get("columns") and chunk.table.get("rows"):
                groups.setdefault(int(chunk.table.get("table_no", 0)), []).append(chunk)
        other = " ".join(c.text for c in page.chunks if not c.table)
        for chunks in groups.values():
            tables.append(_merge(page, chunks, other))
    return tables


def _merge(page: PageEvidence, chunks: list[ChunkEvidence], other_text: str) -> EvidenceTable:
    first = chunks[0].table or {}
    columns = [str(c) for c in first["columns"]]
    by_row: dict[int, list[Cell]] = {}
    for chunk in chunks:
        table = chunk.table or {}
        for offset, raw in enumerate(table.get("rows") or []):
            cells = [_cell(c, chunk) for c in raw[: len(columns)]]
            cells += [Cell("", [], None, chunk) for _ in range(len(columns) - len(cells))]
            by_row.setdefault(int(table.get("first_row", 0)) + offset, cells)
    numbers = sorted(by_row)
    rows = [by_row[i] for i in numbers]
    table = EvidenceTable(page, str(first.get("title") or ""), columns, rows, False, other_text)
    table.complete = numbers == list(range(len(numbers))) and _reaches_bottom(rows, first.get("bbox"))
    table.label_columns = _label_columns(table)
    table.total_rows, table.total_columns = _totals(table)
    return table


def _cell(raw: object, chunk: ChunkEvidence) -> Cell:
    text = " ".join(str(raw.get("text") or "").split()) if isinstance(raw, dict) else ""
    bbox = raw.get("bbox") if isinstance(raw, dict) else None
    box = [float(v) for v in bbox] if isinstance(bbox, list) and len(bbox) == 4 else []
    return Cell(text, box, cell_number(text), chunk)


def cell_number(text: str) -> float | None:
    """The number a cell states: "4.738.950", "99,62%", "2,49 p.p.", "47 MWc"; None for text."""
    value = parse_number(text)
    if value is None and (m := _NUMBER_WITH_UNIT.fullmatch(text.strip())):
        value = parse_number(m[1].strip())
    return value


def _reaches_bottom(rows: list[list[Cell]], bbox: object) -> bool:
    """Whether the last row held reaches the table's bottom edge: no later chunk is missing."""
    boxes = [c.bbox for c in rows[-1] if c.bbox] if rows else []
    if not boxes or not isinstance(bbox, list) or len(bbox) != 4:
        return False
    bottom = max(b[3] for b in boxes)
    height = max(b[3] - b[1] for b in boxes)
    return bottom >= float(bbox[3]) - max(2.0, 1.5 * height)


def _label_columns(table: EvidenceTable) -> list[int]:
    """Columns whose cells are mostly words, not numbers: they name the rows."""
    out = []
    for j in range(len(table.columns)):
        texts = [r[j] for r in table.rows if not r[j].empty]
        if texts and sum(c.number is None for c in texts) >= 0.5 * len(texts):
            out.append(j)
    return out or [0]


def _totals(table: EvidenceTable) -> tuple[set[int], set[int]]:
    """Total rows and columns: labelled so ("Total", "All India"), or holding the sum of the
    others (IMEA's "Mato Grosso" column is the sum of the state's regions)."""
    value_columns = [j for j in range(len(table.columns)) if j not in table.label_columns]
    rows = {i for i in range(len(table.rows)) if _TOTAL_LABEL.search(fold(row_label(table, i)))}
    columns = {j for j in value_columns if _TOTAL_LABEL.search(fold(table.columns[j]))}
    for row in table.rows:
        numbers = {j: row[j].number for j in value_columns if row[j].number is not None}
        columns |= {j for j in numbers if _is_sum(numbers[j], [v for k, v in numbers.items() if k != j])}
    if table.complete:
        for j in value_columns:
            numbers = {i: r[j].number for i, r in enumerate(table.rows) if r[j].number is not None}
            rows |= {i for i in numbers if _is_sum(numbers[i], [v for k, v in numbers.items() if k != i])}
    return rows, columns


def _is_sum(value: float, others: list[float]) -> bool:
    nonzero = [v for v in others if v]
    if len(nonzero) < 3 or not value or value < max(nonzero):
        return False
    return abs(value - sum(others)) <= 0.005 * abs(value)


def row_label(table: EvidenceTable, i: int) -> str:
    """The words that name row `i`: its label columns' cells."""
    return " ".join(table.rows[i][j].text for j in table.label_columns if not table.rows[i][j].empty)


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 4 and word.endswith("s") else word


def tokens(text: str) -> set[str]:
    """Value tokens and content words (folded, plural "s" off) of a label or a question."""
    values, words = split_tokens(text)
    return values | {_stem(w) for w in words if w not in _STOPWORDS}


def _strong(token: str) -> bool:
    """Tokens that can address a row or column alone (not a month, a day or a short word)."""
    if token.startswith("num:"):
        return len(token.split(":")[1].lstrip("-").split(".")[0]) >= 3
    if token.startswith(("date:", "period:")):
        return True
    return ":" not in token and len(token) >= 3


def _weight(token: str, df: int, n: int) -> float:
    base = 1.0 + math.log(max(n, 1) / max(df, 1))
    if token.startswith("month:") or (token.startswith("num:") and not _strong(token)):
        return 0.5 * base
    if token.startswith(("period:", "date:")) and token.count("-") >= 1:
        return 1.5 * base
    return base


def _matches(query: set[str], labels: list[set[str]], allowed: Sequence[int]) -> list[_Match]:
    """Positive matches of the query against the allowed labels, best first."""
    df = Counter(t for i in allowed for t in labels[i])
    n = len(allowed)
    out = []
    for i in allowed:
        matched = query & labels[i]
        if not any(_strong(t) for t in matched):
            continue
        gain = sum(_weight(t, df[t], n) for t in matched)
        stray = [t for t in labels[i] - query if t.startswith(("num:", "date:", "period:"))]
        score = gain - 0.5 * sum(_weight(t, df[t], n) for t in stray)
        if score > 0:
            out.append(_Match(i, score, matched))
    return sorted(out, key=lambda m: -m.score)


def _unique_best(matches: list[_Match]) -> _Match | None:
    if not matches or (len(matches) > 1 and matches[1].score >= matches[0].score - 1e-6):
        return None
    return matches[0]


@dataclass
class _Found:
    operation: Operation
    cells: list[tuple[int, int]]  # (row, column) of the cells read
    score: float
    line: str = ""  # the label of the row or column an aggregate ran over
    line_is_column: bool = True
    total_label: str = ""
    value: str = ""  # a computed value (sums)
    addressed: set[str] = field(default_factory=set)  # labels the answer speaks of (key-term check)


class TableAnswerer:
    """Reads the answer from the tables of the evidence pages, or returns None."""

    def answer(self, question: str, language: str, pages: Sequence[PageEvidence]) -> TableAnswer | None:
        """The best table answer among the pages' tables (a better page wins ties), or None
        when no table has one clear row and column (or line) for the question."""
        best: tuple[EvidenceTable, _Found] | None = None
        for table in evidence_tables(pages):
            found = self.read(question, table)
            if found and (best is None or found.score > best[1].score):
                best = (table, found)
        return compose(question, language, *best) if best else None

    def read(self, question: str, table: EvidenceTable) -> _Found | None:
        """What the question asks of this table: a cell, an extreme, a total; None if unclear."""
        words = {fold(w) for w in _WORD_PARTS.findall(question)}
        query = tokens(question)
        row_tokens = [self._row_tokens(table, i) for i in range(len(table.rows))]
        column_tokens = [tokens(c) for c in table.columns]
        body_rows = [i for i, r in enumerate(table.rows) if sum(not c.empty for c in r) >= 2]
        rows = _matches(query, row_tokens, body_rows)
        columns = _matches(query, column_tokens, range(len(table.columns)))
        extreme = "argmin" if words & _ARGMIN else "argmax" if words & _ARGMAX else None
        if extreme:
            found = self._extreme(table, extreme, rows, columns)
        else:
            found = self._lookup(table, rows, columns)
            if words & _TOTAL_ASKED and (found is None or found.operation == "lookup"):
                found = self._total(table, rows, columns) or found
        if found is None or not self._addresses_every_key_term(
            question, table, found, row_tokens, column_tokens
        ):
            return None
        return found

    @staticmethod
    def _row_tokens(table: EvidenceTable, i: int) -> set[str]:
        """A row's label tokens, and the codes its other cells hold ("A.I. 679199")."""
        out = tokens(row_label(table, i))
        for j, cell in enumerate(table.rows[i]):
            if j not in table.label_columns and _CODE.fullmatch(cell.text):
                out.add(f"num:{int(cell.text)}")
        return out

    def _lookup(self, table: EvidenceTable, rows: list[_Match], columns: list[_Match]) -> _Found | None:
        row = _unique_best(rows)
        if row is None:
            return None
        cells = table.rows[row.index]
        # a label column can be the answer ("Município") unless its cell is what named the row
        naming = {j for j in table.label_columns if tokens(cells[j].text) & row.matched}
        filled = [m for m in columns if m.index not in naming and not cells[m.index].empty]
        column = _unique_best(filled)
        if column is None:
            values = [j for j in range(len(table.columns)) if j not in table.label_columns]
            if filled or len(values) != 1 or cells[values[0]].empty:
                return None
            column = _Match(values[0], 0.0, set())  # the table's one value column
        total = row.index in table.total_rows or column.index in table.total_columns
        found = _Found("lookup", [(row.index, column.index)], row.score + column.score)
        found.addressed = {row_label(table, row.index), table.columns[column.index]}
        found.total_label = "total" if total else ""
        return found

    def _total(self, table: EvidenceTable, rows: list[_Match], columns: list[_Match]) -> _Found | None:
        """A total asked for: the total row (or column) across the line the question names,
        else the sum of a complete numeric column."""
        lookup = self._lookup(table, rows, columns)
        if lookup and lookup.total_label:
            r, c = lookup.cells[0]
            lookup.operation = "total"
            is_column_total = c in table.total_columns
            lookup.line = row_label(table, r) if is_column_total else table.columns[c]
            lookup.total_label = table.columns[c] if is_column_total else row_label(table, r)
            return lookup
        line = self._line(table, rows, columns)
        if line is None:
            return None
        match, is_column = line
        if is_column and table.total_rows:
            r = min(table.total_rows)
            cells = [(r, match.index)]
            total_label = row_label(table, r)
        elif not is_column and table.total_columns:
            c = min(table.total_columns)
            cells = [(match.index, c)]
            total_label = table.columns[c]
        else:
            if not is_column or not table.complete:
                return None
            cells = [
                (i, match.index)
                for i in self._entities(table, True)
                if table.rows[i][match.index].number is not None
            ]
            total = sum(table.rows[i][j].number or 0.0 for i, j in cells)
            found = _Found(
                "sum",
                cells,
                match.score,
                table.columns[match.index],
                True,
                value=format_number(total, cells, table),
            )
            found.addressed = {table.columns[match.index]}
            return found
        r, c = cells[0]
        if table.rows[r][c].empty:
            return None
        label = table.columns[match.index] if is_column else row_label(table, match.index)
        found = _Found("total", cells, match.score, label, is_column, total_label)
        found.addressed = {label, total_label}
        return found

    def _line(
        self, table: EvidenceTable, rows: list[_Match], columns: list[_Match]
    ) -> tuple[_Match, bool] | None:
        """The one numeric row or column the question names (True: a column)."""
        candidates: list[tuple[_Match, bool]] = []
        for m in columns:
            entities = self._entities(table, True)
            if m.index not in table.label_columns and _numeric([table.rows[i][m.index] for i in entities]):
                candidates.append((m, True))
        for m in rows:
            entities = self._entities(table, False)
            if _numeric([table.rows[m.index][j] for j in entities]):
                candidates.append((m, False))
        candidates.sort(key=lambda c: -c[0].score)
        if not candidates or (
            len(candidates) > 1 and candidates[1][0].score >= candidates[0][0].score - 1e-6
        ):
            return None
        return candidates[0]

    @staticmethod
    def _entities(table: EvidenceTable, over_rows: bool) -> list[int]:
        """The rows (or value columns) an aggregate runs over: no totals, no section headings."""
        if over_rows:
            return [
                i
                for i, r in enumerate(table.rows)
                if i not in table.total_rows and sum(not c.empty for c in r) >= 2
            ]
        return [
            j
            for j in range(len(table.columns))
            if j not in table.label_columns and j not in table.total_columns
        ]

    def _extreme(
        self, table: EvidenceTable, operation: Operation, rows: list[_Match], columns: list[_Match]
    ) -> _Found | None:
        line = self._line(table, rows, columns)
        if line is None:
            return None
        match, is_column = line
        if is_column and not table.complete:
            return None  # a column's extreme needs every row
        entities = self._entities(table, is_column)
        cells = [(i, match.index) if is_column else (match.index, i) for i in entities]
        cells = [(r, c) for r, c in cells if table.rows[r][c].number is not None]
        values = [table.rows[r][c].number or 0.0 for r, c in cells]
        target = max(values) if operation == "argmax" else min(values)
        chosen = [rc for rc, v in zip(cells, values, strict=True) if v == target][:5]
        label = table.columns[match.index] if is_column else row_label(table, match.index)
        found = _Found(operation, chosen, match.score, label, is_column)
        found.addressed = {label}
        return found

    @staticmethod
    def _addresses_every_key_term(
        question: str,
        table: EvidenceTable,
        found: _Found,
        row_tokens: list[set[str]],
        column_tokens: list[set[str]],
    ) -> bool:
        """Every name, number or code of the question is one the answer speaks of (its labels,
        the table's title and headers, the page's other text); a key term that names another
        row or column ("Kerala" when the cell is Nagaland's) means the question asks about
        something else, or more than one cell."""
        header = [table.columns[j] for j in table.label_columns]
        addressed = set().union(
            *(tokens(t) for t in [*found.addressed, table.title, table.page.title, *header])
        )
        rows_read = {r for r, _ in found.cells}
        columns_read = {c for _, c in found.cells}
        context = fold(f"{table.page_text} {table.page.title} {table.title}")
        for key in key_terms(question):
            key_tokens = {t for t in tokens(key) if _strong(t) or t.startswith("month:")}
            if not key_tokens or key_tokens <= addressed:
                continue
            other_rows = (row_tokens[i] for i in range(len(row_tokens)) if i not in rows_read)
            other_columns = (column_tokens[j] for j in range(len(column_tokens)) if j not in columns_read)
            if any(key_tokens <= labels for labels in [*other_rows, *other_columns]):
                return False
            if fold(key) not in context:
                return False
        return True


def _numeric(cells: list[Cell]) -> bool:
    filled = [c for c in cells if not c.empty]
    numbers = [c for c in filled if c.number is not None]
    return len(numbers) >= 3 and len(numbers) >= 0.6 * len(filled)


def format_number(value: float, cells: list[tuple[int, int]], table: EvidenceTable) -> str:
    """`value` written as the table writes its numbers ("4.738.950", "73,980,669")."""
    sample = " ".join(table.rows[r][c].text for r, c in cells)
    decimals = max((len(m[2]) for m in re.finditer(r"\d([.,])(\d{1,2})(?!\d)", sample)), default=0)
    text = f"{value:,.{decimals}f}"
    if re.search(r"\d\.\d{3}(?!\d)", sample) or re.search(r"\d,\d{1,2}(?!\d)", sample):
        text = text.translate(str.maketrans({",": ".", ".": ","}))
    return text


def unit_of(*labels: str) -> str:
    """The unit the labels give, first found: "(ha)" -> "ha", "(Per cent)" -> "%", "% DEP." -> "%"."""
    for label in labels:
        for group in _UNIT_GROUP.findall(label):
            folded = fold(group).strip()
            if folded in _PERCENT:
                return "%"
            if _UNIT.fullmatch(folded):
                return group.strip()
        if "%" in _UNIT_GROUP.sub("", label):
            return "%"
    return ""


def table_unit(table: EvidenceTable) -> str:
    """A unit the header gives the whole table: a header part that is only a unit ("(Per cent)"
    above the last column of the census table)."""
    for label in table.columns:
        for part in label.split(" / "):
            if _UNIT_GROUP.fullmatch(part.strip()) and (unit := unit_of(part)):
                return unit
    return ""


def with_unit(text: str, unit: str) -> str:
    if not unit or "%" in text or fold(unit) in fold(text):
        return text
    if unit == "%":
        return f"{text}%"
    return f"{text} ({unit})" if " " in unit or "." in unit else f"{text} {unit}"


def display(label: str) -> str:
    """A label as the answer names it: unit groups, footnote marks and unit-only header
    parts dropped ("(Per cent) / 2001-2011" -> "2001-2011", "Área 16/17 (ha)" -> "Área 16/17")."""
    parts = []
    for part in label.split(" / "):
        shown = _UNIT_GROUP.sub(lambda m: "" if unit_of(m[0]) else m[0], part)
        shown = " ".join(shown.replace("*", " ").split())
        if shown:
            parts.append(shown)
    return " / ".join(parts) or label.strip()


def time_text(label: str, language: str) -> str | None:
    """A label that is a date, a period or a year, written for the answer; None otherwise."""
    for part in display(label).split(" / "):
        part = part.strip()
        if date := parse_date(part):
            if date.day is None:
                return part
            return (
                f"{date.day:02d}/{date.month:02d}/{date.year}"
                if language == "pt"
                else date_en(date.year, date.month, date.day)
            )
        periods = find_periods(part)
        if (periods and periods[0][0] == 0 and periods[0][1] == len(part)) or re.fullmatch(
            r"(?:1[89]|20)\d\d", part
        ):
            return part
    return None


_EN_MONTHS = "January February March April May June July August September October November December".split()


def date_en(year: int, month: int, day: int) -> str:
    return f"{_EN_MONTHS[month - 1]} {day}, {year}"


def _join(names: list[str], language: str) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {AND[language]} {names[-1]}"


def compose(question: str, language: str, table: EvidenceTable, found: _Found) -> TableAnswer:
    """The one sentence (question's language) and its citations: each cell's bbox, so the
    page viewer highlights the cell; the quote is the cell with its row and column labels."""
    language = language if language in LEAD else "en"
    page = table.page
    cite = cite_label(page.doc_id, page.page_no)
    title = " ".join(table.title.split())
    lead = LEAD[language].format(title=_safe(title[:100])) if title else LEAD_UNTITLED[language]
    first_row, first_column = found.cells[0]
    cell = table.rows[first_row][first_column]
    unit = unit_of(table.columns[first_column], row_label(table, first_row), title) or table_unit(table)
    value = found.value or cell.text
    value = _safe(with_unit(value, unit))
    line = _safe(display(found.line))
    if found.operation == "lookup":
        row, column = display(row_label(table, first_row)), display(table.columns[first_column])
        row_time, column_time = (
            time_text(row_label(table, first_row), language),
            time_text(table.columns[first_column], language),
        )
        if (row_time is None) != (column_time is None):
            time, entity = (row_time, column) if row_time else (column_time, row)
            text = TEMPLATES["lookup_time"][language].format(
                lead=lead, entity=_safe(entity), time=_safe(time or ""), value=value, cite=cite
            )
        else:
            # the label that carries the unit names the measure ("Área 16/17 (ha)"), the other the entity
            row_is_measure = bool(unit_of(row_label(table, first_row))) and not unit_of(
                table.columns[first_column]
            )
            measure, entity = (row, column) if row_is_measure else (column, row)
            text = TEMPLATES["lookup"][language].format(
                lead=lead, measure=_safe(measure), entity=_safe(entity), value=value, cite=cite
            )
    elif found.operation in ("argmax", "argmin"):
        names = [
            display(row_label(table, r) if found.line_is_column else table.columns[c]) for r, c in found.cells
        ]
        time = time_text(found.line, language)
        of, in_ = TIME_PREPOSITION[language]
        of_line = f"{in_} {_safe(time)}" if time else f"{of} {line}"
        text = TEMPLATES[found.operation][language].format(
            lead=lead,
            entities=_safe(_join(names, language)),
            verb="tiveram" if len(names) > 1 else "teve",
            of_line=of_line,
            value=value,
            cite=cite,
        )
    elif found.operation == "total":
        text = TEMPLATES["total"][language].format(
            lead=lead, line=line, total=_safe(display(found.total_label)), value=value, cite=cite
        )
    else:
        text = TEMPLATES["sum"][language].format(
            lead=lead, line=line, n=len(found.cells), value=value, cite=cite
        )
    citations = []
    cells = found.cells if found.operation != "sum" else found.cells[:1]
    for r, c in cells:
        read = table.rows[r][c]
        bbox = (
            read.bbox if found.operation != "sum" else _union([table.rows[i][j].bbox for i, j in found.cells])
        )
        quote = _safe(f"{display(row_label(table, r))} · {display(table.columns[c])}: {read.text}")
        citations.append(
            Citation(page.doc_id, page.page_no, page.title, bbox or list(read.chunk.bbox), quote)
        )
    return TableAnswer(text, citations, found.operation, round(found.score, 4))


def _union(boxes: list[list[float]]) -> list[float]:
    boxes = [b for b in boxes if b]
    if not boxes:
        return []
    return [
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    ]


def _safe(text: str) -> str:
    """Document text going into an answer: citation look-alikes defused."""
    return neutralise(text, fragment=True)
