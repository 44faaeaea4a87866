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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import takewhile
from typing import Any, Literal

from geo.folding import fold
from graph.analytics_text import number
from ingest.chart_note import TITLE_NOTE
from ingest.values import (
    MONTHS,
    find_bands,
    find_dates,
    find_numbers,
    find_periods,
    in_band,
    month_names,
    number_token,
    parse_date,
    parse_number,
    quantity_of,
    split_tokens,
)
from service.answer.asked import numbers_asked
from service.answer.conditions import Condition, count_condition, first_asked, without_condition
from service.answer.content_words import (
    WRITTEN_ALIKE,
    counted_noun,
    question_content_words,
    singular,
    translations,
    word_index,
)
from service.answer.gate import (
    TABLE_NOUN,
    axis_months,
    document_phrase,
    key_terms,
    name_forms,
    question_key_terms,
    question_language,
)
from service.answer.markers import cite_label, neutralise
from service.answer.types import Citation
from service.query.decompose import decompose
from service.query.translate import EN_PT, FR_EN, PT_EN
from service.query.types import ChunkEvidence, PageEvidence

Operation = Literal[
    "lookup",
    "argmax",
    "argmin",
    "earliest",
    "latest",
    "total",
    "sum",
    "count",
    "count_where",
    "count_marked",
    "first_where",
    "no_value",
]
# a cell that only marks its row ("X" under a feature it has, "✓", "Sim")
_MARK = re.compile(r"^(?:[x✓✔•●]|yes|sim|oui|si)$", re.IGNORECASE)  # not "✗": a refusal

_STOPWORDS = frozenset(
    """a o os as um uma uns umas de do da dos das em no na nos nas ao aos por para pelo pela pelos pelas
    com sem que qual quais quanto quantos quanta quantas quando onde como foi foram era eram e ou se seu
    sua seus suas teve tiveram tem ter estava estavam esta este isso segundo sobre entre ate qual
    the an of in on at to for by with from and or is was were are be been had has have did does do
    what which who whom whose how much many when where according value values there this that its
    their it as than""".split()
)
_ARGMAX = frozenset(
    "largest highest most biggest greatest maximum max tallest longest"
    " maior maiores maximo maxima mais".split()
)
# superlatives other than the bare "mais" / "most" of "a mais recente", "the most recent"
_ARGMAX_NAMED = _ARGMAX - {"most", "mais"}
_ARGMIN = frozenset(
    "lowest smallest least fewest minimum min shortest menor menores minimo minima menos baixo baixa".split()
)
# progress most behind is the least made ("qual região tinha a colheita mais atrasada")
_BEHIND = frozenset("atrasada atrasado atrasadas atrasados behind lagging retard retardataire".split())
# superlatives of time, folded: a date column's first or last date ("a autuação mais antiga")
_EARLIEST = frozenset(
    "earliest oldest antiga antigo antigas antigos ancien ancienne anciens anciennes".split()
)
_LATEST = frozenset("latest newest recent recents recente recentes recently recentemente recemment".split())
# "mais de 30%", "menos do que": a comparison, not a superlative
_COMPARISON = re.compile(r"\b(?:mais|menos)\s+(?:de|do|da|que)\b")
# French superlatives, folded: "la plus grande puissance", "le moins d'installations", "la
# plus petite"; alone, "plus" is a comparison ("plus de 30 %")
_FR_SMALLEST = re.compile(
    r"\b(?:le|la|les|du|des)\s+(?:moins\b|plus\s+(?:petite?s?|faibles?|bas(?:se)?s?)\b)"
)
_FR_LARGEST = re.compile(r"\b(?:le|la|les|du|des)\s+plus\b")


def superlatives_named(folded: str) -> str:
    """The folded question with its French superlatives written as "minimum" / "maximum",
    the words the extreme operations are asked with."""
    return _FR_LARGEST.sub(" maximum ", _FR_SMALLEST.sub(" minimum ", folded))


_GRAND = frozenset({"grand", "geral", "general", "generale"})  # "grand total", "total geral"
_EVERY_ROW = frozenset("all every todas todos toutes tous".split())
_TOTAL_ASKED = frozenset(
    "total totais soma sum overall somado somados somadas somando somar summing somme additionnant".split()
)
# a label that starts so names a total ("Total", "Totals", "All India", "Total geral"), not "Share of total"
_TOTAL_LABEL = re.compile(
    r"^\W*(?:total|totals|totais|totales|grand total|sum|soma|overall|all india|all states|country|"
    r"brasil|brazil)\b"
)
# a row stating its lines' extremes ("Highest point" of a line chart): no entity to rank
_HIGHEST_LABEL = re.compile(r"^\W*(?:highest|maximum|maior|maximo)\b")
_LOWEST_LABEL = re.compile(r"^\W*(?:lowest|minimum|menor|minimo)\b")
# a row stating where each line starts or ends ("Start (first point)"): no tick to rank either
_ENDS_LABEL = re.compile(r"^\W*(?:start|end) \((?:first|last) point\)")
_EMPTY = frozenset(["", "-", "–", "—", "..", "...", "n/a", "na", "nd", "n.d."])
_UNIT_GROUP = re.compile(r"\(([^()]{1,24})\)")
_PERCENT = frozenset(["per cent", "percent", "%", "pct", "porcentagem", "percentual", "pourcentage"])
_UNIT = re.compile(  # not the "(first point)" of a chart line's start (ingest/chart_lines.py)
    r"(?!(?:first|last) point)(?:(?:rs|r\$|us\$|inr|usd|brl|eur)\.?\s*(?:in\s*\d+|mil|milhoes|mi|bi)?"
    r"|[a-z$€£]{1,5}\.?(?:/[a-z]{1,4})?(?:\s+[a-z]{1,5})?|\d+\s*[a-z]{1,4}|in\s+\d+)"
)
_NUMBER_WITH_UNIT = re.compile(r"([-−+]?\d[\d.,  ]*)\s*(?:p\.\s?p\.|[a-z%$€]{1,4}\.?)", re.IGNORECASE)
TABLE_WORDS = frozenset({"tabela", "table", "quadro", "tableau", "tabla"})  # "na Tabela 1" names no cell
# a question pointing at a chart ("In the Seattle weather stacked bar chart, ..."), folded
_NAMES_CHART = re.compile(
    r"\b(?:chart|graph|plot|diagram|grafico|graphique|diagramme|camembert|pizza|pie|barras|bars?|"
    r"barres|courbe|curve|linhas?|lines?)\b"
)
NAMING_ROWS = 2  # a key term held by this many other rows (or fewer) names them
MAX_ROWS_NAMED = 4  # a lookup reads at most this many rows the question names together
_CODE = re.compile(r"\d{5,}")  # an identifier written as a bare number (an A.I., a protocol)
_WORD_PARTS = re.compile(r"[\w'-]+")

TEMPLATES: dict[str, dict[str, str]] = {
    "lookup": {
        "en": "{lead}the value of {measure} for {entity} is {value}",
        "pt": "{lead}o valor de {measure} para {entity} é {value}",
        "fr": "{lead}la valeur de {measure} pour {entity} est {value}",
    },
    "lookup_columns": {
        "en": "{lead}for {entity}, {pairs}",
        "pt": "{lead}para {entity}, {pairs}",
        "fr": "{lead}pour {entity}, {pairs}",
    },
    "lookup_rows": {
        "en": "{lead}the value of {measure} is {pairs}",
        "pt": "{lead}o valor de {measure} é {pairs}",
        "fr": "{lead}la valeur de {measure} est {pairs}",
    },
    "lookup_time": {
        "en": "{lead}the value for {entity} in {time} was {value}",
        "pt": "{lead}o valor de {entity} em {time} era {value}",
        "fr": "{lead}la valeur de {entity} en {time} était {value}",
    },
    "argmax": {
        "en": "{lead}{entities} had the highest value {of_line}: {value}",
        "pt": "{lead}{entities} {verb} o maior valor {of_line}: {value}",
        "fr": "{lead}{entities} {verb_fr} la valeur la plus élevée {of_line} : {value}",
    },
    "earliest": {
        "en": "{lead}the earliest {line} is {value} ({entities})",
        "pt": "{lead}a data mais antiga de {line} é {value} ({entities})",
        "fr": "{lead}la date la plus ancienne de {line} est {value} ({entities})",
    },
    "latest": {
        "en": "{lead}the latest {line} is {value} ({entities})",
        "pt": "{lead}a data mais recente de {line} é {value} ({entities})",
        "fr": "{lead}la date la plus récente de {line} est {value} ({entities})",
    },
    "argmin": {
        "en": "{lead}{entities} had the lowest value {of_line}: {value}",
        "pt": "{lead}{entities} {verb} o menor valor {of_line}: {value}",
        "fr": "{lead}{entities} {verb_fr} la valeur la plus basse {of_line} : {value}",
    },
    "total": {
        "en": "{lead}the total of {line} ({total}) is {value}",
        "pt": "{lead}o total de {line} ({total}) é {value}",
        "fr": "{lead}le total de {line} ({total}) est {value}",
    },
    "sum": {
        "en": "{lead}the sum of {line} over its {n} rows is {value}",
        "pt": "{lead}a soma de {line} nas suas {n} linhas é {value}",
        "fr": "{lead}la somme de {line} sur ses {n} lignes est {value}",
    },
    "sum_named": {
        "en": '{lead}the sum of {line} over the {n} rows of "{name}" is {value}',
        "pt": '{lead}a soma de {line} nas {n} linhas de "{name}" é {value}',
        "fr": '{lead}la somme de {line} sur les {n} lignes de "{name}" est {value}',
    },
    "count": {
        "en": '{lead}{value} rows have {line} "{name}"',
        "pt": '{lead}{value} linhas têm {line} "{name}"',
        "fr": '{lead}{value} lignes ont {line} "{name}"',
    },
    "no_value": {
        "en": '{lead}no value is given for {entity} in {measure} (the cell reads "{value}")',
        "pt": '{lead}não há valor para {entity} em {measure} (a célula traz "{value}")',
        "fr": '{lead}aucune valeur n\'est donnée pour {entity} en {measure} (la cellule indique "{value}")',
    },
    "first_where": {
        "en": "{lead}the first row with {line} {condition} is {entity}: {value}",
        "pt": "{lead}a primeira linha com {line} {condition} é {entity}: {value}",
        "fr": "{lead}la première ligne avec {line} {condition} est {entity} : {value}",
    },
    "count_marked": {
        "en": "{lead}{value} of its {n} rows are marked under {line}: {names}",
        "pt": "{lead}{value} das suas {n} linhas estão marcadas em {line}: {names}",
        "fr": "{lead}{value} de ses {n} lignes sont cochées sous {line} : {names}",
    },
    "count_where": {
        "en": "{lead}{value} of its {n} {items} have {line} {condition}{names}",
        "pt": "{lead}{value} das suas {n} {items} têm {line} {condition}{names}",
        "fr": "{lead}{value} de ses {n} {items} ont {line} {condition}{names}",
    },
}
# what a count over a column counts (its rows), or over a row (its columns)
COUNTED_ITEMS = {"en": ("columns", "rows"), "pt": ("colunas", "linhas"), "fr": ("colonnes", "lignes")}
CONDITION_WORDS: dict[str, dict[str, str]] = {
    "en": {
        "eq": "equal to",
        "ne": "other than",
        "gt": "above",
        "ge": "of at least",
        "lt": "below",
        "le": "of at most",
    },
    "fr": {
        "eq": "égal à",
        "ne": "différent de",
        "gt": "supérieur à",
        "ge": "d'au moins",
        "lt": "inférieur à",
        "le": "d'au plus",
    },
    "pt": {
        "eq": "igual a",
        "ne": "diferente de",
        "gt": "acima de",
        "ge": "de pelo menos",
        "lt": "abaixo de",
        "le": "de no máximo",
    },
}
MAX_NAMES_LISTED = 15  # a count lists the rows it counted up to this many
MAX_DETAILS = 2  # an extreme's row gives at most this many other cells the question asks of it

# "how many autuações in Manacapuru": a count of the rows naming it, when no cell holds the number
COUNT_ASKED = re.compile(r"\b(?:how many|quant[oa]s|combien|cuant[oa]s)\b")


def counts_the_rows(question: str, table: EvidenceTable) -> bool:
    """Whether what a "how many" question counts may be the table's rows: its noun is in the
    table's title or its row labels' header ("Quantas autuações em Manacapuru?" of the
    "Relatório de Autuações" table), or at least not another thing the page's text speaks of
    ("quantas cabeças de atenção" of the OTSL results table: 8 heads, stated in the text,
    not 4 rows naming OTSL)."""
    noun = counted_noun(question)
    if not noun:
        return True
    header = table.columns[table.name_column] if table.columns else ""
    if word_index(f"{table.title}\n{header}").contains(noun):
        return True
    # a noun the table does not name may still be its rows' in another language ("infractions"
    # of "Autuações"); only one the page's prose speaks of apart is another thing ("heads=8")
    return not word_index(table.page_text).contains(noun)


MIN_COUNTED = 2  # a single row named is more likely a lookup the labels did not meet
_SPACED = re.compile(r"[-‐‑‒–—_]+")
LEAD = {
    "en": 'According to the table "{title}", ',
    "pt": 'Segundo a tabela "{title}", ',
    "fr": "Selon le tableau « {title} », ",
}
LEAD_UNTITLED = {"en": "According to the table, ", "pt": "Segundo a tabela, ", "fr": "Selon le tableau, "}
TIME_PREPOSITION = {"en": ("of", "in"), "pt": ("de", "em"), "fr": ("de", "en")}
AND = {"en": "and", "pt": "e", "fr": "et"}
FOR = {"en": "for", "pt": "para", "fr": "pour"}


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
    name_column: int = 0  # the label column whose cells are all different: a row's name in answers
    total_rows: set[int] = field(default_factory=set)
    total_columns: set[int] = field(default_factory=set)


@dataclass
class TableAnswer:
    """A sentence composed from table cells, with one citation per cell it reads."""

    text: str
    citations: list[Citation]
    operation: Operation
    score: float
    # content words of the question its table's page lacks, that page being in the question's
    # language ("soja" of the maize table): the caller should refuse rather than answer
    unaddressed: list[str] = field(default_factory=list)
    # content words of the question that only qualify a label of the table ("the simple bar
    # chart" over "Bar chart"): absent from the pages, they do not make it another table
    qualifiers: list[str] = field(default_factory=list)


@dataclass
class _Match:
    index: int
    score: float
    matched: set[str]


# (doc_id, page_no) -> the stored chunk payloads of that page (Carta.page_chunks for the
# asking tenant): the rows of an evidence table that the search did not return
PageChunks = Callable[[str, int], list[dict[str, Any]]]


def evidence_tables(
    pages: Sequence[PageEvidence], page_chunks: PageChunks | None = None, every_table: bool = False
) -> list[EvidenceTable]:
    """The tables of the pages' chunks, one per (page, table_no), best page first. A table
    the search returned only some rows of is completed from the page's stored chunks when
    `page_chunks` is given: an argmax over a column, or the row the question names, needs
    rows whose chunks rank below the top (the NICS table is one chunk per state). With
    `every_table` (the question names a table: "pela tabela de doses"), a page's tables
    none of whose rows the search returned are read from its stored chunks too."""
    tables = []
    for page in pages:
        groups = _table_groups(page.chunks)
        other = " ".join(c.text for c in page.chunks if not c.table)
        if page_chunks is not None and every_table and not groups:
            stored = [_chunk_evidence(page, p) for p in page_chunks(page.doc_id, page.page_no)]
            groups = _table_groups(stored)
        elif page_chunks is not None and groups:
            merged = [_merge(page, chunks, other) for chunks in groups.values()]
            if not all(t.complete for t in merged):
                stored = [_chunk_evidence(page, p) for p in page_chunks(page.doc_id, page.page_no)]
                held = {c.chunk_no for c in page.chunks}
                for table_no, chunks in _table_groups([c for c in stored if c.chunk_no not in held]).items():
                    if table_no in groups:
                        groups[table_no] = groups[table_no] + chunks
        for chunks in groups.values():
            tables.append(_merge(page, chunks, other))
    return tables


def _table_groups(chunks: Sequence[ChunkEvidence]) -> dict[int, list[ChunkEvidence]]:
    groups: dict[int, list[ChunkEvidence]] = {}
    for chunk in chunks:
        if chunk.table and chunk.table.get("columns") and chunk.table.get("rows"):
            groups.setdefault(_int(chunk.table.get("table_no")), []).append(chunk)
    return groups


def _chunk_evidence(page: PageEvidence, payload: dict[str, Any]) -> ChunkEvidence:
    """A stored chunk of an evidence page, as the search would have returned it (ranked last)."""
    table = payload.get("table")
    return ChunkEvidence(
        page.doc_id,
        page.page_no,
        _int(payload.get("chunk_no")),
        str(payload.get("text") or ""),
        list(payload.get("bbox") or []),
        list(payload.get("page_size") or []),
        len(page.chunks) + 1,
        0.0,
        table if isinstance(table, dict) else None,
    )


def _merge(page: PageEvidence, chunks: list[ChunkEvidence], other_text: str) -> EvidenceTable:
    first = chunks[0].table or {}
    columns = [str(c) for c in first["columns"]]
    by_row: dict[int, list[Cell]] = {}
    for chunk in chunks:
        table = chunk.table or {}
        for offset, raw in enumerate(table.get("rows") or []):
            cells = [_cell(c, chunk) for c in raw[: len(columns)]]
            cells += [Cell("", [], None, chunk) for _ in range(len(columns) - len(cells))]
            by_row.setdefault(_int(table.get("first_row")) + offset, cells)
    numbers = sorted(by_row)
    rows = [by_row[i] for i in numbers]
    table = EvidenceTable(page, str(first.get("title") or ""), columns, rows, False, other_text)
    body_rows = first.get("body_rows")
    table.complete = numbers == list(range(len(numbers))) and (
        len(numbers) == body_rows if isinstance(body_rows, int) else _reaches_bottom(rows, first.get("bbox"))
    )
    if numbers and numbers[0] == 0 and table.complete:
        _promote_sub_header(table)
    _name_by_section(table)
    table.label_columns = _label_columns(table)
    table.name_column = _name_column(table)
    table.total_rows, table.total_columns = _totals(table)
    return table


def _name_by_section(table: EvidenceTable) -> None:
    """Rows grouped under section rows (a row with only its first cell: "General population",
    "People living with HIV"), whose first cells repeat from group to group ("Comparator
    studies"): each repeated name is qualified by its section ("General population ·
    Non-comparator studies"), so a row is named, and found, as the table means it."""
    if len(table.columns) < 3:
        return
    sections = [i for i, row in enumerate(table.rows) if not row[0].empty and all(c.empty for c in row[1:])]
    if len(sections) < 2:
        return
    names = Counter(row[0].text for i, row in enumerate(table.rows) if i not in sections and not row[0].empty)
    section = ""
    for i, row in enumerate(table.rows):
        if i in sections:
            section = row[0].text
        elif section and names[row[0].text] > 1:
            row[0] = replace(row[0], text=f"{section} · {row[0].text}")


def _promote_sub_header(table: EvidenceTable) -> None:
    """A header of two lines whose first spans columns ("Pangenotypic DAA regimens" over
    three drug names) is stored with its second line as the first body row: when a column
    label is empty, the first row names every column in words and each later row holds a
    number, that row joins the labels (the group's label carried over the columns it
    spans), so "the sofosbuvir/velpatasvir dose" finds its column."""
    columns, rows = table.columns, table.rows
    if len(rows) < 2 or not any(c.strip() for c in columns) or all(c.strip() for c in columns):
        return
    first = rows[0]
    if any(c.empty or any(ch.isdigit() for ch in c.text.split()[0]) for c in first):
        return  # a value or an empty cell: a body row
    if not all(any(ch.isdigit() for c in row for ch in c.text) for row in rows[1:]):
        return
    group, labels = "", []
    for label, cell in zip(columns, first, strict=True):
        group = label.strip() or group
        labels.append(f"{group} {cell.text}".strip())
    table.columns, table.rows = labels, rows[1:]


def _int(value: object) -> int:
    """A payload's index field; a malformed one reads as 0 (an answer, never a 500)."""
    try:
        return int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return 0


def _cell(raw: object, chunk: ChunkEvidence) -> Cell:
    text = " ".join(str(raw.get("text") or "").split()) if isinstance(raw, dict) else ""
    bbox = raw.get("bbox") if isinstance(raw, dict) else None
    box = [float(v) for v in bbox] if isinstance(bbox, list) and len(bbox) == 4 else []
    return Cell(text, box, cell_number(text), chunk)


def cell_number(text: str) -> float | None:
    """The number a cell states: "4.738.950", "99,62%", "2,49 p.p.", "47 MWc"; None for text."""
    if not any(ch.isdigit() for ch in text):
        return None
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


def _leads_with_numbers(table: EvidenceTable, j: int) -> bool:
    """Whether most filled cells of column `j` open with a number ("93% (87–97) (n=5
    studies)"): values with their intervals, which name no row though they parse as text."""
    cells = [r[j].text for r in table.rows if not r[j].empty]
    return bool(cells) and sum(c.lstrip()[:1].isdigit() for c in cells) > len(cells) / 2


def _name_column(table: EvidenceTable) -> int:
    """The first label column that tells every row apart (IBAMA's rows share an infraction
    type and a town, not a process number)."""
    for j in table.label_columns:
        names = [r[j].text for r in table.rows if not r[j].empty]
        if names and len(set(names)) == len(names):
            return j
    return table.label_columns[0]


def _totals(table: EvidenceTable) -> tuple[set[int], set[int]]:
    """Total rows and columns: labelled so ("Total", "All India"), or holding the sum of the
    others (IMEA's "Mato Grosso" column is the sum of the state's regions)."""
    value_columns = [j for j in range(len(table.columns)) if j not in table.label_columns]
    rows = {i for i in range(len(table.rows)) if _names_total(row_label(table, i))}
    columns = {j for j in value_columns if _names_total(table.columns[j])}
    for row in table.rows:
        columns |= _sums({j: row[j].number for j in value_columns if row[j].number is not None})
    if table.complete:
        # a row that is the sum of the others in most columns (one column's coincidence is not:
        # Andhra Pradesh's "Others" equals the other states' together)
        votes = Counter(
            i
            for j in value_columns
            for i in _sums({i: r[j].number for i, r in enumerate(table.rows) if r[j].number is not None})
        )
        summed = sum(1 for j in value_columns if sum(1 for r in table.rows if r[j].number) >= 4)
        rows |= {i for i, n in votes.items() if n > summed / 2}
    return rows, columns


def grand_total(table: EvidenceTable, totals: set[int], *, rows: bool) -> int:
    """The grand total among several total rows (or columns): the one holding the largest
    values, the last on a tie. The public health outlay table has two "Total / Revenue &
    Capital" columns, a subtotal of revenue and capital and, after "Others", the total of all."""

    def size(k: int) -> float:
        cells = table.rows[k] if rows else [r[k] for r in table.rows]
        return sum(abs(c.number) for c in cells if c.number is not None)

    return max(sorted(totals), key=lambda k: (size(k), k))


def _names_total(label: str) -> bool:
    return any(_TOTAL_LABEL.match(fold(part)) for part in label.split(" / "))


def _sums(numbers: dict[int, float]) -> set[int]:
    """The keys whose value is the sum of the others' (0.5% tolerance): the largest value,
    non-zero, over at least three non-zero others."""
    if sum(1 for v in numbers.values() if v) < 4:
        return set()
    key, value = max(numbers.items(), key=lambda kv: kv[1])
    others = sum(numbers.values()) - value
    return {key} if value > 0 and abs(value - others) <= 0.005 * value else set()


def row_name(table: EvidenceTable, i: int, column: int | None = None) -> str:
    """Row `i` as an answer names it: its cell in `column` (default the name column), its
    label when that is empty."""
    cell = table.rows[i][table.name_column if column is None else column]
    return cell.text if not cell.empty else row_label(table, i)


def row_label(table: EvidenceTable, i: int) -> str:
    """The words that name row `i`: its label columns' cells."""
    return " ".join(table.rows[i][j].text for j in table.label_columns if not table.rows[i][j].empty)


# a two-character symbol a label starts with ("bc (V/dec)", "pH", "OD (mg/L)"): too short to
# name a row or column as a word, it does when the question writes it alike, case and all
_SYMBOL = re.compile(r"(?<![\w.])([A-Za-z][A-Za-z0-9])(?![\w.])")


# two-letter words of the languages questions come in that no stop list above holds
_SHORT_WORDS = frozenset("le la en et du au ou on il un ne se ce sa ma je tu te me el lo al es os".split())


def symbol_tokens(text: str, *, first_only: bool) -> set[str]:
    """The short symbols of `text` as tokens "sym:<as written>" (a label: its first word only)."""
    found = _SYMBOL.findall(text)
    if first_only:
        found = found[:1] if _SYMBOL.match(text.strip()) else []
    return {f"sym:{w}" for w in found if w.casefold() not in _STOPWORDS | _SHORT_WORDS}


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 4 and word.endswith("s") else word


def tokens(text: str) -> set[str]:
    """Value tokens and content words (folded, plural "s" off) of a label or a question."""
    values, words = split_tokens(text)
    return values | {_stem(w) for w in words if w not in _STOPWORDS}


# Header words of tables the query glossary (service/query/translate.py) lacks, Portuguese
# (or French) -> English; read both ways, like the glossary
HEADER_WORDS: dict[str, str] = {
    "multa": "fine",
    "multas": "fines",
    "tempo": "time",
    "camada": "layer",
    "camadas": "layers",
    "verificacao": "check",
    "verificacoes": "checks",
    "categoria": "category",
    "licenca": "permit",
    "licencas": "permits",
    "codificador": "encoder",
    "decodificador": "decoder",
    # a measured value, against the normal or the target beside it ("chuva observada": ACTUAL)
    "observada": "actual",
    "observado": "actual",
    "realizada": "actual",
    "realizado": "actual",
    # a diagnostic test's accuracy (the WHO tables of assays)
    "sensibilidade": "sensitivity",
    "sensibilite": "sensitivity",
    # the first and last points of a line read from a chart (ingest/chart_lines.py)
    "termina": "end",
    "terminou": "end",
    "termine": "end",
    "fim": "end",
    "comeca": "start",
    "inicia": "start",
    "iniciou": "start",
    "commence": "start",
}
_HEADER_WORDS_EN = {en: pt for pt, en in HEADER_WORDS.items()}
# Unit names a question spells out and headers write as symbols: "quantos milímetros" asks
# for the "(mm)" column, "how many hectares" for the "(ha)" one
_UNIT_SYMBOLS: dict[str, str] = {
    name: symbol
    for symbol, names in {
        "mm": "milimetros millimetres millimeters millimetre millimeter",
        "km": "quilometros kilometres kilometers kilometre kilometer",
        "ha": "hectares hectare",
        "mw": "megawatts megawatt",
        "gw": "gigawatts gigawatt",
        "kg": "quilos quilogramas kilograms kilogrammes",
    }.items()
    for name in names.split()
}


# "de 01/06 a 10/07/2016": a range whose first date takes the year of the second
_DATE_RANGE = re.compile(r"\b(\d{1,2})[/.-](\d{1,2})\s+(?:a|to|ate|-)\s+\d{1,2}[/.-]\d{1,2}[/.-](\d{4})\b")
# ...and so written in words: "1 June to 10 July 2016", "1 de junho a 10 de julho de 2016",
# "du 1er juin au 10 juillet 2016", "June 1 to July 10, 2016" (folded)
_TO = r"\s+(?:to|a|ate|au|through|until|-|–)\s+"
_WORDED_RANGE = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th|er|o|º)?\s+(?:de\s+)?([a-z]+)\.?{_TO}(?:the\s+)?\d{{1,2}}"
    rf"(?:st|nd|rd|th|er|o|º)?\s+(?:de\s+)?[a-z]+\.?,?\s+(?:de\s+)?(\d{{4}})\b"
)
_WORDED_RANGE_EN = re.compile(
    rf"\b([a-z]+)\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?{_TO}[a-z]+\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+(\d{{4}})\b"
)


def question_tokens(question: str) -> set[str]:
    """The question's tokens and, for its words the glossaries know, their words in the
    other language: "taxa" also meets "rate", "multa" "fine". A date range's first date
    written without its year ("01/06 a 10/07/2016") gets the year of the second."""
    out = tokens(question)
    folded = fold(question)
    starts = [(m[1], str(m[2]), m[3]) for m in _DATE_RANGE.finditer(folded)]
    starts += [(m[1], str(MONTHS[m[2]]), m[3]) for m in _WORDED_RANGE.finditer(folded) if m[2] in MONTHS]
    starts += [(m[2], str(MONTHS[m[1]]), m[3]) for m in _WORDED_RANGE_EN.finditer(folded) if m[1] in MONTHS]
    for day, month, year in starts:
        out |= {t for t in tokens(f"{day}/{month}/{year}") if t.startswith(("date:", "month:"))}
    _, words = split_tokens(question)
    for word in words:
        for glossary in (PT_EN, EN_PT, FR_EN, HEADER_WORDS, _HEADER_WORDS_EN):
            out |= {_stem(w) for w in glossary.get(word, "").split() if w not in _STOPWORDS}
        if word in _UNIT_SYMBOLS:
            out.add(_UNIT_SYMBOLS[word])
    return out | symbol_tokens(question, first_only=False)


COGNATE_PREFIX = 6  # "corrosao" ~ "corrosion", "inferencia" ~ "inference", "populacao" ~ "population"


def cognate(a: str, b: str) -> bool:
    """Two long words that share their stem across Portuguese and English: a common prefix
    of COGNATE_PREFIX letters or more, reaching within three letters of the shorter word."""
    if len(a) < COGNATE_PREFIX or len(b) < COGNATE_PREFIX or ":" in a or ":" in b:
        return False
    if a in WRITTEN_ALIKE or b in WRITTEN_ALIKE:
        return a == b  # "per capita" is no "Capital" column
    common = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        common += 1
    return common >= max(COGNATE_PREFIX, min(len(a), len(b)) - 3)


_NUMBER_WORD = re.compile(r"([\w%]+)")


def cell_terms(question: str, table: EvidenceTable) -> dict[str, int]:
    """Numbers the question ties to a column: "6 encoder layers" (column "# enc-layers"),
    "10 g" (column "Inhibitor concentration (g)"), as tokens "cell:<column>=<number>" -> the
    column. A row whose cell in that column holds the number meets the token, so rows
    named by numbers ("enc 6, dec 6, OTSL") are found like rows named by words."""
    folded = fold(question)
    out: dict[str, int] = {}
    times = [(a, b) for a, b, _ in [*find_dates(folded), *find_periods(folded)]]
    for start, end, value in find_numbers(folded):
        if any(a < end and start < b for a, b in times):
            continue  # "01-06-2016": a date's parts are not counts
        before = _NUMBER_WORD.findall(folded[max(0, start - 24) : start])[-1:]
        # after it: up to two words, not crossing the next number ("6 no decodificador")
        after = list(takewhile(lambda w: not w[0].isdigit(), _NUMBER_WORD.findall(folded[end : end + 24])))
        near = [w for w in before if w not in _STOPWORDS] + [w for w in after if w not in _STOPWORDS][:2]
        near = [t for w in near if not w.isdigit() for t in _glossed(w)]
        for j, label in enumerate(table.columns):
            if j in table.total_columns:
                continue
            header = {w for w in tokens(label) if ":" not in w}
            unit = fold(unit_of(label))
            if any(_names_column(w, header, unit) for w in near):
                out[f"cell:{j}={number_token(value)}"] = j
    return out


def _glossed(word: str) -> list[str]:
    """A word and its words in the other language, as the glossaries give them ("camadas": layers)."""
    out = [word]
    for glossary in (PT_EN, EN_PT, HEADER_WORDS, _HEADER_WORDS_EN):
        out += [w for w in glossary.get(word, "").split() if w not in _STOPWORDS]
    return out


def _names_column(word: str, header: set[str], unit: str) -> bool:
    """Whether a question word names a column: its unit ("g"), one of its header words, a
    header abbreviation it starts with ("enc" of "encoder") or a cognate."""
    word = _stem(word)
    if unit and word == unit:
        return True
    return any(word == h or (3 <= len(h) <= 4 and word.startswith(h)) or cognate(word, h) for h in header)


def _strong(token: str) -> bool:
    """Tokens that can address a row or column alone (not a month, a day or a short word)."""
    if token.startswith("num:"):
        return len(token.split(":")[1].lstrip("-").split(".")[0]) >= 3
    if token.startswith(("date:", "period:", "code:", "cell:", "sym:")):
        return True
    return ":" not in token and len(token) >= 3


def _kind(token: str) -> str:
    return token.split(":")[0] if ":" in token else "word"


def _weight(token: str, df: int, n: int) -> float:
    """Rarer among the labels weighs more; a month or a day alone weighs half, a date, a
    period or a code ("EST-07") half more."""
    base = 1.0 + math.log(max(n, 1) / max(df, 1))
    if token.startswith("month:") or (token.startswith("num:") and not _strong(token)):
        return 0.5 * base
    if token.startswith(("period:", "date:", "code:", "cell:")):
        return 1.5 * base
    return base


def _unambiguous(month_name: str) -> bool:
    """A month name a question's word means only as a month: the full names, not "may",
    "mars", "set", "out" or "ago", which are words too ("what is the weather like on mars")."""
    return len(month_name) > 4 or month_name in ("maio", "june", "july", "juin")


@dataclass
class _Labels:
    """A table's row and column labels as tokens, matched against a question's tokens."""

    table: EvidenceTable
    rows: list[set[str]]
    columns: list[set[str]]
    body_rows: list[int]  # rows with two cells or more (not section headings)
    context: set[str]  # the title's tokens: words that name the whole table weigh less

    @classmethod
    def of(cls, table: EvidenceTable, cell_columns: Sequence[int] = ()) -> _Labels:
        rows = [_row_tokens(table, i, cell_columns) for i in range(len(table.rows))]
        # rows labelled by a run of abbreviated months (a chart's month axis: "Jan", "Feb", ...)
        # are named by the month's words too: "July" or "janeiro" asks for that row
        axis = axis_months(" ".join(row_label(table, i) for i in range(len(table.rows))))
        for i, row in enumerate(rows):
            month = MONTHS.get(fold(row_label(table, i)).strip(" ."))
            if month is not None and f"month:{month}" in axis:
                row |= {f"month:{month}", *(_stem(name) for name in month_names(month) if _unambiguous(name))}
        for i, row in enumerate(rows):
            row |= symbol_tokens(row_label(table, i), first_only=True)
        body = [i for i, r in enumerate(table.rows) if sum(not c.empty for c in r) >= 2]
        columns = [tokens(c) | symbol_tokens(c, first_only=True) for c in table.columns]
        return cls(table, rows, columns, body, tokens(table.title))

    def match_rows(self, query: set[str]) -> list[_Match]:
        return self._match(query, self.rows, self.body_rows)

    def match_columns(self, query: set[str]) -> list[_Match]:
        return self._match(query, self.columns, range(len(self.columns)))

    def _match(self, query: set[str], labels: list[set[str]], allowed: Sequence[int]) -> list[_Match]:
        """Positive matches, best first. A label loses a little for values of a kind the
        question states but not these ("15/16" when 16/17 is asked) and for words the
        question lacks ("Médio-Norte" when "Norte" is asked), never more than half its gain."""
        df = Counter(t for i in allowed for t in labels[i])
        n = len(allowed)
        kinds = {_kind(t) for t in query}
        long_words = [q for q in query if ":" not in q and len(q) >= 6]
        out = []
        for i in allowed:
            # a short label word abbreviates a longer question word: "DEP." departure, "CAT." category
            abbreviations = {
                t
                for t in labels[i]
                if 3 <= len(t) <= 4 and ":" not in t and any(q.startswith(t) for q in long_words)
            }
            cognates = {t for t in labels[i] - query if any(cognate(t, q) for q in long_words)}
            matched = query & labels[i] | abbreviations | cognates
            strong = any(_strong(t) for t in matched)
            if not (
                strong or _named_by_letter(labels[i], matched) or _named_by_month(labels[i], matched, query)
            ):
                continue
            gain = sum(_weight(t, df[t], n) * (0.3 if t in self.context else 1.0) for t in matched)
            loss = 0.0
            for t in labels[i] - matched:
                if _kind(t) == "cell":  # a row's other numbers say nothing against it
                    continue
                if _kind(t) == "word":
                    loss += 0.1 * _weight(t, df[t], n)
                elif _kind(t) in kinds:
                    loss += 0.5 * _weight(t, df[t], n)
            out.append(_Match(i, gain - min(loss, 0.5 * gain), matched))
        return sorted(out, key=lambda m: -m.score)


def _named_by_month(label: set[str], matched: set[str], query: set[str]) -> bool:
    """A label that is a month alone ("Mar", a bar of a chart of monthly rainfall), met by
    the question's month of a year ("em março de 2024"): alone a month is too weak to name
    a row of dates, but here it is the whole name. Its other tokens are the month's names;
    a month word without a year ("the weather on Mars") names no row."""
    months = {t for t in label if t.startswith("month:")}
    if len(months) != 1 or not months <= matched or any(":" in t and t not in months for t in label):
        return False
    month = int(next(iter(months)).split(":")[1])
    return any(_MONTH_OF_YEAR.match(t) and t.endswith(f"-{month:02d}") for t in query)


def _named_by_letter(label: set[str], matched: set[str]) -> bool:
    """A label that is one letter alone ("D", a bar of a chart of categories A to I), met
    by the question's letter ("bar D"): the letter is all that names it."""
    return bool(matched) and matched == label and all(t.startswith("letter:") for t in label)


def _row_tokens(table: EvidenceTable, i: int, cell_columns: Sequence[int] = ()) -> set[str]:
    """A row's label tokens, the codes its other cells hold ("Nº A.I. 679199"), and its
    numbers in the columns the question ties numbers to (`cell_terms`)."""
    out = tokens(row_label(table, i))
    for j, cell in enumerate(table.rows[i]):
        if j not in table.label_columns and _CODE.fullmatch(cell.text):
            out.add(f"num:{int(cell.text)}")
        if j in cell_columns and cell.number is not None:
            out.add(f"cell:{j}={number_token(cell.number)}")
    return out


def _parts_over_totals(matches: list[_Match], totals: set[int], labels: Sequence[int] = ()) -> list[_Match]:
    """The matched lines that are not totals, when there are any: a question naming a part
    and its whole ("Nordeste de Mato Grosso") asks for the part. The column naming the rows
    (`labels`) is no part: "Regiões do IMEA" named by "IMEA" does not hide Mato Grosso's."""
    plain = [
        m
        for m in matches
        if m.index not in totals and m.index not in labels and any(_strong(t) for t in m.matched)
    ]
    return plain if plain and len(plain) < len(matches) else matches


def _best_row(labels: _Labels, query: set[str]) -> tuple[_Match, list[int]] | None:
    """The one best row for the question, and the rows listed under the same name that the
    question matches alike (a bulletin listing a beach twice, one row per sample): those are
    read too, and answer only when their cell agrees."""
    matches = labels.match_rows(query)
    if not matches:
        return None
    first = matches[0]
    name = row_name(labels.table, first.index)
    alike = [
        m.index for m in matches[1:] if m.matched == first.matched and row_name(labels.table, m.index) == name
    ]
    if alike:
        return first, alike
    best = _unique_best(matches)
    return (best, []) if best is not None else None


def _two_named(matches: list[_Match]) -> tuple[_Match, _Match] | None:
    """The two best matches when they tie above the rest and each is named by a word of its
    own ("sensitivity" and "specificity"), else None."""
    if len(matches) < 2 or matches[1].score < matches[0].score - 1e-6:
        return None
    if len(matches) > 2 and matches[2].score >= matches[0].score - 1e-6:
        return None
    first, second = matches[0], matches[1]
    own = [{t for t in a.matched - b.matched if _strong(t)} for a, b in ((first, second), (second, first))]
    return (first, second) if all(own) else None


def _unique_best(matches: list[_Match]) -> _Match | None:
    if not matches or (len(matches) > 1 and matches[1].score >= matches[0].score - 1e-6):
        return None
    return matches[0]


@dataclass
class _Found:
    """What the question asks of one table, read: the operation and the cells."""

    operation: Operation
    cells: list[tuple[int, int]]  # (row, column) of the cells read
    score: float
    line: str = ""  # the label of the row or column an aggregate ran over
    line_is_column: bool = True
    total_label: str = ""  # the total row's or column's label
    value: str = ""  # a computed value (sums)
    addressed: set[str] = field(default_factory=set)  # the tokens of the labels the answer speaks of
    row_text: str = ""  # how a looked-up row is named, when its name is not what the question said
    name_column: int | None = None  # the label column the question asks rows by ("qual autuado")
    condition: Condition | None = None  # what a count_where counted ("zero", "above 50%")
    counted_over: int = 0  # ...among this many rows (or columns) with a value
    # the other cells an extreme over rows the question names was chosen among ("Entre
    # Tripura e Manipur, qual ...": Manipur's), given beside the extreme
    compared: list[tuple[int, int]] = field(default_factory=list)
    also: _Found | None = None  # the other extreme, when the question asks both ("a maior e a menor")
    # the chosen row's cells in the other columns the question asks of it ("diga ... o valor
    # da multa" of the earliest fine), given after the answer
    details: list[tuple[int, int]] = field(default_factory=list)


class TableAnswerer:
    """Reads the answer from the tables of the evidence pages, or returns None."""

    def answer(
        self,
        question: str,
        language: str,
        pages: Sequence[PageEvidence],
        page_chunks: PageChunks | None = None,
    ) -> TableAnswer | None:
        """The best table answer among the pages' tables (a better page wins ties), or None
        when no table has one clear row and column (or line) for the question. `page_chunks`
        completes the tables the search returned some rows of (evidence_tables)."""
        best: tuple[EvidenceTable, _Found] | None = None
        letters = letter_tokens(question)
        for table in evidence_tables(pages, page_chunks, every_table=names_table(question)):
            if names_another_letter(letters, table.title):
                continue
            found = self.read(question, table)
            if found and about_another_page(question, table, pages):
                continue
            if found and (best is None or found.score > best[1].score):
                best = (table, found)
        if best is None:
            return None
        answer = compose(language, *best)
        if question_language(_page_text(best[0])) == question_language(question):
            asked = question
            if best[1].operation == "first_where" and (span := first_asked(question)):
                asked = fold(question)[: span[0]] + fold(question)[span[1] :]  # "for the first time"
            answer.unaddressed = unaddressed_words(asked, best[0])
        answer.qualifiers = qualifier_words(question, best[0])
        return answer

    def read(self, question: str, table: EvidenceTable) -> _Found | None:
        """What the question asks of this table: a cell, an extreme, a total; None if unclear."""
        words = {
            fold(w) for w in _WORD_PARTS.findall(_COMPARISON.sub(" ", superlatives_named(fold(question))))
        }
        numbered = cell_terms(question, table)
        labels = _Labels.of(table, sorted(set(numbered.values())))
        query = (question_tokens(question) | set(numbered)) - {_stem(w) for w in _ARGMAX | _ARGMIN}
        query -= range_letters(question)
        line_query = query - {_stem(w) for w in _TOTAL_ASKED}
        extreme: Operation | None = "argmin" if words & _ARGMIN else "argmax" if words & _ARGMAX else None
        if extreme == "argmax" and words & _BEHIND:
            extreme = "argmin"  # "a colheita mais atrasada", "lagging most": the least progress
        timed: Operation | None = "earliest" if words & _EARLIEST else "latest" if words & _LATEST else None
        found = self._date_extreme(labels, timed, line_query) if timed else None
        if found is not None or (timed and not words & (_ARGMAX_NAMED | _ARGMIN)):
            pass  # a date column's first (last) date; "a mais antiga" without dates: not a largest value
        elif extreme:  # "the highest rainfall in the most recent week", a table without dates: its extreme
            found = self._extreme(labels, extreme, line_query, totals=bool(words & _TOTAL_ASKED))
            found = found or self._stated_extreme(labels, extreme, line_query)
            if found and words & _ARGMIN and words & _ARGMAX:
                # "qual teve a maior taxa em 1981-1991 e qual teve a menor?": both extremes
                highest = self._extreme(labels, "argmax", line_query, totals=bool(words & _TOTAL_ASKED))
                if highest and highest.cells != found.cells:
                    highest.also, found = found, highest
            elif found and found.line_is_column:
                # "the most redemption checks, for handguns and for long guns": a second column
                found.also = self._second_line(labels, extreme, line_query, found)
        else:
            counting = bool(COUNT_ASKED.search(fold(question)))
            first = None if counting else first_asked(question)
            condition = count_condition(question) if counting or first else None
            if condition and first:  # "when did it pass 50% for the first time": the first row past it
                found = self._first_where(question, labels, condition, first)
            else:  # "how many states reported zero permit checks": the rows whose cell meets it
                found = self._count_where(question, labels, condition) if condition else None
            if found is None and counting and condition is None:
                # "how many of the listed actions can be performed with no authority": the
                # rows an X marks in the column the question names (a feature matrix)
                found = self._count_marked(labels, line_query)
            if found is None and words & _TOTAL_ASKED and words & _EVERY_ROW:
                # "a soma de todas as multas listadas": the column's total, not the one row that
                # the words describing the document ("autuações ambientais ... no Amazonas") match
                found = self._total(question, labels, line_query)
            if found is None:
                found = self._lookup(labels, query) or self._cell_holding(question, labels, query)
                if found is not None and numbers_asked(question) >= 2:
                    found.also = self._second_column(labels, query, found)
                if words & _TOTAL_ASKED:
                    found = (
                        self._as_total(labels, found)
                        if found
                        else self._rows_named_together(labels, line_query, in_total=True)
                        or self._total(question, labels, line_query)
                    )
            if found is None and counting:
                found = self._count(question, table)
        if found is None or not self._addresses_every_key_term(question, labels, found):
            return None
        extreme_row = found.operation in ("argmax", "argmin", "earliest", "latest") and found.line_is_column
        if extreme_row and found.also is None:  # a second extreme already reads the other column
            found.details = self._row_details(labels, later_asks(question), found)
        return found

    @staticmethod
    def _count_marked(labels: _Labels, query: set[str]) -> _Found | None:
        """The rows marked ("X", "✓", "Sim") in the one column of marks the question names
        (a column holding marks only, some rows left blank), when the table is whole."""
        table = labels.table
        if not table.complete:
            return None
        rows = _entities(table, True)
        marks = [j for j in range(len(table.columns)) if _marks_rows(table, j, rows)]
        column = _unique_best([m for m in labels.match_columns(query) if m.index in marks])
        if column is None:
            return None
        marked = [(i, column.index) for i in rows if not table.rows[i][column.index].empty]
        found = _Found("count_marked", marked, column.score, table.columns[column.index])
        found.value, found.counted_over = str(len(marked)), len(rows)
        found.addressed = labels.columns[column.index]
        return found

    @staticmethod
    def _date_extreme(labels: _Labels, operation: Operation, query: set[str]) -> _Found | None:
        """ "A autuação com data mais antiga", "the most recent inspection": the rows whose
        date is the earliest (latest) of the table's date column, the one the question names
        when it has several; None without a date column or with several and none named."""
        table = labels.table
        if not table.complete:
            return None
        rows = _entities(table, True)
        dated = {j: dates for j in range(len(table.columns)) if (dates := _column_dates(table, j, rows))}
        named = _unique_best([m for m in labels.match_columns(query) if m.index in dated])
        if named is None and len(dated) != 1:
            return None
        column = named or _Match(next(iter(dated)), 0.5, set())
        dates = dated[column.index]
        target = min(dates.values()) if operation == "earliest" else max(dates.values())
        chosen = [(i, column.index) for i, d in dates.items() if d == target][:MAX_NAMES_LISTED]
        found = _Found(operation, chosen, column.score, table.columns[column.index], True)
        found.addressed = labels.columns[column.index]
        found.name_column = TableAnswerer._asked_by(labels, query - column.matched, found.addressed)
        return found

    @staticmethod
    def _row_details(labels: _Labels, query: set[str], found: _Found) -> list[tuple[int, int]]:
        """The chosen row's cells in the other columns the question's later parts name
        (`query`: later_asks; "... Diga o autuado, a data e o valor da multa": Valor Multa),
        at most MAX_DETAILS: by a word (no date or number) that does not also name the line
        the extreme ran over (the period's "% DEP." beside its "ACTUAL (mm)") and is not one
        of the table's title words. The column naming the row names it already."""
        table = labels.table
        if len(found.cells) != 1:
            return []
        r, line = found.cells[0]
        skip = {line, table.name_column if found.name_column is None else found.name_column}
        out = []
        for m in labels.match_columns(query):
            own = {
                t
                for t in m.matched - labels.context
                if _kind(t) == "word"
                and _strong(t)
                and all(x.index != line for x in labels.match_columns({t}))
            }
            if m.index in skip or not own or table.rows[r][m.index].empty:
                continue
            if tokens(table.rows[r][m.index].text) & m.matched:
                continue  # a cell that holds the question's own words restates it
            out.append((r, m.index))
            found.addressed |= labels.columns[m.index]
            if len(out) == MAX_DETAILS:
                break
        return out

    @staticmethod
    def _second_column(labels: _Labels, query: set[str], found: _Found) -> _Found | None:
        """Asked for two numbers ("quantos estados no dia 10-07 e quantos no acumulado de 01-06
        a 10-07?"), the looked-up row's cell in the other column the question names: the best
        one whose label holds a word of the question the first column's lacks ("dia")."""
        table = labels.table
        if found.operation != "lookup" or len(found.cells) != 1:
            return None
        ((r, c),) = found.cells
        others = [
            m
            for m in labels.match_columns(query - labels.rows[r])
            if m.index != c
            and m.index not in table.label_columns
            and not table.rows[r][m.index].empty
            and m.matched - labels.columns[c]
        ]
        best = _unique_best(others)
        if best is None:
            return None
        second = _Found("lookup", [(r, best.index)], best.score)
        second.addressed = labels.columns[best.index]
        return second

    @staticmethod
    def _cell_holding(question: str, labels: _Labels, query: set[str]) -> _Found | None:
        """A table whose cells carry their own row labels (a dosing table: ">30 kg 400/100 mg
        od" under each drug, the bands differing by drug): the one column the question names,
        and the one cell of it holding every number of the question the column does not, or
        a band holding each of its quantities ("35 kg" in "30–<45 kg")."""
        table = labels.table
        column = _unique_best(labels.match_columns(query))
        if column is None:
            return None
        wanted = {t for t in query - column.matched if t.startswith("num:")}
        numbers = find_numbers(question)
        quantities = [(v, unit) for start, end, v in numbers if (unit := quantity_of(question, start, end))]

        def holds(text: str) -> bool:
            if wanted and wanted <= tokens(text):
                return True
            bands = find_bands(text)
            return bool(quantities) and all(any(in_band(v, u, b) for b in bands) for v, u in quantities)

        rows = [i for i, row in enumerate(table.rows) if holds(row[column.index].text)]
        if len(rows) != 1:
            return None
        cell = table.rows[rows[0]][column.index]
        found = _Found("lookup", [(rows[0], column.index)], column.score + 1.0, row_text=cell.text)
        found.addressed = labels.columns[column.index] | tokens(cell.text)
        return found

    @staticmethod
    def _count(question: str, table: EvidenceTable) -> _Found | None:
        """ "How many X in Manacapuru?" where no cell holds the number: the rows that the
        question's names select (`rows_named`), at least MIN_COUNTED of them."""
        if not counts_the_rows(question, table):
            return None
        selected = rows_named(question, table)
        if selected is None or len(selected.rows) < MIN_COUNTED:
            return None
        chosen = selected.cells
        column = table.columns[chosen[0][1]]
        found = _Found("count", chosen, 1.0, line=column, value=str(len(selected.rows)))
        found.row_text = table.rows[chosen[0][0]][chosen[0][1]].text
        found.addressed = selected.addressed
        return found

    def _first_where(
        self, question: str, labels: _Labels, condition: Condition, asked: tuple[int, int]
    ) -> _Found | None:
        """ "Em qual levantamento o Médio-Norte passou de 50% pela primeira vez?": the first row
        (in the table's order, a time series' own) whose cell in the column the question names
        meets the condition; None when none does or the table is not whole."""
        table = labels.table
        query = question_tokens(without_condition(question, condition))
        query -= {_stem(w) for w in _ARGMAX | _ARGMIN} | range_letters(question)
        line = self._line(labels, query, totals=False)
        if line is None or not line[1] or not table.complete:
            return None  # the first of a column's rows: every row, in order
        match, _ = line
        # the cells of the condition's kind: shares for "50%" (not the column's hectares row)
        rows = [
            r
            for r in _entities(table, True)
            if table.rows[r][match.index].number is not None
            and ("%" in table.rows[r][match.index].text) == condition.percent
        ]
        met = [r for r in rows if condition.holds(table.rows[r][match.index].number or 0.0)]
        if not met:
            return None
        found = _Found("first_where", [(met[0], match.index)], match.score, table.columns[match.index], True)
        found.condition = condition
        found.addressed = labels.columns[match.index] | tokens(fold(question)[slice(*condition.span)])
        found.addressed |= tokens(fold(question)[slice(*asked)])
        return found

    def _count_where(self, question: str, labels: _Labels, condition: Condition) -> _Found | None:
        """ "How many states reported zero permit checks?": the rows (or value columns) whose
        cell in the line the question names meets the condition ("zero", "above 50%",
        "diferente de zero"), each cited; a count of none is an answer too, citing the line."""
        table = labels.table
        query = question_tokens(without_condition(question, condition))
        query -= {_stem(w) for w in _ARGMAX | _ARGMIN} | range_letters(question)
        # "how many states have a grand total above 40,000,000": a total line, when it is named
        line = self._line(labels, query, totals=bool(query & {_stem(w) for w in _TOTAL_ASKED}))
        if line is None:
            return None
        match, is_column = line
        if is_column and not table.complete:
            return None  # a count over a column needs every row
        cells = [(i, match.index) if is_column else (match.index, i) for i in _entities(table, is_column)]
        valued = [(r, c) for r, c in cells if table.rows[r][c].number is not None]
        met = [(r, c) for r, c in valued if condition.holds(table.rows[r][c].number or 0.0)]
        label = table.columns[match.index] if is_column else row_label(table, match.index)
        found = _Found("count_where", met or valued, match.score, label, is_column, value=str(len(met)))
        found.condition, found.counted_over = condition, len(valued)
        found.addressed = labels.columns[match.index] if is_column else labels.rows[match.index]
        found.addressed |= tokens(fold(question)[slice(*condition.span)])
        # the total the count left out names the whole its parts make up ("for Mato Grosso")
        totals = (
            [labels.rows[i] for i in table.total_rows]
            if is_column
            else [labels.columns[j] for j in table.total_columns]
        )
        found.addressed |= set().union(*totals)
        return found

    @staticmethod
    def _stated_extreme(labels: _Labels, extreme: Operation, query: set[str]) -> _Found | None:
        """The cell of the one row that states the extreme asked ("Highest point" of a line
        chart's lines, ingest/chart_lines.py), in the one column the question names, when it
        names no line to run the extreme over ("the highest CO2 concentration")."""
        table = labels.table
        pattern = _HIGHEST_LABEL if extreme == "argmax" else _LOWEST_LABEL
        rows = [i for i in range(len(table.rows)) if pattern.match(fold(row_label(table, i)))]
        if len(rows) != 1:
            return None
        cells = table.rows[rows[0]]
        columns = [
            m
            for m in labels.match_columns(query)
            if m.index not in table.label_columns and not cells[m.index].empty
        ]
        column = _unique_best(columns)
        if column is None:
            return None
        found = _Found("lookup", [(rows[0], column.index)], column.score)
        found.addressed = labels.rows[rows[0]] | labels.columns[column.index]
        return found

    def _lookup(self, labels: _Labels, query: set[str]) -> _Found | None:
        """The cell where the one best row and the one best column cross. Each question term
        serves one of them: the row's (or column's) terms are not reused for the other."""
        by_rows = self._cross(labels, query, rows_first=True)
        by_columns = self._cross(labels, query, rows_first=False)
        if by_rows is None and by_columns is None:
            return self._rows_named_together(labels, query)
        if by_rows is None or (by_columns is not None and by_columns.score > by_rows.score):
            return by_columns
        return by_rows

    @staticmethod
    def _rows_named_together(labels: _Labels, query: set[str], in_total: bool = False) -> _Found | None:
        """Several rows the question names each by a word of its own, in one column ("what
        inference time did OTSL and HTML achieve with 6 encoder and 6 decoder layers"): the
        rows that match best alike, each holding a name word no other of them holds, read in
        the one best column of the remaining terms; `in_total` (a total asked, "Indiana or
        Illinois ... in total"): in the table's grand total column when no other is named."""
        table = labels.table
        matches = labels.match_rows(query)
        top = [m for m in matches if matches and m.score >= matches[0].score - 1e-6]
        if not 2 <= len(top) <= MAX_ROWS_NAMED:
            return None
        for m in top:
            own = {t for t in m.matched if ":" not in t and _strong(t)}
            if not own - set().union(*(o.matched for o in top if o is not m)):
                return None  # a row the question does not name apart from the others
        used = set().union(*(m.matched for m in top))
        naming = {
            j for j in table.label_columns for m in top if tokens(table.rows[m.index][j].text) & m.matched
        }
        numbered = {int(t[5:].split("=")[0]) for m in top for t in m.matched if t.startswith("cell:")}
        columns = [m for m in labels.match_columns(query - used) if m.index not in naming | numbered]
        column = _unique_best(columns)
        if column is None and in_total and table.total_columns:
            column = _Match(grand_total(table, table.total_columns, rows=False), 0.0, set())
        if column is None or any(table.rows[m.index][column.index].empty for m in top):
            return None
        rows = sorted(m.index for m in top)
        found = _Found("lookup", [(r, column.index) for r in rows], top[0].score + column.score)
        found.addressed = set().union(*(labels.rows[r] for r in rows)) | labels.columns[column.index]
        return found

    def _cross(self, labels: _Labels, query: set[str], rows_first: bool) -> _Found | None:
        table = labels.table
        if rows_first:
            named = _best_row(labels, query)
            if named is None:
                return None
            row, alike = named
            columns = _parts_over_totals(
                labels.match_columns(query - row.matched), table.total_columns, [table.name_column]
            )
        else:
            column = _unique_best(
                _parts_over_totals(labels.match_columns(query), table.total_columns, [table.name_column])
            )
            if column is None:
                return None
            named = _best_row(labels, query - column.matched)
            if named is None:
                return None
            row, alike = named
            columns = [column]
        cells = table.rows[row.index]
        # a label column can be the answer ("Município") unless its cell is what named the row
        numbered = {int(t[5:].split("=")[0]) for t in row.matched if t.startswith("cell:")}
        naming = {j for j in table.label_columns if tokens(cells[j].text) & row.matched} | numbered
        filled = [m for m in columns if m.index not in naming and not cells[m.index].empty]
        best = _unique_best(filled)
        marked = _unique_best([m for m in columns if m.index not in naming])
        if (
            marked is not None
            and _marks_no_value(cells[marked.index])
            and (best is None or marked.score > best.score)
        ):
            # the asked cell says the table has no value ("-" for Arunachal Pradesh in 1951-1961)
            found = _Found("no_value", [(row.index, marked.index)], row.score + marked.score)
            found.addressed = labels.rows[row.index] | labels.columns[marked.index]
            return found
        if best is None and not alike and (pair := _two_named(filled)) is not None:
            # "la sensibilité et la spécificité du test": the row's cells in both columns named
            found = _Found("lookup", [(row.index, m.index) for m in pair], row.score + pair[0].score)
            found.addressed = (
                labels.rows[row.index] | labels.columns[pair[0].index] | labels.columns[pair[1].index]
            )
            return found
        if best is None:
            values = [j for j in range(len(table.columns)) if j not in table.label_columns]
            if filled or len(values) != 1 or cells[values[0]].empty:
                return None
            best = _Match(values[0], 0.0, set())  # the table's one value column
        if any(table.rows[i][best.index].text != cells[best.index].text for i in alike):
            return None  # rows labelled alike that differ in the asked cell: which one is meant?
        found = _Found("lookup", [(i, best.index) for i in [row.index, *alike]], row.score + best.score)
        found.addressed = labels.rows[row.index] | labels.columns[best.index]
        # a total column the question also names is the whole the cell is part of ("o Nordeste
        # de Mato Grosso": the Nordeste column, within the state's)
        found.addressed |= set().union(
            *(labels.columns[j] for j in table.total_columns if labels.columns[j] & query)
        )
        named_by = [
            f"{display(table.columns[j])} {cell.text}"
            for j, cell in enumerate(cells)
            if j != table.name_column
            and (j in numbered or tokens(cell.text) & row.matched - tokens(row_name(table, row.index)))
        ]
        if numbered and not tokens(row_name(table, row.index)) & row.matched:
            # a row the question named by numbers: named so ("Inhibitor concentration 10"), not by a
            # cell it did not ask about
            found.row_text = ", ".join(named_by)
        else:
            found.row_text = f"{row_name(table, row.index)} ({', '.join(named_by)})" if named_by else ""
        return found

    @staticmethod
    def _as_total(labels: _Labels, found: _Found) -> _Found:
        """A looked-up cell in a total row or column, read as the total it is (rows named
        together keep their lookup: "Indiana or Illinois ... in total", each row's total)."""
        table = labels.table
        if len({r for r, _ in found.cells}) > 1:
            return found
        r, c = found.cells[0]
        if c in table.total_columns:
            found.operation, found.line, found.total_label = "total", row_label(table, r), table.columns[c]
        elif r in table.total_rows:
            found.operation, found.line, found.total_label = "total", table.columns[c], row_label(table, r)
        return found

    def _total(self, question: str, labels: _Labels, query: set[str]) -> _Found | None:
        """A total of the line the question names: its cell in the total row (or column),
        else the sum of a complete numeric column; over the rows the question's names select
        when they select some ("somando as autuações de JOAO ...": that person's rows)."""
        table = labels.table
        line = self._line(labels, query)
        if line is None:
            return self._grand_total(labels)
        match, is_column = line
        label = table.columns[match.index] if is_column else row_label(table, match.index)
        totals = table.total_rows if is_column else table.total_columns
        selected = rows_named(question, table) if is_column else None
        if selected is not None and table.complete:
            cells = [
                (i, match.index)
                for i in sorted(selected.rows)
                if table.rows[i][match.index].number is not None
            ]
            if not cells:
                return None
            value = format_number(sum(table.rows[i][j].number or 0.0 for i, j in cells), cells, table)
            found = _Found("sum", cells, match.score, label, True, value=value)
            found.addressed = labels.columns[match.index] | selected.addressed
            found.row_text = table.rows[selected.cells[0][0]][selected.cells[0][1]].text
            return found
        if totals:
            grand = grand_total(table, totals, rows=is_column)
            cell = (grand, match.index) if is_column else (match.index, grand)
            if table.rows[cell[0]][cell[1]].empty:
                return None
            total_label = row_label(table, grand) if is_column else table.columns[grand]
            found = _Found("total", [cell], match.score, label, is_column, total_label)
        elif is_column and table.complete:
            cells = [
                (i, match.index)
                for i in _entities(table, True)
                if table.rows[i][match.index].number is not None
            ]
            if len({"%" in table.rows[i][j].text for i, j in cells}) > 1:
                return None  # shares and amounts in one column (IMEA's area over its weekly %): no sum
            value = format_number(sum(table.rows[i][j].number or 0.0 for i, j in cells), cells, table)
            found = _Found("sum", cells, match.score, label, True, value=value)
        else:
            return None
        found.addressed = labels.columns[match.index] if is_column else labels.rows[match.index]
        return found

    @staticmethod
    def _grand_total(labels: _Labels) -> _Found | None:
        """The total asked with no line named ("o total geral"): the cell where the table's
        grand total row and grand total column cross; None without both."""
        table = labels.table
        if not table.total_rows or not table.total_columns:
            return None
        r = grand_total(table, table.total_rows, rows=True)
        c = grand_total(table, table.total_columns, rows=False)
        if table.rows[r][c].empty:
            return None
        found = _Found("total", [(r, c)], 0.5, row_label(table, r), False, table.columns[c])
        found.addressed = labels.rows[r] | labels.columns[c]
        return found

    @staticmethod
    def _line(labels: _Labels, query: set[str], *, totals: bool = True) -> tuple[_Match, bool] | None:
        """The one numeric row or column the question names (True: a column). `totals`
        False: a total line is taken only when the question names no other line ("Qual
        região de Mato Grosso tinha a maior área": the area row over the regions, not the
        Mato Grosso column, the sum of the regions, over the rows)."""
        table = labels.table
        over_rows, over_columns = _entities(table, True), _entities(table, False)
        candidates = [
            (m, True)
            for m in labels.match_columns(query)
            if m.index not in table.label_columns and _numeric([table.rows[i][m.index] for i in over_rows])
        ]
        candidates += [
            (m, False)
            for m in labels.match_rows(query)
            if _numeric([table.rows[m.index][j] for j in over_columns])
        ]
        if not totals:
            plain = [
                (m, is_column)
                for m, is_column in candidates
                if m.index not in (table.total_columns if is_column else table.total_rows)
            ]
            candidates = plain or candidates
        candidates.sort(key=lambda c: -c[0].score)
        if not candidates:
            return None
        tied = [c for c in candidates if c[0].score >= candidates[0][0].score - 1e-6]
        if len(tied) > 1 and query & _GRAND:
            # "a grand total above 40,000,000": of total lines labelled alike, the grand one
            for is_column in (True, False):
                totals = {m.index for m, col in tied if col is is_column} & (
                    table.total_columns if is_column else table.total_rows
                )
                if len(totals) == len(tied):
                    grand = grand_total(table, totals, rows=not is_column)
                    return next(c for c in tied if c[0].index == grand)
        if len(tied) > 1:
            return None
        return candidates[0]

    def _extreme(
        self, labels: _Labels, operation: Operation, query: set[str], *, totals: bool = True
    ) -> _Found | None:
        """The largest (smallest) value of the line the question names, ties all kept."""
        table = labels.table
        line = self._line(labels, query, totals=totals)
        if totals and (line is None or line[0].matched <= labels.context):
            # "the largest total" with no line named but by the table's title: its grand total
            line = self._grand_total_line(table) or line
        if line is None:
            line = self._only_value_column(table)
        if line is None:
            return None
        match, is_column = line
        if is_column and not table.complete:
            return None  # a column's extreme needs every row
        over = _entities(table, is_column)
        among = self._named_among(labels, query - match.matched, over) if is_column else []
        cells = [(i, match.index) if is_column else (match.index, i) for i in among or over]
        cells = [(r, c) for r, c in cells if table.rows[r][c].number is not None]
        values = [table.rows[r][c].number or 0.0 for r, c in cells]
        target = max(values) if operation == "argmax" else min(values)
        chosen = [rc for rc, v in zip(cells, values, strict=True) if v == target][:5]
        label = table.columns[match.index] if is_column else row_label(table, match.index)
        found = _Found(operation, chosen, match.score, label, is_column)
        if among:
            found.compared = [rc for rc in cells if rc not in chosen][:MAX_NAMES_LISTED]
        found.addressed = labels.columns[match.index] if is_column else labels.rows[match.index]
        # the total the extreme left out names the whole its parts make up ("região de Mato Grosso")
        total_labels = (
            [labels.rows[i] for i in table.total_rows]
            if is_column
            else [labels.columns[j] for j in table.total_columns]
        )
        found.addressed |= set().union(*total_labels, *(labels.rows[i] for i in among))
        if is_column:
            found.name_column = self._asked_by(labels, query - match.matched, labels.columns[match.index])
        return found

    def _second_line(
        self, labels: _Labels, operation: Operation, query: set[str], first: _Found
    ) -> _Found | None:
        """The extreme of a second column the question names beside the first: the same
        question less the first column's last header level ("Redemption / Handgun" less
        "handgun") names one more column, by a word the first did not take ("long gun")."""
        column = first.cells[0][1]
        label = labels.table.columns[column]
        if not tokens(label) & query:
            return None  # the first column is not one the question names (a grand total)
        rest = query - tokens(label.split(" / ")[-1])
        line = self._line(labels, rest, totals=False)
        if line is None or not line[1] or line[0].index == column:
            return None
        if not (line[0].matched & query) - first.addressed:
            return None  # it matches only words the first column took: not asked
        second = self._extreme(labels, operation, rest, totals=False)
        if second is None or second.cells[0][1] != line[0].index:
            return None
        return second

    @staticmethod
    def _asked_by(labels: _Labels, query: set[str], line: set[str]) -> int | None:
        """The label column whose header the question names ("Qual autuado": "Nome Autuado"),
        the one the answer names the rows by; None when it names none, or several alike."""
        table = labels.table
        words = {t for t in query if ":" not in t}  # a date names the line, not the rows' kind
        matches = [
            m
            for m in labels.match_columns(words)
            if m.index in table.label_columns and m.matched - line and not _leads_with_numbers(table, m.index)
        ]
        best = _unique_best(matches)
        return best.index if best else None

    @staticmethod
    def _only_value_column(table: EvidenceTable) -> tuple[_Match, bool] | None:
        """The table's one numeric column, when the question names no line: "the value of the
        lowest bar" of a chart read into (category, value), "o menor" of a two-column list."""
        rows = _entities(table, True)
        numeric = [
            j
            for j in range(len(table.columns))
            if j not in table.label_columns and _numeric([table.rows[i][j] for i in rows])
        ]
        return (_Match(numeric[0], 0.5, set()), True) if len(numeric) == 1 else None

    @staticmethod
    def _grand_total_line(table: EvidenceTable) -> tuple[_Match, bool] | None:
        """The table's grand total column (else row) as the line of an extreme."""
        if table.total_columns:
            return _Match(grand_total(table, table.total_columns, rows=False), 0.5, set()), True
        if table.total_rows:
            return _Match(grand_total(table, table.total_rows, rows=True), 0.5, set()), False
        return None

    @staticmethod
    def _named_among(labels: _Labels, query: set[str], over: list[int]) -> list[int]:
        """The rows an extreme runs over when the question names some ("the lowest time of
        OTSL": the OTSL rows): those matching the question's other terms best, two or more and
        fewer than all; none when it names no such group."""
        matches = [m for m in labels.match_rows(query) if m.index in over]
        if not matches:
            return []
        best = matches[0].score
        chosen = [m.index for m in matches if m.score >= best - 1e-6]
        return sorted(chosen) if 2 <= len(chosen) < len(over) else []

    @staticmethod
    def _addresses_every_key_term(question: str, labels: _Labels, found: _Found) -> bool:
        """Every name, number or code of the question is one the answer speaks of (its labels,
        the table's title and headers, the page's other text); a key term that names another
        row or column ("Kerala" when the cell is Nagaland's) means the question asks about
        something else, or about more than one cell."""
        table = labels.table
        header = [table.columns[j] for j in table.label_columns]
        # the document's title and file name ("in_imd_rainfall_distribution": the IMD's table)
        names = re.sub(r"[\W_]+", " ", f"{table.page.title} {table.page.filename}")
        addressed = found.addressed | labels.context | tokens(names)
        addressed |= set().union(*(tokens(h) for h in header))
        rows_read = {r for r, _ in found.cells}
        columns_read = {c for _, c in found.cells}
        others = [t for i, t in enumerate(labels.rows) if i not in rows_read]
        others += [t for j, t in enumerate(labels.columns) if j not in columns_read]
        context = fold(f"{table.page_text} {names} {table.title}")
        # a table read from a chart's picture, asked as a chart: a name the picture does not
        # print (the place or source the question gives it) is no other row or column of it
        from_picture = TITLE_NOTE in table.title and bool(_NAMES_CHART.search(fold(question)))
        phrases = [fold(p) for p in document_phrase(question, TABLE_NOUN).split(" | ") if p]
        keys = key_terms(question)
        names = [t.text for t in question_key_terms(question) if t.name]  # no number, date or code
        for key in keys:
            key_tokens = {t for t in tokens(key) if _strong(t) or t.startswith("month:")} - TABLE_WORDS
            # a month or a date is addressed by its value, however written ("june": "01-06-2016")
            key_tokens = {t for t in key_tokens if ":" in t} or key_tokens
            if not key_tokens and _compound_of_small_numbers(key) and key not in fold(_page_text(table)):
                return False  # "safra 17/18" asked of the "SAFRA 16/17" table: another season
            if not key_tokens and _compound_of_small_numbers(key) and _labels_another_line(key, table, found):
                return False  # "safra 15/16": only the "∆ Safra 15/16 para 16/17" row names it
            # or in another language: "Produto C" of the "Product C Monthly Revenue" chart
            forms = name_forms(key)
            key_tokens = {t for t in key_tokens if not month_of_year_addressed(t, addressed, context)}
            if not key_tokens or key_tokens <= addressed or any(tokens(f) <= addressed for f in forms):
                continue
            if fold(key) not in context and not any(f in context for f in forms):
                if from_picture and all(part.isalpha() for part in key.split()):
                    continue  # "Seattle" of "the Seattle weather chart": a chart prints no subject
                if _known_by_another_name(key, names, phrases, context):
                    continue  # "FBI" of "the FBI NICS table": the page names it NICS alone
                return False
            # a term of the page's text that names one or two other rows asks about them; one
            # that many rows hold ("Ibama" in the sanctions of most rows) is the page's context
            naming = sum(key_tokens <= other for other in others)
            if 0 < naming <= NAMING_ROWS:
                return False
        return True


_MONTH_OF_YEAR = re.compile(r"^date:(\d{4})-(\d{2})$")


def _known_by_another_name(key: str, names: list[str], phrases: list[str], context: str) -> bool:
    """Whether a name the page lacks is one of the words the question names its table or
    document by, beside another name of that phrase (`names`: the question's key terms that
    are names) that the page holds: the issuer of "the FBI NICS table", of a table titled
    "NICS Firearm Background Checks". A number or a date is never so: "the 2019 report" asked
    of the 2020 one is another report."""
    if key not in names:
        return False
    for phrase in phrases:
        if not re.search(rf"\b{re.escape(key)}\b", phrase):
            continue
        others = [n for n in names if n != key and re.search(rf"\b{re.escape(n)}\b", phrase)]
        if any(re.search(rf"\b{re.escape(other)}\b", context) for other in others):
            return True
    return False


def month_of_year_addressed(token: str, addressed: set[str], context: str) -> bool:
    """Whether a month of a year the question asks ("março de 2024": date:2024-03) is the
    month a row or column the answer reads names ("Mar" of a chart of 2024's monthly
    rainfall), in a table whose title or page gives the year."""
    found = _MONTH_OF_YEAR.match(token)
    return (
        bool(found)
        and f"month:{int(found[2])}" in addressed
        and re.search(rf"\b{found[1]}\b", context) is not None
    )


def _labels_another_line(key: str, table: EvidenceTable, found: _Found) -> bool:
    """Whether a season or period written as small numbers ("15/16") is in the label of a
    row or column the answer does not read, and neither in the title nor in a line it reads:
    the question asks about that other line's season, not the cell read."""
    rows_read, columns_read = {r for r, _ in found.cells}, {c for _, c in found.cells}
    key = fold(key)
    columns = [(j in columns_read, label) for j, label in enumerate(table.columns)]
    rows = [(i in rows_read, row_label(table, i)) for i in range(len(table.rows))]
    if key in fold(table.title) or any(read and key in fold(label) for read, label in columns + rows):
        return False
    return any(not read and key in fold(label) for read, label in columns + rows)


# "categories A to I", "das barras de A a I", "categories A, B and C": the extent of what
# the table names by letters
_LETTER_RANGE = re.compile(
    r"\b[A-Z]\s*(?:to|through|a|à|ao|até|au|[-–])\s*[A-Z]\b"
    r"|\b[A-Z](?:\s*,\s*[A-Z]\b)+(?:,?\s+(?:and|or|e|ou|et)\s+[A-Z]\b)?"
)
MIN_LISTED = 3  # "A, B and C" lists the chart's letters; "A and B" may name the two rows asked


def range_letters(question: str) -> set[str]:
    """The letter tokens (letter_tokens) only a range or a list of the question writes: "A"
    and "I" of "the chart of categories A to I" (or "A, B, C") describe the chart, not the
    bar asked ("bar D")."""
    spans = [
        m[0]
        for m in _LETTER_RANGE.finditer(question)
        if "," not in m[0] or len(re.findall(r"\b[A-Z]\b", m[0])) >= MIN_LISTED
    ]
    blanked = question
    for span in spans:
        blanked = blanked.replace(span, " ")
    return set(letter_tokens(question) - letter_tokens(blanked))


def qualifier_words(question: str, table: EvidenceTable) -> list[str]:
    """The question's content words that qualify a word one of the table's labels (title,
    column, row) starts with, written just before it ("the simple bar chart" over "Bar
    chart", "the main Handgun column" over "Handgun"), or ends with, written just after it
    (Portuguese and French adjectives: "a coluna Handgun principal"). Such a word says which
    of the table's things the question means, not that it asks about another subject; a
    label that writes its own word in that place ("Operating margin" for "gross margin")
    does not meet it."""
    rows = [row_label(table, i) for i in range(len(table.rows))]
    words = [
        [singular(w) for w in _LETTERS.findall(fold(label))] for label in [table.title, *table.columns, *rows]
    ]
    firsts = {w[0] for w in words if len(w) and len(w[0]) >= 3}
    lasts = {w[-1] for w in words if len(w) and len(w[-1]) >= 3}
    firsts |= {label.strip() for label in rows if len(label.strip()) == 1 and label.strip().isupper()}
    raw = _LETTERS.findall(question)
    sequence = [fold(w) for w in raw]
    out = []
    for word in question_content_words(question, key_terms(question)):
        for i in (i for i, w in enumerate(sequence) if w == word):
            # a bar named by a letter ("categories A to I" over rows "A" ... "I") keeps its case
            after = (
                "" if i + 1 >= len(raw) else raw[i + 1] if len(raw[i + 1]) == 1 else singular(sequence[i + 1])
            )
            before = singular(sequence[i - 1]) if i > 0 else ""
            if after in firsts or before in lasts:
                out.append(word)
                break
    return out


_LETTERS = re.compile(r"[^\W\d_]+", re.UNICODE)
_SMALL_NUMBERS_JOINED = re.compile(r"(\d{1,2})\s*/\s*(\d{1,2})")


def _compound_of_small_numbers(key: str) -> bool:
    """A key term of two small numbers joined by "/" that no day and month make ("17/18",
    "15/16"): a season or an edition whose parts are each too short to address a label
    alone, so only the whole, written so on the page, says the table is about it ("01/06"
    is a date, met by its value)."""
    m = _SMALL_NUMBERS_JOINED.fullmatch(key.strip())
    return bool(m) and not (1 <= int(m[1]) <= 31 and 1 <= int(m[2]) <= 12)


def names_table(question: str) -> bool:
    """Whether the question says its answer is in a table ("pela tabela de doses da OMS")."""
    return not TABLE_WORDS.isdisjoint(_WORD_PARTS.findall(fold(question)))


def asks_extreme(question: str) -> bool:
    """Whether the question asks for the largest or smallest of something ("which region
    had the largest area", "qual estado teve o menor gasto"): a superlative in lower case
    ("Recife Mais Verde" is a name), not a comparison ("mais de 30%")."""
    lowered = " ".join(w for w in _WORD_PARTS.findall(question) if not w[:1].isupper())
    words = set(_WORD_PARTS.findall(_COMPARISON.sub(" ", superlatives_named(fold(lowered)))))
    return bool(words & (_ARGMAX | _ARGMIN))


# what a question asks a table with, not about: its operations ("maior", "total geral")
_OPERATION_WORDS = (
    _ARGMAX | _ARGMIN | _EARLIEST | _LATEST | _TOTAL_ASKED | frozenset("geral general grand overall".split())
)


def letter_tokens(text: str) -> frozenset[str]:
    """The things `text` names by a letter ("Product C" -> "letter:c"; ingest/values.py)."""
    return frozenset(t for t in split_tokens(text)[0] if t.startswith("letter:"))


def names_another_letter(asked: frozenset[str], title: str) -> bool:
    """Whether a table's title names things by letters ("Product B Monthly Revenue") and
    none of those the question names (`asked`, its `letter_tokens`: "Product C"): the
    table of a sibling, not the one asked about, however well its labels fit."""
    if not asked:
        return False
    own = letter_tokens(title)
    return bool(own and not asked & own)


def about_another_page(question: str, table: EvidenceTable, pages: Sequence[PageEvidence]) -> bool:
    """Whether the question asks about something this table's page does not hold and a page
    of another document does, one that holds at least half of the question's content words
    too ("soja" asked of the maize table, a soy bulletin in the evidence): not answered from
    this table. A word some unrelated page happens to hold ("anterior") is not such a subject;
    words on no evidence page are the gate's to refuse (its absent words; `unaddressed`), and a
    word that only qualifies a label of this table ("categories A to I") is no other subject."""
    qualifiers = qualifier_words(question, table)
    missing = [w for w in unaddressed_words(question, table) if w not in qualifiers]
    if not missing:
        return False
    words = [w for w in question_content_words(question, key_terms(question)) if w not in _OPERATION_WORDS]
    # other documents' pages: the same document's other pages are its context (the header
    # of a table continued from the page before), not another subject
    for page in (p for p in pages if p.doc_id != table.page.doc_id):
        index = word_index("\n".join([page.title, *(c.text for c in page.chunks)]))
        if all(index.contains(w) for w in missing) and 2 * sum(index.contains(w) for w in words) >= len(
            words
        ):
            return True
    return False


def _page_text(table: EvidenceTable) -> str:
    cells = " ".join(c.text for row in table.rows for c in row)
    return "\n".join([table.title, table.page.title, table.page_text, *table.columns, cells])


def unaddressed_words(question: str, table: EvidenceTable) -> list[str]:
    """The question's content words (service/answer/content_words.py) that neither the table
    (title, labels, cells) nor its page (other text, document title) holds: "soja" asked of
    the maize table. Any such word means the table is about something else. A table in
    another language than the question is read through the glossary: a word the glossary
    cannot translate ("antecedentes" over "Background Checks") says nothing either way."""
    text = _page_text(table)
    words = [w for w in question_content_words(question, key_terms(question)) if w not in _OPERATION_WORDS]
    if not words:
        return []
    index = word_index(text)
    # a short header word abbreviates a longer question word: "DEP." departure, "CAT." category
    short = {w for w in re.findall(r"[a-z]+", fold(text)) if 3 <= len(w) <= 4}
    missing = [
        w
        for w in words
        if not index.contains(w) and not (len(w) >= 6 and any(w.startswith(a) for a in short))
    ]
    if missing and question_language(text) != question_language(question):
        # "capita" is written so in any language: its absence says the table lacks it
        missing = [w for w in missing if len(translations(w)) > 1 or w in WRITTEN_ALIKE]
    return missing


def later_asks(question: str) -> set[str]:
    """The tokens of what a question in parts asks after its first part, less the first
    part's own: "Qual a autuação mais recente e qual o valor da multa?" -> valor, multa;
    "... the largest p value, and what is it?" -> none (service/query/decompose.py)."""
    parts = decompose(question)
    if len(parts) < 2:
        return set()
    return set().union(*(question_tokens(p) for p in parts[1:])) - question_tokens(parts[0])


def _marks_rows(table: EvidenceTable, j: int, rows: Sequence[int]) -> bool:
    """Whether column `j` marks some of the rows and leaves the others blank."""
    cells = [table.rows[i][j] for i in rows]
    filled = [c for c in cells if not c.empty]
    return 0 < len(filled) < len(cells) and all(_MARK.match(c.text.strip()) for c in filled)


def _column_dates(table: EvidenceTable, j: int, rows: Sequence[int]) -> dict[int, tuple[int, int, int]]:
    """The column's cells as (year, month, day) by row, when it is a date column: two rows
    or more, and every filled cell a date with its month."""
    out = {}
    for i in rows:
        cell = table.rows[i][j]
        if cell.empty:
            continue
        date = parse_date(cell.text)
        if date is None:
            return {}
        out[i] = (date.year, date.month, date.day or 0)
    return out if len(out) >= 2 else {}


def _entities(table: EvidenceTable, over_rows: bool) -> list[int]:
    """The rows (or value columns) an aggregate runs over: no totals, no section headings."""
    if over_rows:
        return [
            i
            for i, r in enumerate(table.rows)
            if i not in table.total_rows
            and sum(not c.empty for c in r) >= 2
            and not _HIGHEST_LABEL.match(fold(row_label(table, i)))
            and not _LOWEST_LABEL.match(fold(row_label(table, i)))
            and not _ENDS_LABEL.match(fold(row_label(table, i)))
        ]
    return [
        j for j in range(len(table.columns)) if j not in table.label_columns and j not in table.total_columns
    ]


@dataclass
class NamedRows:
    """The rows a question's names select, the cells that name them and what they address."""

    rows: set[int]
    cells: list[tuple[int, int]]
    addressed: set[str]


def rows_named(question: str, table: EvidenceTable) -> NamedRows | None:
    """The rows with a text cell the question names: a whole cell the question writes, with
    one of its names in it ("MANACAPURU", "JOAO SILVA"), held by some rows, not by all:
    "AMAZONAS" in every row is the table's context; "Ibama" inside a sanction's text names
    no row. Several such names select the rows holding each. None when no name selects any."""
    if not table.complete or not table.rows:
        return None
    names = {t.text for t in question_key_terms(question) if t.name}
    if not names:
        return None
    asked = f" {_spaced_words(question)} "
    by_text: dict[str, list[tuple[int, int]]] = {}
    for i, row in enumerate(table.rows):
        for j, cell in enumerate(row):
            text = _spaced_words(cell.text)
            if cell.number is None and text and f" {text} " in asked and names & set(text.split()):
                by_text.setdefault(text, []).append((i, j))
    rows: set[int] | None = None
    cells: list[tuple[int, int]] = []
    for hits in by_text.values():
        held = {i for i, _ in hits}
        if len(held) == len(table.rows):
            continue  # the table's context: what the rows are all of
        rows = held if rows is None else rows & held
        cells += hits
    if not rows:
        return None
    chosen = sorted({(i, j) for i, j in cells if i in rows})
    addressed = set().union(
        *(tokens(t) for t in by_text), *(tokens(table.rows[i][j].text) for i, j in chosen)
    )
    return NamedRows(rows, chosen, addressed)


def _spaced_words(text: str) -> str:
    """Folded words joined by single spaces, dashes and punctuation as spaces ("Tefé-AM" -> "tefe am")."""
    return " ".join(re.findall(r"\w+", _SPACED.sub(" ", fold(text))))


def _marks_no_value(cell: Cell) -> bool:
    """Whether a cell is written as "no value" ("-", "n/a", ".."), not left blank (a blank
    may be where the table's columns were cut apart)."""
    return bool(cell.text.strip()) and cell.empty


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


_PERCENT_VALUE = re.compile(r"\d\s?%")


def unit_of(*labels: str) -> str:
    """The unit the labels give, first found: "(ha)" -> "ha", "(Per cent)" -> "%", "% DEP." -> "%"."""
    for label in labels:
        for group in _UNIT_GROUP.findall(label):
            folded = fold(group).strip()
            if folded in _PERCENT:
                return "%"
            if _UNIT.fullmatch(folded):
                return group.strip()
        outside = _UNIT_GROUP.sub("", label)
        if "%" in outside and not _PERCENT_VALUE.search(outside):  # "% DEP.", not "93% (87–97)"
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


# A currency with a scale, as headers write it: "($M)", "(US$ mn)", "(R$ mil)", "(€ bn)".
_MONEY_UNIT = re.compile(
    r"(US\$|R\$|\$|€|£)\s*(m|mm|mn|million|millions|bn|b|billion|k|thousand|mil|mi|bi)?", re.I
)
_MONEY_SCALE = {
    "m": "million", "mm": "million", "mn": "million", "million": "million", "millions": "million",
    "bn": "billion", "b": "billion", "billion": "billion", "k": "thousand", "thousand": "thousand",
    "mil": "mil", "mi": "milhões", "bi": "bilhões",
}  # fmt: skip


def with_unit(text: str, unit: str) -> str:
    if not unit or "%" in text or fold(unit) in fold(text):
        return text
    if unit == "%":
        return f"{text}%"
    if money := _MONEY_UNIT.fullmatch(unit.strip()):  # "($M)" 9.8 -> "$9.8 million"
        scale = _MONEY_SCALE.get((money[2] or "").lower(), "")
        return (
            f"{money[1]}{text} {scale}".rstrip() if money[1] == "$" else f"{money[1]} {text} {scale}".rstrip()
        )
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
                if language in ("pt", "fr")
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


def compose(language: str, table: EvidenceTable, found: _Found) -> TableAnswer:
    """The one sentence (the question's language) and its citations: each cell's bbox, so
    the page viewer highlights the cell; the quote is the cell with its row and column labels."""
    language = language if language in LEAD else "en"
    page = table.page
    text = _sentence(language, table, found)
    citations = _citations(table, found)
    if found.also is not None:  # the other extreme, in a sentence of its own
        other = _sentence(language, table, found.also, lead=False)
        text = f"{text}; {other}"
        citations += _citations(table, found.also)
    return TableAnswer(
        f"{text} {cite_label(page.doc_id, page.page_no)}.",
        citations,
        found.operation,
        round(found.score, 4),
    )


def _sentence(language: str, table: EvidenceTable, found: _Found, lead: bool = True) -> str:
    """The answer's sentence without its marker: a template by operation, filled with labels
    (after the lead naming the table, unless `lead` is False: a second sentence about it)."""
    title = " ".join(table.title.split())
    if not lead:
        lead_text = ""
    elif title:
        lead_text = LEAD[language].format(title=_safe(title[:100]))
    else:
        lead_text = LEAD_UNTITLED[language]
    r, c = found.cells[0]
    unit = unit_of(table.columns[c], row_label(table, r), title) or table_unit(table)
    if found.operation == "count_where" and found.condition is not None:
        return _count_sentence(language, table, found, lead_text, unit)
    if found.operation == "count_marked":
        names = [_safe(display(row_name(table, i))) for i, _ in found.cells[:MAX_NAMES_LISTED]]
        return TEMPLATES["count_marked"][language].format(
            lead=lead_text,
            value=found.value,
            n=found.counted_over,
            line=_safe(display(found.line)),
            names=_join(names, language),
        )
    if found.operation == "no_value":
        return TEMPLATES["no_value"][language].format(
            lead=lead_text,
            entity=_safe(display(row_name(table, r))),
            measure=_safe(display(table.columns[c])),
            value=_safe(table.rows[r][c].text),
        )
    value = _safe(with_unit(found.value or table.rows[r][c].text, unit))
    fill = {"lead": lead_text, "value": value}
    if found.operation == "first_where" and found.condition is not None:
        return TEMPLATES["first_where"][language].format(
            **fill,
            line=_safe(display(found.line)),
            condition=_condition_words(language, found.condition, unit),
            entity=_safe(display(row_name(table, r))),
        )
    if found.operation == "lookup" and len(found.cells) > 1 and len({i for i, _ in found.cells}) == 1:
        # two columns of one row: each value with its column
        pairs = [
            f"{display(table.columns[j])}: {with_unit(table.rows[i][j].text, unit_of(table.columns[j]))}"
            for i, j in found.cells
        ]
        return TEMPLATES["lookup_columns"][language].format(
            lead=lead_text, entity=_safe(display(row_name(table, r))), pairs=_safe("; ".join(pairs))
        )
    if found.operation == "lookup" and len({table.rows[i][j].text for i, j in found.cells}) > 1:
        # rows named together: each value with its row
        values = [_safe(with_unit(table.rows[i][j].text, unit)) for i, j in found.cells]
        names = [_safe(display(row_name(table, i))) for i, _ in found.cells]
        pairs = [f"{v} {FOR[language]} {n}" for v, n in zip(values, names, strict=True)]
        measure = _safe(display(table.columns[c]))
        return TEMPLATES["lookup_rows"][language].format(
            lead=lead_text, measure=measure, pairs=_join(pairs, language)
        )
    if found.operation == "lookup" and found.row_text == table.rows[r][c].text:
        # the cell names its own row (_cell_holding): the value with its column alone
        measure = _safe(display(table.columns[c]))
        return TEMPLATES["lookup_rows"][language].format(lead=lead_text, measure=measure, pairs=value)
    if found.operation == "lookup":
        row, column = display(found.row_text or row_name(table, r)), display(table.columns[c])
        row_time, column_time = time_text(row_name(table, r), language), time_text(table.columns[c], language)
        if (row_time is None) != (column_time is None):
            time, entity = (row_time, column) if row_time else (column_time, row)
            return TEMPLATES["lookup_time"][language].format(
                **fill, entity=_safe(entity), time=_safe(time or "")
            )
        # the label that carries the unit names the measure ("Área 16/17 (ha)"), the other the entity
        row_is_measure = bool(unit_of(row_label(table, r))) and not unit_of(table.columns[c])
        measure, entity = (row, column) if row_is_measure else (column, row)
        return TEMPLATES["lookup"][language].format(**fill, measure=_safe(measure), entity=_safe(entity))
    line = _safe(display(found.line))
    if found.operation in ("earliest", "latest"):
        names = [display(row_name(table, i, found.name_column)) for i, _ in found.cells]
        sentence = TEMPLATES[found.operation][language].format(
            **fill, line=line, entities=_safe(_join(names, language))
        )
        return sentence + _details(table, found)
    if found.operation in ("argmax", "argmin"):
        names = [
            display(row_name(table, i, found.name_column) if found.line_is_column else table.columns[j])
            for i, j in found.cells
        ]
        time = time_text(found.line, language)
        of, in_ = TIME_PREPOSITION[language]
        sentence = TEMPLATES[found.operation][language].format(
            **fill,
            entities=_safe(_join(names, language)),
            verb="tiveram" if len(names) > 1 else "teve",
            verb_fr="ont" if len(names) > 1 else "a",
            of_line=f"{in_} {_safe(time)}" if time else f"{of} {line}",
        )
        others = [
            f"{display(row_name(table, i, found.name_column))}: {with_unit(table.rows[i][j].text, unit)}"
            for i, j in found.compared
        ]
        sentence = f"{sentence} ({_safe('; '.join(others))})" if others else sentence
        return sentence + _details(table, found)
    if found.operation == "total":
        return TEMPLATES["total"][language].format(**fill, line=line, total=_safe(display(found.total_label)))
    if found.operation == "count":
        return TEMPLATES["count"][language].format(**fill, line=line, name=_safe(found.row_text))
    if found.row_text:
        return TEMPLATES["sum_named"][language].format(
            **fill, line=line, n=len(found.cells), name=_safe(found.row_text)
        )
    return TEMPLATES["sum"][language].format(**fill, line=line, n=len(found.cells))


def _details(table: EvidenceTable, found: _Found) -> str:
    """The chosen row's other asked cells (_row_details), "; Valor Multa: 10.500,00"."""
    parts = [
        f"{display(table.columns[c])}: {with_unit(table.rows[r][c].text, unit_of(table.columns[c]))}"
        for r, c in found.details
    ]
    return f"; {_safe('; '.join(parts))}" if parts else ""


def _count_sentence(language: str, table: EvidenceTable, found: _Found, lead: str, unit: str) -> str:
    """ "7 of its 56 rows have Permit equal to 0: Guam, ..." (the rows, or columns, counted)."""
    assert found.condition is not None
    words = _condition_words(language, found.condition, unit)
    names = []
    if found.value != "0":
        names = [
            display(row_name(table, i) if found.line_is_column else table.columns[j]) for i, j in found.cells
        ]
    if names and found.condition.comparison != "eq":  # "above 90%": each one's own value
        short = unit if " " not in unit else ""  # "%", "ha", not "(Rs. in 000)" in the brackets
        values = [with_unit(table.rows[i][j].text, short) for i, j in found.cells]
        names = [f"{n} ({v})" for n, v in zip(names, values, strict=True)]
    listed = _join([_safe(n) for n in names[:MAX_NAMES_LISTED]], language) if names else ""
    more = len(names) - MAX_NAMES_LISTED
    if more > 0:
        listed += f" (+{more})"
    return TEMPLATES["count_where"][language].format(
        lead=lead,
        value=found.value,
        n=found.counted_over,
        items=COUNTED_ITEMS[language][found.line_is_column],
        line=_safe(display(found.line)),
        condition=words,
        names=f": {listed}" if listed else "",
    )


def _condition_words(language: str, condition: Condition, unit: str) -> str:
    """ "above 50%", "acima de 50%": the condition as the answer writes it."""
    value = condition.threshold
    if value.is_integer():  # "40,000,000", not "4e+07"
        written = number(value, "en" if language == "en" else "pt")
    else:  # "0.145"; "0,145" in Portuguese and French
        written = f"{value:g}" if language == "en" else f"{value:g}".replace(".", ",")
    threshold = _safe(with_unit(written, "%" if condition.percent else unit))
    return f"{CONDITION_WORDS[language][condition.comparison]} {threshold}"


def _citations(table: EvidenceTable, found: _Found) -> list[Citation]:
    """One citation per cell read (a sum: one, its box around the column's cells)."""
    page = table.page
    if (found.operation == "sum" and not found.row_text) or (
        found.operation == "count_where" and found.value == "0"
    ):
        cells = [table.rows[r][c] for r, c in found.cells]
        box = _union([cell.bbox for cell in cells]) or list(cells[0].chunk.bbox)
        quote = f"{display(found.line)}: " + ", ".join(cell.text for cell in cells)
        return [Citation(page.doc_id, page.page_no, page.title, box, _safe(quote[:400]))]
    citations = []
    for r, c in [*found.cells[:MAX_NAMES_LISTED], *found.compared, *found.details]:
        cell = table.rows[r][c]
        quote = _safe(f"{display(row_name(table, r))} · {display(table.columns[c])}: {cell.text}")
        citations.append(
            Citation(page.doc_id, page.page_no, page.title, cell.bbox or list(cell.chunk.bbox), quote)
        )
    return citations


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
