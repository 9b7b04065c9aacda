"""Where a delivery attempt may go: the stored URL parsed with the same function dispatch used
(:mod:`toolkit.webhook_urls`), the host resolved here and every address it resolves to
checked, so that a dispatch cannot make the server call into its own network. Loopback,
private, link-local and other non-public addresses are refused (a mixed answer as a whole);
the attempt then connects to the address checked (:mod:`.pinned_client`), which closes the
gap a second DNS answer (rebinding) would otherwise open.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket

from toolkit.webhook_urls import (
    BadUrl,
    IPAddress,
    Target,
    WebhookPolicy,
    destination_problem,
    parse_webhook_url,
    refusal,
)


class Refused(Exception):
    """The destination is one we never call: the delivery is dead-lettered at once."""


async def resolve(target: Target, allow_loopback: bool) -> IPAddress:
    """The checked address to connect to for ``target``. Raises :class:`Refused` when any
    address the host resolves to is not public (a mixed answer is refused as a whole),
    ``OSError`` when the name does not resolve (a transient failure: retried)."""
    if target.address is not None:
        addresses = [target.address]
    else:
        infos = await asyncio.get_running_loop().getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
        addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
    for ip in addresses:
        reason = refusal(ip, allow_loopback)
        if reason is not None:
            raise Refused(f"destination refused: {target.host} resolves to {ip}, {reason}")
    return addresses[0]


def prepare(url: str, policy: WebhookPolicy) -> Target:
    """A stored URL as the target of an attempt, by the rules dispatch applied; a URL they
    refuse (stored by an older version, or before the operator changed the policy) raises
    :class:`Refused`."""
    try:
        target = parse_webhook_url(url)
    except BadUrl as exc:
        raise Refused(f"destination refused: webhookUrl {exc}") from None
    problem = destination_problem(target, policy)
    if problem is not None:
        raise Refused(f"destination refused: {problem}")
    return target
