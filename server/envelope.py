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
from toolkit.services.envelope import error_bytes, retry_after


class BodyTooLarge(Exception):
    """Raised when a body is too large: answered 413 with INVALID_ARGUMENT."""


def ok(result: Any) -> Response:
    return Response(encode({"result": result}), media_type="application/json")


def error(exc: ApiError, status: int | None = None) -> Response:
    """The error envelope, with ``Retry-After`` when the client should try again later."""
    response = Response(error_bytes(exc), status_code=status or exc.code.http_status, media_type="application/json")
    if (seconds := retry_after(exc)) is not None:
        response.headers["retry-after"] = seconds
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
