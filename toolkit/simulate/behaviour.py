"""A policy resolved against one definition: per node, the numbers the driver samples from.

Resolving once per simulation keeps dictionary merges and pydantic objects out of the
per-run loop; the driver only draws from the seeded generator and looks up tuples.
"""

from __future__ import annotations

from toolkit.simulate.calendars import WorkingTime
from toolkit.simulate.distributions import Distribution, Sampler
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
        calendars: dict[str, WorkingTime | None] = {}  # one WorkingTime per reviewer: its day cache is shared
        for node_id, node in plan.nodes.items():
            if node.type == "human":
                rows = []
                for user_id, _mandatory in node.reviewers:
                    reviewer = policy.reviewer(node_id, user_id)
                    if user_id not in calendars:
                        calendar = policy.calendar(user_id)
                        calendars[user_id] = calendar.working_time() if calendar is not None else None
                    capacity = policy.capacity_of(user_id)
                    if capacity is not None:
                        self.capacity[user_id] = capacity
                    rows.append(
                        (user_id, reviewer.approve, reviewer.respond, _sampler(reviewer.latency_ms), calendars[user_id])
                    )
                self.humans[node_id] = rows
            elif node.type == "agent" and node.blocking:
                resolution = policy.resolution(node_id, node.agent_id)
                self.resolutions[node_id] = (
                    node.expected,
                    resolution.success,
                    resolution.approve,
                    _sampler(resolution.latency_ms),
                )
            elif node.type == "agent":
                agent = policy.agent(node_id, node.agent_id)
                outputs: list[tuple[float, dict]] | None = None
                if agent.outputs:
                    total = sum(o.p for o in agent.outputs) or 1.0
                    acc, outputs = 0.0, []
                    for o in agent.outputs:
                        acc += o.p / total
                        outputs.append((acc, o.output))
                self.agents[node_id] = (agent.fail, _sampler(agent.latency_ms), outputs)


def _sampler(latency: Distribution | None) -> Sampler:
    assert latency is not None, "the policy's defaults give every behaviour a latency"
    return latency.sampler()
