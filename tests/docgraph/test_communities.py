"""Communities of the document graph: two groups of entities that co-occur among
themselves and barely with each other are two communities (Leiden, or networkx Louvain
where leidenalg is not installed)."""

from __future__ import annotations

from docgraph.store import detect_communities


def test_two_cliques_joined_by_one_weak_edge_are_two_communities() -> None:
    left = [(a, b, 3.0) for a in (1, 2, 3) for b in (1, 2, 3) if a < b]
    right = [(a, b, 3.0) for a in (4, 5, 6) for b in (4, 5, 6) if a < b]
    found = detect_communities([*left, *right, (3, 4, 1.0)])
    assert set(found) == {1, 2, 3, 4, 5, 6}
    assert found[1] == found[2] == found[3] != found[4] == found[5] == found[6]
    assert detect_communities([]) == {}
