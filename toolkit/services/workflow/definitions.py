"""Workflow definitions: create, get, list, update, delete (api-v2 §4.5, semantics §7).

Bodies are stored exactly as sent — every version — and views are built from them, so the
echoed ``edges`` (and nodes, groups, triggers) are byte-for-byte what the client wrote.
Validation is the linter: schema findings and lint errors become ``INVALID_ARGUMENT`` with
the field paths and validation keys in the message. Its warnings never block a write; every
view carries them as ``warnings``, linted against the workspace's agent registry as it is when
the view is built (so ``agent-not-registered`` comes and goes with the registry).
"""

from __future__ import annotations

import hashlib
import json

from toolkit.compiler import compile_definition
from toolkit.engine import Plan
from toolkit.errors import ApiError, ErrorCode, listed
from toolkit.lint import errors_of, lint, lint_document
from toolkit.model import Definition, DefinitionUpdate
from toolkit.model.workflow import DefinitionRef, ListDefinitions
from toolkit.services.agents import registered_agent_ids
from toolkit.services.context import Services
from toolkit.services.paging import decode_cursor, page_of
from toolkit.services.quotas import check_definition_quota
from toolkit.services.workspaces import Workspace
from toolkit.store import definitions as stored
from toolkit.store import executions


def namespaced(workspace_id: str, kind: str, value: str | None) -> str | None:
    """Scope ids are echoed as workspace-namespaced hashes, never the literal strings."""
    if value is None:
        return None
    return "ns_" + hashlib.sha256(f"{workspace_id}:{kind}:{value}".encode()).hexdigest()[:24]


def validated(body, model=Definition) -> Definition:
    """The definition, or INVALID_ARGUMENT listing every schema path and validation key."""
    definition, findings = lint_document(body, model=model)
    errors = errors_of(findings)
    if errors:
        if errors[0].key == "schema":
            text = listed((f"{f.where}: {f.message}" for f in errors), "; ")
        else:
            keys = listed(dict.fromkeys(f.key for f in errors))
            text = f"definition failed validation ({keys}): " + listed(
                (f"{f.key} at {f.where}: {f.message}" for f in errors), "; "
            )
        raise ApiError(ErrorCode.INVALID_ARGUMENT, text)
    assert definition is not None  # no errors: the body parsed
    return definition


def plan_for(services: Services, workspace_id: str, definition_id: str, version: int, read=None) -> tuple[Plan, dict]:
    """(Plan, compiled view parts) of one stored version, cached: versions never change."""
    key = (workspace_id, definition_id, version)
    cached = services.plans.get(key)
    if cached is not None:
        return cached
    text = stored.body(read or services.store.read, workspace_id, definition_id, version)
    if text is None:
        raise ApiError(ErrorCode.NOT_FOUND, f"definition {definition_id} version {version} not found")
    body = json.loads(text)
    definition = Definition.model_validate(body)
    entry = (
        Plan.from_definition(definition, version),
        {"body": body, "definition": definition, "compiled": compile_definition(definition).to_json()},
    )
    services.plans[key] = entry
    return entry


def _registry(services: Services, workspace_id: str) -> frozenset[str]:
    return frozenset(registered_agent_ids(services.store.read, workspace_id))


def _warnings(parts: dict, registry: frozenset[str]) -> list[dict]:
    """The lint warnings of one stored version against ``registry``. Kept with the version's
    cached plan together with the registry they were computed for: registries rarely change,
    so a get or a list lints each version once, not on every read."""
    cached = parts.get("warnings")
    if cached is None or cached[0] != registry:
        found = [f.to_json() for f in lint(parts["definition"], known_agents=set(registry)) if f.severity == "warning"]
        cached = parts["warnings"] = (registry, found)
    return cached[1]


def _view(services: Services, workspace_id: str, row, registry: frozenset[str]) -> dict:
    definition_id, version, status, level, org, doc, created, updated, _ = row
    _, parts = plan_for(services, workspace_id, definition_id, version)
    body = parts["body"]
    return {
        "definitionId": definition_id,
        "name": body["name"],
        "description": body.get("description"),
        "version": version,
        "scope": {
            "level": level,
            "organizationId": namespaced(workspace_id, "organization", org),
            "documentId": namespaced(workspace_id, "document", doc),
        },
        "nodes": body["nodes"],
        "edges": body["edges"],
        "groups": body.get("groups"),
        "compiled": parts["compiled"],
        "triggers": body.get("triggers"),
        "tags": body.get("tags"),
        "custom": body.get("custom"),
        "createdAt": created,
        "updatedAt": updated,
        "status": status,
        "warnings": _warnings(parts, registry),
    }


def _forget_head(services: Services, tx, workspace_id: str, definition_id: str) -> None:
    """Dispatch caches each definition's current row in the writer (DuckDB only); a change drops it."""
    key = (workspace_id, definition_id)
    services.heads.pop(key, None)
    tx.after_commit(lambda: services.heads.pop(key, None))


def _not_found(definition_id: str) -> ApiError:
    return ApiError(ErrorCode.NOT_FOUND, f"definition {definition_id} not found")


def create_definition(services: Services, workspace: Workspace, body: dict) -> dict:
    definition = validated(body)
    scope = definition.effective_scope
    ws = workspace.workspace_id

    def job(tx):
        # A second create of the same id in another process fails on the primary key, and
        # its rerun finds this one: ALREADY_EXISTS either way.
        if stored.row(tx.execute, ws, definition.definition_id) is not None:
            raise ApiError(ErrorCode.ALREADY_EXISTS, f"data.definitionId: {definition.definition_id} is already in use")
        check_definition_quota(services, tx, ws)
        stored.create(
            tx,
            ws,
            definition.definition_id,
            json.dumps(body),
            services.clock.now(),
            (scope.level, scope.organization_id, scope.document_id),
            definition.tags,
        )
        _forget_head(services, tx, ws, definition.definition_id)
        return stored.row(tx.execute, ws, definition.definition_id)

    return _view(services, ws, services.store.write(job), _registry(services, ws))


def get_definition(services: Services, workspace: Workspace, request: DefinitionRef) -> dict:
    row = stored.row(services.store.read, workspace.workspace_id, request.definition_id)
    if row is None:
        raise _not_found(request.definition_id)
    return _view(services, workspace.workspace_id, row, _registry(services, workspace.workspace_id))


def list_definitions(services: Services, workspace: Workspace, request: ListDefinitions) -> dict:
    """Pages in creation order; ``status`` defaults to ``active`` (deleted definitions are
    listed only when asked for with ``status: tombstoned``)."""
    scope = request.scope
    rows = stored.page(
        services.store.read,
        workspace.workspace_id,
        request.status or "active",
        None if scope is None else (scope.level, scope.organization_id, scope.document_id),
        request.tags,
        decode_cursor(request.cursor),
        request.page_size + 1,
    )
    views: dict = {}

    def size_of(row) -> int:  # builds each view once, as the page measures it (PAGE_MAX_BYTES)
        if not views:
            views["registry"] = _registry(services, workspace.workspace_id)
        view = views[row[-1]] = _view(services, workspace.workspace_id, row, views["registry"])
        return len(json.dumps(view, separators=(",", ":")))

    rows, next_cursor = page_of(rows, request.page_size, size_of)
    return {"items": [views[r[-1]] for r in rows], "nextCursor": next_cursor, "hasMore": next_cursor is not None}


def update_definition(services: Services, workspace: Workspace, body: dict) -> dict:
    """Full replace guarded by ``ifVersion``; the new body becomes version n+1."""
    update = validated(body, model=DefinitionUpdate)
    kept = {k: v for k, v in body.items() if k != "ifVersion"}
    scope = update.effective_scope
    ws = workspace.workspace_id

    def job(tx):
        row = stored.row(tx.execute, ws, update.definition_id, lock=services.store.shared)
        if row is None:
            raise _not_found(update.definition_id)
        if row[2] == "tombstoned":
            raise ApiError(ErrorCode.FAILED_PRECONDITION, f"definition {update.definition_id} is deleted")
        if row[1] != update.if_version:
            raise ApiError(
                ErrorCode.FAILED_PRECONDITION,
                f"data.ifVersion: definition is at version {row[1]}, not {update.if_version}",
            )
        stored.add_version(
            tx,
            ws,
            update.definition_id,
            row[1] + 1,
            json.dumps(kept),
            services.clock.now(),
            (scope.level, scope.organization_id, scope.document_id),
            update.tags,
        )
        _forget_head(services, tx, ws, update.definition_id)
        return stored.row(tx.execute, ws, update.definition_id)

    return _view(services, ws, services.store.write(job), _registry(services, ws))


def delete_definition(services: Services, workspace: Workspace, request: DefinitionRef) -> dict:
    ws = workspace.workspace_id

    def job(tx):
        # Locked, the row waits for dispatches holding it (FOR SHARE) to commit, so the count
        # below sees their executions, and dispatches that come later see the tombstone.
        row = stored.row(tx.execute, ws, request.definition_id, lock=services.store.shared)
        if row is None:
            raise _not_found(request.definition_id)
        tx.flush()  # executions dispatched or ended earlier in this group are still buffered
        running = executions.count_running(tx.execute, ws, request.definition_id)
        if running:
            raise ApiError(
                ErrorCode.FAILED_PRECONDITION,
                f"definition {request.definition_id} has {running} running execution(s); cancel them first",
            )
        if row[2] != "tombstoned":
            stored.tombstone(tx, ws, request.definition_id, services.clock.now())
            _forget_head(services, tx, ws, request.definition_id)
        return {"deleted": True}

    return services.store.write(job)
