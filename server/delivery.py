"""The webhook deliverer: POSTs due outbox rows, signs them, records each outcome.

Each attempt resolves the URL's host itself and refuses loopback, private, link-local and
other non-public addresses (so a dispatch cannot make the server call into its own network),
then connects to the address it checked — the request carries the original ``Host`` and TLS
server name, so the certificate is verified against the host name — which closes the gap a
second DNS answer (rebinding) would otherwise open. No redirects are followed; 10 s is the
limit for the whole attempt.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
import ssl
from dataclasses import dataclass

import httpx
from starlette.concurrency import run_in_threadpool

from toolkit.services.context import Services
from toolkit.services.workflow.deliveries import Delivery, Outcome, due, next_due, record
from toolkit.webhooks import ATTEMPT_HEADER, EVENT_ID_HEADER, RETRY_DELAYS_MS, SIGNATURE_HEADER, TIMEOUT_S, sign

log = logging.getLogger("collab.webhooks")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class DeliverySettings:
    """``allow_loopback`` lets deliveries reach 127.0.0.1/::1 — for tests and local receivers
    only; ``ca_bundle`` is a PEM file of extra trusted CAs (a test receiver's own CA);
    ``retry_delays_ms`` replaces the schedule of semantics §6 (tests shorten it)."""

    allow_loopback: bool = False
    ca_bundle: str | None = None
    retry_delays_ms: tuple[int, ...] = RETRY_DELAYS_MS
    concurrency: int = 32
    poll_s: float = 1.0  # also picks up rows another process or a redrive made due


class Refused(Exception):
    """The destination is one we never call: the delivery is dead-lettered at once."""


def refusal(ip: IPAddress, allow_loopback: bool) -> str | None:
    """Why deliveries must not go to ``ip`` (``None``: it is a public address).

    >>> refusal(ipaddress.ip_address("10.1.2.3"), False)
    'private'
    >>> refusal(ipaddress.ip_address("93.184.216.34"), False) is None
    True
    """
    mapped = getattr(ip, "ipv4_mapped", None)
    if mapped is not None:
        ip = mapped
    if ip.is_loopback:
        return None if allow_loopback else "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_private:
        return "private"
    if ip.is_multicast or ip.is_unspecified or ip.is_reserved or not ip.is_global:
        return "non-public"
    return None


async def resolve(url: httpx.URL, allow_loopback: bool) -> IPAddress:
    """The checked address to connect to for ``url``. Raises :class:`Refused` when any address
    the host resolves to is not public (a mixed answer is refused as a whole), ``OSError``
    when the name does not resolve (a transient failure: retried)."""
    host = url.host
    try:
        addresses = [ipaddress.ip_address(host)]
    except ValueError:
        infos = await asyncio.get_running_loop().getaddrinfo(host, url.port or 443, type=socket.SOCK_STREAM)
        addresses = [ipaddress.ip_address(info[4][0].split("%")[0]) for info in infos]
    for ip in addresses:
        reason = refusal(ip, allow_loopback)
        if reason is not None:
            raise Refused(f"destination refused: {host} resolves to {ip}, a {reason} address")
    return addresses[0]


class Deliverer:
    """Runs in the server's event loop; :meth:`wake` may be called from any thread."""

    def __init__(self, services: Services, settings: DeliverySettings) -> None:
        self.services = services
        self.settings = settings
        self.in_flight: set[str] = set()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.woken: asyncio.Event | None = None
        self.task: asyncio.Task | None = None
        self.client: httpx.AsyncClient | None = None
        self.sends: set[asyncio.Task] = set()
        self.observers: list = []  # called with each attempt's Outcome once it is recorded (logs, metrics)

    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.woken = asyncio.Event()
        verify: ssl.SSLContext | bool = True
        if self.settings.ca_bundle:
            verify = ssl.create_default_context()
            verify.load_verify_locations(cafile=self.settings.ca_bundle)
        # trust_env=False: a proxy from the environment must not carry (or see) deliveries.
        self.client = httpx.AsyncClient(verify=verify, timeout=TIMEOUT_S, follow_redirects=False, trust_env=False,
                                        limits=httpx.Limits(max_connections=self.settings.concurrency))
        self.task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        """Stop sending. Attempts cut short stay pending and go out again after a restart."""
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, *self.sends, return_exceptions=True)
        if self.client is not None:
            await self.client.aclose()

    def wake(self) -> None:
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self.woken.set)

    async def _run(self) -> None:
        while True:
            self.woken.clear()
            room = self.settings.concurrency - len(self.in_flight)
            try:
                now = self.services.clock.now()
                batch = await run_in_threadpool(due, self.services, now, room, set(self.in_flight)) if room else []
                later = await run_in_threadpool(next_due, self.services, now)
            except Exception:  # keep delivering: the rows are safe in the outbox
                log.exception("could not read the webhook outbox")
                batch, later = [], None
            for delivery in batch:
                self.in_flight.add(delivery.event_id)
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
            except asyncio.TimeoutError:
                pass

    async def _deliver(self, delivery: Delivery) -> None:
        try:
            error, permanent = None, False
            try:
                status = await asyncio.wait_for(self._post(delivery), TIMEOUT_S)
                if not 200 <= status < 300:
                    error = f"HTTP {status}"
            except Refused as exc:
                error, permanent = str(exc), True
            except asyncio.TimeoutError:
                error = f"timed out after {TIMEOUT_S:g} s"
            except (httpx.HTTPError, OSError) as exc:
                error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            outcome = Outcome(delivery, self.services.clock.now(), error, permanent)
            await run_in_threadpool(record, self.services, [outcome], self.settings.retry_delays_ms)
            for observe in self.observers:
                observe(outcome)
        except Exception:  # the row stays pending and is tried again
            log.exception("webhook delivery of %s failed unexpectedly", delivery.event_id)
        finally:
            self.in_flight.discard(delivery.event_id)
            self.woken.set()

    async def _post(self, delivery: Delivery) -> int:
        url = httpx.URL(delivery.url)
        address = await resolve(url, self.settings.allow_loopback)
        body = delivery.body.encode()
        headers = {"content-type": "application/json", "user-agent": "collab-webhooks/2",
                   "host": url.netloc.decode("ascii"), SIGNATURE_HEADER: sign(body, delivery.secret),
                   EVENT_ID_HEADER: delivery.event_id, ATTEMPT_HEADER: str(delivery.attempts + 1)}
        request = self.client.build_request("POST", url.copy_with(host=str(address)), content=body, headers=headers,
                                            extensions={"sni_hostname": url.host})
        response = await self.client.send(request)
        await response.aclose()  # the receiver's body is not ours to read
        return response.status_code
