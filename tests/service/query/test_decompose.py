"""Multi-hop questions split into the parts they join (service/query/decompose.py), pt and en."""

from __future__ import annotations

from service.query.decompose import decompose


def test_two_questions_joined_by_and_pt() -> None:
    parts = decompose(
        "Quantos pontos de alagamento o Recife registrou em 2024 "
        "e quantos metros cúbicos a EMLURB removeu dos canais?"
    )
    assert parts == [
        "Quantos pontos de alagamento o Recife registrou em 2024",
        "quantos metros cúbicos a EMLURB removeu dos canais",
    ]


def test_two_questions_joined_by_and_en() -> None:
    parts = decompose(
        "How much will contract CT-SMA-0427/2024 invest in desilting canals, "
        "and what was the total cost of the 2024 programme?"
    )
    assert parts == [
        "How much will contract CT-SMA-0427/2024 invest in desilting canals",
        "what was the total cost of the 2024 programme",
    ]


def test_a_part_pointing_back_gets_the_first_parts_names() -> None:
    parts = decompose(
        "What were Bihar's total public health outlay in 2012-13 and its decadal growth rate in 2001-2011?"
    )
    assert len(parts) == 2 and parts[1].startswith("Bihar") and "2001-2011" in parts[1]
    pt = decompose(
        "Qual foi a chuva de Kerala em junho de 2016 e o seu crescimento populacional em 2001-2011?"
    )
    assert pt[1] == "Kerala: o seu crescimento populacional em 2001-2011"


def test_a_list_of_asked_things_keeps_the_leading_context() -> None:
    parts = decompose(
        "For Assam, what were the total public health outlay in 2012-13, "
        "the decadal growth rate in 2001-2011 "
        "and the actual rainfall for the period 01-06-2016 to 10-07-2016?"
    )
    assert parts == [
        "For Assam: what were the total public health outlay in 2012-13",
        "For Assam: the decadal growth rate in 2001-2011",
        "For Assam: the actual rainfall for the period 01-06-2016 to 10-07-2016",
    ]


def test_both_and_tanto_quanto_give_one_part_per_side() -> None:
    assert decompose("Which organisations appear in both the Salvador and the Recife reports?") == [
        "Which organisations appear in the Salvador",
        "Which organisations appear in the Recife reports",
    ]
    assert decompose(
        "Qual resolução é citada tanto no boletim de Salvador quanto no relatório do Recife?"
    ) == [
        "Qual resolução é citada no boletim de Salvador",
        "Qual resolução é citada no relatório do Recife",
    ]


def test_comparisons_between_two_places_or_options() -> None:
    assert decompose("Compare the flooding between Afogados and Boa Viagem") == [
        "Compare the flooding Afogados",
        "Compare the flooding Boa Viagem",
    ]
    parts = decompose("Which product had the higher December revenue, Product B or Product C?")
    assert [p.split()[-2:] for p in parts] == [["Product", "B"], ["Product", "C"]]


def test_an_elliptic_complement_gets_the_first_parts_head() -> None:
    parts = decompose(
        "Quais resoluções do CONAMA são citadas no relatório do IBAMA e no relatório ambiental do Recife?"
    )
    assert parts[1] == "Quais resoluções do CONAMA são citadas no relatório ambiental do Recife"


def test_which_x_of_the_y_is_two_hops() -> None:
    assert decompose("Which suppliers of our biggest customer are under sanctions?") == [
        "our biggest customer",
        "Which suppliers of our biggest customer are under sanctions",
    ]
    assert (
        decompose("Quais fornecedores do nosso maior cliente estão sob sanções?")[0] == "nosso maior cliente"
    )


def test_one_question_stays_whole() -> None:
    for q in (
        "Qual a precipitação acumulada no Recife em 2024?",
        "Quais são as coordenadas de Mato Grosso e Goiás?",
        "What was Northwind's Latin America revenue in Q3 2024?",
    ):
        assert decompose(q) == [q]
