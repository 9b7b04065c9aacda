"""Every workflow endpoint over real HTTP, and every error code each can return
(api-v2 §3, §4.5–4.9, §6, §7; semantics §5, §6, §7)."""

from __future__ import annotations

import json
import time

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
    EXTERNAL_TYPES,
    RESOLVE,
    STEP_CANCEL,
    Api,
    blocking_agent_definition,
    expect_error,
    external_agent_definition,
    human_definition,
    serve_fresh,
    stored,
    uid,
    wait_for,
)
from toolkit import examples

APPROVE_AST = {"op": "eq", "args": [{"var": "output.decision"}, "approve"]}
REJECT_AST = {"op": "eq", "args": [{"var": "output.decision"}, "reject"]}


# ---------------------------------------------------------------- shared definitions


@pytest.fixture(scope="module")
def human_def(api):
    """review: ann (mandatory), bob (optional); approve -> approved, reject -> rejected."""
    return api.create(human_definition(uid("human")))["definitionId"]


@pytest.fixture(scope="module")
def external_def(api):
    return api.create(external_agent_definition(uid("external")))["definitionId"]


@pytest.fixture(scope="module")
def quorum_def(api):
    """The blocking-agent-quorum example: minResolved 2 of 3 expected resolutions."""
    body = examples.load("blocking-agent-quorum")
    body["definitionId"] = uid("quorum")
    return api.create(body)["definitionId"]


def waiting_human(api, definition_id):
    """Dispatch; return (executionId, the waiting review step)."""
    execution_id = api.dispatch(definition_id)
    step = api.step(execution_id, "review")
    assert step["status"] == "waiting"
    return execution_id, step


def last_seq(api, execution_id) -> int:
    events = api.events(execution_id)
    return events[-1]["seq"] if events else 0


def events_of(api, execution_id, type_=None, step_id=None):
    return [
        e
        for e in api.events(execution_id)
        if (type_ is None or e["type"] == type_) and (step_id is None or e["stepId"] == step_id)
    ]


def children(execution, step_id):
    return [s for s in execution["steps"] if s["stepId"].startswith(step_id + "__to__")]


# ================================================================ definitions: create


def rich_definition(definition_id: str) -> dict:
    """Bare-string and object endpoints in unusual key orders, a loop, an exhausted route, a
    custom predicate, a group as edge target and source, triggers, tags and custom metadata."""
    when = '{"op": "eq",  "args": [{"var": "output.decision"}, "approve"]}'
    return {
        "definitionId": definition_id,
        "name": "Rich definition",
        "description": "Echo test: every edge comes back byte-for-byte.",
        "tags": ["echo", "rich"],
        "custom": {"owner": "qa", "nested": {"b": 2, "a": 1}},
        "triggers": [{"triggerId": "t-1", "eventName": "doc.created", "filters": {"z": 1, "a": [1, 2]}}],
        "nodes": [
            {
                "nodeId": "draft",
                "type": "agent",
                "name": "Draft",
                "description": "Writes  it.",
                "config": {"agentId": "writer", "mockOutput": {"decision": "approve"}, "extraKey": {"kept": True}},
            },
            {
                "nodeId": "review",
                "type": "human",
                "name": "Review",
                "config": {"reviewers": [{"userId": "ann", "mandatory": True}], "commentBody": "Please look."},
            },
            {"nodeId": "fallback", "type": "agent", "config": {"agentId": "escalation"}},
            {"nodeId": "notify", "type": "agent", "config": {"agentId": "notifier"}},
            {"nodeId": "check-a", "type": "agent", "config": {"agentId": "checker-a"}},
            {"nodeId": "check-b", "type": "agent", "config": {"agentId": "checker-b"}},
            {"nodeId": "final", "type": "agent", "config": {"agentId": "finisher"}},
        ],
        "groups": [{"groupId": "checks", "memberNodeIds": ["check-a", "check-b"], "onQuorumMet": "waitAll"}],
        "edges": [
            {"from": "draft", "to": {"kind": "node", "nodeId": "review"}, "on": "approve"},
            {
                "to": {"groupId": "checks", "kind": "group"},
                "on": "approve",
                "from": {"nodeId": "review", "kind": "node"},
            },
            {"on": "reject", "loop": {"maxIterations": 2}, "to": "draft", "from": "review"},
            {"from": "review", "to": "fallback", "on": "exhausted"},
            {"from": "review", "on": "custom", "when": when, "to": "notify"},
            {"from": {"kind": "group", "groupId": "checks"}, "to": "final"},
        ],
    }


def test_create_returns_the_definition_view(api):
    body = rich_definition(uid("rich"))
    view = api.create(body)
    assert view["definitionId"] == body["definitionId"]
    assert view["version"] == 1
    assert view["status"] == "active"
    assert view["name"] == body["name"] and view["description"] == body["description"]
    assert view["scope"] == {"level": "apiKey", "organizationId": None, "documentId": None}
    # authored edges come back exactly as sent: bare strings stay strings, key order is kept
    assert json.dumps(view["edges"]) == json.dumps(body["edges"])
    assert json.dumps(view["nodes"]) == json.dumps(body["nodes"])
    assert json.dumps(view["groups"]) == json.dumps(body["groups"])
    assert view["triggers"] == body["triggers"] and view["tags"] == body["tags"]
    assert json.dumps(view["custom"]) == json.dumps(body["custom"])
    assert isinstance(view["createdAt"], int) and view["createdAt"] == view["updatedAt"]
    assert abs(view["createdAt"] - time.time() * 1000) < 600_000
    compiled = view["compiled"]
    assert set(compiled) == {"forwardEdges", "loops"}
    forward = {(e["from"], e["to"], e["role"]): e for e in compiled["forwardEdges"]}
    assert forward[("draft", "review", "approve")]["when"] == APPROVE_AST
    assert forward[("review", "notify", "custom")]["when"] == APPROVE_AST
    assert forward[("review", "fallback", "exhausted")]["when"] is None
    assert {
        ("review", "check-a", "approve"),
        ("review", "check-b", "approve"),
        ("check-a", "final", "always"),
        ("check-b", "final", "always"),
    } <= set(forward)
    assert ("review", "draft", "reject") not in forward  # a loop-back is not a forward edge
    assert compiled["loops"] == [
        {
            "loopId": "loop_review__to__draft",
            "entryNodeId": "draft",
            "bodyNodeIds": compiled["loops"][0]["bodyNodeIds"],
            "maxIterations": 2,
            "onExhausted": {"routeToNodeId": "fallback"},
        }
    ]
    assert sorted(compiled["loops"][0]["bodyNodeIds"]) == ["draft", "review"]
    # get and list show the same view
    assert api.ok(DEF_GET, {"definitionId": body["definitionId"]}) == view
    listed = api.ok(DEF_LIST, {"tags": ["rich"], "pageSize": 100})["items"]
    assert view in listed


def test_create_defaults_for_omitted_optional_fields(api):
    body = human_definition(uid("plain"))
    view = api.create(body)
    assert view["description"] is None and view["groups"] is None and view["triggers"] is None
    assert view["tags"] is None and view["custom"] is None
    assert json.dumps(view["edges"]) == json.dumps(body["edges"])
    assert [e["role"] for e in view["compiled"]["forwardEdges"]] == ["approve", "reject"]
    assert view["compiled"]["forwardEdges"][1]["when"] == REJECT_AST


def test_create_existing_id_is_already_exists(api):
    body = human_definition(uid("dup"))
    first = api.create(body)
    changed = dict(body, name="Another name")
    message = api.err(DEF_CREATE, changed, "ALREADY_EXISTS")
    assert body["definitionId"] in message
    assert api.ok(DEF_GET, {"definitionId": body["definitionId"]}) == first  # unchanged


@pytest.mark.parametrize(
    "mutate, path",
    [
        (lambda b: b["nodes"][1]["config"].pop("agentId"), "data.nodes[1].config.agentId"),
        (lambda b: b.update(definitionId="Bad_Id"), "data.definitionId"),
        (lambda b: b.pop("name"), "data.name"),
        (lambda b: b.update(name="x" * 201), "data.name"),
        (lambda b: b["edges"][0].update(on="sometimes"), "data.edges[0].on"),
        (lambda b: b["nodes"][0].update(slaMs="300"), "data.nodes[0].slaMs"),
        (lambda b: b.update(tags=["t"] * 21), "data.tags"),
        (lambda b: b.update(nodes=[]), "data.nodes"),
        (
            lambda b: b["nodes"][0]["config"]["reviewers"][0].update(mandatory="yes"),
            "data.nodes[0].config.reviewers[0].mandatory",
        ),
        (lambda b: b.update(colour="blue"), "data.colour"),
    ],
)
def test_create_schema_error_names_the_field_path(api, mutate, path):
    body = human_definition(uid("schema"))
    mutate(body)
    message = api.err(DEF_CREATE, body, "INVALID_ARGUMENT")
    assert path in message
    if body.get("definitionId", "").startswith("schema-"):
        api.err(DEF_GET, {"definitionId": body["definitionId"]}, "NOT_FOUND")  # nothing was stored


def _no_reject_path(b):
    b["edges"] = [e for e in b["edges"] if e["on"] != "reject"]
    b["nodes"] = [n for n in b["nodes"] if n["nodeId"] != "rejected"]


@pytest.mark.parametrize(
    "mutate, key",
    [
        (_no_reject_path, "APPROVAL_HUMAN_NODE_REQUIRES_REJECT_PATH"),
        (lambda b: b["edges"][0].update(when='{"op": "eq", "args": [1, 1]}'), "APPROVAL_EDGE_WHEN_REQUIRES_CUSTOM"),
        (lambda b: b["edges"][0].update(on="custom"), "APPROVAL_EDGE_CUSTOM_REQUIRES_WHEN"),
        (lambda b: b["edges"][0].update(on="custom", when='{"op": "nope", "args": []}'), "APPROVAL_EDGE_WHEN_INVALID"),
        (lambda b: b["edges"][0].update(loop={"maxIterations": 2}), "APPROVAL_EDGE_LOOP_REQUIRES_REJECT"),
        (lambda b: b["edges"].append({"from": "approved", "to": "review"}), "cycle-detected"),
        (lambda b: b["edges"].append({"from": "approved", "to": "ghost"}), "dangling-edge"),
    ],
)
def test_create_lint_error_names_the_validation_key(api, mutate, key):
    body = human_definition(uid("lint"))
    mutate(body)
    message = api.err(DEF_CREATE, body, "INVALID_ARGUMENT")
    assert key in message
    api.err(DEF_GET, {"definitionId": body["definitionId"]}, "NOT_FOUND")


def test_scope_rules(api):
    # organization scope needs an organizationId, document scope a documentId too
    message = api.err(DEF_CREATE, human_definition(uid("scope"), scope={"level": "organization"}))
    assert "organizationId" in message
    message = api.err(DEF_CREATE, human_definition(uid("scope"), scope={"level": "document", "organizationId": "o"}))
    assert "documentId" in message
    api.err(DEF_CREATE, human_definition(uid("scope"), scope={"level": "galaxy"}))
    # top-level and scope ids must agree
    api.err(
        DEF_CREATE,
        human_definition(
            uid("scope"), scope={"level": "organization", "organizationId": "org-1"}, organizationId="org-2"
        ),
    )
    # either place works; echoed ids are namespaced hashes, never the literal strings
    top = api.create(human_definition(uid("scope"), scope={"level": "organization"}, organizationId="org-1"))
    inner = api.create(human_definition(uid("scope"), scope={"level": "organization", "organizationId": "org-1"}))
    for view in (top, inner):
        assert view["scope"]["level"] == "organization"
        assert view["scope"]["organizationId"] not in (None, "org-1")
        assert view["scope"]["documentId"] is None
    assert top["scope"] == inner["scope"]
    doc = api.create(
        human_definition(uid("scope"), scope={"level": "document", "organizationId": "org-1", "documentId": "doc-1"})
    )
    assert doc["scope"]["organizationId"] == top["scope"]["organizationId"]
    assert doc["scope"]["documentId"] not in (None, "doc-1")


# ================================================================ definitions: get, list


def test_get_unknown_definition_is_not_found(api):
    api.err(DEF_GET, {"definitionId": "no-such-definition"}, "NOT_FOUND")
    api.err(DEF_GET, {}, "INVALID_ARGUMENT")
    api.err(DEF_GET, {"definitionId": 7}, "INVALID_ARGUMENT")


def test_list_pages_each_item_exactly_once_and_filters_by_tags(api):
    tag = uid("tag")
    created = [api.create(human_definition(uid("page"), tags=[tag, "paging"]))["definitionId"] for _ in range(5)]
    other = api.create(human_definition(uid("page"), tags=["paging"]))["definitionId"]
    seen, cursor, pages = [], None, 0
    while True:
        request = {"tags": [tag], "pageSize": 2}
        if cursor is not None:
            request["cursor"] = cursor
        page = api.ok(DEF_LIST, request)
        assert set(page) == {"items", "nextCursor", "hasMore"}
        assert len(page["items"]) <= 2
        seen.extend(item["definitionId"] for item in page["items"])
        pages += 1
        if not page["hasMore"]:
            assert page["nextCursor"] is None
            break
        assert isinstance(page["nextCursor"], str) and len(page["items"]) == 2
        cursor = page["nextCursor"]
    assert pages == 3
    assert seen == created  # creation order, each exactly once, nothing else
    assert other not in seen
    both = api.ok(DEF_LIST, {"tags": [tag, "paging"], "pageSize": 100})["items"]
    assert [d["definitionId"] for d in both] == created
    # the whole workspace, page by page, still yields every definition once
    everything, cursor = [], None
    while True:
        page = api.ok(DEF_LIST, {"pageSize": 3} | ({"cursor": cursor} if cursor else {}))
        everything.extend(d["definitionId"] for d in page["items"])
        if not page["hasMore"]:
            break
        cursor = page["nextCursor"]
    assert len(everything) == len(set(everything))
    assert set(created) | {other} <= set(everything)
    for view in api.ok(DEF_LIST, {"tags": [tag]})["items"]:
        assert view["compiled"]["forwardEdges"] and view["status"] == "active"


def test_lists_default_to_pages_of_fifty(api):
    tag = uid("fifty")
    body = human_definition(uid("fifty"), tags=[tag])
    api.create(body)
    for _ in range(50):
        api.create(human_definition(uid("fifty"), tags=[tag]))
    first = api.ok(DEF_LIST, {"tags": [tag]})
    assert len(first["items"]) == 50 and first["hasMore"]
    assert len(api.ok(DEF_LIST, {"tags": [tag], "cursor": first["nextCursor"]})["items"]) == 1
    ids = [api.dispatch(body["definitionId"]) for _ in range(51)]
    page = api.ok(EXEC_LIST, {"definitionId": body["definitionId"]})
    assert [e["executionId"] for e in page["items"]] == ids[:50] and page["hasMore"]


@pytest.mark.parametrize(
    "request_data",
    [
        {"pageSize": 0},
        {"pageSize": 101},
        {"pageSize": "2"},
        {"cursor": "not-a-cursor"},
        {"cursor": 5},
        {"status": "deleted"},
        {"tags": "x"},
        {"scope": {"level": "planet"}},
    ],
)
def test_list_definitions_rejects_bad_arguments(api, request_data):
    api.err(DEF_LIST, request_data, "INVALID_ARGUMENT")


def test_list_definitions_by_scope(api):
    org = uid("org")
    scoped = api.create(human_definition(uid("byscope"), scope={"level": "organization", "organizationId": org}))
    items = api.ok(DEF_LIST, {"scope": {"level": "organization", "organizationId": org}})["items"]
    assert [d["definitionId"] for d in items] == [scoped["definitionId"]]


# ================================================================ definitions: update, delete


def test_update_checks_if_version_and_bumps_the_version(api):
    body = human_definition(uid("upd"))
    created = api.create(body)
    definition_id = body["definitionId"]
    running, step = waiting_human(api, definition_id)

    v2 = human_definition(definition_id)
    v2["nodes"][1]["nodeId"] = "published"  # approve now leads somewhere else
    v2["edges"][0] = {"to": {"nodeId": "published", "kind": "node"}, "from": "review", "on": "approve"}
    message = api.err(DEF_UPDATE, dict(v2, ifVersion=2), "FAILED_PRECONDITION")
    assert "ifVersion" in message or "version" in message
    api.err(DEF_UPDATE, v2, "INVALID_ARGUMENT")  # ifVersion is required
    api.err(DEF_UPDATE, dict(v2, ifVersion="1"), "INVALID_ARGUMENT")
    api.err(DEF_UPDATE, dict(v2, ifVersion=1, definitionId=uid("nobody")), "NOT_FOUND")
    lint = dict(v2, ifVersion=1, edges=v2["edges"][:1])
    assert "APPROVAL_HUMAN_NODE_REQUIRES_REJECT_PATH" in api.err(DEF_UPDATE, lint, "INVALID_ARGUMENT")
    assert api.ok(DEF_GET, {"definitionId": definition_id})["version"] == 1

    updated = api.ok(DEF_UPDATE, dict(v2, ifVersion=1))
    assert updated["version"] == 2 and updated["status"] == "active"
    assert json.dumps(updated["edges"]) == json.dumps(v2["edges"])
    assert "ifVersion" not in updated
    assert updated["createdAt"] == created["createdAt"] and updated["updatedAt"] >= created["updatedAt"]
    assert api.ok(DEF_GET, {"definitionId": definition_id}) == updated
    api.err(DEF_UPDATE, dict(v2, ifVersion=1), "FAILED_PRECONDITION")  # stale now

    # the running execution keeps version 1 and its graph
    assert api.execution(running)["definitionVersion"] == 1
    api.ok(DECIDE, {"executionId": running, "stepId": step["stepId"], "reviewerId": "ann", "decision": "approve"})
    done = api.execution(running)
    assert done["definitionVersion"] == 1 and done["status"] == "completed"
    assert [s["nodeId"] for s in children(done, step["stepId"])] == ["approved"]
    # a new dispatch runs version 2
    fresh, fresh_step = waiting_human(api, definition_id)
    assert api.execution(fresh)["definitionVersion"] == 2
    api.ok(DECIDE, {"executionId": fresh, "stepId": fresh_step["stepId"], "reviewerId": "ann", "decision": "approve"})
    assert [s["nodeId"] for s in children(api.execution(fresh), fresh_step["stepId"])] == ["published"]
    events = events_of(api, fresh, "execution.dispatched")
    assert events[0]["data"]["definitionVersion"] == 2


def test_delete_tombstones_and_blocks_dispatch(api):
    tag = uid("deltag")
    body = human_definition(uid("del"), tags=[tag])
    api.create(body)
    definition_id = body["definitionId"]
    running, _ = waiting_human(api, definition_id)
    message = api.err(DEF_DELETE, {"definitionId": definition_id}, "FAILED_PRECONDITION")
    assert "running" in message
    assert api.ok(DEF_GET, {"definitionId": definition_id})["status"] == "active"

    api.ok(EXEC_CANCEL, {"executionId": running})
    assert api.ok(DEF_DELETE, {"definitionId": definition_id}) == {"deleted": True}
    view = api.ok(DEF_GET, {"definitionId": definition_id})
    assert view["status"] == "tombstoned"
    assert api.ok(DEF_LIST, {"tags": [tag]})["items"] == []  # lists show active definitions by default
    tomb = api.ok(DEF_LIST, {"status": "tombstoned", "tags": [tag]})["items"]
    assert [d["definitionId"] for d in tomb] == [definition_id] and tomb[0] == view
    assert "tombstoned" in api.err(DISPATCH, {"definitionId": definition_id}, "FAILED_PRECONDITION")
    api.err(DEF_UPDATE, dict(body, ifVersion=1), "FAILED_PRECONDITION")
    api.err(DEF_CREATE, body, "ALREADY_EXISTS")  # the id stays taken
    api.err(DEF_DELETE, {"definitionId": uid("nobody")}, "NOT_FOUND")
    api.err(DEF_DELETE, {}, "INVALID_ARGUMENT")
    # the cancelled execution is still readable
    assert api.execution(running)["status"] == "cancelled"


# ================================================================ executions: dispatch


def test_dispatch_defaults_and_idempotency(api, human_def):
    result = api.ok(DISPATCH, {"definitionId": human_def})
    assert set(result) == {"executionId", "correlationId", "deduplicated"}
    assert result["correlationId"] == result["executionId"] and result["deduplicated"] is False
    execution = api.execution(result["executionId"])
    assert execution["correlationId"] == result["executionId"] and execution["idempotencyKey"] is None

    key = uid("idem")
    first = api.ok(
        DISPATCH,
        {"definitionId": human_def, "idempotencyKey": key, "correlationId": "corr-1", "triggerContext": {"doc": "d-1"}},
    )
    assert first["deduplicated"] is False and first["correlationId"] == "corr-1"
    before = last_seq(api, first["executionId"])
    again = api.ok(DISPATCH, {"definitionId": human_def, "idempotencyKey": key, "correlationId": "corr-2"})
    assert again == {"executionId": first["executionId"], "correlationId": "corr-1", "deduplicated": True}
    # the suppressed duplicate is internal only: no new external event, no new execution
    assert last_seq(api, first["executionId"]) == before
    listed = api.ok(EXEC_LIST, {"definitionId": human_def, "pageSize": 100})["items"]
    assert sum(1 for e in listed if e["idempotencyKey"] == key) == 1
    other = api.ok(DISPATCH, {"definitionId": human_def, "idempotencyKey": uid("idem")})
    assert other["executionId"] != first["executionId"] and other["deduplicated"] is False
    for event in api.events(first["executionId"]):
        assert event["correlationId"] == "corr-1"


def test_dispatch_scope_must_match(api):
    org = uid("org")
    body = human_definition(uid("scoped"), scope={"level": "organization", "organizationId": org})
    api.create(body)
    assert "organizationId" in api.err(
        DISPATCH, {"definitionId": body["definitionId"], "organizationId": "other-org"}, "FAILED_PRECONDITION"
    )
    api.dispatch(body["definitionId"], organizationId=org)
    api.dispatch(body["definitionId"])  # defaults to the definition's scope
    doc_body = human_definition(
        uid("docscoped"), scope={"level": "document", "organizationId": org, "documentId": "doc-7"}
    )
    api.create(doc_body)
    assert "documentId" in api.err(
        DISPATCH, {"definitionId": doc_body["definitionId"], "documentId": "doc-8"}, "FAILED_PRECONDITION"
    )
    api.dispatch(doc_body["definitionId"], organizationId=org, documentId="doc-7")


def test_dispatch_without_scope_ids_stores_the_definitions_scope_and_given_ids_are_kept(tmp_path):
    """Semantics §7: a scoped definition's ids are the dispatch defaults; given ids are stored
    as given. No ExecutionView field shows them (api-v2 §2.8), so the rows are read, on a
    server of its own (DuckDB admits no reader while it serves)."""
    org, other_org = uid("org"), uid("org")
    expected: dict[str, tuple] = {}
    srv = serve_fresh(tmp_path, "scope")
    try:
        with srv.client(srv.creds_a) as client:
            api = Api(client)

            def create(prefix, scope):
                return api.create(human_definition(uid(prefix), scope=scope))["definitionId"]

            workspace = create("ws-scoped", {"level": "apiKey"})
            organization = create("org-scoped", {"level": "organization", "organizationId": org})
            document = create("doc-scoped", {"level": "document", "organizationId": org, "documentId": "doc-7"})
            cases = [
                (workspace, {}, (None, None)),
                (workspace, {"organizationId": other_org, "documentId": "doc-1"}, (other_org, "doc-1")),
                (organization, {}, (org, None)),
                (organization, {"organizationId": org, "documentId": "doc-3"}, (org, "doc-3")),
                (document, {}, (org, "doc-7")),
                (document, {"organizationId": org}, (org, "doc-7")),
                (document, {"documentId": "doc-7"}, (org, "doc-7")),
            ]
            for definition_id, ids, scope in cases:
                expected[api.dispatch(definition_id, **ids)] = scope
    finally:
        srv.stop()
    rows = stored(srv.db, "SELECT execution_id, organization_id, document_id FROM executions")
    assert {execution_id: (o, d) for execution_id, o, d in rows} == expected


@pytest.mark.parametrize(
    "request_data, code",
    [
        ({"definitionId": "no-such-definition"}, "NOT_FOUND"),
        ({}, "INVALID_ARGUMENT"),
        ({"definitionId": ""}, "INVALID_ARGUMENT"),
        ({"definitionId": "x", "idempotencyKey": ""}, "INVALID_ARGUMENT"),
        ({"definitionId": "x", "triggerContext": [1]}, "INVALID_ARGUMENT"),
        ({"definitionId": "x", "webhookUrl": "https://hooks.example.com/x"}, "INVALID_ARGUMENT"),
        ({"definitionId": "x", "webhookUrl": "http://hooks.example.com/x", "webhookSecret": "s"}, "INVALID_ARGUMENT"),
        ({"definitionId": "x", "correlationId": "c" * 257}, "INVALID_ARGUMENT"),
    ],
)
def test_dispatch_errors(api, request_data, code):
    api.err(DISPATCH, request_data, code)


# ================================================================ executions: get, list, cancel


def test_get_execution_view(api, human_def):
    execution_id = api.dispatch(human_def, correlationId="c-view", idempotencyKey=uid("k"))
    view = api.execution(execution_id)
    assert set(view) == {
        "executionId",
        "status",
        "startedAt",
        "completedAt",
        "cancelledAt",
        "definitionId",
        "definitionVersion",
        "correlationId",
        "idempotencyKey",
        "failureReason",
        "steps",
    }
    assert view["status"] == "running" and view["definitionId"] == human_def and view["definitionVersion"] == 1
    assert isinstance(view["startedAt"], int) and view["completedAt"] is None and view["cancelledAt"] is None
    (step,) = view["steps"]
    assert set(step) == {
        "stepId",
        "nodeId",
        "nodeType",
        "status",
        "groupId",
        "startedAt",
        "completedAt",
        "output",
        "error",
        "input",
        "iteration",
        "reviewerIds",
    }
    assert step["nodeId"] == "review" and step["nodeType"] == "human" and step["status"] == "waiting"
    assert step["stepId"].startswith("step_review_")
    assert step["input"] == {} and step["iteration"] == 1 and step["reviewerIds"] == ["ann", "bob"]
    assert step["output"] == {} and step["error"] is None and step["groupId"] is None
    api.err(EXEC_GET, {"executionId": "ex_nope"}, "NOT_FOUND")
    api.err(EXEC_GET, {}, "INVALID_ARGUMENT")


def test_step_input_and_iteration_in_a_loop(api):
    body = examples.load("parallel-review")
    body["definitionId"] = uid("loop")
    api.create(body)
    execution_id = api.dispatch(body["definitionId"])
    steps = api.execution(execution_id)["steps"]
    legal = next(s for s in steps if s["nodeId"] == "legal-review")
    brand = next(s for s in steps if s["nodeId"] == "brand-review")
    assert legal["groupId"] == "review-board" and legal["reviewerIds"] == ["alice@legal"]
    assert brand["reviewerIds"] == ["bob@brand"]
    api.ok(
        DECIDE,
        {
            "executionId": execution_id,
            "stepId": legal["stepId"],
            "reviewerId": "alice@legal",
            "decision": "reject",
            "reason": "missing disclaimer",
        },
    )
    api.ok(
        DECIDE,
        {"executionId": execution_id, "stepId": brand["stepId"], "reviewerId": "bob@brand", "decision": "approve"},
    )
    view = api.execution(execution_id)
    drafts = [s for s in view["steps"] if s["nodeId"] == "draft"]
    assert [d["iteration"] for d in drafts] == [1, 2]
    retry = drafts[1]["input"]
    assert retry["iteration"] == 2 and retry["loopId"] == "loop_review-board__to__draft"
    (attempt,) = retry["previousAttempts"]
    assert attempt["iteration"] == 1 and attempt["rejectedBy"] == "alice@legal"
    assert attempt["rejectionReason"] == "missing disclaimer" and attempt["rejectorMandatory"] is True
    assert {s["iteration"] for s in view["steps"] if s["nodeId"] == "legal-review"} == {1, 2}
    started = events_of(api, execution_id, "loop.iteration-started")
    assert [e["data"]["iteration"] for e in started] == [2]


def test_list_executions_filters_and_pages(api):
    body = human_definition(uid("listex"))
    api.create(body)
    definition_id = body["definitionId"]
    ids = [api.dispatch(definition_id) for _ in range(5)]
    api.ok(EXEC_CANCEL, {"executionId": ids[1]})
    seen, cursor = [], None
    while True:
        request = {"definitionId": definition_id, "pageSize": 2} | ({"cursor": cursor} if cursor else {})
        page = api.ok(EXEC_LIST, request)
        assert set(page) == {"items", "nextCursor", "hasMore"}
        for item in page["items"]:
            assert item["steps"] == [] and item["definitionId"] == definition_id
        seen.extend(i["executionId"] for i in page["items"])
        if not page["hasMore"]:
            assert page["nextCursor"] is None
            break
        cursor = page["nextCursor"]
    assert seen == ids
    cancelled = api.ok(EXEC_LIST, {"definitionId": definition_id, "status": "cancelled"})["items"]
    assert [e["executionId"] for e in cancelled] == [ids[1]]
    assert cancelled[0]["cancelledAt"] is not None
    running = api.ok(EXEC_LIST, {"definitionId": definition_id, "status": "running"})["items"]
    assert [e["executionId"] for e in running] == [ids[0]] + ids[2:]
    item = running[0]
    assert set(item) == set(api.execution(ids[0]))
    assert item | {"steps": []} == api.execution(ids[0]) | {"steps": []}
    for bad in ({"status": "paused"}, {"pageSize": 0}, {"pageSize": 101}, {"cursor": "zzz"}):
        api.err(EXEC_LIST, bad, "INVALID_ARGUMENT")
    assert api.ok(EXEC_LIST, {"definitionId": uid("nothing")}) == {"items": [], "nextCursor": None, "hasMore": False}


def test_cancel_execution(api, human_def):
    execution_id, step = waiting_human(api, human_def)
    result = api.ok(EXEC_CANCEL, {"executionId": execution_id, "reason": "no longer needed"})
    assert result == {"cancelled": True, "executionId": execution_id}
    view = api.execution(execution_id)
    assert view["status"] == "cancelled" and isinstance(view["cancelledAt"], int)
    assert all(s["status"] == "cancelled" for s in view["steps"])
    cancelled = events_of(api, execution_id, "execution.cancelled")
    assert len(cancelled) == 1 and cancelled[0]["data"]["reason"] == "no longer needed"
    assert cancelled[0]["stepId"] is None
    assert events_of(api, execution_id, "step.cancelled", step["stepId"])
    assert "cancelled" in api.err(EXEC_CANCEL, {"executionId": execution_id}, "FAILED_PRECONDITION")
    # commands on an ended execution are refused
    api.err(
        DECIDE,
        {"executionId": execution_id, "stepId": step["stepId"], "reviewerId": "ann", "decision": "approve"},
        "FAILED_PRECONDITION",
    )
    # a completed execution cannot be cancelled either
    done, done_step = waiting_human(api, human_def)
    api.ok(DECIDE, {"executionId": done, "stepId": done_step["stepId"], "reviewerId": "ann", "decision": "approve"})
    assert api.execution(done)["status"] == "completed"
    api.err(EXEC_CANCEL, {"executionId": done}, "FAILED_PRECONDITION")
    api.err(EXEC_CANCEL, {"executionId": "ex_unknown"}, "NOT_FOUND")
    api.err(EXEC_CANCEL, {"executionId": done, "reason": "r" * 2001}, "INVALID_ARGUMENT")


# ================================================================ executions: getEvents


def test_get_events_paging_and_cursor(api, human_def):
    execution_id, step = waiting_human(api, human_def)
    api.ok(DECIDE, {"executionId": execution_id, "stepId": step["stepId"], "reviewerId": "bob", "decision": "approve"})
    api.ok(DECIDE, {"executionId": execution_id, "stepId": step["stepId"], "reviewerId": "ann", "decision": "approve"})
    full = api.ok(EVENTS, {"executionId": execution_id})  # defaults: sinceSeq 0, pageSize 100
    assert set(full) == {"executionId", "events", "nextCursor", "hasMore"}
    assert full["executionId"] == execution_id and full["hasMore"] is False
    events = full["events"]
    assert full["nextCursor"] == events[-1]["seq"]
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(set(seqs)) and seqs[0] >= 1
    assert max(seqs) > len(seqs)  # internal events consumed numbers: the visible stream has gaps
    assert {e["type"] for e in events} <= EXTERNAL_TYPES
    assert [e["type"] for e in events] == [
        "execution.dispatched",
        "step.awaiting-approval",
        "step.completed",
        "step.completed",
        "execution.completed",
    ]
    for event in events:
        assert set(event) == {"eventId", "seq", "type", "stepId", "timestamp", "correlationId", "data"}
        assert isinstance(event["timestamp"], int) and event["correlationId"] == execution_id
    assert len({e["eventId"] for e in events}) == len(events)
    awaiting = events[1]
    assert awaiting["stepId"] == step["stepId"]
    assert awaiting["data"]["waitingForReviewers"] == 2 and awaiting["data"]["mandatoryCount"] == 1
    assert awaiting["data"]["resumeKey"].startswith("rk_") and len(awaiting["data"]["resumeKey"]) == 19
    assert events[2]["data"] == {"nodeType": "human", "decision": "approve", "aggregatorStatus": "resolved"}
    assert events[0]["data"]["rootStepIds"] == [step["stepId"]]

    # pageSize 1, following nextCursor, gives the same stream one event at a time
    paged, since = [], 0
    for _ in range(len(events) + 1):
        page = api.ok(EVENTS, {"executionId": execution_id, "sinceSeq": since, "pageSize": 1})
        assert len(page["events"]) <= 1
        paged.extend(page["events"])
        assert page["nextCursor"] == (page["events"][-1]["seq"] if page["events"] else since)
        since = page["nextCursor"]
        if not page["hasMore"]:
            break
    assert paged == events
    # sinceSeq inside a gap and past the end
    middle = api.ok(EVENTS, {"executionId": execution_id, "sinceSeq": events[1]["seq"] + 1})
    assert middle["events"] == events[2:]
    end = api.ok(EVENTS, {"executionId": execution_id, "sinceSeq": 10_000})
    assert end == {"executionId": execution_id, "events": [], "nextCursor": 10_000, "hasMore": False}
    two = api.ok(EVENTS, {"executionId": execution_id, "pageSize": 2})
    assert two["events"] == events[:2] and two["hasMore"] is True and two["nextCursor"] == events[1]["seq"]
    assert api.ok(EVENTS, {"executionId": execution_id, "pageSize": 500})["events"] == events


def test_get_events_without_page_size_returns_a_hundred_then_the_rest_from_next_cursor(api):
    # A root fanning out to 99 leaves: dispatched, 100 step.completed, execution.completed.
    leaves = [f"leaf-{i:02d}" for i in range(99)]
    body = {
        "definitionId": uid("hundred"),
        "name": "More than a hundred external events",
        "nodes": [{"nodeId": n, "type": "agent", "config": {"agentId": n}} for n in ["root", *leaves]],
        "edges": [{"from": "root", "to": leaf, "on": "always"} for leaf in leaves],
    }
    api.create(body)
    execution_id = api.dispatch(body["definitionId"])
    wait_for(lambda: api.execution(execution_id)["status"] == "completed", what="the fan-out to finish")
    everything = api.ok(EVENTS, {"executionId": execution_id, "pageSize": 500})["events"]
    assert len(everything) == 102

    first = api.ok(EVENTS, {"executionId": execution_id})  # no pageSize: default 100 (api-v2 §4.9)
    assert len(first["events"]) == 100 and first["hasMore"] is True
    assert first["nextCursor"] == first["events"][-1]["seq"]
    rest = api.ok(EVENTS, {"executionId": execution_id, "sinceSeq": first["nextCursor"]})
    assert len(rest["events"]) == 2 and rest["hasMore"] is False
    assert rest["nextCursor"] == rest["events"][-1]["seq"]
    assert first["events"] + rest["events"] == everything  # no gap, no duplicate
    seqs = [e["seq"] for e in everything]
    assert seqs == sorted(set(seqs))


@pytest.mark.parametrize(
    "request_data",
    [
        {"pageSize": 0},
        {"pageSize": 501},
        {"pageSize": 1.5},
        {"sinceSeq": -1},
        {"sinceSeq": "3"},
        {"cursor": 1},
    ],
)
def test_get_events_rejects_bad_arguments(api, human_def, request_data):
    execution_id = api.dispatch(human_def)
    api.err(EVENTS, {"executionId": execution_id, **request_data}, "INVALID_ARGUMENT")


def test_get_events_unknown_execution(api):
    api.err(EVENTS, {"executionId": "ex_missing"}, "NOT_FOUND")
    api.err(EVENTS, {}, "INVALID_ARGUMENT")


# ================================================================ steps/resolve


def resolve(api, execution_id, step_id, action, actor="operator-1", **extra):
    return api.post(
        RESOLVE, {"executionId": execution_id, "stepId": step_id, "action": action, "actorId": actor, **extra}
    )


def test_force_approve_human_step(api, human_def):
    execution_id, step = waiting_human(api, human_def)
    before = last_seq(api, execution_id)
    result = api.ok(
        RESOLVE,
        {
            "executionId": execution_id,
            "stepId": step["stepId"],
            "action": "force-approve",
            "actorId": "operator-1",
            "reason": "urgent",
            "output": {"decision": "reject", "approved": False, "note": "kept"},
        },
    )
    assert result == {
        "resolved": True,
        "executionId": execution_id,
        "stepId": step["stepId"],
        "action": "force-approve",
    }
    view = api.execution(execution_id)
    done = next(s for s in view["steps"] if s["stepId"] == step["stepId"])
    assert done["status"] == "completed"
    output = done["output"]
    assert output["decision"] == "approve" and output["approved"] is True and output["note"] == "kept"
    reply = output["approvalReply"]
    assert (reply["actorId"], reply["action"], reply["reason"]) == ("operator-1", "force-approve", "urgent")
    assert "rejectedBy" not in output
    assert [s["nodeId"] for s in children(view, step["stepId"])] == ["approved"]
    assert view["status"] == "completed"
    completed = events_of(api, execution_id, "step.completed", step["stepId"])
    assert len(completed) == 1 and completed[0]["data"]["decision"] == "approve"
    # the internal step.overridden audit event took a seq number before the step completed
    assert completed[0]["seq"] >= before + 2
    assert not [e for e in api.events(execution_id) if e["type"] == "step.overridden"]


def test_force_reject_human_step(api, human_def):
    execution_id, step = waiting_human(api, human_def)
    before = last_seq(api, execution_id)
    api.ok(
        RESOLVE,
        {"executionId": execution_id, "stepId": step["stepId"], "action": "force-reject", "actorId": "operator-2"},
    )
    view = api.execution(execution_id)
    done = next(s for s in view["steps"] if s["stepId"] == step["stepId"])
    assert done["status"] == "completed" and done["output"]["decision"] == "reject"
    assert done["output"]["approved"] is False
    assert done["output"]["approvalReply"]["actorId"] == "operator-2"
    assert done["output"]["approvalReply"]["reason"] is None
    assert "rejectedBy" not in done["output"] and "rejectorMandatory" not in done["output"]
    assert [s["nodeId"] for s in children(view, step["stepId"])] == ["rejected"]
    completed = events_of(api, execution_id, "step.completed", step["stepId"])
    assert completed[0]["seq"] >= before + 2 and completed[0]["data"]["aggregatorStatus"] == "rejected"


def test_reviewer_approve_and_reject(api, human_def):
    execution_id, step = waiting_human(api, human_def)
    # an actor not in the reviewer list is refused and nothing changes
    denied = resolve(api, execution_id, step["stepId"], "reviewer-approve", actor="mallory")
    assert "mallory" in expect_error(denied, "PERMISSION_DENIED")
    expect_error(resolve(api, execution_id, step["stepId"], "reviewer-reject", actor="mallory"), "PERMISSION_DENIED")
    assert api.step(execution_id, "review")["status"] == "waiting"
    # bob is a listed (non-mandatory) reviewer: a reviewer action still completes the step at once
    assert resolve(api, execution_id, step["stepId"], "reviewer-approve", actor="bob").status_code == 200
    done = api.step(execution_id, "review")
    assert done["status"] == "completed" and done["output"]["decision"] == "approve"
    assert done["output"]["approvalReply"]["action"] == "reviewer-approve"
    assert done["output"]["approvalReply"]["actorId"] == "bob"
    assert api.step(execution_id, "approved")["status"] == "completed"

    execution_id, step = waiting_human(api, human_def)
    assert (
        resolve(api, execution_id, step["stepId"], "reviewer-reject", actor="ann", reason="not ready").status_code
        == 200
    )
    done = api.step(execution_id, "review")
    assert done["output"]["decision"] == "reject" and done["output"]["approvalReply"]["reason"] == "not ready"
    assert "rejectorMandatory" not in done["output"]
    assert api.step(execution_id, "rejected")["status"] == "completed"


def test_force_complete_and_force_fail_on_a_running_step(api, external_def):
    execution_id = api.dispatch(external_def)
    work = api.step(execution_id, "work")
    assert work["status"] == "running"
    before = last_seq(api, execution_id)
    sent = {"result": {"pages": 3}, "decision": "approve"}
    api.ok(
        RESOLVE,
        {
            "executionId": execution_id,
            "stepId": work["stepId"],
            "action": "force-complete",
            "actorId": "ops",
            "output": sent,
        },
    )
    view = api.execution(execution_id)
    done = next(s for s in view["steps"] if s["stepId"] == work["stepId"])
    assert done["status"] == "completed" and done["output"] == sent  # stored exactly
    assert [s["nodeId"] for s in children(view, work["stepId"])] == ["after"]
    assert view["status"] == "completed"
    assert events_of(api, execution_id, "step.completed", work["stepId"])[0]["seq"] >= before + 2

    execution_id = api.dispatch(external_def)
    work = api.step(execution_id, "work")
    api.ok(
        RESOLVE,
        {
            "executionId": execution_id,
            "stepId": work["stepId"],
            "action": "force-fail",
            "actorId": "ops",
            "reason": "gave up",
            "output": {"partial": True},
        },
    )
    view = api.execution(execution_id)
    failed = next(s for s in view["steps"] if s["stepId"] == work["stepId"])
    assert failed["status"] == "failed" and failed["output"] == {"partial": True}
    assert failed["error"]["code"] and failed["error"]["message"] == "gave up"
    # the `always` edge fires on a failed step, which routes the failure: the execution completes
    assert [s["nodeId"] for s in children(view, work["stepId"])] == ["after"]
    assert view["status"] == "completed"
    (event,) = events_of(api, execution_id, "step.failed", work["stepId"])
    assert event["data"]["error"] == failed["error"]


def test_force_complete_and_force_fail_on_a_waiting_step(api, human_def):
    execution_id, step = waiting_human(api, human_def)
    sent = {"decision": "reject", "why": "operator decided"}
    api.ok(
        RESOLVE,
        {
            "executionId": execution_id,
            "stepId": step["stepId"],
            "action": "force-complete",
            "actorId": "ops",
            "output": sent,
        },
    )
    view = api.execution(execution_id)
    done = next(s for s in view["steps"] if s["stepId"] == step["stepId"])
    assert done["status"] == "completed" and done["output"] == sent
    assert [s["nodeId"] for s in children(view, step["stepId"])] == ["rejected"]

    execution_id, step = waiting_human(api, human_def)
    api.ok(
        RESOLVE, {"executionId": execution_id, "stepId": step["stepId"], "action": "force-complete", "actorId": "ops"}
    )
    assert api.step(execution_id, "review")["output"] == {}

    execution_id, step = waiting_human(api, human_def)
    api.ok(RESOLVE, {"executionId": execution_id, "stepId": step["stepId"], "action": "force-fail", "actorId": "ops"})
    view = api.execution(execution_id)
    failed = view["steps"][0]
    assert failed["status"] == "failed" and failed["output"] == {}
    assert children(view, step["stepId"]) == []  # no approve/reject edge fires on a failure
    assert view["status"] == "failed" and view["failureReason"] == "step-failed:review"
    (ended,) = events_of(api, execution_id, "execution.failed")
    assert ended["data"]["failureReason"] == "step-failed:review"

    # a blocking agent step waiting for resolutions can be force-completed too
    body = blocking_agent_definition(uid("gate"))
    api.create(body)
    execution_id = api.dispatch(body["definitionId"])
    gate = api.step(execution_id, "gate")
    assert gate["status"] == "waiting"
    api.ok(
        RESOLVE,
        {
            "executionId": execution_id,
            "stepId": gate["stepId"],
            "action": "force-complete",
            "actorId": "ops",
            "output": {"decision": "approve"},
        },
    )
    assert api.step(execution_id, "pass")["status"] == "completed"


def test_resolve_refusals(api, human_def, external_def):
    execution_id, step = waiting_human(api, human_def)
    # unknown execution / step
    assert "ex_missing" in expect(resolve(api, "ex_missing", step["stepId"], "force-approve"), "NOT_FOUND")
    expect(resolve(api, execution_id, "step_missing", "force-approve"), "NOT_FOUND")
    # bad arguments
    for extra in (
        {"action": "approve"},
        {"actorId": ""},
        {"actorId": "a" * 257},
        {"reason": "r" * 2001},
        {"output": "done"},
        {"note": 1},
    ):
        payload = {
            "executionId": execution_id,
            "stepId": step["stepId"],
            "action": "force-approve",
            "actorId": "ops",
            **extra,
        }
        api.err(RESOLVE, payload, "INVALID_ARGUMENT")
    payload = {"executionId": execution_id, "stepId": step["stepId"], "actorId": "ops"}
    api.err(RESOLVE, payload, "INVALID_ARGUMENT")  # no action
    assert api.step(execution_id, "review")["status"] == "waiting"
    # a terminal step cannot be resolved, by any action
    api.ok(
        RESOLVE, {"executionId": execution_id, "stepId": step["stepId"], "action": "force-approve", "actorId": "ops"}
    )
    for action in ("force-approve", "force-reject", "force-complete", "force-fail"):
        expect(resolve(api, execution_id, step["stepId"], action), "FAILED_PRECONDITION")
    expect(resolve(api, execution_id, step["stepId"], "reviewer-approve", actor="ann"), "FAILED_PRECONDITION")
    # step terminal is checked before reviewer membership
    expect(resolve(api, execution_id, step["stepId"], "reviewer-approve", actor="mallory"), "FAILED_PRECONDITION")

    # human-only actions on an agent step
    execution_id = api.dispatch(external_def)
    work = api.step(execution_id, "work")
    for action in ("force-approve", "force-reject", "reviewer-approve", "reviewer-reject"):
        message = expect(resolve(api, execution_id, work["stepId"], action), "FAILED_PRECONDITION")
        assert "human" in message
    assert api.step(execution_id, "work")["status"] == "running"


def expect(resp, code):
    return expect_error(resp, code)


def test_every_resolve_action_on_every_state(api, human_def, external_def):
    """The api-v2 §3 table: which (action, step type, step state) pairs are allowed."""
    gate_def = api.create(blocking_agent_definition(uid("gate")))["definitionId"]
    allowed = {
        ("human", "waiting"): {
            "force-approve",
            "force-reject",
            "force-complete",
            "force-fail",
            "reviewer-approve",
            "reviewer-reject",
        },
        ("agent", "running"): {"force-complete", "force-fail"},
        ("blocking agent", "waiting"): {"force-complete", "force-fail"},
    }
    actions = ["force-approve", "force-reject", "force-complete", "force-fail", "reviewer-approve", "reviewer-reject"]
    for (kind, state), ok_actions in allowed.items():
        for action in actions:
            if kind == "human":
                execution_id, step = waiting_human(api, human_def)
            elif kind == "agent":
                execution_id = api.dispatch(external_def)
                step = api.step(execution_id, "work")
            else:
                execution_id = api.dispatch(gate_def)
                step = api.step(execution_id, "gate")
            assert step["status"] == state
            resp = resolve(api, execution_id, step["stepId"], action, actor="ann")
            if action in ok_actions:
                assert resp.status_code == 200, resp.text
                final = next(s for s in api.execution(execution_id)["steps"] if s["stepId"] == step["stepId"])
                assert final["status"] == ("failed" if action == "force-fail" else "completed")
            else:
                expect(resp, "FAILED_PRECONDITION")
                api.ok(EXEC_CANCEL, {"executionId": execution_id})


# ================================================================ steps/recordReviewerDecision


def decide(api, execution_id, step_id, reviewer, decision="approve", **extra):
    return api.ok(
        DECIDE, {"executionId": execution_id, "stepId": step_id, "reviewerId": reviewer, "decision": decision, **extra}
    )


def test_reviewer_decisions(api, human_def):
    execution_id, step = waiting_human(api, human_def)
    sid = step["stepId"]
    assert decide(api, execution_id, sid, "bob") == {
        "recorded": True,
        "aggregatorStatus": "pending",
        "resumeScheduled": False,
    }
    assert decide(api, execution_id, sid, "bob", "reject") == {
        "recorded": False,
        "aggregatorStatus": "pending",
        "resumeScheduled": False,
        "rejectionReason": "idempotent",
    }
    assert decide(api, execution_id, sid, "zed") == {
        "recorded": False,
        "aggregatorStatus": "pending",
        "resumeScheduled": False,
        "rejectionReason": "unknown-responder",
    }
    assert api.step(execution_id, "review")["status"] == "waiting"
    result = decide(api, execution_id, sid, "ann", reason="fine")
    assert result == {"recorded": True, "aggregatorStatus": "resolved", "resumeScheduled": True}
    done = api.step(execution_id, "review")
    output = done["output"]
    assert done["status"] == "completed" and output["decision"] == "approve" and output["approved"] is True
    assert output["approveCount"] == 2 and output["rejectCount"] == 0 and output["totalResponses"] == 2
    assert output["mandatoryCount"] == 1 and output["mandatoryApproveCount"] == 1
    assert output["reviewerIds"] == ["ann", "bob"] and output["aggregatorStatus"] == "resolved"
    assert output["resumeKey"] == events_of(api, execution_id, "step.awaiting-approval")[0]["data"]["resumeKey"]
    # replays after the step ended are still idempotent; a new reviewer decision is refused
    assert decide(api, execution_id, sid, "ann") == {
        "recorded": False,
        "aggregatorStatus": "resolved",
        "resumeScheduled": False,
        "rejectionReason": "idempotent",
    }
    api.err(
        DECIDE,
        {"executionId": execution_id, "stepId": sid, "reviewerId": "zed", "decision": "approve"},
        "FAILED_PRECONDITION",
    )
    assert api.execution(execution_id)["status"] == "completed"


def test_mandatory_rejection(api, human_def):
    execution_id, step = waiting_human(api, human_def)
    result = decide(api, execution_id, step["stepId"], "ann", "reject", reason="wrong numbers")
    assert result == {"recorded": True, "aggregatorStatus": "rejected", "resumeScheduled": True}
    output = api.step(execution_id, "review")["output"]
    assert output["decision"] == "reject" and output["rejectedBy"] == "ann"
    assert output["rejectorMandatory"] is True and output["rejectionReason"] == "wrong numbers"
    assert api.step(execution_id, "rejected")["status"] == "completed"
    # a non-mandatory reviewer's reject also ends the step
    execution_id, step = waiting_human(api, human_def)
    decide(api, execution_id, step["stepId"], "bob", "reject")
    output = api.step(execution_id, "review")["output"]
    assert output["rejectedBy"] == "bob" and output["rejectorMandatory"] is False


def test_reviewer_decision_refusals(api, human_def, external_def):
    execution_id, step = waiting_human(api, human_def)
    base = {"executionId": execution_id, "stepId": step["stepId"], "reviewerId": "ann", "decision": "approve"}
    api.err(DECIDE, base | {"executionId": "ex_missing"}, "NOT_FOUND")
    api.err(DECIDE, base | {"stepId": "step_missing"}, "NOT_FOUND")
    for bad in ({"decision": "maybe"}, {"reviewerId": ""}, {"reason": "r" * 2001}, {"decision": None}):
        api.err(DECIDE, base | bad, "INVALID_ARGUMENT")
    api.err(DECIDE, {k: v for k, v in base.items() if k != "decision"}, "INVALID_ARGUMENT")
    assert api.step(execution_id, "review")["status"] == "waiting"
    # not a human step
    agent_execution = api.dispatch(external_def)
    work = api.step(agent_execution, "work")
    message = api.err(
        DECIDE,
        {"executionId": agent_execution, "stepId": work["stepId"], "reviewerId": "ann", "decision": "approve"},
        "FAILED_PRECONDITION",
    )
    assert "human" in message


# ================================================================ steps/recordAgentResolution


def resolution(api, execution_id, step_id, resolution_id, status="success", **extra):
    return {"executionId": execution_id, "stepId": step_id, "resolutionId": resolution_id, "status": status, **extra}


def test_agent_resolutions_min_resolved(api, quorum_def):
    execution_id = api.dispatch(quorum_def)
    panel = api.step(execution_id, "safety-panel")
    assert panel["status"] == "waiting"
    (awaiting,) = events_of(api, execution_id, "step.awaiting-approval", panel["stepId"])
    assert awaiting["data"]["waitingForReviewers"] == 2 and awaiting["data"]["mandatoryCount"] == 2
    sid = panel["stepId"]
    first = api.ok(AGENT_RESOLUTION, resolution(api, execution_id, sid, "run:1", output={"verdict": "safe"}))
    assert first == {"recorded": True, "aggregatorStatus": "pending", "resumeScheduled": False}
    replay = api.ok(AGENT_RESOLUTION, resolution(api, execution_id, sid, "run:1", output={"verdict": "other"}))
    assert replay == {"recorded": False, "aggregatorStatus": "pending", "resumeScheduled": False}
    assert api.step(execution_id, "safety-panel")["status"] == "waiting"
    second = api.ok(AGENT_RESOLUTION, resolution(api, execution_id, sid, "run:2"))
    assert second == {"recorded": True, "aggregatorStatus": "resolved", "resumeScheduled": True}
    done = api.step(execution_id, "safety-panel")
    assert done["status"] == "completed" and done["output"]["decision"] == "approve"
    assert done["output"]["successCount"] == 2 and done["output"]["failureCount"] == 0
    assert [r["resolutionId"] for r in done["output"]["resolutions"]] == ["run:1", "run:2"]
    assert done["output"]["resolutions"][0]["output"] == {"verdict": "safe"}
    assert api.step(execution_id, "publish")["status"] == "completed"
    assert api.execution(execution_id)["status"] == "completed"
    # replays after the end answer the current status; a new resolution is refused
    assert api.ok(AGENT_RESOLUTION, resolution(api, execution_id, sid, "run:1")) == {
        "recorded": False,
        "aggregatorStatus": "resolved",
        "resumeScheduled": False,
    }
    api.err(AGENT_RESOLUTION, resolution(api, execution_id, sid, "run:3"), "FAILED_PRECONDITION")


def test_agent_resolutions_failures_and_rejects(api, quorum_def):
    # two failures of three make two successes unreachable: the step fails at once
    execution_id = api.dispatch(quorum_def)
    sid = api.step(execution_id, "safety-panel")["stepId"]
    api.err(AGENT_RESOLUTION, resolution(api, execution_id, sid, "f1", "failure"), "INVALID_ARGUMENT")
    assert (
        api.ok(AGENT_RESOLUTION, resolution(api, execution_id, sid, "f1", "failure", errorMessage="timeout"))[
            "aggregatorStatus"
        ]
        == "pending"
    )
    result = api.ok(AGENT_RESOLUTION, resolution(api, execution_id, sid, "f2", "failure", errorMessage="crash"))
    assert result == {"recorded": True, "aggregatorStatus": "failed", "resumeScheduled": True}
    failed = api.step(execution_id, "safety-panel")
    assert failed["status"] == "failed" and failed["error"]["code"]
    view = api.execution(execution_id)
    assert view["status"] == "failed" and view["failureReason"] == "step-failed:safety-panel"

    # a counted success saying reject routes to quarantine with the reason
    execution_id = api.dispatch(quorum_def)
    sid = api.step(execution_id, "safety-panel")["stepId"]
    api.ok(AGENT_RESOLUTION, resolution(api, execution_id, sid, "a", output={"decision": "reject", "reason": "nsfw"}))
    api.ok(AGENT_RESOLUTION, resolution(api, execution_id, sid, "b", output={"decision": "approve"}))
    output = api.step(execution_id, "safety-panel")["output"]
    assert output["decision"] == "reject" and output["rejectionReason"] == "nsfw"
    assert output["rejectorMandatory"] is True and output["rejectedBy"] == "safety-classifier"
    assert api.step(execution_id, "quarantine")["status"] == "completed"


def test_agent_resolution_all_resolved(api):
    body = blocking_agent_definition(uid("allres"), policy="allResolved", expected=2)
    api.create(body)
    execution_id = api.dispatch(body["definitionId"])
    sid = api.step(execution_id, "gate")["stepId"]
    assert api.ok(AGENT_RESOLUTION, resolution(api, execution_id, sid, "x"))["aggregatorStatus"] == "pending"
    assert api.ok(AGENT_RESOLUTION, resolution(api, execution_id, sid, "y"))["aggregatorStatus"] == "resolved"
    assert api.step(execution_id, "pass")["status"] == "completed"


def test_agent_resolution_refusals(api, quorum_def, human_def):
    execution_id = api.dispatch(quorum_def)
    steps = api.execution(execution_id)["steps"]
    article = next(s for s in steps if s["nodeId"] == "generate-article")
    panel = next(s for s in steps if s["nodeId"] == "safety-panel")
    # not a blocking agent step (a completed non-blocking agent; a human step)
    assert "blocking" in api.err(
        AGENT_RESOLUTION, resolution(api, execution_id, article["stepId"], "r1"), "FAILED_PRECONDITION"
    )
    human_execution, human_step = waiting_human(api, human_def)
    api.err(AGENT_RESOLUTION, resolution(api, human_execution, human_step["stepId"], "r1"), "FAILED_PRECONDITION")
    # unknown execution / step
    api.err(AGENT_RESOLUTION, resolution(api, "ex_missing", panel["stepId"], "r1"), "NOT_FOUND")
    api.err(AGENT_RESOLUTION, resolution(api, execution_id, "step_missing", "r1"), "NOT_FOUND")
    # bad arguments
    for bad in (
        {"resolutionId": "has space"},
        {"resolutionId": "x" * 201},
        {"resolutionId": ""},
        {"status": "done"},
        {"output": {"text": "x" * 16_385}},
        {"errorMessage": ""},
        {"output": []},
    ):
        api.err(AGENT_RESOLUTION, resolution(api, execution_id, panel["stepId"], "r1") | bad, "INVALID_ARGUMENT")
    assert (
        api.ok(AGENT_RESOLUTION, resolution(api, execution_id, panel["stepId"], "r1", output={"text": "x" * 16_384}))[
            "recorded"
        ]
        is True
    )
    # not waiting any more (cancelled): a new resolution is refused
    api.ok(STEP_CANCEL, {"executionId": execution_id, "stepId": panel["stepId"], "actorId": "ops"})
    assert "cancelled" in api.err(
        AGENT_RESOLUTION, resolution(api, execution_id, panel["stepId"], "r2"), "FAILED_PRECONDITION"
    )
    assert api.ok(AGENT_RESOLUTION, resolution(api, execution_id, panel["stepId"], "r1"))["recorded"] is False


# ================================================================ steps/cancel


def test_cancel_step(api, human_def, external_def):
    execution_id, step = waiting_human(api, human_def)
    result = api.ok(
        STEP_CANCEL,
        {"executionId": execution_id, "stepId": step["stepId"], "actorId": "ops", "reason": "duplicate request"},
    )
    assert result == {"cancelled": True, "stepId": step["stepId"], "executionId": execution_id}
    view = api.execution(execution_id)
    assert view["steps"][0]["status"] == "cancelled" and len(view["steps"]) == 1  # cancelled steps fire nothing
    (event,) = events_of(api, execution_id, "step.cancelled")
    assert event["stepId"] == step["stepId"]
    assert event["data"]["actorId"] == "ops" and event["data"]["reason"] == "duplicate request"
    assert view["status"] == "completed"
    api.err(
        STEP_CANCEL, {"executionId": execution_id, "stepId": step["stepId"], "actorId": "ops"}, "FAILED_PRECONDITION"
    )

    execution_id = api.dispatch(external_def)
    work = api.step(execution_id, "work")
    base = {"executionId": execution_id, "stepId": work["stepId"], "actorId": "ops"}
    for bad in ({"actorId": ""}, {"actorId": "a" * 257}, {"reason": "r" * 501}, {"actor": "x"}):
        api.err(STEP_CANCEL, base | bad, "INVALID_ARGUMENT")
    api.err(STEP_CANCEL, {k: v for k, v in base.items() if k != "actorId"}, "INVALID_ARGUMENT")
    api.err(STEP_CANCEL, base | {"stepId": "step_missing"}, "NOT_FOUND")
    api.err(STEP_CANCEL, base | {"executionId": "ex_missing"}, "NOT_FOUND")
    api.ok(STEP_CANCEL, base | {"reason": "r" * 500})
    assert api.step(execution_id, "work")["status"] == "cancelled"


# ================================================================ SLA timers


def test_sla_breach_fired_by_the_server_timer(api):
    body = human_definition(uid("sla"), sla_ms=300)
    api.create(body)
    execution_id, step = waiting_human(api, body["definitionId"])
    started = time.monotonic()
    breached = wait_for(lambda: events_of(api, execution_id, "step.breached"), timeout=15, what="step.breached")
    assert time.monotonic() - started < 10
    (event,) = breached
    assert event["stepId"] == step["stepId"]
    assert event["data"]["reason"] == "sla-exceeded" and event["data"]["slaMs"] == 300
    view = api.execution(execution_id)
    review = next(s for s in view["steps"] if s["stepId"] == step["stepId"])
    assert review["status"] == "breached"
    assert review["completedAt"] - review["startedAt"] >= 300
    assert event["timestamp"] >= review["startedAt"] + 300
    # a breach routes only through the `always` edge
    assert [s["nodeId"] for s in children(view, step["stepId"])] == ["escalate"]
    assert view["status"] == "completed"
    assert api.err(
        DECIDE,
        {"executionId": execution_id, "stepId": step["stepId"], "reviewerId": "ann", "decision": "approve"},
        "FAILED_PRECONDITION",
    )
    # a step decided before its deadline never breaches
    slow = human_definition(uid("sla"), sla_ms=1000)
    api.create(slow)
    dispatched = time.monotonic()
    execution_id, step = waiting_human(api, slow["definitionId"])
    decide(api, execution_id, step["stepId"], "ann")
    time.sleep(max(0.0, 1.4 - (time.monotonic() - dispatched)))
    assert not events_of(api, execution_id, "step.breached")
    assert api.step(execution_id, "review")["status"] == "completed"
    assert api.execution(execution_id)["status"] == "completed"


def test_agent_timeout_fired_by_the_server_timer(api):
    """An external agent step past its agentMaxRuntimeMs fails with agent-timeout; `always` routes it."""
    body = external_agent_definition(uid("timeout"))
    body["nodes"][0]["config"]["agentMaxRuntimeMs"] = 300
    api.create(body)
    execution_id = api.dispatch(body["definitionId"])
    (failed,) = wait_for(lambda: events_of(api, execution_id, "step.failed"), timeout=15, what="step.failed")
    assert failed["data"]["error"]["code"] == "agent-timeout"
    view = api.execution(execution_id)
    assert view["steps"][0]["status"] == "failed" and view["steps"][0]["error"]["code"] == "agent-timeout"
    assert [s["nodeId"] for s in view["steps"]] == ["work", "after"]
    assert view["status"] == "completed"


def test_trigger_context_reaches_predicates_and_webhooks_are_skipped(api):
    body = examples.load("risk-score-routing")
    body["definitionId"] = uid("risk")
    api.create(body)
    big = api.dispatch(body["definitionId"], triggerContext={"amount": 25_000})
    small = api.dispatch(body["definitionId"], triggerContext={"amount": 10})
    nodes_big = [s["nodeId"] for s in api.execution(big)["steps"]]
    nodes_small = [s["nodeId"] for s in api.execution(small)["steps"]]
    assert "notify-treasury" in nodes_big and "notify-treasury" not in nodes_small
    assert "release-payment" in nodes_small and "fraud-review" not in nodes_small
    audit = api.step(small, "risk-audit-log")
    assert audit["status"] == "skipped" and audit["output"] == {"deferred": True, "reason": "webhook-runtime-deferred"}
    (event,) = events_of(api, small, "step.completed", audit["stepId"])
    assert event["data"]["status"] == "skipped"
    assert api.execution(small)["status"] == "completed"


# ================================================================ event stream invariants


def test_event_stream_invariants_across_the_session(api):
    """Every execution this workspace has: seq strictly increasing, only external types,
    execution.* events carry stepId null, and a terminal execution has its terminal event."""
    cursor, checked = None, 0
    while True:
        page = api.ok(EXEC_LIST, {"pageSize": 100} | ({"cursor": cursor} if cursor else {}))
        for item in page["items"]:
            events = api.events(item["executionId"])
            seqs = [e["seq"] for e in events]
            assert seqs == sorted(set(seqs))
            assert all(e["type"] in EXTERNAL_TYPES for e in events)
            assert all(e["stepId"] is None for e in events if e["type"].startswith("execution."))
            assert events[0]["type"] == "execution.dispatched"
            if item["status"] != "running":
                assert events[-1]["type"] == f"execution.{item['status']}"
                assert item["completedAt"] is not None
            checked += 1
        if not page["hasMore"]:
            break
        cursor = page["nextCursor"]
    assert checked > 0
