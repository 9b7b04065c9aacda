"""The HTTP side of a delivery attempt: a POST to a checked address, with the receiver's host
name as TLS server name and ``Host`` header, reading at most 64 KiB of the answer.

Connections are pooled per (host name, address, port): a connection only ever carries
deliveries for the host name its certificate was checked against. (One pool keyed by the
address alone let a connection opened for ``localhost`` carry a delivery for ``127.0.0.1``
past the certificate check.) The least recently used idle pools are closed beyond ``keep``.
"""

from __future__ import annotations

import ssl
from collections import OrderedDict

import httpx

from toolkit.webhook_urls import IPAddress, Target
from toolkit.webhooks import TIMEOUT_S

MAX_ANSWER_BYTES = 64 * 1024  # of a receiver's answer body; the rest is never read

PoolKey = tuple[str, IPAddress, int]


def tls_context(ca_bundle: str | None) -> ssl.SSLContext:
    """httpx's default trust (certifi), plus the CAs of ``ca_bundle`` (a PEM file) if given."""
    context = httpx.create_ssl_context(trust_env=False)
    if ca_bundle:
        context.load_verify_locations(cafile=ca_bundle)
    return context


def request_for(
    target: Target, address: IPAddress, body: bytes, headers: dict[str, str], timeout_s: float = TIMEOUT_S
) -> httpx.Request:
    """The POST of ``body`` to ``target``, connecting to ``address``: the URL names the
    address, the ``Host`` header and the TLS server name (certificate check) the host."""
    url = httpx.URL(scheme="https", host=str(address), port=target.port, raw_path=target.path.encode("ascii"))
    return httpx.Request(
        "POST",
        url,
        content=body,
        headers={**headers, "host": target.authority},
        extensions={"sni_hostname": target.host, "timeout": httpx.Timeout(timeout_s).as_dict()},
    )


class WebhookClient:
    """POSTs deliveries; one httpx client (one connection pool) per (host, address, port)."""

    def __init__(
        self, verify: ssl.SSLContext, keep: int = 64, connections: int = 32, timeout_s: float = TIMEOUT_S
    ) -> None:
        self.verify = verify
        self.timeout_s = timeout_s
        self.keep = keep
        self.connections = connections
        self.clients: OrderedDict[PoolKey, httpx.AsyncClient] = OrderedDict()  # least recently used first
        self.users: dict[PoolKey, int] = {}

    async def post(self, target: Target, address: IPAddress, body: bytes, headers: dict[str, str]) -> int:
        """POST ``body`` to ``target`` at ``address``; the answer's status. Reads at most
        :data:`MAX_ANSWER_BYTES` of the answer body (a longer one closes the connection)."""
        key = (target.host, address, target.port)
        client = self._checkout(key)
        try:
            response = await client.send(request_for(target, address, body, headers, self.timeout_s), stream=True)
            try:
                read = 0
                async for chunk in response.aiter_raw():  # raw: a compressed answer is not inflated
                    read += len(chunk)
                    if read >= MAX_ANSWER_BYTES:
                        break
            finally:
                await response.aclose()
            return response.status_code
        finally:
            await self._checkin(key)

    async def aclose(self) -> None:
        while self.clients:
            await self.clients.popitem()[1].aclose()

    def _checkout(self, key: PoolKey) -> httpx.AsyncClient:
        client = self.clients.pop(key, None)
        if client is None:
            # trust_env=False: a proxy from the environment must not carry (or see) deliveries.
            client = httpx.AsyncClient(
                verify=self.verify,
                timeout=self.timeout_s,
                follow_redirects=False,
                trust_env=False,
                limits=httpx.Limits(max_connections=self.connections),
            )
        self.clients[key] = client
        self.users[key] = self.users.get(key, 0) + 1
        return client

    async def _checkin(self, key: PoolKey) -> None:
        self.users[key] -= 1
        if not self.users[key]:
            del self.users[key]
        idle = [k for k in self.clients if k not in self.users]
        for k in idle[: max(0, len(self.clients) - self.keep)]:
            await self.clients.pop(k).aclose()
