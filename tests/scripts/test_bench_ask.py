"""scripts/bench_ask.py's ingestion-cost step reads the chunks as the ingestor hands them to the
sentence-vector store ((text, is a table) pairs); it crashed on bare texts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ingest.upload import IngestRequest
from service.carta import Carta
from tests.utils.documents import make_pdf
from tests.utils.scripts import load_script


def test_ingestion_cost_embeds_the_indexed_sentences(
    tmp_path: Path, make_carta: Callable[..., Carta]
) -> None:
    bench = load_script("bench_ask")
    carta = make_carta(geotag=False, graph_enabled=False)
    lines = ["Relatório de drenagem, 2024.", "Foram removidos 41.200 m³ de sedimentos dos canais."]
    carta.ingest(IngestRequest(make_pdf([lines]), "nota.pdf", bench.TENANT))
    cost = bench.ingestion_cost(carta, tmp_path)
    assert cost["chunks"] >= 1 and cost["sentences"] >= 2
    assert cost["chunk_encoding_s"] > 0 and cost["sentence_vectors_s"] > 0
