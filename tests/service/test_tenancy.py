"""Tenant isolation and ACL groups over real HTTP: a key of another tenant (or outside a
document's groups) can neither list, fetch, page through, see images of, search, ask
about, follow the jobs of, read the traces of nor delete a document; randomised probes,
zero leaks. No key (or a bad one) is 401 on every /v1 route once a key exists."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from models.text_encoder import TextEncoder
from service.auth import KeyStore
from service.carta import Carta
from tests.conftest import settings_for
from tests.support import LiveServer, ingest_via_api

QUERIES = [
    "receita do SKU NW-4471",
    "What was the Q3 2024 revenue?",
    "pontos de alagamento por bairro",
    "coordenadas do Parque da Jaqueira",
    "drenagem nota técnica",
    "chuvas 2024 gráfico",
    "Recife",
    "churn",
]


class World:
    """Two tenants, ACL groups, documents, jobs and traces of each."""

    def __init__(self, server: LiveServer, samples: Path) -> None:
        self.url = server.url
        keys = KeyStore(server.carta.settings.auth_path)
        self.secrets: dict[str, str] = {}
        for name, tenant, groups, admin in [
            ("a", "acme", [], False),
            ("a_fin", "acme", ["finance"], False),
            ("a_admin", "acme", [], True),
            ("b", "beta", [], False),
            ("b_admin", "beta", [], True),
        ]:
            self.secrets[name] = keys.create(tenant, groups, admin, label=name)[1]
        keys.close()
        read = lambda n: (samples / n).read_bytes()  # noqa: E731
        with self.client("a") as a, self.client("a_fin") as fin, self.client("b") as b:
            self.a_public = ingest_via_api(a, "q.pdf", read("quarterly_report_q3_2024.pdf"))["id"]
            self.a_finance = ingest_via_api(
                fin, "r.pdf", read("relatorio_ambiental_recife_2024.pdf"), groups="finance"
            )["id"]
            self.b_doc = ingest_via_api(b, "n.pdf", read("nota_tecnica_drenagem_2024.pdf"))["id"]
            # the same file in both tenants: one id, two separate documents
            self.shared_a = ingest_via_api(a, "g.png", read("grafico_chuvas_2024.png"))["id"]
            self.shared_b = ingest_via_api(b, "g.png", read("grafico_chuvas_2024.png"))["id"]
            assert self.shared_a == self.shared_b
            r = a.post("/v1/documents", files={"file": ("x.pdf", read("quarterly_report_q3_2024.pdf"))})
            self.a_job = r.json()["job"]["id"]
            asked = a.post("/v1/ask", json={"question": "What was the Q3 2024 revenue of SKU NW-4471?"})
            self.a_trace = asked.headers["x-request-id"]

    def client(self, key: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.secrets[key]}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=120)


@pytest.fixture(scope="module")
def world(
    tmp_path_factory: pytest.TempPathFactory, text_encoder: TextEncoder, samples_dir: Path
) -> Iterator[World]:
    # no rate limits: the probes send many requests and many bad keys from one address
    data_dir = tmp_path_factory.mktemp("tenancy")
    settings = settings_for(data_dir, rate_limit_per_second=0, auth_fail_per_second=0)
    carta = Carta(settings, text_encoder=text_encoder)
    with LiveServer(carta) as server:
        yield World(server, samples_dir)
    carta.close()


def doc_ids_in(body: Any) -> set[str]:
    if isinstance(body, list):
        return {d["id"] for d in body}
    hits = body.get("results") or body.get("evidence") or []
    return {h["doc_id"] for h in hits} | {c["doc_id"] for c in body.get("citations", [])}


def probe_document(client: httpx.Client, doc_id: str) -> list[str]:
    """Every per-document route; returns the ones that leaked (anything but 404)."""
    leaks = []
    for path in [
        f"/v1/documents/{doc_id}",
        f"/v1/documents/{doc_id}/pages/1",
        f"/v1/documents/{doc_id}/pages/1/image",
        f"/v1/documents/{doc_id}/pages/1/thumbnail",
    ]:
        if client.get(path).status_code != 404:
            leaks.append(path)
    if client.delete(f"/v1/documents/{doc_id}").status_code != 404:
        leaks.append(f"DELETE {doc_id}")
    return leaks


def test_no_key_or_a_bad_key_is_401_on_every_v1_route(world: World) -> None:
    with world.client(None) as anonymous:
        spec = anonymous.get("/openapi.json").json()
        routes = [(m, p) for p, ops in spec["paths"].items() for m in ops if p.startswith("/v1/")]
        assert len(routes) >= 12
        for bad in [
            {},
            {"Authorization": "Bearer nope"},
            {"X-API-Key": "carta_x_y"},
            {"Authorization": "Basic a"},
        ]:
            for method, path in routes:
                url = path.replace("{doc_id}", world.a_public).replace("{page_no}", "1")
                url = url.replace("{job_id}", world.a_job).replace("{request_id}", world.a_trace)
                url = url.replace("{key_id}", "x")
                r = anonymous.request(method.upper(), url, headers=bad, json={})
                assert r.status_code == 401, (method, path, bad, r.status_code)
                assert r.json()["error"]["code"] in {"unauthorized", "invalid_key"}
        assert anonymous.get("/healthz").status_code == 200  # ops probes stay open


def test_other_tenant_sees_nothing_randomised(world: World) -> None:
    rng = random.Random(8)
    forbidden_for_b = {world.a_public, world.a_finance}
    with world.client("b") as b, world.client("b_admin") as b_admin:
        for client in (b, b_admin):
            assert doc_ids_in(client.get("/v1/documents").json()) == {world.b_doc, world.shared_b}
            for doc_id in forbidden_for_b:
                assert probe_document(client, doc_id) == []
            assert client.get(f"/v1/jobs/{world.a_job}").status_code == 404
            assert client.get(f"/v1/jobs/{world.a_job}/events").status_code == 404
            assert client.get(f"/v1/traces/{world.a_trace}").status_code == 404
        for _ in range(24):
            client = rng.choice([b, b_admin])
            body: dict[str, Any] = {"top_k": rng.randint(1, 20)}
            if rng.random() < 0.5:
                body["doc_ids"] = rng.sample(sorted(forbidden_for_b | {world.b_doc}), rng.randint(1, 3))
            if rng.random() < 0.5:
                found = client.post("/v1/search", json={**body, "query": rng.choice(QUERIES)}).json()
            else:
                found = client.post("/v1/ask", json={**body, "question": rng.choice(QUERIES)}).json()
            assert not doc_ids_in(found) & forbidden_for_b, found
    with world.client("a") as a:  # nothing the probes did touched tenant acme
        assert doc_ids_in(a.get("/v1/documents").json()) == {world.a_public, world.shared_a}
        assert a.get(f"/v1/documents/{world.a_public}/pages/1/image").status_code == 200
        assert a.get(f"/v1/traces/{world.a_trace}").status_code == 200


def test_acl_groups_inside_a_tenant(world: World) -> None:
    rng = random.Random(9)
    with world.client("a") as a, world.client("a_fin") as fin, world.client("a_admin") as admin:
        assert probe_document(a, world.a_finance) == []
        for _ in range(10):
            q = {"query": rng.choice(QUERIES), "top_k": rng.randint(5, 20)}
            assert world.a_finance not in doc_ids_in(a.post("/v1/search", json=q).json())
        flood = {"query": "pontos de alagamento por bairro", "top_k": 10}
        assert world.a_finance in doc_ids_in(fin.post("/v1/search", json=flood).json())
        assert world.a_finance in doc_ids_in(admin.post("/v1/search", json=flood).json())
        assert fin.get(f"/v1/documents/{world.a_finance}").json()["acl"] == ["finance"]
        assert doc_ids_in(admin.get("/v1/documents").json()) >= {world.a_public, world.a_finance}
        # a key can only share with its own groups; only admins manage keys
        r = a.post("/v1/documents", files={"file": ("t.geojson", b"{}")}, data={"groups": "finance"})
        assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden_group"
        assert a.get("/v1/keys").status_code == 403
        assert a.get(f"/v1/jobs/{world.a_job}").status_code == 200  # its own job
        assert fin.get(f"/v1/jobs/{world.a_job}").status_code == 404  # another key's job


def test_deleting_a_shared_file_in_one_tenant_keeps_the_other(world: World) -> None:
    with world.client("b") as b, world.client("a") as a:
        assert probe_document(b, world.a_public) == []
        assert b.delete(f"/v1/documents/{world.shared_b}").status_code == 200
        assert world.shared_b not in doc_ids_in(b.get("/v1/documents").json())
        assert a.get(f"/v1/documents/{world.shared_a}").status_code == 200
        assert a.get(f"/v1/documents/{world.shared_a}/pages/1/thumbnail").status_code == 200


def test_admin_api_creates_and_revokes_keys_of_its_own_tenant(world: World) -> None:
    with world.client("b_admin") as b_admin:
        created = b_admin.post("/v1/keys", json={"groups": ["ops"], "label": "probe"})
        assert created.status_code == 201, created.text
        key = created.json()
        assert key["tenant"] == "beta" and key["secret"].startswith("carta_")
        assert all(k["tenant"] == "beta" for k in b_admin.get("/v1/keys").json())
        with httpx.Client(base_url=world.url, headers={"X-API-Key": key["secret"]}) as new:
            assert doc_ids_in(new.get("/v1/documents").json()) == {world.b_doc}
            assert b_admin.delete(f"/v1/keys/{key['id']}").status_code == 200
            assert new.get("/v1/documents").status_code == 401
    with world.client("a_admin") as a_admin:  # another tenant's key id is not found
        assert a_admin.delete(f"/v1/keys/{key['id']}").status_code == 404


def test_rate_limit_per_key_is_429(make_carta: Any) -> None:
    server = LiveServer(make_carta(rate_limit_per_second=0.5, rate_limit_burst=3))
    with server, httpx.Client(base_url=server.url) as client:
        codes = [client.get("/v1/documents").status_code for _ in range(5)]
        assert codes[:3] == [200, 200, 200] and codes[3:] == [429, 429]
        r = client.get("/v1/documents")
        assert r.json()["error"]["code"] == "rate_limited" and r.headers["retry-after"] == "1"


def test_poi_datasets_stay_in_their_tenant(world: World) -> None:
    geojson = (
        b'{"type": "FeatureCollection", "features": ['
        b'{"type": "Feature", "properties": {"name": "Escola A"}, '
        b'"geometry": {"type": "Point", "coordinates": [-34.90, -8.05]}},'
        b'{"type": "Feature", "properties": {"name": "Escola B"}, '
        b'"geometry": {"type": "Point", "coordinates": [-34.91, -8.06]}}]}'
    )
    with world.client("a") as a, world.client("b") as b:
        up = a.post("/v1/datasets", files={"file": ("escolas.geojson", geojson)}, data={"category": "school"})
        assert up.status_code == 201, up.text
        dataset = up.json()["dataset"]["id"]
        assert b.get("/v1/datasets").json() == []
        assert b.get(f"/v1/datasets/{dataset}").status_code == 404
        assert b.delete(f"/v1/datasets/{dataset}").status_code == 404
        assert [d["id"] for d in a.get("/v1/datasets").json()] == [dataset]
