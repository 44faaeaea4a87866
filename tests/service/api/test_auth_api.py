"""Auth over real HTTP: roles (a reader reads but changes nothing; delete is limited to a
document's uploader, keys in all its groups and admins), reserved group names refused on
keys and uploads, traces kept per tenant and gone with the document they name, and
wrong-key guesses throttled per client address (429 with Retry-After)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from index.acl import PUBLIC_ACL
from models.text_encoder import TextEncoder
from service.auth import KeyStore
from service.carta import Carta
from tests.conftest import settings_for
from tests.service.test_jobs import pdf
from tests.utils.api import ingest_via_api
from tests.utils.servers import LiveServer

KEYS = {  # name: (tenant, groups, role)
    "admin": ("acme", [], "admin"),
    "member": ("acme", [], "member"),
    "member2": ("acme", [], "member"),
    "fin": ("acme", ["finance"], "member"),
    "reader": ("acme", ["finance"], "reader"),
    "beta": ("beta", [], "member"),
}


class Keys:
    """A live server and a client per key of KEYS."""

    def __init__(self, server: LiveServer) -> None:
        self.url = server.url
        store = KeyStore(server.carta.settings.auth_path)
        self.secrets = {
            name: store.create(tenant, groups, role=role, label=name)[1]
            for name, (tenant, groups, role) in KEYS.items()
        }
        store.close()

    def client(self, name: str) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {self.secrets[name]}"}, timeout=120
        )


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory, text_encoder: TextEncoder) -> Iterator[Keys]:
    settings = settings_for(tmp_path_factory.mktemp("auth"), rate_limit_per_second=0, auth_fail_per_second=0)
    carta = Carta(settings, text_encoder=text_encoder)
    with LiveServer(carta) as server:
        yield Keys(server)
    carta.close()


def upload(client: httpx.Client, word: str, **form: str) -> str:
    return ingest_via_api(client, f"{word}.pdf", pdf(1, word), **form)["id"]


def test_a_reader_reads_but_changes_nothing(keys: Keys) -> None:
    with keys.client("fin") as fin, keys.client("reader") as reader:
        doc = upload(fin, "leitura", groups="finance")
        assert reader.get("/v1/documents").json()[0]["id"] == doc
        assert reader.get(f"/v1/documents/{doc}").status_code == 200
        assert reader.get(f"/v1/documents/{doc}/pages/1").status_code == 200
        assert reader.post("/v1/search", json={"query": "leitura"}).json()["results"]
        assert reader.post("/v1/ask", json={"question": "leitura página?"}).status_code == 200

        refused = reader.post("/v1/documents", files={"file": ("x.pdf", pdf(1, "novo"))})
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "read_only_key"
        assert reader.delete(f"/v1/documents/{doc}").status_code == 403
        assert reader.delete("/v1/documents/unknown").status_code == 403  # says nothing about ids
        csv = b"name,lat,lon\nEscola,-8.05,-34.9\n"
        r = reader.post("/v1/datasets", files={"file": ("s.csv", csv)}, data={"category": "school"})
        assert r.status_code == 403 and r.json()["error"]["code"] == "read_only_key"
        assert reader.delete("/v1/datasets/any").status_code == 403
        assert reader.get("/v1/keys").status_code == 403
        assert reader.post("/v1/keys", json={}).status_code == 403
        assert fin.get(f"/v1/documents/{doc}").status_code == 200  # nothing changed
        assert fin.delete(f"/v1/documents/{doc}").status_code == 200


def test_delete_is_limited_to_the_uploader_the_groups_and_admins(keys: Keys) -> None:
    with (
        keys.client("admin") as admin,
        keys.client("member") as member,
        keys.client("member2") as member2,
        keys.client("fin") as fin,
    ):
        tenant_wide = upload(admin, "diretoria")
        r = member.delete(f"/v1/documents/{tenant_wide}")
        assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"
        assert fin.delete(f"/v1/documents/{tenant_wide}").status_code == 403
        assert member.get(f"/v1/documents/{tenant_wide}").status_code == 200  # still there

        own = upload(member, "proprio")
        assert member2.delete(f"/v1/documents/{own}").status_code == 403  # another member's upload
        assert member.delete(f"/v1/documents/{own}").status_code == 200  # its uploader may

        finance = upload(admin, "financas", groups="finance")
        assert member.delete(f"/v1/documents/{finance}").status_code == 404  # cannot even see it
        assert fin.delete(f"/v1/documents/{finance}").status_code == 200  # in all its groups

        members = upload(member2, "membros")
        assert admin.delete(f"/v1/documents/{members}").status_code == 200
        assert admin.delete(f"/v1/documents/{tenant_wide}").status_code == 200


def test_reserved_group_names_are_refused(keys: Keys) -> None:
    with keys.client("admin") as admin:
        for groups in ([PUBLIC_ACL], ["finance", "_staff"]):
            r = admin.post("/v1/keys", json={"groups": groups})
            assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_groups"
        for groups in (PUBLIC_ACL, f"finance,{PUBLIC_ACL}"):
            files = {"file": ("p.pdf", pdf(1, "publico"))}
            r = admin.post("/v1/documents", files=files, data={"groups": groups})
            assert r.status_code == 400 and "reserved" in r.json()["error"]["message"]
        assert not any(g.startswith("_") for k in admin.get("/v1/keys").json() for g in k["groups"])
        assert "p.pdf" not in {d["filename"] for d in admin.get("/v1/documents").json()}  # nothing stored


def test_keys_api_takes_a_role(keys: Keys) -> None:
    with keys.client("admin") as admin:
        made = admin.post("/v1/keys", json={"role": "reader", "groups": ["finance"]})
        assert made.status_code == 201 and made.json()["role"] == "reader" and not made.json()["admin"]
        listed = {k["id"]: k["role"] for k in admin.get("/v1/keys").json()}
        assert listed[made.json()["id"]] == "reader" and "member" in listed.values()
        assert admin.post("/v1/keys", json={"admin": True}).json()["role"] == "admin"
        assert admin.post("/v1/keys", json={"admin": True, "role": "reader"}).status_code == 400
        assert admin.post("/v1/keys", json={"role": "owner"}).status_code == 422
    headers = {"Authorization": f"Bearer {made.json()['secret']}"}
    with httpx.Client(base_url=keys.url, headers=headers, timeout=60) as new_reader:
        assert new_reader.get("/v1/documents").status_code == 200
        r = new_reader.post("/v1/documents", files={"file": ("x.pdf", pdf(1, "novo"))})
        assert r.status_code == 403


def test_traces_are_per_tenant_and_go_with_the_document(keys: Keys) -> None:
    same = {"X-Request-ID": "chosen-by-both"}
    with keys.client("member") as acme, keys.client("beta") as beta:
        a_doc = upload(acme, "rastro")
        b_doc = upload(beta, "pegada")
        assert acme.post("/v1/ask", json={"question": "rastro página?"}, headers=same).status_code == 200
        assert beta.post("/v1/ask", json={"question": "pegada página?"}, headers=same).status_code == 200
        a_trace = acme.get("/v1/traces/chosen-by-both")
        b_trace = beta.get("/v1/traces/chosen-by-both")
        assert a_trace.status_code == 200 and b_trace.status_code == 200  # beta did not overwrite acme
        assert {e["doc_id"] for e in a_trace.json()["evidence"]} == {a_doc}
        assert {e["doc_id"] for e in b_trace.json()["evidence"]} == {b_doc}

        assert acme.delete(f"/v1/documents/{a_doc}").status_code == 200
        assert acme.get("/v1/traces/chosen-by-both").status_code == 404  # it named the erased doc
        assert beta.get("/v1/traces/chosen-by-both").status_code == 200  # beta's is untouched


def test_wrong_keys_are_throttled_per_address(serve: Callable[..., LiveServer], tmp_path: Path) -> None:
    server = serve(auth_fail_burst=5, auth_fail_per_second=0.1)
    store = KeyStore(server.carta.settings.auth_path)
    secret = store.create("acme")[1]
    store.close()
    with httpx.Client(base_url=server.url, timeout=60) as client:
        wrong = [client.get("/v1/documents", headers={"X-API-Key": f"guess-{i}"}) for i in range(30)]
        assert [r.status_code for r in wrong[:5]] == [401] * 5
        throttled = wrong[5:]
        assert {r.status_code for r in throttled} == {429}
        assert throttled[0].json()["error"]["code"] == "auth_throttled"
        assert 1 <= int(throttled[0].headers["retry-after"]) <= 10  # one try back at 0.1/s
        # while throttled a right key looks like a wrong one: guessing learns nothing
        assert client.get("/v1/documents", headers={"X-API-Key": secret}).status_code == 429
        text = client.get("/metrics").text
        assert "carta_auth_failures_total 5.0" in text and "carta_auth_throttled_total 26.0" in text
