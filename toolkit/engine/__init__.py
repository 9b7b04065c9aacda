"""The workflow runtime as pure transitions: ``apply(plan, state, command, clock, ids)``.

No I/O, no wall clock, no global randomness: time comes from a :class:`Clock`, ids from an
:class:`IdSource`, agent outputs from an :class:`AgentRunner` the host drives. The server
and the simulator run this same code.

>>> from toolkit.engine import (Plan, Dispatch, RecordReviewerDecision, ManualClock,
...     SeededIds, apply, external_view)
>>> plan = Plan.from_definition({"definitionId": "doc-review", "name": "Review",
...     "nodes": [{"nodeId": "review", "type": "human",
...                "config": {"reviewers": [{"userId": "ann", "mandatory": True}]}}],
...     "edges": []})
>>> clock, ids = ManualClock(1_000), SeededIds(1)
>>> t = apply(plan, None, Dispatch("ex_1"), clock, ids)
>>> state = t.state
>>> step_id = state.steps_of("review")[0].step_id
>>> t = apply(plan, state, RecordReviewerDecision(step_id, "ann", "approve"), clock, ids)
>>> t.result
{'recorded': True, 'aggregatorStatus': 'resolved', 'resumeScheduled': True}
>>> state.status, [e.type for e in external_view(t.events)]
('completed', ['step.completed', 'execution.completed'])
"""

from toolkit.engine.agents import AgentFailure, AgentRunner, DefaultAgentRunner, run_agents
from toolkit.engine.clock import Clock, IdSource, ManualClock, SeededIds
from toolkit.engine.commands import (
    RESOLVE_ACTIONS,
    AgentCompleted,
    AgentRequest,
    CancelExecution,
    CancelStep,
    Command,
    Dispatch,
    RecordAgentResolution,
    RecordReviewerDecision,
    ResolveStep,
    Tick,
)
from toolkit.engine.events import EXTERNAL_TYPES, INTERNAL_TYPES, Event, external_view
from toolkit.engine.handlers import apply, suppress_duplicate_dispatch
from toolkit.engine.plan import EdgePlan, GroupPlan, LoopPlan, NodePlan, Plan
from toolkit.engine.run import Transition, resume_key
from toolkit.engine.state import ACTIVE, TERMINAL, ExecutionState, GroupInstance, LoopState, StepState

__all__ = [
    # time and ids
    "Clock",
    "ManualClock",
    "IdSource",
    "SeededIds",
    # the definition, precomputed
    "Plan",
    "NodePlan",
    "EdgePlan",
    "GroupPlan",
    "LoopPlan",
    # commands
    "Command",
    "Dispatch",
    "Tick",
    "AgentCompleted",
    "RecordReviewerDecision",
    "RecordAgentResolution",
    "ResolveStep",
    "CancelStep",
    "CancelExecution",
    "RESOLVE_ACTIONS",
    # applying them
    "apply",
    "Transition",
    "suppress_duplicate_dispatch",
    "resume_key",
    # state
    "ExecutionState",
    "StepState",
    "GroupInstance",
    "LoopState",
    "TERMINAL",
    "ACTIVE",
    # events
    "Event",
    "EXTERNAL_TYPES",
    "INTERNAL_TYPES",
    "external_view",
    # agents
    "AgentRequest",
    "AgentRunner",
    "AgentFailure",
    "DefaultAgentRunner",
    "run_agents",
]
