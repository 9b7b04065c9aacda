"""Benchmark: from an edit in Python to the canvas's new picture, ready for the browser.

For a 20- and a 100-node definition (generated deterministically: stages of an agent
drafting, a joinOnQuorum group of two reviewers with a reject loop back to the draft, and a
publishing agent; every stage chained to the next), one repetition is
``designer.update_node(<node>, name=<new name>)`` (a label changes, so graphviz lays the
graph out again: nothing is cached), which ends with the widget's ``scene`` trait set to the
JSON text it sends. A drag (``move_node``: same DOT, the layout is reused) is timed too.

Baseline measured in the same run on the same definition: the plain picture the views drew
before the canvas, ``render_definition(definition).svg()`` (lint skipped, one ``dot -Tsvg``).
Target: median under 150 ms at 100 nodes.

    .venv/bin/python benchmarks/designer.py [--reps 20] [--sizes 20 100]
"""

from __future__ import annotations

import argparse
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


def timed(actions, reps: int) -> list[list[float]]:
    """Milliseconds of each action per repetition, the actions interleaved so that a change in
    the machine's load hits all of them alike."""
    out = [[] for _ in actions]
    for i in range(reps):
        for action, times in zip(actions, out):
            start = time.perf_counter()
            action(i)
            times.append((time.perf_counter() - start) * 1000)
    return out


def run(nodes: int, reps: int) -> float:
    raw = workload(nodes)
    designer = Designer(raw)
    errors = [f for f in designer.findings if f.severity == "error"]
    assert not errors, errors
    target = raw["nodes"][len(raw["nodes"]) // 2]["nodeId"]

    def edit(i: int) -> None:
        designer.update_node(target, name=f"Renamed {i}")
        assert designer.canvas.scene

    def drag(i: int) -> None:
        designer.move_node(target, 100 + i, 200)
        assert designer.canvas.scene

    def baseline(i: int) -> None:
        render_definition(designer.model, []).svg()

    edit(-1), baseline(-1)  # warm up (imports, first process start)
    edits, drags, svgs = timed([edit, drag, baseline], reps)
    med_edit, med_drag, med_svg = (statistics.median(x) for x in (edits, drags, svgs))
    size = len(designer.canvas.scene)
    print(
        f"{len(raw['nodes']):>4} nodes, {len(raw['edges'])} edges: edit -> scene {med_edit:7.1f} ms "
        f"(p90 {sorted(edits)[int(reps * 0.9) - 1]:.1f}), drag -> scene {med_drag:6.1f} ms, "
        f"plain SVG render {med_svg:6.1f} ms; edit/SVG ratio {med_edit / med_svg:.2f}; scene {size / 1024:.0f} KiB"
    )
    return med_edit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 100])
    args = parser.parse_args()
    results = {n: run(n, args.reps) for n in args.sizes}
    if 100 in results:
        verdict = "met" if results[100] < TARGET_MS else "MISSED"
        print(f"target: edit -> scene under {TARGET_MS} ms at 100 nodes: {verdict} ({results[100]:.1f} ms)")


if __name__ == "__main__":
    main()
