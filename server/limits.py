"""Fair shares for the HTTP API: per-workspace rate and concurrency limits, a server-wide cap
on requests in flight, a deadline for receiving a request body, and a size limit on request
heads (431 in the API's envelope).

:class:`LimitsMiddleware` is ASGI middleware around the routes. For a ``/v2/`` request it

1. refuses with 503 ``UNAVAILABLE`` when the server already has ``in_flight_total`` requests
   in flight;
2. finds the workspace of the service headers: a pair the authenticator confirmed before
   (and no credential changed since) without the database or a thread, so a workspace over
   its limits is refused cheaply; a new pair is looked up in the database;
3. takes a token from the workspace's bucket (``rate_per_s`` refill, ``burst`` size) and a
   slot of its ``in_flight`` requests, else 429 ``RESOURCE_EXHAUSTED`` with ``Retry-After``,
   answered ``refusal_delay_s`` late (a tarpit: a client resending at once cannot make the
   server spend its time on refusals);
4. runs the route with the workspace handed over (``scope["collab.workspace"]``) and a
   ``receive`` that gives up on a body not received in full within ``body_timeout_s``
   (408, and the connection is closed), then waits its turn at the fair gate
   (:mod:`server.fair`: ``running`` requests work at once, the slots handed to the waiting
   workspaces in turn).

Requests without valid credentials go on to the route, which answers 401 as before. The
state lives in this process's memory (see docs/decisions.md, "Limits and credentials").
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool

from server.fair import FairGate
from toolkit.errors import ApiError, ErrorCode

WORKSPACE_KEY = "collab.workspace"


@dataclass(frozen=True)
class Limits:
    """What one workspace, and the server as a whole, may ask for at once. 0 turns a limit off."""

    rate_per_s: float = 100.0  # requests per second per workspace (token bucket refill)
    burst: int = 0  # bucket size; 0 means twice the rate (at least 1)
    in_flight: int = 32  # requests of one workspace being served at once
    in_flight_total: int = 128  # requests being served at once, all workspaces together
    body_timeout_s: float = 30.0  # a request body must arrive in full within this time
    max_head_bytes: int = 16 * 1024  # request line and headers together
    running: int = 16  # requests doing their work at once, shared fairly (server.fair)
    refusal_delay_s: float = 1.0  # a 429 is answered this late (at most its Retry-After)

    @property
    def bucket_size(self) -> float:
        return float(self.burst) if self.burst > 0 else max(1.0, 2 * self.rate_per_s)


class BodyTimeout(Exception):
    """The client did not send the whole body in time."""


class _Tenant:
    """One workspace's token bucket and its count of requests in flight."""

    __slots__ = ("tokens", "stamp", "in_flight")

    def __init__(self, size: float, now: float) -> None:
        self.tokens, self.stamp, self.in_flight = size, now, 0


class Tenants:
    """Token buckets and in-flight counts per workspace id. Called from the event loop only,
    so no lock is needed."""

    def __init__(self, limits: Limits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self.clock = clock
        self._tenants: dict[str, _Tenant] = {}

    def _tenant(self, workspace_id: str) -> _Tenant:
        now = self.clock()
        tenant = self._tenants.get(workspace_id)
        if tenant is None:
            tenant = self._tenants[workspace_id] = _Tenant(self.limits.bucket_size, now)
        elif self.limits.rate_per_s > 0:
            tenant.tokens = min(self.limits.bucket_size, tenant.tokens + (now - tenant.stamp) * self.limits.rate_per_s)
        tenant.stamp = now
        return tenant

    def refusal(self, workspace_id: str) -> ApiError | None:
        """Why a request of this workspace must wait now (None when it may go), taking nothing."""
        limits, tenant = self.limits, self._tenant(workspace_id)
        if limits.in_flight > 0 and tenant.in_flight >= limits.in_flight:
            return RateLimited(
                f"workspace has {tenant.in_flight} requests in flight, the limit is "
                f"{limits.in_flight}: retry when one has finished",
                1,
            )
        if limits.rate_per_s > 0 and tenant.tokens < 1:
            wait = (1 - tenant.tokens) / limits.rate_per_s
            return RateLimited(
                f"workspace is over its rate limit of {limits.rate_per_s:g} requests per second",
                max(1, math.ceil(wait)),
            )
        return None

    def admit(self, workspace_id: str) -> ApiError | None:
        """Take a token and an in-flight slot, or say why not."""
        refused = self.refusal(workspace_id)
        if refused is None:
            tenant = self._tenants[workspace_id]
            if self.limits.rate_per_s > 0:
                tenant.tokens -= 1
            tenant.in_flight += 1
        return refused

    def release(self, workspace_id: str) -> None:
        self._tenants[workspace_id].in_flight -= 1


class RateLimited(ApiError):
    """429 RESOURCE_EXHAUSTED, with the seconds to wait for ``Retry-After``."""

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(ErrorCode.RESOURCE_EXHAUSTED, message)
        self.retry_after_s = retry_after_s


async def send_error(send, exc: ApiError, status: int | None = None, headers: dict[str, str] | None = None) -> None:
    """Answer with the API's error envelope (as :func:`server.envelope.error`), from ASGI."""
    body = json.dumps(exc.to_body(), separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status or exc.code.http_status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def _header(scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return None


class LimitsMiddleware:
    """ASGI middleware enforcing :class:`Limits` (see the module docstring)."""

    def __init__(self, app, limits: Limits, authenticator: Callable) -> None:
        self.app = app
        self.limits = limits
        self.authenticator = authenticator  # () -> the app's Authenticator (made at startup)
        self.tenants = Tenants(limits)
        self.gate = FairGate(limits.running)
        self.in_flight = 0

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # h11 refuses a head over the limit only while it is still incomplete (one that comes
        # in a single read passes): measure the parsed one too.
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
            await send_error(send, ApiError(ErrorCode.UNAVAILABLE, message), headers={"retry-after": "1"})
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
            await send_error(send, refused, headers={"retry-after": str(refused.retry_after_s)})

    async def _serve(self, scope, receive, send) -> RateLimited | None:
        """Serve the request, or say why this workspace must wait (answered by the caller)."""
        api_key, token = _header(scope, b"x-service-api-key"), _header(scope, b"x-service-auth-token")
        authenticator = self.authenticator()
        # A pair confirmed before is known without the database or a thread; a new one is looked up.
        workspace = authenticator.remembered(api_key, token)
        if workspace is None and api_key and token:
            try:
                workspace = await run_in_threadpool(authenticator.authenticate, api_key, token)
            except ApiError as exc:
                if exc.code is ErrorCode.UNAVAILABLE:  # the database, not the credentials: 503, not 401
                    await send_error(send, exc, headers={"retry-after": str(getattr(exc, "retry_after_s", 1))})
                    return None
                workspace = None
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

    async def _run(self, scope, receive, send, tenant: str | None) -> None:
        """The route, with a deadline on its body, and its work behind the fair gate: the slot
        is taken once the whole body is in (a slow sender holds none) and given back when the
        route returns. A late body is answered 408 and the connection closed (what is left of
        the body would otherwise be read as a request)."""
        deadline = time.monotonic() + self.limits.body_timeout_s
        state = {"body": False, "slot": False, "response": False}

        async def gated_receive():
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

        async def tracked_send(message):
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
