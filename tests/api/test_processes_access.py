"""Credentials changed while two server processes serve one PostgreSQL database (issue 14;
the revoked-key-on-two-processes item of issue 13).

Both processes first confirm the old credentials (each remembers the pair); then
`collab workspace rotate-key | revoke-token | rotate-secret --db URL` runs as an operator runs
it, with the servers up. From the command's return on, each process must refuse the old key or
token, sign user tokens with the new secret, and accept the new key or token: at once, with no
delay allowed (the stored credential epoch is read with every request). Runs on PostgreSQL
whatever COLLAB_TEST_BACKEND says (skipped with COLLAB_SKIP_POSTGRES=1)."""

from __future__ import annotations

import json
import subprocess
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from api.support import DEF_LIST, Server, collab_bin, create_workspace, fresh_db, http_client, skip_without_postgres
from toolkit.tokens import UserTokenError, verify_user_token

TOKEN = "/v2/auth/generate_token"
UADD, UGET = "/v2/users/add", "/v2/users/get"
USER = {
    "userId": "ann",
    "userProperties": {"name": "Ann", "email": "a@x.io"},
    "permissions": {"resources": [{"type": "organization", "id": "acme"}]},
}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """Two `collab serve` processes on a new PostgreSQL database with workspaces a, b (for the
    key and the token) and c (for the secret)."""
    skip_without_postgres()
    root = tmp_path_factory.mktemp("processes-access")
    db = fresh_db(root, "creds", backend="postgres")
    workspaces = [create_workspace(db) for _ in range(3)]
    srv = Server(db, root / "server.log", processes=2).start()
    try:
        yield srv, *workspaces
    finally:
        srv.stop()


def workspace_cli(*args: str) -> dict:
    """`collab workspace ARGS` as a separate process, the way an operator runs it."""
    proc = subprocess.run([collab_bin(), "workspace", *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def process(srv: Server, i: int, key: str, token: str) -> httpx.Client:
    """A client of process ``i`` alone."""
    headers = {"content-type": "application/json", "x-service-api-key": key, "x-service-auth-token": token}
    return http_client(base_url=f"http://127.0.0.1:{srv.ports[i]}", headers=headers, timeout=60)


def status(client: httpx.Client) -> int:
    return client.post(DEF_LIST, json={"data": {}}).status_code


def refused_at_once(clients: list[httpx.Client], rounds: int = 20) -> None:
    """Every request from each client (one per process), from the first on, is answered 401."""
    for _ in range(rounds):
        assert [status(c) for c in clients] == [401] * len(clients)


def test_a_key_rotated_and_a_token_revoked_by_the_cli_are_refused_by_both_processes(cluster):
    srv, a, b, _ = cluster
    old_a = [process(srv, i, a["apiKey"], a["authToken"]) for i in (0, 1)]
    old_b = [process(srv, i, b["apiKey"], b["authToken"]) for i in (0, 1)]
    assert [status(c) for c in old_a + old_b] == [200] * 4  # both processes now remember both pairs

    rotated = workspace_cli("rotate-key", "--db", str(srv.db), "--api-key", a["apiKey"])
    refused_at_once(old_a)
    for i in (0, 1):
        with process(srv, i, rotated["apiKey"], a["authToken"]) as new:
            assert status(new) == 200  # the new key works at once, on both
    assert [status(c) for c in old_b] == [200, 200]  # the other workspace is untouched

    revoked = workspace_cli("revoke-token", "--db", str(srv.db), "--token", b["authToken"], "--issue-new")
    assert revoked["revoked"] is True
    refused_at_once(old_b)
    for i in (0, 1):
        with process(srv, i, b["apiKey"], revoked["authToken"]) as new:
            assert status(new) == 200
    for client in old_a + old_b:
        client.close()


def test_both_processes_sign_with_a_secret_rotated_by_the_cli(cluster):
    srv, _, _, c = cluster
    clients = [process(srv, i, c["apiKey"], c["authToken"]) for i in (0, 1)]

    def signed() -> list[str]:
        answers = [c.post(TOKEN, json={"data": USER}) for c in clients]
        assert [r.status_code for r in answers] == [200, 200], [r.text for r in answers]
        return [r.json()["result"]["data"]["token"] for r in answers]

    before = signed()
    rotated = workspace_cli("rotate-secret", "--db", str(srv.db), "--api-key", c["apiKey"], "--grace-hours", "0")
    new_secret = rotated["jwtSecret"]
    for token in before:
        with pytest.raises(UserTokenError):
            verify_user_token(token, [new_secret])
    for _ in range(10):  # from the first request after the command on, both sign with the new secret
        for token in signed():
            verify_user_token(token, [new_secret])
    for client in clients:
        client.close()


def test_advanced_queries_switched_by_the_cli_apply_on_both_processes_at_once(cluster):
    srv = cluster[0]
    d = create_workspace(srv.db)
    clients = [process(srv, i, d["apiKey"], d["authToken"]) for i in (0, 1)]
    users = {"data": {"organizationId": "acme"}}
    added = clients[0].post(UADD, json={"data": {"organizationId": "acme", "users": [{"userId": "ann"}]}})
    assert added.status_code == 200, added.text

    def codes() -> list[int]:
        return [c.post(UGET, json=users).status_code for c in clients]

    assert codes() == [200, 200]  # both processes now remember the pair, and the setting with it
    assert (
        workspace_cli("settings", "--db", str(srv.db), "--api-key", d["apiKey"], "--advanced-queries", "off")[
            "advancedQueries"
        ]
        is False
    )
    for _ in range(10):  # from the first request after the command on
        answers = [c.post(UGET, json=users) for c in clients]
        assert [a.json()["error"]["status"] for a in answers] == ["FAILED_PRECONDITION"] * 2
    workspace_cli("settings", "--db", str(srv.db), "--api-key", d["apiKey"], "--advanced-queries", "on")
    assert codes() == [200, 200]
    for client in clients:
        client.close()


def test_members_added_at_once_through_both_processes_are_each_listed_once(cluster):
    """Two processes adding members to one organization at the same moment hand out distinct
    list positions, so paging through the members returns each exactly once."""
    srv, _, _, c = cluster
    org = f"org-{uuid.uuid4().hex[:10]}"
    clients = [process(srv, i, c["apiKey"], c["authToken"]) for i in (0, 1)]
    batches = [[f"u{n:02d}-{k}" for k in range(3)] for n in range(24)]

    def add(n: int) -> None:
        users = [{"userId": u, "name": u} for u in batches[n]]
        answer = clients[n % 2].post(UADD, json={"data": {"organizationId": org, "users": users}})
        assert answer.status_code == 200, answer.text

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(add, range(len(batches))))
    listed, token = [], None
    while True:
        data = {"organizationId": org, "pageSize": 5, **({"pageToken": token} if token else {})}
        answer = clients[len(listed) % 2].post(UGET, json={"data": data})
        assert answer.status_code == 200, answer.text
        page = answer.json()["result"]
        listed += [u["userId"] for u in page["data"]]
        token = page["nextPageToken"]
        if token is None:
            break
    assert sorted(listed) == sorted(u for batch in batches for u in batch)
    for client in clients:
        client.close()
