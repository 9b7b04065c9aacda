"""The v2 envelope as the API reads it: the ``data`` object of a JSON request body, or
``INVALID_ARGUMENT`` saying what is wrong with the body (api-v2 §1; semantics §1). The server
reads the body off the wire (:mod:`server.envelope`) and hands its bytes here; what it answers
with an error is :func:`error_bytes` and, when the client should try again later, the
:func:`retry_after` header.

>>> parse_data(b'{"data": {"definitionId": "d-1"}}')
{'definitionId': 'd-1'}
>>> parse_data(b'{"definitionId": "d-1"}')
Traceback (most recent call last):
...
toolkit.errors.ApiError: data: field required (wrap the parameters as {"data": {...}})
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from toolkit.errors import ApiError, ErrorCode
from toolkit.jsonio import encode

MAX_DEPTH = 64


def _depth_ok(value: Any, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return False
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return True


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _lone_surrogate(body: dict) -> str | None:
    """Where a string or key holds a lone UTF-16 surrogate (``"\\ud800"`` is valid JSON but not
    Unicode text: it can be neither stored nor sent back), else None. The answer names the
    place, never the text, so that the error message itself stays encodable."""
    stack: list[tuple[Any, str]] = [(body, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return path or "body"
        elif isinstance(item, dict):
            for key, value in item.items():
                if _SURROGATE.search(key):
                    return f"{path or 'body'}: a key"
                stack.append((value, f"{path}.{key}" if path else key))
        elif isinstance(item, list):
            stack.extend((value, f"{path}[{i}]") for i, value in enumerate(item))
    return None


def _no_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    """A number such as 1e999 is valid JSON but overflows to infinity, which no JSON answer
    can carry (it would be echoed as the non-JSON token ``Infinity``): refuse it."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text} is out of range")
    return value


def parse_data(raw: bytes) -> Any:
    """The ``data`` member of a JSON object body, or INVALID_ARGUMENT saying what is wrong."""
    try:
        body = json.loads(raw, parse_constant=_no_constant, parse_float=_finite_float)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise ApiError(ErrorCode.INVALID_ARGUMENT, f"body: not valid JSON ({exc})") from None
    if not isinstance(body, dict):
        raise ApiError(ErrorCode.INVALID_ARGUMENT, 'body: must be a JSON object {"data": {...}}')
    if "data" not in body:
        raise ApiError(ErrorCode.INVALID_ARGUMENT, 'data: field required (wrap the parameters as {"data": {...}})')
    extra = [k for k in body if k != "data"]
    if extra:  # quoted as JSON (ASCII): the key may be empty, or not Unicode text
        raise ApiError(
            ErrorCode.INVALID_ARGUMENT,
            f'body: unknown field {json.dumps(extra[0])} (only "data" is allowed at the top level)',
        )
    where = _lone_surrogate(body)
    if where is not None:
        raise ApiError(ErrorCode.INVALID_ARGUMENT, f"{where}: not valid Unicode text (a lone surrogate escape)")
    if not isinstance(body["data"], dict):
        raise ApiError(ErrorCode.INVALID_ARGUMENT, "data: must be an object")
    if not _depth_ok(body["data"], MAX_DEPTH):
        raise ApiError(ErrorCode.INVALID_ARGUMENT, f"data: nested deeper than {MAX_DEPTH} levels")
    return body["data"]


def error_bytes(exc: ApiError) -> bytes:
    """The error envelope of ``exc`` as the body of an answer.

    >>> error_bytes(ApiError(ErrorCode.NOT_FOUND, "execution ex_1 not found"))
    b'{"error":{"message":"execution ex_1 not found","status":"NOT_FOUND"}}'
    """
    return encode(exc.to_body())


def retry_after(exc: ApiError) -> str | None:
    """The ``Retry-After`` of an answer with ``exc``: the seconds the error names (a rate limit,
    a database being reconnected); one second for any other ``UNAVAILABLE``; else None.

    >>> retry_after(ApiError(ErrorCode.UNAVAILABLE, "the server is stopping"))
    '1'
    >>> retry_after(ApiError(ErrorCode.NOT_FOUND, "execution ex_1 not found")) is None
    True
    """
    seconds = getattr(exc, "retry_after_s", None)
    if seconds is None and exc.code is ErrorCode.UNAVAILABLE:
        seconds = 1
    return None if seconds is None else str(seconds)
