"""GET /openapi.json: an OpenAPI 3.1 document of every route, checked against the route
table, against what the running app serves, and against live requests and answers."""

from __future__ import annotations

import httpx
import pytest
from jsonschema import Draft202012Validator

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
    HTTP_STATUS,
    RESOLVE,
    STEP_CANCEL,
    blocking_agent_definition,
    expect_error,
    human_definition,
    uid,
)
from server import Settings, create_app
from toolkit.services.operations import OPERATIONS

PREFIX = "#/components/schemas/"


@pytest.fixture(scope="module")
def doc(server):
    with httpx.Client(base_url=server.base_url, timeout=30) as client:  # no credentials needed
        resp = client.get("/openapi.json")
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("application/json")
    return resp.json()


def resolve_ref(doc, ref: str) -> dict:
    assert ref.startswith(PREFIX), ref
    name = ref[len(PREFIX) :]
    assert name in doc["components"]["schemas"], f"{ref} does not resolve"
    return doc["components"]["schemas"][name]


def validator(doc, schema: dict) -> Draft202012Validator:
    """A validator whose `#/components/...` references resolve inside the document."""
    return Draft202012Validator({**schema, "components": doc["components"]})


def test_document_is_openapi_3_1(doc):
    assert doc["openapi"].startswith("3.1")
    assert doc["info"]["title"] and doc["info"]["version"]
    schemes = doc["components"]["securitySchemes"]
    assert {(s["type"], s["in"], s["name"]) for s in schemes.values()} == {
        ("apiKey", "header", "x-service-api-key"),
        ("apiKey", "header", "x-service-auth-token"),
    }
    error = doc["components"]["schemas"]["Error"]
    assert set(error["properties"]["error"]["properties"]) == {"message", "status"}
    Draft202012Validator.check_schema({**error, "components": doc["components"]})


def test_every_route_is_documented(doc):
    assert {e.path for e in OPERATIONS} == set(doc["paths"])
    operation_ids = set()
    for endpoint in OPERATIONS:
        item = doc["paths"][endpoint.path]
        assert set(item) == {"post"}, endpoint.path
        operation = item["post"]
        operation_ids.add(operation["operationId"])
        assert operation["security"] == [{name: [] for name in doc["components"]["securitySchemes"]}]
        body = operation["requestBody"]["content"]["application/json"]["schema"]
        assert body["required"] == ["data"] and body["additionalProperties"] is False
        request_schema = resolve_ref(doc, body["properties"]["data"]["$ref"])
        assert request_schema.get("type") == "object" and request_schema["properties"]
        assert body["properties"]["data"]["$ref"] == PREFIX + endpoint.schema.__name__
        ok = operation["responses"]["200"]["content"]["application/json"]["schema"]
        assert ok["required"] == ["result"]
        result_schema = resolve_ref(doc, ok["properties"]["result"]["$ref"])
        assert result_schema["properties"]
        for status in ("400", "401", "404", "413", "500"):  # every error an operation can answer
            error = operation["responses"][status]["content"]["application/json"]["schema"]
            codes = error["properties"]["error"]["properties"]["status"]["enum"]
            assert codes and all(HTTP_STATUS[c] == int(status) or status == "413" for c in codes), (status, codes)
    assert len(operation_ids) == len(OPERATIONS)


def test_every_reference_resolves(doc):
    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "$ref":
                    resolve_ref(doc, value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(doc)
    for schema in doc["components"]["schemas"].values():
        Draft202012Validator.check_schema({**schema, "components": doc["components"]})


def test_every_served_v2_route_is_in_the_document(server, doc):
    # the app's own route table (built, not started: no database is opened)
    app = create_app(Settings(db=":memory:", timers=False))
    served = {route.path for route in app.routes if route.path.startswith("/v2/")}
    assert served == set(doc["paths"])
    # and the running server answers on each documented path (401 without credentials, 405 on GET),
    # while a path next to them is unknown
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        for path in doc["paths"]:
            expect_error(client.post(path, json={"data": {}}), "UNAUTHENTICATED")
            expect_error(client.get(path), "INVALID_ARGUMENT", http=405)
        expect_error(client.post("/v2/workflow/definitions/rename", json={"data": {}}), "NOT_FOUND")


def test_live_requests_and_answers_match_the_document(api, doc):
    """Send a valid request to every endpoint: the request validates against its documented
    schema, and the answer against the documented 200 (or error) schema."""

    def check(path, data, expect_ok=True):
        operation = doc["paths"][path]["post"]
        request_schema = operation["requestBody"]["content"]["application/json"]["schema"]
        errors = list(validator(doc, request_schema).iter_errors({"data": data}))
        assert not errors, f"{path} request does not match the document: {errors[0].message}"
        resp = api.post(path, data)
        if expect_ok:
            assert resp.status_code == 200, resp.text
            schema = operation["responses"]["200"]["content"]["application/json"]["schema"]
        else:
            schema = operation["responses"][str(resp.status_code)]["content"]["application/json"]["schema"]
        errors = list(validator(doc, schema).iter_errors(resp.json()))
        assert not errors, f"{path} answer does not match the document: {errors[0].message} in {resp.text[:500]}"
        return resp.json().get("result")

    body = human_definition(
        uid("doc"),
        tags=["doc"],
        description="documented",
        custom={"k": 1},
        triggers=[{"triggerId": "t", "eventName": "e", "filters": {}}],
    )
    body["edges"][0] = {"from": {"kind": "node", "nodeId": "review"}, "to": "approved", "on": "approve"}
    check(DEF_CREATE, body)
    check(DEF_GET, {"definitionId": body["definitionId"]})
    check(DEF_LIST, {"tags": ["doc"], "pageSize": 1})
    check(DEF_UPDATE, dict(body, ifVersion=1))
    execution_id = check(
        DISPATCH, {"definitionId": body["definitionId"], "idempotencyKey": uid("k"), "triggerContext": {"a": 1}}
    )["executionId"]
    step_id = api.step(execution_id, "review")["stepId"]
    check(EXEC_GET, {"executionId": execution_id})
    check(EXEC_LIST, {"definitionId": body["definitionId"], "pageSize": 1})
    check(EVENTS, {"executionId": execution_id, "sinceSeq": 0, "pageSize": 10})
    check(DECIDE, {"executionId": execution_id, "stepId": step_id, "reviewerId": "zed", "decision": "approve"})
    check(DECIDE, {"executionId": execution_id, "stepId": step_id, "reviewerId": "bob", "decision": "approve"})
    check(
        RESOLVE,
        {
            "executionId": execution_id,
            "stepId": step_id,
            "action": "force-approve",
            "actorId": "ops",
            "reason": "r",
            "output": {"x": 1},
        },
    )
    check(EXEC_GET, {"executionId": execution_id})
    check(EVENTS, {"executionId": execution_id})
    second = check(DISPATCH, {"definitionId": body["definitionId"]})["executionId"]
    second_step = api.step(second, "review")["stepId"]
    check(STEP_CANCEL, {"executionId": second, "stepId": second_step, "actorId": "ops", "reason": "r"})
    third = check(DISPATCH, {"definitionId": body["definitionId"]})["executionId"]
    check(EXEC_CANCEL, {"executionId": third, "reason": "r"})
    check(EXEC_CANCEL, {"executionId": third}, expect_ok=False)
    gate = blocking_agent_definition(uid("docgate"))
    check(DEF_CREATE, gate)
    gated = check(DISPATCH, {"definitionId": gate["definitionId"]})["executionId"]
    check(
        AGENT_RESOLUTION,
        {
            "executionId": gated,
            "stepId": api.step(gated, "gate")["stepId"],
            "resolutionId": "r:1",
            "status": "success",
            "output": {"decision": "approve"},
        },
    )
    check(EXEC_GET, {"executionId": gated})
    check(DEF_DELETE, {"definitionId": gate["definitionId"]})
    check(DEF_GET, {"definitionId": gate["definitionId"]})
    check(DEF_GET, {"definitionId": uid("missing")}, expect_ok=False)
