"""Every validator on a parent model names the field at fault, down to the item, over real HTTP
and in ``collab lint --json`` (issue 15 item 6): a duplicate reviewer is
``data.nodes[1].config.reviewers[1].userId``, not ``data.nodes[1].config``. And /openapi.json
already forbids each of these requests where JSON Schema can say the rule (item 8); the others
are stated in the operation's description."""

from __future__ import annotations

import copy
import json

import httpx
import pytest
from jsonschema import Draft202012Validator

from api.support import uid
from toolkit.cli import main

DEF_CREATE = "/v2/workflow/definitions/create"


def flow(**human_config) -> dict:
    """start (agent) -> review (human, nodes[1]) -> done (agent)."""
    return {
        "definitionId": uid("paths"),
        "name": "Paths",
        "nodes": [
            {"nodeId": "start", "type": "agent", "config": {"agentId": "bot"}},
            {"nodeId": "review", "type": "human", "config": human_config or {"reviewerIds": ["ann"]}},
            {"nodeId": "done", "type": "agent", "config": {"agentId": "bot"}},
        ],
        "edges": [{"from": "start", "to": "review"}, {"from": "review", "to": "done", "on": "approve"}],
    }


def changed(body: dict, change) -> dict:
    body = copy.deepcopy(body)
    change(body)
    return body


# (case, definition body, the path the message starts with)
DEFINITIONS = [
    (
        "duplicate-reviewers",
        flow(reviewers=[{"userId": "u"}, {"userId": "u", "mandatory": False}]),
        "data.nodes[1].config.reviewers[1].userId",
    ),
    ("duplicate-reviewer-ids", flow(reviewerIds=["u", "v", "u"]), "data.nodes[1].config.reviewerIds[2]"),
    ("no-mandatory-reviewer", flow(reviewers=[{"userId": "u", "mandatory": False}]), "data.nodes[1].config.reviewers"),
    (
        "reviewers-and-reviewer-ids",
        flow(reviewers=[{"userId": "u"}], reviewerIds=["u"]),
        "data.nodes[1].config.reviewerIds",
    ),
    ("no-reviewers", flow(commentBody="hi"), "data.nodes[1].config.reviewers"),
    (
        "blocking-without-policy",
        changed(flow(), lambda b: b["nodes"][0]["config"].update(blocking=True)),
        "data.nodes[0].config.resolutionPolicy",
    ),
    (
        "policy-without-blocking",
        changed(flow(), lambda b: b["nodes"][0]["config"].update(resolutionPolicy="allResolved")),
        "data.nodes[0].config.resolutionPolicy",
    ),
    (
        "min-resolved-without-count",
        changed(
            flow(), lambda b: b["nodes"][0]["config"].update(blocking=True, resolutionPolicy={"kind": "minResolved"})
        ),
        "data.nodes[0].config.resolutionPolicy.minCount",
    ),
    (
        "min-count-over-expected",
        changed(
            flow(),
            lambda b: b["nodes"][0]["config"].update(
                blocking=True, resolutionPolicy={"kind": "minResolved", "minCount": 3}, expectedResolutions=2
            ),
        ),
        "data.nodes[0].config.resolutionPolicy.minCount",
    ),
    (
        "node-endpoint-without-node-id",
        changed(flow(), lambda b: b["edges"][0].update({"from": {"kind": "node"}})),
        "data.edges[0].from.nodeId",
    ),
    (
        "node-endpoint-with-group-id",
        changed(flow(), lambda b: b["edges"][1].update(to={"kind": "node", "nodeId": "done", "groupId": "g"})),
        "data.edges[1].to.groupId",
    ),
    (
        "group-endpoint-without-group-id",
        changed(flow(), lambda b: b["edges"][0].update(to={"kind": "group"})),
        "data.edges[0].to.groupId",
    ),
    (
        "scope-without-organization",
        changed(flow(), lambda b: b.update(scope={"level": "organization"})),
        "data.organizationId",
    ),
    (
        "scope-disagrees",
        changed(flow(), lambda b: b.update(scope={"level": "organization", "organizationId": "a"}, organizationId="b")),
        "data.scope.organizationId",
    ),
]


@pytest.mark.parametrize("body, path", [c[1:] for c in DEFINITIONS], ids=[c[0] for c in DEFINITIONS])
def test_definition_errors_name_the_field_over_http(api, body, path):
    assert api.err(DEF_CREATE, body).startswith(f"{path}: ")


@pytest.mark.parametrize("body, path", [c[1:] for c in DEFINITIONS], ids=[c[0] for c in DEFINITIONS])
def test_definition_errors_name_the_field_in_lint_json(tmp_path, capsys, body, path):
    file = tmp_path / "flow.json"
    file.write_text(json.dumps({"data": body}), encoding="utf-8")
    assert main(["lint", "--json", str(file)]) == 1
    findings = json.loads(capsys.readouterr().out)
    assert [(f["key"], f["where"]) for f in findings] == [("schema", path)]


ORG = {"organizationId": "o"}
RESOURCE = {"type": "document", "id": "d", "organizationId": "o"}
REQUESTS = [
    (
        "users-add-duplicate",
        "/v2/users/add",
        {**ORG, "users": [{"userId": "a"}, {"userId": "b"}, {"userId": "a"}]},
        "data.users[2].userId",
    ),
    (
        "users-update-duplicate",
        "/v2/users/update",
        {**ORG, "users": [{"userId": "a"}, {"userId": "a"}]},
        "data.users[1].userId",
    ),
    ("users-delete-duplicate", "/v2/users/delete", {**ORG, "userIds": ["a", "a"]}, "data.userIds[1]"),
    ("users-document-and-folder", "/v2/users/get", {**ORG, "documentId": "d", "folderId": "f"}, "data.folderId"),
    (
        "users-all-documents-and-document",
        "/v2/users/get",
        {**ORG, "allDocuments": True, "documentId": "d"},
        "data.documentId",
    ),
    (
        "folders-duplicate",
        "/v2/folders/add",
        {**ORG, "folders": [{"folderId": "f"}, {"folderId": "f"}]},
        "data.folders[1].folderId",
    ),
    (
        "documents-duplicate",
        "/v2/documents/add",
        {**ORG, "documents": [{"documentId": "d"}, {"documentId": "d"}]},
        "data.documents[1].documentId",
    ),
    (
        "groups-duplicate",
        "/v2/organizations/usergroups/add",
        {**ORG, "organizationUserGroups": [{"groupId": "g", "groupName": "G"}, {"groupId": "g", "groupName": "H"}]},
        "data.organizationUserGroups[1].groupId",
    ),
    (
        "group-users-duplicate",
        "/v2/organizations/usergroups/users/add",
        {**ORG, "organizationUserGroupId": "g", "userIds": ["a", "a"]},
        "data.userIds[1]",
    ),
    (
        "folder-access-duplicate",
        "/v2/organizations/folders/access/update",
        {**ORG, "folderIds": ["f", "g", "f"]},
        "data.folderIds[2]",
    ),
    (
        "document-access-duplicate",
        "/v2/organizations/documents/access/update",
        {**ORG, "documentIds": ["d", "d"], "accessType": "public"},
        "data.documentIds[1]",
    ),
    (
        "permissions-duplicate",
        "/v2/auth/permissions/add",
        {"userId": "u", "permissions": {"resources": [RESOURCE, RESOURCE]}},
        "data.permissions.resources[1].id",
    ),
    (
        "permission-without-organization",
        "/v2/auth/permissions/add",
        {"userId": "u", "permissions": {"resources": [{"type": "document", "id": "d"}]}},
        "data.permissions.resources[0].organizationId",
    ),
    (
        "token-without-organization-entry",
        "/v2/auth/generate_token",
        {"userId": "u", "userProperties": {"name": "U", "email": "u@x.io"}, "permissions": {"resources": [RESOURCE]}},
        "data.permissions.resources",
    ),
    (
        "prompt-fields-duplicate",
        "/v2/agents/prompt/validate",
        {
            "prompt": "p",
            "userContextFields": [{"id": "f", "title": "F", "type": "text"}, {"id": "f", "title": "G", "type": "text"}],
        },
        "data.userContextFields[1].id",
    ),
    (
        "prompt-field-example-type",
        "/v2/agents/prompt/validate",
        {"prompt": "p", "userContextFields": [{"id": "f", "title": "F", "type": "number", "example": "x"}]},
        "data.userContextFields[0].example",
    ),
    ("agent-version-without-id", "/v2/agents/get", {"version": 1}, "data.version"),
    ("agent-version-changes-nothing", "/v2/agents/version/update", {"agentId": "a"}, "data.instructions"),
    (
        "dispatch-url-without-secret",
        "/v2/workflow/executions/dispatch",
        {"definitionId": "x", "webhookUrl": "https://example.com/h"},
        "data.webhookSecret",
    ),
    ("activities-delete-without-filter", "/v2/activities/delete", ORG, "data.activityIds"),
    ("activities-get-without-organization", "/v2/activities/get", {}, "data.organizationId"),
]


@pytest.mark.parametrize("path, data, field", [c[1:] for c in REQUESTS], ids=[c[0] for c in REQUESTS])
def test_request_errors_name_the_field_over_http(api, path, data, field):
    assert api.err(path, data).startswith(f"{field}: ")


# Rules JSON Schema cannot state (a repeated id inside a list of objects, one field against
# another, one list against another): the operation's description says them instead.
DESCRIBED_ONLY = {
    "duplicate-reviewers",
    "min-count-over-expected",
    "scope-without-organization",
    "scope-disagrees",
    "users-add-duplicate",
    "users-update-duplicate",
    "folders-duplicate",
    "documents-duplicate",
    "groups-duplicate",
    "permissions-duplicate",
    "prompt-fields-duplicate",
}
DESCRIPTIONS = {
    "duplicate-reviewers": "reviewer",
    "min-count-over-expected": "minCount",
    "scope-without-organization": "scope",
    "scope-disagrees": "scope",
    "users-add-duplicate": "userId",
    "users-update-duplicate": "userId",
    "folders-duplicate": "folderId",
    "documents-duplicate": "documentId",
    "groups-duplicate": "groupId",
    "permissions-duplicate": "resource",
    "prompt-fields-duplicate": "userContextFields",
}
ALL = [(name, DEF_CREATE, body) for name, body, _ in DEFINITIONS] + [
    (name, path, data) for name, path, data, _ in REQUESTS
]


@pytest.fixture(scope="module")
def document(server):
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        return client.get("/openapi.json").json()


@pytest.mark.parametrize("path, data", [c[1:] for c in ALL], ids=[c[0] for c in ALL])
def test_the_document_forbids_what_the_server_refuses(document, request, path, data):
    name = request.node.callspec.id
    operation = document["paths"][path]["post"]
    schema = operation["requestBody"]["content"]["application/json"]["schema"]
    errors = list(Draft202012Validator({**schema, "components": document["components"]}).iter_errors({"data": data}))
    if name in DESCRIBED_ONLY:
        assert not errors, errors[0].message  # else it belongs in the schema list
        assert DESCRIPTIONS[name] in operation["description"]
    else:
        assert errors, f"{path}: /openapi.json allows {data}, which the server refuses"
