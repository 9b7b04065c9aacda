"""What one workspace's webhooks cannot do to the server or to other workspaces (issue 13):
a stored URL or value that breaks an attempt fails that attempt and nothing else, dispatch
refuses what delivery could not use, a receiver's huge answer is not read, a pooled TLS
connection never carries another host name, only allowed ports are called, and an operator
can empty a workspace's outbox while the server is stopped. A real `collab serve` and real
HTTPS receivers (trustme) throughout, on the run's backend (COLLAB_TEST_BACKEND)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import psycopg
import pytest
from starlette.responses import StreamingResponse

from api.receiver import Receiver
from api.support import DISPATCH, Api, human_definition, is_url, serve_fresh, uid, wait_for
from toolkit.cli import main

LIST = "/v2/workflow/deliveries/list"
SECRET = "whsec-limits-0123456789"
FAST = "100,100,100,100,100"
HUGE_MB = 300
HELD_S = "2"  # --webhook-timeout of the servers a test stops with attempts held: a stop waits for them


def _sql(db, statements: list[tuple[str, list]]) -> list[list[tuple]]:
    """Run ``(sql with ? marks, params)`` on a stopped server's database, DuckDB file or
    PostgreSQL URL, in one transaction; the rows of each."""
    if is_url(db):
        with psycopg.connect(str(db)) as con:
            return [con.execute(sql.replace("?", "%s"), params).fetchall() for sql, params in statements]
    with duckdb.connect(str(db)) as con:
        return [con.execute(sql, params).fetchall() for sql, params in statements]


def _flags(*receivers: Receiver) -> tuple[str, ...]:
    ports = [arg for r in receivers for arg in ("--webhook-allow-port", str(r.port))]
    return (
        "--webhook-allow-loopback",
        "--webhook-ca-bundle",
        str(receivers[0].ca_path),
        "--webhook-retry-delays",
        FAST,
        *ports,
    )


@pytest.fixture(scope="module")
def receiver(tmp_path_factory):
    rec = Receiver(tmp_path_factory.mktemp("limits-receiver")).start()
    yield rec
    rec.stop()


@pytest.fixture(scope="module")
def localhost_only(tmp_path_factory, receiver):
    """A receiver on the same loopback address whose certificate names localhost only."""
    rec = Receiver(tmp_path_factory.mktemp("narrow-receiver"), ca=receiver.ca, names=("localhost",)).start()
    yield rec
    rec.stop()


@pytest.fixture(scope="module")
def limited(tmp_path_factory, receiver, localhost_only):
    srv = serve_fresh(tmp_path_factory.mktemp("limited"), "limited", _flags(receiver, localhost_only))
    with srv.client(srv.creds_a) as client:
        yield srv, Api(client)
    srv.stop()


@pytest.fixture(autouse=True)
def _answer_ok(receiver, localhost_only):
    receiver.respond = localhost_only.respond = lambda path, attempt: 200


def _deliveries(api: Api, execution_id: str) -> list[dict]:
    return api.ok(LIST, {"executionId": execution_id, "pageSize": 100})["items"]


def _settled(api: Api, execution_id: str, status: str, count: int = 2) -> list[dict]:
    """Every delivery of the execution (dispatched + awaiting-approval by default) in ``status``."""

    def check():
        items = _deliveries(api, execution_id)
        return items if len(items) == count and all(d["status"] == status for d in items) else None

    return wait_for(check, timeout=30, what=f"the deliveries of {execution_id} to be {status}")


def _hook(api: Api, url: str) -> str:
    definition_id = uid("limits")
    api.create(human_definition(definition_id))
    return api.dispatch(definition_id, webhookUrl=url, webhookSecret=SECRET)


# ---------------------------------------------------------------------------- dispatch refuses what delivery cannot use


@pytest.mark.parametrize(
    "url, problem",
    [
        ("https://0177.0.0.1/hook", "an IPv4 address is four decimal numbers"),
        ("https://0x7f.1/hook", "an IPv4 address is four decimal numbers"),
        ("https://127.1/hook", "an IPv4 address is four decimal numbers"),
        ("https://2130706433/hook", "an IPv4 address is four decimal numbers"),
        ("https://exa\u200bmple.com/hook", "host name label"),
        ("https://[2002:7f00:1::]/hook", "a 6to4 address embedding 127.0.0.1"),
        ("https://[64:ff9b::a9fe:a9fe]/hook", "a NAT64 address embedding 169.254.169.254"),
        ("https://[::ffff:10.0.0.1]/hook", "a private address"),
        ("https://[::10.0.0.1]/hook", "an IPv4-compatible address embedding 10.0.0.1"),
        ("https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook", "a Teredo address"),
        ("https://127.0.0.1/hook", "a loopback address"),
        ("https://hooks.example.com:8443/hook", "port 8443 is not allowed"),
    ],
)
def test_dispatch_refuses_urls_the_deliverer_could_not_use(api, url, problem):
    definition_id = uid("poison")
    api.create(human_definition(definition_id))
    message = api.err(DISPATCH, {"definitionId": definition_id, "webhookUrl": url, "webhookSecret": SECRET})
    assert "data.webhookUrl" in message and problem in message, message
    assert api.ok("/v2/workflow/executions/list", {"definitionId": definition_id})["items"] == []


def test_only_port_443_and_the_ports_the_operator_lists_are_called(api, limited, receiver):
    message = api.err(
        DISPATCH, {"definitionId": uid("nodef"), "webhookUrl": receiver.url("/port"), "webhookSecret": SECRET}
    )
    assert f"port {receiver.port} is not allowed" in message and "--webhook-allow-port" in message
    _, hooked = limited  # started with --webhook-allow-port <the receiver's port>
    execution_id = _hook(hooked, receiver.url("/port"))
    _settled(hooked, execution_id, "delivered")
    assert len(receiver.received("/port")) == 2


# ---------------------------------------------------------------------------- poison rows


def test_a_row_that_breaks_its_attempts_fails_them_and_never_stalls_other_workspaces(tmp_path, receiver):
    """Rows stored by an older version (or changed under the server) that no attempt can use:
    each attempt is a recorded failure — refused ones dead-letter at once, others follow the
    schedule — and another workspace's delivery arrives meanwhile, with no flood of errors."""
    srv = serve_fresh(tmp_path, "poison", (*_flags(receiver), "--webhook-timeout", HELD_S))
    receiver.respond = lambda path, attempt: None if path == "/held" else 200  # keep A's rows pending
    try:
        with srv.client(srv.creds_a) as client:
            a = Api(client)
            octal, no_secret, bad_port, invisible = (_hook(a, receiver.url("/held")) for _ in range(4))
        wait_for(lambda: len(receiver.received("/held")) == 4, what="the held deliveries")
        srv.stop()
    finally:
        receiver.release()
    receiver.respond = lambda path, attempt: 200
    changes = [
        ("UPDATE outbox SET url = ? WHERE execution_id = ? RETURNING event_id", [url, execution_id])
        for execution_id, url in (
            (octal, "https://0177.0.0.1/hook"),
            (bad_port, "https://localhost:8443/hook"),
            (invisible, "https://exa\u200bmple.com/hook"),
        )
    ]
    changes.append(("UPDATE executions SET webhook_secret = NULL WHERE execution_id = ? RETURNING 1", [no_secret]))
    # A held attempt may have timed out (and counted) before the stop on a slow machine.
    *_, rows = _sql(srv.db, [*changes, ("SELECT event_id, attempts, failures FROM outbox", [])])
    before = {e: (n, failed) for e, n, failed in rows}
    srv.start()
    try:
        with srv.client(srv.creds_a) as client_a, srv.client(srv.creds_b) as client_b:
            a, b = Api(client_a), Api(client_b)
            fine = _hook(b, receiver.url("/fine"))
            _settled(b, fine, "delivered")
            for execution_id, reason in (
                (octal, "0177.0.0.1"),
                (bad_port, "port 8443 is not allowed"),
                (invisible, "host name label"),
            ):
                dead = _settled(a, execution_id, "dead")
                assert all(
                    d["attempts"] == before[d["eventId"]][0] + 1
                    and "destination refused" in d["lastError"]
                    and reason in d["lastError"]
                    for d in dead
                ), [(d["attempts"], d["lastError"]) for d in dead]
            dead = _settled(a, no_secret, "dead")  # after the whole schedule: 6 failed attempts in a row
            expected = {e: attempts + 6 - failures for e, (attempts, failures) in before.items()}
            assert all(
                d["attempts"] == expected[d["eventId"]] and d["lastError"].startswith("AttributeError") for d in dead
            ), [(d["attempts"], d["lastError"]) for d in dead]
            assert _deliveries(a, no_secret) == dead  # and no more attempts
        assert len(receiver.received("/fine")) == 2
        assert srv.log().count("Traceback") <= 12, "one logged error per failed attempt at most"
    finally:
        srv.stop()


def test_a_workspace_with_a_hanging_receiver_holds_only_its_share(limited, receiver):
    """Workspace A's receiver holds every request open; A has more deliveries due than the
    server sends at once (32). B's delivery still goes out at once: A holds at most its
    per-workspace share (8) of the slots, not all of them."""
    srv, hooked = limited
    receiver.respond = lambda path, attempt: None if path == "/hanging" else 200
    try:
        definition_id = uid("hang")
        hooked.create(human_definition(definition_id))
        for _ in range(34):
            hooked.dispatch(definition_id, webhookUrl=receiver.url("/hanging"), webhookSecret=SECRET)
        wait_for(lambda: len(receiver.received("/hanging")) >= 8, what="A's held deliveries")
        with srv.client(srv.creds_b) as client:
            b = Api(client)
            _settled(b, _hook(b, receiver.url("/prompt")), "delivered")
        assert len(receiver.received("/hanging")) < 32, "A's hanging receiver took every delivery slot"
    finally:
        receiver.respond = lambda path, attempt: 200
        receiver.release()


# ---------------------------------------------------------------------------- client limits


def _peak_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc status")


def test_a_huge_answer_is_not_read(limited, receiver):
    srv, hooked = limited

    async def chunks():
        block = b"x" * (1 << 20)
        for _ in range(HUGE_MB):
            yield block

    receiver.respond = lambda path, attempt: (
        StreamingResponse(chunks(), media_type="application/octet-stream") if path == "/huge" else 200
    )
    before = _peak_rss_kb(srv.proc.pid)
    execution_id = _hook(hooked, receiver.url("/huge"))
    delivered = _settled(hooked, execution_id, "delivered")
    assert all(d["attempts"] == 1 for d in delivered)
    grown_mb = (_peak_rss_kb(srv.proc.pid) - before) / 1024
    assert grown_mb < 40, f"the server's peak memory grew by {grown_mb:.0f} MB reading two {HUGE_MB} MB answers"


def test_a_pooled_connection_never_carries_another_host_name(limited, localhost_only):
    """localhost and 127.0.0.1 are the same address; the certificate names localhost only.
    Right after deliveries to localhost left a connection in the pool, a delivery to
    127.0.0.1 must still fail the certificate check."""
    _, hooked = limited
    first = _hook(hooked, localhost_only.url("/named", host="localhost"))
    _settled(hooked, first, "delivered")
    second = _hook(hooked, localhost_only.url("/by-address", host="127.0.0.1"))
    dead = _settled(hooked, second, "dead")
    assert all("certificate" in d["lastError"].lower() for d in dead), dead
    assert localhost_only.received("/by-address") == []
    assert len(localhost_only.received("/named")) == 2


# ---------------------------------------------------------------------------- the operator's tools


def _collab(capsys, *args: str) -> tuple[int, str, str]:
    """`collab deliveries ARGS` (the CLI's own entry point, in this process): code, out, err."""
    try:
        code = main(["deliveries", *args])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_an_operator_dead_letters_or_purges_a_workspaces_outbox(tmp_path, receiver, capsys):
    srv = serve_fresh(tmp_path, "operator", (*_flags(receiver), "--webhook-timeout", HELD_S))
    receiver.respond = lambda path, attempt: None if path.startswith("/stuck") else 200
    try:
        with srv.client(srv.creds_a) as client_a, srv.client(srv.creds_b) as client_b:
            a, b = Api(client_a), Api(client_b)
            a1, a2 = _hook(a, receiver.url("/stuck-a")), _hook(a, receiver.url("/stuck-a"))
            b1 = _hook(b, receiver.url("/stuck-b"))
        wait_for(
            lambda: len(receiver.received("/stuck-a")) >= 2 and receiver.received("/stuck-b"),
            what="the held deliveries",
        )
        srv.stop()
    finally:
        receiver.release()
    receiver.respond = lambda path, attempt: 200
    db = str(srv.db)
    # The stop waited for the held attempts, which failed at the timeout and stay pending.
    [[(timed_out,)]] = _sql(db, [("SELECT count(*) FROM outbox WHERE last_error = ?", ["timed out after 2 s"])])
    assert timed_out >= 3
    ((ws_a,),), ((ws_b,),) = _sql(
        db, [("SELECT workspace_id FROM executions WHERE execution_id = ?", [e]) for e in (a1, b1)]
    )
    code, out, err = _collab(capsys, "summary", "--db", db, "--json")
    assert code == 0, err
    counts = {r["workspaceId"]: (r["pending"], r["dead"]) for r in json.loads(out)}
    assert counts == {ws_a: (4, 0), ws_b: (2, 0)}
    code, out, _ = _collab(capsys, "summary", "--db", db)
    assert code == 0 and out.splitlines()[0].split() == ["workspace", "label", "pending", "dead", "delivered"]
    assert {line.split()[0]: line.split()[-3:] for line in out.splitlines()[1:]} == {
        ws_a: ["4", "0", "0"],
        ws_b: ["2", "0", "0"],
    }

    code, out, _ = _collab(capsys, "dead-letter", "--db", db, "--workspace", ws_a)
    assert code == 0 and out.startswith("4 pending deliveries dead-lettered"), out
    code, out, _ = _collab(capsys, "purge", "--db", db, "--workspace", ws_a, "--execution", a2)
    assert code == 0 and out.startswith("2 undelivered deliveries deleted"), out
    code, _, err = _collab(capsys, "purge", "--db", db, "--workspace", "ws_nobody")
    assert code == 2 and "no workspace ws_nobody" in err
    code, _, err = _collab(capsys, "summary", "--db", str(tmp_path / "typo.duckdb"))
    assert code == 2 and "no database at" in err and not (tmp_path / "typo.duckdb").exists()

    srv.start()
    try:
        with srv.client(srv.creds_a) as client_a, srv.client(srv.creds_b) as client_b:
            a, b = Api(client_a), Api(client_b)
            _settled(b, b1, "delivered")  # the other workspace's outbox was left alone
            assert _deliveries(a, a2) == []
            dead = _settled(a, a1, "dead")
            assert all(d["lastError"] == "dead-lettered by an operator" for d in dead)
            assert all(r.status is None for r in receiver.received("/stuck-a")), "nothing of A's was sent again"
            # The workspace can still send its dead letters again, through its own API.
            assert a.ok("/v2/workflow/deliveries/redrive", {"executionId": a1})["redriven"] == 2
            _settled(a, a1, "delivered")
    finally:
        srv.stop()
