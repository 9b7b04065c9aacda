"""The advanced-queries prerequisite (api-v2 §4.12, §4.14 rule 2, §9.4; semantics §2, §8):
a workspace with `advancedQueries` off gets FAILED_PRECONDITION from count, and NOT_FOUND —
without deleting anything — from delete with agent filters, while everything else works.

A second server runs for this module on its own database (DuckDB file or PostgreSQL, as the
run's backend): the workspace is created with the command line, its setting switched off in
the database before the server opens it (no endpoint changes workspace settings)."""

from __future__ import annotations

import duckdb
import psycopg
import pytest

from api.support import Api, Server, create_workspace, fresh_db, is_url, uid

ADD, GET, COUNT = "/v2/commentannotations/add", "/v2/commentannotations/get", "/v2/commentannotations/count/get"
DELETE, MARK_READ = "/v2/commentannotations/delete", "/v2/commentannotations/markread"


def switch_off_advanced_queries(db) -> None:
    sql = "UPDATE workspaces SET advanced_queries = false"
    if is_url(db):
        with psycopg.connect(str(db)) as con:
            con.execute(sql)
    else:
        con = duckdb.connect(str(db))
        try:
            con.execute(sql)
        finally:
            con.close()


@pytest.fixture(scope="module")
def basic(tmp_path_factory):
    root = tmp_path_factory.mktemp("basic-server")
    db = fresh_db(root, "basic")
    creds = create_workspace(db)
    switch_off_advanced_queries(db)
    srv = Server(db, root / "server.log").start()
    try:
        with srv.client(creds) as client:
            yield Api(client)
    finally:
        srv.stop()


def seed(api):
    where = {"organizationId": uid("org"), "documentId": uid("doc")}
    comment = {"commentText": "finding", "agent": {"agentId": "spell-check", "url": "https://x.io/p"}}
    api.ok(
        ADD,
        {
            **where,
            "createOrganization": True,
            "createDocument": True,
            "commentAnnotations": [
                {"annotationId": "agent-1", "commentData": [comment], "suggestion": {"newValue": 1}},
                {"annotationId": "human-1", "commentData": [{"commentText": "hi", "from": {"userId": "ann"}}]},
            ],
        },
    )
    return where


def remaining(api, where):
    return sorted(a["annotationId"] for a in api.ok(GET, where)["data"])


def test_count_needs_advanced_queries(basic):
    where = seed(basic)
    message = basic.err(
        COUNT,
        {"organizationId": where["organizationId"], "documentIds": [where["documentId"]], "userId": "ann"},
        "FAILED_PRECONDITION",
    )
    assert "advancedQueries" in message
    # bad input is still reported as such
    basic.err(COUNT, {"organizationId": where["organizationId"], "userId": "ann"}, "INVALID_ARGUMENT")


@pytest.mark.parametrize(
    "filters",
    [
        {"agentId": "spell-check"},
        {"agentSuggestions": True},
        {"agentUrls": ["https://x.io/p"]},
        {"agentId": "spell-check", "annotationIds": ["agent-1"]},
        {"agentUrls": ["https://x.io/p"], "locationIds": ["l"]},
    ],
)
def test_agent_filters_without_advanced_queries_are_not_found_and_delete_nothing(basic, filters):
    where = seed(basic)
    message = basic.err(DELETE, {**where, **filters}, "NOT_FOUND")
    assert "advancedQueries" in message
    assert remaining(basic, where) == ["agent-1", "human-1"]


def test_no_usable_agent_url_is_still_invalid_argument(basic):
    where = seed(basic)
    basic.err(DELETE, {**where, "agentUrls": ["#top"]}, "INVALID_ARGUMENT")
    assert remaining(basic, where) == ["agent-1", "human-1"]


def test_everything_else_works_without_advanced_queries(basic):
    where = seed(basic)
    assert remaining(basic, {**where, "userId": "ann"}) == []  # ann has no access to the document
    basic.ok(MARK_READ, {**where, "userId": "ann", "annotationIds": ["human-1"]})
    # agentSuggestions: false is not an agent filter
    data = basic.ok(DELETE, {**where, "agentSuggestions": False, "annotationIds": ["human-1"]})["data"]
    assert data["human-1"]["success"] is True
    assert basic.ok(DELETE, where)["data"]["agent-1"]["success"] is True
    assert remaining(basic, where) == []
