"""Unit tests for toolkit.viz: definition pictures, execution overlays, heat maps, View.

Most checks read the rendered SVG (what a browser and a notebook show): node groups are
``<g id="node-<nodeId>" class="node">`` titled with the nodeId, edges ``edge-<index>``,
groups ``group-<groupId>`` clusters.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from toolkit import examples
from toolkit.lint import Finding, lint
from toolkit.model import Definition
from toolkit.simulate import run_script, simulate
from toolkit.viz import View, render_definition, render_execution, render_execution_from_events, render_heatmap, style
from toolkit.viz.labels import duration, summarize_when
from toolkit.viz.replay import node_of_step_id, replay

ROOT = Path(__file__).resolve().parents[2]
SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"
SHAPES = (SVG + "path", SVG + "polygon", SVG + "ellipse")


# ---------------------------------------------------------------- helpers


def parse(view: View) -> ET.Element:
    return ET.fromstring(view.svg().encode("utf-8"))


def items(view: View, cls: str) -> dict[str, ET.Element]:
    """``{svg id: <g>}`` of every node, edge or cluster (ids with entities resolved)."""
    return {g.get("id"): g for g in parse(view).iter(SVG + "g") if g.get("class") == cls}


def title(g: ET.Element) -> str:
    return g.find(SVG + "title").text


def text(g: ET.Element) -> str:
    return " ".join(t.text or "" for t in g.iter(SVG + "text"))


def tooltip(g: ET.Element) -> str:
    return " ".join(a.get(XLINK + "title") or "" for a in g.iter(SVG + "a"))


def outline(g: ET.Element) -> ET.Element:
    """The first drawn shape of a node, edge (its line) or cluster."""
    return next(el for el in g.iter() if el.tag in SHAPES)


def stroke(g: ET.Element) -> str:
    return outline(g).get("stroke").lower()


def fill(g: ET.Element) -> str:
    return outline(g).get("fill").lower()


def width(g: ET.Element) -> float:
    return float(outline(g).get("stroke-width", "1"))


def dashes(g: ET.Element) -> str | None:
    return outline(g).get("stroke-dasharray")


def edge_by_title(view: View, source: str, target: str) -> ET.Element:
    wanted = f"{source}->{target}"
    return next(g for g in items(view, "edge").values() if title(g) == wanted)


PARALLEL = "parallel-review"
ALICE_APPROVES = {"atMs": 60_000, "node": "legal-review", "reviewer": "alice@legal", "decision": "approve"}
BOB_REJECTS = {"atMs": 90_000, "node": "brand-review", "reviewer": "bob@brand", "decision": "reject"}


# ---------------------------------------------------------------- render_definition


@pytest.mark.parametrize("name", examples.names())
def test_every_node_of_every_example_is_drawn_with_its_id(name):
    body = examples.load(name)
    nodes = items(render_definition(body), "node")
    assert set(nodes) == {f"node-{n['nodeId']}" for n in body["nodes"]}
    assert {title(g) for g in nodes.values()} == {n["nodeId"] for n in body["nodes"]}
    # every authored edge is drawn once, with its index as id
    assert set(items(render_definition(body), "edge")) == {f"edge-{i}" for i in range(len(body["edges"]))}


@pytest.mark.parametrize("name", examples.names())
def test_one_cluster_per_group_labelled_with_policy_and_quorum(name):
    body = examples.load(name)
    clusters = items(render_definition(body), "cluster")
    groups = body.get("groups") or []
    assert set(clusters) == {f"group-{g['groupId']}" for g in groups}
    for g in groups:
        label = text(clusters[f"group-{g['groupId']}"])
        quorum = g.get("quorum", len(g["memberNodeIds"]))
        assert f"{g.get('onQuorumMet', 'waitAll')} {quorum}/{len(g['memberNodeIds'])}" in label
        assert title(clusters[f"group-{g['groupId']}"]) == f"cluster_{g['groupId']}"


def test_group_label_names_required_members():
    clusters = items(render_definition(examples.load("required-approver")), "cluster")
    assert "cancelOnQuorum 2/3, requires legal-review" in text(clusters["group-agreement-review"])


def test_group_endpoints_are_drawn_to_and_from_the_cluster():
    source = render_definition(examples.load(PARALLEL)).source
    assert 'compound="true"' in source
    into, out_of = [line for line in source.splitlines() if 'id="edge-0"' in line or 'id="edge-3"' in line]
    assert 'lhead="cluster_review-board"' in into and "ltail" not in into
    assert 'ltail="cluster_review-board"' in out_of and "lhead" not in out_of


def test_edge_style_by_role():
    view = render_definition(examples.load("risk-score-routing"))
    edges = items(view, "edge")
    # 0, 1, 2 custom; 3 always; 4 approve; 5 reject
    assert {stroke(edges[f"edge-{i}"]) for i in (0, 1, 2)} == {style.ROLE["custom"]["color"].lower()}
    assert stroke(edges["edge-3"]) == style.ROLE["always"]["color"].lower()
    assert stroke(edges["edge-4"]) == style.ROLE["approve"]["color"].lower()
    assert stroke(edges["edge-5"]) == style.ROLE["reject"]["color"].lower()
    assert all(dashes(edges[f"edge-{i}"]) is None for i in range(6))
    # custom edges carry a short summary of their predicate
    assert "score < 0.8" in text(edges["edge-0"])
    assert "input.amount ≥ 10000" in text(edges["edge-2"])
    assert "✓" in text(edges["edge-4"]) and "✗" in text(edges["edge-5"])


def test_exhausted_edges_are_orange_and_dotted_and_loop_backs_dashed_with_their_cap():
    view = render_definition(examples.load("reject-loop-exhausted"))
    edges = items(view, "edge")
    loop_back, exhausted, approve = edges["edge-3"], edges["edge-4"], edges["edge-0"]
    assert stroke(exhausted) == style.ROLE["exhausted"]["color"].lower()
    assert dashes(exhausted) == "1,5"  # dotted
    assert stroke(loop_back) == style.ROLE["reject"]["color"].lower()
    assert dashes(loop_back) == "5,2"  # dashed
    assert "↺ max 2" in text(loop_back)
    assert dashes(approve) is None
    assert 'constraint="false"' in view.source  # a loop-back never drives ranking


def test_group_loop_back_and_self_loop_carry_max_iterations():
    assert "↺ max 3" in text(items(render_definition(examples.load(PARALLEL)), "edge")["edge-3"])
    self_loop = items(render_definition(examples.load("translation-retry")), "edge")["edge-0"]
    assert title(self_loop) == "translate->translate"
    assert dashes(self_loop) == "5,2" and "↺ max 3" in text(self_loop)


def test_sla_badge_and_second_lines():
    nodes = items(render_definition(examples.load("sla-escalation")), "node")
    assert "SLA 48h" in text(nodes["node-legal-review"])
    assert "2 reviewers · 1 mandatory" in text(nodes["node-legal-review"])
    assert "SLA" not in text(nodes["node-countersign"])
    assert "contract-extractor" in text(nodes["node-extract-terms"])  # agentId
    assert "hooks.example.com" in text(nodes["node-notify-requester"])  # webhook host
    blocking = items(render_definition(examples.load("blocking-agent-quorum")), "node")["node-safety-panel"]
    assert "blocking · 2 of 3" in text(blocking)


def test_node_types_are_distinguishable():
    view = render_definition(examples.load("required-approver"))
    nodes = items(view, "node")
    human, agent, blocking = nodes["node-legal-review"], nodes["node-sign-agreement"], nodes["node-dpia-check"]
    assert outline(human).tag == SVG + "ellipse"
    assert fill(agent) == style.NODE_KIND["agent"]["fillcolor"].lower()
    assert fill(blocking) == style.NODE_KIND["blocking"]["fillcolor"].lower()
    assert len([el for el in blocking.iter() if el.tag in SHAPES]) == 2  # double outline
    webhook = items(render_definition(examples.load("webhook-notify")), "node")["node-announce-post"]
    assert outline(webhook).tag == SVG + "polygon"
    assert fill(webhook) == style.NODE_KIND["webhook"]["fillcolor"].lower()


def test_node_label_is_the_name_or_else_the_id():
    body = examples.load(PARALLEL)
    del body["nodes"][3]["name"]
    nodes = items(render_definition(body), "node")
    assert "Draft campaign copy" in text(nodes["node-draft"])
    assert text(nodes["node-publish"]).startswith("publish")


BROKEN = {
    "definitionId": "broken-flow",
    "name": "Broken",
    "nodes": [
        {"nodeId": "start", "type": "agent", "config": {"agentId": "intake"}},
        {"nodeId": "write", "type": "agent", "config": {"agentId": "writer"}},
        {"nodeId": "check", "type": "human", "config": {"reviewerIds": ["ann"]}},
        {"nodeId": "m1", "type": "agent", "config": {"agentId": "bot"}},
        {
            "nodeId": "m2",
            "type": "agent",
            "config": {"agentId": "bot", "blocking": True, "resolutionPolicy": "allResolved"},
        },
        {"nodeId": "done", "type": "agent", "config": {"agentId": "publisher"}},
    ],
    "groups": [{"groupId": "panel", "memberNodeIds": ["m1", "m2"], "quorum": 3}],
    "edges": [
        {"from": "write", "to": "check", "on": "approve"},
        {"from": "check", "to": "write", "on": "reject"},  # cycle without loop
        {"from": "start", "to": "write", "on": "approve"},
        {"from": "check", "to": {"kind": "group", "groupId": "panel"}, "on": "approve"},
        {"from": {"kind": "group", "groupId": "panel"}, "to": "done", "on": "approve"},
    ],
}


def test_findings_highlight_the_nodes_edges_and_groups_they_concern():
    found = lint(Definition.model_validate(BROKEN))
    by_where = {f.where: f for f in found}
    assert by_where["edge:1"].key == "APPROVAL_EDGE_REJECT_CYCLE_REQUIRES_LOOP"
    assert by_where["group:panel"].severity == "error"
    assert by_where["node:m1"].severity == "warning"  # non-blocking member
    view = render_definition(BROKEN)  # lints by default
    edges, nodes, clusters = items(view, "edge"), items(view, "node"), items(view, "cluster")
    error, warning = style.FINDING["error"]["color"].lower(), style.FINDING["warning"]["color"].lower()

    assert stroke(edges["edge-1"]) == error and width(edges["edge-1"]) == 3
    assert stroke(nodes["node-write"]) == error and "cycle-detected" in tooltip(nodes["node-write"])
    assert "APPROVAL_EDGE_REJECT_CYCLE_REQUIRES_LOOP" in tooltip(edges["edge-1"])
    assert "⚠ APPROVAL_EDGE_REJECT_ CYCLE_REQUIRES_LOOP" in text(edges["edge-1"])  # whole, on two lines
    assert stroke(edges["edge-0"]) == style.ROLE["approve"]["color"].lower()  # untouched

    assert stroke(clusters["group-panel"]) == error
    assert "group-quorum-invalid" in tooltip(clusters["group-panel"])

    assert stroke(nodes["node-m1"]) == warning and width(nodes["node-m1"]) == 2.6
    assert "group-member-non-blocking-agent" in tooltip(nodes["node-m1"])
    assert stroke(nodes["node-done"]) == style.NODE_KIND["agent"]["color"].lower()
    assert "error" in text(parse(view))  # caption counts them


def test_explicit_findings_replace_lint_and_unplaced_ones_go_to_the_caption():
    clean = render_definition(BROKEN, [])
    assert all(stroke(g) != style.FINDING["error"]["color"].lower() for g in items(clean, "node").values())
    schema = Finding("schema", "error", "nodes: too many", "data.nodes")
    flagged = Finding("custom-check", "error", "look here", "node:done")
    view = render_definition(BROKEN, [schema, flagged])
    assert stroke(items(view, "node")["node-done"]) == style.FINDING["error"]["color"].lower()
    assert "schema (data.nodes): nodes: too many" in text(parse(view))


def test_undeclared_endpoints_get_a_placeholder_node():
    body = examples.load("webhook-notify")
    body["edges"].append({"from": "publish-post", "to": "ghost", "on": "always"})
    view = render_definition(body)
    assert "node-ghost" in items(view, "node")
    assert "dangling-edge" in tooltip(items(view, "edge")[f"edge-{len(body['edges']) - 1}"])


def test_ids_with_colons_and_dots_are_not_read_as_ports():
    body = {
        "definitionId": "odd-ids",
        "name": "Odd ids",
        "nodes": [
            {"nodeId": "team:a.1", "type": "agent", "config": {"agentId": "w"}},
            {"nodeId": "team:b", "type": "webhook", "config": {}},
        ],
        "edges": [{"from": "team:a.1", "to": "team:b"}],
    }
    view = render_definition(body)
    assert set(items(view, "node")) == {"node-team:a.1", "node-team:b"}
    assert title(items(view, "edge")["edge-0"]) == "team:a.1->team:b"


def test_accepts_a_model_an_envelope_and_a_definition_view():
    body = examples.load(PARALLEL)
    expected = render_definition(body).svg()
    assert render_definition(Definition.model_validate(body)).svg() == expected
    assert render_definition({"data": body}).svg() == expected
    view = {
        **body,
        "version": 3,
        "status": "active",
        "createdAt": 1,
        "updatedAt": 2,
        "compiled": {"forwardEdges": [], "loops": []},
    }
    assert set(items(render_definition(view), "node")) == set(items(render_definition(body), "node"))


def test_legend_names_only_what_the_definition_uses():
    caption = text(parse(render_definition(examples.load(PARALLEL))))
    assert "✓ approve" in caption and "↺ loop-back" in caption and "exhausted" not in caption
    assert "approve" not in text(parse(render_definition(examples.load(PARALLEL), legend=False))).split("✓")[0]


# ---------------------------------------------------------------- render_execution


def status_fill(status: str) -> str:
    return style.STATUS[status]["fillcolor"].lower()


def test_execution_colours_nodes_by_their_latest_step():
    run = run_script(examples.load(PARALLEL), {"actions": [ALICE_APPROVES]})
    assert [s.status for s in run.steps("brand-review")] == ["waiting"]
    nodes = items(render_execution(examples.load(PARALLEL), run.state), "node")
    assert fill(nodes["node-draft"]) == status_fill("completed")
    assert fill(nodes["node-legal-review"]) == status_fill("completed")
    assert fill(nodes["node-brand-review"]) == status_fill("waiting")
    assert fill(nodes["node-publish"]) == status_fill("not reached")
    assert dashes(nodes["node-publish"]) is not None
    assert "waiting for bob@brand" in text(nodes["node-brand-review"])
    assert "waiting for" not in text(nodes["node-legal-review"])


def test_waiting_human_node_lists_only_reviewers_who_have_not_answered():
    body = examples.load("cancel-on-quorum")
    run = run_script(
        body,
        {"actions": [{"atMs": 1000, "node": "finance-approval", "reviewer": "gus@finance", "decision": "approve"}]},
    )
    finance = items(render_execution(body, run.state), "node")["node-finance-approval"]
    assert "waiting for erin@finance" in text(finance) and "gus@finance" not in text(finance)


def test_execution_shows_loop_iteration_on_the_entry_node_and_fired_edges_bold():
    body = examples.load(PARALLEL)
    run = run_script(body, {"actions": [ALICE_APPROVES, BOB_REJECTS]})
    assert run.state.loops["loop_review-board__to__draft"].iteration == 2
    view = render_execution(body, run.state)
    nodes, edges = items(view, "node"), items(view, "edge")
    assert "↺ iteration 2 of 3" in text(nodes["node-draft"])
    assert "2 steps" in text(nodes["node-draft"])
    assert width(edges["edge-3"]) > width(edges["edge-1-2"])  # the loop-back fired; the join did not
    assert float(outline(edges["edge-1-2"]).get("stroke-opacity")) < 0.5  # faded
    assert "↺ iteration" not in text(nodes["node-publish"])


def test_execution_statuses_breached_skipped_and_completed():
    body = examples.load("sla-escalation")
    run = run_script(body, {"actions": []})
    nodes = items(render_execution(body, run.state), "node")
    assert fill(nodes["node-legal-review"]) == status_fill("breached")
    assert fill(nodes["node-notify-requester"]) == status_fill("skipped")
    assert fill(nodes["node-escalate-to-counsel"]) == status_fill("completed")
    assert fill(nodes["node-countersign"]) == status_fill("not reached")
    assert "completed" in text(parse(render_execution(body, run.state)))  # caption: execution status


def test_execution_accepts_an_execution_view_dict():
    body = examples.load(PARALLEL)
    run = run_script(body, {"actions": [ALICE_APPROVES]})
    from_state = items(render_execution(body, run.state), "node")
    from_view = items(render_execution(body, json.loads(json.dumps(run.state.view()))), "node")
    assert {k: fill(g) for k, g in from_state.items()} == {k: fill(g) for k, g in from_view.items()}
    # a plain ExecutionView cannot tell who answered a waiting step: every declared reviewer is listed
    assert "waiting for bob@brand" in text(from_view["node-brand-review"])


def test_execution_from_events_matches_the_state_at_the_end_and_scrubs_back():
    body = examples.load(PARALLEL)
    run = run_script(body, {"actions": [ALICE_APPROVES, BOB_REJECTS]})
    expected = {k: fill(g) for k, g in items(render_execution(body, run.state), "node").items()}
    for events in (run.events, [e.to_json() for e in run.external_events]):
        final = items(render_execution_from_events(body, events), "node")
        assert {k: fill(g) for k, g in final.items()} == expected
    first_completion = next(e.seq for e in run.events if e.type == "step.completed")
    early = render_execution_from_events(body, run.events, upto_seq=first_completion)
    nodes = items(early, "node")
    assert fill(nodes["node-draft"]) == status_fill("completed")
    assert fill(nodes["node-legal-review"]) == status_fill("not reached")
    assert stroke(nodes["node-draft"]) == style.CURRENT["color"].lower()  # "now" is marked
    assert f"seq {first_completion} · step.completed · Draft campaign copy" in text(parse(early))  # by name


def test_replay_tracks_reviewer_answers_and_loops():
    body = examples.load(PARALLEL)
    run = run_script(body, {"actions": [ALICE_APPROVES, BOB_REJECTS]})
    view = replay(run.events, reviewers={"legal-review": ["alice@legal"], "brand-review": ["bob@brand"]})
    assert view["loops"] == {"loop_review-board__to__draft": 2}
    assert [s["status"] for s in view["steps"]] == [s.status for s in run.state.steps.values()]
    assert [s["iteration"] for s in view["steps"]] == [s.iteration for s in run.state.steps.values()]
    assert view["steps"][1]["answeredBy"] == ["alice@legal"]


def test_node_of_step_id_reads_every_id_form():
    assert node_of_step_id("step_legal-review_1767225600000_0a1b2c") == "legal-review"
    assert node_of_step_id("step_a_1_0a1b2c__to__b__to__c__e4") == "c"
    assert node_of_step_id("group_board__to__draft__i2__g3") == "draft"
    assert node_of_step_id("step_x:y_0123456789abcdef0123") == "x:y"
    assert node_of_step_id("no-such-form") is None


# ---------------------------------------------------------------- render_heatmap


def fake_summary(publish: int) -> dict:
    return {
        "runs": 100,
        "outcomes": {"completed": publish, "failed": 100 - publish},
        "failure_reasons": {"loop-exhausted:loop_review-board__to__draft": 100 - publish},
        "iteration_histogram": {1: 80, 2: 20},
        "node_counts": {"draft": 120, "legal-review": 120, "brand-review": 120, "publish": publish},
        "edge_counts": [
            {"from": "draft", "to": "legal-review", "count": 120},
            {"from": "draft", "to": "brand-review", "count": 120},
            {"from": "review-board", "to": "draft", "count": 20},
            {"from": "review-board", "to": "publish", "count": publish},
        ],
    }


def test_heatmap_widths_and_fills_increase_with_counts():
    view = render_heatmap(examples.load(PARALLEL), fake_summary(publish=90))
    edges, nodes = items(view, "edge"), items(view, "node")
    into_group, join, loop_back = edges["edge-0"], edges["edge-1-2"], edges["edge-3"]
    assert width(loop_back) < width(join) < width(into_group)
    assert "120 · 100%" in text(into_group)  # an edge into a group: once per group instance
    assert "90 · 75%" in text(join)  # share of the group's 120 instances
    assert "20 · 17%" in text(loop_back) and "↺ max 3" in text(loop_back)
    assert style.HEAT.index(fill(nodes["node-publish"]).upper()) < style.HEAT.index(fill(nodes["node-draft"]).upper())
    assert "120 steps · 1.20/run" in text(nodes["node-draft"])
    caption = text(parse(view))
    assert "completed 90" in caption and "failed 10" in caption and "100 simulated runs" in caption
    # failure reasons in words, not the internal loop id
    assert "10 × rejected 3 times: Legal and brand review → Draft campaign copy" in caption
    assert "loop_review-board__to__draft" not in caption
    # a member edge that the group fires is drawn once, from the cluster
    assert 'ltail="cluster_review-board"' in next(line for line in view.source.splitlines() if 'id="edge-1-2"' in line)


def test_heatmap_never_traversed_edges_are_faint_and_dotted():
    view = render_heatmap(examples.load(PARALLEL), fake_summary(publish=0))
    join = items(view, "edge")["edge-1-2"]
    assert stroke(join) == style.FAINT.lower() and dashes(join) == "1,5"
    assert fill(items(view, "node")["node-publish"]) == "#ffffff"


def test_heatmap_from_a_real_simulation():
    body = examples.load(PARALLEL)
    result = simulate(
        body, runs=300, seed=3, policy={"reviewers": {"alice@legal": {"approve": 0.8}, "bob@brand": {"approve": 0.85}}}
    )
    summary = result.summary
    widths = {k: width(g) for k, g in items(render_heatmap(body, summary), "edge").items()}
    assert widths["edge-0"] > widths["edge-1-2"] > widths["edge-3"]
    assert summary.edge_counts[("review-board", "publish")] == summary.outcomes["completed"]
    same = [render_heatmap(body, x).svg() for x in (summary, result, summary.to_json())]
    assert same[0] == same[1] == same[2]


# ---------------------------------------------------------------- View


def test_rendering_is_deterministic():
    body = examples.load(PARALLEL)
    assert render_definition(examples.load(PARALLEL)).svg() == render_definition(body).svg()
    run = run_script(body, {"actions": [ALICE_APPROVES, BOB_REJECTS]})
    assert render_execution(body, run.state).svg() == render_execution(body, run.state.copy()).svg()
    events = run.events
    assert (
        render_execution_from_events(body, events, 20).svg()
        == render_execution_from_events(body, list(reversed(events)), 20).svg()
    )
    assert render_heatmap(body, fake_summary(90)).svg() == render_heatmap(body, fake_summary(90)).svg()


def test_rendering_does_not_depend_on_hash_order():
    script = (
        "import sys; sys.path.insert(0, 'tests/unit'); from test_viz import *; "
        "body = examples.load('required-approver'); "
        "print(render_definition(BROKEN).svg() + render_definition(body).svg() "
        "+ render_heatmap(examples.load(PARALLEL), fake_summary(90)).svg())"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            cwd=ROOT,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1 and "<svg" in outputs.pop()


def test_view_displays_in_jupyter():
    view = render_definition(examples.load(PARALLEL))
    bundle = view._repr_mimebundle_()
    assert bundle["image/svg+xml"].lstrip().startswith("<?xml") and "<svg" in bundle["image/svg+xml"]
    assert view._repr_svg_() == bundle["image/svg+xml"]
    assert set(view._repr_mimebundle_(include={"image/svg+xml"})) == {"image/svg+xml"}
    assert view.source.startswith('digraph "parallel-review" {')


def test_save_writes_svg_png_and_pdf(tmp_path):
    view = render_definition(examples.load(PARALLEL))
    svg = view.save(tmp_path / "p.svg")
    assert ET.parse(svg).getroot().tag == SVG + "svg"
    assert svg.read_text(encoding="utf-8") == view.svg()
    png = view.save(tmp_path / "p.png")
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    small = view.save(tmp_path / "small.png", dpi=72)
    assert int.from_bytes(data[16:20], "big") > int.from_bytes(small.read_bytes()[16:20], "big")  # width
    assert view.save(tmp_path / "p.pdf").read_bytes()[:5] == b"%PDF-"
    with pytest.raises(ValueError, match="unknown picture format"):
        view.save(tmp_path / "p.gif")


def test_a_missing_dot_program_is_explained(monkeypatch, tmp_path):
    view = render_definition(examples.load(PARALLEL))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RuntimeError, match="graphviz program 'dot' is not installed"):
        view.svg()


# ---------------------------------------------------------------- labels


@pytest.mark.parametrize(
    "when, summary",
    [
        ({"op": "gte", "args": [{"var": "output.score"}, 0.8]}, "score ≥ 0.8"),
        ({"op": "eq", "args": [{"var": "step.status"}, "breached"]}, 'step.status = "breached"'),
        ({"op": "not", "args": [{"op": "lt", "args": [{"var": "output.score"}, 0.8]}]}, "not (score < 0.8)"),
        ({"op": "in", "args": [{"var": "output.tier"}, ["gold", "vip"]]}, 'tier in ["gold", "vip"]'),
        ({"op": "gt", "args": [{"op": "length", "args": [{"var": "output.items"}]}, 3]}, "len(items) > 3"),
        (
            {
                "op": "or",
                "args": [
                    {"op": "isEmpty", "args": [{"var": "output.x"}]},
                    {"op": "exists", "args": [{"var": "execution.input.y"}]},
                ],
            },
            "(x is empty) or (input.y exists)",
        ),
    ],
)
def test_predicate_summaries(when, summary):
    assert summarize_when(json.dumps(when)) == summary


def test_long_predicates_are_clipped_and_durations_compact():
    long = {"op": "and", "args": [{"op": "eq", "args": [{"var": f"output.field{i}"}, i]} for i in range(9)]}
    assert summarize_when(long).endswith("…") and len(summarize_when(long)) <= 42
    assert [duration(ms) for ms in (172_800_000, 1_209_600_000, 1_800_000, 45_000, 250)] == [
        "48h",
        "14d",
        "30min",
        "45s",
        "250ms",
    ]
