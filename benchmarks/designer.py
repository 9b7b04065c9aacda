"""Benchmark: from an edit in Python to the canvas's new picture, ready for the browser.

For a 20- and a 100-node definition (generated deterministically: stages of an agent
drafting, a joinOnQuorum group of two reviewers with a reject loop back to the draft, and a
publishing agent; every stage chained to the next), each repetition times, interleaved so
that a change in the machine's load hits all alike, until the widget's ``scene`` trait holds
the JSON text it sends:

- **rename** ``designer.update_node(<node>, name=<new name>)``: the label changes, hence the
  node's size and every position: lint, a new DOT and a new graphviz layout (a name not
  seen before: nothing kept can serve);
- **describe** ``update_node(<node>, description=…)``: a form field that moves nothing (the
  description is only a tooltip): lint and DOT, the layout is the one kept;
- **drag** ``move_node``: no lint, no layout;
- **undo** of that drag: a definition drawn before, its picture kept.

Baseline measured in the same run on the same definition: the plain picture the views drew
before the canvas, ``render_definition(definition).svg()`` (lint skipped, one ``dot -Tsvg``).
Target: median under 150 ms at 100 nodes, for an edit that needs a new layout. Besides wall
time, the CPU time of this process and its children (``dot``) is printed: on a shared machine
it is the figure that does not depend on the other load.

    .venv/bin/python benchmarks/designer.py [--reps 20] [--sizes 20 100]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toolkit.viz import render_definition  # noqa: E402
from toolkit.widgets import Designer  # noqa: E402

TARGET_MS = 150


def workload(nodes: int) -> dict:
    """A definition of about ``nodes`` nodes in stages of five, linting clean."""
    out = {"definitionId": f"bench-{nodes}", "name": f"Benchmark {nodes}", "nodes": [], "groups": [], "edges": []}
    previous = None
    for k in range(max(1, nodes // 5)):
        draft, legal, brand, check, publish = (f"s{k}-{n}" for n in ("draft", "legal", "brand", "check", "publish"))
        out["nodes"] += [
            {"nodeId": draft, "type": "agent", "name": f"Draft {k}", "config": {"agentId": "copywriter"}},
            {
                "nodeId": legal,
                "type": "human",
                "name": f"Legal {k}",
                "slaMs": 86_400_000,
                "config": {"reviewers": [{"userId": f"legal{k}@example.com", "mandatory": True}]},
            },
            {
                "nodeId": brand,
                "type": "human",
                "name": f"Brand {k}",
                "config": {"reviewers": [{"userId": f"brand{k}@example.com", "mandatory": True}]},
            },
            {"nodeId": check, "type": "agent", "name": f"Check {k}", "config": {"agentId": "checker"}},
            {"nodeId": publish, "type": "agent", "name": f"Publish {k}", "config": {"agentId": "publisher"}},
        ]
        board = {"kind": "group", "groupId": f"s{k}-board"}
        out["groups"].append({"groupId": f"s{k}-board", "memberNodeIds": [legal, brand], "onQuorumMet": "joinOnQuorum"})
        if previous:
            out["edges"].append({"from": previous, "to": draft, "on": "always"})
        out["edges"] += [
            {"from": draft, "to": board, "on": "approve"},
            {"from": legal, "to": check, "on": "approve"},
            {"from": brand, "to": check, "on": "approve"},
            {"from": board, "to": draft, "on": "reject", "loop": {"maxIterations": 3}},
            {"from": check, "to": publish, "on": "always"},
        ]
        previous = publish
    return out


def cpu() -> float:
    """Seconds of CPU used so far by this process and its waited-for children (dot)."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def timed(actions, reps: int) -> list[tuple[list[float], list[float]]]:
    """(wall ms, CPU ms) of each action per repetition, the actions interleaved."""
    out: list[tuple[list[float], list[float]]] = [([], []) for _ in actions]
    for i in range(reps):
        for action, (wall, used) in zip(actions, out):
            start, start_cpu = time.perf_counter(), cpu()
            action(i)
            wall.append((time.perf_counter() - start) * 1000)
            used.append((cpu() - start_cpu) * 1000)
    return out


def run(nodes: int, reps: int) -> float:
    raw = workload(nodes)
    designer = Designer(raw)
    errors = [f for f in designer.findings if f.severity == "error"]
    assert not errors, errors
    target = raw["nodes"][len(raw["nodes"]) // 2]["nodeId"]

    def rename(i: int) -> None:
        designer.update_node(target, name=f"Renamed {i}")
        assert f"Renamed {i}" in designer.canvas.scene

    def describe(i: int) -> None:
        designer.update_node(target, description=f"Checked on day {i}")
        assert f"Checked on day {i}" in designer.view.scene.nodes[target].tooltip  # the SVG view's tooltip

    def drag(i: int) -> None:
        designer.move_node(target, 100 + i, 200)
        assert f'"{target}":[{100 + i}' in designer.canvas.scene

    def undo(i: int) -> None:
        assert designer.undo() and '"layout":{}' in designer.canvas.scene

    def baseline(i: int) -> None:
        render_definition(designer.model, []).svg()

    actions = {"rename (new layout)": rename, "describe (same layout)": describe, "drag": drag, "undo": undo}
    for action in (*actions.values(), baseline):  # warm up (imports, first process start)
        action(-1)
    results = dict(zip([*actions, "plain SVG render"], timed([*actions.values(), baseline], reps)))
    svg = statistics.median(results["plain SVG render"][0])
    print(f"{len(raw['nodes'])} nodes, {len(raw['edges'])} edges; scene {len(designer.canvas.scene) / 1024:.0f} KiB")
    for name, (wall, used) in results.items():
        med, p90 = statistics.median(wall), sorted(wall)[int(reps * 0.9) - 1]
        print(
            f"  {name:24s} {med:7.1f} ms (p90 {p90:6.1f}, CPU {statistics.median(used):6.1f})"
            f"  /SVG {med / svg:5.2f}  /target {med / TARGET_MS:5.2f}"
        )
    return statistics.median(results["rename (new layout)"][0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 100])
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
    results = {n: run(n, args.reps) for n in args.sizes}
    if 100 in results:
        verdict = "met" if results[100] < TARGET_MS else "MISSED"
        print(f"target: an edit with a new layout under {TARGET_MS} ms at 100 nodes: {verdict} ({results[100]:.1f} ms)")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
