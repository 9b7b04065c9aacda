"""Webhook URLs: dispatch and delivery apply one parser and one set of rules, so whatever
dispatch accepts the deliverer can send to (or refuses with a recorded reason), never a URL
that breaks an attempt. Dispatch is the real service on a real DuckDB file; delivery is the
deliverer's own preparation of an attempt and the httpx request it sends."""

from __future__ import annotations

import doctest
import ipaddress
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolkit.webhook_urls
from toolkit.engine import ManualClock
from toolkit.errors import ApiError
from toolkit.model import validate
from toolkit.model import workflow as m
from toolkit.services import workflow
from toolkit.services.context import Services
from toolkit.services.webhooks.destinations import Refused, prepare
from toolkit.services.webhooks.pinned_client import request_for
from toolkit.services.workspaces import Authenticator, create_workspace
from toolkit.store import Store
from toolkit.webhook_urls import WebhookPolicy, parse_webhook_url, url_problem

STRICT = WebhookPolicy()
LOCAL = WebhookPolicy(allow_loopback=True, extra_ports=frozenset({8443}))


# ---------------------------------------------------------------------------- the forms refused


@pytest.mark.parametrize(
    "url, problem",
    [
        ("https://0177.0.0.1/hook", "an IPv4 address is four decimal numbers"),  # octal
        ("https://0x7f.1/hook", "an IPv4 address is four decimal numbers"),  # hex, short
        ("https://127.1/hook", "an IPv4 address is four decimal numbers"),  # short
        ("https://2130706433/hook", "an IPv4 address is four decimal numbers"),  # one number
        ("https://10.0.0.010/hook", "an IPv4 address is four decimal numbers"),  # a leading zero
        ("https://1.2.3.4.5/hook", "an IPv4 address is four decimal numbers"),
        ("https://hooks.example.0x10/hook", "an IPv4 address is four decimal numbers"),
        ("https://exa\u200bmple.com/hook", "host name label"),  # zero-width space
        ("https://example\uff0ecom/hook", "host name label"),  # a full-width dot
        ("https://ex%61mple.com/hook", "host name label"),
        ("https://under_score.example/hook", "host name label"),
        ("https://-dash.example/hook", "host name label"),
        ("https://xn--zz.example/hook", "host name label"),  # broken punycode
        ("https://evil.example\\@good.example/hook", "must not carry credentials"),
        ("https://example.com./hook", "must not end with a dot"),
        ("https://[fe80::1%25eth0]/hook", "not an IPv6 address"),
        ("https://[::1/hook", "must end with ']'"),
        ("https://example.com:/hook", "the port must be a number"),
        ("https://example.com:0/hook", "the port must be a number"),
        ("https://example.com:+443/hook", "the port must be a number"),
        ("https://example.com:443:443/hook", "the port must be a number"),
        ("https:example.com/hook", "must be an https URL"),
    ],
)
def test_forms_a_reader_or_a_resolver_could_take_differently_are_refused(url, problem):
    assert problem in url_problem(url)


@pytest.mark.parametrize(
    "url, phrase",
    [
        ("https://[::ffff:10.0.0.1]/", "is a private address"),
        ("https://[::ffff:127.0.0.1]/", "is a loopback address"),
        ("https://[::10.0.0.1]/", "an IPv4-compatible address embedding 10.0.0.1, a private address"),
        ("https://[::ffff:0:7f00:1]/", "an IPv4-translated address embedding 127.0.0.1, a loopback address"),
        ("https://[2002:7f00:1::]/", "a 6to4 address embedding 127.0.0.1, a loopback address"),
        ("https://[2002:a9fe:a9fe::1]/", "a 6to4 address embedding 169.254.169.254, a link-local address"),
        ("https://[64:ff9b::a00:1]/", "a NAT64 address embedding 10.0.0.1, a private address"),
        ("https://[64:ff9b:1::c0a8:1]/", "a NAT64 address embedding 192.168.0.1, a private address"),
        ("https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "a Teredo address embedding 192.0.2.45"),
        ("https://127.0.0.1/", "is a loopback address"),
        ("https://192.168.1.1/", "is a private address"),
        ("https://hooks.example.com:8443/", "port 8443 is not allowed"),
        ("https://hooks.example.com:80/", "port 80 is not allowed"),
    ],
)
def test_destinations_the_policy_refuses(url, phrase):
    assert phrase in url_problem(url, STRICT)
    with pytest.raises(Refused, match="destination refused"):
        prepare(url, STRICT)


def test_loopback_and_extra_ports_are_the_operators_to_allow():
    assert url_problem("https://127.0.0.1:8443/x", LOCAL) is None
    assert url_problem("https://[::1]/x", LOCAL) is None
    assert "port 9443 is not allowed" in url_problem("https://127.0.0.1:9443/x", LOCAL)
    # A gateway form of loopback is never our own loopback: still refused.
    assert "6to4" in url_problem("https://[2002:7f00:1::]/x", LOCAL)


@pytest.mark.parametrize(
    "url, host, port, path, authority",
    [
        ("https://Hooks.Example.COM/a/b?c=d#frag", "hooks.example.com", 443, "/a/b?c=d", "hooks.example.com"),
        ("https://B\u00fccher.example:8443", "xn--bcher-kva.example", 8443, "/", "xn--bcher-kva.example:8443"),
        ("https://[2001:DB8::1]/x", "2001:db8::1", 443, "/x", "[2001:db8::1]"),
        ("HTTPS://8.8.8.8?q=\u00e4 ", None, None, None, None),
        ("https://8.8.8.8?q=\u00e4", "8.8.8.8", 443, "/?q=%C3%A4", "8.8.8.8"),
        ('https://hooks.example.com/a"b{c}', "hooks.example.com", 443, "/a%22b%7Bc%7D", "hooks.example.com"),
    ],
)
def test_accepted_urls_are_normalised_once_for_both_sides(url, host, port, path, authority):
    if host is None:
        assert url_problem(url) == "must not contain whitespace or control characters"
        return
    target = parse_webhook_url(url)
    assert (target.host, target.port, target.path, target.authority) == (host, port, path, authority)


# ---------------------------------------------------------------------------- dispatch and delivery agree


def _ipv4_forms(value: int) -> st.SearchStrategy[str]:
    parts = [(value >> s) & 255 for s in (24, 16, 8, 0)]
    return st.sampled_from(
        [
            ".".join(map(str, parts)),
            ".".join(f"0{p:o}" for p in parts),
            ".".join(f"0x{p:x}" for p in parts),
            f"{parts[0]}.{value & 0xFFFFFF}",
            f"{parts[0]}.{parts[1]}.{value & 0xFFFF}",
            str(value),
            hex(value),
            ".".join(map(str, parts)) + ".",
            "0" + ".".join(map(str, parts)),
        ]
    )


def _ipv6_forms(v4: ipaddress.IPv4Address) -> st.SearchStrategy[str]:
    n = int(v4)
    return st.sampled_from(
        [
            f"[::ffff:{v4}]",
            f"[::{v4}]",
            f"[::ffff:0:{v4}]",
            f"[64:ff9b::{v4}]",
            f"[{ipaddress.IPv6Address((0x2002 << 112) | (n << 80))}]",
            f"[{ipaddress.IPv6Address((0x20010000 << 96) | (~n & 0xFFFFFFFF))}]",
        ]
    )


_LABEL_CHARS = "abcxyz019-_%.\u00fc\u00df\u0130\u200b\u200d\uff0e\u0301\\@:[] "
NAMES = st.lists(
    st.from_regex(r"[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?|[a-z\u00e0-\u00ff]{1,8}", fullmatch=True), min_size=1, max_size=4
).map(".".join)
HOSTS = st.one_of(
    NAMES,
    st.integers(0, 2**32 - 1).flatmap(_ipv4_forms),
    st.ip_addresses(v=4).flatmap(_ipv6_forms),
    st.ip_addresses(v=6).map(lambda a: f"[{a}]"),
    NAMES,
    st.text(_LABEL_CHARS, min_size=0, max_size=20),
    st.sampled_from(["localhost", "hooks.example.com", "B\u00fccher.example", "127.0.0.1", "8.8.8.8"]),
)
_GOOD_PORTS = st.sampled_from(["", ":443", ":8443"])
PORTS = st.one_of(
    _GOOD_PORTS, _GOOD_PORTS, st.integers(0, 70000).map(lambda p: f":{p}"), st.sampled_from([":", ":x", ":0443"])
)
_PATHS = st.text("/?#%&=:@!$'()*+,;[]\"<>{}|^`abc\u00e4\u4e2d", max_size=20)
RESTS = st.one_of(_PATHS.map(lambda p: "/" + p), _PATHS, st.text(max_size=20))
URLS = st.one_of(
    st.builds(
        lambda scheme, host, port, rest: f"{scheme}://{host}{port}{rest}",
        st.sampled_from(["https", "https", "HTTPS", "http"]),
        HOSTS,
        PORTS,
        RESTS,
    ),
    st.text(max_size=40).map(lambda t: "https://" + t),
)


@pytest.fixture(scope="module")
def dispatcher():
    """The real dispatch service on a real DuckDB file, with a workspace and a definition."""
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "urls.duckdb")
        services = Services(store, clock=ManualClock(1_000_000))
        creds = create_workspace(store, now_ms=1_000_000)
        workspace = Authenticator(store).authenticate(creds.api_key, creds.auth_token)
        workflow.create_definition(
            services,
            workspace,
            {
                "definitionId": "review",
                "name": "Review",
                "nodes": [
                    {"nodeId": "review", "type": "human", "config": {"reviewers": [{"userId": "ann"}]}},
                    {"nodeId": "done", "type": "agent", "config": {"agentId": "publisher"}},
                ],
                "edges": [
                    {"from": "review", "to": "done", "on": "approve"},
                    {"from": "review", "to": "done", "on": "reject"},
                ],
            },
        )
        yield services, workspace
        store.close()


def _dispatch_accepts(services, workspace, url: str) -> bool:
    try:
        request = validate(m.Dispatch, {"definitionId": "review", "webhookUrl": url, "webhookSecret": "s"})
        workflow.dispatch(services, workspace, request)
    except ApiError as exc:
        assert "data.webhookUrl" in exc.message, exc.message
        return False
    return True


def _delivery_accepts(url: str, policy: WebhookPolicy) -> bool:
    """What an attempt does with a stored URL before the network: any error but a recorded
    refusal would be a bug (it is what used to make the deliverer spin)."""
    try:
        target = prepare(url, policy)
    except Refused:
        return False
    address = target.address or ipaddress.ip_address("93.184.216.34")  # a name: its resolved address
    request = request_for(target, address, b"{}", {"x-service-attempt": "1"})
    assert request.headers["host"] == target.authority and request.url.host == str(address)
    return True


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(URLS, st.sampled_from([STRICT, LOCAL]))
def test_dispatch_and_delivery_agree_on_every_url(dispatcher, url, policy):
    services, workspace = dispatcher
    services.webhook_policy = policy
    assert _dispatch_accepts(services, workspace, url) == _delivery_accepts(url, policy), url


def test_the_documented_examples_hold():
    result = doctest.testmod(toolkit.webhook_urls)
    assert result.attempted > 0 and result.failed == 0
