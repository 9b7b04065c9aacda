"""Access load: users of organizations and documents, permissions, folders, documents,
access state, user groups and tokens — each worker in its own organization.

Facts (owner = the worker): ``orgUser`` (user) = (name, role); ``docUser`` (document, user) =
role; ``doc`` / ``folder`` / ``group`` (id) = True; ``groupMember`` (group, user) = True;
``folderAccess`` (folder) = (accessType, inheritFromParent); ``docAccess`` (document) =
accessType; ``docDisabled`` (document) = bool. Get users shows the first five after a
restart; the access state and the groups have no read endpoint, so they are read from the
database file while the server is down.
"""

from __future__ import annotations

import jwt

from faults.context import Ctx
from faults.ledger import ABSENT
from faults.registry import check, operation

UADD, UUPD, UDEL, UGET = "/v2/users/add", "/v2/users/update", "/v2/users/delete", "/v2/users/get"
GEN, PADD, PREM = "/v2/auth/generate_token", "/v2/auth/permissions/add", "/v2/auth/permissions/remove"
FADD, DADD = "/v2/folders/add", "/v2/documents/add"
GADD, GUADD = "/v2/organizations/usergroups/add", "/v2/organizations/usergroups/users/add"
FACC, DACC = "/v2/organizations/folders/access/update", "/v2/organizations/documents/access/update"
DDIS = "/v2/organizations/documents/access/disablestate/update"
ACCESS_TYPES = ("organizationPrivate", "restricted", "public")
MAX_USERS, MAX_DOCS, MAX_FOLDERS, MAX_GROUPS, MAX_DOC_USERS = 30, 5, 4, 3, 6


def org_of(owner) -> str:
    return f"w{owner}-org"


def _present(ctx: Ctx, kind: str) -> list[tuple]:
    return sorted(ctx.ledger.keys(kind, ctx.owner, present=True))


def _item_ok(item_id: str):
    return lambda result: result["data"][item_id]["success"] is True


# ------------------------------------------------------------------ users


@operation(3)
def add_org_user(ctx: Ctx) -> None:
    users = _present(ctx, "orgUser")
    uid = ctx.new_id("user") if len(users) < MAX_USERS or ctx.rng.random() < 0.2 else ctx.rng.choice(users)[2]
    name, role = f"{uid} {ctx.rng.randrange(10**6)}", ctx.rng.choice(("viewer", "editor"))
    user = {"userId": uid, "name": name, "email": f"{uid}@example.com", "accessRole": role}
    ctx.write(
        UADD,
        {"organizationId": org_of(ctx.owner), "users": [user]},
        {("orgUser", ctx.owner, uid): (name, role)},
        ok=_item_ok(uid),
    )


@operation(2)
def update_org_user(ctx: Ctx) -> None:
    users = _present(ctx, "orgUser")
    if not users:
        return add_org_user(ctx)
    key = ctx.rng.choice(users)
    name, role = f"{key[2]} renamed {ctx.rng.randrange(10**6)}", ctx.rng.choice(("viewer", "editor"))
    ctx.write(
        UUPD,
        {"organizationId": org_of(ctx.owner), "users": [{"userId": key[2], "name": name, "accessRole": role}]},
        {key: (name, role)},
        ok=_item_ok(key[2]),
    )


@operation(1)
def delete_org_user(ctx: Ctx) -> None:
    """Removing a user from the organization removes every membership she holds in it."""
    users = _present(ctx, "orgUser")
    if len(users) <= 5:
        return
    uid = ctx.rng.choice(users)[2]
    facts = {("orgUser", ctx.owner, uid): ABSENT}
    facts.update({k: ABSENT for k in _present(ctx, "docUser") + _present(ctx, "groupMember") if k[3] == uid})
    ctx.write(UDEL, {"organizationId": org_of(ctx.owner), "userIds": [uid]}, facts, ok=_item_ok(uid))


@operation(2)
def add_document_user(ctx: Ctx) -> None:
    """Add a user to one document (created when new): she is not an organization user."""
    docs = _present(ctx, "doc")
    doc = (
        ctx.new_id("doc") if not docs or (len(docs) < MAX_DOCS and ctx.rng.random() < 0.3) else ctx.rng.choice(docs)[2]
    )
    if sum(1 for k in _present(ctx, "docUser") if k[2] == doc) >= MAX_DOC_USERS:
        return
    uid, role = ctx.new_id("docuser"), ctx.rng.choice(("viewer", "editor"))
    ctx.write(
        UADD,
        {
            "organizationId": org_of(ctx.owner),
            "documentId": doc,
            "createDocument": True,
            "users": [{"userId": uid, "name": f"Reader {uid}", "accessRole": role}],
        },
        {("doc", ctx.owner, doc): True, ("docUser", ctx.owner, doc, uid): role},
        ok=_item_ok(uid),
    )


@operation(1)
def read_users(ctx: Ctx) -> None:
    ctx.read(UGET, {"organizationId": org_of(ctx.owner), "pageSize": 10}, allow=("NOT_FOUND",))


# ------------------------------------------------------------------ permissions and tokens


@operation(2)
def grant_document_permission(ctx: Ctx) -> None:
    docs, users = _present(ctx, "doc"), _present(ctx, "orgUser")
    if not docs or not users:
        return add_document_user(ctx)
    doc, uid, role = ctx.rng.choice(docs)[2], ctx.rng.choice(users)[2], ctx.rng.choice(("viewer", "editor"))
    resource = {"type": "document", "id": doc, "organizationId": org_of(ctx.owner), "accessRole": role}
    ctx.write(
        PADD,
        {"userId": uid, "permissions": {"resources": [resource]}},
        {("docUser", ctx.owner, doc, uid): role},
        ok=_item_ok(doc),
    )


@operation(1)
def revoke_document_permission(ctx: Ctx) -> None:
    members = _present(ctx, "docUser")
    if not members:
        return
    key = ctx.rng.choice(members)
    resource = {"type": "document", "id": key[2], "organizationId": org_of(ctx.owner)}
    ctx.write(PREM, {"userId": key[3], "permissions": {"resources": [resource]}}, {key: ABSENT}, ok=_item_ok(key[2]))


@operation(1)
def generate_token(ctx: Ctx) -> None:
    """Tokens are signed, not stored: the token must name the user it was made for."""
    uid = ctx.new_id("token-user")
    result = ctx.read(
        GEN,
        {
            "userId": uid,
            "userProperties": {"name": "Token User", "email": f"{uid}@example.com"},
            "permissions": {"resources": [{"type": "organization", "id": org_of(ctx.owner)}]},
        },
    )
    if result is not None and jwt.decode(result["data"]["token"], options={"verify_signature": False})["sub"] != uid:
        ctx.report.problem(f"generate_token for {uid} gave a token for someone else")


# ------------------------------------------------------------------ folders, documents, access state


@operation(1)
def add_folder(ctx: Ctx) -> None:
    folders = _present(ctx, "folder")
    if len(folders) >= MAX_FOLDERS:
        return set_folder_access(ctx)
    fid = ctx.new_id("folder")
    folder = {"folderId": fid, "folderName": f"Folder {fid}"}
    if folders and ctx.rng.random() < 0.5:
        folder["parentFolderId"] = ctx.rng.choice(folders)[2]
        ctx.state.setdefault("subfolders", set()).add(fid)
    ctx.write(
        FADD,
        {"organizationId": org_of(ctx.owner), "createOrganization": True, "folders": [folder]},
        {("folder", ctx.owner, fid): True},
        ok=_item_ok(fid),
    )


@operation(1)
def add_document(ctx: Ctx) -> None:
    if len(_present(ctx, "doc")) >= MAX_DOCS:
        return set_document_access(ctx)
    doc = ctx.new_id("doc")
    data = {
        "organizationId": org_of(ctx.owner),
        "createOrganization": True,
        "documents": [{"documentId": doc, "documentName": f"Document {doc}"}],
    }
    folders = _present(ctx, "folder")
    if folders and ctx.rng.random() < 0.5:
        data["folderId"] = ctx.rng.choice(folders)[2]
    ctx.write(DADD, data, {("doc", ctx.owner, doc): True}, ok=_item_ok(doc))


@operation(1)
def set_folder_access(ctx: Ctx) -> None:
    folders = _present(ctx, "folder")
    if not folders:
        return add_folder(ctx)
    fid = ctx.rng.choice(folders)[2]
    data = {"organizationId": org_of(ctx.owner), "folderIds": [fid]}
    if fid in ctx.state.get("subfolders", ()) and ctx.rng.random() < 0.3:  # only a subfolder can inherit
        data["inheritFromParent"], value = True, (None, True)
    else:
        data["accessType"] = ctx.rng.choice(ACCESS_TYPES)
        value = (data["accessType"], False)
    ctx.write(FACC, data, {("folderAccess", ctx.owner, fid): value}, ok=_item_ok(fid))


@operation(1)
def set_document_access(ctx: Ctx) -> None:
    docs = _present(ctx, "doc")
    if not docs:
        return add_document(ctx)
    doc, access = ctx.rng.choice(docs)[2], ctx.rng.choice(ACCESS_TYPES)
    ctx.write(
        DACC,
        {"organizationId": org_of(ctx.owner), "documentIds": [doc], "accessType": access},
        {("docAccess", ctx.owner, doc): access},
        ok=_item_ok(doc),
    )


@operation(1)
def set_document_disabled(ctx: Ctx) -> None:
    docs = _present(ctx, "doc")
    if not docs:
        return add_document(ctx)
    doc, disabled = ctx.rng.choice(docs)[2], ctx.rng.random() < 0.5
    ctx.write(
        DDIS,
        {"organizationId": org_of(ctx.owner), "documentIds": [doc], "disabled": disabled},
        {("docDisabled", ctx.owner, doc): disabled},
        ok=_item_ok(doc),
    )


# ------------------------------------------------------------------ user groups


@operation(1)
def add_user_group(ctx: Ctx) -> None:
    groups = _present(ctx, "group")
    if not _present(ctx, "orgUser"):  # user groups need the organization, which the first user creates
        return add_org_user(ctx)
    if len(groups) >= MAX_GROUPS:
        return add_group_member(ctx)
    gid = ctx.new_id("group")
    ctx.write(
        GADD,
        {
            "organizationId": org_of(ctx.owner),
            "organizationUserGroups": [{"groupId": gid, "groupName": f"Group {gid}"}],
        },
        {("group", ctx.owner, gid): True},
        ok=_item_ok(gid),
    )


@operation(1)
def add_group_member(ctx: Ctx) -> None:
    groups, users = _present(ctx, "group"), _present(ctx, "orgUser")
    if not groups or not users:
        return add_user_group(ctx) if not groups else add_org_user(ctx)
    gid, uid = ctx.rng.choice(groups)[2], ctx.rng.choice(users)[2]
    ctx.write(
        GUADD,
        {"organizationId": org_of(ctx.owner), "organizationUserGroupId": gid, "userIds": [uid]},
        {("groupMember", ctx.owner, gid, uid): True},
        ok=_item_ok(uid),
    )


# ------------------------------------------------------------------ checks


def _listed(ctx: Ctx, where: str, **scope):
    """{userId: user} of one get-users query (ABSENT when its scope is NOT_FOUND, None on a
    reported problem); a user listed twice is a duplicate."""
    page = ctx.find(UGET, {**scope, "pageSize": 1000})
    if page is None or page is ABSENT:
        return page
    ids = [u["userId"] for u in page["data"]]
    if len(ids) != len(set(ids)):
        ctx.report.duplicate(f"get users {where} lists a user twice: {sorted(ids)}")
    if page["nextPageToken"] is not None:
        ctx.report.problem(f"get users {where}: more than 1000 users, the harness never adds that many")
    return {u["userId"]: u for u in page["data"]}


def _settle_listing(ctx: Ctx, keys: list[tuple], listed, value, make_key) -> None:
    """Settle every fact of one listing, and any listed user no write put there."""
    for key in keys:
        user = listed.get(key[-1]) if isinstance(listed, dict) else None
        ctx.ledger.settle(key, ABSENT if user is None else value(user))
    known = {k[-1] for k in keys}
    for uid, user in listed.items() if isinstance(listed, dict) else ():
        if uid not in known:
            ctx.ledger.settle(make_key(uid), value(user))


@check("online")
def access_intact(ctx: Ctx) -> None:
    """Organization users with their names and roles, document users, folders, documents and
    user-group members are what the acknowledged writes made them."""
    for owner in ctx.run.owners:
        org, keys = org_of(owner), lambda kind, owner=owner: ctx.ledger.keys(kind, owner)
        if not keys("orgUser") and not keys("doc") and not keys("folder"):
            continue
        listed = _listed(ctx, f"of organization {org}", organizationId=org)
        if listed is not None:
            _settle_listing(
                ctx,
                keys("orgUser"),
                listed,
                lambda u: (u["name"], u["accessRole"]),
                lambda uid, owner=owner: ("orgUser", owner, uid),
            )
        for key in keys("doc"):
            listed = _listed(ctx, f"of document {key[2]}", organizationId=org, documentId=key[2])
            if listed is None:
                continue
            ctx.ledger.settle(key, ABSENT if listed is ABSENT else True)
            _settle_listing(
                ctx,
                [k for k in keys("docUser") if k[2] == key[2]],
                listed,
                lambda u: u["accessRole"],
                lambda uid, owner=owner, key=key: ("docUser", owner, key[2], uid),
            )
        for key in keys("folder"):
            listed = _listed(ctx, f"of folder {key[2]}", organizationId=org, folderId=key[2])
            if listed is not None:
                ctx.ledger.settle(key, ABSENT if listed is ABSENT else True)
        for gid in {k[2] for k in keys("groupMember")}:
            listed = _listed(ctx, f"of group {gid}", organizationId=org, organizationUserGroupIds=[gid])
            if listed is not None:
                _settle_listing(
                    ctx,
                    [k for k in keys("groupMember") if k[2] == gid],
                    listed,
                    lambda u: True,
                    lambda uid, owner=owner, gid=gid: ("groupMember", owner, gid, uid),
                )


@check("offline")
def access_state_in_file(ctx: Ctx) -> None:
    """Folder and document access state and user groups, which no endpoint reads back."""
    for owner in ctx.run.owners:
        org, keys = org_of(owner), lambda kind, owner=owner: ctx.ledger.keys(kind, owner)
        folders = {
            f: (t, bool(i))
            for f, t, i in ctx.run.sql(
                "SELECT folder_id, access_type, inherit_from_parent FROM folders WHERE organization_id = ?", [org]
            )
        }
        documents = {
            d: (t, bool(x))
            for d, t, x in ctx.run.sql(
                "SELECT document_id, access_type, disabled FROM documents WHERE organization_id = ?", [org]
            )
        }
        groups = {g for (g,) in ctx.run.sql("SELECT group_id FROM user_groups WHERE organization_id = ?", [org])}
        # (a write in flight that did not happen leaves the defaults a new folder or document has)
        for key in keys("folderAccess"):
            ctx.ledger.settle(key, folders.get(key[2], ABSENT), default=("organizationPrivate", False))
        for key in keys("docAccess"):
            ctx.ledger.settle(
                key, documents[key[2]][0] if key[2] in documents else ABSENT, default="organizationPrivate"
            )
        for key in keys("docDisabled"):
            ctx.ledger.settle(key, documents[key[2]][1] if key[2] in documents else ABSENT, default=False)
        for key in keys("group"):
            ctx.ledger.settle(key, True if key[2] in groups else ABSENT)
