"""The v2 envelope: ``{"data": …}`` in, ``{"result": …}`` or ``{"error": {message, status}}`` out
(api-v2 §1, §7; semantics §1). Order of checks: body size, authentication, parsing."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from toolkit.errors import ApiError, ErrorCode
from toolkit.jsonio import encode

DEFAULT_MAX_BODY = 1024 * 1024
MAX_DEPTH = 64


class BodyTooLarge(Exception):
    """Raised when a body is too large: answered 413 with INVALID_ARGUMENT."""


def render(payload: dict, status: int = 200) -> Response:
    return Response(encode(payload), status_code=status, media_type="application/json")


def ok(result: Any) -> Response:
    return render({"result": result})


def error(exc: ApiError, status: int | None = None) -> Response:
    """The error envelope; an error that says when to try again (a database that cannot be
    reached, a rate limit) carries it as ``Retry-After``."""
    response = render(exc.to_body(), status or exc.code.http_status)
    retry_after = getattr(exc, "retry_after_s", None)
    if retry_after is not None:
        response.headers["retry-after"] = str(retry_after)
    return response


async def read_body(request: Request, limit: int) -> bytes:
    """The raw body, refusing to buffer more than ``limit`` bytes (checked as it streams in)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge()
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge()
        chunks.append(chunk)
    return b"".join(chunks)


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
    where = _lone_surrogate(body)
    if where is not None:
        raise ApiError(ErrorCode.INVALID_ARGUMENT, f"{where}: not valid Unicode text (a lone surrogate escape)")
    if "data" not in body:
        raise ApiError(ErrorCode.INVALID_ARGUMENT, 'data: field required (wrap the parameters as {"data": {...}})')
    extra = [k for k in body if k != "data"]
    if extra:
        raise ApiError(
            ErrorCode.INVALID_ARGUMENT, f'{extra[0]}: unknown field (only "data" is allowed at the top level)'
        )
    if not isinstance(body["data"], dict):
        raise ApiError(ErrorCode.INVALID_ARGUMENT, "data: must be an object")
    if not _depth_ok(body["data"], MAX_DEPTH):
        raise ApiError(ErrorCode.INVALID_ARGUMENT, f"data: nested deeper than {MAX_DEPTH} levels")
    return body["data"]
