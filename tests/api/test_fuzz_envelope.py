"""The envelope fuzzed over real HTTP (a smaller sample than tests/property/test_envelope_fuzz.py):
random bytes, random JSON and damaged bodies, under any content type, always get a JSON error
envelope with a spec code and its 4xx status, never a 5xx. Only read endpoints are aimed at, so
whatever gets through changes nothing the other tests on this server rely on."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.support import HTTP_STATUS

READS = [
    "/v2/workflow/definitions/get",
    "/v2/workflow/definitions/list",
    "/v2/workflow/executions/get",
    "/v2/workflow/executions/getEvents",
    "/v2/users/get",
    "/v2/commentannotations/get",
    "/v2/commentannotations/count/get",
    "/v2/activities/get",
    "/v2/agents/get",
]
CONTENT_TYPES = [
    "application/json",
    "application/json; charset=utf-16",
    "text/plain",
    "application/xml",
    "multipart/form-data; boundary=x",
    "application/x-www-form-urlencoded",
    "",
    "*/*; q=\u00e9".encode("latin-1"),
]
HTTP = settings(max_examples=80, deadline=None, database=None, suppress_health_check=list(HealthCheck))

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=15,
)
bodies = st.one_of(
    st.binary(max_size=300),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.dictionaries(
        st.sampled_from(["definitionId", "executionId", "organizationId", "pageSize", "x"]), json_values, max_size=3
    ).map(lambda d: json.dumps({"data": d}).encode()),
    st.tuples(st.binary(max_size=6), st.integers(0, 40)).map(
        lambda jc: b'{"data": {"pageSize": 1}}'[: jc[1]] + jc[0] + b'{"data": {"pageSize": 1}}'[jc[1] :]
    ),
)


def expect_envelope(resp) -> None:
    assert resp.status_code < 500, resp.text
    assert resp.headers["content-type"].startswith("application/json")
    body = resp.json()
    if resp.status_code == 200:
        assert list(body) == ["result"]
        return
    assert list(body) == ["error"] and set(body["error"]) == {"message", "status"}, body
    assert resp.status_code == HTTP_STATUS[body["error"]["status"]], body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]


def test_random_bodies_and_content_types_get_an_envelope(api):
    @HTTP
    @given(st.sampled_from(READS), bodies, st.sampled_from(CONTENT_TYPES))
    def fuzz(path, raw, content_type):
        expect_envelope(api.client.post(path, content=raw, headers={"content-type": content_type}))

    fuzz()


def test_deep_nesting_over_http_is_invalid_argument_quickly(api):
    """A body nested far beyond the limit, up to the size limit, is refused as INVALID_ARGUMENT
    naming `data` or `body` — never a RecursionError turned 500."""
    for depth in (65, 1_000, 500_000):
        for open_, close in (("[", "]"), ('{"a":', "}")):
            raw = ('{"data": {"pageSize": ' + open_ * depth + "1" + close * depth + "}}").encode()
            resp = api.client.post(READS[1], content=raw[: 1024 * 1024])
            expect_envelope(resp)
            assert resp.status_code == 400 and resp.json()["error"]["status"] == "INVALID_ARGUMENT"
