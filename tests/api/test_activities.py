"""Activity logs over real HTTP (api-v2 §2.11, §4.15, §4.16; semantics §10): add, get (newest
first, paging, filters), update (merge only given fields, missing ids), delete (filters
intersect, at least one required), bad input and isolation."""

from __future__ import annotations

import pytest

from api.support import uid

ADD, GET, UPDATE, DELETE = "/v2/activities/add", "/v2/activities/get", "/v2/activities/update", "/v2/activities/delete"


def record(i=0, **extra):
    return {"featureType": "comment", "actionType": "comment.add", **extra}


def add(api, org, *records):
    result = api.ok(ADD, {"organizationId": org, "activities": list(records)})
    assert result["status"] == "success"
    return result["data"]


def listed(api, org, **filters):
    out, token = [], None
    while True:
        data = {"organizationId": org, **filters}
        if token is not None:
            data["pageToken"] = token
        page = api.ok(GET, data)
        out += page["data"]
        token = page["nextPageToken"]
        if token is None:
            return out


def ids(records):
    return [r["id"] for r in records]


FULL = {
    "id": "full",
    "documentId": "doc-1",
    "targetEntityId": "ann-1",
    "featureType": "comment",
    "actionType": "comment.update",
    "actionUser": {"userId": "ann", "name": "Ann", "email": "ann@x.io", "photoUrl": "https://p/a.png"},
    "changes": {"status": {"from": "OPEN", "to": "RESOLVED"}, "priority": {"from": None, "to": {"id": "P1"}}},
    "entityData": {"text": "hello", "n": [1, 2.5, None]},
    "entityTargetData": ["any", "json", 3],
    "displayMessageTemplate": "{{user}} resolved {{target}}",
    "displayMessageTemplateData": {"user": "Ann", "target": "a comment"},
    "actionIcon": "https://icons.example.com/resolve.svg",
}


# ---------------------------------------------------------------- add and get


def test_add_stores_every_field_and_get_returns_it(api):
    org = uid("org")
    data = add(api, org, dict(FULL), record())
    assert data["full"] == {"success": True, "id": "full", "message": data["full"]["message"]}
    generated = [k for k in data if k != "full"]
    assert len(generated) == 1 and data[generated[0]]["id"] == generated[0] and data[generated[0]]["success"]
    got = {r["id"]: r for r in listed(api, org)}
    full = got["full"]
    for key, value in FULL.items():
        assert full[key] == value, key
    assert full["organizationId"] == org
    assert isinstance(full["createdAt"], int) and full["lastUpdated"] == full["createdAt"]
    minimal = got[generated[0]]
    assert minimal["featureType"] == "comment" and "documentId" not in minimal


def test_add_existing_id_fails_that_item_only(api):
    org = uid("org")
    add(api, org, record(id="a1", entityData="original"))
    data = add(api, org, record(id="a1", entityData="replacement"), record(id="a2"))
    assert data["a1"]["success"] is False and "exists" in data["a1"]["message"]
    assert data["a2"]["success"] is True
    assert {r["id"]: r.get("entityData") for r in listed(api, org)} == {"a1": "original", "a2": None}
    # the same id in another organization is another record
    assert add(api, uid("org"), record(id="a1"))["a1"]["success"] is True


def test_get_is_newest_first_and_pages_every_record_once(api):
    org = uid("org")
    for batch in range(3):
        add(api, org, *[record(id=f"b{batch}-{i}") for i in range(4)])
    expected = [f"b{b}-{i}" for b in (2, 1, 0) for i in (3, 2, 1, 0)]
    assert ids(listed(api, org, pageSize=5)) == expected
    assert ids(listed(api, org, pageSize=1)) == expected
    page = api.ok(GET, {"organizationId": org, "pageSize": 12})
    assert ids(page["data"]) == expected and page["nextPageToken"] is None


def test_get_filters_by_document_and_target_entity(api):
    org = uid("org")
    add(
        api,
        org,
        record(id="d1-t1", documentId="d1", targetEntityId="t1"),
        record(id="d1-t2", documentId="d1", targetEntityId="t2"),
        record(id="d2-t1", documentId="d2", targetEntityId="t1"),
        record(id="none"),
    )
    assert ids(listed(api, org, documentId="d1")) == ["d1-t2", "d1-t1"]
    assert ids(listed(api, org, targetEntityId="t1")) == ["d2-t1", "d1-t1"]
    assert ids(listed(api, org, documentId="d1", targetEntityId="t1")) == ["d1-t1"]
    assert ids(listed(api, org, documentId="d3")) == []
    assert ids(listed(api, uid("org"))) == []


# ---------------------------------------------------------------- update


def test_update_merges_only_the_given_fields(api):
    org = uid("org")
    add(api, org, dict(FULL))
    (before,) = listed(api, org)
    result = api.ok(
        UPDATE,
        {
            "organizationId": org,
            "activities": [
                {
                    "id": "full",
                    "displayMessageTemplate": "{{user}} reopened",
                    "changes": {"status": {"from": "RESOLVED", "to": "OPEN"}},
                },
                {"id": "ghost", "actionIcon": "x"},
            ],
        },
    )
    assert result["status"] == "success"
    assert result["data"]["full"]["success"] is True
    assert result["data"]["ghost"]["success"] is False and "ghost" in result["data"]["ghost"]["message"]
    (after,) = listed(api, org)
    assert after["displayMessageTemplate"] == "{{user}} reopened"
    assert after["changes"] == {"status": {"from": "RESOLVED", "to": "OPEN"}}
    for key in (
        "entityData",
        "entityTargetData",
        "displayMessageTemplateData",
        "actionIcon",
        "actionUser",
        "featureType",
        "actionType",
        "documentId",
        "targetEntityId",
        "createdAt",
    ):
        assert after[key] == before[key], key
    assert after["lastUpdated"] >= before["lastUpdated"]
    # every updatable field, and an explicit null for a free-form one
    api.ok(
        UPDATE,
        {
            "organizationId": org,
            "activities": [
                {
                    "id": "full",
                    "entityData": None,
                    "entityTargetData": {"new": True},
                    "displayMessageTemplateData": {"u": 1},
                    "actionIcon": "icon-2",
                }
            ],
        },
    )
    (last,) = listed(api, org)
    assert last["entityData"] is None and last["entityTargetData"] == {"new": True}
    assert last["displayMessageTemplateData"] == {"u": 1} and last["actionIcon"] == "icon-2"
    assert last["displayMessageTemplate"] == "{{user}} reopened"


def test_update_with_only_missing_ids_still_succeeds(api):
    result = api.ok(UPDATE, {"organizationId": uid("org"), "activities": [{"id": "nope"}, {"id": "nada"}]})
    assert result["status"] == "success"
    assert [v["success"] for v in result["data"].values()] == [False, False]


def test_update_with_no_fields_is_a_no_op_success(api):
    org = uid("org")
    add(api, org, record(id="x", entityData=1))
    assert api.ok(UPDATE, {"organizationId": org, "activities": [{"id": "x"}]})["data"]["x"]["success"] is True
    assert listed(api, org)[0]["entityData"] == 1


# ---------------------------------------------------------------- delete


def test_delete_filters_intersect(api):
    org = uid("org")
    add(
        api,
        org,
        record(id="d1-t1", documentId="d1", targetEntityId="t1"),
        record(id="d1-t2", documentId="d1", targetEntityId="t2"),
        record(id="d2-t1", documentId="d2", targetEntityId="t1"),
        record(id="d2-t2", documentId="d2", targetEntityId="t2"),
    )
    data = api.ok(DELETE, {"organizationId": org, "documentId": "d1", "targetEntityId": "t1"})["data"]
    assert data == {"d1-t1": {"success": True, "message": data["d1-t1"]["message"]}}
    data = api.ok(DELETE, {"organizationId": org, "documentId": "d2", "activityIds": ["d1-t2", "d2-t2", "ghost"]})
    data = data["data"]
    assert data["d2-t2"]["success"] is True
    assert data["d1-t2"]["success"] is False and data["ghost"]["success"] is False
    assert sorted(ids(listed(api, org))) == ["d1-t2", "d2-t1"]


@pytest.mark.parametrize(
    "filters, left",
    [
        ({"documentId": "d1"}, ["d2-t1"]),
        ({"targetEntityId": "t1"}, ["d1-t2"]),
        ({"activityIds": ["d1-t2"]}, ["d1-t1", "d2-t1"]),
    ],
)
def test_delete_each_filter_alone(api, filters, left):
    org = uid("org")
    add(
        api,
        org,
        record(id="d1-t1", documentId="d1", targetEntityId="t1"),
        record(id="d1-t2", documentId="d1", targetEntityId="t2"),
        record(id="d2-t1", documentId="d2", targetEntityId="t1"),
    )
    api.ok(DELETE, {"organizationId": org, **filters})
    assert sorted(ids(listed(api, org))) == left


def test_delete_without_a_filter_is_invalid_argument(api):
    org = uid("org")
    add(api, org, record(id="keep"))
    message = api.err(DELETE, {"organizationId": org})
    assert "documentId" in message and "targetEntityId" in message and "activityIds" in message
    assert ids(listed(api, org)) == ["keep"]


def test_activities_of_comments_can_be_deleted_by_annotation(api):
    org, doc = uid("org"), uid("doc")
    api.ok(
        "/v2/commentannotations/add",
        {
            "organizationId": org,
            "documentId": doc,
            "createOrganization": True,
            "createDocument": True,
            "commentAnnotations": [
                {"annotationId": "c1", "commentData": [{"commentText": "x", "triggerActivities": True}]},
                {"annotationId": "c2", "commentData": [{"commentText": "y", "triggerActivities": True}]},
            ],
        },
    )
    assert len(listed(api, org, documentId=doc)) == 2
    data = api.ok(DELETE, {"organizationId": org, "targetEntityId": "c1"})["data"]
    assert len(data) == 1
    (left,) = listed(api, org)
    assert left["targetEntityId"] == "c2"


def test_activities_of_a_document_without_organization_are_read_by_document_id(api):
    doc = uid("loose")
    api.ok(
        "/v2/commentannotations/add",
        {
            "documentId": doc,
            "createDocument": True,
            "commentAnnotations": [
                {"annotationId": "c1", "commentData": [{"commentText": "x", "triggerActivities": True}]}
            ],
        },
    )
    (record,) = api.ok(GET, {"documentId": doc})["data"]
    assert record["organizationId"] is None and record["targetEntityId"] == "c1"
    assert listed(api, uid("org"), documentId=doc) == []


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "path, data, field",
    [
        (ADD, {"activities": [record()]}, "data.organizationId"),
        (ADD, {"organizationId": "o"}, "data.activities"),
        (ADD, {"organizationId": "o", "activities": []}, "data.activities"),
        (ADD, {"organizationId": "o", "activities": [{"actionType": "a"}]}, "data.activities[0].featureType"),
        (ADD, {"organizationId": "o", "activities": [{"featureType": "f"}]}, "data.activities[0].actionType"),
        (ADD, {"organizationId": "o", "activities": [record(featureType="")]}, "data.activities[0].featureType"),
        (ADD, {"organizationId": "o", "activities": [record(id=5)]}, "data.activities[0].id"),
        (
            ADD,
            {"organizationId": "o", "activities": [record(changes={"f": {"from": 1, "too": 2}})]},
            "data.activities[0].changes.f.too",
        ),
        (ADD, {"organizationId": "o", "activities": [record(changes=[1])]}, "data.activities[0].changes"),
        (
            ADD,
            {"organizationId": "o", "activities": [record(displayMessageTemplateData="x")]},
            "data.activities[0].displayMessageTemplateData",
        ),
        (ADD, {"organizationId": "o", "activities": [record(createdAt=5)]}, "data.activities[0].createdAt"),
        (ADD, {"organizationId": "o", "activities": [record(id="x"), record(id="x")]}, "data.activities[1].id"),
        (GET, {}, "data.organizationId"),
        (GET, {"targetEntityId": "t"}, "data.organizationId"),
        (GET, {"organizationId": "o", "pageSize": 0}, "data.pageSize"),
        (GET, {"organizationId": "o", "pageSize": 1001}, "data.pageSize"),
        (GET, {"organizationId": "o", "pageToken": "bogus"}, "data.pageToken"),
        (GET, {"organizationId": "o", "activityIds": ["a"]}, "data.activityIds"),
        (UPDATE, {"activities": [{"id": "a"}]}, "data.organizationId"),
        (UPDATE, {"organizationId": "o"}, "data.activities"),
        (UPDATE, {"organizationId": "o", "activities": [{}]}, "data.activities[0].id"),
        (
            UPDATE,
            {"organizationId": "o", "activities": [{"id": "a", "featureType": "x"}]},
            "data.activities[0].featureType",
        ),
        (
            UPDATE,
            {"organizationId": "o", "activities": [{"id": "a", "actionIcon": 3}]},
            "data.activities[0].actionIcon",
        ),
        (UPDATE, {"organizationId": "o", "activities": [{"id": "a"}, {"id": "a"}]}, "data.activities[1].id"),
        (DELETE, {"documentId": "d"}, "data.organizationId"),
        (DELETE, {"organizationId": "o", "activityIds": []}, "data.activityIds"),
        (DELETE, {"organizationId": "o", "activityIds": "a"}, "data.activityIds"),
        (DELETE, {"organizationId": "o", "documentId": 1}, "data.documentId"),
        (DELETE, {"organizationId": "o", "documentId": "d", "all": True}, "data.all"),
    ],
)
def test_bad_input(api, path, data, field):
    assert field in api.err(path, data)


# ---------------------------------------------------------------- isolation


def test_workspace_isolation(api, api_b):
    org = uid("org")
    add(api, org, record(id="mine", documentId="d"))
    assert api_b.ok(GET, {"organizationId": org})["data"] == []
    assert (
        api_b.ok(UPDATE, {"organizationId": org, "activities": [{"id": "mine", "actionIcon": "x"}]})["data"]["mine"][
            "success"
        ]
        is False
    )
    assert api_b.ok(DELETE, {"organizationId": org, "documentId": "d"})["data"] == {}
    assert api_b.ok(DELETE, {"organizationId": org, "activityIds": ["mine"]})["data"]["mine"]["success"] is False
    assert add(api_b, org, record(id="mine"))["mine"]["success"] is True
    (still,) = listed(api, org)
    assert still["id"] == "mine" and "actionIcon" not in still and still["documentId"] == "d"
