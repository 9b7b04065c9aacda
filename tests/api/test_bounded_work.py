"""Bounded work per command (issue 13), over HTTP: one workspace's costly predicates must not
stall another workspace's writes, and a command past its work budget fails its execution.

Issue 13 measured it: 8 edges of 15 regex ops over a 16 KiB agent output made one dispatch
take 14.7 s, and another workspace's unrelated write waited 14.6 s — the predicates ran on
the single writer thread. Now the linter bounds each node, the budget bounds each command,
and the regex searches run in the request's own thread (a rehearsal) before the command
reaches the writer.

The stall test compares latencies measured in the same run, never against a number of
seconds: while A's request does its work, B's writes must each take a small fraction of it.
"""

from __future__ import annotations

import json
import threading
import time

import pytest

from api.support import Api, human_definition, serve_fresh, uid
from toolkit.limits import MAX_REGEX_PER_NODE, MAX_REGEX_PER_PREDICATE, REGEX_INPUT_CAP

CHAIN = 16  # agent steps in a row, each its own command with its own budget, all inside one dispatch


def heavy(k: int, classes: int = 33) -> str:
    """A pattern the linear matcher pays most for per character (a class test per position on
    every new character); ending in "z", it never matches the text below. One search of a
    full 16 KiB text with 33 classes fits one command's budget, a second does not."""
    return "".join(f"[{chr(0x4E00 + k + i)}-{chr(0x4E32 + k + i)}]?" for i in range(classes)) + "z"


TEXT = "".join(chr(0x4E00 + i) for i in range(REGEX_INPUT_CAP))


def regex_op(k: int, classes: int = 33) -> dict:
    return {"op": "regex", "args": [{"var": "output.text"}, heavy(k, classes)]}


def chain_definition(definition_id: str) -> dict:
    """a0 -> a1 -> … each agent's output is the 16 KiB text, and its one custom edge searches it
    once (`not regex`: true, so the chain goes on); the worst the limits admit per command."""
    nodes = [
        {"nodeId": f"a{i}", "type": "agent", "config": {"agentId": "writer", "mockOutput": {"text": TEXT}}}
        for i in range(CHAIN)
    ] + [{"nodeId": "end", "type": "agent", "config": {"agentId": "done"}}]
    edges = [
        {
            "from": f"a{i}",
            "to": f"a{i + 1}" if i + 1 < CHAIN else "end",
            "on": "custom",
            "when": json.dumps({"op": "not", "args": [regex_op(i)]}, ensure_ascii=False),
        }
        for i in range(CHAIN)
    ]
    return {"definitionId": definition_id, "name": "Heavy chain", "nodes": nodes, "edges": edges}


def over_budget_definition(definition_id: str) -> dict:
    """One node at every lint limit: two custom edges of MAX_REGEX_PER_PREDICATE heavy regex ops
    (of 20 classes, so that four fit in a `when`; two searches fit the budget, a third not)."""
    per_edge = MAX_REGEX_PER_NODE // MAX_REGEX_PER_PREDICATE
    whens = [
        {"op": "or", "args": [regex_op(e * 4 + j, 20) for j in range(MAX_REGEX_PER_PREDICATE)]} for e in range(per_edge)
    ]
    nodes = [
        {"nodeId": "work", "type": "agent", "config": {"agentId": "writer", "mockOutput": {"text": TEXT}}},
        {"nodeId": "review", "type": "human", "config": {"reviewers": [{"userId": "ann", "mandatory": True}]}},
        {"nodeId": "no", "type": "agent", "config": {"agentId": "x"}},
    ]
    edges = [
        {"from": "work", "to": f"t{e}", "on": "custom", "when": json.dumps(w, ensure_ascii=False)}
        for e, w in enumerate(whens)
    ] + [{"from": "review", "to": "no", "on": "reject"}]
    nodes += [{"nodeId": f"t{e}", "type": "agent", "config": {"agentId": "y"}} for e in range(per_edge)]
    return {"definitionId": definition_id, "name": "At every limit", "nodes": nodes, "edges": edges}


def test_a_command_over_its_work_budget_fails_its_execution_naming_the_edge(api):
    body = over_budget_definition(uid("budget"))
    api.create(body)  # admitted: every lint limit is met exactly
    execution = api.execution(api.dispatch(body["definitionId"]))
    assert execution["status"] == "failed"
    assert execution["failureReason"] == "work-limit-exceeded:edge:0"
    steps = {s["nodeId"]: s["status"] for s in execution["steps"]}
    assert steps == {"work": "completed", "review": "cancelled"}


@pytest.fixture(scope="module")
def own_server(tmp_path_factory):
    """A server of this test's own: workspace B's definitions must not show up in the shared
    server's B, whose isolation tests expect it empty."""
    srv = serve_fresh(tmp_path_factory.mktemp("stall"), "stall")
    try:
        yield srv
    finally:
        srv.stop()


def test_heavy_predicates_do_not_stall_another_workspaces_writes(own_server):
    server = own_server
    with server.client(server.creds_a) as client_a, server.client(server.creds_b) as client_b:
        heavy_predicates_leave_b_writing(server, Api(client_a), Api(client_b))


def heavy_predicates_leave_b_writing(server, api, api_b):
    body = chain_definition(uid("heavy"))
    api.create(body)
    b_body = human_definition(uid("light"))
    api_b.create(b_body)

    started = threading.Event()
    stop = threading.Event()
    b_writes: list[tuple[float, float]] = []

    def workspace_b():
        with server.client(server.creds_b) as client:
            while not stop.is_set():
                t0 = time.perf_counter()
                resp = client.post(
                    "/v2/workflow/executions/dispatch", json={"data": {"definitionId": b_body["definitionId"]}}
                )
                t1 = time.perf_counter()
                assert resp.status_code == 200, resp.text
                b_writes.append((t0, t1))
                if len(b_writes) >= 2:
                    started.set()

    b = threading.Thread(target=workspace_b, daemon=True)
    b.start()
    assert started.wait(60), "workspace B's writes did not get going"
    a0 = time.perf_counter()
    execution_id = api.dispatch(body["definitionId"])
    a1 = time.perf_counter()
    stop.set()
    b.join(60)

    # A's dispatch did its work: every step of the chain was routed through its predicate.
    execution = api.execution(execution_id)
    assert execution["status"] == "completed", execution.get("failureReason")
    assert [s["nodeId"] for s in execution["steps"]] == [f"a{i}" for i in range(CHAIN)] + ["end"]

    during = [t1 - t0 for t0, t1 in b_writes if t0 < a1 and t1 > a0]
    finished = sum(1 for _, t1 in b_writes if a0 < t1 < a1)
    a_time = a1 - a0
    # Were the searches made on the writer, a B write queued behind A's dispatch would wait
    # for all of them — about A's whole time — and B would finish one or two writes while A's
    # request lasts. Generous bounds, measured in the same run, never against seconds.
    assert finished >= 4, f"B finished {finished} writes during A's {a_time:.2f} s dispatch"
    assert max(during) * 2 < a_time, (
        f"a write of workspace B took {max(during):.3f} s while A's dispatch "
        f"took {a_time:.3f} s ({len(during)} B writes)"
    )
