"""Workspace isolation on every endpoint, black-box over HTTP (semantics §2): workspace B sends
each endpoint the ids of workspace A's resources. B is refused — NOT_FOUND, or the endpoint's
per-item failure, or an empty answer — or, where the id only names a container B may create
for itself (an organization, a definition id), it gets its own. B never sees anything of A's
(A's texts carry a marker no answer to B may contain), and afterwards everything A reads back
is exactly as before. A guard test keeps the sweep covering every route in the table.

The two workspaces live on a server of their own: B ends up owning definitions, organizations
and agents under A's ids, which the session server's other tests must not find in their B."""

from __future__ import annotations

import uuid

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
    HTTP_STATUS,
    RESOLVE,
    STEP_CANCEL,
    Api,
    blocking_agent_definition,
    human_definition,
    serve_fresh,
    uid,
)

DELIVERIES, REDRIVE = "/v2/workflow/deliveries/list", "/v2/workflow/deliveries/redrive"
UADD, UUPD, UDEL, UGET = "/v2/users/add", "/v2/users/update", "/v2/users/delete", "/v2/users/get"
TOKEN, PADD, PREM = "/v2/auth/generate_token", "/v2/auth/permissions/add", "/v2/auth/permissions/remove"
FADD, DADD = "/v2/folders/add", "/v2/documents/add"
GADD, GUADD = "/v2/organizations/usergroups/add", "/v2/organizations/usergroups/users/add"
FACC, DACC = "/v2/organizations/folders/access/update", "/v2/organizations/documents/access/update"
DDIS = "/v2/organizations/documents/access/disablestate/update"
AN = "/v2/commentannotations"
AC = "/v2/activities"
AG = "/v2/agents"


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    root = tmp_path_factory.mktemp("isolation-server")
    srv = serve_fresh(root, "isolation")
    try:
        with srv.client(srv.creds_a) as a, srv.client(srv.creds_b) as b:
            yield Api(a), Api(b)
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def a_world(pair):
    api = pair[0]
    """One of each resource in workspace A; every text A writes carries `marker`."""
    marker = f"A-only-{uuid.uuid4().hex[:10]}"
    org, doc, folder, group = uid("iso-org"), uid("iso-doc"), uid("iso-folder"), uid("iso-group")
    human = human_definition(uid("iso-def"), description=marker, custom={"m": marker}, tags=[uid("iso-tag")])
    api.create(human)
    execution_id = api.dispatch(human["definitionId"], idempotencyKey="iso", triggerContext={"m": marker})
    step_id = api.step(execution_id, "review")["stepId"]
    gate = blocking_agent_definition(uid("iso-gate"))
    api.create(gate)
    gated = api.dispatch(gate["definitionId"])
    gate_step = api.step(gated, "gate")["stepId"]
    hooked = api.dispatch(human["definitionId"], webhookUrl="https://localhost/hook", webhookSecret="s" * 32)
    person = {"userId": "ann", "name": marker, "email": f"{marker}@a.example"}
    api.ok(UADD, {"organizationId": org, "users": [person]})
    api.ok(FADD, {"organizationId": org, "folders": [{"folderId": folder, "folderName": marker}]})
    api.ok(
        DADD, {"organizationId": org, "folderId": folder, "documents": [{"documentId": doc, "documentName": marker}]}
    )
    api.ok(UADD, {"organizationId": org, "documentId": doc, "users": [person]})
    api.ok(UADD, {"organizationId": org, "folderId": folder, "users": [person]})
    api.ok(GADD, {"organizationId": org, "organizationUserGroups": [{"groupId": group, "groupName": marker}]})
    api.ok(GUADD, {"organizationId": org, "organizationUserGroupId": group, "userIds": ["ann"]})
    api.ok(
        f"{AN}/add",
        {
            "organizationId": org,
            "documentId": doc,
            "commentAnnotations": [
                {
                    "annotationId": "iso-ann",
                    "commentData": [{"commentText": marker, "from": {"userId": "ann"}, "triggerActivities": True}],
                }
            ],
        },
    )
    api.ok(
        f"{AC}/add",
        {
            "organizationId": org,
            "activities": [
                {"id": "iso-act", "featureType": "f", "actionType": marker, "documentId": doc, "targetEntityId": "t"}
            ],
        },
    )
    agent = api.ok(f"{AG}/create", {"name": marker, "description": marker, "instructions": marker})
    agent_id = agent["data"]["agentId"]
    return {
        "marker": marker,
        "org": org,
        "doc": doc,
        "folder": folder,
        "group": group,
        "human": human,
        "gate": gate,
        "execution": execution_id,
        "step": step_id,
        "gated": gated,
        "gate_step": gate_step,
        "hooked": hooked,
        "agent": agent_id,
    }


def snapshot(api, w) -> dict:
    """Everything A can read about its resources (deliveries aside: their attempts move on their own)."""
    org, doc = w["org"], w["doc"]

    def users(**filters):
        return api.ok(UGET, {"organizationId": org, **filters})["data"]

    return {
        "definitions": [api.ok(DEF_GET, {"definitionId": d["definitionId"]}) for d in (w["human"], w["gate"])],
        "executions": [api.execution(e) for e in (w["execution"], w["gated"], w["hooked"])],
        "events": [api.events(e) for e in (w["execution"], w["gated"])],
        "users": [
            users(),
            users(documentId=doc),
            users(folderId=w["folder"]),
            users(organizationUserGroupIds=[w["group"]]),
        ],
        "annotations": api.ok(f"{AN}/get", {"organizationId": org, "documentId": doc})["data"],
        "counts": api.ok(f"{AN}/count/get", {"organizationId": org, "documentIds": [doc], "userId": "ann"})["data"],
        "activities": api.ok(f"{AC}/get", {"organizationId": org})["data"],
        "agent": [
            api.ok(f"{AG}/get", {"agentId": w["agent"]})["data"],
            api.ok(f"{AG}/get", {"agentId": w["agent"], "version": 1})["data"],
        ],
        "deduplicated": api.ok(DISPATCH, {"definitionId": w["human"]["definitionId"], "idempotencyKey": "iso"}),
    }


def refusals(w) -> dict[str, dict]:
    """Per endpoint, B's request naming A's resources; B must be refused."""
    org, doc, folder, group, ex, step = w["org"], w["doc"], w["folder"], w["group"], w["execution"], w["step"]
    definition_id = w["human"]["definitionId"]
    return {
        DEF_GET: {"definitionId": definition_id},
        DEF_UPDATE: dict(w["human"], ifVersion=1, name="hijacked", description=None, custom=None),
        DEF_DELETE: {"definitionId": definition_id},
        DEF_LIST: {"tags": w["human"]["tags"], "status": "active"},
        DISPATCH: {"definitionId": definition_id, "idempotencyKey": "iso"},
        EXEC_GET: {"executionId": ex},
        EXEC_LIST: {"definitionId": definition_id},
        EXEC_CANCEL: {"executionId": ex, "reason": "hijack"},
        EVENTS: {"executionId": ex},
        RESOLVE: {"executionId": ex, "stepId": step, "action": "force-approve", "actorId": "mallory"},
        DECIDE: {"executionId": ex, "stepId": step, "reviewerId": "ann", "decision": "approve"},
        AGENT_RESOLUTION: {
            "executionId": w["gated"],
            "stepId": w["gate_step"],
            "resolutionId": "r:1",
            "status": "success",
            "output": {"decision": "approve"},
        },
        STEP_CANCEL: {"executionId": ex, "stepId": step, "actorId": "mallory"},
        DELIVERIES: {"executionId": w["hooked"]},
        REDRIVE: {"executionId": w["hooked"]},
        PREM: {
            "userId": "ann",
            "permissions": {
                "resources": [
                    {"type": "organization", "id": org},
                    {"type": "document", "id": doc, "organizationId": org},
                    {"type": "folder", "id": folder, "organizationId": org},
                ]
            },
        },
        UUPD: {"organizationId": org, "users": [{"userId": "ann", "name": "hijacked"}]},
        UDEL: {"organizationId": org, "userIds": ["ann"]},
        UGET: {"organizationId": org},
        GUADD: {"organizationId": org, "organizationUserGroupId": group, "userIds": ["mallory"]},
        FACC: {"organizationId": org, "folderIds": [folder], "accessType": "public"},
        DACC: {"organizationId": org, "documentIds": [doc], "accessType": "public"},
        DDIS: {"organizationId": org, "documentIds": [doc], "disabled": True},
        f"{AN}/get": {"organizationId": org, "documentId": doc},
        f"{AN}/count/get": {"organizationId": org, "documentIds": [doc], "userId": "ann"},
        f"{AN}/delete": {"organizationId": org, "documentId": doc},
        f"{AN}/markread": {"organizationId": org, "documentId": doc, "userId": "ann", "annotationIds": ["iso-ann"]},
        f"{AC}/get": {"organizationId": org},
        f"{AC}/update": {"organizationId": org, "activities": [{"id": "iso-act", "actionIcon": "hijacked"}]},
        f"{AC}/delete": {"organizationId": org, "activityIds": ["iso-act"], "documentId": doc, "targetEntityId": "t"},
        f"{AG}/get": {"agentId": w["agent"]},
        f"{AG}/update": {"agentId": w["agent"], "enabled": False, "name": "hijacked"},
        f"{AG}/version/update": {"agentId": w["agent"], "instructions": "hijacked"},
    }


def own_creations(w) -> dict[str, dict]:
    """Per endpoint, B's request reusing A's ids for containers B may create for itself."""
    org, doc, folder = w["org"], w["doc"], w["folder"]
    return {
        DEF_CREATE: dict(w["human"], description="B's own", custom=None),
        UADD: {"organizationId": org, "users": [{"userId": "ann", "name": "B's Ann"}]},
        FADD: {"organizationId": org, "folders": [{"folderId": folder}]},
        DADD: {"organizationId": org, "folderId": folder, "documents": [{"documentId": doc}]},
        GADD: {"organizationId": org, "organizationUserGroups": [{"groupId": w["group"], "groupName": "B"}]},
        PADD: {"userId": "ann", "permissions": {"resources": [{"type": "organization", "id": org}]}},
        TOKEN: {
            "userId": "ann",
            "userProperties": {"name": "Ann", "email": "ann@b.example"},
            "permissions": {"resources": [{"type": "organization", "id": org}]},
        },
        f"{AN}/add": {
            "organizationId": org,
            "documentId": doc,
            "commentAnnotations": [{"annotationId": "iso-ann", "commentData": [{"commentText": "B's own"}]}],
        },
        f"{AC}/add": {"organizationId": org, "activities": [{"id": "iso-act", "featureType": "f", "actionType": "b"}]},
        f"{AG}/create": {"name": "B's own"},
        f"{AG}/prompt/validate": {"prompt": "Flag every sentence that names a competitor."},
    }


def is_refusal(result: dict) -> bool:
    """An answer that gives nothing away and changed nothing: per-item failures, or nothing found."""
    data = result.get("data", result)
    if "items" in result:
        return result["items"] == []
    if "redriven" in result:
        return result["redriven"] == 0 and result["eventIds"] == []
    if isinstance(data, list):
        return data == []
    if isinstance(data, dict) and data and all(isinstance(v, dict) for v in data.values()):
        if all("total" in v for v in data.values()):  # counts answer zeros for what B cannot see
            return all(v == {"total": 0, "unread": 0} for v in data.values())
        return all(v.get("success") is False for v in data.values())
    return data == {}


def b_answer(api_b, path: str, data: dict, marker: str):
    resp = api_b.post(path, data)
    assert marker not in resp.text, f"{path} showed B something of A's: {resp.text[:300]}"
    body = resp.json()
    if resp.status_code != 200:
        assert resp.status_code == HTTP_STATUS[body["error"]["status"]]
    return resp.status_code, body


def test_the_sweep_covers_every_route():
    from toolkit.services.operations import OPERATIONS

    world = {
        k: "x"
        for k in (
            "org",
            "doc",
            "folder",
            "group",
            "execution",
            "step",
            "gated",
            "gate_step",
            "hooked",
            "agent",
            "marker",
        )
    }
    world["human"] = world["gate"] = {"definitionId": "x", "tags": ["x"]}
    covered = refusals(world).keys() | own_creations(world).keys()
    assert covered == {e.path for e in OPERATIONS}
    assert not refusals(world).keys() & own_creations(world).keys()


def test_workspace_b_cannot_reach_anything_of_workspace_a(pair, a_world):
    (api, api_b), w = pair, a_world
    before = snapshot(api, w)

    # 1. B has nothing under A's ids: NOT_FOUND or an empty / per-item-failure answer.
    for path, data in refusals(w).items():
        status, body = b_answer(api_b, path, data, w["marker"])
        assert status == 404 or (status == 200 and is_refusal(body["result"])), f"{path}: {status} {body}"

    # 2. B makes its own organization, definition, document … under the same ids.
    for path, data in own_creations(w).items():
        status, body = b_answer(api_b, path, data, w["marker"])
        assert status == 200, f"{path}: {body}"

    # 3. Even now that B has containers of the same ids, nothing of A's shows through them.
    for path, data in refusals(w).items():
        b_answer(api_b, path, data, w["marker"])

    # Nothing of A's changed, and B's own objects are B's alone.
    assert snapshot(api, w) == before
    mine = api_b.ok(DEF_GET, {"definitionId": w["human"]["definitionId"]})
    assert mine["name"] == "hijacked" and mine["version"] == 2  # step 3's update and delete hit B's own copy
    assert api_b.ok(UGET, {"organizationId": w["org"]})["data"] == []  # step 3 removed B's own Ann, not A's
