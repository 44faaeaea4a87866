"""One sentence, in the question's language, that states an analytical result
("Há 6 farmácias em Helsinki.", "A escola com maior IDEB é Escola Municipal Asa Branca
(6,1)."), with singular and plural right ("1 restaurante", "2 restaurantes")."""

from __future__ import annotations

from typing import Any

from graph.analytics import AnalyticResult
from graph.categories import LABELS

MAX_LISTED = 10

# singular labels where dropping the plural ending would be wrong
_SINGULAR: dict[str, tuple[str, str]] = {
    "pharmacy": ("pharmacy", "farmácia"),
    "hospital": ("hospital", "hospital"),
    "library": ("library", "biblioteca"),
    "university": ("university", "universidade"),
    "bench": ("bench", "banco de praça"),
    "bus_station": ("bus station", "terminal de ônibus"),
    "hotel": ("hotel", "hotel"),
    "toilets": ("public toilet", "banheiro público"),
    "bar": ("bar", "bar"),
    "embassy": ("embassy", "embaixada"),
    "post_box": ("post box", "caixa de correio"),
    "water_point": ("water point", "ponto de água"),
    "recycling": ("recycling point", "ponto de reciclagem"),
    "restaurant": ("restaurant", "restaurante"),
    "museum": ("museum", "museu"),
    "clinic": ("clinic", "clínica"),
    "school": ("school", "escola"),
}


DATASET_LABEL = "\0dataset"  # the target is a whole dataset: its rows are "features"


def label(key: str, language: str, n: float | int = 2) -> str:
    """The category's name, singular for 1 and plural otherwise, in `language`."""
    pt = language == "pt"
    if key == DATASET_LABEL:
        return ("feição" if pt else "feature") if n == 1 else ("feições" if pt else "features")
    if round(n) == 1 and n == 1:
        if key in _SINGULAR:
            return _SINGULAR[key][1 if pt else 0]
        plural = LABELS.get(key, (key.replace("_", " "),) * 2)[1 if pt else 0]
        return plural[:-1] if plural.endswith("s") and not plural.endswith("ss") else plural
    if key in LABELS:
        return LABELS[key][1 if pt else 0]
    words = key.replace("_", " ")
    return words if words.endswith("s") else f"{words}s"


def number(value: float | int | None, language: str) -> str:
    """12345.5 -> "12,345.5" (en) / "12.345,5" (pt); integers without decimals."""
    if value is None:
        return "-"
    text = f"{int(value):,}" if float(value).is_integer() else f"{value:,.2f}".rstrip("0").rstrip(".")
    if language == "pt":
        text = text.replace(",", "\0").replace(".", ",").replace("\0", ".")
    return text


def _where(result: AnalyticResult, language: str) -> str:
    """ " com IDEB > 5 em Boa Viagem" / " with IDEB > 5 in Boa Viagem"."""
    pt = language == "pt"
    conds = " e ".join if pt else " and ".join
    filters = conds(
        f"{f.attribute} {f.op} {number(f.value, language) if isinstance(f.value, float) else f.value}"
        for f in result.plan.filters
    )
    text = f" {'com' if pt else 'with'} {filters}" if filters else ""
    area = result.plan.area
    if area.name and area.kind == "circle" and area.radius_m:
        metres = number(round(area.radius_m), language)
        text += f" {'a até' if pt else 'within'} {metres} m {'de' if pt else 'of'} {area.name}"
    elif area.name and area.kind == "polygon" and area.radius_m:
        text += f" {'perto de' if pt else 'near'} {area.name}"
    elif area.name:
        text += f" {'em' if pt else 'in'} {area.name}"
    return text


def _listed(rows: list[dict[str, Any]], language: str, with_value: bool) -> str:
    names = [
        f"{r['name']} ({number(r['value'], language)})"
        if with_value and r.get("value") is not None
        else str(r["name"])
        for r in rows[:MAX_LISTED]
    ]
    more = len(rows) - len(names)
    tail = (f" e mais {more}" if language == "pt" else f" and {more} more") if more > 0 else ""
    return "; ".join(names) + tail


def answer_sentence(result: AnalyticResult, language: str) -> str:
    pt = language == "pt"
    plan = result.plan
    what = (
        DATASET_LABEL
        if plan.target.dataset and not plan.target.category
        else result.target_label or "feature"
    )
    if result.unknown is not None:
        return _unknown(result, language)
    where = _where(result, language)
    op = plan.operation
    attr = plan.attribute or ""
    if plan.target.dataset and not plan.target.category and result.target_label:
        where = f" ({result.target_label}){where}"
    if op in ("count", "list", "filter"):
        n = int(result.value or 0)
        head = (
            f"Há {n} {label(what, language, n)}{where}."
            if pt
            else f"There {'is' if n == 1 else 'are'} {n} {label(what, language, n)}{where}."
        )
        if n == 0 and pt:
            head = f"Nenhum(a) {label(what, language, 1)}{where} nos dados carregados."
        elif n == 0:
            head = f"No {label(what, language, 1)}{where} in the loaded data."
        if op != "count" and result.rows:
            head += " " + _listed(result.rows, language, bool(attr)) + "."
        return head
    if op in ("argmax", "argmin", "max", "min"):
        if result.value is None:
            return f"Nenhum valor de {attr} nos dados." if pt else f"No value of {attr} in the data."
        names = "; ".join(r["name"] for r in result.rows[:MAX_LISTED])
        v = number(result.value, language)
        high = op in ("argmax", "max")
        one = label(what, language, 1)
        if pt:
            article = "A" if one.endswith("a") else "O"
            return f"{article} {one} com {'maior' if high else 'menor'} {attr}{where} é {names} ({v})."
        return f"The {one} with the {'highest' if high else 'lowest'} {attr}{where} is {names} ({v})."
    if op in ("sum", "avg"):
        v = number(result.value, language)
        n = result.total
        if op == "sum":
            return (
                f"O total de {attr}{where} é {v} ({n} {label(what, language, n)})."
                if pt
                else f"The total {attr}{where} is {v} ({n} {label(what, language, n)})."
            )
        return (
            f"A média de {attr}{where} é {v} ({n} {label(what, language, n)})."
            if pt
            else f"The average {attr}{where} is {v} ({n} {label(what, language, n)})."
        )
    if op == "group_by":
        counted = attr or label(what, language)
        by = plan.group_by or ""
        by = "zona" if pt and by == "h3" else "zone" if by == "h3" else by
        if by.startswith("layer:"):
            by = result.group_label or ("polígono" if pt else "polygon")
        parts = [
            f"{r['name']}: {number(r['value'], language)}"
            + ("" if attr else f" {label(what, language, r['value'] or 0)}")
            for r in result.rows[:MAX_LISTED]
        ]
        more = len(result.rows) - len(parts)
        tail = (f"; e mais {more}" if pt else f"; and {more} more") if more > 0 else ""
        head = (
            f"{counted[:1].upper()}{counted[1:]} por {by}{where}: "
            if pt
            else f"{counted[:1].upper()}{counted[1:]} by {by}{where}: "
        )
        return head + "; ".join(parts) + tail + "."
    if op == "nearest":
        if not result.rows:
            return (
                "Nenhum ponto de referência encontrado na pergunta."
                if pt
                else "No reference point found in the question."
            )
        first = plan.references[0] if plan.references else None
        ref = first.name if first and first.name else f"{first.lat}, {first.lon}" if first else "?"
        listed = "; ".join(f"{r['name']} ({number(round(r['value']), language)} m)" for r in result.rows)
        one = label(what, language, len(result.rows))
        if pt:
            fem = label(what, language, 1).endswith("a")
            ending = ("a" if fem else "o") + ("s" if len(result.rows) > 1 else "")
            return f"{one.capitalize()} mais próxim{ending} de {ref}: {listed}."
        return f"The nearest {one} to {ref}: {listed}."
    if op == "distance":
        if result.value is None or len(result.rows) < 2:
            return (
                "São precisos dois lugares para uma distância."
                if pt
                else "Two places are needed for a distance."
            )
        a, b = result.rows[0]["name"], result.rows[1]["name"]
        d = number(round(result.value), language)
        return (
            f"A distância entre {a} e {b} é de {d} m (em linha reta)."
            if pt
            else f"The distance between {a} and {b} is {d} m (straight line)."
        )
    return ""


def _unknown(result: AnalyticResult, language: str) -> str:
    pt = language == "pt"
    unknown = result.unknown or {}
    available = ", ".join(unknown.get("available") or []) or ("nenhum" if pt else "none")
    name = unknown.get("name")
    if unknown.get("kind") == "attribute":
        if by := unknown.get("by_dataset"):  # "of recife_escolas_municipais.geojson: ID, IDEB, RPA"
            of = "de" if pt else "of"
            available = "; ".join(f"{of} {ds}: {', '.join(attrs)}" for ds, attrs in by.items())
        else:
            available = f"{'disponíveis' if pt else 'available'}: {available}"
        if name:
            return (
                f"Os dados não têm o atributo {name}; atributos numéricos {available}."
                if pt
                else f"The data has no attribute {name}; numeric attributes {available}."
            )
        return (
            f"A pergunta não nomeia um atributo dos dados; atributos numéricos {available}."
            if pt
            else f"The question names no attribute of the data; numeric attributes {available}."
        )
    if name:
        return (
            f"Os dados carregados não têm {label(name, language)}; categorias disponíveis: {available}."
            if pt
            else f"The loaded data has no {label(name, language)}; categories available: {available}."
        )
    return f"Categorias disponíveis: {available}." if pt else f"Categories available: {available}."
