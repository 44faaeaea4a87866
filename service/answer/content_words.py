"""The question's content words (what it asks about: "orçamento", "net income", "soja") and
whether the evidence holds them, across pt / en / fr spellings.

The gate's key terms (service/answer/gate.py) are names, numbers, dates and codes; a
question whose subject is a common noun ("Qual é o orçamento anual da Secretaria?",
"What was Northwind's net income?") passes them on any page of the right organisation,
and the best sentence about something else ("revenue") is quoted. Content words are the
question's words less function words (the Snowball stop lists of pt / en / fr), question
frames ("value", "número", "according", and what the lists leave out: "quanto", "onde") and
its key terms; one is found in a text when a word there has the
same stem (plural and gender endings off: "sedimentos" = "sedimento"), shares a long
prefix (cognates: "precipitação" = "precipitation", "populacional" = "population"), or is
its translation in the query glossary (service/query/translate.py: "receita" =
"revenue").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

import qdrant_edge as E

from geo.folding import fold
from ingest.values import MONTHS
from service.answer.asked import asked_value, identifier_frames
from service.answer.conditions import first_asked
from service.query.dictionary import dictionaries_read, is_headword, translations_of
from service.query.translate import EN_PT, FR_EN, PT_EN

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)

# Function words: those on the Snowball stop lists of Portuguese, English and French, read
# from the BM25 models the sparse channel uses (models/sparse_encoder.py: a stop word gives an
# empty query). Not Spanish's: it lists "estado" and "sea", Portuguese content words.
_STOP_LISTS = tuple(
    E.Bm25(E.Bm25Config(language=language, lowercase=True, ascii_folding=True))
    for language in ("portuguese", "english", "french")
)


@lru_cache(maxsize=8192)
def function_word(word: str) -> bool:
    """Whether a word (lower case) is on a Snowball stop list: "que", "the", "ont", "estava"."""
    return any(not list(model.embed_query(word).indices) for model in _STOP_LISTS)


# What no stop list holds, folded: interrogatives and quantifiers the lists leave out
# ("quanto", "onde", "combien", "cuanto"), modal verbs, Spanish function words, and the
# question's frames: what it asks with ("value", "número", "according", "highest",
# "million", "chart", "em relação a", "par rapport à", "compared with") rather than about.
# A word here never has to be in the evidence.
_QUESTION_FRAMES = frozenset(
    """
    uns umas
    quais quanto quantos quanta quantas onde cujo cuja
    ter
    segundo sobre ate ha sao nao menos muita cada todo toda todos todas
    mesma outro outra outros outras qualquer algum alguma desse dessa deste desta neste nesta nesse
    nessa sido sendo havia pode podem deve devem fica ficou
    whose much many according
    per also
    could would may might must
    etait ete selon quel quelle quels
    quelles combien quoi cette leurs sans
    el los las del fue con segun hay cual cuales cuanto cuantos cuanta cuantas donde cuando
    value values valor valores number numero amount quantidade figure numbers numeros
    text texto page pagina document documento table tabela chart grafico map mapa
    show shows shown mostra mostram says diz informa indica indicated listed given dado dados
    according conforme segundo apres acordo alors cela acima abaixo
    coordinates coordenadas coordonnees latitude longitude
    less least highest lowest largest smallest higher lower larger smaller farthest nearest
    shortest tallest longest shorter taller longer
    earliest oldest latest newest recent recente recentes recently recentemente recemment
    antiga antigo antigas antigos ancien ancienne anciens anciennes
    maior menor maiores menores maximo minimo pior melhor unico unica one two three first last
    primeiro primeira terceiro terceira quarto quarta second third fourth premier deuxieme troisieme
    dois duas tres ambos ambas both deux trois
    among approximately roughly exact exactly around cerca aproximadamente
    end beginning start begin began begun fim final inicio comeco fin debut ate whole inteiro todo
    long ago level levels nivel niveis niveau niveaux
    mil thousand thousands million millions milhao milhoes billion bilhao bilhoes milliers
    came come fell grew grow lie lies lay use uses usa usam utilise generate generates exceed
    bring brings brought earn earns earned
    season seasons temporada temporadas saison saisons
    vai vao vou
    exceeds
    belong belongs expect expects define defines cause causes make made take took give gave get got
    faz fazem fez fizeram fazer parte partes part
    become reach reaches show occur occurs happen happens run runs ran across
    total totals overall geral
    somando somar somam soma somados somadas sum summing summed adding somme additionnant additionner
    zero nul nulle diferente diferentes different differente above below under over superior
    superiores inferior inferiores
    ones biggest greatest fewest maximum minimum forte fortes faible faibles grande grandes petite petites
    column columns coluna colunas colonne colonnes row rows linha linhas ligne lignes date dates
    report reports relatorio relatorios rapport rapports
    guide guides guia guias study studies estudo estudos etude etudes article articles artigo artigos
    paper papers cite cites cited cita citam citado citada mention mentions mentioned menciona
    mencionam mencionado mencionada mentionne mentionnes besides alem apart autres autre
    relacao comparado comparada comparados comparadas comparacao compared comparison rapport versus
    tableau tableaux graphique graphiques carte cartes figura figure figures
    bar bars barra barras pie pizza camembert stacked empilhadas empilhado
    survey surveys levantamento levantamentos bulletin bulletins boletim boletins
    tell diga digam informe informem indique indiquem cite dites donnez
    """.split()
)
# Verb endings, folded (pt past and participles, en past, fr imperfect and participles): a
# verb of the question ("registrou", "retirados", "recorded", "etaient") names the asking,
# not the fact, and the evidence often says it otherwise.
_VERB_ENDINGS = re.compile(
    r"(?:[^aeiou]ou|eu|iu|aram|eram|iram|ava|avam|iam|ado|ada|ados|adas|ido|ida|idos|idas|ed|ait|aient)$"
)
# Units the evidence writes as symbols: a word of the question stands for its symbol.
_UNIT_WORDS: dict[str, tuple[str, ...]] = {
    "m³": ("metros", "cubicos", "cubic", "metres", "meters", "metre", "meter", "volume"),
    "m3": ("metros", "cubicos", "cubic", "metres", "meters", "metre", "meter", "volume"),
    "km": ("quilometros", "kilometres", "kilometers", "kilometre", "kilometer", "extensao", "length"),
    "mm": ("milimetros", "millimetres", "millimeters"),
    "ha": ("hectares", "hectare", "area"),
    "%": ("percent", "percentage", "percentual", "porcentagem", "pourcentage", "share", "proportion"),
    "mw": ("megawatts", "megawatt", "power", "capacity", "potencia", "capacidade", "puissance"),
    "mwc": ("megawatts", "megawatt", "power", "capacity", "potencia", "capacidade", "puissance"),
    "gw": ("gigawatts", "gigawatt", "power", "capacity", "potencia", "capacidade", "puissance"),
    "°c": ("temperature", "temperatura", "degrees", "graus", "celsius"),
    "r$": ("reais", "real"),
    "$": ("dollars", "dolares"),
}
# Words reports ask about that the query glossary (service/query/translate.py) lacks, en -> pt / fr.
_MORE_EN: dict[str, str] = {
    "status": "situacao",
    "dredging": "desassoreamento",
    "drainage": "drenagem",
    "basin": "bacia",
    "code": "codigo",
    "study": "estudo etude",
    "share": "participacao parcela",
    "country": "pais",
    "city": "cidade municipio",
    "tree": "arvore arborea arborizacao",
    "canopy": "cobertura",
    "waste": "residuos",
    "average": "media moyenne",
    "environmental": "ambiental",
    "limit": "limite",
    "reference": "referencia",
    "classification": "classificacao",
    "rating": "classificacao",
    "material": "material",
    "sediment": "sedimento",
    "inhabitants": "habitantes",
    "fine": "multa",
    "company": "empresa",
    "municipality": "municipio",
    "power": "potencia puissance",
    "capacity": "capacidade potencia puissance",
    "solar": "solaire",
    "area": "superficie",
    "table": "tabela tableau quadro",
    "figure": "figura",
    "map": "mapa carte",
    "chart": "grafico graphique",
}
# Demonstratives (as written: "está" is a verb, "esta" one of these): the word after one names
# what the asker has in view, the area of the geo filter or the document open ("nesta área",
# "within this radius", "in this country"), not a subject the evidence must name.
# A year's own noun ("ano de 2018", "the year 2011", "l'année 2011"): the year says it.
# "the last three months (of 2020)", "les trois derniers mois", "os últimos três meses": a
# report writes a quarter ("au dernier trimestre de l'année 2020", "Q4"), not the months
_QUARTER = re.compile(
    r"\b(?:(?:tres|três|trois|three)\s+(?:(?:ultimos|últimos|derniers|premiers|primeiros|last|first)\s+)?|"
    r"(?:ultimos|últimos|derniers|premiers|primeiros|last|first)\s+(?:tres|três|trois|three)\s+)"
    r"(?:meses|mois|months)\b",
    re.IGNORECASE,
)
_YEAR_WORDS = frozenset("ano anos year years annee annees exercicio".split())
_YEAR = re.compile(r"\b(?:1[89]|20)\d{2}\b")
# the kind of date a date question asks ("em que ano", "in which year", "quel jour"): the date
# answers it, the page need not write the word
_DATE_WORDS = _YEAR_WORDS | frozenset("data datas date dates dia dias day days jour jours".split())
_DEMONSTRATIVES = frozenset(
    "this these este esta estes estas esse essa esses essas neste nesta nestes nestas nesse nessa "
    "nesses nessas deste desta destes destas desse dessa desses dessas cet cette ces".split()
)
MIN_PREFIX = 5  # a shared prefix this long (and all but 3 letters of the shorter word) is a cognate
# words a prefix would take for another they only look like ("capita" of "per capita": "capital"),
# written alike in every language the glossary reads
WRITTEN_ALIKE = frozenset({"capita"})


def singular(word: str) -> str:
    """A folded word with its plural (and pt / fr gender) ending off, so that both
    numbers of a noun meet: "sedimentos" -> "sediment", "regioes" -> "regiao",
    "anuais" -> "anual", "employees" -> "employee", "companies" -> "company"."""
    if len(word) <= 3:
        return word
    for suffix, repl in (("oes", "ao"), ("aes", "ao"), ("ais", "al"), ("eis", "el"), ("ies", "y")):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            return word[: -len(suffix)] + repl
    if word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if len(word) > 5 and word.endswith(("o", "a", "e")):
        word = word[:-1]
    return word


def question_content_words(question: str, skip: Iterable[str] = ()) -> list[str]:
    """The question's content words, folded, in order, each once: no function word, no
    question frame, no month, no word a demonstrative points with ("desta região"), no
    identifier kind ("form number"), no "ano" beside a year or asked by a date question
    ("em que ano"), no "for the first time" (a
    row's order answers it), nothing in `skip` (its key terms, checked as such)."""
    question = _QUARTER.sub(" trimestre ", question)  # "os três últimos meses" is a quarter
    skipped = {w for term in skip for w in _WORD.findall(fold(term))}
    # the kind of identifier asked ("form number", "código"): the value answers it, not the word
    # (a phrase: "form number"; a single word, "código" or "reference", may be the subject too:
    # "which reference point lies farthest west")
    skipped |= {w for frame in identifier_frames(question) if " " in frame for w in _WORD.findall(frame)}
    if _YEAR.search(question):
        skipped |= _YEAR_WORDS
    if asked_value(question) == "date":
        skipped |= _DATE_WORDS
    if first := first_asked(question):  # "pela primeira vez", "for the first time": the asking
        skipped |= set(_WORD.findall(fold(question)[slice(*first)]))
    out: list[str] = []
    previous = ""
    for raw in _WORD.findall(question):
        word, pointed = fold(raw), previous in _DEMONSTRATIVES
        previous = raw.lower()
        if (
            pointed
            or len(word) < 3
            or word in _QUESTION_FRAMES
            or function_word(raw.lower())
            or function_word(word)
            or word in skipped
            or word in MONTHS
            or word in out
        ):
            continue
        if len(word) >= 4 and _VERB_ENDINGS.search(word) and not _noun(word):
            continue
        out.append(word)
    return out


def _noun(word: str) -> bool:
    """A word ending like a participle that the dictionaries list as a word of its own ("estado",
    "tratado", "resultado", "medida"; "tratados" by its singular): a noun, the question's subject."""
    return is_headword(word) or is_headword(singular(word))


class WordIndex:
    """The words of an evidence text, looked up by stem, by long shared prefix and by translation."""

    def __init__(self, text: str) -> None:
        folded = fold(text)
        words = {w for w in _WORD.findall(folded)}
        for symbol, names in _UNIT_WORDS.items():
            # after a number too: "36%", "14,2km"
            if re.search(rf"(?<![^\W\d_]|\$){re.escape(symbol)}(?!\w)", folded):
                words.update(names)
        if re.search(r"\b(?:per|pour) cent\b|\bpor cento\b", folded):  # a table's "(Per cent)"
            words.update(_UNIT_WORDS["%"])
        if re.search(r"\b(?:q[1-4]|[1-4]t)\b", folded):  # "Q3 2024", "3T24": a quarter
            words.update(("quarter", "trimestre", "trimestral", "quarterly"))
        self.words = frozenset(words)
        # the English of a Portuguese or French page's words too: a question in the third
        # language meets them there ("rede" and "réseau" are both "network")
        words |= {t for w in self.words for t in translations_of(w)}
        words |= {cognate(w) for w in words}
        self.stems = {singular(w) for w in words}
        self.by_prefix: dict[str, set[str]] = {}
        for w in words:
            if len(w) >= MIN_PREFIX - 1:
                self.by_prefix.setdefault(w[: MIN_PREFIX - 1], set()).add(w)

    def _has(self, word: str) -> bool:
        if word in WRITTEN_ALIKE:  # "per capita" is no "capital", however cut
            return word in self.words
        if singular(word) in self.stems:
            return True
        # pt plurals of words ending in r / z: "cores" = "cor", "luzes" = "luz"
        if word.endswith(("res", "zes")) and word[:-2] in self.stems:
            return True
        if len(word) < MIN_PREFIX:
            return False
        for other in self.by_prefix.get(word[: MIN_PREFIX - 1], ()):
            shared = len(_common_prefix(word, other))
            shorter = min(len(word), len(other))
            if shared >= shorter - 1 or (shared >= MIN_PREFIX and shared >= shorter - 3):
                return True
        return False

    def holds_form(self, word: str) -> bool:
        """Whether the text holds `word` (folded) itself or a form of it, not a translation."""
        return self._has(word)

    def contains(self, word: str) -> bool:
        """Whether the text holds `word` (folded), a form of it, a cognate or its translation."""
        return any(self._has(w) or self._has(cognate(w)) for w in translations(word))


@lru_cache(maxsize=4096)
def word_index(text: str) -> WordIndex:
    """The WordIndex of a text, built once: the same evidence sentences and pages come back
    question after question, and building one costs more than all its lookups."""
    return WordIndex(text)


def _reverse(glossary: dict[str, str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for source, targets in glossary.items():
        for target in targets.split():
            out.setdefault(target, set()).add(source)
    return out


_EN_PT_ALL = _reverse(PT_EN)  # every pt word per en word ("rainfall": chuva, precipitacao)
_MORE_PT = _reverse(_MORE_EN)


def translations(word: str, dictionary: bool = True) -> frozenset[str]:
    """The word and its glossary translations, pt -> en and en -> pt, singular or plural, and
    with `dictionary` the FreeDict dictionaries' (service/query/dictionary.py)."""
    return _translations(word, dictionary, dictionaries_read())


@lru_cache(maxsize=65536)  # asked for every question word against every evidence text
def _translations(word: str, dictionary: bool, _read: int) -> frozenset[str]:
    """translations(), cached while the same dictionaries are in use (`_read` counts them)."""
    out = {word} | (set(translations_of(word)) if dictionary else set())
    # "paises" -> "pais": the Portuguese plural of a word ending in s, z or r (looked up only)
    plural_es = [word[:-2]] if word.endswith(("ses", "zes", "res")) and len(word) > 5 else []
    for form in (word, singular(word), f"{word}s", *plural_es):
        out.update(PT_EN.get(form, "").split())
        out.update(_MORE_EN.get(form, "").split())
        out.update(_EN_PT_ALL.get(form, ()))
        out.update(_MORE_PT.get(form, ()))
        out.update(FR_EN.get(form, "").split())  # French -> English only: a French question's words
        if form in EN_PT:
            out.add(EN_PT[form])
    # through English to the other languages of the report words: "estudo" = "study" = "etude"
    for english in list(out):
        out.update(_MORE_EN.get(english, "").split())
    return frozenset(out)


_COGNATE_SPELLINGS = (
    ("th", "t"),
    ("ph", "f"),
    ("y", "i"),
    ("ll", "l"),
    ("ss", "s"),
    ("mm", "m"),
    ("ct", "t"),
)


def cognate(word: str) -> str:
    """A spelling shared by pt / en / fr cognates: "thermotolerant" and "termotolerante"
    both read "termotolerant...", "physical" and "fisico" "fisic..."."""
    for a, b in _COGNATE_SPELLINGS:
        word = word.replace(a, b)
    return word


# The frame a question asks with (folded), before the noun of what it asks for: "at what
# temperature", "qual foi a produtividade média", "quem é o coordenador", "how many plots",
# "quelle était la puissance".
_ASKING = re.compile(
    r"\b(?:what|which|who|how many|how much|qual|quais|quant[oa]s?|quem|qui|quel(?:le)?s?|combien d[e']|"
    r"cual(?:es)?|cuant[oa]s?)"
    r"(?:\s+(?:is|was|were|are|foi|era|e|sao|foram|eram|est|etait|sont|etaient|es|fue))?"
    r"(?:\s+(?:the|its|their|o|a|os|as|la|le|les|el|los|las))?\s+"
)
ASKED_REACH = 3  # words between the frame and the asked noun ("What was Nagaland's decadal ...")
# Modifiers of the asked noun ("produtividade média", "total revenue") and adverbs between the
# frame and a verb ("how many of them had actually treated"): a passage need not repeat them
_MODIFIERS = frozenset(
    """
    media medio medias medios average mean moyenne moyen total totais overall
    approximate approximative approximatif aproximada aproximado approx estimated estimada estimado
    actually really currently recently already still just only ever realmente atualmente ainda
    vraiment actuellement deja seulement
    """.split()
)
# "how many of them", "quantos deles": the count is of a noun asked before, not of a new one
_PARTITIVE = re.compile(
    r"^\s*(?:of (?:them|these|those|which|whom)|among them|deles|delas|destes|destas|dentre eles|"
    r"entre eles|d ?entre eux|parmi eux|d ?entre elles|de ellos|de ellas)\b"
)


def last_frame_at(question: str) -> int | None:
    """Where (in the folded question) its last asking frame starts ("what", "quantos", "which")."""
    frames = list(_ASKING.finditer(fold(question)))
    return frames[-1].start() if frames else None


def asked_words(question: str, skip: Iterable[str] = (), first: bool = False) -> list[str]:
    """The content words naming what the question asks for, folded: the run of them right
    after its frame, less modifiers ("temperature" of "At what temperature were ...",
    "produtividade" of "Qual foi a produtividade média do milho", "coordenador" of "Quem é
    o coordenador da COMON"); [] when it asks with no noun ("when", "quanto custou"). A
    passage holding none of them speaks of another attribute of the same subject."""
    content = set(question_content_words(question, skip))
    folded = fold(question)
    # the last frame: "Which state had the largest outlay, and how much was it?" asks a number
    # last; or the `first` ("Who is the director of the WHO ...": the second "who" is a name)
    frames = list(_ASKING.finditer(folded))
    m = (frames[0] if first else frames[-1]) if frames else None
    if not m or not content:
        return []
    if _PARTITIVE.match(folded[m.end() :]):
        return []
    names = {w for term in skip for w in _WORD.findall(fold(term))}
    out: list[str] = []
    for i, word in enumerate(_WORD.findall(folded[m.end() :])):
        if word in content:
            out.append(word)
        elif (
            out
            or i >= ASKED_REACH
            or not (len(word) < 3 or word in names or word in _QUESTION_FRAMES or function_word(word))
        ):
            break  # past the noun, or a verb asks ("Quanto custou a obra?": its cost)
    return [w for w in out if w not in _MODIFIERS]


def holds_any(words: Iterable[str], text: str) -> bool:
    """Whether the text holds one of the words (a form, cognate or translation of it)."""
    index = word_index(text)
    return any(index.contains(w) for w in words)


def absent_content_words(question: str, texts: Iterable[str], skip: Iterable[str] = ()) -> list[str]:
    """The question's content words that none of `texts` holds."""
    words = question_content_words(question, skip)
    if not words:
        return []
    index = word_index("\n".join(texts))
    return [w for w in words if not index.contains(w)]


def _common_prefix(a: str, b: str) -> str:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return a[:n]


_COUNTED = re.compile(r"\b(?:how many|quant[oa]s|combien d[e']|cuant[oa]s)\s*(\w{3,})")


def counted_noun(question: str) -> str:
    """The head of what a "how many" question counts, folded, its plural cut ("dragas" ->
    "draga"); "" when it counts nothing."""
    m = _COUNTED.search(fold(question))
    if not m:
        return ""
    word = m[1]
    return word[:-1] if len(word) > 4 and word.endswith("s") else word
