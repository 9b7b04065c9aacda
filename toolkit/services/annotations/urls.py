"""URL stamping (semantics §9): the page an agent annotation was written for.

An agent annotation stores the normalised page URL of each comment's ``agent.url``; delete's
``agentUrls`` entries are normalised the same way, so the two compare as plain strings.

Normalising keeps what identifies a page and drops what does not: the scheme and host are
lower-cased, the fragment is dropped, a default port (80 for http, 443 for https) is dropped
and an empty path becomes ``/``. Path, query and user info are kept exactly (paths are
case-sensitive). Anything that is not an absolute http(s) URL with a host — blank,
fragment-only, relative, ``mailto:``, ``javascript:`` … — has no page: ``None``.

>>> normalise_page_url("HTTPS://Docs.Example.COM/Guide/Intro?x=1#Setup")
'https://docs.example.com/Guide/Intro?x=1'
>>> normalise_page_url("http://example.com:80")
'http://example.com/'
>>> [normalise_page_url(u) for u in ("", "   ", "#top", "/relative", "ftp://example.com/f")]
[None, None, None, None, None]
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

_DEFAULT_PORTS = {"http": "80", "https": "443"}


def normalise_page_url(url: str | None) -> str | None:
    """The page URL that ``url`` names, normalised; ``None`` when it names no web page."""
    if url is None:
        return None
    text = url.strip()
    if not text or any(ch.isspace() for ch in text):
        return None
    try:
        parts = urlsplit(text)
    except ValueError:  # e.g. an unbalanced IPv6 bracket
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.netloc:
        return None
    userinfo, _, hostport = parts.netloc.rpartition("@")
    hostport = hostport.lower()
    host, colon, port = hostport.rpartition(":") if not hostport.endswith("]") else (hostport, "", "")
    if colon:
        if port and not port.isdigit():
            return None
        if port in ("", _DEFAULT_PORTS[scheme]):
            hostport = host
    if not hostport or hostport.startswith(":"):
        return None
    netloc = f"{userinfo}@{hostport}" if userinfo else hostport
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def page_urls(agent_urls: list[str]) -> list[str]:
    """The distinct pages a list of ``agentUrls`` names, in order; unusable entries are skipped."""
    pages = (normalise_page_url(u) for u in agent_urls)
    return list(dict.fromkeys(p for p in pages if p is not None))
