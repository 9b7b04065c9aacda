"""Regex denial of service in edge predicates (semantics §3.1), over HTTP. Patterns that
backtrack catastrophically in Python's `re` — nested quantifiers, which the spec refuses, and
the many that `re` takes polynomial or exponential time on without nesting — either are refused
at write time with APPROVAL_EDGE_WHEN_INVALID, or route an execution on a 16 KiB adversarial
output as promptly as any other predicate (toolkit/regex_linear.py matches in linear time).
The client's timeout below is only a guard against a hang (`re` would take hours on these);
the speed itself is measured in benchmarks/regex_predicates.py."""

from __future__ import annotations

import json

import pytest

from api.support import DEF_CREATE, RESOLVE, uid

CAP = 16384


def routed(definition_id: str, pattern: str) -> dict:
    """work (external agent) --regex(output.text, pattern)--> hit; --not regex--> miss."""
    when = {"op": "regex", "args": [{"var": "output.text"}, pattern]}
    return {
        "definitionId": definition_id,
        "name": "Regex routing",
        "nodes": [
            {"nodeId": "work", "type": "agent", "config": {"agentId": "outside", "external": True}},
            {"nodeId": "hit", "type": "agent", "config": {"agentId": "a"}},
            {"nodeId": "miss", "type": "agent", "config": {"agentId": "b"}},
        ],
        "edges": [
            {"from": "work", "to": "hit", "on": "custom", "when": json.dumps(when)},
            {"from": "work", "to": "miss", "on": "custom", "when": json.dumps({"op": "not", "args": [when]})},
        ],
    }


@pytest.mark.parametrize(
    "pattern",
    [
        "(a+)+$",
        "(a*)*b",
        "(?:a|b+)*c",
        "(a{1,5}){1,5}",
        "(\\w+\\s?)+$",
        "(a)\\1+",
        "(?=a)a",
        "(?>a+)b",
        "a++b",
        "x{300}",
    ],
)
def test_backtracking_patterns_are_refused_at_write_time(api, pattern):
    message = api.err(DEF_CREATE, routed(uid("redos"), pattern))
    assert "APPROVAL_EDGE_WHEN_INVALID" in message


@pytest.mark.parametrize(
    "pattern, text, matches",
    [
        (".*.*x", "a" * CAP, False),  # O(n^3) in re
        ("\\d+-\\w+$", "1" * CAP, False),  # O(n^2) in re, 2 s at 16 KiB
        ("(ab|a)*c", "a" * CAP, False),  # exponential in re
        ("(a|aa)*c", "a" * CAP, False),
        ("\\s*\\s*$", " " * (CAP - 1) + "x", True),  # O(n^3) in re, 25 s at 2,000 chars
        ("[a-z]+\\.[a-z]+@", "a" * CAP, False),  # O(n^2) in re
        ("a.*b.*c", "ab" * (CAP // 2), False),
        ("(ab|a)*c", "a" * (3 * CAP) + "c", False),  # past the 16 KiB cap: the c is never seen
        ("(ab|a)*c", "ab" * 100 + "c", True),
    ],
)
def test_adversarial_outputs_route_promptly_and_correctly(server, api, pattern, text, matches):
    body = routed(uid("redos"), pattern)
    api.create(body)
    execution_id = api.dispatch(body["definitionId"])
    step_id = api.step(execution_id, "work")["stepId"]
    with server.client(server.creds_a, timeout=60) as client:  # a hang guard, not a speed claim
        resp = client.post(
            RESOLVE,
            json={
                "data": {
                    "executionId": execution_id,
                    "stepId": step_id,
                    "action": "force-complete",
                    "actorId": "ops",
                    "output": {"text": text},
                }
            },
        )
    assert resp.status_code == 200, resp.text
    nodes = {s["nodeId"] for s in api.execution(execution_id)["steps"]}
    assert nodes == {"work", "hit" if matches else "miss"}
