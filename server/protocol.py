"""uvicorn's h11 protocol with the API's answers where uvicorn would answer plain text, a cap
on open connections and a deadline for a request's head.

- A request head larger than ``max_head_bytes`` (h11's ``max_incomplete_event_size``) is
  answered 431 with ``{"error": {"status": "INVALID_ARGUMENT", …}}``; any other request that
  is not HTTP/1.1 gets 400 in the same envelope (uvicorn answers "Invalid HTTP request
  received." in plain text).
- A connection beyond ``max_connections`` open at once is answered 503 ``UNAVAILABLE`` with
  ``Retry-After`` and closed before anything is read: this replaces uvicorn's
  ``limit_concurrency`` (whose 503 is plain text); requests in flight are capped by
  :class:`server.limits.LimitsMiddleware`.
- A connection that has not sent a whole request head within ``head_timeout_s`` of opening
  (or of its previous answer) is answered 408 and closed, so slow senders cannot hold
  connections open (uvicorn's keep-alive timeout covers only connections that send nothing).
"""

from __future__ import annotations

import h11
from uvicorn.protocols.http.h11_impl import STATUS_PHRASES, H11Protocol

from toolkit.errors import ApiError, ErrorCode
from toolkit.services.envelope import error_bytes
from toolkit.services.serving import ConnectionLimits


def _raw_response(status: int, exc: ApiError, extra: tuple[tuple[str, str], ...] = ()) -> bytes:
    """A whole HTTP/1.1 answer in the API's error envelope, closing the connection."""
    body = error_bytes(exc)
    head = [
        f"HTTP/1.1 {status} {STATUS_PHRASES[status].decode()}",
        "content-type: application/json",
        f"content-length: {len(body)}",
        "connection: close",
        *(f"{k}: {v}" for k, v in extra),
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body


def protocol_class(limits: ConnectionLimits) -> type[H11Protocol]:
    """The protocol class to give ``uvicorn.Config(http=…)`` for these limits."""

    class ApiH11Protocol(H11Protocol):
        _head_timer = None

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            if limits.max_connections and len(self.connections) > limits.max_connections:
                refused = ApiError(
                    ErrorCode.UNAVAILABLE,
                    f"the server has {limits.max_connections} connections open, its limit: retry shortly",
                )
                transport.write(_raw_response(503, refused, (("retry-after", "1"),)))
                transport.close()
                return
            self._arm_head_timer()

        def connection_lost(self, exc) -> None:
            self._cancel_head_timer()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:  # the head is in (or the connection is over)
                self._cancel_head_timer()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
                self._arm_head_timer()

        def send_400_response(self, msg: str) -> None:
            buffered = len(self.conn.trailing_data[0])
            if buffered > limits.max_head_bytes:
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
            if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
                return
            if self.conn.trailing_data[0]:  # part of a head came, too slowly: say so
                late = ApiError(
                    ErrorCode.INVALID_ARGUMENT, f"request headers: not received within {limits.head_timeout_s:g} s"
                )
                self.transport.write(_raw_response(408, late))
            self.transport.close()

    return ApiH11Protocol


def uvicorn_options(limits: ConnectionLimits) -> dict:
    """The ``uvicorn.run`` keyword arguments that apply these limits."""
    return {
        "http": protocol_class(limits),
        "h11_max_incomplete_event_size": limits.max_head_bytes,
        "timeout_keep_alive": limits.keep_alive_s,
        "limit_concurrency": None,
    }
