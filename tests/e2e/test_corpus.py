"""The real-world corpus (../shared/corpus/pdf, 14 PDFs): every file ingests through the
CLI, and questions about facts checked by reading the files find the right page."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pymupdf
import pytest
from shapely.geometry import box, shape

from models.text_encoder import TextEncoder
from service.carta import Carta
from service.query.types import SearchQuery
from tests.conftest import CORPUS, settings_for
from tests.utils.background import BackgroundCommand

PDF_DIR = CORPUS / "pdf"
# the first test's setup waits for the ingestion of 14 PDFs (~200 pages) in a `carta` process:
# on a loaded 2-core machine that passes the suite's 600 s default; the wait's own limit is 1200 s
pytestmark = pytest.mark.timeout(1500)

# (question, file, pages that state the fact) - pages checked with pymupdf's text of each file
FACTS = [
    (
        "How many people were living with chronic hepatitis C infection in 2019?",
        "who_hcv_children_guidelines_2022.pdf",
        {18, 29, 93},
    ),
    (
        "How many children had chronic HCV infection in 2018?",
        "who_hcv_children_guidelines_2022.pdf",
        {45, 53},
    ),
    (
        "Quelle puissance photovoltaïque l'Union européenne a-t-elle ajoutée en 2018 ?",
        "fr_pv_seranon_etude_impact_2022_p1-10.pdf",
        {8},
    ),
    (
        "Nombre d'installations photovoltaïques dans les Alpes-Maritimes",
        "fr_pv_seranon_etude_impact_2022_p1-10.pdf",
        {9},
    ),
    ("auto de infração 679199 Manacapuru multa", "br_ibama_autuacoes_amazonas_2010_p2.pdf", {1}),
    ("Kentucky permit background checks November 2015", "us_nics_background_checks_2015-11.pdf", {1}),
    ("área colhida de milho no Médio-Norte de Mato Grosso", "br_imea_milho_safra_16-17.pdf", {1}),
    ("praias impróprias para banho em Salvador", "br_balneabilidade_salvador_26-2010.pdf", {1, 2, 3}),
    ("decadal population growth rate of Nagaland 2001-11", "in_decadal_population_growth.pdf", {1}),
    ("corrosion rate with egg shell inhibitor", "dib_2019_corrosion_inhibitor_p454.pdf", {1}),
    ("OTSL vs HTML inference time", "arxiv_2305.03393v1_p9_otsl_table.pdf", {1}),
    ("Public health outlay of Maharashtra 2012-13", "in_public_health_outlay_2012-13.pdf", {1}),
    ("rainfall departure Meghalaya 10 July 2016", "in_imd_rainfall_distribution_2016-07-10.pdf", {1}),
]


# Where each document is about, written by hand from reading it: (region, (west, south, east,
# north), required). A footprint must lie inside its region; `required` when the document is
# plainly about that place; None when it is about no place Carta can know (no place named,
# only an author's affiliation or a consultant's address, or the whole world).
Region = tuple[str, tuple[float, float, float, float], bool] | None
INDIA = ("India", (68.0, 6.0, 98.0, 37.5), False)  # tables of every state: a point in India, or none
RECIFE = ("Recife", (-35.05, -8.20, -34.80, -7.90), True)
CORPUS_REGIONS: dict[str, Region] = {
    "fr_pv_seranon_etude_impact_2022_p1-10.pdf": None,  # Séranon: in no gazetteer; Nîmes: the consultant
    "docling_picture_classification.pdf": None,  # lorem ipsum
    "acme_annual_report_fy2023.pdf": None,  # a fictitious company, no place
    "br_imea_milho_safra_16-17.pdf": ("Mato Grosso", (-61.7, -18.1, -50.2, -7.3), False),  # a state
    "br_balneabilidade_salvador_26-2010.pdf": (
        "Salvador and the Bahia coast",
        (-39.5, -14.0, -37.5, -12.0),
        True,
    ),
    "br_ibama_autuacoes_amazonas_2010_p2.pdf": ("Amazonas", (-73.8, -9.9, -56.1, 2.3), True),
    "in_imd_rainfall_distribution_2016-07-10.pdf": INDIA,
    "in_public_health_outlay_2012-13.pdf": INDIA,
    "in_decadal_population_growth.pdf": INDIA,
    "us_nics_background_checks_2015-11.pdf": ("United States", (-180.0, 17.0, -64.0, 72.0), False),
    "dib_2019_corrosion_inhibitor_p454.pdf": None,  # a materials experiment
    "arxiv_2305.03393v1_p9_otsl_table.pdf": None,  # a paper page on table formats
    "ibm_redp5110_sampled.pdf": None,  # a manual; Rochester, Minnesota is in the authors' bios only
    "who_hcv_children_guidelines_2022.pdf": None,  # a global guideline: four continents, no one place
}
SAMPLE_REGIONS: dict[str, Region] = {
    "relatorio_ambiental_recife_2024.pdf": RECIFE,
    "nota_tecnica_drenagem_2024.pdf": RECIFE,
    "grafico_chuvas_2024.png": RECIFE,
    "quarterly_report_q3_2024.pdf": ("Brazil", (-74.0, -34.0, -34.0, 5.5), False),  # its São Paulo office
}


def assert_footprints_in_regions(carta: Carta, regions: dict[str, Region]) -> None:
    footprints = {d.filename: d.footprint for d in carta.registry.list("default")}
    assert set(regions) <= set(footprints), sorted(set(regions) - set(footprints))
    wrong = {}
    for name, region in regions.items():
        footprint = shape(json.loads(footprints[name])) if footprints[name] else None
        if region is None:
            if footprint is not None:
                wrong[name] = f"expected none, got {footprint.bounds}"
            continue
        label, bounds, required = region
        if footprint is None:
            if required:
                wrong[name] = f"expected a footprint in {label}, got none"
        elif not box(*bounds).buffer(1e-6).contains(footprint):
            wrong[name] = f"expected inside {label} {bounds}, got {footprint.bounds}"
    assert not wrong, wrong


@pytest.fixture(scope="module")
def corpus_data(corpus_ingest: BackgroundCommand) -> Path:
    """The data dir of `carta ingest` of the 14 PDFs, started in the background when the
    tests were collected (tests/e2e/conftest.py); these tests run last and wait for it."""
    run = corpus_ingest.wait(timeout_s=1200)
    assert run.returncode == 0, run.stderr[-2000:]
    results = json.loads(run.stdout)
    assert sorted(Path(r["file"]).name for r in results) == sorted(p.name for p in PDF_DIR.glob("*.pdf"))
    assert all(r["document"]["status"] == "ready" and r["created"] for r in results), results
    return corpus_ingest.data_dir


@pytest.fixture(scope="module")
def corpus_carta(corpus_data: Path, text_encoder: TextEncoder) -> Iterator[Carta]:
    carta = Carta(settings_for(corpus_data), text_encoder=text_encoder)
    yield carta
    carta.close()


def test_all_corpus_pdfs_are_ready_with_their_pages(corpus_carta: Carta) -> None:
    docs = {d.filename: d for d in corpus_carta.registry.list("default")}
    assert len(docs) == 14
    for name, doc in docs.items():
        with pymupdf.open(PDF_DIR / name) as pdf:
            assert doc.pages == pdf.page_count, name
        records = corpus_carta.registry.pages("default", doc.id)
        assert len(records) == doc.pages
        assert all(r.chars > 0 for r in records if r.text_source != "none"), name


def test_corpus_footprints_lie_in_the_regions_the_documents_are_about(corpus_carta: Carta) -> None:
    assert set(CORPUS_REGIONS) == {p.name for p in PDF_DIR.glob("*.pdf")}
    assert_footprints_in_regions(corpus_carta, CORPUS_REGIONS)


def test_sample_footprints_lie_in_the_regions_the_documents_are_about(sample_carta: Carta) -> None:
    assert_footprints_in_regions(sample_carta, SAMPLE_REGIONS)


def test_chart_only_pages_were_ocred(corpus_carta: Carta) -> None:
    acme = next(d for d in corpus_carta.registry.list("default") if d.filename.startswith("acme"))
    sources = {r.page_no: r.text_source for r in corpus_carta.registry.pages("default", acme.id)}
    # pages 2-6 are matplotlib charts whose only text is in the picture
    assert [sources[p] for p in range(2, 7)] == ["ocr"] * 5


@pytest.mark.parametrize(("question", "filename", "pages"), FACTS, ids=[f[1][:24] for f in FACTS])
def test_fact_page_in_top_3(corpus_carta: Carta, question: str, filename: str, pages: set[int]) -> None:
    ids = {d.filename: d.id for d in corpus_carta.registry.list("default")}
    result = corpus_carta.search(SearchQuery(question, "default", top_k=3))
    found = [(p.doc_id, p.page_no) for p in result.pages]
    assert any((ids[filename], page) in found for page in pages), found
