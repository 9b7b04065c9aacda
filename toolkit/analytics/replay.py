"""Replay recorded executions through the engine (semantics §5, §6, §13).

A server records, for every execution, each command that changed it — ``commands``: kind,
payload (the engine command's fields), the execution version it produced and ``applied_at``,
the one clock reading its job used — next to the events it caused. The engine is a pure
function of (definition, commands, clock readings, ids), and the only ids it draws are the
six random hex digits of root step ids, which the recorded ``execution.dispatched`` names.
So:

* :func:`replay_execution` (``definition=None``) replays an execution against the version it
  ran and reproduces its event log exactly — types, seq, step ids, timestamps, data;
* against another definition (a create body, a :class:`Definition` or a :class:`Plan`) the
  same inputs are fed to the new version: a command addressing a step is sent to the step of
  the same node and occurrence (the n-th step created for that node), and skipped with a note
  when there is none (the node is gone, or the new version never created that step) or the
  engine refuses it (the execution already ended, the step is no longer waiting). Deadlines
  fire when they fall due, as the server's timer would, up to the last moment the database
  recorded; agents run inline when the recording server ran them inline.
* :func:`diff` compares, for every execution of a definition, the recorded outcome with the
  outcome against another definition: final status, path, loop iterations, cycle time.

>>> sorted(KINDS)[:3]
['AgentCompleted', 'CancelExecution', 'CancelStep']
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import duckdb

from toolkit.engine import (
    AgentCompleted,
    CancelExecution,
    CancelStep,
    DefaultAgentRunner,
    Dispatch,
    Event,
    ManualClock,
    Plan,
    RecordAgentResolution,
    RecordReviewerDecision,
    ResolveStep,
    Tick,
    apply,
    run_agents,
    suppress_duplicate_dispatch,
)
from toolkit.errors import ApiError
from toolkit.model import Definition

__all__ = [
    "KINDS",
    "Recording",
    "Replay",
    "ReplayError",
    "diff",
    "format_diff",
    "load_recordings",
    "recorded_events",
    "recorded_outcomes",
    "replay",
    "replay_all",
    "replay_execution",
]

KINDS = {
    cls.__name__: cls
    for cls in (
        Dispatch,
        Tick,
        AgentCompleted,
        RecordReviewerDecision,
        RecordAgentResolution,
        ResolveStep,
        CancelStep,
        CancelExecution,
    )
}
SUPPRESSED = "SuppressedDispatch"
OUTCOME_FIELDS = ("status", "failureReason", "path", "iterations", "cycleTimeMs")


class ReplayError(RuntimeError):
    """A recording that cannot be replayed (missing definition version, unknown command kind,
    or an exact replay the engine refused)."""


@dataclass
class Recording:
    """What the database holds about one execution, enough to replay it."""

    execution_id: str
    workspace_id: str | None
    definition_id: str
    definition_version: int
    commands: list[tuple[int, int, str, dict]]  # (version, applied_at, kind, payload), in order
    root_rand6: list[str]  # from execution.dispatched rootStepIds
    occurrence: dict[str, tuple[str, int]]  # recorded step id -> (node id, occurrence)

    @property
    def agents_inline(self) -> bool:
        """Whether the recording server completed agent steps inline (its default runner)."""
        kinds = {kind for _, _, kind, _ in self.commands}
        return any(p.get("agentsInline") for *_, p in self.commands) or "AgentCompleted" not in kinds


@dataclass
class Replay:
    """One replayed execution: the final ``state``, every event (internal ones included) in
    ``seq`` order, and ``notes`` on recorded inputs that were skipped or remapped."""

    recording: Recording
    state: Any
    events: list[Event]
    notes: list[str] = field(default_factory=list)
    skipped: int = 0

    @property
    def execution_id(self) -> str:
        return self.recording.execution_id

    def outcome(self) -> dict:
        return outcome_of(self.state)


def outcome_of(state) -> dict:
    """``{status, failureReason, path (node ids of the steps not cancelled, in creation order),
    iterations, cycleTimeMs}`` of an execution state (the simulator's outcome)."""
    # Imported here, not with the module: every server imports this package (for its mirror),
    # and the simulator's package would come along, 0.1 s of each start for nothing.
    from toolkit.simulate.records import outcome

    status, reason, path, iterations, cycle, _, _ = outcome(_Log(state))
    return {
        "status": status,
        "failureReason": reason,
        "path": path.split(">") if path else [],
        "iterations": iterations,
        "cycleTimeMs": cycle,
    }


class _Log:
    __slots__ = ("state",)

    def __init__(self, state) -> None:
        self.state = state


class _RecordedIds:
    """Feeds the engine the recorded root-step rand6 values, in order; past them (a new version
    with more roots) a value derived from the execution id, so replays stay deterministic."""

    def __init__(self, execution_id: str, rand6: list[str]) -> None:
        self._execution_id = execution_id
        self._queue = list(reversed(rand6))
        self._extra = 0

    def rand6(self) -> str:
        if self._queue:
            return self._queue.pop()
        self._extra += 1
        return hashlib.sha256(f"{self._execution_id}:{self._extra}".encode()).hexdigest()[:6]

    def execution_id(self) -> str:
        return self._execution_id


# ---------------------------------------------------------------------------- loading


def _where(execution_ids, definition_id, workspace_id, alias: str = "x") -> tuple[str, list]:
    clauses, params = [], []
    if execution_ids is not None:
        clauses.append(f"{alias}.execution_id IN (SELECT unnest($ids::VARCHAR[]))")
        params.append(("ids", list(execution_ids)))
    if definition_id is not None:
        clauses.append(f"{alias}.definition_id = $definition")
        params.append(("definition", definition_id))
    if workspace_id is not None:
        clauses.append(f"{alias}.workspace_id = $workspace")
        params.append(("workspace", workspace_id))
    return (" AND ".join(clauses) or "true"), params


def load_recordings(
    con: duckdb.DuckDBPyConnection,
    *,
    execution_ids=None,
    definition_id: str | None = None,
    workspace_id: str | None = None,
) -> list[Recording]:
    """The recordings of the selected executions (a server database or its mirror: the
    ``commands`` table is what a simulation does not have), ordered by execution start."""
    if "commands" not in {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}:
        raise ReplayError("no commands table: replay needs a server database (or its mirror)")
    where, params = _where(execution_ids, definition_id, workspace_id)
    args = dict(params)
    execs = con.execute(
        f"SELECT x.execution_id, x.workspace_id, x.definition_id, x.definition_version FROM executions x "
        f"WHERE {where} ORDER BY x.started_at, x.execution_id",
        args,
    ).fetchall()
    if not execs:
        return []
    selected = [e[0] for e in execs]
    commands: dict[str, list] = defaultdict(list)
    for eid, version, at, kind, payload in con.execute(
        "SELECT execution_id, version, applied_at, kind, payload FROM commands "
        "WHERE execution_id IN (SELECT unnest($ids::VARCHAR[])) ORDER BY execution_id, version",
        {"ids": selected},
    ).fetchall():
        commands[eid].append((version, at, kind, json.loads(payload)))
    roots: dict[str, list[str | None]] = {}  # None: a root id shortened by hashing
    occurrence: dict[str, dict] = defaultdict(dict)
    seen: dict[str, Counter] = defaultdict(Counter)
    for eid, etype, sid, data in con.execute(
        "SELECT execution_id, type, step_id, data FROM events "
        "WHERE execution_id IN (SELECT unnest($ids::VARCHAR[])) "
        "AND type IN ('execution.dispatched', 'step.scheduled') ORDER BY execution_id, seq",
        {"ids": selected},
    ).fetchall():
        data = json.loads(data)
        if etype == "execution.dispatched":
            roots[eid] = [_rand6_of(step_id) for step_id in data.get("rootStepIds", [])]
        else:
            node = data["nodeId"]
            seen[eid][node] += 1
            occurrence[eid][sid] = (node, seen[eid][node])
    return [
        Recording(
            eid, ws, did, version, commands.get(eid, []), [r for r in roots.get(eid, []) if r], occurrence.get(eid, {})
        )
        for eid, ws, did, version in execs
    ]


def _rand6_of(step_id: str) -> str | None:
    """``step_<nodeId>_<ms>_<rand6>`` -> rand6 (None for an id shortened by hashing)."""
    tail = step_id.rsplit("_", 1)[-1]
    return tail if len(tail) == 6 and all(c in "0123456789abcdef" for c in tail) else None


def recorded_events(con: duckdb.DuckDBPyConnection, execution_id: str) -> list[Event]:
    """The recorded log of one execution as engine :class:`Event` s, in ``seq`` order."""
    rows = con.execute(
        "SELECT event_id, execution_id, seq, type, step_id, timestamp, correlation_id, data "
        "FROM events WHERE execution_id = ? ORDER BY seq",
        [execution_id],
    ).fetchall()
    return [Event(eid, xid, seq, t, sid, ts, cid, json.loads(data)) for eid, xid, seq, t, sid, ts, cid, data in rows]


def _recorded_plan(con, recording: Recording, cache: dict) -> Plan:
    key = (recording.workspace_id, recording.definition_id, recording.definition_version)
    plan = cache.get(key)
    if plan is None:
        sql = "SELECT body FROM definition_versions WHERE definition_id = $d AND version = $v"
        args = {"d": recording.definition_id, "v": recording.definition_version}
        if recording.workspace_id is not None:
            sql += " AND workspace_id = $w"
            args["w"] = recording.workspace_id
        rows = con.execute(sql, args).fetchall()
        if not rows:
            raise ReplayError(
                f"definition {recording.definition_id} version {recording.definition_version} is not in the database"
            )
        plan = cache[key] = Plan.from_definition(
            Definition.model_validate(json.loads(rows[0][0])), recording.definition_version
        )
    return plan


def _as_plan(definition, version: int = 0) -> Plan:
    if isinstance(definition, Plan):
        return definition
    if isinstance(definition, dict) and isinstance(definition.get("data"), dict) and "nodes" not in definition:
        definition = definition["data"]  # a create body with its {"data": ...} envelope
    if not isinstance(definition, Definition):
        definition = Definition.model_validate(definition)
    return Plan.from_definition(definition, version)


def _horizon(con) -> int | None:
    rows = con.execute("SELECT max(applied_at) FROM commands").fetchall()
    return rows[0][0] if rows else None


# ---------------------------------------------------------------------------- replaying


def _command(kind: str, payload: dict):
    cls = KINDS.get(kind)
    if cls is None:
        raise ReplayError(f"unknown command kind {kind!r}")
    return cls(**{k: v for k, v in payload.items() if k != "agentsInline"})


def replay_recording(recording: Recording, plan: Plan, *, exact: bool, horizon: int | None = None) -> Replay:
    """Replay one recording through ``plan``. ``exact``: the plan is the recorded version, so
    every command must apply as it did (else :class:`ReplayError`); otherwise inputs are
    remapped by (node, occurrence), refused ones skipped with a note, and deadlines fired as
    they fall due up to ``horizon``."""
    eid = recording.execution_id
    ids = _RecordedIds(eid, recording.root_rand6)
    runner = DefaultAgentRunner()
    inline_all = not exact and recording.agents_inline
    replay = Replay(recording, None, [])
    events = replay.events
    mine: dict[tuple[str, int], str] = {}  # (node, occurrence) -> step id in this replay
    counts: Counter = Counter()

    def absorb(transition) -> None:
        for event in transition.events:
            events.append(event)
            if event.type == "step.scheduled":
                node = event.data["nodeId"]
                counts[node] += 1
                mine[(node, counts[node])] = event.step_id

    def note(at: int, text: str) -> None:
        replay.notes.append(f"{eid} @{at}: {text}")

    def run(command, clock, inline: bool) -> None:
        transition = apply(plan, replay.state, command, clock, ids)
        replay.state = transition.state
        absorb(transition)
        if inline and transition.agent_requests:
            for more in run_agents(plan, replay.state, transition, clock, ids, runner):
                absorb(more)

    def fire_due(until: int) -> None:
        state = replay.state
        while state is not None and state.status == "running":
            deadline = state.next_deadline()
            if deadline is None or deadline > until:
                return
            run(Tick(), ManualClock(deadline), inline_all)

    for version, at, kind, payload in recording.commands:
        clock = ManualClock(at)
        inline = bool(payload.get("agentsInline")) or inline_all
        if not exact:
            fire_due(at)
        if kind == SUPPRESSED:
            if replay.state is None:
                note(at, "a deduplicated dispatch before the dispatch: skipped")
                replay.skipped += 1
                continue
            absorb(suppress_duplicate_dispatch(replay.state, clock))
            continue
        command = _command(kind, payload)
        step_id = getattr(command, "step_id", None)
        if step_id is not None:
            node, occurrence = recording.occurrence.get(step_id, (None, None))
            target = mine.get((node, occurrence)) if node is not None and occurrence is not None else step_id
            if target is None:
                if exact:
                    raise ReplayError(f"{eid} v{version}: {kind} addresses {step_id}, which the replay never created")
                why = (
                    f"node {node!r} is not in the definition"
                    if node not in plan.nodes
                    else f"no step for node {node!r} occurrence {occurrence}"
                )
                note(at, f"{kind} on {step_id} skipped: {why}")
                replay.skipped += 1
                continue
            if target != step_id:
                if exact:
                    raise ReplayError(
                        f"{eid} v{version}: the replay created {target} where the recording has {step_id}"
                    )
                command = type(command)(**{**_fields(command), "step_id": target})
        if replay.state is not None and replay.state.status != "running" and not exact:
            note(at, f"{kind} skipped: the execution already ended ({replay.state.status})")
            replay.skipped += 1
            continue
        try:
            run(command, clock, inline)
        except ApiError as exc:
            if exact:
                raise ReplayError(f"{eid} v{version}: the engine refused the recorded {kind}: {exc.message}") from exc
            note(at, f"{kind} skipped: {exc.code.value}: {exc.message}")
            replay.skipped += 1
    if not exact and horizon is not None:
        fire_due(horizon)
    return replay


def _fields(command) -> dict:
    return {name: getattr(command, name) for name in command.__dataclass_fields__}


def replay(con: duckdb.DuckDBPyConnection, execution_id: str, definition=None) -> Replay:
    """Replay one recorded execution: against its own version (``definition=None``: exact) or
    against ``definition`` (a create body, :class:`Definition` or :class:`Plan`)."""
    recordings = load_recordings(con, execution_ids=[execution_id])
    if not recordings:
        raise LookupError(f"execution {execution_id} is not in the database")
    recording = recordings[0]
    if definition is None:
        return replay_recording(recording, _recorded_plan(con, recording, {}), exact=True)
    return replay_recording(recording, _as_plan(definition), exact=False, horizon=_horizon(con))


def replay_execution(con: duckdb.DuckDBPyConnection, execution_id: str, definition=None):
    """``(state, events)`` of :func:`replay` — the final engine state and every event."""
    result = replay(con, execution_id, definition)
    return result.state, result.events


def replay_all(
    con: duckdb.DuckDBPyConnection, *, definition_id: str | None = None, workspace_id: str | None = None, against=None
) -> list[Replay]:
    """Replay every selected execution (exactly, or against ``against``)."""
    recordings = load_recordings(con, definition_id=definition_id, workspace_id=workspace_id)
    if against is None:
        cache: dict = {}
        return [replay_recording(r, _recorded_plan(con, r, cache), exact=True) for r in recordings]
    plan, horizon = _as_plan(against), _horizon(con)
    return [replay_recording(r, plan, exact=False, horizon=horizon) for r in recordings]


# ---------------------------------------------------------------------------- outcomes and the diff

_RECORDED = """
WITH paths AS (
    SELECT e.execution_id,
           string_agg(s.node_id, '>' ORDER BY e.seq) FILTER (WHERE s.status <> 'cancelled') AS path,
           max(s.iteration) AS iterations
    FROM events e
    JOIN steps s ON s.execution_id = e.execution_id AND s.step_id = e.step_id
    WHERE e.type = 'step.scheduled' AND e.execution_id IN (SELECT unnest($ids::VARCHAR[]))
    GROUP BY e.execution_id
)
SELECT x.execution_id, x.status, x.failure_reason, p.path, coalesce(p.iterations, 1),
       coalesce(x.completed_at, x.cancelled_at) - x.started_at
FROM executions x LEFT JOIN paths p ON p.execution_id = x.execution_id
WHERE x.execution_id IN (SELECT unnest($ids::VARCHAR[]))
"""


def recorded_outcomes(con: duckdb.DuckDBPyConnection, execution_ids) -> dict[str, dict]:
    """The recorded outcome of each execution, read from the tables (as :func:`outcome_of`)."""
    rows = con.execute(_RECORDED, {"ids": list(execution_ids)}).fetchall()
    return {
        eid: {
            "status": status,
            "failureReason": reason,
            "path": path.split(">") if path else [],
            "iterations": iterations,
            "cycleTimeMs": cycle,
        }
        for eid, status, reason, path, iterations, cycle in rows
    }


def diff(con: duckdb.DuckDBPyConnection, definition_id: str, against, *, workspace_id: str | None = None) -> dict:
    """Replay every recorded execution of ``definition_id`` against ``against`` and compare
    outcomes. Returns ``{definitionId, against, executions: [...], summary: {...}}``; each
    execution entry has ``before``, ``after``, the ``changed`` fields and the replay's notes."""
    plan = _as_plan(against)
    replays = replay_all(con, definition_id=definition_id, workspace_id=workspace_id, against=plan)
    before = recorded_outcomes(con, [r.execution_id for r in replays])
    entries: list[dict[str, Any]] = []
    by_field: Counter = Counter()
    transitions: Counter = Counter()
    for r in replays:
        old, new = before[r.execution_id], r.outcome()
        changed = [f for f in OUTCOME_FIELDS if old[f] != new[f]]
        by_field.update(changed)
        transitions[f"{old['status']} -> {new['status']}"] += 1
        entries.append(
            {
                "executionId": r.execution_id,
                "workspaceId": r.recording.workspace_id,
                "before": old,
                "after": new,
                "changed": changed,
                "notes": r.notes,
            }
        )

    def mean(side: str) -> float | None:
        values = [e[side]["cycleTimeMs"] for e in entries if e[side]["cycleTimeMs"] is not None]
        return sum(values) / len(values) if values else None

    summary = {
        "executions": len(entries),
        "changed": sum(1 for e in entries if e["changed"]),
        "byField": {f: by_field.get(f, 0) for f in OUTCOME_FIELDS},
        "statusBefore": dict(Counter(e["before"]["status"] for e in entries)),
        "statusAfter": dict(Counter(e["after"]["status"] for e in entries)),
        "statusTransitions": dict(sorted(transitions.items())),
        "meanIterations": {
            side: (sum(e[side]["iterations"] for e in entries) / len(entries) if entries else None)
            for side in ("before", "after")
        },
        "meanCycleTimeMs": {"before": mean("before"), "after": mean("after")},
        "skippedCommands": sum(r.skipped for r in replays),
    }
    return {
        "definitionId": definition_id,
        "against": {"definitionId": plan.definition_id, "name": plan.definition.name},
        "executions": entries,
        "summary": summary,
    }


def format_diff(result: dict, limit: int = 50) -> str:
    """A readable report of :func:`diff`."""
    s = result["summary"]
    lines = [
        f"{s['executions']} execution(s) of {result['definitionId']} replayed against "
        f"{result['against']['definitionId']} ({result['against']['name']}): {s['changed']} changed"
    ]
    if s["executions"]:
        lines.append("  status   " + ", ".join(f"{k}: {v}" for k, v in s["statusTransitions"].items()))
        lines.append("  changed  " + ", ".join(f"{k} {v}" for k, v in s["byField"].items()))
        lines.append(
            f"  mean iterations {_num(s['meanIterations']['before'])} -> {_num(s['meanIterations']['after'])}"
            f"; mean cycle time {_num(s['meanCycleTimeMs']['before'])} ms -> "
            f"{_num(s['meanCycleTimeMs']['after'])} ms"
        )
        lines.append(f"  recorded inputs skipped: {s['skippedCommands']}")
    changed = [e for e in result["executions"] if e["changed"]]
    for entry in changed[:limit]:
        lines.append(f"{entry['executionId']}:")
        for name in entry["changed"]:
            old, new = entry["before"][name], entry["after"][name]
            if name == "path":
                old, new = " > ".join(old), " > ".join(new)
            lines.append(f"  {name:<14}{old}  ->  {new}")
        for text in entry["notes"]:
            lines.append(f"  note: {text}")
    if len(changed) > limit:
        lines.append(f"... and {len(changed) - limit} more changed execution(s) (--json lists all)")
    return "\n".join(lines)


def _num(value) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if isinstance(value, float) and not value.is_integer() else f"{value:.0f}"
