"""User tokens and resource permissions (api-v2 §4.1, §4.2; semantics §8).

Generate token signs what it is given and writes nothing; add and remove permissions change
the stored memberships that effective access (:mod:`.effective`) reads.
"""

from __future__ import annotations

from toolkit.model.access import AddPermissions, GenerateToken, RemovePermissions
from toolkit.services.access.common import derive_initial, item, new_internal_id, now_ms, now_s, ok
from toolkit.services.context import Services
from toolkit.services.workspaces import Workspace
from toolkit.store.access import ensure_organizations, existing_pairs
from toolkit.store.access_members import grant, revoke, upsert_users, users_by_id
from toolkit.tokens import sign_user_token


def generate_token(services: Services, workspace: Workspace, request: GenerateToken) -> dict:
    """An HS256 JWT signed with the workspace secret, valid for 48 hours."""
    props = request.user_properties
    user = {"userId": request.user_id, "name": props.name, "email": props.email, "isAdmin": props.is_admin}
    token = sign_user_token(
        workspace.jwt_secret,
        user=user,
        resources=[r.claim() for r in request.permissions.resources],
        now_s=now_s(services),
    )
    return ok("Token generated successfully.", {"token": token})


def add_permissions(services: Services, workspace: Workspace, request: AddPermissions) -> dict:
    """Grant the user each resource: organizations are created when missing; a document or
    folder that does not exist fails its entry. A user not yet known is recorded with the id
    alone (name and email empty until add users or update users sets them)."""
    ws, user_id = workspace.workspace_id, request.user_id
    resources = request.permissions.resources

    def job(tx):
        now = now_ms(services)
        docs = {(r.organization_id, r.id) for r in resources if r.type == "document"}
        folders = {(r.organization_id, r.id) for r in resources if r.type == "folder"}
        found = existing_pairs(tx.execute, ws, docs, folders)
        known = users_by_id(tx.execute, ws, [user_id])
        results, grants = {}, []
        for r in resources:
            if r.type != "organization" and (r.type, r.organization_id, r.id) not in found:
                results[r.id] = item(False, f"{r.type} {r.id} not found in organization {r.organization_id}")
                continue
            grants.append(
                (r.type, r.id, r.organization, r.access_role, None if r.expires_at is None else float(r.expires_at))
            )
            results[r.id] = item(True, f"Permission granted on {r.type} {r.id}.")
        if grants:
            ensure_organizations(tx, ws, [g[2] for g in grants if g[0] == "organization"], now)
            if user_id in known:
                seq = known[user_id][4]
            else:
                bare = (user_id, new_internal_id(), "", "", derive_initial("", "", user_id))
                seq = upsert_users(tx, ws, [bare], now, known)[user_id][1]
            grant(tx, ws, [(user_id, *g, seq) for g in grants], now)
        return results

    return ok("Permissions processed.", services.store.write(job))


def remove_permissions(services: Services, workspace: Workspace, request: RemovePermissions) -> dict:
    """Revoke the user's membership of each resource (that resource only: removing an
    organization leaves the user's folder and document memberships in it). A folder given
    without ``organizationId`` is revoked in every organization. An entry the user did not
    hold fails (``success: false``)."""
    ws, user_id = workspace.workspace_id, request.user_id
    resources = request.permissions.resources

    def job(tx):
        gone = revoke(
            tx,
            ws,
            user_id,
            [(r.type, r.id, r.id if r.type == "organization" else r.organization_id) for r in resources],
        )
        return {
            r.id: item(True, f"Permission removed from {r.type} {r.id}.")
            if (r.type, r.id) in gone
            else item(False, f"user {user_id} has no permission on {r.type} {r.id}")
            for r in resources
        }

    return ok("Permissions processed.", services.store.write(job))
