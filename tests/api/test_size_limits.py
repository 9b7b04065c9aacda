"""Size limits everywhere (issue 13), over HTTP: forged cursors, huge ids, huge pages and
messages about many problems. Each is an answer a client can act on — never a 500, never an
answer the size of what the client sent."""

from __future__ import annotations

import base64
import json

import pytest

from api.support import DEF_CREATE, DEF_GET, DEF_LIST, DISPATCH, EVENTS, EXEC_GET, EXEC_LIST, human_definition, uid
from toolkit.limits import MAX_ID_CHARS, PAGE_MAX_BYTES

# Every list endpoint, with the smallest valid body and the name of its cursor field.
LISTS = [
    (DEF_LIST, {}, "cursor"),
    (EXEC_LIST, {}, "cursor"),
    ("/v2/workflow/deliveries/list", {}, "cursor"),
    ("/v2/agents/get", {}, "pageToken"),
    ("/v2/commentannotations/get", {"organizationId": "org-1"}, "pageToken"),
    ("/v2/activities/get", {"organizationId": "org-1"}, "pageToken"),
    ("/v2/users/get", {"organizationId": "org-1"}, "pageToken"),
]


def forged(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


# Positions no list holds (a 500 on five endpoints before), and malformed numbers. Users have
# their own token format (a JSON list). Agents list built-in agents first, at keys -4…-1.
FORGED = [
    forged(f"k{2**63}"),
    forged(f"k{2**64 + 5}"),
    forged(f"k-{2**63 + 1}"),
    forged("k-99"),
    forged("k" + "9" * 400),
    forged("k1_000"),
    forged(" k5"),
    forged("k 5"),
    "!!!",
    forged("k"),
]
USERS_FORGED = [
    forged(json.dumps(["p", 2**63])),
    forged(json.dumps(["p", -(2**70)])),
    forged(json.dumps(["p", -1])),
    forged(json.dumps(["p", 10**400])),
]


@pytest.mark.parametrize("path, body, field", LISTS, ids=[p for p, _, _ in LISTS])
@pytest.mark.parametrize("token", FORGED)
def test_forged_cursors_are_invalid_argument(api, path, body, field, token):
    message = api.err(path, {**body, field: token})
    assert f"data.{field}" in message


@pytest.mark.parametrize("token", USERS_FORGED)
def test_forged_user_page_tokens_are_invalid_argument(api, token):
    message = api.err("/v2/users/get", {"organizationId": "org-1", "pageToken": token})
    assert "data.pageToken" in message


@pytest.mark.parametrize("path, body, field", LISTS[:3] + LISTS[4:6], ids=[p for p, _, _ in LISTS[:3] + LISTS[4:6]])
def test_a_negative_position_is_invalid_argument(api, path, body, field):
    assert f"data.{field}" in api.err(path, {**body, field: forged("k-1")})


def test_the_largest_valid_cursor_is_an_empty_page(api):
    for path, body, field in LISTS[:3]:
        page = api.ok(path, {**body, field: forged(f"k{2**63 - 1}")})
        assert page["items"] == [] and page["hasMore"] is False


# ---------------------------------------------------------------- ids

HUGE = "x" * 1_000_000


@pytest.mark.parametrize(
    "path, data, field",
    [
        (EXEC_GET, {"executionId": HUGE}, "executionId"),
        (EVENTS, {"executionId": HUGE}, "executionId"),
        ("/v2/workflow/executions/cancel", {"executionId": HUGE}, "executionId"),
        (DEF_GET, {"definitionId": HUGE}, "definitionId"),
        (DISPATCH, {"definitionId": HUGE}, "definitionId"),
        (DISPATCH, {"definitionId": "abc", "organizationId": HUGE}, "organizationId"),
        (EXEC_LIST, {"definitionId": HUGE}, "definitionId"),
        (EXEC_LIST, {"cursor": HUGE}, "cursor"),
        (
            "/v2/workflow/steps/recordReviewerDecision",
            {"executionId": "e", "stepId": HUGE, "reviewerId": "ann", "decision": "approve"},
            "stepId",
        ),
        (
            "/v2/workflow/steps/recordReviewerDecision",
            {"executionId": "e", "stepId": "s", "reviewerId": HUGE, "decision": "approve"},
            "reviewerId",
        ),
        ("/v2/workflow/steps/cancel", {"executionId": "e", "stepId": HUGE, "actorId": "ops"}, "stepId"),
        ("/v2/workflow/deliveries/list", {"executionId": HUGE}, "executionId"),
        ("/v2/workflow/deliveries/redrive", {"eventIds": [HUGE]}, "eventIds[0]"),
    ],
)
def test_huge_ids_are_refused_without_being_echoed(api, path, data, field):
    message = api.err(path, data)
    assert f"data.{field}" in message and f"at most {MAX_ID_CHARS} characters" in message
    assert len(message) < 1_000


def test_an_id_at_the_limit_is_looked_up(api):
    message = api.err(EXEC_GET, {"executionId": "e" * MAX_ID_CHARS}, "NOT_FOUND")
    assert len(message) < 2 * MAX_ID_CHARS


# ---------------------------------------------------------------- pages


def test_a_page_stops_at_its_byte_cap_and_the_rest_follows(api):
    """Eight annotations of about 900 KB: a page of them stops past 4 MiB with a token for the
    rest (it used to answer them all at once), and paging on returns every one exactly once."""
    org, doc = uid("org"), uid("doc")
    big = [{"commentText": "y" * 100_000} for _ in range(9)]  # comments are at most 100,000 characters
    ids = [f"big-{i}" for i in range(8)]
    for i, annotation_id in enumerate(ids):
        added = api.ok(
            "/v2/commentannotations/add",
            {
                "organizationId": org,
                "documentId": doc,
                "createOrganization": i == 0,
                "createDocument": i == 0,
                "commentAnnotations": [{"annotationId": annotation_id, "commentData": big}],
            },
        )
        assert added["data"][annotation_id]["success"], added
    seen, token, pages = [], None, 0
    while True:
        data = {"organizationId": org, "documentId": doc}
        if token is not None:
            data["pageToken"] = token
        resp = api.post("/v2/commentannotations/get", data)
        assert resp.status_code == 200, resp.text
        assert len(resp.content) < PAGE_MAX_BYTES + 1_000_000  # the cap, plus the one item that passed it
        result = resp.json()["result"]
        pages += 1
        seen += [a["annotationId"] for a in result["data"]]
        token = result["nextPageToken"]
        if token is None:
            break
    assert seen == ids and pages >= 2


def test_a_definitions_page_stops_at_its_byte_cap(api):
    """Six definitions of about 900 KB each (a large mockOutput): the first page stops past
    4 MiB although the page size allows 100, and the next page holds the rest."""
    tag = uid("big")[:20]
    ids = []
    for _ in range(6):
        body = human_definition(uid("big"), tags=[tag])
        body["nodes"][1]["config"]["mockOutput"] = {"text": "z" * 900_000}
        api.create(body)
        ids.append(body["definitionId"])
    first = api.post(DEF_LIST, {"tags": [tag], "pageSize": 100})
    assert first.status_code == 200 and len(first.content) < PAGE_MAX_BYTES + 1_000_000
    page = first.json()["result"]
    assert page["hasMore"] is True and 4 <= len(page["items"]) < 6
    rest = api.ok(DEF_LIST, {"tags": [tag], "pageSize": 100, "cursor": page["nextCursor"]})
    assert [d["definitionId"] for d in page["items"] + rest["items"]] == ids
    assert rest["hasMore"] is False


def test_an_agents_page_stops_at_its_byte_cap(api):
    """Six agents with a config of about 900 KB: listing them (page size 500) takes two pages
    or more, each under the cap plus one agent, and every agent comes once."""
    created = []
    for i in range(6):
        result = api.ok("/v2/agents/create", {"name": f"big {i}", "config": {"blob": "c" * 900_000}})
        created.append(result["data"]["agentId"])
    seen, token, pages = [], None, 0
    while True:
        data = {"pageSize": 500, **({"pageToken": token} if token else {})}
        resp = api.post("/v2/agents/get", data)
        assert resp.status_code == 200 and len(resp.content) < PAGE_MAX_BYTES + 1_000_000
        result = resp.json()["result"]
        pages += 1
        seen += [a["agentId"] for a in result["data"]]
        token = result["nextPageToken"]
        if token is None:
            break
    assert pages >= 2 and [a for a in seen if a in created] == created and len(seen) == len(set(seen))


# ---------------------------------------------------------------- messages


def test_a_message_about_many_problems_is_truncated_with_a_count(api):
    """500 edges to nowhere: every one is a lint error, the message names the first ones and
    counts the rest."""
    body = human_definition(uid("many"))
    body["edges"] += [{"from": "review", "to": f"ghost-{i}", "on": "always"} for i in range(498)]
    message = api.err(DEF_CREATE, body)
    assert "dangling-edge" in message
    assert message.endswith("… and 478 more")
    assert len(message) < 5_000


def test_a_schema_message_about_many_fields_is_truncated_with_a_count(api):
    body = human_definition(uid("many"))
    body["edges"] = [{"from": "review", "to": "approved", "on": "sometimes"} for _ in range(500)]
    message = api.err(DEF_CREATE, body)
    assert "data.edges[0].on" in message and "… and 480 more" in message
    assert len(message) < 5_000
