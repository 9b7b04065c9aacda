"""The envelope, authentication and routing rules on every access endpoint (api-v2 §1, §5, §7;
semantics §1, §2), the advanced-queries prerequisite of get users, and user tokens verified with
the real workspace secret — on a server this module starts itself, on a database whose
workspace settings it writes before the server opens the file."""

from __future__ import annotations

import hashlib
import time

import duckdb
import httpx
import jwt
import pytest

from api.support import Api, Server, create_workspace, expect_error, uid
from toolkit.tokens import UserTokenError, verify_user_token

ACCESS_PATHS = [
    "/v2/auth/generate_token",
    "/v2/auth/permissions/add",
    "/v2/auth/permissions/remove",
    "/v2/users/add",
    "/v2/users/update",
    "/v2/users/delete",
    "/v2/users/get",
    "/v2/folders/add",
    "/v2/documents/add",
    "/v2/organizations/usergroups/add",
    "/v2/organizations/usergroups/users/add",
    "/v2/organizations/folders/access/update",
    "/v2/organizations/documents/access/update",
    "/v2/organizations/documents/access/disablestate/update",
]
GEN, UADD, UGET = "/v2/auth/generate_token", "/v2/users/add", "/v2/users/get"


@pytest.mark.parametrize("path", ACCESS_PATHS)
def test_unwrapped_body_is_invalid_argument(api, path):
    assert "data" in api.err(path, body={"organizationId": "o", "userId": "u"})


@pytest.mark.parametrize("path", ACCESS_PATHS)
def test_data_must_be_an_object(api, path):
    assert "data" in api.err(path, body={"data": ["organizationId"]})


@pytest.mark.parametrize("path", ACCESS_PATHS)
def test_unknown_key_inside_data_is_named(api, path):
    assert "bogusField" in api.err(path, {"organizationId": "o", "bogusField": 1})


@pytest.mark.parametrize("path", ACCESS_PATHS)
def test_missing_required_fields_are_invalid_argument(api, path):
    assert api.err(path, {}).startswith("data.")


@pytest.mark.parametrize("path", ACCESS_PATHS)
def test_service_credentials_are_required(anon, server, path):
    message = anon.err(path, {"organizationId": "o"}, code="UNAUTHENTICATED")
    assert "x-service-api-key" in message
    wrong = {**server.creds_a, "authToken": "at_wrong"}
    with server.client(wrong) as client:
        expect_error(client.post(path, json={"data": {}}), "UNAUTHENTICATED")


@pytest.mark.parametrize("path", ACCESS_PATHS)
def test_wrong_method_is_405(server, path):
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        resp = client.get(path)
    assert expect_error(resp, "INVALID_ARGUMENT", 405).endswith("POST")


# ---------------------------------------------------------------- a server of our own


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@pytest.fixture(scope="module")
def own(tmp_path_factory):
    """Workspaces `on` (advanced queries enabled, the default) and `off` (disabled by writing the
    setting into the database before the server starts), with their JWT secrets read from it."""
    root = tmp_path_factory.mktemp("access-server")
    db = root / "access.duckdb"
    on, off = create_workspace(db), create_workspace(db)
    con = duckdb.connect(str(db))
    try:
        con.execute("UPDATE workspaces SET advanced_queries = false WHERE api_key_hash = ?", [_hash(off["apiKey"])])
        secrets = {
            name: con.execute(
                "SELECT jwt_secret FROM workspaces WHERE api_key_hash = ?", [_hash(creds["apiKey"])]
            ).fetchone()[0]
            for name, creds in (("on", on), ("off", off))
        }
        flags = dict(con.execute("SELECT api_key_hash, advanced_queries FROM workspaces").fetchall())
    finally:
        con.close()
    assert flags == {_hash(on["apiKey"]): True, _hash(off["apiKey"]): False}
    srv = Server(db, root / "server.log").start()
    try:
        with srv.client(on) as a, srv.client(off) as b:
            yield {"on": Api(a), "off": Api(b), "secrets": secrets}
    finally:
        srv.stop()


def test_get_users_requires_advanced_queries(own):
    org = uid("org")
    own["off"].ok(UADD, {"organizationId": org, "users": [{"userId": "ann"}]})
    message = own["off"].err(UGET, {"organizationId": org}, code="FAILED_PRECONDITION")
    assert "advancedQueries" in message
    # Bad input is still reported as such first.
    own["off"].err(UGET, {"organizationId": org, "pageSize": 0}, code="INVALID_ARGUMENT")
    own["on"].ok(UADD, {"organizationId": org, "users": [{"userId": "ann"}]})
    assert [u["userId"] for u in own["on"].ok(UGET, {"organizationId": org})["data"]] == ["ann"]


def _token(api: Api, user_id: str = "ann") -> str:
    return api.ok(
        GEN,
        {
            "userId": user_id,
            "userProperties": {"name": "Ann", "email": "ann@example.com"},
            "permissions": {"resources": [{"type": "organization", "id": "acme"}]},
        },
    )["data"]["token"]


def test_tokens_verify_with_their_workspace_secret_only(own):
    token = _token(own["on"])
    claims = verify_user_token(token, own["secrets"]["on"])
    assert claims["sub"] == "ann" and claims["exp"] - claims["iat"] == 48 * 3600
    assert abs(claims["iat"] - time.time()) < 120
    with pytest.raises(UserTokenError, match="signature"):
        verify_user_token(token, own["secrets"]["off"])
    other = _token(own["off"], "bob")
    assert verify_user_token(other, own["secrets"]["off"])["sub"] == "bob"


def test_forged_tokens_are_refused_by_verify_user_token(own):
    secret = own["secrets"]["on"]
    claims = jwt.decode(_token(own["on"]), options={"verify_signature": False})
    unsigned = jwt.encode(claims, None, algorithm="none")
    with pytest.raises(UserTokenError, match="algorithm"):
        verify_user_token(unsigned, secret)
    with pytest.raises(UserTokenError, match="expired"):
        verify_user_token(_token(own["on"]), secret, now_s=claims["exp"] + 1)
