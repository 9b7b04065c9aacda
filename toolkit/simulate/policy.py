"""Simulation policies: how simulated reviewers and agents behave (semantics §13).

A policy is JSON (or the equivalent dict); every part is optional::

    {
      "reviewers": {"*": {"approve": 0.9, "latencyMs": {"lognormal": {"medianMs": 3600000, "sigma": 0.8}}},
                    "alice@legal": {"approve": 0.7, "respond": 0.95}},
      "nodes":     {"brand-review": {"approve": 0.6, "latencyMs": {"uniform": [600000, 7200000]}}},
      "agents":    {"*": {"latencyMs": 0},
                    "copywriter": {"latencyMs": {"exponential": 120000}, "fail": 0.02,
                                   "outputs": [{"p": 0.8, "output": {"decision": "approve"}},
                                               {"p": 0.2, "output": {"decision": "reject", "reason": "tone"}}]}},
      "resolutions": {"*": {"success": 0.95, "approve": 0.9, "latencyMs": 60000}},
      "calendars": {"*": {"timeZone": "Europe/Paris", "weekdays": ["mon", "tue", "wed", "thu", "fri"],
                          "hours": [[9, 12], [13, 17.5]], "holidays": ["2026-12-25"]},
                    "alice@legal": {"timeZone": "America/New_York"}},
      "capacity": {"*": 3, "alice@legal": 1},
      "startAt": "2026-01-01T00:00:00Z",
      "arrivalIntervalMs": 60000,
      "horizonMs": 2592000000
    }

Human decisions: each declared reviewer of a waiting human step responds with probability
``respond`` after a ``latencyMs`` sample and approves with probability ``approve``. The
settings merge from least to most specific: built-in defaults, ``reviewers["*"]``,
``nodes[<nodeId>]``, ``reviewers[<userId>]``.

Agents (non-blocking): keyed by node id or agent id (node id wins, then ``"*"``); the step
completes after ``latencyMs``, fails with probability ``fail`` (``error.code = "agent-error"``),
and otherwise outputs one of ``outputs`` by weight ``p`` — or, when none are given, what the
default runner gives (the node's ``mockOutput``, else ``{agentId, decision: "approve"}``).
A latency past the node's ``agentMaxRuntimeMs`` ends in the engine's ``agent-timeout``.

Blocking agents: ``expectedResolutions`` resolutions arrive, each after ``latencyMs``,
successful with probability ``success`` and approving with probability ``approve``;
keyed like agents, in ``resolutions``.

Calendars (:mod:`.calendars`, by reviewer id, else ``"*"``, else none: always at work): a
reviewer's latency only runs inside their working hours. Capacity (by reviewer id, else
``"*"``, else unlimited): a reviewer works on at most *k* waiting steps at once, across all
runs; further steps queue first come, first served and their latency starts when a slot
frees (the reviewer decides, or the step ends otherwise). Capacity couples the runs, so they
are simulated together on one clock (see :mod:`.queues`).

``startAt`` (ISO 8601 with an offset, default ``2026-01-01T00:00:00Z``, a Thursday) is the
virtual time of the first dispatch, what calendars are read against. ``arrivalIntervalMs``
spaces the runs' dispatch times; ``horizonMs`` is how long a run may go on in virtual time
before the simulator stops it (it is then reported ``running``).
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from pydantic import Field, field_validator

from toolkit.model.base import ApiModel, JsonObject
from toolkit.simulate.calendars import Calendar
from toolkit.simulate.distributions import Distribution, Fixed, LogNormal, LogNormalSpec

Probability = Annotated[float, Field(ge=0, le=1)]
DEFAULT_START_AT = "2026-01-01T00:00:00Z"


class ReviewerBehaviour(ApiModel):
    approve: Probability | None = None
    respond: Probability | None = None
    latency_ms: Distribution | None = None


class WeightedOutput(ApiModel):
    p: Annotated[float, Field(ge=0)]
    output: JsonObject


class AgentBehaviour(ApiModel):
    latency_ms: Distribution | None = None
    fail: Probability | None = None
    outputs: list[WeightedOutput] | None = None


class ResolutionBehaviour(ApiModel):
    success: Probability | None = None
    approve: Probability | None = None
    latency_ms: Distribution | None = None


DEFAULT_REVIEWER = ReviewerBehaviour(
    approve=0.9,
    respond=1.0,
    latency_ms=LogNormal(lognormal=LogNormalSpec(median_ms=3_600_000, sigma=0.8)),
)
DEFAULT_AGENT = AgentBehaviour(latency_ms=Fixed(fixed=0), fail=0.0)
DEFAULT_RESOLUTION = ResolutionBehaviour(success=1.0, approve=1.0, latency_ms=Fixed(fixed=0))


class Policy(ApiModel):
    reviewers: dict[str, ReviewerBehaviour] = {}
    nodes: dict[str, ReviewerBehaviour] = {}
    agents: dict[str, AgentBehaviour] = {}
    resolutions: dict[str, ResolutionBehaviour] = {}
    calendars: dict[str, Calendar] = {}
    capacity: dict[str, Annotated[int, Field(ge=1)]] = {}
    start_at: str = DEFAULT_START_AT
    arrival_interval_ms: Annotated[int, Field(ge=0)] = 60_000
    horizon_ms: Annotated[int, Field(ge=1)] = 30 * 24 * 3_600_000

    @field_validator("start_at")
    @classmethod
    def _instant(cls, value: str) -> str:
        try:
            moment = dt.datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{value!r} is not an ISO 8601 date-time") from None
        if moment.tzinfo is None:
            raise ValueError(f"{value!r} needs an offset (Z or +hh:mm): calendars are read against it")
        return value

    @property
    def start_ms(self) -> int:
        """``startAt`` in epoch milliseconds: the virtual time of run 0's dispatch."""
        moment = dt.datetime.fromisoformat(self.start_at)
        return (moment - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // dt.timedelta(milliseconds=1)

    def to_json(self) -> dict:
        """The policy as JSON (wire names), only what differs from the defaults: what
        :meth:`load` reads back into an equal policy."""
        return self.model_dump(mode="json", by_alias=True, exclude_defaults=True)

    @classmethod
    def load(cls, value: Policy | dict | None) -> Policy:
        if value is None:
            return cls()
        return value if isinstance(value, Policy) else cls.model_validate(value)

    def reviewer(self, node_id: str, user_id: str) -> ReviewerBehaviour:
        return _merge(DEFAULT_REVIEWER, self.reviewers.get("*"), self.nodes.get(node_id), self.reviewers.get(user_id))

    def agent(self, node_id: str, agent_id: str) -> AgentBehaviour:
        return _merge(DEFAULT_AGENT, self.agents.get("*"), self.agents.get(agent_id), self.agents.get(node_id))

    def calendar(self, user_id: str) -> Calendar | None:
        """The reviewer's calendar, or None when they are always at work."""
        return self.calendars.get(user_id, self.calendars.get("*"))

    def capacity_of(self, user_id: str) -> int | None:
        """How many waiting steps the reviewer works on at once (None: no limit)."""
        return self.capacity.get(user_id, self.capacity.get("*"))

    def resolution(self, node_id: str, agent_id: str) -> ResolutionBehaviour:
        return _merge(
            DEFAULT_RESOLUTION, self.resolutions.get("*"), self.resolutions.get(agent_id), self.resolutions.get(node_id)
        )


def _merge(base: Any, *overrides: Any) -> Any:
    fields = dict(base)
    for override in overrides:
        if override is not None:
            fields.update({k: v for k, v in override if v is not None})
    return type(base).model_construct(**fields)
