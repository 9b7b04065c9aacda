"""JWT attacks on the user tokens the real server issues (api-v2 §4.1, §5; semantics §8): the
claims of a genuine token re-signed or re-headed every way an attacker might — `alg: none` in any
spelling, other HMAC sizes, asymmetric algorithms (HMAC-signed with the workspace secret, the
classic confusion, and genuinely RSA-signed), injected key headers, unknown critical headers,
missing or mistyped claims, not-yet-valid and expired tokens — are all refused by
`toolkit.tokens.verify_user_token` with UserTokenError. The genuine token verifies, so every
refusal is the attack's doing."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import duckdb
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from api.support import Api, Server, create_workspace
from toolkit.tokens import UserTokenError, verify_user_token

TOKEN = "/v2/auth/generate_token"


@pytest.fixture(scope="module")
def issued(tmp_path_factory):
    """A token from a real server, its claims, and the workspace secret (read from the database
    before the server starts: DuckDB admits one writing process)."""
    root = tmp_path_factory.mktemp("token-server")
    db = root / "tokens.duckdb"
    creds = create_workspace(db)
    con = duckdb.connect(str(db))
    try:
        api_key_hash = hashlib.sha256(creds["apiKey"].encode()).hexdigest()
        (secret,) = con.execute("SELECT jwt_secret FROM workspaces WHERE api_key_hash = ?", [api_key_hash]).fetchone()
    finally:
        con.close()
    srv = Server(db, root / "server.log").start()
    try:
        with srv.client(creds) as client:
            token = Api(client).ok(
                TOKEN,
                {
                    "userId": "ann",
                    "userProperties": {"name": "Ann", "email": "a@x.io"},
                    "permissions": {"resources": [{"type": "organization", "id": "acme"}]},
                },
            )
    finally:
        srv.stop()
    token = token["data"]["token"]
    claims = verify_user_token(token, secret)  # the genuine article passes
    return {"token": token, "claims": claims, "secret": secret, "now": claims["iat"] + 60}


def b64(value) -> str:
    raw = value if isinstance(value, bytes) else json.dumps(value).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def hmac_signed(header: dict, claims: dict, key: str) -> str:
    signing_input = f"{b64(header)}.{b64(claims)}"
    return f"{signing_input}.{b64(hmac.new(key.encode(), signing_input.encode(), hashlib.sha256).digest())}"


def refused(token, issued, match: str | None = None) -> str:
    with pytest.raises(UserTokenError, match=match) as err:
        verify_user_token(token, issued["secret"], now_s=issued["now"])
    return str(err.value)


@pytest.mark.parametrize(
    "alg",
    [
        "none",
        "None",
        "NONE",
        "nOnE",
        "",
        None,
        "HS384",
        "HS512",
        "hs256",
        "HS256 ",
        "RS256",
        "RS512",
        "ES256",
        "PS256",
        "EdDSA",
    ],
)
def test_any_algorithm_but_hs256_is_refused_even_when_signed_with_the_secret(issued, alg):
    """The key-confusion attack: a header naming another algorithm over a signature made with the
    workspace secret (a verifier that let the header choose would accept it)."""
    refused(hmac_signed({"alg": alg, "typ": "JWT"}, issued["claims"], issued["secret"]), issued)


@pytest.mark.parametrize("alg", ["none", "None", "NONE"])
@pytest.mark.parametrize("signature", ["", "AAAA"])
def test_unsigned_tokens_are_refused(issued, alg, signature):
    refused(f"{b64({'alg': alg})}.{b64(issued['claims'])}.{signature}", issued, "algorithm")


def test_an_rsa_signed_token_is_refused(issued):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    refused(jwt.encode(issued["claims"], key, algorithm="RS256"), issued, "algorithm")


@pytest.mark.parametrize(
    "header",
    [
        {"jku": "https://attacker.example/jwks.json", "kid": "attacker"},
        {"x5u": "https://attacker.example/cert.pem"},
        {"kid": "../../secret"},
        {"jwk": {"kty": "oct", "k": b64(b"attacker-key-0123456789-0123456789")}},
    ],
)
def test_key_headers_do_not_choose_the_key(issued, header):
    attacker_key = "attacker-key-0123456789-0123456789"
    forged = hmac_signed({"alg": "HS256", "typ": "JWT", **header}, issued["claims"], attacker_key)
    refused(forged, issued, "signature verification failed")


def test_an_unknown_critical_header_is_refused(issued):
    token = hmac_signed({"alg": "HS256", "crit": ["x-bind"], "x-bind": 1}, issued["claims"], issued["secret"])
    refused(token, issued)


@pytest.mark.parametrize("claim", ["exp", "iat", "sub", "iss"])
def test_a_missing_required_claim_is_refused(issued, claim):
    claims = {k: v for k, v in issued["claims"].items() if k != claim}
    refused(hmac_signed({"alg": "HS256"}, claims, issued["secret"]), issued, f"'{claim}'")


@pytest.mark.parametrize(
    "change",
    [
        {"exp": "9999999999"},
        {"exp": True},
        {"exp": None},
        {"iat": "0"},
        {"sub": 7},
        {"sub": ""},
        {"sub": None},
        {"iss": "someone-else"},
        {"iss": ["collab-workflows"]},
        {"nbf": "0"},
    ],
)
def test_a_mistyped_or_foreign_claim_is_refused(issued, change):
    refused(hmac_signed({"alg": "HS256"}, {**issued["claims"], **change}, issued["secret"]), issued)


def test_not_yet_valid_and_expired_are_refused_at_the_given_time(issued):
    claims, now = issued["claims"], issued["now"]
    early = hmac_signed({"alg": "HS256"}, {**claims, "nbf": now + 30}, issued["secret"])
    assert "not valid yet" in refused(early, issued)
    assert verify_user_token(early, issued["secret"], now_s=now + 30)["sub"] == "ann"
    with pytest.raises(UserTokenError, match="expired"):
        verify_user_token(issued["token"], issued["secret"], now_s=claims["exp"])
    stale = hmac_signed({"alg": "HS256"}, {**claims, "iat": 1_000, "exp": 2_000}, issued["secret"])
    with pytest.raises(UserTokenError, match="expired"):
        verify_user_token(stale, issued["secret"])  # against the wall clock


@pytest.mark.parametrize(
    "mangle",
    [
        lambda t: t + ".x",
        lambda t: t.rsplit(".", 1)[0],
        lambda t: " " + t,
        lambda t: t.replace(".", "..", 1),
        lambda t: t[:-2],
        lambda t: b64(["not", "an", "object"]).join(t.split(".")[::2]),
    ],
)
def test_structurally_broken_tokens_are_refused(issued, mangle):
    refused(mangle(issued["token"]), issued)
