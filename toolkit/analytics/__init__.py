"""Event-log analytics: SQL views, exports, the server's Parquet mirror, and replay (semantics §12).

The same views — ``step_durations``, ``execution_outcomes``, ``execution_summary``, ``reviewer_latency``,
``loop_iterations``, ``sla_breaches``, ``step_transitions``, ``directly_follows`` — are
defined once in ``views.sql`` and available on

* a simulation's results: ``attach(result.con)`` (or ``open_db("sim.duckdb")``);
* a stopped server's database file: ``open_db("data/collab.duckdb")`` (read-only);
* a PostgreSQL database, served or not: ``open_postgres("postgresql://…")`` (a snapshot,
  copied into an in-memory DuckDB);
* a running server, through the Parquet mirror it writes in the background:
  ``open_mirror("data/events")`` (the server runs :class:`Mirror`; on PostgreSQL, one of its
  processes runs :class:`~toolkit.analytics.shared_mirror.SharedMirror`).

``collab sql``, ``collab events export`` and ``collab replay`` are the command-line faces of
:func:`attach`/:func:`open_db`/:func:`open_mirror`, :func:`export` and :func:`diff`.
"""

from toolkit.analytics.export import FORMATS, event_table, export, step_log, write_ocel, write_xes
from toolkit.analytics.mirror import Mirror, MirrorError, open_mirror, server_mirror
from toolkit.analytics.replay import (
    Recording,
    Replay,
    ReplayError,
    diff,
    format_diff,
    load_recordings,
    outcome_of,
    recorded_events,
    recorded_outcomes,
    replay,
    replay_all,
    replay_execution,
)
from toolkit.analytics.views import VIEWS, attach, open_db, open_postgres, to_arrow, views_sql

__all__ = [
    # views
    "VIEWS",
    "attach",
    "open_db",
    "open_postgres",
    "views_sql",
    "to_arrow",
    # the mirror
    "Mirror",
    "MirrorError",
    "open_mirror",
    "server_mirror",
    # exports
    "FORMATS",
    "export",
    "event_table",
    "step_log",
    "write_xes",
    "write_ocel",
    # replay
    "Recording",
    "Replay",
    "ReplayError",
    "replay",
    "replay_execution",
    "replay_all",
    "load_recordings",
    "recorded_events",
    "recorded_outcomes",
    "outcome_of",
    "diff",
    "format_diff",
]
