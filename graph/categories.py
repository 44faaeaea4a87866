"""One category name per kind of place, whatever tag or language it came from.

OSM tags are normalised with a small table (amenity=drinking_water -> water_point,
leisure=park -> park, highway=bus_stop -> bus_stop, ...); question words in Portuguese and
English map to the same names (`SYNONYMS`), so a question and a dataset meet on one key.
"""

from __future__ import annotations

from collections.abc import Mapping

from geo.folding import fold

# (key, value) -> category; a key with value "*" keeps the value itself as the category.
_TAG_TABLE: dict[tuple[str, str], str] = {
    ("amenity", "drinking_water"): "water_point",
    ("amenity", "water_point"): "water_point",
    ("man_made", "water_tap"): "water_point",
    ("amenity", "recycling"): "recycling",
    ("amenity", "waste_disposal"): "waste_disposal",
    ("amenity", "waste_basket"): "waste_basket",
    ("amenity", "fountain"): "fountain",
    ("amenity", "school"): "school",
    ("amenity", "kindergarten"): "kindergarten",
    ("amenity", "childcare"): "kindergarten",
    ("amenity", "university"): "university",
    ("amenity", "college"): "university",
    ("amenity", "hospital"): "hospital",
    ("healthcare", "hospital"): "hospital",
    ("amenity", "clinic"): "clinic",
    ("amenity", "doctors"): "clinic",
    ("healthcare", "clinic"): "clinic",
    ("amenity", "pharmacy"): "pharmacy",
    ("healthcare", "pharmacy"): "pharmacy",
    ("shop", "chemist"): "pharmacy",
    ("leisure", "park"): "park",
    ("leisure", "garden"): "park",
    ("leisure", "playground"): "playground",
    ("leisure", "pitch"): "sports",
    ("leisure", "sports_centre"): "sports",
    ("highway", "bus_stop"): "bus_stop",
    ("public_transport", "platform"): "bus_stop",
    ("amenity", "bus_station"): "bus_station",
    ("amenity", "toilets"): "toilets",
    ("amenity", "fast_food"): "restaurant",
    ("amenity", "food_court"): "restaurant",
    ("amenity", "biergarten"): "bar",
    ("amenity", "pub"): "bar",
    ("tourism", "museum"): "museum",
    ("tourism", "hotel"): "hotel",
    ("amenity", "*"): "*",
}
# categories that group distinct kinds of place under one name: a question that counts
# "restaurants" counts amenity=restaurant, not the fast-food places grouped with them
KIND_GROUPS: dict[str, tuple[str, ...]] = {
    "restaurant": ("restaurant", "fast_food", "food_court"),
    "bar": ("bar", "pub", "biergarten"),
    "clinic": ("clinic", "doctors"),
    "university": ("university", "college"),
    "kindergarten": ("kindergarten", "childcare"),
    "park": ("park", "garden"),
}
# keys tried in this order: the first one that yields a category wins
_KEY_ORDER = (
    "amenity",
    "healthcare",
    "leisure",
    "highway",
    "public_transport",
    "man_made",
    "shop",
    "tourism",
)
KIND_KEYS = _KEY_ORDER  # the tags whose value is a feature's kind

# question words (accent- and case-folded, singular and plural) -> category
SYNONYMS: dict[str, tuple[str, ...]] = {
    "water_point": (
        "water point",
        "water points",
        "drinking water",
        "drinking fountain",
        "drinking fountains",
        "ponto de agua",
        "pontos de agua",
        "agua potavel",
        "bebedouro",
        "bebedouros",
    ),
    "recycling": (
        "recycling",
        "recycling point",
        "recycling points",
        "recycling bins",
        "reciclagem",
        "ponto de reciclagem",
        "pontos de reciclagem",
        "ecoponto",
        "ecopontos",
    ),
    "waste_disposal": (
        "waste disposal",
        "descarte de lixo",
        "contentor",
        "contentores",
        "cacamba",
        "cacambas",
    ),
    "waste_basket": ("waste basket", "waste baskets", "litter bin", "litter bins", "lixeira", "lixeiras"),
    "fountain": ("fountain", "fountains", "chafariz", "chafarizes", "fonte", "fontes"),
    "school": ("school", "schools", "escola", "escolas", "colegio", "colegios"),
    "kindergarten": ("kindergarten", "kindergartens", "creche", "creches"),
    "university": ("university", "universities", "universidade", "universidades"),
    "hospital": ("hospital", "hospitals", "hospitais"),
    "clinic": ("clinic", "clinics", "clinica", "clinicas", "posto de saude", "postos de saude"),
    "pharmacy": ("pharmacy", "pharmacies", "chemist", "chemists", "drugstore", "farmacia", "farmacias"),
    "park": ("park", "parks", "parque", "parques", "praca", "pracas"),
    "playground": ("playground", "playgrounds", "parquinho", "parquinhos"),
    "bus_stop": (
        "bus stop",
        "bus stops",
        "parada de onibus",
        "paradas de onibus",
        "ponto de onibus",
        "pontos de onibus",
    ),
    "bus_station": ("bus station", "bus stations", "terminal de onibus", "terminais de onibus", "rodoviaria"),
    "toilets": (
        "toilet",
        "toilets",
        "public toilets",
        "restroom",
        "restrooms",
        "banheiro",
        "banheiros",
        "sanitario",
        "sanitarios",
    ),
    "restaurant": ("restaurant", "restaurants", "restaurante", "restaurantes"),
    "cafe": ("cafe", "cafes", "coffee shop", "coffee shops", "cafeteria", "cafeterias"),
    "bar": ("bar", "bars", "pub", "pubs", "bares"),
    "bench": ("bench", "benches", "banco de praca", "bancos de praca"),
    "library": ("library", "libraries", "biblioteca", "bibliotecas"),
    "bank": ("bank", "banks", "banco", "bancos", "agencia bancaria", "agencias bancarias"),
    "atm": ("atm", "atms", "cash machine", "caixa eletronico", "caixas eletronicos"),
    "parking": ("parking", "car park", "car parks", "estacionamento", "estacionamentos"),
    "bicycle_parking": ("bicycle parking", "bike parking", "bicicletario", "bicicletarios"),
    "fuel": (
        "fuel station",
        "fuel stations",
        "gas station",
        "gas stations",
        "posto de combustivel",
        "postos de combustivel",
        "posto de gasolina",
        "postos de gasolina",
    ),
    "post_box": ("post box", "post boxes", "mailbox", "mailboxes", "caixa de correio", "caixas de correio"),
    "theatre": ("theatre", "theatres", "theater", "theaters", "teatro", "teatros"),
    "embassy": ("embassy", "embassies", "embaixada", "embaixadas"),
    "telephone": (
        "telephone",
        "telephones",
        "payphone",
        "payphones",
        "telefone publico",
        "telefones publicos",
        "orelhao",
        "orelhoes",
    ),
    "hotel": ("hotel", "hotels", "hoteis"),
    "museum": ("museum", "museums", "museu", "museus"),
    "vending_machine": ("vending machine", "vending machines", "maquina de venda", "maquinas de venda"),
    "landmark": ("landmark", "landmarks", "ponto de referencia", "pontos de referencia", "marco", "marcos"),
    "flood_point": (
        "flood point",
        "flood points",
        "flooding point",
        "ponto de alagamento",
        "pontos de alagamento",
        "alagamento",
        "alagamentos",
    ),
}


def normalise_tags(tags: Mapping[str, str]) -> str | None:
    """The category of an OSM-style tag set, or None when it names no point of interest."""
    for key in _KEY_ORDER:
        value = tags.get(key)
        if not value:
            continue
        if key == "public_transport" and tags.get("bus") != "yes" and tags.get("highway") != "bus_stop":
            continue
        hit = _TAG_TABLE.get((key, value)) or _TAG_TABLE.get((key, "*"))
        if hit == "*":
            return normalise_name(value)
        if hit:
            return hit
    return None


def normalise_name(value: str) -> str:
    """A free-text category ("Drinking water", "escola") as a category key."""
    key = fold(value).strip().replace("-", " ")
    for category, words in SYNONYMS.items():
        if key == category.replace("_", " ") or key in words:
            return category
    return key.replace(" ", "_")


# How answers name a category, in the question's language (plural; the key otherwise).
LABELS: dict[str, tuple[str, str]] = {  # key: (English, Portuguese)
    "water_point": ("water points", "pontos de água"),
    "recycling": ("recycling points", "pontos de reciclagem"),
    "waste_disposal": ("waste disposal sites", "pontos de descarte de lixo"),
    "waste_basket": ("waste baskets", "lixeiras"),
    "fountain": ("fountains", "fontes"),
    "school": ("schools", "escolas"),
    "kindergarten": ("kindergartens", "creches"),
    "university": ("universities", "universidades"),
    "hospital": ("hospitals", "hospitais"),
    "clinic": ("clinics", "clínicas"),
    "pharmacy": ("pharmacies", "farmácias"),
    "park": ("parks", "parques"),
    "playground": ("playgrounds", "parquinhos"),
    "bus_stop": ("bus stops", "paradas de ônibus"),
    "bus_station": ("bus stations", "terminais de ônibus"),
    "toilets": ("public toilets", "banheiros públicos"),
    "restaurant": ("restaurants", "restaurantes"),
    "cafe": ("cafes", "cafés"),
    "bar": ("bars", "bares"),
    "bench": ("benches", "bancos de praça"),
    "library": ("libraries", "bibliotecas"),
    "bank": ("banks", "agências bancárias"),
    "atm": ("ATMs", "caixas eletrônicos"),
    "parking": ("car parks", "estacionamentos"),
    "bicycle_parking": ("bicycle parkings", "bicicletários"),
    "fuel": ("fuel stations", "postos de combustível"),
    "post_box": ("post boxes", "caixas de correio"),
    "theatre": ("theatres", "teatros"),
    "embassy": ("embassies", "embaixadas"),
    "telephone": ("public telephones", "telefones públicos"),
    "hotel": ("hotels", "hotéis"),
    "museum": ("museums", "museus"),
    "vending_machine": ("vending machines", "máquinas de venda"),
    "landmark": ("landmarks", "pontos de referência"),
    "flood_point": ("flood points", "pontos de alagamento"),
    "sports": ("sports centres", "centros esportivos"),
}


def category_label(key: str, language: str) -> str:
    """'school' -> 'schools' (en) / 'escolas' (pt); unknown keys read as words."""
    labels = LABELS.get(key)
    if labels is None:
        return key.replace("_", " ")
    return labels[1] if language == "pt" else labels[0]
