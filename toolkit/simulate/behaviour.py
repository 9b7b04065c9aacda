"""A policy resolved against one definition: per node, the numbers the driver samples from.

Resolving once per simulation keeps dictionary merges and pydantic objects out of the
per-run loop; the driver only draws from the seeded generator and looks up tuples.
"""

from __future__ import annotations

from toolkit.simulate.policy import Policy


class ResolvedPolicy:
    """``humans[node] = [(reviewer, approve_p, respond_p, sample, working time or None)]``,
    ``agents[node] = (fail_p, sample, cumulative outputs or None)``,
    ``resolutions[node] = (expected, success_p, approve_p, sample)``, ``capacity[reviewer] = k``
    for the reviewers of this definition that have a limit (empty: the runs are independent)."""

    __slots__ = ("humans", "agents", "resolutions", "capacity", "start_ms", "arrival_interval_ms", "horizon_ms")

    def __init__(self, policy: Policy, plan) -> None:
        self.humans: dict[str, list[tuple]] = {}
        self.agents: dict[str, tuple] = {}
        self.resolutions: dict[str, tuple] = {}
        self.capacity: dict[str, int] = {}
        self.start_ms = policy.start_ms
        self.arrival_interval_ms = policy.arrival_interval_ms
        self.horizon_ms = policy.horizon_ms
        calendars: dict[str, object] = {}  # one WorkingTime per reviewer: its day cache is shared
        for node_id, node in plan.nodes.items():
            if node.type == "human":
                rows = []
                for user_id, _mandatory in node.reviewers:
                    b = policy.reviewer(node_id, user_id)
                    if user_id not in calendars:
                        calendar = policy.calendar(user_id)
                        calendars[user_id] = calendar.working_time() if calendar is not None else None
                    capacity = policy.capacity_of(user_id)
                    if capacity is not None:
                        self.capacity[user_id] = capacity
                    rows.append((user_id, b.approve, b.respond, b.latency_ms.sampler(), calendars[user_id]))
                self.humans[node_id] = rows
            elif node.type == "agent" and node.blocking:
                b = policy.resolution(node_id, node.agent_id)
                self.resolutions[node_id] = (node.expected, b.success, b.approve, b.latency_ms.sampler())
            elif node.type == "agent":
                b = policy.agent(node_id, node.agent_id)
                outputs = None
                if b.outputs:
                    total = sum(o.p for o in b.outputs) or 1.0
                    acc, outputs = 0.0, []
                    for o in b.outputs:
                        acc += o.p / total
                        outputs.append((acc, o.output))
                self.agents[node_id] = (b.fail, b.latency_ms.sampler(), outputs)
