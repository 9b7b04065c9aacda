"""Fair shares over real HTTP (issue 13, items 5 and 7): per-workspace rate, in-flight and
storage limits answered 429 RESOURCE_EXHAUSTED (with Retry-After for the ones that pass), a
server-wide cap answered 503, slow and oversize request heads and late bodies answered in
the API's JSON envelope, and no redirect built from the Host header.

One server with small limits and a workspace per concern, so the tests do not drain each
other's buckets. B's p99 under A's flood is measured by benchmarks/tenant_fairness.py."""

from __future__ import annotations

import json
import socket
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from api.support import (
    DEF_CREATE,
    DEF_LIST,
    DISPATCH,
    Api,
    Server,
    expect_error,
    human_definition,
    uid,
    wait_for,
)
from toolkit.services.workspaces import create_workspace as workspace_create
from toolkit.store import Store

RATE, BODY_S, HEAD_S, IN_FLIGHT, TOTAL, MAX_HEAD, DELAY = 10, 1, 1, 3, 5, 4096, 0.3
KEEP_ALIVE_S = 3  # longer than HEAD_S, as behind a load balancer that keeps its connections
LIMITS = (
    "--rate-limit",
    str(RATE),
    "--rate-burst",
    str(RATE),
    "--max-in-flight",
    str(IN_FLIGHT),
    "--refusal-delay",
    str(DELAY),
    "--max-in-flight-total",
    str(TOTAL),
    "--max-definitions",
    "3",
    "--max-executions",
    "4",
    "--body-timeout",
    str(BODY_S),
    "--head-timeout",
    str(HEAD_S),
    "--max-header-bytes",
    str(MAX_HEAD),
    "--max-connections",
    "40",
    "--keep-alive-timeout",
    str(KEEP_ALIVE_S),
)
TENANTS = ("flood", "calm", "quota", "slow", "slow2")


@pytest.fixture(scope="module")
def limited(tmp_path_factory):
    root = tmp_path_factory.mktemp("limits")
    db = root / "limits.duckdb"
    with Store(db) as store:  # in process: five `collab workspace create` would take seconds each
        creds = {name: workspace_create(store, name, now_ms=0).to_json() for name in TENANTS}
    srv = Server(db, root / "server.log", LIMITS).start()
    srv.tenants = creds
    try:
        yield srv
    finally:
        srv.stop()


def client(srv: Server, tenant: str | None) -> httpx.Client:
    return srv.client(None if tenant is None else srv.tenants[tenant])


def retry_after(resp: httpx.Response) -> int:
    value = resp.headers.get("retry-after")
    assert value is not None and value.isdigit() and int(value) >= 1, resp.headers
    return int(value)


# ------------------------------------------------------------------ raw HTTP/1.1


def connect(srv: Server) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", srv.port), timeout=15)
    return sock


def stalled_post(srv: Server, tenant: str) -> socket.socket:
    """A POST whose head is complete and whose body never comes."""
    creds = srv.tenants[tenant]
    sock = connect(srv)
    sock.sendall(
        (
            f"POST {DEF_LIST} HTTP/1.1\r\nhost: test\r\ncontent-type: application/json\r\n"
            f"content-length: 100\r\nx-service-api-key: {creds['apiKey']}\r\n"
            f'x-service-auth-token: {creds["authToken"]}\r\n\r\n{{"data"'
        ).encode()
    )
    return sock


def answer(sock: socket.socket) -> tuple[int, dict, dict] | None:
    """(status, headers, JSON body) of the one answer on ``sock`` (None when the server closed
    it without a word); the server must close it."""
    raw = b""
    while chunk := sock.recv(65536):
        raw += chunk
    sock.close()
    if not raw:
        return None
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {k.lower(): v for k, v in headers.items()}, json.loads(body)


def kept_alive_answer(sock: socket.socket) -> int:
    """The status of the next answer on ``sock``, read to the end of its body, the connection
    left open."""
    raw = b""
    while b"\r\n\r\n" not in raw:
        chunk = sock.recv(65536)
        assert chunk, f"the server closed the connection; it had sent {raw!r}"
        raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = int(next(line.split(":", 1)[1] for line in lines if line.lower().startswith("content-length:")))
    while len(body) < length:
        body += sock.recv(65536)
    return int(lines[0].split()[1])


def assert_envelope(body: dict, code: str) -> str:
    assert list(body) == ["error"] and set(body["error"]) == {"message", "status"}, body
    assert body["error"]["status"] == code, body
    return body["error"]["message"]


# ------------------------------------------------------------------ rate


def test_a_burst_over_the_rate_is_refused_while_another_workspace_is_served(limited):
    with client(limited, "flood") as a, client(limited, "calm") as b:

        def flood(_):
            return a.post(DEF_LIST, json={"data": {}})

        def calm(_):
            return b.post(DEF_LIST, json={"data": {}})

        began = time.monotonic()
        with ThreadPoolExecutor(4) as pool:  # under the server-wide limit of 5
            flooded = list(pool.map(flood, range(6 * RATE)))
        elapsed = time.monotonic() - began
        calm_answers = [calm(i) for i in range(RATE)]  # within B's own burst: every one served

        refused = [r for r in flooded if r.status_code == 429]
        served = [r for r in flooded if r.status_code == 200]
        assert len(served) + len(refused) == len(flooded), [r.status_code for r in flooded]
        # The bucket holds RATE and refills RATE a second: no more than that was served.
        assert refused and len(served) <= RATE + RATE * elapsed + 1, (len(served), elapsed)
        for resp in refused:
            message = expect_error(resp, "RESOURCE_EXHAUSTED")
            assert "rate limit" in message or "in flight" in message, message
            retry_after(resp)
            # tarpitted: a flood cannot make refusals cheap (uvloop's timers count whole milliseconds
            # from the loop's clock as of its last wake-up, so a sleep may end a little early)
            assert resp.elapsed.total_seconds() >= DELAY - 0.005
        assert [r.status_code for r in calm_answers] == [200] * RATE

        # Waiting as told is enough to be served again.
        wait = max(retry_after(r) for r in refused if "rate limit" in r.json()["error"]["message"])
        served = wait_for(
            lambda: a.post(DEF_LIST, json={"data": {}}).status_code == 200,
            timeout=wait + 5,
            interval=0.2,
            what="the flooding workspace to be served again",
        )
        assert served


def test_requests_without_valid_credentials_still_get_401(limited):
    with client(limited, None) as anon:
        expect_error(anon.post(DEF_LIST, json={"data": {}}), "UNAUTHENTICATED")
        bad = {"x-service-api-key": limited.tenants["calm"]["apiKey"], "x-service-auth-token": "at_wrong"}
        expect_error(anon.post(DEF_LIST, json={"data": {}}, headers=bad), "UNAUTHENTICATED")


# ------------------------------------------------------------------ in flight, late bodies


def test_in_flight_limit_then_late_bodies_get_408(limited):
    held = [stalled_post(limited, "slow") for _ in range(IN_FLIGHT)]
    with client(limited, "slow") as slow, client(limited, "calm") as calm:

        def refused():
            resp = slow.post(DEF_LIST, json={"data": {}})
            return resp if resp.status_code == 429 else None

        resp = wait_for(refused, timeout=10, interval=0.02, what="the in-flight limit to refuse a request")
        assert "in flight" in expect_error(resp, "RESOURCE_EXHAUSTED")
        assert retry_after(resp) == 1
        assert calm.post(DEF_LIST, json={"data": {}}).status_code == 200  # another workspace is served

        for sock in held:  # the held requests never sent their body: 408, connection closed
            status, headers, body = answer(sock)
            assert status == 408 and headers["connection"] == "close", (status, headers)
            assert f"within {BODY_S} s" in assert_envelope(body, "INVALID_ARGUMENT")
        wait_for(
            lambda: slow.post(DEF_LIST, json={"data": {}}).status_code == 200,
            timeout=10,
            what="the slots to be given back",
        )


def test_server_wide_in_flight_limit_is_503_unavailable(limited):
    held = [stalled_post(limited, "slow") for _ in range(IN_FLIGHT)]
    held += [stalled_post(limited, "slow2") for _ in range(TOTAL - IN_FLIGHT)]
    with client(limited, "calm") as calm:

        def refused():
            resp = calm.post(DEF_LIST, json={"data": {}})
            return resp if resp.status_code == 503 else None

        resp = wait_for(refused, timeout=10, interval=0.02, what="the server-wide limit to refuse a request")
        assert "in flight" in assert_envelope(resp.json(), "UNAVAILABLE")
        assert retry_after(resp) == 1
        for sock in held:
            assert answer(sock)[0] == 408
        wait_for(
            lambda: calm.post(DEF_LIST, json={"data": {}}).status_code == 200,
            timeout=10,
            what="the server to take requests again",
        )


# ------------------------------------------------------------------ quotas


def test_stored_definitions_and_executions_quotas(limited):
    with client(limited, "quota") as http:
        api = Api(http)
        ids = [uid("quota") for _ in range(3)]
        for definition_id in ids:
            api.create(human_definition(definition_id))
        resp = api.post(DEF_CREATE, human_definition(uid("quota")))
        message = expect_error(resp, "RESOURCE_EXHAUSTED")
        assert "at most 3 definitions" in message and "retry-after" not in resp.headers  # waiting will not help

        for n in range(4):
            api.dispatch(ids[n % 3], idempotencyKey=f"k{n}")
        resp = api.post(DISPATCH, {"definitionId": ids[0], "idempotencyKey": "k-over"})
        assert "at most 4 executions" in expect_error(resp, "RESOURCE_EXHAUSTED")
        # A retried dispatch stores nothing new: still answered with its execution.
        again = api.ok(DISPATCH, {"definitionId": ids[0], "idempotencyKey": "k0"})
        assert again["deduplicated"] is True


def test_quotas_hold_after_a_restart(tmp_path):
    """The execution count is read from the file on a fresh start, not only kept in memory."""
    db = tmp_path / "restart.duckdb"
    with Store(db) as store:
        creds = workspace_create(store, "restart", now_ms=0).to_json()
    for round_ in range(2):
        srv = Server(db, tmp_path / f"server-{round_}.log", ("--max-executions", "2")).start()
        try:
            with srv.client(creds) as http:
                api = Api(http)
                if round_ == 0:
                    definition_id = uid("restart")
                    api.create(human_definition(definition_id))
                    api.dispatch(definition_id)
                    api.dispatch(definition_id)
                else:
                    (item,) = api.ok(DEF_LIST, {})["items"]
                    resp = api.post(DISPATCH, {"definitionId": item["definitionId"]})
                    assert "at most 2 executions" in expect_error(resp, "RESOURCE_EXHAUSTED")
        finally:
            srv.stop()


# ------------------------------------------------------------------ request heads (item 7)


def test_oversize_headers_get_the_json_error(limited):
    with client(limited, "calm") as calm:
        resp = calm.post(DEF_LIST, json={"data": {}}, headers={"x-padding": "p" * (MAX_HEAD + 100)})
    assert resp.status_code == 431
    assert resp.headers["content-type"] == "application/json"
    assert f"{MAX_HEAD}-byte limit" in assert_envelope(resp.json(), "INVALID_ARGUMENT")


def test_a_head_sent_in_pieces_is_cut_off_at_the_limit(limited):
    """The parser keeps no limit of its own: the server counts a head's bytes as they come and
    answers 431 once they pass the limit, before the head is whole."""
    sock = connect(limited)
    sock.sendall(f"POST {DEF_LIST} HTTP/1.1\r\nhost: test\r\nx-padding: ".encode())
    sent = 0
    try:
        while sent <= 4 * MAX_HEAD:  # never ends the header: only the count can stop it
            sock.sendall(b"p" * 1024)
            sent += 1024
            time.sleep(0.002)
    except OSError:  # the server answered and closed while we were still sending
        pass
    status, headers, body = answer(sock)
    assert status == 431 and headers["connection"] == "close"
    assert f"{MAX_HEAD}-byte limit" in assert_envelope(body, "INVALID_ARGUMENT")


def test_a_control_byte_in_a_header_gets_the_json_error(limited):
    """DEL is not a header byte (RFC 9110 §5.5): the request is refused before authentication."""
    sock = connect(limited)
    sock.sendall(
        f"POST {DEF_LIST} HTTP/1.1\r\nhost: test\r\nx-service-api-key: a\x7fb\r\ncontent-length: 0\r\n\r\n".encode()
    )
    status, _, body = answer(sock)
    assert status == 400
    assert "not a valid HTTP/1.1 request" in assert_envelope(body, "INVALID_ARGUMENT")


def test_a_request_that_is_not_http_gets_the_json_error(limited):
    sock = connect(limited)
    sock.sendall(b"HELLO\x00 nonsense\r\n\r\n")
    status, _, body = answer(sock)
    assert status == 400
    assert "not a valid HTTP/1.1 request" in assert_envelope(body, "INVALID_ARGUMENT")


def test_a_slow_request_head_is_cut_off(limited):
    sock = connect(limited)
    sock.sendall(f"POST {DEF_LIST} HTTP/1.1\r\nhost: test\r\nx-slow: ".encode())  # and nothing more
    status, headers, body = answer(sock)
    assert status == 408 and headers["connection"] == "close"
    assert f"within {HEAD_S} s" in assert_envelope(body, "INVALID_ARGUMENT")


def test_an_idle_connection_is_closed(limited):
    with connect(limited) as sock:
        assert sock.recv(1) == b""  # closed by the server, with nothing said


def test_a_kept_alive_connection_stays_open_past_the_head_timeout_until_the_keep_alive_timeout(limited):
    creds = limited.tenants["calm"]
    request = (
        f"POST {DEF_LIST} HTTP/1.1\r\nhost: test\r\ncontent-type: application/json\r\ncontent-length: 11\r\n"
        f"x-service-api-key: {creds['apiKey']}\r\nx-service-auth-token: {creds['authToken']}\r\n\r\n"
        '{"data":{}}'
    ).encode()
    with connect(limited) as sock:
        sock.sendall(request)
        assert kept_alive_answer(sock) == 200
        time.sleep(HEAD_S + 0.5)  # idle past the head timeout, within the keep-alive one
        sock.sendall(request)
        assert kept_alive_answer(sock) == 200
        idle_from = time.monotonic()
        assert sock.recv(1) == b""  # then closed, with nothing said
        assert time.monotonic() - idle_from > HEAD_S + 0.5


def test_connections_over_the_limit_are_refused_in_json(limited):
    opened = [connect(limited) for _ in range(41)]
    answers = [answer(sock) for sock in opened]  # the accepted ones are closed unanswered when idle
    refused = [a for a in answers if a is not None]
    assert refused, "41 connections were all accepted with a limit of 40"
    for status, headers, body in refused:
        assert status == 503 and headers["retry-after"] == "1"
        assert "connections" in assert_envelope(body, "UNAVAILABLE")


def test_a_trailing_slash_is_not_redirected_to_the_host_header(limited):
    with client(limited, "calm") as calm:
        resp = calm.post(f"{DEF_LIST}/", json={"data": {}}, headers={"host": "attacker.example"})
    assert "location" not in resp.headers
    assert f"{DEF_LIST}/" in expect_error(resp, "NOT_FOUND")
