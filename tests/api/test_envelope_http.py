"""The v2 envelope, authentication, routing errors, status codes and workspace isolation
(api-v2 §1, §5, §7; semantics §1, §2)."""

from __future__ import annotations

import json

import httpx
import pytest

from api.support import (
    AGENT_RESOLUTION,
    DECIDE,
    DEF_CREATE,
    DEF_DELETE,
    DEF_GET,
    DEF_LIST,
    DEF_UPDATE,
    DISPATCH,
    EVENTS,
    EXEC_CANCEL,
    EXEC_GET,
    EXEC_LIST,
    RESOLVE,
    STEP_CANCEL,
    expect_error,
    human_definition,
    uid,
)

ALL_PATHS = [
    DEF_CREATE,
    DEF_GET,
    DEF_LIST,
    DEF_UPDATE,
    DEF_DELETE,
    DISPATCH,
    EXEC_GET,
    EXEC_LIST,
    EXEC_CANCEL,
    EVENTS,
    RESOLVE,
    DECIDE,
    AGENT_RESOLUTION,
    STEP_CANCEL,
]
LIMIT = 1024 * 1024


# ---------------------------------------------------------------- the envelope


@pytest.mark.parametrize("path", ALL_PATHS)
def test_unwrapped_body_is_invalid_argument(api, path):
    message = api.err(path, body={"definitionId": "abc", "executionId": "ex_1"})
    assert "data" in message


@pytest.mark.parametrize("raw", [b"[]", b'[{"data": {}}]', b'"data"', b"42", b"null", b"true"])
def test_non_object_body_is_invalid_argument(api, raw):
    api.err(DEF_LIST, body=raw, code="INVALID_ARGUMENT")


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"{",
        b'{"data": {}',
        b"{'data': {}}",
        b'{"data": {},}',
        b"data=1",
        b"\xff\xfe\x00",
        b'{"data": {"pageSize": NaN}}',
        b'{"data": {"pageSize": Infinity}}',
        b'{"data": {"x": -Infinity}}',
        b'{"data": {"pageSize": 1' + b"0" * 5000 + b"}}",
        b'{"data": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
    ],
)
def test_malformed_json_is_invalid_argument(api, raw):
    message = api.err(DEF_LIST, body=raw, code="INVALID_ARGUMENT")
    assert "body" in message or "data" in message


@pytest.mark.parametrize("data", [[], [1], "x", 1, None, True])
def test_data_must_be_an_object(api, data):
    assert "data" in api.err(DEF_LIST, body={"data": data})


def test_unknown_top_level_key(api):
    message = api.err(DEF_LIST, body={"data": {}, "meta": {"x": 1}})
    assert "meta" in message
    assert "data" in api.err(DEF_LIST, body={"meta": {}})


@pytest.mark.parametrize("path", ALL_PATHS)
def test_unknown_key_inside_data_is_named(api, path):
    message = api.err(path, {"definitionId": "abc", "bogusField": 1})
    assert "bogusField" in message


def test_deeply_nested_data_is_refused(api):
    nested = {}
    for _ in range(100):
        nested = {"a": nested}
    body = human_definition(uid("deep"), custom=nested)
    assert "data" in api.err(DEF_CREATE, body)


def test_out_of_range_number_is_refused_not_echoed_as_infinity(api):
    """1e999 is grammatical JSON but overflows to inf; echoing it would put the non-JSON
    token `Infinity` in a response."""
    body = human_definition(uid("inf"), custom={"big": 1})
    raw = json.dumps({"data": body}).replace('"big": 1', '"big": 1e999').encode()
    resp = api.post(DEF_CREATE, body=raw)
    assert "Infinity" not in resp.text and "NaN" not in resp.text
    expect_error(resp, "INVALID_ARGUMENT")
    api.err(DEF_GET, {"definitionId": body["definitionId"]}, "NOT_FOUND")
    # ordinary floats and big integers are fine
    ok = human_definition(uid("num"), custom={"f": 1.5e300, "i": 10**40, "neg": -0.0})
    view = api.create(ok)
    assert view["custom"] == {"f": 1.5e300, "i": 10**40, "neg": -0.0}


def test_lone_surrogates_are_invalid_argument(api):
    """`"\\ud800"` is grammatical JSON but not Unicode text: refused wherever it appears — typed
    fields, free-form objects, keys, the top level — and nothing is stored."""
    body = human_definition(uid("surrogate"))
    api.create(body)
    execution_id = api.dispatch(body["definitionId"])
    step_id = api.step(execution_id, "review")["stepId"]
    fresh = uid("surrogate")
    definition = json.dumps({"data": human_definition(fresh)})[:-2]
    cases = [
        (DEF_GET, b'{"data": {"definitionId": "\\ud800"}}', "data.definitionId"),
        (DEF_GET, b'{"data": {"definitionId": "abc", "\\udfff": 1}}', "data"),
        (DEF_LIST, b'{"data": {}, "\\ud800": 1}', "body"),
        (DEF_CREATE, (definition + ', "custom": {"x": ["\\ud800"]}}}').encode(), "data.custom.x[0]"),
        (DEF_CREATE, (definition + ', "custom": {"\\ud83d": 1}}}').encode(), "data.custom"),
        (
            DISPATCH,
            ('{"data": {"definitionId": "%s", "triggerContext": {"t": "a\\udc00b"}}}' % body["definitionId"]).encode(),
            "data.triggerContext.t",
        ),
        (
            RESOLVE,
            (
                '{"data": {"executionId": "%s", "stepId": "%s", "action": "force-complete", "actorId": "a", '
                '"output": {"o": "\\ud800"}}}' % (execution_id, step_id)
            ).encode(),
            "data.output.o",
        ),
    ]
    for path, raw, where in cases:
        message = api.err(path, body=raw, code="INVALID_ARGUMENT")
        assert message.startswith(where), message
    api.err(DEF_GET, {"definitionId": fresh}, "NOT_FOUND")
    assert api.step(execution_id, "review")["status"] == "waiting"
    assert len(api.ok(EXEC_LIST, {"definitionId": body["definitionId"]})["items"]) == 1
    # a proper surrogate pair is just a character
    view = api.create(human_definition(uid("emoji"), custom={"e": "\U0001f600"}))
    assert view["custom"] == {"e": "\U0001f600"}


# ---------------------------------------------------------------- body size


def test_body_over_one_mib_is_413(api, anon):
    big = b'{"data": {"x": "' + b"a" * LIMIT + b'"}}'
    resp = api.post(DEF_LIST, body=big)
    expect_error(resp, "INVALID_ARGUMENT", http=413)
    # size is checked before authentication
    expect_error(anon.post(DEF_LIST, body=big), "INVALID_ARGUMENT", http=413)

    def chunked():  # no content-length: the limit holds while the body streams in
        yield b'{"data": {"x": "'
        for _ in range(12):
            yield b"a" * 100_000
        yield b'"}}'

    expect_error(api.client.post(DEF_LIST, content=chunked()), "INVALID_ARGUMENT", http=413)
    # exactly at the limit is accepted
    exact = b'{"data": {"pageSize": 1}}'
    exact += b" " * (LIMIT - len(exact))
    assert len(exact) == LIMIT
    assert api.post(DEF_LIST, body=exact).status_code == 200
    expect_error(api.post(DEF_LIST, body=exact + b" "), "INVALID_ARGUMENT", http=413)


# ---------------------------------------------------------------- authentication


def test_authentication_failures_look_the_same(server, api):
    key, token = server.creds_a["apiKey"], server.creds_a["authToken"]
    other_key, other_token = server.creds_b["apiKey"], server.creds_b["authToken"]
    variants = [
        {},
        {"x-service-api-key": key},
        {"x-service-auth-token": token},
        {"x-service-api-key": key, "x-service-auth-token": token + "x"},
        {"x-service-api-key": key + "x", "x-service-auth-token": token},
        {"x-service-api-key": "", "x-service-auth-token": ""},
        {"x-service-api-key": key, "x-service-auth-token": other_token},  # B's token with A's key
        {"x-service-api-key": other_key, "x-service-auth-token": token},
        {"x-service-api-key": token, "x-service-auth-token": key},  # swapped
        {"x-service-api-key": b"\xe9\xff", "x-service-auth-token": b"\x80\xfe"},  # obs-text (DEL: 400, test_limits)
    ]
    messages = set()
    for headers in variants:
        with httpx.Client(base_url=server.base_url, timeout=30) as client:
            for path in (DEF_LIST, EXEC_GET):
                resp = client.post(path, json={"data": {}}, headers=headers)
                messages.add(expect_error(resp, "UNAUTHENTICATED", http=401))
    assert len(messages) == 1  # never says which header was wrong
    (message,) = messages
    assert key not in message and token not in message
    # authentication comes before parsing: garbage with bad credentials is still 401
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        expect_error(client.post(DEF_LIST, content=b"{nope"), "UNAUTHENTICATED", http=401)
        expect_error(client.post(DEF_LIST, json={"wrong": 1}), "UNAUTHENTICATED", http=401)
    # the right pair works
    assert api.post(DEF_LIST, {}).status_code == 200


# ---------------------------------------------------------------- routing


@pytest.mark.parametrize(
    "path",
    [
        "/v2/workflow/definitions/nope",
        "/v2/nope",
        "/",
        "/v1/workflow/definitions/get",
        "/v2/workflow/definitions/get/extra",
        "/openapi.yaml",
    ],
)
def test_unknown_path_is_404_not_found(api, anon, path):
    for client in (api, anon):
        resp = client.post(path, {})
        assert path in expect_error(resp, "NOT_FOUND", http=404)
    resp = api.client.get(path)
    expect_error(resp, "NOT_FOUND", http=404)


@pytest.mark.parametrize("path", ALL_PATHS)
def test_wrong_method_is_405_naming_post(api, path):
    for method in ("GET", "PUT", "DELETE", "PATCH"):
        resp = api.client.request(method, path)
        message = expect_error(resp, "INVALID_ARGUMENT", http=405)
        assert "POST" in message
        assert resp.headers.get("allow") == "POST"


def test_wrong_method_on_openapi_names_get(api):
    resp = api.client.post("/openapi.json", json={"data": {}})
    message = expect_error(resp, "INVALID_ARGUMENT", http=405)
    assert "GET" in message and "use POST" not in message


# ---------------------------------------------------------------- status code mapping


def test_status_codes_follow_semantics_1(api):
    """One real request per reachable code; expect_error checks code and HTTP status together."""
    body = human_definition(uid("codes"))
    api.create(body)
    execution_id = api.dispatch(body["definitionId"])
    step_id = api.step(execution_id, "review")["stepId"]
    checks = [
        (DEF_GET, {"definitionId": 5}, "INVALID_ARGUMENT", 400),
        (DEF_CREATE, body, "ALREADY_EXISTS", 409),
        (DEF_GET, {"definitionId": uid("nope")}, "NOT_FOUND", 404),
        (
            RESOLVE,
            {"executionId": execution_id, "stepId": step_id, "action": "reviewer-approve", "actorId": "mallory"},
            "PERMISSION_DENIED",
            403,
        ),
        (DEF_UPDATE, dict(body, ifVersion=9), "FAILED_PRECONDITION", 400),
    ]
    for path, data, code, status in checks:
        resp = api.post(path, data)
        expect_error(resp, code, http=status)
        assert resp.headers["content-type"].startswith("application/json")
    ok = api.post(EXEC_GET, {"executionId": execution_id})
    assert ok.status_code == 200 and ok.headers["content-type"].startswith("application/json")


WEIRD_VALUES = [
    None,
    True,
    -1,
    2**63,
    10**30,
    1.5,
    "",
    "x" * 3000,
    "\u0000é☃𝄞",
    [],
    [None],
    {},
    {"$ref": "#", "__proto__": 1},
]


@pytest.fixture(scope="module")
def valid_payloads(api):
    """A valid request per endpoint, on a live execution: the fuzz below mutates one field at a
    time, so the odd value reaches the service and the engine, not just the schema."""
    body = human_definition(uid("fuzz"))
    api.create(body)
    definition_id = body["definitionId"]
    execution_id = api.dispatch(definition_id)
    step_id = api.step(execution_id, "review")["stepId"]
    ids = {"executionId": execution_id, "stepId": step_id}
    return {
        DEF_CREATE: human_definition(uid("fuzz")) | {"tags": ["t"], "custom": {}, "description": "d"},
        DEF_GET: {"definitionId": definition_id},
        DEF_LIST: {"pageSize": 5, "tags": ["t"], "status": "active", "scope": {"level": "apiKey"}},
        DEF_UPDATE: body | {"ifVersion": 1},
        DEF_DELETE: {"definitionId": definition_id},
        DISPATCH: {
            "definitionId": definition_id,
            "idempotencyKey": "k",
            "correlationId": "c",
            "triggerContext": {},
            "webhookUrl": "https://example.com/h",
            "webhookSecret": "s",
        },
        EXEC_GET: {"executionId": execution_id},
        EXEC_LIST: {"definitionId": definition_id, "status": "running", "pageSize": 5},
        EXEC_CANCEL: {"executionId": execution_id, "reason": "r"},
        EVENTS: {"executionId": execution_id, "sinceSeq": 0, "pageSize": 5},
        RESOLVE: ids | {"action": "force-complete", "actorId": "ops", "output": {}, "reason": "r"},
        DECIDE: ids | {"reviewerId": "bob", "decision": "approve", "reason": "r"},
        AGENT_RESOLUTION: ids | {"resolutionId": "r1", "status": "failure", "output": {}, "errorMessage": "e"},
        STEP_CANCEL: ids | {"actorId": "ops", "reason": "r"},
    }


@pytest.mark.parametrize("path", ALL_PATHS)
def test_never_a_5xx_for_bad_input(api, valid_payloads, path):
    """Each field of a valid request, set in turn to values of the wrong type, size or range:
    always an enveloped answer, never a 5xx (Api.post refuses any 5xx)."""
    base = valid_payloads[path]
    for field in list(base) + ["unexpected"]:
        for value in WEIRD_VALUES:
            resp = api.post(path, base | {field: value})
            body = resp.json()
            assert set(body) == ({"result"} if resp.status_code == 200 else {"error"}), body
        resp = api.post(path, {k: v for k, v in base.items() if k != field})
        assert set(resp.json()) <= {"result", "error"}


def test_never_a_5xx_for_extreme_values_that_pass_validation(api):
    """Values the schema accepts must not break the store (BIGINT columns, JSON text); an SLA
    past the schema's bound is a field error, not a broken deadline."""
    too_long = human_definition(uid("huge"), sla_ms=10**20)
    message = api.err(DEF_CREATE, too_long)
    assert "data.nodes[0].slaMs" in message
    body = human_definition(uid("huge"), sla_ms=366 * 24 * 3_600_000, custom={"n": 10**30})
    api.create(body)
    execution_id = api.dispatch(
        body["definitionId"], triggerContext={"n": 10**30, "s": "é☃𝄞\u0000"}, correlationId="é☃𝄞"
    )
    view = api.execution(execution_id)
    assert view["steps"][0]["status"] == "waiting" and view["correlationId"] == "é☃𝄞"
    events = api.ok(EVENTS, {"executionId": execution_id, "sinceSeq": 10**30})
    assert events["events"] == [] and events["hasMore"] is False
    api.ok(
        DECIDE,
        {
            "executionId": execution_id,
            "stepId": view["steps"][0]["stepId"],
            "reviewerId": "ann",
            "decision": "approve",
            "reason": "é☃𝄞\u0000",
        },
    )
    assert api.execution(execution_id)["status"] == "completed"


# ---------------------------------------------------------------- workspace isolation


def test_workspace_isolation(api, api_b):
    body = human_definition(uid("iso"), tags=["isolation"])
    api.create(body)
    definition_id = body["definitionId"]
    execution_id = api.dispatch(definition_id, idempotencyKey="iso-key")
    step_id = api.step(execution_id, "review")["stepId"]
    definition_before = api.ok(DEF_GET, {"definitionId": definition_id})
    execution_before = api.execution(execution_id)
    events_before = api.events(execution_id)

    # B sees nothing of A's
    assert api_b.ok(DEF_LIST, {}) == {"items": [], "nextCursor": None, "hasMore": False}
    assert api_b.ok(DEF_LIST, {"status": "tombstoned"})["items"] == []
    assert api_b.ok(EXEC_LIST, {}) == {"items": [], "nextCursor": None, "hasMore": False}
    assert api_b.ok(EXEC_LIST, {"definitionId": definition_id})["items"] == []
    not_found = [
        (DEF_GET, {"definitionId": definition_id}),
        (DEF_UPDATE, dict(body, ifVersion=1)),
        (DEF_DELETE, {"definitionId": definition_id}),
        (DISPATCH, {"definitionId": definition_id}),
        (DISPATCH, {"definitionId": definition_id, "idempotencyKey": "iso-key"}),
        (EXEC_GET, {"executionId": execution_id}),
        (EVENTS, {"executionId": execution_id}),
        (EXEC_CANCEL, {"executionId": execution_id}),
        (RESOLVE, {"executionId": execution_id, "stepId": step_id, "action": "force-approve", "actorId": "x"}),
        (DECIDE, {"executionId": execution_id, "stepId": step_id, "reviewerId": "ann", "decision": "approve"}),
        (AGENT_RESOLUTION, {"executionId": execution_id, "stepId": step_id, "resolutionId": "r", "status": "success"}),
        (STEP_CANCEL, {"executionId": execution_id, "stepId": step_id, "actorId": "x"}),
    ]
    for path, data in not_found:
        api_b.err(path, data, "NOT_FOUND")

    # B may use the same definitionId and idempotency key for its own, separate objects
    mine = api_b.create(dict(body, name="B's own"))
    assert mine["version"] == 1 and mine["name"] == "B's own"
    own_execution = api_b.ok(DISPATCH, {"definitionId": definition_id, "idempotencyKey": "iso-key"})
    assert own_execution["executionId"] != execution_id and own_execution["deduplicated"] is False
    api_b.err(EXEC_GET, {"executionId": execution_id}, "NOT_FOUND")
    api.err(EXEC_GET, {"executionId": own_execution["executionId"]}, "NOT_FOUND")
    assert [e["executionId"] for e in api_b.ok(EXEC_LIST, {})["items"]] == [own_execution["executionId"]]

    # nothing A owns changed
    assert api.ok(DEF_GET, {"definitionId": definition_id}) == definition_before
    assert api.execution(execution_id) == execution_before
    assert api.events(execution_id) == events_before
    again = api.ok(DISPATCH, {"definitionId": definition_id, "idempotencyKey": "iso-key"})
    assert again["executionId"] == execution_id and again["deduplicated"] is True
    assert definition_id in [d["definitionId"] for d in api.ok(DEF_LIST, {"tags": ["isolation"]})["items"]]
