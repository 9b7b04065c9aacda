"""User tokens: signing, the claims of semantics §8, and verification that pins HS256 and
requires exp, iat, sub and iss (RFC 8725 practice)."""

from __future__ import annotations

import base64
import json

import jwt
import pytest

from toolkit.model import validate
from toolkit.model.access import GenerateToken
from toolkit.services.access import generate_token
from toolkit.services.context import Services
from toolkit.services.workspaces import Workspace
from toolkit.store import Store
from toolkit.tokens import ISSUER, LIFETIME_S, UserTokenError, sign_user_token, verify_user_token

SECRET = "a-workspace-secret-long-enough-for-hs256-and-hs512-0123456789abcd"
OTHER_SECRET = "another-secret-long-enough-for-hs256-abcdefghijklmn"
NOW = 1_700_000_000
USER = {"userId": "ann", "name": "Ann", "email": "ann@example.com", "isAdmin": False}
RESOURCES = [{"type": "organization", "id": "acme", "accessRole": "editor"}]


def _b64(obj) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


def _claims(**overrides):
    claims = {
        "iss": ISSUER,
        "sub": "ann",
        "iat": NOW,
        "exp": NOW + LIFETIME_S,
        "jti": "j1",
        "user": USER,
        "permissions": {"resources": RESOURCES},
    }
    claims.update(overrides)
    return {k: v for k, v in claims.items() if v is not None}


def test_round_trip_with_the_claims_of_semantics_8():
    token = sign_user_token(SECRET, user=USER, resources=RESOURCES, now_s=NOW)
    claims = verify_user_token(token, SECRET, now_s=NOW + 10)
    assert claims["iss"] == ISSUER and claims["sub"] == "ann"
    assert claims["iat"] == NOW and claims["exp"] == NOW + 48 * 3600
    assert isinstance(claims["jti"], str) and len(claims["jti"]) >= 16
    assert claims["user"] == USER
    assert claims["permissions"] == {"resources": RESOURCES}
    assert jwt.get_unverified_header(token)["alg"] == "HS256"


def test_each_token_has_its_own_jti():
    a = sign_user_token(SECRET, user=USER, resources=RESOURCES, now_s=NOW)
    b = sign_user_token(SECRET, user=USER, resources=RESOURCES, now_s=NOW)
    assert verify_user_token(a, SECRET, now_s=NOW)["jti"] != verify_user_token(b, SECRET, now_s=NOW)["jti"]


def test_wall_clock_verification_of_a_fresh_token():
    import time

    token = sign_user_token(SECRET, user=USER, resources=RESOURCES, now_s=int(time.time()))
    assert verify_user_token(token, SECRET)["sub"] == "ann"


def test_alg_none_is_refused():
    unsigned = f"{_b64({'alg': 'none', 'typ': 'JWT'})}.{_b64(_claims())}."
    with pytest.raises(UserTokenError, match="algorithm not allowed"):
        verify_user_token(unsigned, SECRET, now_s=NOW)


def test_another_hmac_algorithm_is_refused():
    token = jwt.encode(_claims(), SECRET, algorithm="HS512")
    with pytest.raises(UserTokenError, match="algorithm not allowed"):
        verify_user_token(token, SECRET, now_s=NOW)


def test_signed_with_another_secret_is_refused():
    token = sign_user_token(OTHER_SECRET, user=USER, resources=RESOURCES, now_s=NOW)
    with pytest.raises(UserTokenError, match="signature verification failed"):
        verify_user_token(token, SECRET, now_s=NOW)


def test_a_tampered_payload_is_refused():
    header, _, signature = sign_user_token(SECRET, user=USER, resources=RESOURCES, now_s=NOW).split(".")
    forged = f"{header}.{_b64(_claims(sub='mallory'))}.{signature}"
    with pytest.raises(UserTokenError, match="signature"):
        verify_user_token(forged, SECRET, now_s=NOW)


def test_expired_is_refused():
    token = sign_user_token(SECRET, user=USER, resources=RESOURCES, now_s=NOW)
    assert verify_user_token(token, SECRET, now_s=NOW + LIFETIME_S - 1)["sub"] == "ann"
    with pytest.raises(UserTokenError, match="expired"):
        verify_user_token(token, SECRET, now_s=NOW + LIFETIME_S)
    old = sign_user_token(SECRET, user=USER, resources=RESOURCES, now_s=1_000_000)
    with pytest.raises(UserTokenError, match="expired"):
        verify_user_token(old, SECRET)  # against the wall clock


def test_leeway_allows_small_clock_skew():
    token = sign_user_token(SECRET, user=USER, resources=RESOURCES, now_s=NOW)
    assert verify_user_token(token, SECRET, now_s=NOW + LIFETIME_S + 5, leeway=10)["sub"] == "ann"


@pytest.mark.parametrize("claim", ["exp", "iat", "sub", "iss"])
def test_required_claims(claim):
    token = jwt.encode(_claims(**{claim: None}), SECRET, algorithm="HS256")
    with pytest.raises(UserTokenError, match=f"missing the '{claim}' claim"):
        verify_user_token(token, SECRET, now_s=NOW)


def test_another_issuer_is_refused():
    token = jwt.encode(_claims(iss="someone-else"), SECRET, algorithm="HS256")
    with pytest.raises(UserTokenError, match="issued by someone else"):
        verify_user_token(token, SECRET, now_s=NOW)


def test_issued_in_the_future_is_refused():
    token = jwt.encode(_claims(iat=NOW + 3600), SECRET, algorithm="HS256")
    with pytest.raises(UserTokenError, match="future"):
        verify_user_token(token, SECRET, now_s=NOW)


@pytest.mark.parametrize("token", ["", "not-a-jwt", "a.b.c", None, 42])
def test_garbage_is_refused(token):
    with pytest.raises(UserTokenError):
        verify_user_token(token, SECRET, now_s=NOW)


def test_an_empty_secret_is_refused():
    token = sign_user_token(SECRET, user=USER, resources=RESOURCES, now_s=NOW)
    with pytest.raises(UserTokenError, match="secret"):
        verify_user_token(token, "", now_s=NOW)


class FixedClock:
    def __init__(self, ms: int) -> None:
        self.ms = ms

    def now(self) -> int:
        return self.ms


def test_generate_token_service_signs_with_the_workspace_secret_and_applies_defaults():
    with Store(":memory:") as store:
        services = Services(store, clock=FixedClock(NOW * 1000 + 999))
        workspace = Workspace("ws_1", "test", False, SECRET, True)
        request = validate(
            GenerateToken,
            {
                "userId": "ann",
                "userProperties": {"name": "Ann", "email": "ann@example.com"},
                "permissions": {
                    "resources": [
                        {"type": "organization", "id": "acme"},
                        {
                            "type": "document",
                            "id": "d1",
                            "organizationId": "acme",
                            "accessRole": "viewer",
                            "expiresAt": NOW + 60,
                        },
                        {"type": "folder", "id": "f1", "organizationId": "acme", "expiresAt": 1.5e9},
                    ]
                },
            },
        )
        result = generate_token(services, workspace, request)
        assert result["status"] == "success" and set(result["data"]) == {"token"}
        claims = verify_user_token(result["data"]["token"], SECRET, now_s=NOW)
        assert claims["iat"] == NOW and claims["exp"] == NOW + LIFETIME_S
        assert claims["user"] == {"userId": "ann", "name": "Ann", "email": "ann@example.com", "isAdmin": False}
        assert claims["permissions"]["resources"] == [
            {"type": "organization", "id": "acme", "accessRole": "editor"},
            {"type": "document", "id": "d1", "organizationId": "acme", "accessRole": "viewer", "expiresAt": NOW + 60},
            {"type": "folder", "id": "f1", "organizationId": "acme", "accessRole": "editor", "expiresAt": 1.5e9},
        ]
        with pytest.raises(UserTokenError):
            verify_user_token(result["data"]["token"], OTHER_SECRET, now_s=NOW)
