"""The outermost ASGI middleware: a request id for every request (echoed in ``x-request-id``),
one log line per request (:func:`toolkit.logs.log_request`), and the HTTP metrics.

It is plain ASGI, not ``BaseHTTPMiddleware``, so it adds a few microseconds a request and
leaves streaming alone. The route in the log and the metrics is the route *template* (a
path the app serves, ``unmatched`` for anything else): never the raw path or query, which
could carry ids or credentials.
"""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toolkit.logs import REQUEST_ID_HEADER, RequestInfo, current, log_request, request_id_from
from toolkit.services.metrics import Metrics

UNMATCHED = "unmatched"
_HEADER = REQUEST_ID_HEADER.encode()


class Observe:
    """``Observe(app, routes, metrics)``: ``routes`` are the paths the app serves (templates),
    ``metrics`` the app's :class:`~toolkit.services.metrics.Metrics` or None (metrics off)."""

    def __init__(self, app: ASGIApp, routes: set[str], metrics: Metrics | None = None) -> None:
        self.app = app
        self.routes = frozenset(routes)
        self.metrics = metrics

    def route_of(self, path: str) -> str:
        return path if path in self.routes else UNMATCHED

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = time.perf_counter()
        raw_id = next((value for name, value in scope["headers"] if name == _HEADER), None)
        info = RequestInfo(request_id_from(raw_id))
        token = current.set(info)
        status = 500  # what the client gets if the app raises before answering

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = [h for h in message.get("headers", ()) if h[0].lower() != _HEADER]
                headers.append((_HEADER, info.request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            seconds = time.perf_counter() - began
            route = self.route_of(scope["path"])
            if self.metrics is not None:
                self.metrics.request(route, status, seconds)
            log_request(scope["method"], route, status, seconds, info)
            current.reset(token)
