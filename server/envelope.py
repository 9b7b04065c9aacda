"""The v2 envelope over HTTP: ``{"data": …}`` in (read within the size limit, then parsed by
:func:`toolkit.services.envelope.parse_data`), ``{"result": …}`` or ``{"error": {message,
status}}`` out (api-v2 §1, §7; semantics §1). Order of checks: body size, authentication,
parsing."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from toolkit.errors import ApiError
from toolkit.jsonio import encode


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
