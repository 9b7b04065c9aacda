"""Shared helpers for the analytics and replay tests (no tests here).

:class:`ServerRecorder` drives a real server store in process — ``toolkit.store.Store`` and
``toolkit.services`` with a :class:`ManualClock` — so executions are recorded exactly as
``collab serve`` records them (commands, events, step versions), at controlled times.
The definitions here are small on purpose: every number the tests assert can be checked by hand.
"""

from __future__ import annotations

import duckdb

from toolkit.analytics import attach, to_arrow
from toolkit.engine import ManualClock
from toolkit.model import validate
from toolkit.model import workflow as m
from toolkit.services import workflow
from toolkit.services.context import Services
from toolkit.services.workspaces import Authenticator, create_workspace
from toolkit.simulate import EPOCH_MS, simulate
from toolkit.simulate.results import connect
from toolkit.store import Store

LOOP = {
    "definitionId": "loop-review",
    "name": "Draft and review, at most two rounds",
    "nodes": [
        {"nodeId": "draft", "type": "agent", "config": {"agentId": "writer", "mockOutput": {"decision": "approve"}}},
        {
            "nodeId": "review",
            "type": "human",
            "config": {"reviewers": [{"userId": "ann", "mandatory": True}, {"userId": "bob", "mandatory": False}]},
        },
        {"nodeId": "publish", "type": "agent", "config": {"agentId": "publisher"}},
        {"nodeId": "escalate", "type": "agent", "config": {"agentId": "pager"}},
    ],
    "edges": [
        {"from": "draft", "to": "review", "on": "approve"},
        {"from": "review", "to": "publish", "on": "approve"},
        {"from": "review", "to": "draft", "on": "reject", "loop": {"maxIterations": 2}},
        {"from": "review", "to": "escalate", "on": "exhausted"},
    ],
}
LOOP_ID = "loop_review__to__draft"

SLA = {
    "definitionId": "sla-check",
    "name": "A check with a one-minute SLA",
    "nodes": [
        {"nodeId": "intake", "type": "agent", "config": {"agentId": "intake"}},
        {
            "nodeId": "check",
            "type": "human",
            "slaMs": 60_000,
            "config": {"reviewers": [{"userId": "cat", "mandatory": True}]},
        },
        {"nodeId": "done", "type": "agent", "config": {"agentId": "closer"}},
        {"nodeId": "fix", "type": "agent", "config": {"agentId": "fixer"}},
        {"nodeId": "page", "type": "agent", "config": {"agentId": "pager"}},
    ],
    "edges": [
        {"from": "intake", "to": "check", "on": "approve"},
        {"from": "check", "to": "done", "on": "approve"},
        {"from": "check", "to": "fix", "on": "reject"},
        {
            "from": "check",
            "to": "page",
            "on": "custom",
            "when": '{"op": "eq", "args": [{"var": "step.status"}, "breached"]}',
        },
    ],
}

# The scripted executions (semantics §13 scripts: atMs since dispatch). Expected numbers are
# worked out in test_analytics.py.
SCRIPTS = {
    # round 1 rejected by ann at 1 min; round 2: bob (optional) approves at 1.5 min, ann at 2.5 min
    "A1": (
        LOOP,
        [
            {"atMs": 60_000, "node": "review", "reviewer": "ann", "decision": "reject", "reason": "too long"},
            {"atMs": 90_000, "node": "review", "occurrence": 2, "reviewer": "bob", "decision": "approve"},
            {"atMs": 150_000, "node": "review", "occurrence": 2, "reviewer": "ann", "decision": "approve"},
        ],
    ),
    # rejected twice: the loop is exhausted and routes to escalate
    "A2": (
        LOOP,
        [
            {"atMs": 10_000, "node": "review", "reviewer": "ann", "decision": "reject"},
            {"atMs": 20_000, "node": "review", "occurrence": 2, "reviewer": "ann", "decision": "reject"},
        ],
    ),
    # nobody answers: the SLA breaches at 1 min and pages someone
    "B1": (SLA, []),
    # cat approves in 30 s
    "B2": (SLA, [{"atMs": 30_000, "node": "check", "reviewer": "cat", "decision": "approve"}]),
    # withdrawn after 5 s
    "B3": (SLA, [{"atMs": 5_000, "cancelExecution": True, "reason": "withdrawn"}]),
}

SEEDS = {name: seed for seed, name in enumerate(SCRIPTS, start=1)}


def eid(name: str) -> str:
    """The simulated execution id of script ``name`` in :func:`simulated_log`."""
    return f"sim-{SEEDS[name]}-0"


def simulated_log() -> duckdb.DuckDBPyConnection:
    """Every scripted execution of SCRIPTS, simulated and gathered into one database (ids
    sim-<seed>-0). Each simulation gets its own database: the simulator joins a batch's rows to
    executions by run number, so two simulations must not share one."""
    con = connect(None)
    for name, (definition, actions) in SCRIPTS.items():
        result = simulate(definition, runs=1, seed=SEEDS[name], script={"actions": actions})
        # every simulation numbers its executions' exec_key from 0: renumber them after the others
        offset = con.execute("SELECT count(*) FROM executions").fetchone()[0]
        for table in ("executions", "steps", "events", "outcomes"):
            keyed = f" REPLACE (exec_key + {offset} AS exec_key)" if table in ("executions", "steps") else ""
            _part = to_arrow(result.con.sql(f"SELECT *{keyed} FROM {table}"))  # noqa: F841 - read by name below
            con.execute(f"INSERT INTO {table} SELECT * FROM _part")
        result.con.close()
    # and each numbers its definition 0: one key per definition id across the simulations
    con.execute(
        "UPDATE executions SET definition_key = k.key FROM (SELECT definition_id, "
        "CAST(dense_rank() OVER (ORDER BY definition_id) - 1 AS INTEGER) AS key FROM executions) k "
        "WHERE k.definition_id = executions.definition_id"
    )
    con.execute(
        "UPDATE steps SET definition_key = x.definition_key FROM executions x WHERE x.execution_id = steps.execution_id"
    )
    return attach(con)


class ServerRecorder:
    """A server store in process with a manual clock; ``at(ms)`` sets the time since ``start``."""

    def __init__(self, db=":memory:", start: int = EPOCH_MS, runner=None) -> None:
        self.start = start
        self.clock = ManualClock(start)
        self.store = Store(db)
        self.services = (
            Services(self.store, clock=self.clock)
            if runner is None
            else Services(self.store, clock=self.clock, runner=runner)
        )
        creds = create_workspace(self.store, "analytics-tests", now_ms=start)
        self.workspace = Authenticator(self.store).authenticate(creds.api_key, creds.auth_token)

    def at(self, ms: int) -> ServerRecorder:
        self.clock.set(self.start + ms)
        return self

    def define(self, body: dict) -> dict:
        return workflow.create_definition(self.services, self.workspace, body)

    def update(self, definition_id: str, body: dict) -> dict:
        from toolkit.model import DefinitionUpdate

        data = {k: v for k, v in body.items() if k != "definitionId"}
        request = validate(DefinitionUpdate, {"definitionId": definition_id, **data})
        return workflow.update_definition(self.services, self.workspace, request)

    def dispatch(self, definition_id: str, **fields) -> str:
        request = validate(m.Dispatch, {"definitionId": definition_id, **fields})
        return workflow.dispatch(self.services, self.workspace, request)["executionId"]

    def step_id(self, execution_id: str, node: str, occurrence: int = 1) -> str:
        view = workflow.get_execution(
            self.services, self.workspace, validate(m.ExecutionRef, {"executionId": execution_id})
        )
        return [s["stepId"] for s in view["steps"] if s["nodeId"] == node][occurrence - 1]

    def view(self, execution_id: str) -> dict:
        return workflow.get_execution(
            self.services, self.workspace, validate(m.ExecutionRef, {"executionId": execution_id})
        )

    def decide(
        self, execution_id: str, node: str, reviewer: str, decision: str, occurrence: int = 1, reason: str | None = None
    ) -> dict:
        data = {
            "executionId": execution_id,
            "stepId": self.step_id(execution_id, node, occurrence),
            "reviewerId": reviewer,
            "decision": decision,
        }
        if reason is not None:
            data["reason"] = reason
        return workflow.record_reviewer_decision(
            self.services, self.workspace, validate(m.RecordReviewerDecision, data)
        )

    def resolve(self, execution_id: str, node: str, action: str, actor: str, occurrence: int = 1, **extra) -> dict:
        data = {
            "executionId": execution_id,
            "stepId": self.step_id(execution_id, node, occurrence),
            "action": action,
            "actorId": actor,
            **extra,
        }
        return workflow.resolve_step(self.services, self.workspace, validate(m.ResolveStep, data))

    def resolution(
        self, execution_id: str, node: str, resolution_id: str, status: str, occurrence: int = 1, **extra
    ) -> dict:
        data = {
            "executionId": execution_id,
            "stepId": self.step_id(execution_id, node, occurrence),
            "resolutionId": resolution_id,
            "status": status,
            **extra,
        }
        return workflow.record_agent_resolution(self.services, self.workspace, validate(m.RecordAgentResolution, data))

    def cancel_step(self, execution_id: str, node: str, actor: str, occurrence: int = 1) -> dict:
        data = {"executionId": execution_id, "stepId": self.step_id(execution_id, node, occurrence), "actorId": actor}
        return workflow.cancel_step(self.services, self.workspace, validate(m.CancelStep, data))

    def cancel(self, execution_id: str, reason: str | None = None) -> dict:
        data = {"executionId": execution_id, **({"reason": reason} if reason else {})}
        return workflow.cancel_execution(self.services, self.workspace, validate(m.CancelExecution, data))

    def tick(self, execution_id: str):
        return workflow.tick(self.services, self.workspace.workspace_id, execution_id)

    def agent_completed(self, execution_id: str, node: str, output=None, error=None, occurrence: int = 1):
        return workflow.agent_completed(
            self.services,
            self.workspace.workspace_id,
            execution_id,
            self.step_id(execution_id, node, occurrence),
            output,
            error,
        )

    def play(self, definition_id: str, actions: list[dict], dispatch_at: int = 0) -> str:
        """Dispatch at ``dispatch_at`` and apply script actions (``atMs`` since dispatch), firing
        due SLA deadlines at their exact time first, as the server's timer would."""
        self.at(dispatch_at)
        eid = self.dispatch(definition_id)
        for action in sorted(actions, key=lambda a: a["atMs"]):
            self._fire_deadlines(eid, dispatch_at + action["atMs"])
            self.at(dispatch_at + action["atMs"])
            if action.get("cancelExecution"):
                self.cancel(eid, action.get("reason"))
            else:
                self.decide(
                    eid,
                    action["node"],
                    action["reviewer"],
                    action["decision"],
                    action.get("occurrence", 1),
                    action.get("reason"),
                )
        self._fire_deadlines(eid, None)
        return eid

    def _fire_deadlines(self, execution_id: str, until: int | None) -> None:
        while True:
            row = self.store.read(
                "SELECT status, next_deadline FROM executions WHERE execution_id = ?", [execution_id]
            ).fetchone()
            status, deadline = row
            if status != "running" or deadline is None or (until is not None and deadline > self.start + until):
                return
            self.clock.set(deadline)
            self.tick(execution_id)

    def close(self) -> None:
        self.store.close()
