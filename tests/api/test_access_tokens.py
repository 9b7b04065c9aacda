"""Generate token, add permissions and remove permissions over real HTTP (api-v2 §2.1, §4.1,
§4.2, §5; semantics §8). The workspace secret never leaves the server, so these tests read the
token's header and claims without verifying the signature; test_access_envelope.py verifies
signatures with the secret of a server it starts itself."""

from __future__ import annotations

import time

import jwt
import pytest

from api.support import uid

GEN, PADD, PREM = "/v2/auth/generate_token", "/v2/auth/permissions/add", "/v2/auth/permissions/remove"
UADD, UGET = "/v2/users/add", "/v2/users/get"
FADD, DADD = "/v2/folders/add", "/v2/documents/add"


def token_request(user_id="ann", resources=None, **props) -> dict:
    properties = {"name": "Ann", "email": "ann@example.com", **props}
    return {
        "userId": user_id,
        "userProperties": properties,
        "permissions": {"resources": resources if resources is not None else [{"type": "organization", "id": "acme"}]},
    }


def claims_of(token: str) -> dict:
    return jwt.decode(token, options={"verify_signature": False})


def users(api, org: str, **scope) -> dict:
    return {u["userId"]: u for u in api.ok(UGET, {"organizationId": org, **scope})["data"]}


# ---------------------------------------------------------------- generate token


def test_generate_token_is_an_hs256_jwt_with_the_claims(api):
    before = int(time.time())
    result = api.ok(
        GEN,
        token_request(
            resources=[
                {"type": "organization", "id": "acme"},
                {
                    "type": "document",
                    "id": "doc-1",
                    "organizationId": "acme",
                    "accessRole": "viewer",
                    "expiresAt": 1_900_000_000,
                },
                {"type": "folder", "id": "f-1", "organizationId": "acme", "expiresAt": 1_900_000_000.5},
            ],
            isAdmin=True,
        ),
    )
    after = int(time.time())
    assert result["status"] == "success" and isinstance(result["message"], str)
    assert set(result["data"]) == {"token"}
    token = result["data"]["token"]
    assert jwt.get_unverified_header(token)["alg"] == "HS256"
    claims = claims_of(token)
    assert isinstance(claims["iss"], str) and claims["iss"]
    assert claims["sub"] == "ann"
    assert before <= claims["iat"] <= after
    assert claims["exp"] - claims["iat"] == 48 * 3600
    assert isinstance(claims["jti"], str) and claims["jti"]
    assert claims["user"] == {"userId": "ann", "name": "Ann", "email": "ann@example.com", "isAdmin": True}
    assert claims["permissions"] == {
        "resources": [
            {"type": "organization", "id": "acme", "accessRole": "editor"},
            {
                "type": "document",
                "id": "doc-1",
                "organizationId": "acme",
                "accessRole": "viewer",
                "expiresAt": 1_900_000_000,
            },
            {
                "type": "folder",
                "id": "f-1",
                "organizationId": "acme",
                "accessRole": "editor",
                "expiresAt": 1_900_000_000.5,
            },
        ]
    }


def test_generate_token_defaults_is_admin_false_and_each_token_is_unique(api):
    a = claims_of(api.ok(GEN, token_request())["data"]["token"])
    b = claims_of(api.ok(GEN, token_request())["data"]["token"])
    assert a["user"]["isAdmin"] is False
    assert a["jti"] != b["jti"]


def test_generate_token_is_signed_with_a_per_workspace_secret(api, api_b):
    """Same request, same second: the signatures differ because the secrets do."""
    for _ in range(5):
        a = api.ok(GEN, token_request())["data"]["token"]
        b = api_b.ok(GEN, token_request())["data"]["token"]
        ca, cb = claims_of(a), claims_of(b)
        if ca["iat"] == cb["iat"]:
            break
    assert a.split(".")[2] != b.split(".")[2]


def test_generate_token_writes_nothing(api):
    org = uid("org")
    api.ok(GEN, token_request(resources=[{"type": "organization", "id": org}]))
    api.err(UGET, {"organizationId": org}, code="NOT_FOUND")


def test_organization_id_in_user_properties_is_refused(api):
    message = api.err(GEN, token_request(organizationId="acme"))
    assert message.startswith("data.userProperties.organizationId")
    assert "type organization" in message


def test_the_organization_must_be_a_resource_entry(api):
    message = api.err(GEN, token_request(resources=[{"type": "document", "id": "d", "organizationId": "acme"}]))
    assert message.startswith("data.permissions.resources") and "organization" in message


@pytest.mark.parametrize("kind", ["document", "folder"])
def test_organization_id_is_required_on_document_and_folder_resources(api, kind):
    message = api.err(GEN, token_request(resources=[{"type": "organization", "id": "acme"}, {"type": kind, "id": "x"}]))
    assert message.startswith("data.permissions.resources[1].organizationId")


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda d: d.pop("userId"), "data.userId"),
        (lambda d: d.update(userId=""), "data.userId"),
        (lambda d: d.update(userId=1), "data.userId"),
        (lambda d: d.pop("userProperties"), "data.userProperties"),
        (lambda d: d["userProperties"].pop("name"), "data.userProperties.name"),
        (lambda d: d["userProperties"].pop("email"), "data.userProperties.email"),
        (lambda d: d["userProperties"].update(email="nope"), "data.userProperties.email"),
        (lambda d: d["userProperties"].update(isAdmin="yes"), "data.userProperties.isAdmin"),
        (lambda d: d["userProperties"].update(role="x"), "data.userProperties.role"),
        (lambda d: d.pop("permissions"), "data.permissions"),
        (lambda d: d.update(permissions={}), "data.permissions.resources"),
        (lambda d: d.update(permissions={"resources": []}), "data.permissions.resources"),
        (lambda d: d.update(permissions={"resources": {}}), "data.permissions.resources"),
        (lambda d: d["permissions"]["resources"][0].update(type="workspace"), "data.permissions.resources[0].type"),
        (lambda d: d["permissions"]["resources"][0].pop("id"), "data.permissions.resources[0].id"),
        (
            lambda d: d["permissions"]["resources"][0].update(accessRole="owner"),
            "data.permissions.resources[0].accessRole",
        ),
        (
            lambda d: d["permissions"]["resources"][0].update(expiresAt="tomorrow"),
            "data.permissions.resources[0].expiresAt",
        ),
        (lambda d: d["permissions"]["resources"][0].update(expiresAt=True), "data.permissions.resources[0].expiresAt"),
        (lambda d: d["permissions"]["resources"][0].update(expiresAt=-1), "data.permissions.resources[0].expiresAt"),
        (lambda d: d["permissions"]["resources"][0].update(expiresAt=1e300), "data.permissions.resources[0].expiresAt"),
        (
            lambda d: d["permissions"]["resources"][0].update(organizationId="other"),
            "data.permissions.resources[0].organizationId",
        ),
        (lambda d: d["permissions"]["resources"][0].update(name="x"), "data.permissions.resources[0].name"),
        (lambda d: d["permissions"].update(other=[]), "data.permissions.other"),
        (lambda d: d.update(organizationId="acme"), "data.organizationId"),
    ],
)
def test_generate_token_bad_input(api, mutate, field):
    data = token_request()
    mutate(data)
    assert api.err(GEN, data).startswith(field)


# ---------------------------------------------------------------- add permissions


def test_add_permissions_grants_memberships(api):
    org = uid("org")
    api.ok(FADD, {"organizationId": org, "folders": [{"folderId": "f"}]})
    api.ok(DADD, {"organizationId": org, "documents": [{"documentId": "d"}]})
    result = api.ok(
        PADD,
        {
            "userId": "pat",
            "permissions": {
                "resources": [
                    {"type": "organization", "id": org, "accessRole": "viewer"},
                    {"type": "folder", "id": "f", "organizationId": org},
                    {
                        "type": "document",
                        "id": "d",
                        "organizationId": org,
                        "accessRole": "viewer",
                        "expiresAt": 4_000_000_000,
                    },
                ]
            },
        },
    )
    assert result["status"] == "success" and isinstance(result["message"], str)
    assert set(result["data"]) == {org, "f", "d"}
    assert all(v["success"] is True and isinstance(v["message"], str) for v in result["data"].values())
    assert users(api, org)["pat"]["accessRole"] == "viewer"
    assert users(api, org, folderId="f")["pat"]["accessRole"] == "editor"  # default editor
    assert users(api, org, documentId="d")["pat"]["accessRole"] == "viewer"
    # Granting again replaces the role.
    api.ok(PADD, {"userId": "pat", "permissions": {"resources": [{"type": "organization", "id": org}]}})
    assert users(api, org)["pat"]["accessRole"] == "editor"


def test_add_permissions_creates_the_organization_and_an_unknown_user(api):
    org = uid("org")
    api.ok(PADD, {"userId": "newbie", "permissions": {"resources": [{"type": "organization", "id": org}]}})
    assert users(api, org)["newbie"] == {
        "userId": "newbie",
        "name": "",
        "email": "",
        "initial": "N",
        "accessRole": "editor",
    }
    api.ok(UADD, {"organizationId": org, "users": [{"userId": "newbie", "name": "Nia", "email": "nia@example.com"}]})
    assert users(api, org)["newbie"]["name"] == "Nia"


def test_add_permissions_on_a_missing_document_or_folder_fails_that_entry(api):
    org = uid("org")
    data = api.ok(
        PADD,
        {
            "userId": "pat",
            "permissions": {
                "resources": [
                    {"type": "organization", "id": org},
                    {"type": "document", "id": "ghost-doc", "organizationId": org},
                    {"type": "folder", "id": "ghost-folder", "organizationId": org},
                ]
            },
        },
    )["data"]
    assert data[org]["success"] is True
    assert data["ghost-doc"]["success"] is False and "ghost-doc" in data["ghost-doc"]["message"]
    assert data["ghost-folder"]["success"] is False
    api.err(UGET, {"organizationId": org, "documentId": "ghost-doc"}, code="NOT_FOUND")


def test_add_permissions_with_only_failing_entries_writes_nothing(api):
    org = uid("org")
    data = api.ok(
        PADD, {"userId": "pat", "permissions": {"resources": [{"type": "document", "id": "d", "organizationId": org}]}}
    )["data"]
    assert data["d"]["success"] is False
    api.err(UGET, {"organizationId": org}, code="NOT_FOUND")


def test_a_past_expiry_is_accepted_and_counts_as_expired(api):
    org = uid("org")
    api.ok(UADD, {"organizationId": org, "users": [{"userId": "keep"}]})
    data = api.ok(
        PADD, {"userId": "late", "permissions": {"resources": [{"type": "organization", "id": org, "expiresAt": 1}]}}
    )["data"]
    assert data[org]["success"] is True
    assert list(users(api, org)) == ["keep"]


@pytest.mark.parametrize(
    "data, field",
    [
        ({"permissions": {"resources": [{"type": "organization", "id": "o"}]}}, "data.userId"),
        ({"userId": "u"}, "data.permissions"),
        ({"userId": "u", "permissions": {"resources": []}}, "data.permissions.resources"),
        (
            {"userId": "u", "permissions": {"resources": [{"type": "document", "id": "d"}]}},
            "data.permissions.resources[0].organizationId",
        ),
        (
            {"userId": "u", "permissions": {"resources": [{"type": "folder", "id": "f"}]}},
            "data.permissions.resources[0].organizationId",
        ),
        (
            {"userId": "u", "permissions": {"resources": [{"type": "organization", "id": "o", "accessRole": "root"}]}},
            "data.permissions.resources[0].accessRole",
        ),
        (
            {"userId": "u", "permissions": {"resources": [{"type": "organization", "id": "o", "expiresAt": "1"}]}},
            "data.permissions.resources[0].expiresAt",
        ),
        (
            {
                "userId": "u",
                "permissions": {
                    "resources": [
                        {"type": "organization", "id": "o"},
                        {"type": "folder", "id": "o", "organizationId": "o"},
                    ]
                },
            },
            "data.permissions.resources",
        ),
        (
            {"userId": "u", "permissions": {"resources": [{"type": "organization", "id": "o"}]}, "userProperties": {}},
            "data.userProperties",
        ),
    ],
)
def test_add_permissions_bad_input(api, data, field):
    assert api.err(PADD, data).startswith(field)


# ---------------------------------------------------------------- remove permissions


def test_remove_permissions_revokes_each_resource(api):
    org = uid("org")
    api.ok(UADD, {"organizationId": org, "users": [{"userId": "ann"}]})
    api.ok(UADD, {"organizationId": org, "documentId": "d", "createDocument": True, "users": [{"userId": "ann"}]})
    api.ok(UADD, {"organizationId": org, "folderId": "f", "createFolder": True, "users": [{"userId": "ann"}]})
    result = api.ok(
        PREM,
        {
            "userId": "ann",
            "permissions": {
                "resources": [
                    {"type": "document", "id": "d", "organizationId": org},
                    {"type": "organization", "id": org},
                ]
            },
        },
    )
    assert result["status"] == "success" and isinstance(result["message"], str)
    assert result["data"]["d"]["success"] is True and result["data"][org]["success"] is True
    assert users(api, org) == {} and users(api, org, documentId="d") == {}
    assert list(users(api, org, folderId="f")) == ["ann"]  # only the resources named
    again = api.ok(PREM, {"userId": "ann", "permissions": {"resources": [{"type": "organization", "id": org}]}})
    assert again["data"][org]["success"] is False and "ann" in again["data"][org]["message"]


def test_remove_folder_permission_without_organization_id(api):
    org1, org2 = uid("org"), uid("org")
    for org in (org1, org2):
        api.ok(UADD, {"organizationId": org, "folderId": "shared", "createFolder": True, "users": [{"userId": "ann"}]})
    data = api.ok(PREM, {"userId": "ann", "permissions": {"resources": [{"type": "folder", "id": "shared"}]}})["data"]
    assert data["shared"]["success"] is True
    assert users(api, org1, folderId="shared") == {} and users(api, org2, folderId="shared") == {}


def test_remove_permissions_of_an_unknown_user_fails_each_entry(api):
    data = api.ok(
        PREM,
        {
            "userId": uid("nobody"),
            "permissions": {
                "resources": [
                    {"type": "organization", "id": "acme"},
                    {"type": "document", "id": "d", "organizationId": "acme"},
                ]
            },
        },
    )["data"]
    assert data["acme"]["success"] is False and data["d"]["success"] is False


@pytest.mark.parametrize(
    "data, field",
    [
        ({"permissions": {"resources": [{"type": "organization", "id": "o"}]}}, "data.userId"),
        ({"userId": "u"}, "data.permissions"),
        ({"userId": "u", "permissions": {"resources": []}}, "data.permissions.resources"),
        (
            {"userId": "u", "permissions": {"resources": [{"type": "document", "id": "d"}]}},
            "data.permissions.resources[0].organizationId",
        ),
        (
            {
                "userId": "u",
                "permissions": {"resources": [{"type": "organization", "id": "o", "accessRole": "viewer"}]},
            },
            "data.permissions.resources[0].accessRole",
        ),
        (
            {"userId": "u", "permissions": {"resources": [{"type": "organization", "id": "o", "expiresAt": 5}]}},
            "data.permissions.resources[0].expiresAt",
        ),
        (
            {"userId": "u", "permissions": {"resources": [{"type": "group", "id": "o"}]}},
            "data.permissions.resources[0].type",
        ),
        (
            {
                "userId": "u",
                "permissions": {
                    "resources": [{"type": "organization", "id": "o"}, {"type": "organization", "id": "o"}]
                },
            },
            "data.permissions.resources",
        ),
    ],
)
def test_remove_permissions_bad_input(api, data, field):
    assert api.err(PREM, data).startswith(field)


# ---------------------------------------------------------------- workspace isolation


def test_permissions_are_isolated_between_workspaces(api, api_b):
    org = uid("org")
    api.ok(UADD, {"organizationId": org, "documentId": "d", "createDocument": True, "users": [{"userId": "ann"}]})
    api.ok(UADD, {"organizationId": org, "users": [{"userId": "ann"}]})
    # B cannot revoke A's grants, nor grant on A's document.
    data = api_b.ok(
        PREM,
        {
            "userId": "ann",
            "permissions": {
                "resources": [
                    {"type": "organization", "id": org},
                    {"type": "document", "id": "d", "organizationId": org},
                ]
            },
        },
    )["data"]
    assert data[org]["success"] is False and data["d"]["success"] is False
    data = api_b.ok(
        PADD,
        {"userId": "mallory", "permissions": {"resources": [{"type": "document", "id": "d", "organizationId": org}]}},
    )["data"]
    assert data["d"]["success"] is False
    assert list(users(api, org)) == ["ann"] and list(users(api, org, documentId="d")) == ["ann"]
    # B granting on "the same" organization id creates B's own organization.
    api_b.ok(PADD, {"userId": "mallory", "permissions": {"resources": [{"type": "organization", "id": org}]}})
    assert list(users(api, org)) == ["ann"]
    assert list(users(api_b, org)) == ["mallory"]
