"""User tokens: HS256 JWTs that carry a user's identity and per-resource permissions
(api-v2 §4.1, §5; semantics §8).

Applications verify the tokens this service issues with :func:`verify_user_token`, which
pins the algorithm to HS256 (a token claiming ``alg: none`` or any other algorithm is
refused) and requires the ``exp``, ``iat``, ``sub`` and ``iss`` claims (RFC 8725 practice).

>>> secret = "s" * 48
>>> token = sign_user_token(secret, user={"userId": "ann", "name": "Ann", "email": "ann@example.com",
...                                       "isAdmin": False},
...                         resources=[{"type": "organization", "id": "acme", "accessRole": "editor"}],
...                         now_s=1_700_000_000, jti="fixed")
>>> claims = verify_user_token(token, secret, now_s=1_700_000_060)
>>> claims["sub"], claims["exp"] - claims["iat"]
('ann', 172800)
>>> verify_user_token(token, "another secret of enough length for HS256 keys!!")
Traceback (most recent call last):
...
toolkit.tokens.UserTokenError: invalid user token: signature verification failed
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import Any

import jwt

ALGORITHM = "HS256"
ISSUER = "collab-workflows"
LIFETIME_S = 48 * 3600
REQUIRED_CLAIMS = ("exp", "iat", "sub", "iss")

__all__ = ["ALGORITHM", "ISSUER", "LIFETIME_S", "UserTokenError", "sign_user_token", "verify_user_token"]


class UserTokenError(ValueError):
    """A user token that is malformed, forged, of another algorithm, expired or missing a claim."""


class _WrongSignature(UserTokenError):
    """Signed, but not with this secret (another of the candidates may still fit)."""


def sign_user_token(
    secret: str, *, user: dict[str, Any], resources: list[dict[str, Any]], now_s: int, jti: str | None = None
) -> str:
    """An HS256 JWT for ``user`` (``{userId, name, email, isAdmin}``) valid for 48 hours from ``now_s``."""
    claims = {
        "iss": ISSUER,
        "sub": user["userId"],
        "iat": int(now_s),
        "exp": int(now_s) + LIFETIME_S,
        "jti": jti or secrets.token_hex(16),
        "user": user,
        "permissions": {"resources": resources},
    }
    return jwt.encode(claims, secret, algorithm=ALGORITHM)


def verify_user_token(
    token: str, secret: str | Sequence[str], *, now_s: float | None = None, leeway: float = 0
) -> dict[str, Any]:
    """The claims of a token this service issued, or :class:`UserTokenError` saying why not.

    Only HS256 signed with ``secret`` is accepted — or with any of the secrets given as a
    list, e.g. the current one and one a rotation retired (see
    :func:`toolkit.services.credentials.verification_secrets`); ``exp``, ``iat``, ``sub`` and
    ``iss`` must be present and ``iss`` must be this service. ``now_s`` (Unix seconds)
    replaces the wall clock, for tests and replays.
    """
    if not isinstance(token, str) or not token:
        raise UserTokenError("invalid user token: empty")
    candidates = [secret] if isinstance(secret, str) else list(secret)
    if not candidates or not all(candidates):
        raise UserTokenError("invalid user token: no verification secret given")
    for key in candidates[:-1]:
        try:
            return _decode(token, key, now_s, leeway)
        except _WrongSignature:
            continue
    try:
        return _decode(token, candidates[-1], now_s, leeway)
    except _WrongSignature as exc:
        raise UserTokenError(str(exc)) from None


def _decode(token: str, secret: str, now_s: float | None, leeway: float) -> dict[str, Any]:
    try:
        claims = jwt.decode(
            token,
            secret,
            algorithms=[ALGORITHM],
            issuer=ISSUER,
            leeway=leeway,
            options={
                "require": list(REQUIRED_CLAIMS),
                "verify_exp": now_s is None,
                "verify_iat": now_s is None,
                "verify_nbf": now_s is None,
            },
        )
    except jwt.ExpiredSignatureError:
        raise UserTokenError("invalid user token: expired") from None
    except jwt.InvalidSignatureError:
        raise _WrongSignature("invalid user token: signature verification failed") from None
    except jwt.InvalidAlgorithmError:
        raise UserTokenError(f"invalid user token: algorithm not allowed (only {ALGORITHM})") from None
    except jwt.MissingRequiredClaimError as exc:
        raise UserTokenError(f"invalid user token: missing the {exc.claim!r} claim") from None
    except jwt.InvalidIssuerError:
        raise UserTokenError("invalid user token: issued by someone else") from None
    except jwt.PyJWTError as exc:
        raise UserTokenError(f"invalid user token: {exc}") from None
    if now_s is not None:
        _check_times(claims, now_s, leeway)
    if not isinstance(claims.get("sub"), str) or not claims["sub"]:
        raise UserTokenError("invalid user token: the 'sub' claim must be a non-empty string")
    return claims


def _check_times(claims: dict[str, Any], now_s: float, leeway: float) -> None:
    exp, iat = claims["exp"], claims["iat"]
    for name, value in (("exp", exp), ("iat", iat)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise UserTokenError(f"invalid user token: the {name!r} claim must be a number")
    if exp <= now_s - leeway:
        raise UserTokenError("invalid user token: expired")
    if iat > now_s + leeway:
        raise UserTokenError("invalid user token: issued in the future")
    # We never issue `nbf`, but a token that carries one is held to it at `now_s` too.
    nbf = claims.get("nbf")
    if nbf is not None:
        if isinstance(nbf, bool) or not isinstance(nbf, (int, float)):
            raise UserTokenError("invalid user token: the 'nbf' claim must be a number")
        if nbf > now_s + leeway:
            raise UserTokenError("invalid user token: not valid yet (nbf)")
