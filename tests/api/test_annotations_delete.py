"""Delete comment annotations over real HTTP (api-v2 §4.14; semantics §9): every filter,
the three rules, URL stamping and normalisation, absent ids, documents without organization,
bad input and isolation. (Agent filters without advanced queries: test_annotations_settings.py.)"""

from __future__ import annotations

import pytest

from api.support import uid

ADD, GET, DELETE = "/v2/commentannotations/add", "/v2/commentannotations/get", "/v2/commentannotations/delete"


def human(annotation_id, author="ann", location=None, **extra):
    a = {"annotationId": annotation_id, "commentData": [{"commentText": "human", "from": {"userId": author}}], **extra}
    if location is not None:
        a["location"] = {"id": location, "locationName": location}
    return a


def agent(
    annotation_id,
    agent_id="spell-check",
    url="https://docs.example.com/guide",
    suggestion=False,
    status=None,
    location=None,
    author=None,
):
    comment = {"commentText": "finding", "agent": {"agentId": agent_id, "agentName": agent_id}}
    if url is not None:
        comment["agent"]["url"] = url
    if author is not None:
        comment["from"] = {"userId": author}
    a = {"annotationId": annotation_id, "commentData": [comment]}
    if suggestion:
        a["suggestion"] = {"targetId": "p1", "oldValue": "teh", "newValue": "the"}
    if status is not None:
        a["status"] = status
    if location is not None:
        a["location"] = {"id": location}
    return a


ACCEPTED = {"id": "ACCEPTED", "name": "Accepted", "type": "terminal"}


def seed(api, *annotations, org=True):
    """A fresh document holding these annotations; returns the address {organizationId?, documentId}."""
    where = {"documentId": uid("doc")}
    if org:
        where["organizationId"] = uid("org")
    result = api.ok(
        ADD, {**where, "createOrganization": org, "createDocument": True, "commentAnnotations": list(annotations)}
    )["data"]
    assert all(v["success"] for v in result.values())
    return where


def remaining(api, where):
    return sorted(a["annotationId"] for a in api.ok(GET, where)["data"])


def delete(api, where, **filters):
    result = api.ok(DELETE, {**where, **filters})
    assert result["status"] == "success" and isinstance(result["message"], str)
    for key, item in result["data"].items():
        assert set(item) == {"success", "id", "message"} and item["id"] == key
    return result["data"]


def deleted(data):
    return sorted(k for k, v in data.items() if v["success"])


def mixed(api):
    """The usual cast: two humans, spell-check findings on two pages, a pending and an
    accepted suggestion, a grammar finding, and an agent annotation created before stamping."""
    return seed(
        api,
        human("h1", author="ann", location="intro"),
        human("h2", author="bob", location="body"),
        agent("s-guide", url="https://docs.example.com/guide", location="intro"),
        agent("s-api", url="https://docs.example.com/api"),
        agent("sugg-pending", suggestion=True, url="https://docs.example.com/guide"),
        agent("sugg-accepted", suggestion=True, status=ACCEPTED, url="https://docs.example.com/guide"),
        agent("g-guide", agent_id="grammar-check", url="https://docs.example.com/guide#setup", suggestion=True),
        agent("unstamped", url=None),
    )


ALL = ["g-guide", "h1", "h2", "s-api", "s-guide", "sugg-accepted", "sugg-pending", "unstamped"]


# ---------------------------------------------------------------- plain filters


def test_delete_without_filters_deletes_every_annotation_of_the_document(api):
    where = mixed(api)
    other = seed(api, human("keep"))
    assert deleted(delete(api, where)) == ALL
    assert remaining(api, where) == []
    assert remaining(api, other) == ["keep"]


def test_annotation_ids_and_absent_ids(api):
    where = mixed(api)
    data = delete(api, where, annotationIds=["h1", "s-api", "ghost"])
    assert deleted(data) == ["h1", "s-api"]
    assert data["ghost"]["success"] is False and "ghost" in data["ghost"]["message"]
    # deleting again: absent now
    again = delete(api, where, annotationIds=["h1"])
    assert again["h1"]["success"] is False
    assert remaining(api, where) == sorted(set(ALL) - {"h1", "s-api"})


def test_location_ids_and_user_ids(api):
    where = mixed(api)
    assert deleted(delete(api, where, locationIds=["intro", "nowhere"])) == ["h1", "s-guide"]
    assert deleted(delete(api, where, userIds=["bob"])) == ["h2"]
    assert deleted(delete(api, where, userIds=["nobody"])) == []
    assert "h2" not in remaining(api, where)


def test_plain_filters_intersect(api):
    where = seed(
        api,
        human("a", author="ann", location="L1"),
        human("b", author="bob", location="L1"),
        human("c", author="ann", location="L2"),
    )
    data = delete(api, where, locationIds=["L1"], userIds=["ann"], annotationIds=["a", "b", "c"])
    assert deleted(data) == ["a"]
    assert data["b"]["success"] is False and data["c"]["success"] is False
    assert "filters" in data["b"]["message"]
    assert remaining(api, where) == ["b", "c"]


# ---------------------------------------------------------------- agent filters


def test_agent_id_alone_deletes_all_of_that_agents_annotations(api):
    where = mixed(api)
    assert deleted(delete(api, where, agentId="spell-check")) == [
        "s-api",
        "s-guide",
        "sugg-accepted",
        "sugg-pending",
        "unstamped",
    ]
    assert remaining(api, where) == ["g-guide", "h1", "h2"]


def test_agent_suggestions_alone_deletes_pending_suggestions_only(api):
    where = mixed(api)
    # a human annotation carrying a suggestion is not an agent suggestion
    assert api.ok(ADD, {**where, "commentAnnotations": [human("human-sugg", suggestion={"newValue": 1})]})
    assert deleted(delete(api, where, agentSuggestions=True)) == ["g-guide", "sugg-pending"]
    assert "sugg-accepted" in remaining(api, where) and "human-sugg" in remaining(api, where)


def test_agent_suggestions_false_is_no_filter(api):
    where = seed(api, human("h"), agent("a"))
    assert deleted(delete(api, where, agentSuggestions=False, annotationIds=["h"])) == ["h"]


def test_agent_urls_alone_deletes_agent_annotations_stamped_for_those_pages(api):
    where = mixed(api)
    assert deleted(delete(api, where, agentUrls=["https://docs.example.com/guide"])) == [
        "g-guide",
        "s-guide",
        "sugg-accepted",
        "sugg-pending",
    ]
    assert remaining(api, where) == ["h1", "h2", "s-api", "unstamped"]


def test_agent_filters_are_and_combined_and_intersect_annotation_ids(api):
    where = mixed(api)
    url = ["https://docs.example.com/guide"]
    assert deleted(delete(api, where, agentId="spell-check", agentSuggestions=True, agentUrls=url)) == ["sugg-pending"]
    where = mixed(api)
    assert deleted(delete(api, where, agentId="grammar-check", agentUrls=["https://docs.example.com/api"])) == []
    data = delete(api, where, agentId="spell-check", annotationIds=["s-api", "h1", "g-guide", "ghost"])
    assert deleted(data) == ["s-api"]
    assert [data[k]["success"] for k in ("h1", "g-guide", "ghost")] == [False, False, False]
    assert "h1" in remaining(api, where) and "g-guide" in remaining(api, where)
    assert deleted(delete(api, where, agentSuggestions=True, annotationIds=["sugg-accepted", "sugg-pending"])) == [
        "sugg-pending"
    ]


def test_pending_becomes_accepted_only_by_a_terminal_status(api):
    where = seed(
        api,
        agent("ongoing", suggestion=True, status={"id": "IN_PROGRESS", "type": "ongoing"}),
        agent("resolved", suggestion=True, status={"id": "RESOLVED", "type": "terminal"}),
        agent("no-type", suggestion=True, status={"id": "CUSTOM"}),
    )
    assert deleted(delete(api, where, agentSuggestions=True)) == ["no-type", "ongoing"]


# ---------------------------------------------------------------- URL stamping and normalisation


@pytest.mark.parametrize(
    "stamped, query, matches",
    [
        ("https://docs.example.com/guide", "https://docs.example.com/guide", True),
        ("https://docs.example.com/guide", "HTTPS://DOCS.EXAMPLE.COM/guide", True),
        ("HTTPS://Docs.Example.COM/guide", "https://docs.example.com/guide", True),
        ("https://docs.example.com/guide#intro", "https://docs.example.com/guide", True),
        ("https://docs.example.com/guide", "https://docs.example.com/guide#other", True),
        ("https://docs.example.com/guide", "  https://docs.example.com/guide  ", True),
        ("https://docs.example.com:443/guide", "https://docs.example.com/guide", True),
        ("http://docs.example.com:80", "http://docs.example.com/", True),
        ("https://docs.example.com/guide?v=2", "https://docs.example.com/guide?v=2", True),
        ("https://docs.example.com/guide", "https://docs.example.com/Guide", False),
        ("https://docs.example.com/guide?v=2", "https://docs.example.com/guide", False),
        ("https://docs.example.com/guide", "http://docs.example.com/guide", False),
        ("https://docs.example.com:8443/guide", "https://docs.example.com/guide", False),
        ("https://docs.example.com/guide", "https://docs.example.com/guide/", False),
    ],
)
def test_url_normalisation(api, stamped, query, matches):
    where = seed(api, agent("a", url=stamped), human("h"))
    assert deleted(delete(api, where, agentUrls=[query])) == (["a"] if matches else [])


@pytest.mark.parametrize(
    "unusable",
    [
        "",
        "   ",
        "#",
        "#intro",
        "/guide",
        "guide",
        "mailto:a@example.com",
        "javascript:alert(1)",
        "ftp://docs.example.com/guide",
        "https://",
        "http:///x",
    ],
)
def test_unusable_agent_url_entries_are_ignored(api, unusable):
    where = seed(api, agent("a", url="https://docs.example.com/guide"), agent("b", url="https://docs.example.com/b"))
    data = delete(api, where, agentUrls=[unusable, "https://docs.example.com/guide"])
    assert deleted(data) == ["a"]


@pytest.mark.parametrize(
    "urls", [[""], ["   "], ["#"], ["#intro", "  #x "], ["", "#top", "mailto:x@y.z"], ["ftp://docs.example.com/guide"]]
)
def test_no_usable_agent_url_is_invalid_argument_and_deletes_nothing(api, urls):
    where = mixed(api)
    message = api.err(DELETE, {**where, "agentUrls": urls})
    assert "data.agentUrls" in message
    api.err(DELETE, {**where, "agentUrls": urls, "agentId": "spell-check", "annotationIds": ["s-guide"]})
    assert remaining(api, where) == ALL


def test_agent_annotations_without_a_stamp_never_match_urls(api):
    where = seed(
        api,
        agent("unstamped", url=None),
        agent("blank", url="  "),
        agent("fragment", url="#top"),
        agent("relative", url="/guide"),
        human("h"),
    )
    assert deleted(delete(api, where, agentUrls=["https://docs.example.com/guide", "https://x.io/"])) == []
    # they are still agent annotations for the other filters
    assert deleted(delete(api, where, agentId="spell-check")) == ["blank", "fragment", "relative", "unstamped"]


def test_a_human_comment_beside_an_agent_one_makes_an_agent_annotation(api):
    mixed_annotation = {
        "annotationId": "both",
        "commentData": [
            {"commentText": "human first", "from": {"userId": "ann"}},
            {"commentText": "agent reply", "agent": {"agentId": "spell-check", "url": "https://x.io/p"}},
        ],
    }
    where = seed(api, mixed_annotation, human("h"))
    assert deleted(delete(api, where, agentUrls=["https://x.io/p"])) == ["both"]


# ---------------------------------------------------------------- addressing, errors, isolation


def test_document_without_organization(api):
    where = seed(api, human("h1"), agent("a1"), org=False)
    assert "organizationId" not in where
    assert deleted(delete(api, where, agentId="spell-check")) == ["a1"]
    assert deleted(delete(api, where)) == ["h1"]


def test_missing_document_is_not_found(api):
    where = seed(api, human("h1"))
    api.err(DELETE, {"organizationId": where["organizationId"], "documentId": uid("doc")}, "NOT_FOUND")
    api.err(DELETE, {"organizationId": uid("org"), "documentId": where["documentId"]}, "NOT_FOUND")
    # an organization's document is not addressed by documentId alone
    api.err(DELETE, {"documentId": where["documentId"]}, "NOT_FOUND")
    assert remaining(api, where) == ["h1"]


@pytest.mark.parametrize(
    "data, field",
    [
        ({}, "data.documentId"),
        ({"documentId": ""}, "data.documentId"),
        ({"documentId": "d", "annotationIds": "a"}, "data.annotationIds"),
        ({"documentId": "d", "annotationIds": []}, "data.annotationIds"),
        ({"documentId": "d", "locationIds": []}, "data.locationIds"),
        ({"documentId": "d", "userIds": [3]}, "data.userIds[0]"),
        ({"documentId": "d", "agentId": ""}, "data.agentId"),
        ({"documentId": "d", "agentId": 5}, "data.agentId"),
        ({"documentId": "d", "agentSuggestions": "yes"}, "data.agentSuggestions"),
        ({"documentId": "d", "agentUrls": []}, "data.agentUrls"),
        ({"documentId": "d", "agentUrls": "https://x.io"}, "data.agentUrls"),
        ({"documentId": "d", "agentUrls": [None]}, "data.agentUrls[0]"),
        ({"documentId": "d", "everything": True}, "data.everything"),
    ],
)
def test_bad_input(api, data, field):
    assert field in api.err(DELETE, data)


def test_workspace_isolation(api, api_b):
    where = mixed(api)
    api_b.err(DELETE, where, "NOT_FOUND")
    api_b.err(DELETE, {**where, "annotationIds": ["h1"]}, "NOT_FOUND")
    # B's document with the same ids is another document
    api_b.ok(ADD, {**where, "createOrganization": True, "createDocument": True, "commentAnnotations": [human("h1")]})
    assert deleted(api_b.ok(DELETE, where)["data"]) == ["h1"]
    assert remaining(api, where) == ALL
