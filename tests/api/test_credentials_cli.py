"""`collab workspace rotate-key | revoke-token | rotate-secret | settings` (issue 13, item 6) the way an
operator uses them: on a running server they refuse (the database file is locked) and say to
stop it; stopped, they rotate; restarted, the server refuses the old key and the revoked
token and accepts the new ones, and tokens signed before the secret rotation still verify
during the grace period."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess

import pytest

from api.support import DEF_LIST, Server, expect_error
from toolkit.cli import main
from toolkit.services.credentials import verify_workspace_token
from toolkit.store import Store
from toolkit.tokens import UserTokenError, verify_user_token

TOKEN = "/v2/auth/generate_token"
USER = {
    "userId": "ann",
    "userProperties": {"name": "Ann", "email": "a@x.io"},
    "permissions": {"resources": [{"type": "organization", "id": "acme"}]},
}


def collab(*args: str) -> subprocess.CompletedProcess:
    """`collab workspace ARGS`, run in this process (the command line is a library call; a
    subprocess would only add its start-up time)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["workspace", *args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (print(exc.code, file=err) or 1)
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def create(db) -> dict:
    return json.loads(collab("create", "--db", str(db), "--json").stdout)


def status(srv: Server, key: str, token: str) -> int:
    with srv.client({"apiKey": key, "authToken": token}) as http:
        return http.post(DEF_LIST, json={"data": {}}).status_code


def user_token(srv: Server, key: str, token: str) -> str:
    with srv.client({"apiKey": key, "authToken": token}) as http:
        return http.post(TOKEN, json={"data": USER}).json()["result"]["data"]["token"]


def test_stop_rotate_start(tmp_path):
    db = tmp_path / "creds.duckdb"
    a, b = create(db), create(db)
    srv = Server(db, tmp_path / "server-1.log").start()
    try:
        assert status(srv, a["apiKey"], a["authToken"]) == 200
        before = user_token(srv, a["apiKey"], a["authToken"])
        locked = collab("rotate-key", "--db", str(db), "--api-key", a["apiKey"])
        assert locked.returncode != 0 and "stop it first" in locked.stderr
    finally:
        srv.stop()

    key = json.loads(collab("rotate-key", "--db", str(db), "--api-key", a["apiKey"]).stdout)
    token = json.loads(collab("revoke-token", "--db", str(db), "--token", a["authToken"], "--issue-new").stdout)
    assert key["workspaceId"] == token["workspaceId"] and token["revoked"] is True
    secret = json.loads(
        collab("rotate-secret", "--db", str(db), "--workspace", key["workspaceId"], "--grace-hours", "1").stdout
    )
    assert set(secret) == {"workspaceId", "jwtSecret", "previousAcceptedUntil"}

    srv = Server(db, tmp_path / "server-2.log").start()
    try:
        with srv.client(a) as http:
            expect_error(http.post(DEF_LIST, json={"data": {}}), "UNAUTHENTICATED")
        assert status(srv, key["apiKey"], a["authToken"]) == 401  # the revoked token
        assert status(srv, a["apiKey"], token["authToken"]) == 401  # the old key
        assert status(srv, key["apiKey"], token["authToken"]) == 200
        assert status(srv, b["apiKey"], b["authToken"]) == 200  # another workspace: untouched
        after = user_token(srv, key["apiKey"], token["authToken"])
    finally:
        srv.stop()

    assert verify_user_token(after, secret["jwtSecret"])["sub"] == "ann"  # signed with the new secret
    with pytest.raises(UserTokenError, match="signature"):
        verify_user_token(before, secret["jwtSecret"])
    until = secret["previousAcceptedUntil"]  # an hour after the rotation, well within `before`'s lifetime
    with Store(db) as store:
        assert verify_workspace_token(store, key["workspaceId"], before, now_ms=until - 1)["sub"] == "ann"
        with pytest.raises(UserTokenError, match="signature"):
            verify_workspace_token(store, key["workspaceId"], before, now_ms=until)


def test_settings_switch_advanced_queries(tmp_path):
    db = tmp_path / "settings.duckdb"
    a, b = create(db), create(db)
    shown = json.loads(collab("settings", "--db", str(db), "--api-key", a["apiKey"]).stdout)
    assert shown == {"workspaceId": shown["workspaceId"], "advancedQueries": True}  # the default
    off = json.loads(collab("settings", "--db", str(db), "--api-key", a["apiKey"], "--advanced-queries", "off").stdout)
    assert off == {**shown, "advancedQueries": False}

    users = {"data": {"organizationId": "acme"}}
    ann = {"data": {"organizationId": "acme", "users": [{"userId": "ann"}]}}
    srv = Server(db, tmp_path / "server-1.log").start()
    try:
        with srv.client(a) as http:
            assert http.post("/v2/users/add", json=ann).status_code == 200
            answer = http.post("/v2/users/get", json=users)
            expect_error(answer, "FAILED_PRECONDITION")
            assert "advancedQueries" in answer.text
        with srv.client(b) as http:  # another workspace keeps its own setting
            assert http.post("/v2/users/add", json=ann).status_code == 200
            assert http.post("/v2/users/get", json=users).status_code == 200
    finally:
        srv.stop()

    on = json.loads(
        collab("settings", "--db", str(db), "--workspace", shown["workspaceId"], "--advanced-queries", "on").stdout
    )
    assert on == shown
    srv = Server(db, tmp_path / "server-2.log").start()
    try:
        with srv.client(a) as http:
            assert http.post("/v2/users/get", json=users).status_code == 200
    finally:
        srv.stop()


def test_the_commands_say_what_is_wrong(tmp_path):
    db = tmp_path / "wrong.duckdb"
    a = create(db)
    for args, message in (
        (("rotate-key", "--api-key", "ak_nope"), "no workspace has this API key"),
        (("rotate-secret", "--workspace", "ws_nope"), "no such workspace"),
        (("revoke-token", "--token", "at_nope"), "no workspace has this auth token"),
        (("revoke-token", "--token", a["authToken"]), "last auth token"),
        (("settings", "--workspace", "ws_nope", "--advanced-queries", "off"), "no such workspace"),
    ):
        proc = collab(*args, "--db", str(db))
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
