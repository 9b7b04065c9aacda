"""Unit tests for toolkit.lint: every key of semantics §4, each with a minimal failing
definition and a passing neighbour one small change away."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import pytest
from strategies import (
    agent,
    bare,
    blocking,
    definition,
    edge,
    group,
    grp,
    human,
    nd,
    op,
    var,
    webhook,
    with_sla,
)

from toolkit.lint import Finding, errors_of, lint, lint_document, unwrap
from toolkit.model import Definition

SCORE = op("gte", var("output.score"), 0.5)
STATUS = op("eq", var("step.status"), "breached")


def findings(raw: dict, known_agents: set[str] | None = None) -> list[Finding]:
    return lint(Definition.model_validate(raw), known_agents)


def keys(found: list[Finding]) -> set[str]:
    return {f.key for f in found}


@dataclass
class Case:
    id: str
    key: str
    severity: str
    where: list[str]  # every `where` the key is reported at, in report order
    bad: dict
    good: dict
    also: frozenset = field(default_factory=frozenset)  # keys that necessarily come with it
    known_agents: set | None = None


def D(nodes, edges, groups=None):
    return definition(nodes, edges, groups)


# Shared shapes -------------------------------------------------------------------------


def _group_from_reject(policy):
    def build(p):
        return D(
            [agent("start"), blocking("m1"), blocking("m2"), agent("done"), agent("redo")],
            [edge("start", grp("g")), edge(grp("g"), "done", "approve"), edge(grp("g"), "redo", "reject")],
            [group("g", "m1", "m2", onQuorumMet=p, quorum=1)],
        )

    return build(policy), build("waitAll")


def _join_members(policy, sla_on_m1=False):
    m1 = with_sla(blocking("m1")) if sla_on_m1 else blocking("m1")
    return D(
        [agent("s"), m1, blocking("m2"), agent("d")],
        [edge("s", grp("g")), edge("m1", "d", "approve"), edge("m2", "d", "approve")],
        [group("g", "m1", "m2", onQuorumMet=policy)],
    )


def _join_loop(policy, quorum=None):
    extra = {} if quorum is None else {"quorum": quorum}
    return D(
        [agent("s"), blocking("m1"), blocking("m2"), agent("done")],
        [
            edge("s", grp("g"), "approve"),
            edge("m1", "done", "approve"),
            edge("m2", "done", "approve"),
            edge(grp("g"), "s", "reject", loop=2),
        ],
        [group("g", "m1", "m2", onQuorumMet=policy, **extra)],
    )


def _review_loop(exhausted_to):
    return D(
        [agent("start"), agent("draft"), human("review"), agent("publish"), agent("escalate")],
        [
            edge("start", "draft"),
            edge("draft", "review", "approve"),
            edge("review", "publish", "approve"),
            edge("review", "draft", "reject", loop=2),
            edge("review", exhausted_to, "exhausted"),
        ],
    )


CASES = [
    # ---------------------------------------------------------------- contract keys
    Case(
        "human-no-reject",
        "APPROVAL_HUMAN_NODE_REQUIRES_REJECT_PATH",
        "error",
        ["node:review"],
        D([human("review"), agent("publish"), agent("fix")], [edge("review", "publish", "approve")]),
        D(
            [human("review"), agent("publish"), agent("fix")],
            [edge("review", "publish", "approve"), edge("review", "fix", "reject")],
        ),
    ),
    Case(
        "human-loop-back-counts",
        "APPROVAL_HUMAN_NODE_REQUIRES_REJECT_PATH",
        "error",
        ["node:review"],
        D(
            [agent("draft"), human("review"), agent("publish")],
            [edge("draft", "review", "approve"), edge("review", "publish", "approve")],
        ),
        D(
            [agent("draft"), human("review"), agent("publish")],
            [
                edge("draft", "review", "approve"),
                edge("review", "publish", "approve"),
                edge("review", "draft", "reject", loop=3),
            ],
        ),
    ),
    Case(
        "human-group-member",
        "APPROVAL_HUMAN_NODE_REQUIRES_REJECT_PATH",
        "error",
        ["node:legal", "node:finance"],
        D(
            [agent("start"), human("legal"), human("finance"), agent("done"), agent("fix")],
            [edge("start", grp("board")), edge(grp("board"), "done", "approve")],
            [group("board", "legal", "finance")],
        ),
        D(
            [agent("start"), human("legal"), human("finance"), agent("done"), agent("fix")],
            [edge("start", grp("board")), edge(grp("board"), "done", "approve"), edge(grp("board"), "fix", "reject")],
            [group("board", "legal", "finance")],
        ),
    ),
    Case(
        "when-on-approve",
        "APPROVAL_EDGE_WHEN_REQUIRES_CUSTOM",
        "error",
        ["edge:0"],
        D([agent("a"), agent("b")], [edge("a", "b", "approve", when=SCORE)]),
        D([agent("a"), agent("b")], [edge("a", "b", "approve")]),
    ),
    Case(
        "when-on-default-always",
        "APPROVAL_EDGE_WHEN_REQUIRES_CUSTOM",
        "error",
        ["edge:0"],
        D([agent("a"), agent("b")], [edge("a", "b", when=SCORE)]),
        D([agent("a"), agent("b")], [edge("a", "b", "custom", when=SCORE), edge("a", "b")]),
    ),
    Case(
        "custom-without-when",
        "APPROVAL_EDGE_CUSTOM_REQUIRES_WHEN",
        "error",
        ["edge:1"],
        D([agent("a"), agent("b")], [edge("a", "b"), edge("a", "b", "custom")]),
        D([agent("a"), agent("b")], [edge("a", "b"), edge("a", "b", "custom", when=SCORE)]),
    ),
    Case(
        "when-invalid",
        "APPROVAL_EDGE_WHEN_INVALID",
        "error",
        ["edge:1"],
        D([agent("a"), agent("b")], [edge("a", "b"), edge("a", "b", "custom", when=op("nope", 1))]),
        D([agent("a"), agent("b")], [edge("a", "b"), edge("a", "b", "custom", when=SCORE)]),
    ),
    Case(
        "loop-on-approve",
        "APPROVAL_EDGE_LOOP_REQUIRES_REJECT",
        "error",
        ["edge:0"],
        D([agent("a"), agent("b")], [edge("a", "b", "approve", loop=2)]),
        D([agent("a"), agent("b")], [edge("a", "b", "approve")]),
    ),
    Case(
        "reject-back-without-loop",
        "APPROVAL_EDGE_REJECT_CYCLE_REQUIRES_LOOP",
        "error",
        ["edge:3"],
        D(
            [agent("start"), agent("draft"), human("review"), agent("publish")],
            [
                edge("start", "draft"),
                edge("draft", "review", "approve"),
                edge("review", "publish", "approve"),
                edge("review", "draft", "reject"),
            ],
        ),
        D(
            [agent("start"), agent("draft"), human("review"), agent("publish")],
            [
                edge("start", "draft"),
                edge("draft", "review", "approve"),
                edge("review", "publish", "approve"),
                edge("review", "draft", "reject", loop=3),
            ],
        ),
        also=frozenset({"cycle-detected"}),
    ),
    Case(
        "reject-self-without-loop",
        "APPROVAL_EDGE_REJECT_CYCLE_REQUIRES_LOOP",
        "error",
        ["edge:2"],
        D(
            [agent("start"), human("review"), agent("publish")],
            [edge("start", "review"), edge("review", "publish", "approve"), edge("review", "review", "reject")],
        ),
        D(
            [agent("start"), human("review"), agent("publish")],
            [edge("start", "review"), edge("review", "publish", "approve"), edge("review", "review", "reject", loop=1)],
        ),
        also=frozenset({"cycle-detected"}),
    ),
    Case(
        "loop-target-descendant",
        "APPROVAL_EDGE_LOOP_TARGET_NOT_ANCESTOR",
        "error",
        ["edge:1"],
        D(
            [human("review"), agent("publish")],
            [edge("review", "publish", "approve"), edge("review", "publish", "reject", loop=2)],
        ),
        D(
            [human("review"), agent("publish")],
            [edge("review", "publish", "approve"), edge("review", "review", "reject", loop=2)],
        ),
    ),
    Case(
        "loop-target-other-branch",
        "APPROVAL_EDGE_LOOP_TARGET_NOT_ANCESTOR",
        "error",
        ["edge:2"],
        D(
            [agent("a"), agent("b"), agent("c")],
            [edge("a", "b", "approve"), edge("a", "c", "reject"), edge("c", "b", "reject", loop=2)],
        ),
        D(
            [agent("a"), agent("b"), agent("c")],
            [edge("a", "b", "approve"), edge("a", "c", "reject"), edge("c", "a", "reject", loop=2)],
        ),
    ),
    Case(
        "exhausted-without-loop",
        "APPROVAL_EDGE_EXHAUSTED_REQUIRES_LOOP_SIBLING",
        "error",
        ["edge:1"],
        D([agent("a"), agent("b"), agent("c")], [edge("a", "b", "approve"), edge("a", "c", "exhausted")]),
        D(
            [agent("a"), agent("b"), agent("c")],
            [edge("a", "b", "approve"), edge("a", "c", "exhausted"), edge("a", "a", "reject", loop=2)],
        ),
    ),
    Case(
        "exhausted-twice",
        "APPROVAL_EDGE_EXHAUSTED_DUPLICATE",
        "error",
        ["edge:3"],
        D(
            [agent("a"), agent("b"), agent("c"), agent("d")],
            [
                edge("a", "b", "approve"),
                edge("a", "a", "reject", loop=2),
                edge("a", "c", "exhausted"),
                edge("a", "d", "exhausted"),
            ],
        ),
        D(
            [agent("a"), agent("b"), agent("c"), agent("d")],
            [
                edge("a", "b", "approve"),
                edge("a", "a", "reject", loop=2),
                edge("a", "c", "exhausted"),
                edge("a", "d", "approve"),
            ],
        ),
    ),
    Case(
        "group-reject-joinOnQuorum",
        "APPROVAL_GROUP_FROM_REJECT_REQUIRES_LOOP",
        "error",
        ["edge:2"],
        *_group_from_reject("joinOnQuorum"),
    ),
    Case(
        "group-reject-cancelOnQuorum",
        "APPROVAL_GROUP_FROM_REJECT_REQUIRES_LOOP",
        "error",
        ["edge:2"],
        *_group_from_reject("cancelOnQuorum"),
    ),
    Case(
        "group-loop-waitAll",
        "APPROVAL_GROUP_FROM_LOOP_REQUIRES_JOINONQUORUM",
        "error",
        ["edge:1"],
        D(
            [agent("draft"), blocking("m1"), blocking("m2")],
            [edge("draft", grp("g"), "approve"), edge(grp("g"), "draft", "reject", loop=3)],
            [group("g", "m1", "m2")],
        ),
        D(
            [agent("draft"), blocking("m1"), blocking("m2")],
            [edge("draft", grp("g"), "approve"), edge(grp("g"), "draft", "reject", loop=3)],
            [group("g", "m1", "m2", onQuorumMet="joinOnQuorum")],
        ),
    ),
    Case(
        "group-to-group",
        "APPROVAL_GROUP_TO_GROUP_EDGE",
        "error",
        ["edge:0"],
        D([blocking("a"), blocking("b")], [edge(grp("g1"), grp("g2"))], [group("g1", "a"), group("g2", "b")]),
        D([blocking("a"), blocking("b")], [edge("a", grp("g2"))], [group("g1", "a"), group("g2", "b")]),
    ),
    # ---------------------------------------------------------------- graph keys
    Case(
        "duplicate-node",
        "duplicate-node-id",
        "error",
        ["node:a"],
        D([agent("a"), agent("a")], []),
        D([agent("a"), agent("b")], []),
    ),
    Case(
        "group-id-is-node-id",
        "duplicate-node-id",
        "error",
        ["group:a"],
        D([agent("a"), blocking("m")], [], [group("a", "m")]),
        D([agent("a"), blocking("m")], [], [group("g", "m")]),
    ),
    Case(
        "dangling-node",
        "dangling-edge",
        "error",
        ["edge:0"],
        D([agent("a")], [edge("a", "ghost")]),
        D([agent("a"), agent("ghost")], [edge("a", "ghost")]),
    ),
    Case(
        "dangling-group",
        "dangling-edge",
        "error",
        ["edge:0"],
        D([agent("a"), blocking("m")], [edge("a", grp("nogroup"))], [group("g", "m")]),
        D([agent("a"), blocking("m")], [edge("a", grp("g"))], [group("g", "m")]),
    ),
    Case(
        "dangling-both-ends",
        "dangling-edge",
        "error",
        ["edge:1", "edge:1"],
        D([agent("a")], [edge("a", "a", "reject", loop=1), edge("x", nd("y"))]),
        D([agent("a"), agent("x"), agent("y")], [edge("a", "a", "reject", loop=1), edge("x", nd("y"))]),
    ),
    Case(
        "cycle",
        "cycle-detected",
        "error",
        ["node:a"],
        D([agent("start"), agent("a"), agent("b")], [edge("start", "a"), edge("a", "b"), edge("b", "a")]),
        D(
            [agent("start"), agent("a"), agent("b")],
            [edge("start", "a"), edge("a", "b"), edge("b", "a", "reject", loop=2)],
        ),
    ),
    Case(
        "forward-self-loop",
        "cycle-detected",
        "error",
        ["node:a"],
        D(
            [agent("s"), agent("a"), agent("b")],
            [edge("s", "a"), edge("a", "b", "approve"), edge("a", "a", "custom", when=STATUS)],
        ),
        D(
            [agent("s"), agent("a"), agent("b")],
            [edge("s", "a"), edge("a", "b", "approve"), edge("a", "b", "custom", when=STATUS)],
        ),
    ),
    Case(
        "unreachable",
        "unreachable-node",
        "error",
        ["node:a", "node:b"],
        D([agent("start"), agent("a"), agent("b")], [edge("a", "b"), edge("b", "a")]),
        D([agent("start"), agent("a"), agent("b")], [edge("start", "a"), edge("a", "b"), edge("b", "a")]),
        also=frozenset({"cycle-detected"}),
    ),
    Case(
        "missing-config-agent",
        "node-missing-config",
        "error",
        ["node:a"],
        D([bare(agent("a"))], []),
        D([agent("a")], []),
    ),
    Case(
        "missing-config-human",
        "node-missing-config",
        "error",
        ["node:h"],
        D([bare(human("h")), agent("fix")], [edge("h", "fix", "reject")]),
        D([human("h"), agent("fix")], [edge("h", "fix", "reject")]),
    ),
    Case(
        "missing-config-webhook",
        "node-missing-config",
        "error",
        ["node:w"],
        D([bare(webhook("w"))], []),
        D([webhook("w")], []),
    ),
    Case(
        "sla-approve-only",
        "missing-breach-edge",
        "error",
        ["node:a"],
        D([with_sla(agent("a")), agent("b")], [edge("a", "b", "approve")]),
        D([with_sla(agent("a")), agent("b")], [edge("a", "b", "always")]),
    ),
    Case(
        "sla-always-beside-approve",
        "missing-breach-edge",
        "error",
        ["node:a"],
        D([with_sla(agent("a")), agent("b"), agent("late")], [edge("a", "b", "approve")]),
        D([with_sla(agent("a")), agent("b"), agent("late")], [edge("a", "b", "approve"), edge("a", "late")]),
    ),
    Case(
        "sla-custom-not-status",
        "missing-breach-edge",
        "error",
        ["node:a"],
        D(
            [with_sla(agent("a")), agent("b"), agent("late")],
            [edge("a", "b", "approve"), edge("a", "late", "custom", when=SCORE)],
        ),
        D(
            [with_sla(agent("a")), agent("b"), agent("late")],
            [edge("a", "b", "approve"), edge("a", "late", "custom", when=STATUS)],
        ),
    ),
    Case(
        "sla-loop-back-only",
        "missing-breach-edge",
        "error",
        ["node:h"],
        D([with_sla(human("h")), agent("late")], [edge("h", "h", "reject", loop=2)]),
        D([with_sla(human("h")), agent("late")], [edge("h", "h", "reject", loop=2), edge("h", "late")]),
    ),
    Case(
        "sla-group-member",
        "missing-breach-edge",
        "error",
        ["node:m1"],
        _join_members("waitAll", sla_on_m1=True),
        _join_members("joinOnQuorum", sla_on_m1=True),
        also=frozenset({"implicit-join"}),
    ),
    # ---------------------------------------------------------------- group keys
    Case(
        "group-dup",
        "group-duplicate-id",
        "error",
        ["group:g"],
        D([blocking("a"), blocking("b")], [], [group("g", "a"), group("g", "b")]),
        D([blocking("a"), blocking("b")], [], [group("g", "a"), group("g2", "b")]),
    ),
    Case(
        "group-empty",
        "group-members-empty",
        "error",
        ["group:g"],
        D([blocking("a")], [], [group("g")]),
        D([blocking("a")], [], [group("g", "a")]),
    ),
    Case(
        "group-member-missing",
        "group-member-missing",
        "error",
        ["group:g"],
        D([blocking("a"), blocking("b")], [], [group("g", "a", "ghost")]),
        D([blocking("a"), blocking("b")], [], [group("g", "a", "b")]),
    ),
    Case(
        "group-expected",
        "group-expected-steps-invalid",
        "error",
        ["group:g"],
        D([blocking("a"), blocking("b")], [], [group("g", "a", "b", expectedSteps=3)]),
        D([blocking("a"), blocking("b")], [], [group("g", "a", "b", expectedSteps=2)]),
    ),
    Case(
        "group-quorum-high",
        "group-quorum-invalid",
        "error",
        ["group:g"],
        D([blocking("a"), blocking("b")], [], [group("g", "a", "b", quorum=3)]),
        D([blocking("a"), blocking("b")], [], [group("g", "a", "b", quorum=2)]),
    ),
    Case(
        "group-quorum-zero",
        "group-quorum-invalid",
        "error",
        ["group:g"],
        D([blocking("a"), blocking("b")], [], [group("g", "a", "b", quorum=0)]),
        D([blocking("a"), blocking("b")], [], [group("g", "a", "b", quorum=1)]),
    ),
    Case(
        "cancel-default-quorum",
        "group-cancelonquorum-requires-quorum-lt-expected",
        "error",
        ["group:g"],
        D([blocking("a"), blocking("b")], [], [group("g", "a", "b", onQuorumMet="cancelOnQuorum")]),
        D([blocking("a"), blocking("b")], [], [group("g", "a", "b", onQuorumMet="cancelOnQuorum", quorum=1)]),
    ),
    Case(
        "cancel-quorum-equal",
        "group-cancelonquorum-requires-quorum-lt-expected",
        "error",
        ["group:g"],
        D([blocking("a"), blocking("b")], [], [group("g", "a", "b", onQuorumMet="cancelOnQuorum", quorum=2)]),
        D([blocking("a"), blocking("b")], [], [group("g", "a", "b", onQuorumMet="waitAll", quorum=2)]),
    ),
    Case(
        "join-successors",
        "group-joinonquorum-members-must-share-successors",
        "error",
        ["group:g"],
        D(
            [agent("s"), blocking("a"), blocking("b"), agent("x"), agent("y")],
            [edge("s", grp("g")), edge("a", "x", "approve"), edge("b", "y", "approve")],
            [group("g", "a", "b", onQuorumMet="joinOnQuorum")],
        ),
        D(
            [agent("s"), blocking("a"), blocking("b"), agent("x"), agent("y")],
            [edge("s", grp("g")), edge("a", "x", "approve"), edge("b", "x", "approve")],
            [group("g", "a", "b", onQuorumMet="joinOnQuorum")],
        ),
    ),
    Case(
        "join-successor-missing",
        "group-joinonquorum-members-must-share-successors",
        "error",
        ["group:g"],
        D(
            [agent("s"), blocking("a"), blocking("b"), agent("x")],
            [edge("s", grp("g")), edge("a", "x", "always")],
            [group("g", "a", "b", onQuorumMet="joinOnQuorum")],
        ),
        D(
            [agent("s"), blocking("a"), blocking("b"), agent("x")],
            [edge("s", grp("g")), edge(grp("g"), "x", "always")],
            [group("g", "a", "b", onQuorumMet="joinOnQuorum")],
        ),
    ),
    Case(
        "required-outsider",
        "group-required-not-in-members",
        "error",
        ["group:g"],
        D([blocking("a"), blocking("b"), blocking("c")], [], [group("g", "a", "b", requiredNodeIds=["c"])]),
        D([blocking("a"), blocking("b"), blocking("c")], [], [group("g", "a", "b", requiredNodeIds=["a"])]),
    ),
    Case(
        "required-exceeds",
        "group-required-exceeds-quorum",
        "error",
        ["group:g"],
        D([blocking("a"), blocking("b")], [], [group("g", "a", "b", quorum=1, requiredNodeIds=["a", "b"])]),
        D([blocking("a"), blocking("b")], [], [group("g", "a", "b", quorum=2, requiredNodeIds=["a", "b"])]),
    ),
    Case(
        "node-in-two-groups",
        "group-node-in-multiple-groups",
        "error",
        ["group:g2"],
        D([blocking("a"), blocking("b"), blocking("c")], [], [group("g1", "a", "b"), group("g2", "b", "c")]),
        D([blocking("a"), blocking("b"), blocking("c")], [], [group("g1", "a", "b"), group("g2", "c")]),
    ),
    Case(
        "member-entered-directly",
        "group-member-entered-individually",
        "error",
        ["group:g"],
        D([agent("s"), blocking("a"), blocking("b")], [edge("s", "a")], [group("g", "a", "b")]),
        D([agent("s"), blocking("a"), blocking("b")], [edge("s", grp("g"))], [group("g", "a", "b")]),
    ),
    Case(
        "member-loop-back-target",
        "group-member-entered-individually",
        "error",
        ["group:g"],
        D(
            [agent("s"), blocking("a"), blocking("b")],
            [edge("s", grp("g")), edge("b", "a", "reject", loop=2)],
            [group("g", "a", "b")],
        ),
        D(
            [agent("s"), blocking("a"), blocking("b")],
            [edge("s", grp("g")), edge(grp("g"), "s", "reject", loop=2)],
            [group("g", "a", "b", onQuorumMet="joinOnQuorum")],
        ),
        also=frozenset({"APPROVAL_EDGE_LOOP_TARGET_NOT_ANCESTOR"}),
    ),
    Case(
        "members-some-roots",
        "group-member-entered-individually",
        "error",
        ["group:g1"],
        D(
            [agent("s"), blocking("a"), blocking("b"), blocking("c")],
            [edge("s", grp("g2"))],
            [group("g1", "a", "b"), group("g2", "b", "c")],
        ),
        D(
            [agent("s"), blocking("a"), blocking("b"), blocking("c")],
            [edge("s", grp("g2"))],
            [group("g1", "a"), group("g2", "b", "c")],
        ),
        also=frozenset({"group-node-in-multiple-groups"}),
    ),
    # ---------------------------------------------------------------- loop keys
    Case(
        "overlapping-loops",
        "loop-node-in-multiple-loops",
        "error",
        ["edge:3"],
        D(
            [agent("a"), agent("b"), agent("c")],
            [
                edge("a", "b", "approve"),
                edge("b", "c", "approve"),
                edge("b", "a", "reject", loop=2),
                edge("c", "b", "reject", loop=2),
            ],
        ),
        D(
            [agent("a"), agent("b"), agent("c")],
            [
                edge("a", "b", "approve"),
                edge("b", "c", "approve"),
                edge("b", "a", "reject", loop=2),
                edge("c", "c", "reject", loop=2),
            ],
        ),
    ),
    Case(
        "same-loop-twice",
        "loop-node-in-multiple-loops",
        "error",
        ["edge:3", "edge:3"],
        D(
            [agent("a"), human("b"), agent("c")],
            [
                edge("a", "b", "approve"),
                edge("b", "c", "approve"),
                edge("b", "a", "reject", loop=2),
                edge("b", "a", "reject", loop=3),
            ],
        ),
        D(
            [agent("a"), human("b"), agent("c")],
            [
                edge("a", "b", "approve"),
                edge("b", "c", "approve"),
                edge("b", "a", "reject", loop=2),
                edge("b", "c", "reject"),
            ],
        ),
    ),
    Case(
        "two-exits",
        "loop-body-must-have-single-terminal",
        "error",
        ["edge:3"],
        D(
            [agent("a"), agent("b"), agent("x"), agent("y")],
            [
                edge("a", "b", "approve"),
                edge("a", "x", "reject"),
                edge("b", "y", "approve"),
                edge("b", "a", "reject", loop=2),
            ],
        ),
        D(
            [agent("a"), agent("b"), agent("x"), agent("y")],
            [
                edge("a", "b", "approve"),
                edge("b", "x", "reject"),
                edge("b", "y", "approve"),
                edge("b", "a", "reject", loop=2),
            ],
        ),
    ),
    Case(
        "two-exits-join-exempt",
        "loop-body-must-have-single-terminal",
        "error",
        ["edge:3"],
        _join_loop("waitAll"),
        _join_loop("joinOnQuorum"),
        also=frozenset({"APPROVAL_GROUP_FROM_LOOP_REQUIRES_JOINONQUORUM", "implicit-join"}),
    ),
    Case(
        "join-loop-quorum",
        "loop-group-bounded-quorum-must-equal-expected",
        "error",
        ["edge:3"],
        _join_loop("joinOnQuorum", quorum=1),
        _join_loop("joinOnQuorum", quorum=2),
    ),
    Case(
        "exhausted-into-body",
        "loop-on-exhausted-route-to-in-body",
        "error",
        ["edge:3"],
        _review_loop("draft"),
        _review_loop("escalate"),
        also=frozenset({"cycle-detected", "exhausted-target-reachable-otherwise"}),
    ),
    Case(
        "loop-splits-group",
        "loop-body-splits-group",
        "error",
        ["edge:1"],
        D(
            [agent("s"), blocking("m1"), blocking("m2")],
            [edge("s", grp("g")), edge("m1", "s", "reject", loop=2)],
            [group("g", "m1", "m2")],
        ),
        D(
            [agent("s"), blocking("m1"), blocking("m2")],
            [edge("s", grp("g")), edge("m1", "s", "reject", loop=2)],
            [group("g", "m1")],
        ),
    ),
    # ---------------------------------------------------------------- warnings
    Case(
        "all-custom",
        "custom-edges-may-all-be-false",
        "warning",
        ["node:a"],
        D(
            [agent("a"), agent("b"), agent("c")],
            [edge("a", "b", "custom", when=SCORE), edge("a", "c", "custom", when=op("not", SCORE))],
        ),
        D([agent("a"), agent("b"), agent("c")], [edge("a", "b", "custom", when=SCORE), edge("a", "c", "always")]),
    ),
    Case(
        "exhausted-elsewhere",
        "exhausted-target-reachable-otherwise",
        "warning",
        ["edge:3"],
        D(
            [agent("a"), agent("b"), agent("x"), agent("y")],
            [
                edge("a", "b", "approve"),
                edge("a", "x", "reject"),
                edge("b", "b", "reject", loop=2),
                edge("b", "x", "exhausted"),
            ],
        ),
        D(
            [agent("a"), agent("b"), agent("x"), agent("y")],
            [
                edge("a", "b", "approve"),
                edge("a", "y", "reject"),
                edge("b", "b", "reject", loop=2),
                edge("b", "x", "exhausted"),
            ],
        ),
    ),
    Case(
        "non-blocking-member",
        "group-member-non-blocking-agent",
        "warning",
        ["node:a"],
        D([agent("a")], [], [group("g", "a")]),
        D([blocking("a")], [], [group("g", "a")]),
    ),
    Case(
        "parallel-join",
        "implicit-join",
        "warning",
        ["node:d"],
        D(
            [agent("a"), agent("b"), agent("c"), agent("d")],
            [edge("a", "b"), edge("a", "c"), edge("b", "d"), edge("c", "d")],
        ),
        D(
            [agent("a"), agent("b"), agent("c"), agent("d")],
            [edge("a", "b", "approve"), edge("a", "c", "reject"), edge("b", "d"), edge("c", "d")],
        ),
    ),
    Case(
        "parallel-roots-join",
        "implicit-join",
        "warning",
        ["node:d"],
        D([agent("r1"), agent("r2"), agent("d")], [edge("r1", "d"), edge("r2", "d")]),
        D([agent("r1"), agent("r2"), agent("d")], [edge("r1", "d"), edge("r1", "r2")]),
    ),
    Case(
        "join-members-share-successor",
        "implicit-join",
        "warning",
        ["node:d"],
        _join_members("waitAll"),
        _join_members("joinOnQuorum"),
    ),
    Case(
        "unregistered-agent",
        "agent-not-registered",
        "warning",
        ["node:a"],
        D([agent("a", "writer"), agent("b", "checker")], [edge("a", "b")]),
        D([agent("a", "reviewer"), agent("b", "checker")], [edge("a", "b")]),
        known_agents={"reviewer", "checker"},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_key_fires_on_the_failing_definition(case: Case):
    found = findings(case.bad, case.known_agents)
    assert keys(found) == {case.key} | case.also, [(f.key, f.where, f.message) for f in found]
    mine = [f for f in found if f.key == case.key]
    assert [f.where for f in mine] == case.where
    assert {f.severity for f in mine} == {case.severity}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_key_is_silent_on_the_passing_neighbour(case: Case):
    found = findings(case.good, case.known_agents)
    assert case.key not in keys(found), [(f.key, f.where, f.message) for f in found]
    assert keys(errors_of(found)) <= case.also, [(f.key, f.where, f.message) for f in errors_of(found)]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_message_names_what_is_wrong(case: Case):
    for f in (f for f in findings(case.bad, case.known_agents) if f.key == case.key):
        kind, _, ref = f.where.partition(":")
        if kind == "edge":
            # Loop findings name the loop (loop_<source>__to__<target>), the others the edge index.
            assert f"edge {ref}" in f.message or "loop_" in f.message, f.message
        else:
            assert re.search(rf"(?<![\w.:-]){re.escape(ref)}(?![\w.:-])", f.message), f.message


def test_every_key_of_the_spec_has_a_case():
    spec_keys = {
        "APPROVAL_HUMAN_NODE_REQUIRES_REJECT_PATH",
        "APPROVAL_EDGE_WHEN_REQUIRES_CUSTOM",
        "APPROVAL_EDGE_CUSTOM_REQUIRES_WHEN",
        "APPROVAL_EDGE_WHEN_INVALID",
        "APPROVAL_EDGE_LOOP_REQUIRES_REJECT",
        "APPROVAL_EDGE_REJECT_CYCLE_REQUIRES_LOOP",
        "APPROVAL_EDGE_LOOP_TARGET_NOT_ANCESTOR",
        "APPROVAL_EDGE_EXHAUSTED_REQUIRES_LOOP_SIBLING",
        "APPROVAL_EDGE_EXHAUSTED_DUPLICATE",
        "APPROVAL_GROUP_FROM_REJECT_REQUIRES_LOOP",
        "APPROVAL_GROUP_FROM_LOOP_REQUIRES_JOINONQUORUM",
        "APPROVAL_GROUP_TO_GROUP_EDGE",
        "duplicate-node-id",
        "dangling-edge",
        "cycle-detected",
        "unreachable-node",
        "node-missing-config",
        "missing-breach-edge",
        "group-duplicate-id",
        "group-members-empty",
        "group-member-missing",
        "group-expected-steps-invalid",
        "group-quorum-invalid",
        "group-cancelonquorum-requires-quorum-lt-expected",
        "group-joinonquorum-members-must-share-successors",
        "group-required-not-in-members",
        "group-required-exceeds-quorum",
        "group-node-in-multiple-groups",
        "group-member-entered-individually",
        "loop-node-in-multiple-loops",
        "loop-body-must-have-single-terminal",
        "loop-group-bounded-quorum-must-equal-expected",
        "loop-on-exhausted-route-to-in-body",
        "loop-body-splits-group",
        "custom-edges-may-all-be-false",
        "exhausted-target-reachable-otherwise",
        "group-member-non-blocking-agent",
        "implicit-join",
        "agent-not-registered",
    }
    assert {c.key for c in CASES} == spec_keys


# ------------------------------------------------------------------------- details per family


@pytest.mark.parametrize(
    "when",
    [
        "not json",
        "[1",
        json.dumps({"var": "output.decision"}),  # top level is not a boolean op
        json.dumps(op("length", var("output.items"))),  # length is not boolean
        json.dumps(op("eq", var("output.a"))),  # wrong arity
        json.dumps(op("eq", var("outputs.a"), 1)),  # bad path root
        json.dumps({"op": "eq", "args": [1, 1], "x": 0}),  # other object
        json.dumps(op("regex", var("output.t"), "(a+)+")),  # nested quantifiers
        json.dumps(op("regex", var("output.t"), "(")),  # does not compile
        json.dumps(op("regex", var("output.t"), var("output.p"))),  # non-literal pattern
        json.dumps(op("exists", "output.t")),  # exists needs a var
        "NaN",
    ],
)
def test_every_invalid_when_form_is_reported(when):
    found = findings(D([agent("a"), agent("b")], [edge("a", "b"), edge("a", "b", "custom", when=when)]))
    assert [(f.key, f.where) for f in errors_of(found)] == [("APPROVAL_EDGE_WHEN_INVALID", "edge:1")]


def test_loop_requires_reject_for_every_other_role():
    for role in ("approve", "always", "exhausted", "custom"):
        extra = {"when": SCORE} if role == "custom" else {}
        found = findings(
            D(
                [agent("a"), agent("b"), agent("c")],
                [edge("a", "b", role, loop=2, **extra), edge("a", "a", "reject", loop=1)],
            )
        )
        assert ("APPROVAL_EDGE_LOOP_REQUIRES_REJECT", "edge:0") in [(f.key, f.where) for f in found], role


def test_group_from_reject_message_points_to_the_fix():
    bad, _ = _group_from_reject("joinOnQuorum")
    (f,) = [f for f in findings(bad) if f.key == "APPROVAL_GROUP_FROM_REJECT_REQUIRES_LOOP"]
    assert "waitAll" in f.message and "loop-back" in f.message and "'g'" in f.message


def test_joinonquorum_group_loop_back_counts_as_reject_path_for_human_members():
    raw = D(
        [agent("draft"), human("legal"), human("finance"), agent("publish")],
        [
            edge("draft", grp("board"), "approve"),
            edge(grp("board"), "publish", "approve"),
            edge(grp("board"), "draft", "reject", loop=2),
        ],
        [group("board", "legal", "finance", onQuorumMet="joinOnQuorum")],
    )
    assert findings(raw) == []


def test_sla_node_without_outgoing_edges_needs_no_breach_route():
    assert findings(D([with_sla(agent("a"))], [])) == []


def test_sla_with_custom_status_edge_counts_as_breach_route_even_with_loop_back():
    raw = D(
        [with_sla(human("h")), agent("late")],
        [
            edge("h", "h", "reject", loop=2),
            edge("h", "late", "custom", when=op("in", var("step.status"), ["breached"])),
        ],
    )
    assert keys(errors_of(findings(raw))) == set()


def test_cycle_reports_one_finding_per_cycle_naming_its_nodes():
    raw = D(
        [agent("s"), agent("a"), agent("b"), agent("c"), agent("d")],
        [edge("s", "a"), edge("a", "b"), edge("b", "a"), edge("s", "c"), edge("c", "d"), edge("d", "c")],
    )
    cycles = [f for f in findings(raw) if f.key == "cycle-detected"]
    assert [f.where for f in cycles] == ["node:a", "node:c"]
    assert "a, b" in cycles[0].message and "c, d" in cycles[1].message


def test_group_quorum_message_is_consistent():
    (f,) = [
        f
        for f in findings(D([blocking("a"), blocking("b")], [], [group("g", "a", "b", quorum=3)]))
        if f.key == "group-quorum-invalid"
    ]
    assert "quorum 3" in f.message and "2" in f.message


def test_empty_group_is_reported_once_even_for_cancel_on_quorum():
    found = findings(D([blocking("a")], [], [group("g", onQuorumMet="cancelOnQuorum")]))
    assert [f.key for f in found] == ["group-members-empty"]


def test_wrong_expected_steps_is_not_reported_again_as_a_quorum_problem():
    found = findings(D([blocking("a"), blocking("b")], [], [group("g", "a", "b", expectedSteps=1)]))
    assert [f.key for f in found] == ["group-expected-steps-invalid"]


def test_duplicate_group_is_checked_once():
    found = findings(D([blocking("a")], [], [group("g", "a"), group("g")]))
    assert [(f.key, f.where) for f in found] == [("group-duplicate-id", "group:g")]


def test_agent_not_registered_only_with_a_registry():
    raw = D([agent("a", "writer")], [])
    assert findings(raw) == []
    assert findings(raw, known_agents=set())[0].key == "agent-not-registered"
    (f,) = findings(raw, known_agents={"other"})
    assert "'writer'" in f.message and f.severity == "warning"


def test_implicit_join_flags_each_join_once():
    raw = D(
        [agent("a"), agent("b"), agent("c"), agent("e"), agent("d")],
        [edge("a", "b"), edge("a", "c"), edge("a", "e"), edge("b", "d"), edge("c", "d"), edge("e", "d")],
    )
    assert [(f.key, f.where) for f in findings(raw)] == [("implicit-join", "node:d")]


def test_self_loop_is_a_valid_loop_back():
    raw = D(
        [human("review"), agent("publish"), agent("escalate")],
        [
            edge("review", "publish", "approve"),
            edge("review", "review", "reject", loop=5),
            edge("review", "escalate", "exhausted"),
        ],
    )
    assert findings(raw) == []


# ------------------------------------------------------------------------- all at once, order


def test_all_problems_are_reported_at_once():
    raw = D(
        [human("review"), agent("publish"), blocking("a"), blocking("b")],
        [edge("review", "publish", "approve"), edge("publish", "ghost")],
        [group("g", "a", "b", quorum=5)],
    )
    found = findings(raw)
    assert keys(found) == {"APPROVAL_HUMAN_NODE_REQUIRES_REJECT_PATH", "dangling-edge", "group-quorum-invalid"}
    assert {f.where for f in found} == {"node:review", "edge:1", "group:g"}


def test_errors_sort_before_warnings():
    raw = D(
        [agent("a"), agent("b"), agent("c"), human("h"), agent("m")],
        [edge("a", "b", "custom", when=SCORE), edge("b", "c"), edge("h", "c", "approve")],
        [group("g", "m")],
    )
    found = findings(raw)
    severities = [f.severity for f in found]
    assert "error" in severities and "warning" in severities
    assert severities == sorted(severities)  # 'error' < 'warning'
    assert keys(found) == {
        "APPROVAL_HUMAN_NODE_REQUIRES_REJECT_PATH",
        "custom-edges-may-all-be-false",
        "group-member-non-blocking-agent",
        "implicit-join",
    }


def test_lint_is_deterministic():
    raw = D(
        [human("review"), agent("publish"), blocking("a"), blocking("b"), agent("x")],
        [edge("review", "publish", "approve"), edge("publish", "ghost"), edge("x", "a")],
        [group("g", "a", "b", quorum=5), group("g", "x")],
    )
    first = [f.to_json() for f in findings(raw)]
    assert first == [f.to_json() for f in findings(json.loads(json.dumps(raw)))]


def test_finding_to_json_and_where_accessors():
    f = Finding("dangling-edge", "error", "edge 3 ...", "edge:3")
    assert f.to_json() == {"key": "dangling-edge", "severity": "error", "message": "edge 3 ...", "where": "edge:3"}
    assert (f.edge_index, f.node_id, f.group_id) == (3, None, None)
    assert Finding("k", "error", "m", "node:a").node_id == "a"
    assert Finding("k", "error", "m", "group:g").group_id == "g"


# ------------------------------------------------------------------------- lint_document


def test_lint_document_turns_schema_errors_into_findings_with_paths():
    raw = D([agent("a"), {"nodeId": "b", "type": "agent", "config": {}}], [edge("a", "b", on="sometimes")])
    definition, found = lint_document(raw)
    assert definition is None
    assert [(f.key, f.severity, f.where) for f in found] == [
        ("schema", "error", "data.nodes[1].config.agentId"),
        ("schema", "error", "data.edges[0].on"),
    ]
    assert found[0].message == "field required"


def test_lint_document_accepts_the_data_envelope():
    raw = D([human("review"), agent("publish")], [edge("review", "publish", "approve")])
    definition, found = lint_document({"data": raw})
    assert definition is not None and definition.definition_id == "test-flow"
    assert [f.key for f in found] == ["APPROVAL_HUMAN_NODE_REQUIRES_REJECT_PATH"]
    assert unwrap({"data": raw}) is raw and unwrap(raw) is raw
    assert unwrap({"data": raw, "x": 1}) == {"data": raw, "x": 1}


@pytest.mark.parametrize("document", [None, [], "text", 3, {}, {"data": None}, {"data": []}])
def test_lint_document_on_non_definitions(document):
    definition, found = lint_document(document)
    assert definition is None and found and {f.key for f in found} == {"schema"}
    assert all(f.where.startswith("data") for f in found)


def test_lint_document_passes_known_agents():
    _, found = lint_document(D([agent("a", "writer")], []), known_agents={"reviewer"})
    assert [f.key for f in found] == ["agent-not-registered"]
