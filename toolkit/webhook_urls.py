"""The one parser of webhook URLs, and the rules on where deliveries may go.

Dispatch and every delivery attempt call the same functions, so a URL the API accepts is a
URL the deliverer can send to (or refuses for a reason it records), never one that breaks it:

- :func:`parse_webhook_url` — the URL's syntax: ``https``, a host (an IDNA 2008 name, a
  dotted-quad IPv4 address in its one canonical form, or a bracketed IPv6 address), an
  optional port, no credentials, no whitespace or control characters. Octal, hex and short
  IPv4 forms (``0177.0.0.1``, ``0x7f.1``, ``127.1``, ``2130706433``) are refused: resolvers
  read them differently, and a reader of the URL would not see where it points.
- :func:`destination_problem` — what the server's :class:`WebhookPolicy` allows: port 443 and
  the ports the operator lists, and only public addresses when the host is written as one.
- :func:`refusal` — why an address (written in the URL or resolved at delivery) is not
  public, IPv6 forms that embed an IPv4 address (mapped, compatible, translated, 6to4, NAT64,
  Teredo) included.
"""

from __future__ import annotations

import ipaddress
import re
import string
from dataclasses import dataclass, field
from urllib.parse import quote

import idna

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

HTTPS_PORT = 443

# Characters a path or query keeps as written (RFC 3986 reserved and unreserved, and "%");
# anything else (non-ASCII text, quotes, braces …) is percent-encoded as UTF-8.
_PATH_SAFE = string.ascii_letters + string.digits + "-._~:/?[]@!$&'()*+,;=%"
_LDH_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
# WHATWG's "ends in a number": such a host is read as an IPv4 address by browsers and resolvers.
_NUMERIC_LABEL = re.compile(r"[0-9]+|0[xX][0-9a-fA-F]*")
_NAT64 = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("64:ff9b:1::/48"))
_COMPATIBLE = ipaddress.IPv6Network("::/96")
_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")


class BadUrl(ValueError):
    """A webhook URL that can never be delivered to; the message is the rule it breaks."""


@dataclass(frozen=True)
class WebhookPolicy:
    """Where this server may deliver: ``allow_loopback`` lets deliveries reach 127.0.0.0/8 and
    ::1 (tests, local receivers); ``extra_ports`` are the ports allowed besides 443."""

    allow_loopback: bool = False
    extra_ports: frozenset[int] = field(default_factory=frozenset)

    def allows_port(self, port: int) -> bool:
        return port == HTTPS_PORT or port in self.extra_ports


@dataclass(frozen=True)
class Target:
    """A parsed webhook URL. ``host`` is ASCII — an IDNA A-label name or an address's
    canonical text — and ``address`` is set when the URL names an address; ``path`` is the
    request target (path and query, ASCII, the fragment dropped)."""

    host: str
    address: IPAddress | None
    port: int
    path: str

    @property
    def authority(self) -> str:
        """The ``Host`` header: the host (bracketed when IPv6), with the port unless 443."""
        host = f"[{self.host}]" if isinstance(self.address, ipaddress.IPv6Address) else self.host
        return host if self.port == HTTPS_PORT else f"{host}:{self.port}"


def parse_webhook_url(url: str) -> Target:
    """The parts of ``url``, or :class:`BadUrl` naming the rule it breaks.

    >>> parse_webhook_url("https://Hooks.Example.com:8443/a?b=c#frag")
    Target(host='hooks.example.com', address=None, port=8443, path='/a?b=c')
    >>> url_problem("https://0177.0.0.1/hook")
    'not a valid URL (an IPv4 address is four decimal numbers 0-255 without leading zeros: 0177.0.0.1)'
    """
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        raise BadUrl("must not contain whitespace or control characters")
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() != "https":
        raise BadUrl("must be an https URL")
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority, remainder = rest[:end], rest[end:]
    if "@" in authority:
        raise BadUrl("must not carry credentials (sign with webhookSecret instead)")
    host_text, port = _split_port(authority)
    if not host_text:
        raise BadUrl("must name a host")
    host, address = _host(host_text)
    return Target(host, address, port, _request_target(remainder))


def destination_problem(target: Target, policy: WebhookPolicy) -> str | None:
    """Why this server's ``policy`` does not let deliveries go to ``target`` (``None``: it
    does, as far as the URL tells; a name's addresses are checked when it is resolved)."""
    if not policy.allows_port(target.port):
        return (
            f"port {target.port} is not allowed: webhooks go to port 443 and the ports the server's "
            "operator allows (collab serve --webhook-allow-port)"
        )
    if target.address is not None:
        reason = refusal(target.address, policy.allow_loopback)
        if reason is not None:
            return f"{target.host} is {reason}; webhooks go to public addresses only"
    return None


def url_problem(url: str, policy: WebhookPolicy | None = None) -> str | None:
    """Why ``url`` cannot be a webhook URL (``None`` when it can). Without a ``policy`` only
    the syntax is checked (the request model does that; the dispatch service adds the
    server's policy).

    >>> url_problem("https://hooks.example.com/collab?team=7") is None
    True
    >>> url_problem("https://example.com/x\\r\\nX-Injected: 1")
    'must not contain whitespace or control characters'
    >>> url_problem("https://[2002:a00:1::]/hook", WebhookPolicy())
    '2002:a00:1:: is a 6to4 address embedding 10.0.0.1, a private address; webhooks go to public addresses only'
    """
    try:
        target = parse_webhook_url(url)
    except BadUrl as exc:
        return str(exc)
    return None if policy is None else destination_problem(target, policy)


def refusal(ip: IPAddress, allow_loopback: bool) -> str | None:
    """Why deliveries must not go to ``ip`` (``None``: it is a public address), as a phrase.

    >>> refusal(ipaddress.ip_address("10.1.2.3"), False)
    'a private address'
    >>> refusal(ipaddress.ip_address("64:ff9b::7f00:1"), True)
    'a NAT64 address embedding 127.0.0.1, a loopback address'
    >>> refusal(ipaddress.ip_address("93.184.216.34"), False) is None
    True
    """
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:  # the socket layer connects to the IPv4 address itself
            return refusal(ip.ipv4_mapped, allow_loopback)
        for kind, embedded in _embedded_ipv4(ip):
            # Reached through a gateway, never our own loopback: allow_loopback does not apply.
            reason = refusal(embedded, allow_loopback=False)
            if reason is not None:
                return f"{kind} address embedding {embedded}, {reason}"
    if ip.is_loopback:
        return None if allow_loopback else "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_private:
        return "a private address"
    if ip.is_multicast or ip.is_unspecified or ip.is_reserved or not ip.is_global:
        return "a non-public address"
    return None


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> list[tuple[str, ipaddress.IPv4Address]]:
    """The IPv4 addresses an IPv6 address carries, with the transition mechanism's name."""
    low32 = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    found = []
    if ip in _COMPATIBLE and int(ip) > 1:
        found.append(("an IPv4-compatible", low32))
    if ip in _TRANSLATED:
        found.append(("an IPv4-translated", low32))
    if any(ip in net for net in _NAT64):
        found.append(("a NAT64", low32))
    if ip.sixtofour is not None:
        found.append(("a 6to4", ip.sixtofour))
    if ip.teredo is not None:
        server, client = ip.teredo
        found += [("a Teredo", server), ("a Teredo", client)]
    return found


def _split_port(authority: str) -> tuple[str, int]:
    if authority.startswith("["):
        close = authority.find("]")
        if close < 0:
            raise BadUrl("not a valid URL (an IPv6 address must end with ']')")
        host, after = authority[: close + 1], authority[close + 1 :]
        if after and not after.startswith(":"):
            raise BadUrl("not a valid URL (only a port may follow an IPv6 address)")
        port_text = after[1:] if after else None
    elif ":" in authority:
        host, port_text = authority.split(":", 1)
    else:
        host, port_text = authority, None
    if port_text is None:
        return host, HTTPS_PORT
    if not (port_text.isascii() and port_text.isdigit() and len(port_text) <= 5 and 1 <= int(port_text) <= 65535):
        raise BadUrl(f"not a valid URL (the port must be a number from 1 to 65535, not {port_text!r})")
    return host, int(port_text)


def _host(text: str) -> tuple[str, IPAddress | None]:
    address: IPAddress | None
    if text.startswith("["):
        inner = text[1:-1]
        try:
            if "%" in inner:
                raise ValueError("zone")
            address = ipaddress.IPv6Address(inner)
        except ValueError:
            raise BadUrl(f"not a valid URL (not an IPv6 address: {inner})") from None
        return str(address), address
    if text.endswith("."):
        raise BadUrl("not a valid URL (the host name must not end with a dot)")
    labels = text.split(".")
    if _NUMERIC_LABEL.fullmatch(labels[-1]):
        try:
            address = ipaddress.IPv4Address(text)
        except ValueError:
            address = None
        if address is None or str(address) != text:
            raise BadUrl(
                f"not a valid URL (an IPv4 address is four decimal numbers 0-255 without leading zeros: {text})"
            )
        return text, address
    encoded = ".".join(_label(label) for label in labels)
    if len(encoded) > 253:
        raise BadUrl("not a valid URL (the host name is longer than 253 characters)")
    return encoded, None


def _label(label: str) -> str:
    """One label of a host name as its ASCII (A-label) form: letters, digits and hyphens,
    or IDNA 2008 for anything else — which refuses invisible characters (a zero-width
    space), symbols and text not in NFC rather than mapping them away."""
    lowered = label.lower()
    try:
        if lowered.isascii():
            if not _LDH_LABEL.fullmatch(lowered):
                raise idna.IDNAError("a label is letters, digits and inner hyphens, 1-63 characters")
            if lowered.startswith("xn--"):
                idna.decode(lowered)
            return lowered
        return idna.alabel(lowered).decode("ascii")
    except (idna.IDNAError, UnicodeError) as exc:
        raise BadUrl(f"not a valid URL (host name label {label!r}: {exc})") from None


def _request_target(remainder: str) -> str:
    target = remainder.split("#", 1)[0]
    if not target.startswith("/"):
        target = "/" + target
    return quote(target, safe=_PATH_SAFE)
