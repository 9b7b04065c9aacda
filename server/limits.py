"""Fair shares for the HTTP API: the per-workspace rate and concurrency limits and the
server-wide cap of :mod:`toolkit.services.fair_shares`, a deadline for receiving a request
body, and a size limit on request heads (431 in the API's envelope).

:class:`LimitsMiddleware` is ASGI middleware around the routes. For a ``/v2/`` request it

1. refuses with 503 ``UNAVAILABLE`` when the server already has ``in_flight_total`` requests
   in flight;
2. finds the workspace of the service headers: a pair the authenticator confirmed before
   (and no credential changed since) without a thread — on a shared store after one read of
   the credential epoch, shared by the requests that arrive together — so a workspace over
   its limits is refused cheaply; a new pair is looked up in the database;
3. takes a token from the workspace's bucket (``rate_per_s`` refill, ``burst`` size) and a
   slot of its ``in_flight`` requests, else 429 ``RESOURCE_EXHAUSTED`` with ``Retry-After``,
   answered ``refusal_delay_s`` late (a tarpit: a client resending at once cannot make the
   server spend its time on refusals);
4. runs the route with the workspace handed over (``scope["collab.workspace"]``) and a
   ``receive`` that gives up on a body not received in full within ``body_timeout_s``
   (408, and the connection is closed), then waits its turn at the fair gate
   (:class:`~toolkit.services.fair_shares.FairGate`: ``running`` requests work at once, the
   slots handed to the waiting workspaces in turn).

Requests without valid credentials go on to the route, which answers 401 as before.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toolkit.errors import ApiError, ErrorCode
from toolkit.services.envelope import error_bytes, retry_after
from toolkit.services.fair_shares import FairGate, Limits, RateLimited, Tenants
from toolkit.services.workspaces import Authenticator

WORKSPACE_KEY = "collab.workspace"


class BodyTimeout(Exception):
    """The client did not send the whole body in time."""


async def send_error(
    send: Send, exc: ApiError, status: int | None = None, headers: dict[str, str] | None = None
) -> None:
    """Answer with the API's error envelope (as :func:`server.envelope.error`), from ASGI."""
    body = error_bytes(exc)
    headers = {"content-type": "application/json", "content-length": str(len(body)), **(headers or {})}
    if (seconds := retry_after(exc)) is not None:
        headers["retry-after"] = seconds
    raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status or exc.code.http_status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return None


class LimitsMiddleware:
    """ASGI middleware enforcing :class:`Limits` (see the module docstring)."""

    def __init__(self, app: ASGIApp, limits: Limits, authenticator: Callable[[], Authenticator | None]) -> None:
        self.app = app
        self.limits = limits
        self.authenticator = authenticator  # () -> the app's Authenticator (made at startup)
        self.tenants = Tenants(limits)
        self.gate = FairGate(limits.running)
        self.in_flight = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # The protocol refuses a head over the limit only while it is still incomplete (one that
        # comes in a single read passes): measure the parsed one too.
        head = (
            len(scope.get("raw_path") or scope["path"])
            + len(scope.get("query_string") or b"")
            + sum(len(k) + len(v) + 4 for k, v in scope["headers"])
        )
        if 0 < self.limits.max_head_bytes < head:
            message = f"request headers: larger than the {self.limits.max_head_bytes}-byte limit"
            await send_error(send, ApiError(ErrorCode.INVALID_ARGUMENT, message), 431)
            return
        if not scope["path"].startswith("/v2/"):
            await self.app(scope, receive, send)
            return
        total = self.limits.in_flight_total
        if total > 0 and self.in_flight >= total:
            message = f"the server has {self.in_flight} requests in flight, its limit: retry shortly"
            await send_error(send, ApiError(ErrorCode.UNAVAILABLE, message))
            return
        self.in_flight += 1
        try:
            refused = await self._serve(scope, receive, send)
        finally:
            self.in_flight -= 1
        if refused is not None:
            # Answered late, and outside the server-wide count: a client that resends at once
            # is slowed to one refusal per connection per delay, which costs the server a timer
            # instead of a request's work (a tarpit).
            await asyncio.sleep(min(self.limits.refusal_delay_s, refused.retry_after_s))
            await send_error(send, refused)

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> RateLimited | None:
        """Serve the request, or say why this workspace must wait (answered by the caller)."""
        authenticator = self.authenticator()
        assert authenticator is not None  # made at startup, before any request is served
        try:
            workspace = await authenticator.identify(
                _header(scope, b"x-service-api-key"), _header(scope, b"x-service-auth-token")
            )
        except ApiError as exc:  # the database, not the credentials: 503, not 401
            await send_error(send, exc)
            return None
        if workspace is None:  # the route answers 401 (after its body-size check), not looking again
            await self._run({**scope, WORKSPACE_KEY: False}, receive, send, None)
            return None
        ws = workspace.workspace_id
        refused = self.tenants.admit(ws)
        if refused is not None:
            return refused
        try:
            await self._run({**scope, WORKSPACE_KEY: workspace}, receive, send, ws)
        finally:
            self.tenants.release(ws)
        return None

    async def _run(self, scope: Scope, receive: Receive, send: Send, tenant: str | None) -> None:
        """The route, with a deadline on its body, and its work behind the fair gate: the slot
        is taken once the whole body is in (a slow sender holds none) and given back when the
        route returns. A late body is answered 408 and the connection closed (what is left of
        the body would otherwise be read as a request)."""
        deadline = time.monotonic() + self.limits.body_timeout_s
        state = {"body": False, "slot": False, "response": False}

        async def gated_receive() -> Message:
            if state["body"]:
                return await receive()
            try:
                if self.limits.body_timeout_s > 0:
                    # A timeout scope, not wait_for: that would wrap receive() in a task of its own.
                    async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
                        message = await receive()
                else:
                    message = await receive()
            except TimeoutError:
                raise BodyTimeout() from None
            if message["type"] != "http.request" or not message.get("more_body", False):
                state["body"] = True
                if message["type"] == "http.request":
                    await self.gate.acquire(tenant)
                    state["slot"] = True
            return message

        async def tracked_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                state["response"] = True
            await send(message)

        try:
            await self.app(scope, gated_receive, tracked_send)
        except BodyTimeout:
            if state["response"]:
                raise
            limit = self.limits.body_timeout_s
            await send_error(
                send,
                ApiError(ErrorCode.INVALID_ARGUMENT, f"body: not received in full within {limit:g} s"),
                408,
                headers={"connection": "close"},
            )
        finally:
            if state["slot"]:
                self.gate.release()
