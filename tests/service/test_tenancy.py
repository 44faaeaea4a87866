"""Tenant isolation and ACL groups over real HTTP: a key of another tenant (or outside a
document's groups) can neither list, fetch, page through, see images of, search, ask
about, follow the jobs of, read the traces of nor delete a document; randomised probes,
zero leaks. Inside a tenant, graph answers (zones, counts, community summaries) name only
documents the caller may see, a duplicate upload of a hidden document names nothing, and
a job is visible to every key that may see its document. No key (or a bad one) is 401 on
every /v1 route once a key exists."""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import h3
import httpx
import pytest

from models.text_encoder import TextEncoder
from service.auth import KeyStore
from service.carta import Carta
from tests.conftest import settings_for
from tests.utils.api import ingest_via_api, wait_for_job
from tests.utils.documents import make_pdf
from tests.utils.servers import LiveServer

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
        self.carta = server.carta
        keys = KeyStore(server.carta.settings.auth_path)
        self.secrets: dict[str, str] = {}
        for name, tenant, groups, admin in [
            ("a", "acme", [], False),
            ("a_fin", "acme", ["finance"], False),
            ("a_fin2", "acme", ["finance"], False),
            ("a_admin", "acme", [], True),
            ("b", "beta", [], False),
            ("b_admin", "beta", [], True),
        ]:
            self.secrets[name] = keys.create(tenant, groups, admin, label=name)[1]
        keys.close()
        self.samples = samples
        read = self.read
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

    def read(self, name: str) -> bytes:
        return (self.samples / name).read_bytes()

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
        # another key's job of a document it may see; a job of a hidden document is not found
        assert fin.get(f"/v1/jobs/{world.a_job}").status_code == 200
        fin_job = fin.post(
            "/v1/documents", files={"file": ("r.pdf", world.read("relatorio_ambiental_recife_2024.pdf"))}
        ).json()["job"]["id"]
        assert fin.get(f"/v1/jobs/{fin_job}").status_code == 200
        assert admin.get(f"/v1/jobs/{fin_job}").status_code == 200
        assert a.get(f"/v1/jobs/{fin_job}").status_code == 404
        assert a.get(f"/v1/jobs/{fin_job}/events").status_code == 404


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


def upload(client: httpx.Client, name: str, data: bytes, **form: str) -> httpx.Response:
    return client.post("/v1/documents", files={"file": (name, data)}, data=form)


def test_a_duplicate_of_a_hidden_document_names_nothing(world: World) -> None:
    hidden = world.read("relatorio_ambiental_recife_2024.pdf")
    doc = world.carta.registry.get("acme", world.a_finance)
    assert doc is not None
    named = [world.a_finance, doc.title, "r.pdf", json.dumps(doc.metadata)[1:-1] or "\x00"]
    with world.client("a") as a, world.client("a_fin2") as fin2, world.client("a_admin") as admin:
        for form in ({}, {"title": "mine", "metadata": '{"lat": -8.05, "lon": -34.9}'}):
            r = upload(a, "mine.pdf", hidden, **form)
            assert r.status_code == 409 and r.json()["error"]["code"] == "duplicate_content", r.text
            assert not [s for s in named if s in r.text], r.text
        assert probe_document(a, world.a_finance) == []  # and nothing was created or changed
        assert world.carta.registry.get("acme", world.a_finance).acl == ["finance"]
        for client in (fin2, admin):  # keys that may see it get the document
            r = upload(client, "again.pdf", hidden)
            assert r.status_code == 202 and r.json()["created"] is False
            assert r.json()["document"]["id"] == world.a_finance
            assert client.get(f"/v1/jobs/{r.json()['job']['id']}").status_code == 200


def concurrent_uploads(world: World, uploads: list[tuple[str, dict[str, str]]], data: bytes) -> list:
    """(key, response) of the uploads, sent at once."""
    barrier = threading.Barrier(len(uploads))
    out: list[tuple[str, httpx.Response] | None] = [None] * len(uploads)

    def send(i: int, key: str, form: dict[str, str]) -> None:
        with world.client(key) as client:
            barrier.wait()
            out[i] = (key, upload(client, f"{key}.pdf", data, **form))

    threads = [threading.Thread(target=send, args=(i, k, f)) for i, (k, f) in enumerate(uploads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert all(o is not None for o in out)
    return out  # type: ignore[return-value]


def test_concurrent_uploads_by_three_keys_share_a_job_each_can_follow(world: World) -> None:
    data = make_pdf([f"concurrent upload {random.Random(14).random()} drainage in Recife"])
    keys = ["a", "a_fin", "a_fin2"] * 3 + ["a"]
    results = concurrent_uploads(world, [(k, {}) for k in keys], data)
    assert all(r.status_code == 202 for _, r in results), [r.text for _, r in results]
    assert sum(r.json()["created"] for _, r in results) == 1
    doc_ids = {r.json()["job"]["document_id"] for _, r in results}
    assert len(doc_ids) == 1
    for key, r in results:  # every uploader follows the job it was given, to the end
        with world.client(key) as client:
            job = wait_for_job(client, r.json()["job"])
            assert job["status"] == "ready" and job["document_id"] in doc_ids


def test_concurrent_uploads_with_groups_never_hand_a_hidden_job_out(world: World) -> None:
    data = make_pdf([f"finance concurrent {random.Random(15).random()} budget of Recife"])
    uploads = [("a_fin", {"groups": "finance"}), ("a_fin2", {"groups": "finance"}), ("a", {})] * 3
    results = concurrent_uploads(world, uploads, data)
    for key, r in results:
        if r.status_code == 409:  # only a key outside the group of the first upload
            assert key == "a" and r.json()["error"]["code"] == "duplicate_content"
            assert "document_id" not in r.text and "job" not in r.json()
            continue
        assert r.status_code == 202, r.text
        with world.client(key) as client:
            job = wait_for_job(client, r.json()["job"])
            assert job["status"] == "ready"
            doc = client.get(f"/v1/documents/{job['document_id']}")
            assert doc.status_code == 200  # a job handed out is of a document its key may see
    acl = world.carta.registry.get("acme", results[0][1].json()["job"]["document_id"]).acl
    if acl == ["finance"]:
        assert [k for k, r in results if r.status_code == 409] == ["a"] * 3


def school_pairs(cells: list[str]) -> bytes:
    """Three schools about 40 m apart at the centre of each cell, as GeoJSON."""
    features = []
    for n, cell in enumerate(cells):
        lat, lon = h3.cell_to_latlng(cell)
        for i in range(3):
            features.append(
                {
                    "type": "Feature",
                    "properties": {"name": f"Escola {n}-{i}"},
                    "geometry": {"type": "Point", "coordinates": [lon + 0.0004 * i, lat]},
                }
            )
    return json.dumps({"type": "FeatureCollection", "features": features}).encode()


def test_graph_answers_name_and_count_only_visible_documents(world: World) -> None:
    graph = world.carta.graph
    assert graph is not None
    zones = graph.store.zones("acme")
    mentioned = sorted(c for c, p in zones.items() if world.a_finance in p["documents"])
    near_recife = [
        c
        for c in mentioned
        if abs(h3.cell_to_latlng(c)[0] + 8.05) < 0.08 and abs(h3.cell_to_latlng(c)[1] + 34.9) < 0.08
    ]
    assert near_recife, mentioned  # the finance report mentions places in Recife
    with world.client("a") as a, world.client("a_fin") as fin, world.client("a_admin") as admin:
        up = a.post(
            "/v1/datasets",
            files={"file": ("recife.geojson", school_pairs(near_recife[:4]))},
            data={"category": "school"},
        )
        assert up.status_code == 201, up.text
        for question in [
            "Which schools are within 300 m of each other in Recife?",
            "Which areas have the most schools?",
            "Quais zonas têm mais escolas?",
        ]:
            bodies = {}
            for name, client in (("a", a), ("fin", fin), ("admin", admin)):
                r = client.post("/v1/ask", json={"question": question})
                assert r.status_code == 200, r.text
                bodies[name] = r.json()
                assert bodies[name]["graph"]["zones"], (question, bodies[name]["answer"])
            for name in ("fin", "admin"):  # the probe would see the document if it leaked
                assert world.a_finance in {d for z in bodies[name]["graph"]["zones"] for d in z["documents"]}
            plain = bodies["a"]
            assert world.a_finance not in json.dumps(plain), question
            hidden = {d.id for d in world.carta.registry.list("acme") if d.acl}  # group-only documents
            assert plain["graph"]["zones"] == [
                {**z, "documents": [d for d in z["documents"] if d not in hidden]}
                for z in bodies["admin"]["graph"]["zones"]
            ]
            for community in plain["graph"].get("communities", []):
                docs = {
                    d
                    for z in plain["graph"]["zones"]
                    if z["community"] == community["h3"]
                    for d in z["documents"]
                }
                admin_summary = next(
                    c["summary"]
                    for c in bodies["admin"]["graph"]["communities"]
                    if c["h3"] == community["h3"]
                )
                assert "mentioned by 0 document(s)" in community["summary"] or docs
                assert community["summary"] != admin_summary
            if "(" in plain["answer"] and "doc.)" in bodies["admin"]["answer"]:
                assert plain["answer"] != bodies["admin"]["answer"]
