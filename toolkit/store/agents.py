"""The agent registry (migration 004): the statements of the agents area.

A row of :data:`COLUMNS` is ``(agent_id, built_in, name, description, enabled, version,
created_at, updated_at, instructions, config, list_key)``: the agent with the behaviour of
one version. Built-in agents have a row only once a workspace changes them; the catalogue
itself is :mod:`toolkit.services.agents`. Functions take ``read`` (``store.read`` or
``tx.execute``) or the write job's ``tx``.

On PostgreSQL two processes may change one agent at once: a new version is a plain insert
of version n+1, so the second of two racing writers hits the primary key and its job runs
again from what the first committed; identity edits update only the fields they give.
"""

from __future__ import annotations

from toolkit.store.seam import Read, Writes
from toolkit.store.writer import Row

_COLUMNS = (
    "a.agent_id, a.built_in, a.name, a.description, a.enabled, a.version, a.created_at, a.updated_at, "
    "v.instructions, v.config, a.list_key"
)
_JOIN = (
    "FROM agents a LEFT JOIN agent_versions v ON v.workspace_id = a.workspace_id "
    "AND v.agent_id = a.agent_id AND v.version = {version}"
)


def workspace_created(read: Read, workspace_id: str) -> int:
    """When the workspace was created (a built-in it never changed is as old as the workspace)."""
    row = read("SELECT created_at FROM workspaces WHERE workspace_id = ?", [workspace_id]).fetchone()
    return row[0] if row else 0


def agent(read: Read, workspace_id: str, agent_id: str, version: int | None = None) -> Row | None:
    """The stored agent with version ``version``'s behaviour (the current one when None)."""
    return read(
        f"SELECT {_COLUMNS} {_JOIN.format(version='coalesce(?, a.version)')} "
        "WHERE a.workspace_id = ? AND a.agent_id = ?",
        [version, workspace_id, agent_id],
    ).fetchone()


def built_ins(read: Read, workspace_id: str) -> list[Row]:
    """The built-ins this workspace changed, with their current behaviour."""
    return read(
        f"SELECT {_COLUMNS} {_JOIN.format(version='a.version')} WHERE a.workspace_id = ? AND a.built_in",
        [workspace_id],
    ).fetchall()


def custom_page(read: Read, workspace_id: str, after: int, limit: int) -> list[Row]:
    """Up to ``limit`` custom agents created after list key ``after``, in creation order."""
    return read(
        f"SELECT {_COLUMNS} {_JOIN.format(version='a.version')} "
        "WHERE a.workspace_id = ? AND NOT a.built_in AND a.list_key > ? ORDER BY a.list_key LIMIT ?",
        [workspace_id, after, limit],
    ).fetchall()


def registry(read: Read, workspace_id: str) -> list[tuple[str, bool, bool]]:
    """``(agent id, built in, enabled)`` of every stored agent of the workspace.

    >>> from toolkit.store import Store
    >>> with Store(":memory:") as store:
    ...     store.write(lambda tx: set_built_in_enabled(tx, "ws", "spell-check", "Spell check", "", -5, False, 7))
    ...     registry(store.read, "ws")
    [('spell-check', True, False)]
    """
    return read("SELECT agent_id, built_in, enabled FROM agents WHERE workspace_id = ?", [workspace_id]).fetchall()


def create(
    tx: Writes,
    workspace_id: str,
    agent_id: str,
    name: str,
    description: str | None,
    enabled: bool,
    instructions: str | None,
    config: str | None,
    now: int,
) -> None:
    """A custom agent at version 1, last in the list."""
    tx.execute(
        "INSERT INTO agents VALUES (?, ?, false, ?, ?, ?, 1, ?, ?, nextval('agent_list_keys'))",
        [workspace_id, agent_id, name, description, enabled, now, now],
    )
    tx.execute(
        "INSERT INTO agent_versions VALUES (?, ?, 1, ?, ?, ?)", [workspace_id, agent_id, instructions, config, now]
    )


def set_built_in_enabled(
    tx: Writes, workspace_id: str, agent_id: str, name: str, description: str, list_key: int, enabled: bool, now: int
) -> None:
    """Enable or disable a built-in; ``updated_at`` moves only when ``enabled`` changes. A
    workspace that never touched it has had it enabled since the workspace began. One
    statement, so racing writers cannot lose each other's change."""
    created = workspace_created(tx.execute, workspace_id)
    tx.execute(
        "INSERT INTO agents VALUES (?, ?, true, ?, ?, ?, 1, ?, ?, ?) ON CONFLICT (workspace_id, agent_id) "
        "DO UPDATE SET updated_at = CASE WHEN agents.enabled = excluded.enabled THEN agents.updated_at "
        "ELSE ? END, enabled = excluded.enabled",
        [workspace_id, agent_id, name, description, enabled, created, created if enabled else now, list_key, now],
    )


def update_identity(
    tx: Writes,
    workspace_id: str,
    agent_id: str,
    name: str | None,
    description: str | None,
    enabled: bool | None,
    now: int,
) -> bool:
    """Set the given fields of a custom agent (``None``: keep); ``updated_at`` moves only when
    something changes. False when the agent does not exist. The update computes from the row
    it updates, so two processes changing different fields keep both changes."""
    if not tx.execute("SELECT 1 FROM agents WHERE workspace_id = ? AND agent_id = ?", [workspace_id, agent_id]):
        return False
    tx.execute(
        "UPDATE agents SET name = coalesce($name, name), description = coalesce($description, description), "
        "enabled = coalesce($enabled, enabled), updated_at = $now "
        "WHERE workspace_id = $ws AND agent_id = $agent AND (name <> coalesce($name, name) "
        "OR description IS DISTINCT FROM coalesce($description, description) "
        "OR enabled <> coalesce($enabled, enabled))",
        {
            "ws": workspace_id,
            "agent": agent_id,
            "name": name,
            "description": description,
            "enabled": enabled,
            "now": now,
        },
    )
    return True


def add_version(
    tx: Writes,
    workspace_id: str,
    agent: Row,
    version: int,
    instructions: str | None,
    config: str | None,
    now: int,
    catalogue_instructions: str | None = None,
) -> None:
    """Version ``version`` of ``agent`` (a row as :func:`agent` returns, or a built-in's
    defaults) becomes current. With ``catalogue_instructions`` (a built-in's first change),
    the catalogue's version 1 is stored beside it."""
    agent_id, built_in, name, description, enabled, _, created, _, _, _, list_key = agent
    if catalogue_instructions is not None:
        tx.execute(
            "INSERT INTO agent_versions VALUES (?, ?, 1, ?, NULL, ?) ON CONFLICT DO NOTHING",
            [workspace_id, agent_id, catalogue_instructions, created],
        )
    # A plain insert: a writer that raced to the same version number fails here and runs again.
    tx.execute(
        "INSERT INTO agent_versions VALUES (?, ?, ?, ?, ?, ?)",
        [workspace_id, agent_id, version, instructions, config, now],
    )
    tx.execute(
        "INSERT INTO agents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (workspace_id, agent_id) "
        "DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at",
        [workspace_id, agent_id, built_in, name, description, enabled, version, created, now, list_key],
    )
