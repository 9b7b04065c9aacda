"""The webhook deliverer: POSTs due outbox rows, signs them, records each outcome.

Each attempt goes only where :mod:`.destinations` allows, to the address it checked
(:mod:`.pinned_client`: the request carries the original ``Host`` and TLS server name, so the
certificate is verified against the host name). No redirects are followed; 10 s is the limit
for the whole attempt, 64 KiB the most read of an answer. It runs in the serving process's
event loop; the outbox is read and written on worker threads.

Every attempt ends in a recorded outcome, whatever goes wrong in it: a row that breaks an
attempt (a bug, a value stored by an older version) fails its attempts on the schedule and
is dead-lettered, and never stops the loop or the other workspaces' deliveries.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx
from anyio.to_thread import run_sync

from toolkit.services.context import Services
from toolkit.services.webhooks.destinations import Refused, prepare, resolve
from toolkit.services.webhooks.pinned_client import WebhookClient, tls_context
from toolkit.services.workflow.deliveries import Delivery, Outcome, claim, due, next_due, record
from toolkit.webhook_urls import WebhookPolicy
from toolkit.webhooks import ATTEMPT_HEADER, EVENT_ID_HEADER, RETRY_DELAYS_MS, SIGNATURE_HEADER, TIMEOUT_S, sign

log = logging.getLogger("collab.webhooks")

MAX_ERROR_CHARS = 500  # of an attempt's error kept in lastError


@dataclass(frozen=True)
class DeliverySettings:
    """``policy`` says where deliveries may go (loopback for tests and local receivers, ports
    besides 443); ``ca_bundle`` is a PEM file of extra trusted CAs (a test receiver's own CA);
    ``retry_delays_ms`` replaces the schedule of semantics §6 (tests shorten it);
    ``timeout_s`` bounds one attempt, answer included (a stop waits for attempts in flight);
    ``concurrency`` attempts run at once, at most ``per_workspace`` of one workspace."""

    policy: WebhookPolicy = field(default_factory=WebhookPolicy)
    ca_bundle: str | None = None
    retry_delays_ms: tuple[int, ...] = RETRY_DELAYS_MS
    timeout_s: float = TIMEOUT_S
    concurrency: int = 32
    per_workspace: int = 8
    poll_s: float = 1.0  # also picks up rows another process or a redrive made due


def describe(exc: BaseException) -> str:
    """An attempt's error for ``lastError``: the exception's type and message, cut short."""
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"


class Deliverer:
    """Runs in the server's event loop; :meth:`wake` may be called from any thread.

    With ``lease`` (owner, milliseconds) — a store other processes deliver from — each due
    delivery is first leased to this process, and its outcome is recorded only while the
    lease is still this process's; without, the process is the only deliverer of its store."""

    def __init__(self, services: Services, settings: DeliverySettings, lease: tuple[str, int] | None = None) -> None:
        self.services = services
        self.settings = settings
        self.lease = lease
        self.in_flight: dict[str, str] = {}  # event id -> workspace id
        self.held: dict[str, int] = {}  # event id -> not before (ms): its outcome could not be recorded
        self.loop: asyncio.AbstractEventLoop | None = None
        self.woken: asyncio.Event | None = None
        self.task: asyncio.Task | None = None
        self.http: WebhookClient | None = None
        self.sends: set[asyncio.Task] = set()
        self.observers: list[
            Callable[[Outcome], None]
        ] = []  # called with each attempt's Outcome once it is recorded (logs, metrics)

    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.woken = asyncio.Event()
        settings = self.settings
        self.http = WebhookClient(
            tls_context(settings.ca_bundle), connections=settings.concurrency, timeout_s=settings.timeout_s
        )
        self.task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        """Stop sending. Attempts cut short stay pending and go out again after a restart."""
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, *self.sends, return_exceptions=True)
        if self.http is not None:
            await self.http.aclose()

    def wake(self) -> None:
        # Both are set by start(); from another thread, one may be seen before the other, and
        # until start() finishes there is nothing to wake (its loop looks at the outbox first).
        loop, woken = self.loop, self.woken
        if loop is not None and woken is not None:
            loop.call_soon_threadsafe(woken.set)

    async def _run(self) -> None:
        assert self.woken is not None  # start() made it before this task
        while True:
            self.woken.clear()
            room = self.settings.concurrency - len(self.in_flight)
            try:
                now = self.services.clock.now()
                self.held = {k: t for k, t in self.held.items() if t > now}
                batch = []
                if room:
                    busy: dict[str, int] = {}
                    for workspace_id in self.in_flight.values():
                        busy[workspace_id] = busy.get(workspace_id, 0) + 1
                    skip = [*self.in_flight, *self.held]
                    if self.lease is None:
                        batch = await run_sync(due, self.services, now, room, skip, busy, self.settings.per_workspace)
                    else:
                        owner, lease_ms = self.lease
                        batch = await run_sync(
                            claim, self.services, owner, lease_ms, now, room, skip, busy, self.settings.per_workspace
                        )
                later = await run_sync(next_due, self.services, now)
            except Exception:  # keep delivering: the rows are safe in the outbox
                log.exception("could not read the webhook outbox")
                batch, later = [], None
            for delivery in batch:
                self.in_flight[delivery.event_id] = delivery.workspace_id
                send = asyncio.create_task(self._deliver(delivery))
                self.sends.add(send)
                send.add_done_callback(self.sends.discard)
            if len(batch) == room and room:
                continue  # more may be due: take them as soon as a slot frees (or now, if any)
            timeout = self.settings.poll_s
            if later is not None:
                timeout = min(timeout, max(0.0, (later - self.services.clock.now()) / 1000))
            try:
                await asyncio.wait_for(self.woken.wait(), timeout)
            except TimeoutError:
                pass

    async def _deliver(self, delivery: Delivery) -> None:
        try:
            error, permanent = None, False
            try:
                status = await asyncio.wait_for(self._post(delivery), self.settings.timeout_s)
                if not 200 <= status < 300:
                    error = f"HTTP {status}"
            except Refused as exc:
                error, permanent = str(exc), True
            except TimeoutError:
                error = f"timed out after {self.settings.timeout_s:g} s"
            except (httpx.HTTPError, OSError) as exc:
                error = describe(exc)
            except Exception as exc:  # a bug or a bad stored value: a failed attempt like any other
                log.warning("webhook delivery of %s failed unexpectedly", delivery.event_id, exc_info=True)
                error = describe(exc)
            outcome = Outcome(delivery, self.services.clock.now(), error, permanent)
            owner = None if self.lease is None else self.lease[0]
            await run_sync(record, self.services, [outcome], self.settings.retry_delays_ms, owner)
            for observe in self.observers:
                observe(outcome)
        except Exception:  # not recorded: the row stays pending; hold it back so it cannot spin
            log.exception("could not record the webhook delivery of %s", delivery.event_id)
            self.held[delivery.event_id] = self.services.clock.now() + self.settings.retry_delays_ms[0]
        finally:
            self.in_flight.pop(delivery.event_id, None)
            assert self.woken is not None  # start() made it before any delivery
            self.woken.set()

    async def _post(self, delivery: Delivery) -> int:
        target = prepare(delivery.url, self.settings.policy)
        address = await resolve(target, self.settings.policy.allow_loopback)
        body = delivery.body.encode()
        headers = {
            "content-type": "application/json",
            "user-agent": "collab-webhooks/2",
            SIGNATURE_HEADER: sign(body, delivery.secret),
            EVENT_ID_HEADER: delivery.event_id,
            ATTEMPT_HEADER: str(delivery.attempts + 1),
        }
        assert self.http is not None  # start() made it before any delivery
        return await self.http.post(target, address, body, headers)
