"""A word-for-word query translation between Portuguese and English, offline, from a small
glossary of the words reports ask about (money, time, quantities, environment, health,
administration). The lite text encoder is English-only and BM25 matches words, so a
Portuguese question over an English report (or the reverse) finds little; the planner
(service/query/planner.py) searches the translated question as one more step. Names, codes
and numbers pass through unchanged; words the glossary lacks are dropped when they are
function words and kept otherwise. With an LLM configured, the router's sub-questions can
be in any wording; this is the offline fallback, not a translator.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from geo.country_names import country_code, country_names
from geo.folding import fold
from service.query.dictionary import MAX_WORDS, english_of, is_english, lemmas

# folded Portuguese word -> English words
PT_EN: dict[str, str] = {
    "receita": "revenue",
    "receitas": "revenue",
    "faturamento": "revenue",
    "lucro": "profit",
    "margem": "margin",
    "operacional": "operating",
    "caixa": "cash",
    "divida": "debt",
    "custo": "cost",
    "custos": "costs",
    "gasto": "expenditure outlay",
    "gastos": "expenditure outlay",
    "orcamento": "budget",
    "investimento": "investment",
    "total": "total",
    "trimestre": "quarter",
    "trimestral": "quarterly",
    "anual": "annual",
    "ano": "year",
    "anos": "years",
    "mes": "month",
    "meses": "months",
    # an author's or a study's background ("mestrado em Ciência da Computação")
    "ciencia": "science",
    "ciencias": "sciences science",
    "computacao": "computer computing computation",
    "engenharia": "engineering",
    "mestrado": "master masters",
    "doutorado": "doctorate phd",
    "universidade": "university",
    "instituicao": "institution",
    "autor": "author",
    "autores": "authors",
    # the words of a chart question ("no gráfico de pizza", "barras empilhadas")
    "grafico": "chart",
    "graficos": "charts",
    "pizza": "pie",
    "fatia": "slice",
    "fatias": "slices",
    "barras": "bars",
    "empilhadas": "stacked",
    "agrupadas": "grouped",
    "dia": "day",
    "periodo": "period",
    "janeiro": "january",
    "fevereiro": "february",
    "marco": "march",
    "abril": "april",
    "maio": "may",
    "junho": "june",
    "julho": "july",
    "agosto": "august",
    "setembro": "september",
    "outubro": "october",
    "novembro": "november",
    "dezembro": "december",
    "clientes": "customers",
    "cliente": "customer",
    "contas": "accounts",
    "ativas": "active",
    "ativos": "active",
    "produto": "product",
    "produtos": "products",
    "linha": "line",
    "regiao": "region",
    "regioes": "regions",
    "crescimento": "growth",
    "cresceu": "grew",
    "pico": "peak",
    "churn": "churn",
    "mensal": "monthly",
    "prevista": "expected guidance",
    "previsto": "expected guidance",
    "faixa": "range",
    "empresa": "company",
    "funcionarios": "employees",
    "populacao": "population",
    "populacional": "population",
    "decenal": "decadal",
    "taxa": "rate",
    "chuva": "rainfall rain",
    "chuvas": "rainfall rain",
    "precipitacao": "rainfall precipitation rain",
    "real": "actual",
    "normal": "normal",
    "desvio": "departure",
    "percentual": "percentage",
    "estado": "state",
    "estados": "states",
    "saude": "health",
    "publica": "public",
    "publico": "public",
    "mortes": "deaths",
    "infeccao": "infection",
    "infeccoes": "infections",
    "novas": "new",
    "criancas": "children",
    "adolescentes": "adolescents",
    "cronica": "chronic",
    "diretrizes": "guidelines",
    "tratamento": "treatment",
    "potencia": "power capacity",
    "capacidade": "capacity",
    "instalada": "installed",
    "solar": "solar",
    "fotovoltaica": "photovoltaic solar",
    "conectou": "connected",
    "registro": "record",
    "perdido": "lost",
    "padrao": "default",
    "variavel": "variable",
    "global": "global",
    "tipo": "type",
    "dados": "data",
    "numero": "number",
    "formulario": "form",
    "agua": "water",
    "qualidade": "quality",
    "estacao": "station",
    "estacoes": "stations",
    "rio": "river",
    "praia": "beach",
    "bairro": "neighbourhood",
    "alagamento": "flooding",
    "alagamentos": "flooding",
    "pontos": "points",
    "canais": "canals",
    "canal": "canal",
    "contrato": "contract",
    "relatorio": "report",
    "nota": "note",
    "tecnica": "technical",
    "mudas": "seedlings",
    "trabalhadores": "workers",
    "volume": "volume",
    "removido": "removed",
    "maior": "largest highest",
    "menor": "lowest smallest",
    "primeiro": "first",
    "segundo": "second",
    "terceiro": "third",
    "quarto": "fourth",
    # organisations named by another acronym in Portuguese (the gate's aliases, gate.py)
    "oms": "WHO",
    "onu": "UN",
    "ue": "EU",
    "ocde": "OECD",
    "fmi": "IMF",
    "pib": "GDP",
}
# folded French word -> English words: the words reports ask about (a French question over an
# English report: the lite text model reads English only). No word an English question writes
# ("an", "mars"), since the table answerer reads these too.
FR_EN: dict[str, str] = {
    "pluie": "rainfall rain",
    "pluies": "rainfall",
    "precipitation": "rainfall precipitation",
    "precipitations": "rainfall precipitation",
    "journaliere": "daily day",
    "journalier": "daily day",
    "quotidienne": "daily",
    "jour": "day",
    "jours": "days",
    "mois": "month",
    "annee": "year",
    "annees": "years",
    "ans": "years",
    "semaine": "week",
    "normale": "normal",
    "normal": "normal",
    "ecart": "departure deviation",
    "ecartee": "departure deviation",
    "reelle": "actual",
    "reel": "actual",
    "taux": "rate",
    "croissance": "growth",
    "population": "population",
    "decennale": "decadal",
    "etat": "state",
    "etats": "states",
    "region": "region",
    "regions": "regions",
    "pays": "country",
    "ville": "city",
    "total": "total",
    "totale": "total",
    "nombre": "number",
    "montant": "amount",
    "valeur": "value",
    "cout": "cost",
    "couts": "costs",
    "depenses": "expenditure outlay",
    "depense": "expenditure outlay",
    "budget": "budget",
    "sante": "health",
    "publique": "public",
    "public": "public",
    "recettes": "revenue",
    "chiffre": "revenue",
    "benefice": "profit",
    "clients": "customers",
    "produit": "product",
    "produits": "products",
    "mensuel": "monthly",
    "mensuelle": "monthly",
    "annuel": "annual",
    "annuelle": "annual",
    "trimestre": "quarter",
    "acier": "steel",
    "inoxydable": "stainless",
    "inhibiteur": "inhibitor",
    "coquille": "shell",
    "oeuf": "egg",
    "oeufs": "egg",
    "resistance": "resistance",
    "polarisation": "polarization",
    "corrosion": "corrosion",
    "vitesse": "rate speed",
    "concentration": "concentration",
    "donnees": "data",
    "tableau": "table",
    "modele": "model",
    "modeles": "models",
    "score": "score",
    "temps": "time",
    "couches": "layers",
    "couche": "layer",
    "enfants": "children",
    "adolescents": "adolescents",
    "adultes": "adults",
    "traitement": "treatment",
    "dose": "dose",
    "poids": "weight",
    "semaines": "weeks",
    "infection": "infection",
    "infections": "infections",
    "chronique": "chronic",
    "deces": "deaths",
    "morts": "deaths",
    "nouvelles": "new",
    "nouveaux": "new",
    "lignes": "guidelines",
    "directrices": "guidelines",
    "recommandations": "recommendations",
    "verifications": "checks",
    "controles": "checks",
    "armes": "firearm guns",
    "permis": "permit",
    "licence": "permit",
    "puissance": "capacity power",
    "capacite": "capacity",
    "installee": "installed",
    "installees": "installed",
    "raccordee": "connected",
    "raccordees": "connected",
    "raccorde": "connected",
    "raccordes": "connected",
    "raccordement": "connection grid",
    "metropolitain": "mainland metropolitan",
    "metropolitaine": "mainland metropolitan",
    "progresse": "grows increases",
    "hausse": "increase rise",
    "baisse": "decrease fall",
    "solaire": "solar",
    "photovoltaique": "photovoltaic solar",
    "eau": "water",
    "qualite": "quality",
    "plage": "beach",
    "plages": "beaches",
    "carte": "map",
    "cartes": "maps",
    "graphique": "chart",
    "graphiques": "charts",
    "camembert": "pie",
    "barres": "bars",
    "empilees": "stacked",
    "groupees": "grouped",
    "image": "image",
    "satellite": "satellite",
    "altitude": "elevation altitude",
    "elevation": "elevation",
    "pixel": "pixel",
    "taille": "size",
    "employes": "employees",
    "salaire": "salary",
    "numero": "number",
    "identifiant": "identifier",
    "maximale": "maximum highest",
    "maximal": "maximum highest",
    "maximum": "maximum highest",
    "minimale": "minimum lowest",
    "minimum": "minimum lowest",
    "premier": "first",
    "premiere": "first",
    "dernier": "last",
    "janvier": "january",
    "fevrier": "february",
    "avril": "april",
    "mai": "may",
    "juin": "june",
    "juillet": "july",
    "aout": "august",
    "septembre": "september",
    "octobre": "october",
    "novembre": "november",
    "decembre": "december",
    "oms": "WHO",
    "onu": "UN",
    "ue": "EU",
    "ocde": "OECD",
    "fmi": "IMF",
    "pib": "GDP",
}
EN_PT: dict[str, str] = {}
for _pt, _en in PT_EN.items():
    for _word in _en.split():
        EN_PT.setdefault(_word, _pt)

_ORDINAL_QUARTER = re.compile(r"\b([1-4])\s*[ºo°]?\s*trimestre\b", re.IGNORECASE)
_QUARTER_EN = re.compile(r"\bQ([1-4])\b")
_FUNCTION = frozenset(
    (
        "o a os as um uma de do da dos das em no na nos nas por para com e ou que qual quais quanto quanta "
        "quantos quantas como onde quando foi foram era eram seu sua seus suas ao aos se mesmo mesma "
        "the an of in on at to for with and or what which how many much was were is are its their did "
        "does do by from that this these those who when where "
        "le la les un une des du d l au aux et ou qu quel quelle quels quelles combien est sont ont dans "
        "sur pour avec sans ce cette ces il elle ils on t ete etait sera y ne pas selon en apres "
        "pelo pela pelos pelas sobre alem entre segundo durante desde ate apos conforme cujo cuja "
        "entre parmi depuis pendant vers chez lors"
    ).split()
)
MIN_TRANSLATED = 2  # fewer glossary words: the translation would only repeat the names
# Portuguese endings whose English cognate ends otherwise, regularly (folded): "eliminação" ->
# "elimination", "detecção" -> "detection", "qualidade" -> "quality", "primário" -> "primary",
# "categoria" -> "category", "positivo" -> "positive", "fibrose" -> "fibrosis"; the
# longest ending first. A word without one passes unchanged, as before.
_COGNATE_ENDINGS: tuple[tuple[str, str], ...] = (
    ("ccoes", "ctions"),
    ("ccao", "ction"),
    ("coes", "tions"),
    ("cao", "tion"),
    ("dades", "ties"),
    ("dade", "ty"),
    ("arios", "aries"),
    ("ario", "ary"),
    ("orias", "ories"),
    ("oria", "ory"),
    ("ivos", "ives"),
    ("ivas", "ives"),
    ("ivo", "ive"),
    ("iva", "ive"),
    ("ismo", "ism"),
    ("icos", "ics"),
    ("ico", "ic"),
    ("ose", "osis"),
)
MIN_COGNATE_STEM = 4  # letters before the ending: "nação" is no "nation" of "na"


# French endings likewise: "electricite" -> "electricity", "economique" -> "economic",
# "inhibiteur" -> "inhibitor", "polarisation" -> "polarization", "primaire" -> "primary"
_FR_COGNATE_ENDINGS: tuple[tuple[str, str], ...] = (
    ("isations", "izations"),
    ("isation", "ization"),
    ("iques", "ics"),
    ("ique", "ic"),
    ("ites", "ities"),
    ("ite", "ity"),
    ("aires", "aries"),
    ("aire", "ary"),
    ("iteur", "itor"),
    ("ateur", "ator"),
)


def _english_lemma(word: str) -> str | None:
    """The dictionary form of an inflected word when English writes it alike ("globais" ->
    "global", "totais" -> "total"), or None."""
    return next((form for form in lemmas(word)[1:] if is_english(form)), None)


def english_cognate(word: str, language: str = "pt") -> str | None:
    """The English cognate of a folded Portuguese (or French) word by its ending, or None."""
    for ending, english in _FR_COGNATE_ENDINGS if language == "fr" else _COGNATE_ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= MIN_COGNATE_STEM:
            return word[: -len(ending)] + english
    return None


def _country_at(words: list[str], i: int, source: str, target: str) -> tuple[str, int] | None:
    """The country named in the `source` language by the capitalised words from `words[i]`
    (up to three), in the `target` language, with how many words named it; None when they
    name none ("Salvador" in Portuguese is the city, not El Salvador)."""
    if not words[i][:1].isupper():
        return None
    for n in range(min(3, len(words) - i), 0, -1):
        code = country_code(" ".join(words[i : i + n]), (source,))
        if code and (names := country_names(code, (target,))):
            return names[0], n
    return None


def in_name(words: list[str], i: int) -> bool:
    """Whether words[i] is one word of a name of several capitalised words ("Marco Zero",
    "Boa Viagem"), none of them the text's first (a question's first word is capitalised
    for being first). A letter or a number beside it is no name's word: "Produto D" is
    a product, translated."""

    def capitalised(j: int) -> bool:
        return 0 < j < len(words) and words[j][:1].isupper() and len(words[j]) >= 3 and words[j].isalpha()

    return capitalised(i) and (capitalised(i + 1) or capitalised(i - 1))


def translate(text: str, language: str, prefer: Callable[[str], bool] | None = None) -> str | None:
    """`text` (Portuguese or English; French to English) in the other language, word for
    word; None when fewer than MIN_TRANSLATED words are in the glossary or the language is
    none of these. `prefer` picks among a dictionary word's senses: those it holds (the
    words of the evidence the translation is compared with: "amostras" is "samples" beside
    "FinTabNet (113k samples)", not the dictionary's first senses "test, trial")."""
    if language == "pt":
        text = _ORDINAL_QUARTER.sub(lambda m: f"Q{m[1]}", text)
        glossary = PT_EN
    elif language == "fr":
        glossary = FR_EN
    elif language == "en":
        text = _QUARTER_EN.sub(lambda m: f"{m[1]}º trimestre", text)
        glossary = EN_PT
    else:
        return None
    out: list[str] = []
    translated = 0
    # a sentence's last word loses its full stop ("région." is "région"); "8.6", "A.I." keep theirs
    words = [w.rstrip(".") if w.count(".") == 1 else w for w in re.findall(r"[\w][\w./-]*", text)]
    i = 0
    while i < len(words):
        if country := _country_at(words, i, language, "pt" if language == "en" else "en"):
            name, used = country
            out.append(name)  # "Índia" -> "India", "Estados Unidos" -> "United States"
            translated += 1
            i += used
            continue
        word = words[i]
        i += 1
        folded = fold(word)
        cognate = english_cognate(folded, language) if language != "en" and not word[:1].isupper() else None
        if in_name(words, i - 1):
            out.append(word)  # "Marco Zero" is a square of Recife, not "march Zero"
        elif folded in glossary:
            out.append(glossary[folded])
            translated += 1
        elif cognate:
            out.append(cognate)
            translated += 1
        elif folded in _FUNCTION:
            continue
        elif language != "en" and not word[:1].isupper() and (english := english_of(folded)):
            # the FreeDict dictionary's first senses (a capitalised word may be a name), or
            # the senses the evidence holds; a word written alike in English ("área") stays
            # beside them
            if prefer is not None:
                held = [w for w in english_of(folded, most=MAX_WORDS) if prefer(w)]
                english = held[: len(english)] or english
            out.extend(dict.fromkeys([folded, *english] if is_english(folded) else english))
            translated += 1
        elif language != "en" and not word[:1].isupper() and (same := _english_lemma(folded)):
            out.append(same)  # "globais" -> "global": the dictionary form is written alike in English
            translated += 1
        else:
            out.append(word)  # names, codes, numbers and words no dictionary has
    return " ".join(out) if translated >= MIN_TRANSLATED else None
