"""Rotating and revoking credentials (issue 13, item 6) on a real DuckDB store: a rotated key
or a revoked token stops working with the very next lookup — also through a running server's
limits middleware, with nothing cached — and a rotated signing secret is still accepted for
its grace period, then not. The key lookup runs the same statement and the same comparisons
for known and unknown keys."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
import uvicorn
from hypothesis import given, settings
from hypothesis import strategies as st

from server import Settings, create_app
from toolkit.errors import ApiError
from toolkit.model import validate
from toolkit.model.access import GenerateToken
from toolkit.services.access.tokens import generate_token
from toolkit.services.context import Services
from toolkit.services.credentials import (
    CredentialError,
    find_workspace,
    issue_token,
    revoke_token,
    rotate_key,
    rotate_secret,
    verification_secrets,
    verify_workspace_token,
)
from toolkit.services.workspaces import Authenticator, create_workspace
from toolkit.store import Store
from toolkit.tokens import LIFETIME_S, UserTokenError, verify_user_token

NOW = 1_700_000_000_000


@pytest.fixture
def store():
    with Store(":memory:") as s:
        yield s


def unauthenticated(auth: Authenticator, key: str | None, token: str | None) -> bool:
    try:
        auth.authenticate(key, token)
    except ApiError as exc:
        assert exc.code.value == "UNAUTHENTICATED"
        return True
    return False


def test_rotated_key_and_revoked_token_stop_at_the_next_lookup(store):
    creds = create_workspace(store, "a", now_ms=NOW)
    other = create_workspace(store, "b", now_ms=NOW)
    auth = Authenticator(store)
    assert auth.authenticate(creds.api_key, creds.auth_token).workspace_id == creds.workspace_id

    new_key = rotate_key(store, creds.workspace_id)
    assert unauthenticated(auth, creds.api_key, creds.auth_token)  # same Authenticator: nothing remembered
    assert auth.authenticate(new_key, creds.auth_token).workspace_id == creds.workspace_id

    second = issue_token(store, creds.workspace_id, now_ms=NOW)
    assert revoke_token(store, creds.auth_token) == creds.workspace_id
    assert unauthenticated(auth, new_key, creds.auth_token)
    assert auth.authenticate(new_key, second).workspace_id == creds.workspace_id
    assert auth.authenticate(other.api_key, other.auth_token).workspace_id == other.workspace_id  # untouched


def test_a_token_of_one_workspace_does_not_open_another(store):
    a, b = create_workspace(store, "a", now_ms=NOW), create_workspace(store, "b", now_ms=NOW)
    auth = Authenticator(store)
    assert unauthenticated(auth, a.api_key, b.auth_token)
    assert unauthenticated(auth, b.api_key, a.auth_token)


def test_the_last_token_is_kept_unless_asked(store):
    creds = create_workspace(store, "a", now_ms=NOW)
    with pytest.raises(CredentialError, match="last auth token"):
        revoke_token(store, creds.auth_token)
    assert Authenticator(store).authenticate(creds.api_key, creds.auth_token)
    revoke_token(store, creds.auth_token, allow_last=True)
    assert unauthenticated(Authenticator(store), creds.api_key, creds.auth_token)
    with pytest.raises(CredentialError, match="no workspace has this auth token"):
        revoke_token(store, creds.auth_token)


def test_workspaces_are_found_by_id_or_key_only(store):
    creds = create_workspace(store, "a", now_ms=NOW)
    assert find_workspace(store, api_key=creds.api_key) == creds.workspace_id
    assert find_workspace(store, workspace_id=creds.workspace_id) == creds.workspace_id
    for bad in ({"api_key": "ak_nope"}, {"workspace_id": "ws_nope"}, {}):
        with pytest.raises(CredentialError):
            find_workspace(store, **bad)


@pytest.fixture(scope="module")
def shared():
    with Store(":memory:") as store:
        yield store, create_workspace(store, "a", now_ms=NOW)


@settings(max_examples=100, deadline=None)
@given(key=st.one_of(st.none(), st.text(max_size=40)), token=st.one_of(st.none(), st.text(max_size=40)))
def test_only_the_exact_pair_authenticates(shared, key, token):
    store, creds = shared
    auth = Authenticator(store)
    assert unauthenticated(auth, key, token)
    assert unauthenticated(auth, creds.api_key, token)
    assert unauthenticated(auth, key, creds.auth_token)
    assert auth.authenticate(creds.api_key, creds.auth_token).workspace_id == creds.workspace_id


class _Recording(Store):
    """A real store that notes the statements its reads run."""

    def __init__(self, path):
        super().__init__(path)
        self.statements: list[str] = []

    def read(self, sql, params=None):
        self.statements.append(sql)
        return super().read(sql, params)


def test_known_and_unknown_keys_take_the_same_path(tmp_path):
    """Same statements, same count, whether the key exists, the token is wrong, or neither is
    known (timing is measured by benchmarks/auth_lookup.py)."""
    store = _Recording(tmp_path / "auth.duckdb")
    try:
        creds = create_workspace(store, "a", now_ms=NOW)
        paths = []
        for key, token in (
            (creds.api_key, creds.auth_token),
            (creds.api_key, "at_wrong"),
            ("ak_unknown", creds.auth_token),
            ("ak_unknown", "at_unknown"),
        ):
            store.statements.clear()
            try:
                Authenticator(store).authenticate(key, token)  # a new one: nothing remembered
            except ApiError:
                pass
            paths.append(tuple(store.statements))
        assert len(set(paths)) == 1, paths
    finally:
        store.close()


def _token(services: Services, workspace) -> str:
    request = validate(
        GenerateToken,
        {
            "userId": "ann",
            "userProperties": {"name": "Ann", "email": "a@x.io"},
            "permissions": {"resources": [{"type": "organization", "id": "acme"}]},
        },
    )
    return generate_token(services, workspace, request)["data"]["token"]


def test_a_rotated_secret_is_accepted_for_its_grace_period(store):
    creds = create_workspace(store, "a", now_ms=NOW)
    services = Services(store)
    auth = Authenticator(store)
    old_token = _token(services, auth.authenticate(creds.api_key, creds.auth_token))
    issued_s = verify_user_token(old_token, verification_secrets(store, creds.workspace_id, now_ms=NOW))["iat"]
    now = issued_s * 1000 + 1000

    grace_ms = 3600_000
    rotated = rotate_secret(store, creds.workspace_id, now_ms=now, grace_ms=grace_ms)
    assert rotated["previousAcceptedUntil"] == now + grace_ms
    new_token = _token(services, auth.authenticate(creds.api_key, creds.auth_token))
    with pytest.raises(UserTokenError, match="signature"):  # new tokens: the new secret only
        verify_user_token(
            new_token,
            [s for s in verification_secrets(store, creds.workspace_id, now_ms=now) if s != rotated["jwtSecret"]],
        )
    assert verify_user_token(new_token, rotated["jwtSecret"])["sub"] == "ann"

    # Within the grace period both verify; after it, only the new one.
    assert verify_workspace_token(store, creds.workspace_id, old_token, now_ms=now + grace_ms - 1)["sub"] == "ann"
    assert verify_workspace_token(store, creds.workspace_id, new_token, now_ms=now + grace_ms - 1)["sub"] == "ann"
    with pytest.raises(UserTokenError, match="signature verification failed"):
        verify_workspace_token(store, creds.workspace_id, old_token, now_ms=now + grace_ms)
    assert verify_workspace_token(store, creds.workspace_id, new_token, now_ms=now + grace_ms)["sub"] == "ann"
    # Another workspace's secrets never verify this one's tokens.
    other = create_workspace(store, "b", now_ms=NOW)
    with pytest.raises(UserTokenError):
        verify_workspace_token(store, other.workspace_id, new_token, now_ms=now)


def test_the_default_grace_covers_a_whole_token_lifetime_and_old_secrets_are_dropped(store):
    creds = create_workspace(store, "a", now_ms=NOW)
    first = rotate_secret(store, creds.workspace_id, now_ms=NOW)
    assert first["previousAcceptedUntil"] == NOW + LIFETIME_S * 1000
    rotate_secret(store, creds.workspace_id, now_ms=NOW + LIFETIME_S * 1000)  # the first retiree's grace is over
    assert store.read("SELECT count(*) FROM retired_secrets").fetchone()[0] == 1
    with pytest.raises(CredentialError):
        rotate_secret(store, creds.workspace_id, now_ms=NOW, grace_ms=-1)


# ------------------------------------------------------------------ a running server


class _Uvicorn:
    """The app in uvicorn on a background thread: the test changes credentials through the
    very store the running server uses, as an operator's tool on a shared database would."""

    def __init__(self, app) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(timeout=20)
        self.sock.close()


def test_a_running_server_refuses_a_revoked_token_at_once(tmp_path):
    db = tmp_path / "running.duckdb"
    with Store(db) as store:
        creds = create_workspace(store, "a", now_ms=NOW)
        spare = issue_token(store, creds.workspace_id, now_ms=NOW)
    app = create_app(Settings(db=db, timers=False, mirror_every_s=None))
    with _Uvicorn(app) as running, httpx.Client(base_url=running.url) as http:

        def status(token: str) -> int:
            headers = {"x-service-api-key": creds.api_key, "x-service-auth-token": token}
            return http.post("/v2/workflow/definitions/list", json={"data": {}}, headers=headers).status_code

        assert [status(creds.auth_token) for _ in range(5)] == [200] * 5  # seen, and known to the middleware
        revoke_token(app.state.services.store, creds.auth_token)
        assert status(creds.auth_token) == 401
        assert status(spare) == 200


# ------------------------------------------------------------------ several processes (PostgreSQL)


@pytest.fixture
def two_processes(postgres_dsn):
    """Two stores on one PostgreSQL database: what two server processes (or a server and the
    `collab workspace` commands) each hold."""
    from toolkit.store import open_store

    with open_store(postgres_dsn) as first, open_store(postgres_dsn) as second:
        yield first, second


def test_a_change_made_by_another_process_is_refused_with_the_next_request(two_processes):
    here, elsewhere = two_processes
    creds = create_workspace(here, "a", now_ms=NOW)
    auth = Authenticator(here)
    assert auth.authenticate(creds.api_key, creds.auth_token).workspace_id == creds.workspace_id
    assert auth.remembered(creds.api_key, creds.auth_token, auth.stored_epoch()) is not None
    assert auth.remembered(creds.api_key, creds.auth_token) is None  # not without a fresh epoch

    new_key = rotate_key(elsewhere, creds.workspace_id)  # this process's own count does not move
    assert auth.remembered(creds.api_key, creds.auth_token, auth.stored_epoch()) is None
    assert unauthenticated(auth, creds.api_key, creds.auth_token)
    assert auth.authenticate(new_key, creds.auth_token).workspace_id == creds.workspace_id

    token = issue_token(elsewhere, creds.workspace_id, now_ms=NOW)
    assert auth.authenticate(new_key, token).workspace_id == creds.workspace_id
    revoke_token(elsewhere, token)
    assert unauthenticated(auth, new_key, token)


def test_the_event_loop_lookup_follows_changes_made_elsewhere(two_processes):
    """``identify`` (what the limits middleware asks): a workspace for a good pair, remembered or
    not; None for a wrong or missing header; a rotation by the other process ends the old key."""
    here, elsewhere = two_processes
    creds = create_workspace(here, "a", now_ms=NOW)
    auth = Authenticator(here)

    async def ask(key: str | None, token: str | None) -> str | None:
        found = await auth.identify(key, token)
        return None if found is None else found.workspace_id

    assert asyncio.run(ask(creds.api_key, creds.auth_token)) == creds.workspace_id  # looked up
    assert asyncio.run(ask(creds.api_key, creds.auth_token)) == creds.workspace_id  # remembered
    assert asyncio.run(ask(creds.api_key, "at_wrong")) is None
    assert asyncio.run(ask(None, creds.auth_token)) is None
    new_key = rotate_key(elsewhere, creds.workspace_id)
    assert asyncio.run(ask(creds.api_key, creds.auth_token)) is None
    assert asyncio.run(ask(new_key, creds.auth_token)) == creds.workspace_id


def test_two_revocations_at_once_never_take_the_last_token(two_processes):
    def revoke(store, token: str, barrier: threading.Barrier) -> str:
        barrier.wait()
        try:
            return revoke_token(store, token)
        except CredentialError as exc:
            return str(exc)

    for _ in range(40):
        creds = create_workspace(two_processes[0], "a", now_ms=NOW)
        tokens = [creds.auth_token, issue_token(two_processes[1], creds.workspace_id, now_ms=NOW)]
        with ThreadPoolExecutor(2) as pool:
            answers = list(pool.map(revoke, two_processes, tokens, [threading.Barrier(2)] * 2))
        assert sorted(a == creds.workspace_id for a in answers) == [False, True], answers
        assert sum(not unauthenticated(Authenticator(two_processes[0]), creds.api_key, t) for t in tokens) == 1


def test_two_secret_rotations_at_once_retire_both_old_secrets(two_processes):
    creds = create_workspace(two_processes[0], "a", now_ms=NOW)
    first = verification_secrets(two_processes[0], creds.workspace_id, now_ms=NOW)
    barrier = threading.Barrier(2)

    def rotate(i: int) -> str:
        barrier.wait()
        return rotate_secret(two_processes[i], creds.workspace_id, now_ms=NOW)["jwtSecret"]

    with ThreadPoolExecutor(2) as pool:
        made = list(pool.map(rotate, (0, 1)))
    accepted = verification_secrets(two_processes[1], creds.workspace_id, now_ms=NOW)
    assert sorted(accepted) == sorted(first + made)  # the current one, and both it replaced
