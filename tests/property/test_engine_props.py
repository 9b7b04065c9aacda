"""Engine properties over random definitions and random command sequences (hypothesis).

Definitions are chains of stages — a single agent / blocking agent / human / webhook node, or
a parallel group with any policy — with reject routes (sinks, loop-backs with or without an
``exhausted`` route), SLAs with breach routes, and external agents. Commands are abstract
choices (``decide on the k-th step``) interpreted against the live state, so most of them
are meaningful and the rest exercise the error paths. Then every waiting step is decided
until the execution ends.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.engine import (
    EXTERNAL_TYPES,
    INTERNAL_TYPES,
    RESOLVE_ACTIONS,
    TERMINAL,
    AgentCompleted,
    CancelExecution,
    CancelStep,
    RecordAgentResolution,
    RecordReviewerDecision,
    ResolveStep,
    Tick,
    external_view,
)
from toolkit.engine.testing import G, Harness, agent, definition, edge, group, human, webhook
from toolkit.errors import ApiError

STATUS_FAILED_OR_BREACHED = '{"op": "in", "args": [{"var": "step.status"}, ["failed", "breached"]]}'
TERMINAL_EVENTS = {"step.completed", "step.failed", "step.breached", "step.cancelled"}


# ---------------------------------------------------------------- random definitions


@st.composite
def definitions(draw):
    nodes, edges, groups = [], [], []
    counter = iter(range(1000))

    def sink() -> str:
        node_id = f"sink{next(counter)}"
        nodes.append(agent(node_id))
        return node_id

    def sla(node: dict) -> dict:
        if draw(st.booleans()):
            node["slaMs"] = draw(st.sampled_from([500, 2_000, 10_000]))
            route = draw(st.sampled_from(["always", "custom"]))
            edges.append(
                edge(node["nodeId"], sink(), route, when=STATUS_FAILED_OR_BREACHED if route == "custom" else None)
            )
        return node

    def reviewers(prefix: str) -> list:
        n = draw(st.integers(1, 3))
        listed = [f"{prefix}-u{i}" for i in range(n)]
        optional = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        optional[0] = False  # at least one mandatory
        return [r if not opt else (r, False) for r, opt in zip(listed, optional)]

    def blocking(node_id: str) -> dict:
        expected = draw(st.integers(1, 3))
        if draw(st.booleans()):
            policy = "allResolved"
        else:
            policy = {"kind": "minResolved", "minCount": draw(st.integers(1, expected))}
        return agent(node_id, blocking=True, resolutionPolicy=policy, expectedResolutions=expected)

    stages = []  # (kind, entry endpoint, exits [(source endpoint, role)], loopable node or None, group info)
    for i in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["human", "agent", "blocking", "webhook", "group"]))
        if kind == "group":
            policy = draw(st.sampled_from(["waitAll", "cancelOnQuorum", "joinOnQuorum"]))
            size = draw(st.integers(2, 3))
            members = [f"g{i}m{k}" for k in range(size)]
            for m in members:
                nodes.append(human(m, *reviewers(m)) if draw(st.booleans()) else blocking(m))
            quorum = {"waitAll": None, "cancelOnQuorum": draw(st.integers(1, size - 1)), "joinOnQuorum": size}[policy]
            required = [members[0]] if draw(st.booleans()) and policy != "waitAll" else None
            groups.append(group(f"g{i}", members, policy, quorum=quorum, required=required))
            if policy == "joinOnQuorum":
                exits = [(m, "approve") for m in members]
            else:
                exits = [(G(f"g{i}"), "approve")]
            if policy == "waitAll":
                edges.append(edge(G(f"g{i}"), sink(), "reject"))
            if policy == "cancelOnQuorum":
                for m in members:
                    edges.append(edge(m, sink(), "reject"))
            stages.append(("group", G(f"g{i}"), exits, None, (f"g{i}", policy)))
            continue
        node_id = f"n{i}"
        if kind == "human":
            node = sla(human(node_id, *reviewers(node_id)))
        elif kind == "blocking":
            node = sla(blocking(node_id))
        elif kind == "agent":
            mode = draw(st.sampled_from(["approve", "reject", "external", "empty"]))
            config = (
                {"external": True}
                if mode == "external"
                else {"mockOutput": {}, "requireNonEmptyOutput": True}
                if mode == "empty"
                else {"mockOutput": {"decision": mode}}
            )
            node = sla(agent(node_id, **config))
        else:
            node = webhook(node_id)
        nodes.append(node)
        stages.append(
            (
                kind,
                node_id,
                [(node_id, "approve" if kind != "webhook" else "always")],
                node_id if kind != "webhook" else None,
                None,
            )
        )

    # the chain
    for (_, _, exits, _, _), (_, entry, _, _, _) in zip(stages, stages[1:]):
        for source, role in exits:
            edges.append(edge(source, entry, role))

    # reject routes: loop-backs over non-overlapping stage intervals, else sinks
    free_from = 0
    for i, (kind, _entry, _exits, loopable, info) in enumerate(stages):
        loop_source = loopable if kind in ("human", "agent", "blocking") else None
        if info is not None and info[1] == "joinOnQuorum":
            loop_source = G(info[0])
        targets = [j for j in range(free_from, i + 1) if stages[j][3] is not None]
        if loop_source is not None and targets and draw(st.booleans()):
            j = draw(st.sampled_from(targets))
            edges.append(edge(loop_source, stages[j][3], "reject", loop=draw(st.integers(1, 3))))
            if draw(st.booleans()):
                edges.append(edge(loop_source, sink(), "exhausted"))
            free_from = i + 1
        elif kind in ("human", "blocking") and draw(st.booleans()):
            edges.append(edge(loop_source, sink(), "reject"))
    return definition(nodes, edges, groups or None)


# ---------------------------------------------------------------- random commands

IDX = st.integers(0, 7)  # 0-5 address an active step, 6-7 any step (mostly error paths)
DECIDE = st.tuples(st.just("decide"), IDX, IDX, st.sampled_from(["approve", "approve", "reject"]))
RESOLUTION = st.tuples(
    st.just("resolution"),
    IDX,
    st.integers(0, 3),
    st.sampled_from(["success", "success", "failure"]),
    st.sampled_from(["approve", "reject"]),
)
ACTIONS = st.lists(
    st.one_of(
        DECIDE,
        DECIDE,
        RESOLUTION,
        RESOLUTION,
        st.tuples(st.just("resolve"), IDX, st.sampled_from(RESOLVE_ACTIONS), IDX),
        st.tuples(st.just("tick"), st.integers(0, 12_000)),
        st.tuples(st.just("tick"), st.integers(0, 12_000)),
        st.tuples(st.just("cancel_step"), IDX),
        st.tuples(st.just("agent"), IDX, st.sampled_from(["approve", "reject", "error", "empty"])),
    ),
    max_size=16,
).flatmap(lambda xs: st.just(xs) if len(xs) < 12 else st.sampled_from([xs, xs + [("cancel",)]]))


def pick(h: Harness, index: int):
    steps = list(h.state.active.values()) if index < 6 else []
    steps = steps or list(h.state.steps.values())
    return steps[index % len(steps)] if steps else None


def to_command(h: Harness, action: tuple):
    """An abstract action -> a command against the current state (None: skip)."""
    kind = action[0]
    if kind == "tick":
        h.advance(action[1])
        return Tick()
    if kind == "cancel":
        return CancelExecution("random")
    step = pick(h, action[1])
    if step is None:
        return None
    node = h.plan.nodes[step.node_id]
    if kind == "decide":
        people = [*node.reviewer_ids, "mallory"]
        return RecordReviewerDecision(step.step_id, people[action[2] % len(people)], action[3])
    if kind == "resolution":
        status = action[3]
        return RecordAgentResolution(
            step.step_id, f"r{action[2]}", status, {"decision": action[4]}, "boom" if status == "failure" else None
        )
    if kind == "resolve":
        people = [*node.reviewer_ids, "ops"]
        return ResolveStep(step.step_id, action[2], people[action[3] % len(people)], {"decision": "approve"})
    if kind == "cancel_step":
        return CancelStep(step.step_id, "ops", "random")
    output = {"empty": {}, "error": None}.get(action[2], {"decision": action[2]})
    error = {"code": "agent-error", "message": "x"} if action[2] == "error" else None
    return AgentCompleted(step.step_id, output, error)


FINISH_STYLES = ["approve", "reject-first", "time-out"]


def finish(h: Harness, style: str) -> None:
    """Decide every waiting step until the execution ends: approving (``approve``), with a
    mandatory rejection first in iteration 1 (``reject-first``: loops iterate), or after
    letting every deadline pass (``time-out``: SLAs breach, agents time out)."""
    if style == "time-out":
        h.advance(10**7)
        h.send(Tick())
    n = 0
    for _ in range(500):
        if h.state.status != "running":
            return
        step = next(iter(h.state.active.values()))
        node = h.plan.nodes[step.node_id]
        group = h.plan.groups.get(node.group_id)
        loops_back = node.loop_back is not None or (group is not None and group.loop_back is not None)
        decision = "reject" if style == "reject-first" and step.iteration == 1 and loops_back else "approve"
        if node.type == "human":
            missing = [u for u in node.mandatory_set if u not in step.responses]
            h.send(RecordReviewerDecision(step.step_id, sorted(missing)[0], decision))
        elif node.blocking:
            n += 1
            h.send(RecordAgentResolution(step.step_id, f"fin{n}", "success", {"decision": decision}))
        else:
            h.send(AgentCompleted(step.step_id, {"decision": decision}))
    raise AssertionError("the execution did not terminate")


def drive(body: dict, actions: list, style: str = "approve", restore: bool = False) -> Harness:
    h = Harness(body, restore=restore, start_ms=0)
    h.dispatch({"k": 1})
    for action in actions:
        if h.state.status != "running" and action[0] != "decide":
            continue
        command = to_command(h, action)
        if command is None:
            continue
        try:
            h.send(command)
        except ApiError:
            pass  # the harness checked that the state is untouched
    finish(h, style)
    return h


# ---------------------------------------------------------------- the properties


def check_invariants(h: Harness) -> None:
    state, events = h.state, h.events
    # it terminated, with exactly one end event, last
    assert state.status in ("completed", "failed", "cancelled")
    ends = [e for e in events if e.type.startswith("execution.") and e.type != "execution.dispatched"]
    assert len(ends) == 1 and ends[0] is events[-1]
    if state.status == "failed":
        assert ends[0].type == "execution.failed" and ends[0].data == {"failureReason": state.failure_reason}
    # seq strictly increases, from 1, without holes in the full log
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    # only the §6 types, and the external view is exactly the external ones
    types = {e.type for e in events}
    assert types <= EXTERNAL_TYPES | INTERNAL_TYPES
    assert {e.type for e in external_view(events)} <= EXTERNAL_TYPES
    # no step becomes terminal twice; every step ends terminal with exactly one terminal event
    terminal_events = Counter(e.step_id for e in events if e.type in TERMINAL_EVENTS)
    assert all(count == 1 for count in terminal_events.values())
    for step in state.steps.values():
        assert step.status in TERMINAL
        assert terminal_events[step.step_id] == 1
        assert step.completed_at is not None and step.started_at is not None
    assert not state.active
    # groups never count more approvals or terminal members than they have
    for instance in state.groups.values():
        plan_group = h.plan.groups[instance.group_id]
        assert len(instance.approved) == len(set(instance.approved)) <= plan_group.expected
        assert instance.terminal <= plan_group.expected
    for e in h.of_type("group.quorum-met"):
        assert e.data["total"] <= e.data["expectedSteps"] and e.data["completedTotal"] <= e.data["expectedSteps"]
    quorum_events = Counter(e.data["groupId"] for e in h.of_type("group.quorum-met"))
    instances = Counter(i.group_id for i in state.groups.values())
    assert all(quorum_events[g] <= instances[g] for g in quorum_events)
    # loops never exceed their cap
    for loop_id, loop_state in state.loops.items():
        cap = h.plan.loops[loop_id].max_iterations
        assert 1 <= loop_state.iteration <= cap
        assert len(loop_state.attempts) <= cap
    for step in state.steps.values():
        loop_id = h.plan.nodes[step.node_id].loop_id
        assert step.iteration <= (h.plan.loops[loop_id].max_iterations if loop_id else 1)
    # ids
    assert all(len(s) <= 200 for s in state.steps)


SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(body=definitions(), actions=ACTIONS, style=st.sampled_from(FINISH_STYLES))
def test_random_executions_terminate_with_sound_logs(body, actions, style):
    h = drive(body, actions, style)
    check_invariants(h)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=definitions(), actions=ACTIONS, style=st.sampled_from(FINISH_STYLES))
def test_same_commands_reproduce_the_same_log(body, actions, style):
    first = drive(body, actions, style)
    second = drive(body, actions, style)
    assert first.log() == second.log()
    # and persisting the state between every two commands changes nothing
    restored = drive(body, actions, style, restore=True)
    assert restored.log() == first.log()
    assert restored.state.to_dict() == first.state.to_dict()
