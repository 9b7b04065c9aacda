"""uvicorn's httptools protocol with the API's answers where uvicorn would answer plain text, a
cap on open connections and a deadline and a size limit for a request's head (docs/decisions.md,
"Connections" and "The HTTP parser and the event loop").

- A head over ``max_head_bytes`` (counted as it comes: httptools has no limit) is 431 in the
  ``INVALID_ARGUMENT`` envelope; any other request that is not HTTP/1.1 is 400 in the same.
- A connection beyond ``max_connections`` is answered 503 ``UNAVAILABLE`` with ``Retry-After``
  and closed before anything is read (uvicorn's ``limit_concurrency`` answers in plain text).
- A head not whole within ``head_timeout_s`` of its first byte is 408, and the connection
  closed; so is a new connection that sends nothing for as long (uvicorn never closes one). An
  idle kept-alive connection is uvicorn's: closed after ``keep_alive_s``, however much longer
  that is, so that an operator can keep connections open past a load balancer's idle timeout.
"""

from __future__ import annotations

import importlib.util
from http import HTTPStatus

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from toolkit.errors import ApiError, ErrorCode
from toolkit.services.envelope import error_bytes
from toolkit.services.serving import ConnectionLimits


def _raw_response(status: int, exc: ApiError, extra: tuple[tuple[str, str], ...] = ()) -> bytes:
    """A whole HTTP/1.1 answer in the API's error envelope, closing the connection."""
    body = error_bytes(exc)
    head = [
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}",
        "content-type: application/json",
        f"content-length: {len(body)}",
        "connection: close",
        *(f"{k}: {v}" for k, v in extra),
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body


def protocol_class(limits: ConnectionLimits) -> type[HttpToolsProtocol]:
    """The protocol class to give ``uvicorn.Config(http=…)`` for these limits."""

    class ApiHttpToolsProtocol(HttpToolsProtocol):
        _head_timer = None
        _awaiting_head = True  # from the start and after each body, until a head is whole
        _head_bytes = 0  # what came of the awaited head so far

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            if limits.max_connections and len(self.connections) > limits.max_connections:
                why = f"the server has {limits.max_connections} connections open, its limit: retry shortly"
                transport.write(_raw_response(503, ApiError(ErrorCode.UNAVAILABLE, why), (("retry-after", "1"),)))
                transport.close()
                return
            self._arm_head_timer()

        def connection_lost(self, exc) -> None:
            self._cancel_head_timer()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._awaiting_head:
                if not self._head_bytes and self._head_timer is None:
                    self._arm_head_timer()  # a head's clock starts at its first byte
                self._head_bytes += len(data)
            super().data_received(data)
            if self._awaiting_head and self._head_bytes > limits.max_head_bytes and not self.transport.is_closing():
                self.send_400_response("")

        def on_headers_complete(self) -> None:
            self._awaiting_head, self._head_bytes = False, 0
            self._cancel_head_timer()
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            self._awaiting_head = True
            super().on_message_complete()

        def send_400_response(self, msg: str) -> None:
            if self._head_bytes > limits.max_head_bytes:
                status, message = 431, f"request headers: larger than the {limits.max_head_bytes}-byte limit"
            else:
                status, message = 400, "request: not a valid HTTP/1.1 request"
            self._cancel_head_timer()
            self.transport.write(_raw_response(status, ApiError(ErrorCode.INVALID_ARGUMENT, message)))
            self.transport.close()

        def _arm_head_timer(self) -> None:
            self._cancel_head_timer()
            if limits.head_timeout_s > 0:
                self._head_timer = self.loop.call_later(limits.head_timeout_s, self._head_timed_out)

        def _cancel_head_timer(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_timed_out(self) -> None:
            self._head_timer = None
            if self.transport.is_closing() or not self._awaiting_head:
                return
            if self._head_bytes:  # part of a head came, too slowly: say so
                why = f"request headers: not received within {limits.head_timeout_s:g} s"
                self.transport.write(_raw_response(408, ApiError(ErrorCode.INVALID_ARGUMENT, why)))
            self.transport.close()

    return ApiHttpToolsProtocol


def uvicorn_options(limits: ConnectionLimits) -> dict:
    """The ``uvicorn.run`` keyword arguments that apply these limits (uvloop: not on Windows)."""
    return {
        "http": protocol_class(limits),
        "loop": "uvloop" if importlib.util.find_spec("uvloop") else "asyncio",
        "timeout_keep_alive": limits.keep_alive_s,
        "limit_concurrency": None,
    }
