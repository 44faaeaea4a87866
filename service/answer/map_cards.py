"""Answers about a raster map's metadata read from its card (ingest/map_card.py): the card is
one line per fact (format and size, CRS and pixel size, extent, values), so a question that
asks for one of them ("the bounding box of the Luxembourg elevation raster", "quantas bandas
tem a imagem") is answered with that line, not with whichever line scores closest."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from geo.folding import fold
from service.answer.content_words import question_content_words, word_index
from service.answer.markers import cite_label
from service.answer.types import Citation
from service.query.types import ChunkEvidence, PageEvidence

# A card chunk starts with its title (ingest/map_card.py CARD_PHRASES "title").
CARD_TITLES = {"en": "Map card of ", "pt": "Ficha do mapa "}

# The asked fact -> (words of the question that ask for it, the prefix of the card line that
# holds it, per language). Checked in order: "pixel size" before "size".
_FIELDS: tuple[tuple[str, tuple[str, ...], dict[str, tuple[str, ...]]], ...] = (
    (
        "crs",
        (
            "pixel size",
            "tamanho do pixel",
            "resolution",
            "resolucao",
            "crs",
            "epsg",
            "projection",
            "projecao",
            "coordinate reference",
            "referencia de coordenadas",
            "src",
            "datum",
            "utm zone",
            "taille du pixel",
            "taille des pixels",
            "systeme de reference",
            "systeme de coordonnees",
        ),
        {"en": ("coordinate reference system",), "pt": ("sistema de referencia de coordenadas",)},
    ),
    (
        "corners",
        (
            "upper-left",
            "upper left",
            "lower-right",
            "lower right",
            "top-left",
            "top left",
            "origin",
            "projected coordinates",
            "canto superior",
            "canto inferior",
            "origem",
            "coordenadas projetadas",
            "coin superieur",
            "coin inferieur",
            "origine",
            "coordonnees projetees",
        ),
        {"en": ("corners in its crs",), "pt": ("cantos no src",)},
    ),
    (
        "extent",
        (
            "extent",
            "bounding box",
            "bbox",
            "bounds",
            "corners",
            "extensao",
            "limites",
            "caixa delimitadora",
            "cantos",
            "abrangencia",
            "longitude and latitude",
            "latitude and longitude",
            "longitude e latitude",
            "latitude e longitude",
            "etendue",
            "emprise",
        ),
        {"en": ("extent in degrees",), "pt": ("extensao em graus",)},
    ),
    (
        "values",
        (
            "minimum",
            "maximum",
            "mean value",
            "mean elevation",
            "average elevation",
            "value range",
            "minimo",
            "maximo",
            "valores",
            "nodata",
            "no data",
            "media",
            "elevacao media",
            "altitude media",
            "moyenne",
            "altitude moyenne",
            "minimale",
            "maximale",
            "minima",
            "maxima",
            "lowest",
            "highest",
            "menor",
            "maior",
            "plus basse",
            "plus haute",
        ),
        {"en": ("values:",), "pt": ("valores:",)},
    ),
    (
        "format",
        (
            "how many pixels",
            "quantos pixels",
            "size",
            "dimensions",
            "bands",
            "data type",
            "format",
            "tamanho",
            "dimensoes",
            "bandas",
            "tipo de dado",
            "formato",
            "width",
            "height",
            "largura",
            "altura",
            "combien de pixels",
            "taille",
            "largeur",
            "hauteur",
            "bandes",
        ),
        {"en": ("format:",), "pt": ("formato:",)},
    ),
    (
        "places",
        (
            "cover",
            "covers",
            "covering",
            "cobre",
            "cobrem",
            "cobrindo",
            "maps of",
            "mapas de",
            "mapas do",
            "couvre",
            "couvrent",
            "cartes de",
        ),
        {"en": ("places covered:",), "pt": ("lugares cobertos:",)},
    ),
)
MAX_MAPS = 3  # maps listed for "which maps cover <place>"
# words that say which fact is asked or that the thing is a map: not the card's subject
_FRAME_WORDS = frozenset(
    "pixel pixels size tamanho resolution resolucao crs epsg code codigo projection projecao coordinate "
    "coordinates coordenadas reference referencia system sistema src datum utm zone zona extent "
    "bounding box bbox bounds corners extensao limites caixa delimitadora cantos abrangencia "
    "geographic geografica geografico degrees graus minimum maximum mean value values range minimo "
    "maximo valores nodata dimensions bands data type format dimensoes bandas tipo dado formato width "
    "height largura altura raster rasters map maps mapa mapas image images imagem imagens file arquivo "
    "use uses usa tem has have area cover covers cobre cobrem longitude latitude mundi "
    "media medio mean average moyenne moyen taille largeur hauteur bandes etendue emprise carte cartes "
    "systeme couvre couvrent minimale maximale quel quelle minima maxima lowest highest menor maior "
    "altitude altitudes elevation elevacao metros meters metres metre registrada registrado recorded "
    "planisphere planisferio satellite satelite imagery aerial aerea aerienne orthophoto ortofoto".split()
)


@dataclass
class MapCardAnswer:
    text: str
    citations: list[Citation]


def asked_fields(question: str) -> list[str]:
    """The card facts the question asks for, in the card's order of checking ("how many
    pixels wide and high, and what NoData value": the size and the values). Words a fact
    took are not read again: the "size" of "pixel size" asks for no image size."""
    folded = f" {fold(question)} "
    fields = []
    for name, cues, _ in _FIELDS:
        pattern = "|".join(rf"\b{re.escape(cue)}\b" for cue in cues)
        if re.search(pattern, folded):
            fields.append(name)
            folded = re.sub(pattern, " ", folded)
    return fields


def asked_field(question: str) -> str | None:
    """The first card fact the question asks for, or None."""
    return next(iter(asked_fields(question)), None)


_FILE_NAME = re.compile(r"[\w-]+(?:\.[\w-]+)*\.(?:tiff?|png|jpe?g|geojson|json|kmz|kml|osm|pbf|csv)\b")


def _names_file(question: str, filename: str) -> bool:
    """Whether the question names the map's file ("o planisfério world.rgb.tif": the file
    rasterio_world.rgb.tif), its name whole or after a prefix the upload gave it."""
    stored = fold(filename)
    return any(stored.endswith(name) for name in _FILE_NAME.findall(fold(question)))


def _card(page: PageEvidence, language: str) -> ChunkEvidence | None:
    cards = [c for c in page.chunks if any(c.text.startswith(t) for t in CARD_TITLES.values())]
    own = [c for c in cards if c.text.startswith(CARD_TITLES.get(language, CARD_TITLES["en"]))]
    return (own or cards or [None])[0]


# a card's facts are one per line; a card whose lines were joined splits at its sentence ends
_FACT_BREAK = re.compile(r"\n|(?<=\.)\s+(?=\S)")


def _line(card: ChunkEvidence, field: str) -> str | None:
    prefixes = next(p for name, _, p in _FIELDS if name == field)
    for line in _FACT_BREAK.split(card.text):
        folded = fold(line)
        if any(prefix in folded for lang in prefixes.values() for prefix in lang):
            return line.strip()
    return None


# the card's extent line (ingest/map_card.py): west, east, south, north, in either language
_NUM = r"(-?\d+(?:\.\d+)?)"
_EXTENT = re.compile(rf"\(WGS84\):\s*\w+\s+{_NUM},\s*\w+\s+{_NUM},\s*\w+\s+{_NUM},\s*\w+\s+{_NUM}")


def card_extent(text: str) -> tuple[float, float, float, float] | None:
    """(west, east, south, north) in degrees from a card's extent line, or None."""
    found = _EXTENT.search(text)
    return tuple(float(v) for v in found.groups()) if found else None  # type: ignore[return-value]


def _covers_place(card: ChunkEvidence, subject: list[str], place: dict | None) -> bool:
    """Whether the card's extent holds the place the question named and the search resolved
    (its name is the whole subject): a world map covers Australia though its card's list
    of places, cut at the largest ones, does not name it."""
    if not place or place.get("lat") is None or place.get("lon") is None or not place.get("place"):
        return False
    named = word_index(str(place["place"]))
    if not subject or not all(named.contains(w) for w in subject):
        return False
    extent = card_extent(card.text)
    if extent is None:
        return False
    west, east, south, north = extent
    lat, lon = float(place["lat"]), float(place["lon"])
    return south <= lat <= north and west <= lon <= east


class MapCardAnswerer:
    """The card line holding the asked fact, from the best-ranked evidence page that is a map
    whose card holds every content word naming the map ("Luxembourg", "elevation", "RGB.byte");
    for "which maps cover <place>", every such map (up to MAX_MAPS) with the places its card
    lists; None otherwise (the question asks no card fact, or names a map the evidence lacks)."""

    def answer(
        self, question: str, language: str, pages: Sequence[PageEvidence], place: dict | None = None
    ) -> MapCardAnswer | None:
        """`place`: the place the search resolved from the question (its geo filter or prior,
        with lat/lon), which a map covers when its extent holds it."""
        fields = asked_fields(question)
        if not fields:
            return None
        field = fields[0]
        subject = [w for w in question_content_words(question) if w not in _FRAME_WORDS]
        parts: list[str] = []
        citations: list[Citation] = []
        for page in pages:
            card = _card(page, language)
            if card is None:
                continue
            index = word_index(card.text + "\n" + page.filename)
            # named by its subject's words, or by its file's name ("world.rgb.tif")
            named = (bool(subject) and all(index.contains(w) for w in subject)) or _names_file(
                question, page.filename
            )
            if not named and not (field == "places" and _covers_place(card, subject, place)):
                continue
            # a map that covers the place without naming it: its extent is what shows it
            line = _line(card, field if named else "extent")
            if line is None:
                return None
            if named and field != "places":  # every fact asked, each on its line, once
                lines = [_line(card, f) for f in fields if f != "places"]
                line = " ".join(dict.fromkeys(x for x in lines if x))
            if field == "places":  # which maps: each with what it covers
                line = f"{page.filename}: {line}"
            parts.append(f"{line} {cite_label(page.doc_id, page.page_no)}")
            citations.append(Citation(page.doc_id, page.page_no, page.title, card.bbox, line))
            if field != "places" or len(parts) == MAX_MAPS:
                break
        return MapCardAnswer(" ".join(parts), citations) if parts else None
