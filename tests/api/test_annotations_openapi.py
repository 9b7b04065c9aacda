"""The comment-annotation and activity endpoints in /openapi.json: every request sent here
matches its documented schema, and every answer (success or error) matches the documented
response — including per-item failures and stored free-form fields."""

from __future__ import annotations

import httpx
import pytest
from jsonschema import Draft202012Validator

from api.support import uid

A, L = "/v2/commentannotations", "/v2/activities"
PATHS = [
    f"{A}/add",
    f"{A}/get",
    f"{A}/count/get",
    f"{A}/delete",
    f"{A}/markread",
    f"{L}/add",
    f"{L}/get",
    f"{L}/update",
    f"{L}/delete",
]


@pytest.fixture(scope="module")
def doc(server):
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        return client.get("/openapi.json").json()


def test_every_endpoint_is_documented(doc):
    assert set(PATHS) <= set(doc["paths"])


def test_live_requests_and_answers_match_the_document(api, doc):
    def check(path, data, expect_ok=True, documented=True):
        """``documented=False``: a request the document itself already forbids."""
        operation = doc["paths"][path]["post"]
        request_schema = operation["requestBody"]["content"]["application/json"]["schema"]
        errors = list(
            Draft202012Validator({**request_schema, "components": doc["components"]}).iter_errors({"data": data})
        )
        assert not errors or not documented, f"{path} request does not match the document: {errors[0].message}"
        assert errors or documented, f"{path}: the document should forbid {data}"
        resp = api.post(path, data)
        assert (resp.status_code == 200) == expect_ok, resp.text
        status = str(resp.status_code)
        schema = operation["responses"][status]["content"]["application/json"]["schema"]
        errors = list(Draft202012Validator({**schema, "components": doc["components"]}).iter_errors(resp.json()))
        assert not errors, f"{path} answer does not match the document: {errors[0].message} in {resp.text[:500]}"
        return resp.json().get("result")

    org, doc_id = uid("org"), uid("doc")
    rich = {
        "annotationId": "rich",
        "location": {"id": "l", "locationName": "L"},
        "targetElement": {"elementId": "e", "targetText": "t", "occurrence": 1, "selectAllContent": True},
        "commentData": [
            {
                "commentText": "x",
                "commentHtml": "<p>x</p>",
                "from": {"userId": "u", "extra": 1},
                "triggerActivities": True,
                "context": {"a": [1]},
                "taggedUserContacts": [{"userId": "v", "contact": {"userId": "v", "name": "V"}}],
                "agent": {
                    "agentId": "spell-check",
                    "url": "https://x.io/p",
                    "reason": {"title": "t", "confidence": 0.5},
                },
            }
        ],
        "status": {"id": "OPEN", "type": "default"},
        "priority": {"id": "P1"},
        "assignedTo": {"any": True},
        "suggestion": {"oldValue": None, "newValue": {"k": [1]}, "summary": {}, "driftDetected": True},
        "visibility": {"type": "public"},
        "type": "comment",
        "commentType": "suggestion",
        "context": {},
    }
    check(
        f"{A}/add",
        {
            "organizationId": org,
            "documentId": doc_id,
            "createOrganization": True,
            "createDocument": True,
            "verifyUserPermissions": False,
            "commentAnnotations": [rich, {"commentData": [{"commentText": "plain"}]}],
        },
    )
    check(f"{A}/add", {"organizationId": org, "documentId": doc_id, "commentAnnotations": [rich]})  # item fails
    check(f"{A}/add", {"organizationId": org, "documentId": uid("doc"), "commentAnnotations": [rich]}, False)
    page = check(f"{A}/get", {"organizationId": org, "documentId": doc_id, "pageSize": 1})
    check(
        f"{A}/get",
        {
            "organizationId": org,
            "pageToken": page["nextPageToken"],
            "userId": "u",
            "statusIds": ["OPEN"],
            "annotationIds": ["rich"],
        },
    )
    check(
        f"{A}/count/get",
        {"organizationId": org, "documentIds": [doc_id, "other"], "userId": "u", "statusIds": ["OPEN"]},
    )
    check(
        f"{A}/markread",
        {"organizationId": org, "documentId": doc_id, "userId": "u", "annotationIds": ["rich", "ghost"]},
    )
    check(
        f"{A}/delete",
        {
            "organizationId": org,
            "documentId": doc_id,
            "agentId": "spell-check",
            "agentSuggestions": True,
            "agentUrls": ["https://x.io/p"],
            "annotationIds": ["rich", "x"],
        },
    )
    check(f"{A}/delete", {"organizationId": org, "documentId": doc_id, "agentUrls": ["#x"]}, False)
    check(f"{A}/delete", {"organizationId": org, "documentId": doc_id, "locationIds": ["l"], "userIds": ["u"]})
    check(f"{A}/delete", {"organizationId": org, "documentId": doc_id})
    check(
        f"{L}/add",
        {
            "organizationId": org,
            "activities": [
                {
                    "id": "a1",
                    "featureType": "f",
                    "actionType": "a",
                    "documentId": doc_id,
                    "targetEntityId": "t",
                    "actionUser": {"userId": "u", "extra": True},
                    "changes": {"x": {"from": 1, "to": 2}},
                    "entityData": [1],
                    "entityTargetData": "s",
                    "displayMessageTemplate": "{{x}}",
                    "displayMessageTemplateData": {"x": 1},
                    "actionIcon": "i",
                }
            ],
        },
    )
    check(f"{L}/add", {"organizationId": org, "activities": [{"id": "a1", "featureType": "f", "actionType": "a"}]})
    page = check(f"{L}/get", {"organizationId": org, "pageSize": 1})
    check(
        f"{L}/get",
        {"organizationId": org, "documentId": doc_id, "targetEntityId": "t", "pageToken": page["nextPageToken"]},
    )
    check(f"{L}/update", {"organizationId": org, "activities": [{"id": "a1", "entityData": None}, {"id": "zz"}]})
    check(f"{L}/delete", {"organizationId": org, "activityIds": ["a1", "zz"], "documentId": doc_id})
    check(f"{L}/delete", {"organizationId": org}, False, documented=False)  # anyOf documentId, ...


# ---------------------------------------------------------------- never a 5xx


def _paths(value, prefix=()):
    """Every (path) to a value inside a JSON document, containers included."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value[:2]):
            yield from _paths(item, prefix + (index,))


def _replaced(value, path, new):
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replaced(value[head], rest, new)}
    copy = list(value)
    copy[head] = _replaced(copy[head], rest, new)
    return copy


MUTATIONS = [None, 0, -1, 2**63, 1.5, "", "x" * 3000, True, [], [None], {}, {"k": None}]


def test_no_mutation_of_a_valid_request_gives_a_5xx(api):
    org, doc_id = uid("org"), uid("doc")
    api.ok(
        f"{A}/add",
        {
            "organizationId": org,
            "documentId": doc_id,
            "createOrganization": True,
            "createDocument": True,
            "commentAnnotations": [
                {
                    "annotationId": "a",
                    "commentData": [{"commentText": "x", "agent": {"agentId": "g", "url": "https://x.io"}}],
                }
            ],
        },
    )
    payloads = {
        f"{A}/add": {
            "organizationId": org,
            "documentId": doc_id,
            "verifyUserPermissions": True,
            "commentAnnotations": [
                {
                    "annotationId": "m",
                    "status": {"id": "S", "type": "terminal"},
                    "visibility": {"type": "restricted", "userIds": ["u"]},
                    "suggestion": {"newValue": 1},
                    "commentData": [
                        {
                            "commentText": "x",
                            "commentId": 3,
                            "from": {"userId": "u"},
                            "agent": {"url": "https://x.io", "reason": {"confidence": 1}},
                        }
                    ],
                }
            ],
        },
        f"{A}/get": {
            "organizationId": org,
            "documentIds": [doc_id],
            "annotationIds": ["a"],
            "userId": "u",
            "statusIds": ["OPEN"],
            "pageSize": 5,
        },
        f"{A}/count/get": {"organizationId": org, "documentIds": [doc_id], "userId": "u", "statusIds": ["OPEN"]},
        f"{A}/delete": {
            "organizationId": org,
            "documentId": doc_id,
            "annotationIds": ["zz"],
            "locationIds": ["l"],
            "userIds": ["u"],
            "agentId": "g",
            "agentSuggestions": True,
            "agentUrls": ["https://x.io"],
        },
        f"{A}/markread": {"organizationId": org, "documentId": doc_id, "userId": "u", "annotationIds": ["a"]},
        f"{L}/add": {
            "organizationId": org,
            "activities": [{"featureType": "f", "actionType": "a", "changes": {"k": {"from": 1, "to": 2}}}],
        },
        f"{L}/get": {"organizationId": org, "documentId": doc_id, "targetEntityId": "t", "pageSize": 2},
        f"{L}/update": {
            "organizationId": org,
            "activities": [{"id": "x", "changes": {"k": {"to": 1}}, "actionIcon": "i"}],
        },
        f"{L}/delete": {"organizationId": org, "documentId": "nope", "activityIds": ["x"]},
    }
    for path, payload in payloads.items():
        for where in _paths(payload):
            for value in MUTATIONS:
                api.post(path, _replaced(payload, where, value))  # asserts status < 500
