"""Schemathesis against the real server's /openapi.json: every endpoint gets generated requests,
valid and invalid, with valid credentials; no answer may be a 5xx and every answer must match
what the document says (status code, content type, body schema, the error envelope). Data the
document forbids must be refused (negative data), and data it allows must be accepted unless
the refusal is one the operation's description states (positive data; see
`positive_data_accepted`).

The server is one of our own (its own database and workspace), because fuzzing changes and
disables things the other HTTP tests rely on. Before fuzzing, the workspace is seeded with one
of each resource, and a share of the valid requests name those ids, so the fuzz reaches the
services and the engine rather than stopping at NOT_FOUND. Examples per endpoint:
COLLAB_FUZZ_EXAMPLES (default 25, deterministic, which keeps `make test` near a minute); raise
it for a longer hunt.
"""

from __future__ import annotations

import os
import re

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ignored_auth,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)

from api.support import Api, human_definition, serve_fresh, uid

EXAMPLES = int(os.environ.get("COLLAB_FUZZ_EXAMPLES", "25"))
# Refusals of schema-valid data that JSON Schema cannot express, each stated in the operation's
# description: ids repeated inside a list of objects, cursors this API did not return, the
# linter's graph rules, a field that must equal another (scope ids, an organization's id), URLs that are not
# pages, a provider
# this server lacks, minCount against expectedResolutions, an organization a visibility needs,
# `__` in a node or group id (a pattern would need a lookahead, which generators do not read),
# and, on PostgreSQL, the NUL character in a text kept as text (every operation's description).
# One more, a difference of regex dialects rather than a rule: Python's `$` also matches before a
# final newline, so the generator may send "a@b\n" for the email pattern, which JSON Schema's
# (ECMA-262) `$` and the server both refuse.
DOCUMENTED = re.compile(
    "|".join(
        [
            r"email: string should match pattern",
            r"is given more than once",
            r"repeats activities\[",
            r"repeats commentAnnotations\[",
            r"repeats commentData\[",
            r"not a cursor this API returned",
            r"not a page token this API returned",
            r"^definition failed validation",
            r"must equal id when type is organization",
            r"no entry is a page URL",
            r"is not configured on this server",
            r"must be <= expectedResolutions",
            r"required for organizationPrivate visibility",
            r"must not contain '__'",
            r"disagrees with the top-level",
            r"required when scope\.level is",
            r"text may not contain the NUL character \(U\+0000\)",
        ]
    )
)


@schemathesis.check
def positive_data_accepted(ctx, response, case):
    """Data the document allows is accepted: a 400 to it must be FAILED_PRECONDITION (a state of
    the resource, not the data) or only refusals the description states (DOCUMENTED)."""
    if case.meta is None or not case.meta.generation.mode.is_positive or response.status_code != 400:
        return None
    error = response.json()["error"]
    if error["status"] == "FAILED_PRECONDITION":
        return None
    undocumented = [m for m in re.split(r"; (?=data\.)", error["message"]) if not DOCUMENTED.search(m)]
    assert not undocumented, f"valid data refused: {undocumented}"
    return None


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
    negative_data_rejection,
    positive_data_accepted,
    ignored_auth,
    unsupported_method,
]
ACT = "/v2/activities"


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz-server")
    srv = serve_fresh(root, "fuzz")
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def fuzz_api(fuzz_server):
    with fuzz_server.client(fuzz_server.creds_a) as client:
        yield Api(client)


@pytest.fixture(scope="module")
def known_ids(fuzz_api):
    """One of each resource; returns the `data` keys that name them, with their values."""
    api = fuzz_api
    org, doc, folder, group = "fz-org", "fz-doc", "fz-folder", "fz-group"
    definition = human_definition("fz-definition")
    api.create(definition)
    execution_id = api.dispatch(definition["definitionId"])
    step_id = api.step(execution_id, "review")["stepId"]
    api.ok("/v2/users/add", {"organizationId": org, "users": [{"userId": "ann", "name": "Ann"}]})
    api.ok("/v2/folders/add", {"organizationId": org, "folders": [{"folderId": folder}]})
    api.ok("/v2/documents/add", {"organizationId": org, "folderId": folder, "documents": [{"documentId": doc}]})
    api.ok(
        "/v2/organizations/usergroups/add",
        {"organizationId": org, "organizationUserGroups": [{"groupId": group, "groupName": "G"}]},
    )
    api.ok(
        "/v2/commentannotations/add",
        {
            "organizationId": org,
            "documentId": doc,
            "commentAnnotations": [
                {"annotationId": "fz-annotation", "commentData": [{"commentText": "x", "from": {"userId": "ann"}}]}
            ],
        },
    )
    api.ok(
        f"{ACT}/add",
        {
            "organizationId": org,
            "activities": [
                {
                    "id": "fz-activity",
                    "featureType": "f",
                    "actionType": "a",
                    "documentId": doc,
                    "targetEntityId": "fz-target",
                }
            ],
        },
    )
    agent_id = api.ok("/v2/agents/create", {"name": "Fuzz", "instructions": "Check."})["data"]["agentId"]
    return {
        "definitionId": definition["definitionId"],
        "executionId": execution_id,
        "stepId": step_id,
        "organizationId": org,
        "documentId": doc,
        "documentIds": [doc],
        "folderId": folder,
        "folderIds": [folder],
        "userId": "ann",
        "userIds": ["ann"],
        "organizationUserGroupId": group,
        "organizationUserGroupIds": [group],
        "agentId": agent_id,
        "annotationIds": ["fz-annotation"],
        "activityIds": ["fz-activity"],
        "targetEntityId": "fz-target",
    }


@pytest.fixture(scope="module")
def fuzz_schema(fuzz_server):
    return schemathesis.openapi.from_url(f"{fuzz_server.base_url}/openapi.json")


def _paths() -> list[str]:
    from toolkit.services.operations import OPERATIONS  # only to name the tests; the fuzz reads the served document

    return [e.path for e in OPERATIONS]


def _whole(value):
    """The value with whole floats written as integers (2.0 -> 2): the description says an
    integer has no fraction, which JSON Schema cannot (to it 2.0 is an integer)."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= 2**53:
        return int(value)
    if isinstance(value, dict):
        return {k: _whole(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole(v) for v in value]
    return value


def _aim_at_known(case, known: dict) -> None:
    """Point the id fields of a valid request at the seeded resources (same types, so the request
    stays valid)."""
    data = case.body.get("data") if isinstance(case.body, dict) else None
    if isinstance(data, dict):
        for key in data.keys() & known.keys():
            if isinstance(data[key], type(known[key])):
                data[key] = known[key]


@pytest.mark.parametrize("path", _paths())
def test_every_endpoint_answers_as_documented(path, fuzz_schema, fuzz_server, known_ids):
    creds = fuzz_server.creds_a
    headers = {"x-service-api-key": creds["apiKey"], "x-service-auth-token": creds["authToken"]}
    operation = fuzz_schema[path]["POST"]
    cases = st.one_of(
        st.tuples(operation.as_strategy(GenerationMode.POSITIVE), st.booleans()),
        st.tuples(operation.as_strategy(GenerationMode.NEGATIVE), st.none()),
    )

    @given(case_and_aim=cases)
    @settings(
        max_examples=EXAMPLES, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
    )
    def fuzz(case_and_aim):
        case, aim = case_and_aim
        if aim is not None:  # a positive case
            case.body = _whole(case.body)
        if aim:
            _aim_at_known(case, known_ids)
        response = case.call(headers=headers)
        if response.status_code == 413:  # over the body-size limit: refused before any schema is read
            assert response.json()["error"]["message"].startswith("body: larger than the ")
            return
        case.validate_response(response, checks=CHECKS, headers=headers)

    fuzz()


# ---------------------------------------------------------------- what the fuzz found


def test_activity_with_an_explicit_null_id_gets_a_generated_id(fuzz_api):
    """`"id": null` counts as no id: a generated id, not a 500 from a null key in the store."""
    org = uid("org")
    added = fuzz_api.ok(
        f"{ACT}/add", {"organizationId": org, "activities": [{"id": None, "featureType": "f", "actionType": "a"}]}
    )["data"]
    (activity_id,) = added
    assert added[activity_id]["success"] is True and activity_id.startswith("act_")
    records = fuzz_api.ok(f"{ACT}/get", {"organizationId": org})["data"]
    assert [r["id"] for r in records] == [activity_id]
