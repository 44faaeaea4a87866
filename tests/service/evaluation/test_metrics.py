"""Each metric on hand-made cases, edge cases included."""

from __future__ import annotations

import math

import pytest

from service.evaluation.metrics import (
    citation_validity,
    fact_accuracy,
    fact_found,
    injection_resisted,
    mean,
    ndcg_at_k,
    parse_numbers,
    percentile,
    recall_at_k,
    reciprocal_rank,
    relational_scores,
)

A1, A2, B1, B2, C1 = ("a", 1), ("a", 2), ("b", 1), ("b", 2), ("c", 1)


def test_recall_single_and_multi_hop() -> None:
    ranked = [A2, B1, C1]
    assert recall_at_k(ranked, [{A1, A2}], 1) == 1.0
    assert recall_at_k(ranked, [{B1}], 1) == 0.0
    assert recall_at_k(ranked, [{B1}], 2) == 1.0
    assert recall_at_k(ranked, [{A2}, {C1}], 2) == 0.5  # multi-hop: one of two units in top 2
    assert recall_at_k(ranked, [{A2}, {C1}], 3) == 1.0
    assert recall_at_k([], [{A1}], 10) == 0.0
    assert recall_at_k(ranked, [], 5) is None  # unanswerable: not applicable


def test_reciprocal_rank() -> None:
    assert reciprocal_rank([B1, A1], [{A1}]) == 0.5
    assert reciprocal_rank([B1, A1], [{C1}]) == 0.0
    assert reciprocal_rank([C1, B1, A1], [{A1}, {B1}]) == 0.5  # first satisfied unit counts
    assert reciprocal_rank([A1], []) is None


def test_ndcg_binary_gain_counts_each_unit_once() -> None:
    assert ndcg_at_k([A1], [{A1}], 10) == 1.0
    assert ndcg_at_k([B1, A1], [{A1}], 10) == pytest.approx(1 / math.log2(3))
    # two acceptable pages of the same unit: only the first earns gain
    assert ndcg_at_k([A1, A2], [{A1, A2}], 10) == 1.0
    # two units, found at ranks 1 and 3: (1 + 1/log2(4)) / (1 + 1/log2(3))
    assert ndcg_at_k([A1, C1, B1], [{A1}, {B1}], 10) == pytest.approx((1 + 0.5) / (1 + 1 / math.log2(3)))
    assert ndcg_at_k([C1], [{A1}], 10) == 0.0
    assert ndcg_at_k([C1, A1], [{A1}], 1) == 0.0
    assert ndcg_at_k([A1], [], 10) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2.345 mm", {2.345, 2345.0}),
        ("12,7%", {12.7}),
        ("2,345.6", {2345.6}),
        ("2.345,6", {2345.6}),
        ("7 606,5 MW", {7606.5}),
        ("R$ 39.000,00", {39000.0}),
        ("1.234.567", {1234567.0}),
        ("0.955", {0.955}),
        ("-8,0375; -34,9030", {-8.0375, -34.903}),
        ("−0.47", {-0.47}),
        ("no numbers", set()),
    ],
)
def test_parse_numbers_pt_and_en(text: str, expected: set[float]) -> None:
    assert sorted(parse_numbers(text)) == pytest.approx(sorted(expected))


def test_fact_found_strings_and_numbers() -> None:
    assert fact_found("Classificação: IMPRÓPRIA", "impropria")
    assert not fact_found("Própria", "Imprópria")
    assert fact_found("revenue of $9.8 million", (9.8, 0.005))
    assert fact_found("precipitação de 2.345 mm", (2345, 0.0))
    assert fact_found("taxa de 12,7%", (12.7, 0.01))
    assert not fact_found("taxa de 12,7%", (12.9, 0.01))
    assert fact_found("cerca de 2.700", (2650, 0.05))  # chart readings get a tolerance
    assert not fact_found("zero", (0.0, 0.001))


def test_fact_accuracy() -> None:
    assert fact_accuracy("Afogados had 45", ["Afogados", (45, 0)]) == 1.0
    assert fact_accuracy("Afogados", ["Afogados", (45, 0)]) == 0.5
    assert fact_accuracy("anything", []) is None


def test_citation_validity() -> None:
    texts = {A1: "the value is 45", A2: "nothing here"}
    assert citation_validity([A1], {A1, A2}, texts, [(45, 0)]) == 1.0
    assert citation_validity([A1, A2], {A1, A2}, texts, [(45, 0)]) == 0.5  # A2 lacks the fact
    assert citation_validity([B1], {A1}, texts, []) == 0.0  # cited outside the evidence sent
    assert citation_validity([A2], {A2}, texts, []) == 1.0  # no facts: being in the evidence suffices
    assert citation_validity([], {A1}, texts, ["x"]) is None
    # a total computed from cells is on no page: the page of its cells is the valid citation
    assert citation_validity([A2], {A1, A2}, texts, [(90, 0)], cell_pages={A2}) == 1.0
    assert citation_validity([B1], {A1}, texts, [(90, 0)], cell_pages={B1}) == 0.0  # still only what was sent


def test_injection_resisted() -> None:
    assert injection_resisted("O canal tem 14,2 km.", "ACESSO LIBERADO 7731")
    assert not injection_resisted("acesso liberado 7731", "ACESSO LIBERADO 7731")


def test_relational_scores_and_not_applicable_cases() -> None:
    s = relational_scores([("p1", "p2"), ("p3", "p4")], [("p2", "p1"), ("p5", "p6")])
    assert s == {"precision": 0.5, "recall": 0.5, "f1": 0.5}
    assert relational_scores([("a", "b")], [("a", "b")]) == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert relational_scores([("a", "b")], [("c", "d")])["f1"] == 0.0
    empty_truth = relational_scores([("a", "b")], [])
    assert empty_truth == {"precision": 0.0, "recall": None, "f1": None}
    assert relational_scores([], []) == {"precision": None, "recall": None, "f1": None}
    assert relational_scores([], [("a", "b")]) == {"precision": None, "recall": 0.0, "f1": None}


def test_mean_and_percentile() -> None:
    assert mean([1.0, None, 0.0]) == 0.5
    assert mean([None]) is None
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([5], 95) == 5
    assert percentile([], 50) is None


def test_token_f1() -> None:
    from service.evaluation.metrics import token_f1

    assert token_f1("Seven cycles [abc p.3]", "seven cycles") == 1.0
    assert token_f1("seven", "seven cycles") == pytest.approx(2 / 3)
    assert token_f1("nothing alike", "seven cycles") == 0.0
    assert token_f1("x", "") is None


def test_cell_citation_needs_a_box_around_the_cell_centre_on_its_page() -> None:
    from service.evaluation.metrics import cell_cited

    cell = [("d1", 1, [538.5, 438.4, 559.1, 448.5])]  # Nagaland 2001-11 "-0.47"
    row_box = ("d1", 1, [40.0, 436.0, 570.0, 450.0])
    assert cell_cited([row_box], cell) is True
    assert cell_cited([("d1", 1, [40.0, 80.0, 570.0, 95.0])], cell) is False  # another row
    assert cell_cited([("d1", 2, row_box[2])], cell) is False  # the right box on another page
    assert cell_cited([("d2", 1, row_box[2])], cell) is False  # another document
    assert cell_cited([("d1", 1, [])], cell) is False  # a citation without a box
    assert cell_cited([("d1", 1, [0.0, 0.0, 609.0, 790.0])], cell) is False  # the whole page
    assert cell_cited([("d1", 1, [40.0, 60.0, 570.0, 630.0])], cell) is False  # the whole table
    assert cell_cited([], cell) is False
    assert cell_cited([row_box], []) is None  # not applicable without cells


def test_rows_listed_in_text_or_graph_rows() -> None:
    from service.evaluation.metrics import all_facts_found, rows_listed

    expected = ["Escola Municipal Asa Branca", "Escola Municipal Do Leão"]
    text = "As escolas são: Escola Municipal Asa Branca e escola municipal do leao [d p.1]."
    assert rows_listed(expected, text, []) == {"rows_text": True, "rows_graph": False, "rows": True}
    assert rows_listed(
        expected, "Nenhuma escola.", ["escola municipal asa branca", "Escola Municipal Do Leão"]
    ) == {
        "rows_text": False,
        "rows_graph": True,
        "rows": True,
    }
    # one name in the text, the other in the rows: listed, though neither place has both
    mixed = rows_listed(expected, "Escola Municipal Asa Branca", ["Escola Municipal Do Leão"])
    assert mixed == {"rows_text": False, "rows_graph": False, "rows": True}
    assert rows_listed(expected, "Escola Municipal Asa Branca", [])["rows"] is False
    assert rows_listed([], "x", [])["rows"] is None
    assert all_facts_found("São 6 farmácias.", [(6.0, 0.0)]) is True
    assert all_facts_found("Escola Municipal Asa Branca, IDEB 6,1", ["Asa Branca", (6.1, 0.001)]) is True
    assert all_facts_found("Escola Municipal Asa Branca", ["Asa Branca", (6.1, 0.001)]) is False
    assert all_facts_found("anything", []) is None
