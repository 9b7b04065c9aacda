"""Two `collab serve` processes on one PostgreSQL database, each request sent to the next
process in turn: racing writes to comment annotations, activities and agents keep every
change and answer as one process would (issue 14, "several processes, the same promises").
Runs whatever COLLAB_TEST_BACKEND says; skipped with COLLAB_SKIP_POSTGRES=1."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from postgres import SKIP_ENV

from api.support import Api, Server, create_workspace, fresh_db, uid
from api.test_concurrency import race

pytestmark = pytest.mark.skipif(os.environ.get(SKIP_ENV) == "1", reason=f"{SKIP_ENV}=1: no PostgreSQL")

ADD, GET, COUNT = "/v2/commentannotations/add", "/v2/commentannotations/get", "/v2/commentannotations/count/get"
MARK_READ, DELETE = "/v2/commentannotations/markread", "/v2/commentannotations/delete"
ACTIVITIES_ADD, ACTIVITIES_GET = "/v2/activities/add", "/v2/activities/get"
AGENT_CREATE, AGENT_GET = "/v2/agents/create", "/v2/agents/get"
AGENT_UPDATE, AGENT_VERSION = "/v2/agents/update", "/v2/agents/version/update"
USERS_ADD = "/v2/users/add"
N = 20


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    """A client whose requests alternate between two server processes on one PostgreSQL database."""
    root = tmp_path_factory.mktemp("processes-collab")
    db = str(fresh_db(root, "collab", backend="postgres"))
    creds = create_workspace(db)
    srv = Server(db, root / "collab.log", processes=2).start()
    try:
        with srv.client(creds) as client:
            yield Api(client)
    finally:
        srv.stop()


def test_racing_version_updates_of_a_built_in_each_get_their_own_number(api):
    catalogue = api.ok(AGENT_GET, {"agentId": "broken-links"})["data"]
    answers = race(lambda i: api.ok(AGENT_VERSION, {"agentId": "broken-links", "config": {"run": i}}), N)
    assert sorted(a["data"]["version"] for a in answers) == list(range(2, N + 2))
    versions = [api.ok(AGENT_GET, {"agentId": "broken-links", "version": n})["data"] for n in range(1, N + 2)]
    assert (versions[0]["instructions"], versions[0]["config"]) == (catalogue["instructions"], None)
    assert sorted(v["config"]["run"] for v in versions[1:]) == list(range(N))  # no version lost or doubled


def test_racing_identity_edits_of_different_fields_keep_both(api):
    agents = [api.ok(AGENT_CREATE, {"name": uid("agent"), "instructions": "x"})["data"]["agentId"] for _ in range(5)]

    def edit(i):
        agent_id = agents[i // 2]
        change = {"name": f"name-{agent_id}"} if i % 2 else {"description": f"about {agent_id}"}
        return api.ok(AGENT_UPDATE, {"agentId": agent_id, **change})

    race(edit, 2 * len(agents))
    for agent_id in agents:
        view = api.ok(AGENT_GET, {"agentId": agent_id})["data"]
        assert (view["name"], view["description"], view["version"]) == (f"name-{agent_id}", f"about {agent_id}", 1)


def test_one_activity_id_raced_from_both_processes_is_added_once(api):
    org, activity_id = uid("org"), uid("act")
    record = {"id": activity_id, "featureType": "comment", "actionType": "comment.add", "documentId": "d"}
    answers = race(lambda i: api.ok(ACTIVITIES_ADD, {"organizationId": org, "activities": [record]}), N)
    assert sum(a["data"][activity_id]["success"] for a in answers) == 1
    assert [r["id"] for r in api.ok(ACTIVITIES_GET, {"organizationId": org})["data"]] == [activity_id]


def test_one_annotation_id_raced_from_both_processes_is_added_once(api):
    org, doc = uid("org"), uid("doc")
    annotation = {"annotationId": "only", "commentData": [{"commentText": "x", "from": {"userId": "w"}}]}
    data = {"organizationId": org, "documentId": doc, "createOrganization": True, "createDocument": True}
    answers = race(lambda i: api.ok(ADD, {**data, "commentAnnotations": [annotation]}), N)
    assert sum(a["data"]["only"]["success"] for a in answers) == 1
    assert [a["annotationId"] for a in api.ok(GET, {"organizationId": org, "documentId": doc})["data"]] == ["only"]


def test_counts_agree_with_the_annotations_after_racing_adds_reads_and_deletes(api):
    org, doc = uid("org"), uid("doc")
    where = {"organizationId": org, "documentId": doc}
    api.ok(ADD, {**where, "createOrganization": True, "createDocument": True, "commentAnnotations": [note("seed")]})
    api.ok(
        USERS_ADD,
        {
            "organizationId": org,
            "users": [{"userId": u, "name": u, "email": f"{u}@x.io", "accessRole": "editor"} for u in ("r", "w")],
        },
    )
    api.ok(ADD, {**where, "commentAnnotations": [note(f"a{i}") for i in range(N)]})

    def act(i):
        if i % 3 == 0:
            return api.ok(ADD, {**where, "commentAnnotations": [note(f"b{i}")]})
        if i % 3 == 1:
            return api.ok(MARK_READ, {**where, "userId": "r", "annotationIds": [f"a{i}", f"a{i - 1}", f"b{i - 1}"]})
        return api.ok(DELETE, {**where, "annotationIds": [f"a{i - 1}", f"a{i}"]})

    race(act, 3 * N)
    marked = race(lambda i: api.ok(MARK_READ, {**where, "userId": "r", "annotationIds": [f"b{3 * i}"]}), N)
    stored = api.ok(GET, {**where, "pageSize": 500})["data"]
    count = api.ok(COUNT, {"organizationId": org, "documentIds": [doc], "userId": "r"})["data"][doc]
    assert count["total"] == len(stored)
    # r read every b-annotation (all still there) and some a-annotations; unread = the rest
    read_by_r = {f"b{3 * i}" for i, m in enumerate(marked) if m["data"][f"b{3 * i}"]["success"]}
    assert len(read_by_r) == N
    assert 0 <= count["unread"] <= len(stored) - len(read_by_r)
    unread_ids = {a["annotationId"] for a in stored} - read_by_r
    api.ok(MARK_READ, {**where, "userId": "r", "annotationIds": sorted(unread_ids)})
    assert api.ok(COUNT, {"organizationId": org, "documentIds": [doc], "userId": "r"})["data"][doc] == {
        "total": len(stored),
        "unread": 0,
    }
    assert api.ok(COUNT, {"organizationId": org, "documentIds": [doc], "userId": "w"})["data"][doc] == {
        "total": len(stored),
        "unread": len(stored),
    }


def note(annotation_id: str) -> dict:
    return {"annotationId": annotation_id, "commentData": [{"commentText": annotation_id}]}


def test_paging_while_both_processes_add_passes_over_nothing(api):
    """A reader walking the pages of an organization's annotations while writers on both
    processes add more never skips one: what it saw up to its last item is everything stored
    up to that item."""
    org, docs = uid("org"), [uid("doc") for _ in range(4)]
    for doc in docs:
        api.ok(
            ADD,
            {
                "organizationId": org,
                "documentId": doc,
                "createOrganization": True,
                "createDocument": True,
                "commentAnnotations": [note(f"{doc}-0")],
            },
        )
    stop = threading.Event()

    def write(i):
        n = 0
        while not stop.is_set():
            n += 1
            api.ok(ADD, {"organizationId": org, "documentId": docs[i % 4], "commentAnnotations": [note(f"w{i}-{n}")]})

    walks = []
    with ThreadPoolExecutor(8) as pool:
        writers = [pool.submit(write, i) for i in range(7)]
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline:
            walks.append(every_id(api, {"organizationId": org, "pageSize": 7}))
        stop.set()
        for w in writers:
            w.result()
    final = every_id(api, {"organizationId": org})
    assert len(walks) > 1 and len(final) > 2 * len(walks[0])
    for walk in walks:
        assert len(walk) == len(set(walk))
        upto = final[: final.index(walk[-1]) + 1]
        assert [a for a in upto if a not in set(walk)] == []


def every_id(api, data: dict) -> list[str]:
    """The annotation ids of every page, in order."""
    ids, token = [], None
    while True:
        page = api.ok(GET, {**data, **({"pageToken": token} if token else {})})
        ids += [a["annotationId"] for a in page["data"]]
        token = page["nextPageToken"]
        if token is None:
            return ids
