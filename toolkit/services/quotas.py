"""How much one workspace may store: definitions and executions. A write that would go over
is refused with ``RESOURCE_EXHAUSTED`` (429) before anything is written.

Both checks run inside the write job on the writer thread, so two concurrent creates cannot
both take the last place. Executions are counted once per workspace from the database, then
kept in ``services.stored`` (a dispatch adds one, a rolled-back one takes it back); at the
limit the count is read again, in case executions were removed behind the counter's back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolkit.errors import ApiError, ErrorCode

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.services.context import Services


@dataclass(frozen=True)
class Quotas:
    """Per-workspace storage limits; 0 turns one off."""

    max_definitions: int = 10_000  # every definition ever created, deleted ones included (ids stay reserved)
    max_executions: int = 1_000_000  # executions stored, whatever their status


def _exhausted(what: str, limit: int) -> ApiError:
    return ApiError(
        ErrorCode.RESOURCE_EXHAUSTED,
        f"workspace quota: at most {limit} {what} may be stored (the server's --max-{what} setting)",
    )


def check_definition_quota(services: Services, tx, workspace_id: str) -> None:
    """Raise RESOURCE_EXHAUSTED when the workspace already stores ``max_definitions``."""
    limit = services.quotas.max_definitions
    if limit <= 0:
        return
    stored = tx.execute("SELECT count(*) FROM definitions WHERE workspace_id = ?", [workspace_id]).fetchone()[0]
    if stored >= limit:
        raise _exhausted("definitions", limit)


def take_execution_quota(services: Services, tx, workspace_id: str) -> None:
    """Count one more execution for the workspace, or raise RESOURCE_EXHAUSTED at the limit."""
    limit = services.quotas.max_executions
    if limit <= 0:
        return
    stored = services.stored.get(workspace_id)
    if stored is None or stored >= limit:
        tx.flush()  # executions dispatched earlier in this group commit are still buffered
        stored = tx.execute("SELECT count(*) FROM executions WHERE workspace_id = ?", [workspace_id]).fetchone()[0]
    if stored >= limit:
        services.stored[workspace_id] = stored
        raise _exhausted("executions", limit)
    services.stored[workspace_id] = stored + 1

    def give_back() -> None:
        services.stored[workspace_id] -= 1

    tx.on_rollback(give_back)
