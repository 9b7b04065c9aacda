"""Fair shares of one serving process: what one workspace, and the process as a whole, may ask
for at once (:class:`Limits`), each workspace's token bucket and count of requests in flight
(:class:`Tenants`), and the fair gate in front of the service work (:class:`FairGate`). The
server's :class:`server.limits.LimitsMiddleware` enforces them; the state lives in the
process's memory (see docs/decisions.md, "Limits and credentials").

>>> tenants = Tenants(Limits(rate_per_s=1, burst=1), clock=lambda: 0.0)
>>> tenants.admit("ws-1") is None, tenants.admit("ws-1").retry_after_s
(True, 1)
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from toolkit.errors import ApiError, ErrorCode


@dataclass(frozen=True)
class Limits:
    """What one workspace, and the server as a whole, may ask for at once. 0 turns a limit off."""

    rate_per_s: float = 100.0  # requests per second per workspace (token bucket refill)
    burst: int = 0  # bucket size; 0 means twice the rate (at least 1)
    in_flight: int = 32  # requests of one workspace being served at once
    in_flight_total: int = 128  # requests being served at once, all workspaces together
    body_timeout_s: float = 30.0  # a request body must arrive in full within this time
    max_head_bytes: int = 16 * 1024  # request line and headers together
    running: int = 16  # requests doing their work at once, shared fairly (FairGate)
    refusal_delay_s: float = 1.0  # a 429 is answered this late (at most its Retry-After)

    @property
    def bucket_size(self) -> float:
        return float(self.burst) if self.burst > 0 else max(1.0, 2 * self.rate_per_s)


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

    def refusal(self, workspace_id: str) -> RateLimited | None:
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

    def admit(self, workspace_id: str) -> RateLimited | None:
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


class FairGate:
    """``async acquire(tenant)`` / ``release()`` around a request's work; ``slots`` 0: no gate.

    At most ``slots`` requests run at once, and when one finishes the next slot goes to the
    tenants (workspaces) with requests waiting in turn (round robin), not to whoever asked
    first. A workspace sending many requests at once then queues behind its own requests
    while another workspace's request waits for at most one slot to free up. Used from the
    event loop only (no lock needed)."""

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self.running = 0
        self._waiting: dict[Hashable, deque[asyncio.Future]] = {}  # insertion order is the turn order

    async def acquire(self, tenant: Hashable) -> None:
        if self.slots <= 0:
            return
        if self.running < self.slots and not self._waiting:
            self.running += 1
            return
        turn = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(tenant, deque()).append(turn)
        try:
            await turn  # release() handed this request its slot (``running`` already counts it)
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.release()  # the slot came just as the request was cancelled: pass it on
            else:
                queue = self._waiting.get(tenant)
                if queue is not None and turn in queue:
                    queue.remove(turn)
                    if not queue:
                        del self._waiting[tenant]
            raise

    def release(self) -> None:
        if self.slots <= 0:
            return
        while self._waiting:
            tenant = next(iter(self._waiting))
            queue = self._waiting.pop(tenant)
            turn = queue.popleft()
            if queue:
                self._waiting[tenant] = queue  # to the back of the line: the others go first
            if not turn.done():
                turn.set_result(None)
                return
        self.running -= 1
