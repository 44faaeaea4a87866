"""Chunks: neighbouring blocks merged up to a size, long blocks split at sentence ends,
page and position kept, boxes unioned, no text lost."""

from __future__ import annotations

import random

import pytest

from ingest.chunking import chunk_page
from ingest.loaders import TextBlock

SENTENCES = [
    "A precipitação acumulada no Recife foi de 2.345 mm em 2024.",
    "Foram registrados 214 pontos de alagamento ao longo do ano!",
    "Qual bairro teve mais ocorrências?",
    "Afogados concentrou o maior número; Boa Viagem veio em seguida:",
    "o programa plantou 18.450 mudas de espécies nativas.",
]


def _words(texts: list[str]) -> list[str]:
    return " ".join(texts).split()


def test_small_blocks_are_merged_up_to_max_chars_and_boxes_unioned() -> None:
    blocks = [
        TextBlock((10.0, 10.0, 100.0, 20.0), "Título do relatório"),
        TextBlock((12.0, 25.0, 300.0, 40.0), "Primeiro parágrafo curto."),
        TextBlock((5.0, 45.0, 200.0, 60.0), "Segundo parágrafo."),
    ]
    chunks = chunk_page(3, blocks, max_chars=200)
    assert len(chunks) == 1
    chunk = chunks[0]
    assert chunk.page_no == 3
    assert chunk.index == 0
    assert chunk.text == "Título do relatório\nPrimeiro parágrafo curto.\nSegundo parágrafo."
    assert chunk.bbox == (5.0, 10.0, 300.0, 60.0)


def test_blocks_that_do_not_fit_start_a_new_chunk() -> None:
    a = TextBlock((0.0, 0.0, 50.0, 10.0), "a" * 30)
    b = TextBlock((0.0, 20.0, 60.0, 30.0), "b" * 30)
    c = TextBlock((0.0, 40.0, 70.0, 50.0), "c" * 30)
    # a + "\n" + b = 61 chars fits in 61, adding c would not.
    chunks = chunk_page(1, [a, b, c], max_chars=61)
    assert [ch.text for ch in chunks] == ["a" * 30 + "\n" + "b" * 30, "c" * 30]
    assert [ch.index for ch in chunks] == [0, 1]
    assert chunks[0].bbox == (0.0, 0.0, 60.0, 30.0)
    # A chunk made of one block keeps exactly that block's box.
    assert chunks[1].bbox == c.bbox


def test_long_block_is_split_at_sentence_ends() -> None:
    text = " ".join(SENTENCES)
    box = (50.0, 100.0, 500.0, 300.0)
    chunks = chunk_page(2, [TextBlock(box, text)], max_chars=130)
    assert len(chunks) > 1
    for chunk in chunks:
        assert len(chunk.text) <= 130
        assert chunk.page_no == 2
        # Pieces of one block all carry that block's box.
        assert chunk.bbox == box
        # Every piece ends where a sentence ends (., !, ?, ;, :), not mid-sentence.
        assert chunk.text.rstrip()[-1] in ".!?;:"
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert _words([c.text for c in chunks]) == text.split()


def test_sentence_longer_than_a_chunk_is_cut_at_a_space() -> None:
    words = [f"palavra{i:03d}" for i in range(60)]  # one "sentence", no punctuation
    text = " ".join(words)
    chunks = chunk_page(1, [TextBlock((0.0, 0.0, 1.0, 1.0), text)], max_chars=100)
    assert len(chunks) >= 7
    for chunk in chunks:
        assert len(chunk.text) <= 100
    # Cut at spaces: no word is broken in two.
    assert _words([c.text for c in chunks]) == words


def test_single_over_long_word_never_produces_an_over_long_chunk_elsewhere() -> None:
    word = "x" * 250
    text = f"Antes do código. {word} Depois do código."
    chunks = chunk_page(1, [TextBlock((0.0, 0.0, 1.0, 1.0), text)], max_chars=100)
    for chunk in chunks:
        assert len(chunk.text) <= 100
    joined = "".join(c.text.replace("\n", "").replace(" ", "") for c in chunks)
    assert joined == text.replace(" ", "")


@pytest.mark.parametrize("max_chars", [40, 90, 200, 900])
def test_no_chunk_exceeds_max_and_no_word_is_lost(max_chars: int) -> None:
    rng = random.Random(max_chars)
    blocks = []
    for i in range(25):
        n = rng.randint(1, 6)
        text = " ".join(rng.choice(SENTENCES) for _ in range(n))
        blocks.append(TextBlock((float(i), float(10 * i), float(100 + i), float(10 * i + 8)), text))
    chunks = chunk_page(7, blocks, max_chars=max_chars)
    longest_word = max(len(w) for b in blocks for w in b.text.split())
    assert longest_word < max_chars  # so the limit is strict here
    for chunk in chunks:
        assert 0 < len(chunk.text) <= max_chars
        assert chunk.page_no == 7
        x0, y0, x1, y1 = chunk.bbox
        assert x0 <= x1 and y0 <= y1
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert _words([c.text for c in chunks]) == _words([b.text for b in blocks])


def test_every_chunk_box_covers_the_blocks_it_came_from() -> None:
    blocks = [
        TextBlock((float(10 * i), float(20 * i), float(10 * i + 50), float(20 * i + 15)), f"Linha {i}.")
        for i in range(12)
    ]
    chunks = chunk_page(1, blocks, max_chars=30)
    for chunk in chunks:
        lines = chunk.text.split("\n")
        covered = [b for b in blocks if b.text in lines]
        assert covered
        assert chunk.bbox == (
            min(b.bbox[0] for b in covered),
            min(b.bbox[1] for b in covered),
            max(b.bbox[2] for b in covered),
            max(b.bbox[3] for b in covered),
        )


def test_empty_page_gives_no_chunks() -> None:
    assert chunk_page(1, [], max_chars=900) == []


def test_headings_start_chunks_and_name_the_section_in_every_later_chunks_context() -> None:
    from ingest.chunking import SectionContext

    context = SectionContext("Relatório de enchentes")
    page1 = [
        TextBlock((10, 10, 300, 30), "Relatório de enchentes", heading=True),  # the title is no section
        TextBlock((10, 40, 300, 60), "Introdução curta."),
        TextBlock((10, 70, 300, 90), "2. Pontos de alagamento", heading=True),
        TextBlock((10, 100, 300, 120), "Foram 214 pontos."),
    ]
    first = chunk_page(1, page1, 900, context=context)
    assert [c.text for c in first] == [
        "Relatório de enchentes\nIntrodução curta.",
        "2. Pontos de alagamento\nForam 214 pontos.",
    ]
    assert [c.context for c in first] == [
        "Relatório de enchentes · p.1",
        "Relatório de enchentes > 2. Pontos de alagamento · p.1",
    ]
    # the section carries over to the next page until another heading
    second = chunk_page(
        2, [TextBlock((10, 10, 300, 30), "Afogados concentrou o maior número.")], 900, context=context
    )
    assert second[0].context == "Relatório de enchentes > 2. Pontos de alagamento · p.2"
    assert second[0].indexed_text() == f"{second[0].context}\n{second[0].text}"


def test_pdf_headings_come_from_larger_type_and_tool_file_names_are_no_title() -> None:
    import pymupdf

    from ingest.formats.pdf import PdfLoader
    from ingest.loaders import LoadOptions

    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 80), "Drenagem urbana", fontsize=20)
    for i in range(6):
        page.insert_text(
            (72, 130 + i * 16), f"O bairro {i} teve {i * 3} pontos de alagamento em 2024.", fontsize=11
        )
    doc.set_metadata({"title": "Microsoft Word - relatorio_final.docx"})
    data = doc.tobytes()
    loader = PdfLoader()
    opened = loader.open(data, loader.sniff(data), LoadOptions(ocr_enabled=False, layout="text"))  # type: ignore[arg-type]
    try:
        blocks = next(iter(opened.pages())).blocks
    finally:
        opened.close()
    assert opened.title is None  # the upload's file name serves
    assert [b.text for b in blocks if b.heading] == ["Drenagem urbana"]
