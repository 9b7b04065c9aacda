"""The database of the killed server, read before it restarts: the DuckDB file, read-only (the
restarted server still replays the write-ahead log itself), or one snapshot of the PostgreSQL
database the other server processes keep serving.

These checks see what no endpoint shows: internal events (which take ``seq`` numbers too),
the command log and the summary tables. Each query lists offending rows; none is the answer.
The queries are written once for both backends (no ``GROUP BY ALL``, an alias on every
subquery); only reading a field of the JSON state differs (:func:`invariants`).
"""

from __future__ import annotations

from faults.context import Ctx
from faults.registry import check

# Tables whose primary key DuckDB enforces through an index rebuilt from the log on restart.
PRIMARY_KEYS = {
    "definitions": "workspace_id, definition_id",
    "definition_versions": "workspace_id, definition_id, version",
    "executions": "execution_id",
    "users": "workspace_id, user_id",
    "memberships": "workspace_id, user_id, resource_type, organization_id, resource_id",
    "annotations": "workspace_id, organization_id, document_id, annotation_id",
    "activities": "workspace_id, organization_id, activity_id",
    "agents": "workspace_id, agent_id",
}

# The execution state's last seq, as each backend reads a field of JSON text.
LAST_SEQ = {
    "duckdb": "CAST(json_extract_string(x.state, '$.last_seq') AS BIGINT)",
    "postgres": "CAST(x.state::jsonb ->> 'last_seq' AS BIGINT)",
}


def invariants(dialect: str) -> list[tuple[str, str, str]]:
    """(what went wrong, how to report it, the query listing the rows where it did), for the
    database of ``dialect`` ("duckdb" or "postgres")."""
    span = (
        f"SELECT x.execution_id, e.n, e.lo, e.hi, {LAST_SEQ[dialect]} AS last_seq FROM executions x "
        "LEFT JOIN (SELECT execution_id, count(*) AS n, min(seq) AS lo, max(seq) AS hi FROM events "
        "GROUP BY execution_id) e USING (execution_id)"
    )
    return [
        (
            "events missing: fewer than the execution's last seq",
            "loss",
            f"SELECT execution_id, n, hi, last_seq FROM ({span}) s WHERE n IS NULL OR n < last_seq OR hi < last_seq",
        ),
        (
            "events beyond the execution's last seq, or not starting at 1",
            "problem",
            f"SELECT execution_id, n, lo, hi, last_seq FROM ({span}) s WHERE n > last_seq OR hi > last_seq OR lo <> 1",
        ),
        *INVARIANTS,
    ]


# (what went wrong, how to report it, the query listing the rows where it did), on either backend
INVARIANTS = [
    (
        "an event seq used twice in one execution",
        "duplicate",
        "SELECT execution_id, seq, count(*) FROM events GROUP BY execution_id, seq HAVING count(*) > 1",
    ),
    (
        "an event id used twice",
        "duplicate",
        "SELECT event_id, count(*) FROM events GROUP BY event_id HAVING count(*) > 1",
    ),
    (
        "a step id twice in one execution",
        "duplicate",
        "SELECT execution_id, step_id, count(*) FROM steps GROUP BY execution_id, step_id HAVING count(*) > 1",
    ),
    (
        "two executions for one idempotency key",
        "duplicate",
        "SELECT definition_id, idempotency_key, count(*) FROM executions WHERE idempotency_key IS NOT NULL "
        "GROUP BY workspace_id, definition_id, idempotency_key HAVING count(*) > 1",
    ),
    (
        "events of an execution that does not exist",
        "problem",
        "SELECT DISTINCT execution_id FROM events WHERE execution_id NOT IN (SELECT execution_id FROM executions)",
    ),
    # one command row per version: the command log and the state were written together
    (
        "command log and execution version disagree",
        "problem",
        "SELECT x.execution_id, x.version, c.n, c.hi FROM executions x LEFT JOIN (SELECT execution_id, count(*) AS n, "
        "count(DISTINCT version) AS d, max(version) AS hi FROM commands GROUP BY 1) c USING (execution_id) "
        "WHERE c.n IS DISTINCT FROM x.version OR c.d IS DISTINCT FROM c.n OR c.hi IS DISTINCT FROM x.version",
    ),
    (
        "a user creation number used twice",
        "duplicate",
        "SELECT workspace_id, seq, count(*) FROM users GROUP BY workspace_id, seq HAVING count(*) > 1",
    ),
    (
        "a membership whose user number is not its user's",
        "problem",
        "SELECT m.user_id, m.user_seq, u.seq FROM memberships m LEFT JOIN users u USING (workspace_id, user_id) "
        "WHERE u.seq IS DISTINCT FROM m.user_seq",
    ),
    (
        "an annotation creation number used twice",
        "duplicate",
        "SELECT workspace_id, seq, count(*) FROM annotations GROUP BY workspace_id, seq HAVING count(*) > 1",
    ),
    (
        "an activity creation number used twice",
        "duplicate",
        "SELECT workspace_id, seq, count(*) FROM activities GROUP BY workspace_id, seq HAVING count(*) > 1",
    ),
    (
        "annotation counts disagree with the annotations",
        "problem",
        "WITH truth AS (SELECT workspace_id, organization_id, document_id, status_id, visibility_type, "
        "coalesce(visibility_org, '') AS visibility_org, count(*) AS n FROM annotations "
        "WHERE visibility_type <> 'restricted' "
        "GROUP BY workspace_id, organization_id, document_id, status_id, visibility_type, "
        "coalesce(visibility_org, '')) "
        "SELECT document_id, status_id, truth.n, t.n FROM truth FULL JOIN annotation_tallies t "
        "USING (workspace_id, organization_id, document_id, status_id, visibility_type, visibility_org) "
        "WHERE truth.n IS DISTINCT FROM t.n AND NOT (truth.n IS NULL AND t.n = 0)",
    ),
] + [
    (
        f"a {table} primary key twice",
        "duplicate",
        f"SELECT {key}, count(*) FROM {table} GROUP BY {key} HAVING count(*) > 1",
    )
    for table, key in PRIMARY_KEYS.items()
]


@check("offline")
def store_invariants(ctx: Ctx) -> None:
    """No row twice, no event without its state, no summary out of step with its table."""
    for what, kind, query in invariants(ctx.run.dialect):
        rows = ctx.run.sql(query + " LIMIT 10")
        if rows:
            message = f"in the database file: {what}: {rows}"
            {"duplicate": ctx.report.duplicate, "loss": ctx.report.loss, "problem": ctx.report.problem}[kind](message)
