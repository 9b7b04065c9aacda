"""Unit tests for toolkit.widgets, driven from Python as a person would drive them in Jupyter.

Each form test changes a widget value (what a click or a keystroke does in the browser) and
checks the three things a person sees change: the definition, the lint list and the graph.
"""

from __future__ import annotations

import doctest
import html
import json
import re
import socket
import threading
import time
import xml.etree.ElementTree as ET
from contextlib import contextmanager
from datetime import UTC, datetime

import httpx
import pytest
import uvicorn

import toolkit.widgets
from toolkit import examples
from toolkit.compiler import compile_definition
from toolkit.model import Definition
from toolkit.simulate import simulate
from toolkit.widgets import Designer, Player, SimulationPanel, charts, edits, panes, preview, when
from toolkit.widgets import designer as designer_module
from toolkit.widgets import player as player_module
from toolkit.widgets import simulation as simulation_module

SVG = "{http://www.w3.org/2000/svg}"


def node_ids_drawn(view) -> set[str]:
    """The nodeIds of the ``node-<id>`` groups of a view's SVG."""
    root = ET.fromstring(view.svg().encode("utf-8"))
    return {g.get("id")[5:] for g in root.iter(SVG + "g") if g.get("class") == "node"}


def keys(designer) -> list[str]:
    return [f.key for f in designer.findings]


def build_parallel_review(d: Designer, with_loop: bool = True) -> Designer:
    d.set_info("parallel-review", "Parallel legal and brand review")
    d.add_node("draft", "agent", name="Draft campaign copy", config={"agentId": "copywriter"})
    d.add_node("legal-review", "human", name="Legal review")
    d.set_reviewers("legal-review", [("alice@legal", True)])
    d.add_node("brand-review", "human", name="Brand review")
    d.set_reviewers("brand-review", ["bob@brand"])
    d.add_node("publish", "agent", name="Publish to the website", config={"agentId": "publisher"})
    d.add_group("review-board", ["legal-review", "brand-review"], policy="joinOnQuorum")
    d.add_edge("draft", ("group", "review-board"), on="approve")
    d.add_edge("legal-review", "publish", on="approve")
    d.add_edge("brand-review", "publish", on="approve")
    if with_loop:
        d.add_edge(("group", "review-board"), "draft", on="reject", max_iterations=3)
    return d


@pytest.fixture
def pr() -> Designer:
    return Designer("parallel-review")


# ---------------------------------------------------------------- the Designer from Python


def test_starts_empty_and_says_what_is_missing():
    d = Designer()
    assert d.definition == {"definitionId": "my-workflow", "name": "My workflow", "nodes": [], "edges": []}
    assert [(f.key, f.where) for f in d.findings] == [("schema", "data.nodes")]
    assert d.model is None
    assert "Nothing to draw yet" in d.view.source
    assert [(f["where"], f["target"]) for f in d.scene["findings"]] == [("data.nodes", None)]
    assert d.scene["empty"] and json.loads(d.canvas.scene) == d.scene


def test_building_parallel_review_gives_the_example_graph():
    d = build_parallel_review(Designer())
    assert d.findings == []
    assert (
        compile_definition(Definition.model_validate(d.definition)).to_json()
        == compile_definition(Definition.model_validate(examples.load("parallel-review"))).to_json()
    )
    assert node_ids_drawn(d.view) == {"draft", "legal-review", "brand-review", "publish"}
    assert {n["id"] for n in d.scene["nodes"]} == {"draft", "legal-review", "brand-review", "publish"}
    assert d.json_view.value == ""  # filled when its tab opens
    d.tabs.selected_index = 3
    shown = re.search(r"<pre[^>]*>(.*)</pre>", d.json_view.value, re.S).group(1)
    assert json.loads(html.unescape(shown)) == d.definition  # the JSON tab shows what export writes


def test_lint_catches_a_missing_reject_path_and_the_fix_clears_it():
    d = build_parallel_review(Designer(), with_loop=False)
    assert set(keys(d)) == {"APPROVAL_HUMAN_NODE_REQUIRES_REJECT_PATH"}
    assert {f.where for f in d.findings} == {"node:legal-review", "node:brand-review"}
    assert {f["target"] for f in d.scene["findings"]} == {"node:legal-review", "node:brand-review"}
    assert "APPROVAL_HUMAN_NODE_REQUIRES_REJECT_PATH" in d.view.source  # outlined in the picture
    d.add_edge(("group", "review-board"), "draft", on="reject", max_iterations=3)
    assert d.findings == [] and d.scene["findings"] == []
    assert "APPROVAL_HUMAN_NODE_REQUIRES_REJECT_PATH" not in d.view.source


def test_every_example_opens_clean_and_is_drawn_whole():
    for name in examples.names():
        d = Designer(name)
        assert d.findings == [], name
        assert d.definition == examples.load(name)
        assert node_ids_drawn(d.view) >= {n["nodeId"] for n in examples.load(name)["nodes"]}, name


def test_remove_node_takes_its_edges_and_memberships(pr):
    pr.remove_node("brand-review")
    assert [n["nodeId"] for n in pr.definition["nodes"]] == ["draft", "legal-review", "publish"]
    assert all("brand-review" not in json.dumps(e) for e in pr.definition["edges"])
    assert pr.definition["groups"][0]["memberNodeIds"] == ["legal-review"]
    assert pr.definition["groups"][0]["expectedSteps"] == 1
    assert "brand-review" not in node_ids_drawn(pr.view)
    assert "removed node brand-review and 1 edge(s)" in pr.status.value


def test_remove_group_takes_its_edges(pr):
    pr.remove_group("review-board")
    assert "groups" not in pr.definition
    assert len(pr.definition["edges"]) == 2
    assert "APPROVAL_HUMAN_NODE_REQUIRES_REJECT_PATH" in keys(pr)


def test_duplicate_ids_are_refused(pr):
    with pytest.raises(ValueError, match="already a node 'draft'"):
        pr.add_node("draft", "agent")
    with pytest.raises(ValueError, match="already a group"):
        pr.add_group("review-board")


def test_schema_errors_still_draw_the_valid_parts():
    d = Designer()
    d.add_node("draft", "agent")
    d.add_node("review", "human", config={"reviewers": []})
    assert d.model is None
    assert [(f.key, f.where) for f in d.findings] == [("schema", "data.nodes[1].config.reviewers")]
    assert node_ids_drawn(d.view) == {"draft", "review"}
    assert "data.nodes[1].config.reviewers" in d.view.source  # the finding is on the node


def test_edits_keep_documented_key_order():
    raw = edits.new_definition()
    edits.add_node(raw, "a", "human", config={"reviewers": [{"userId": "x", "mandatory": True}]})
    edits.update_node(raw, "a", sla_ms=60_000, name="A")
    assert list(raw["nodes"][0]) == ["nodeId", "type", "name", "slaMs", "config"]
    edits.add_edge(raw, "a", "a", on="custom", when='{"op": "exists", "args": [{"var": "output.x"}]}')
    edits.update_edge(raw, 0, max_iterations=2, on="reject", when=None)
    assert raw["edges"][0] == {"from": "a", "to": "a", "on": "reject", "loop": {"maxIterations": 2}}
    assert list(raw) == ["definitionId", "name", "nodes", "edges"]


# ---------------------------------------------------------------- the forms (as a browser drives them)


def test_reviewer_mandatory_flag_form(pr):
    nodes = pr.node_editor
    nodes.list.value = "legal-review"
    user, mandatory, _ = nodes.reviewer_rows.children[0].children
    assert (user.value, mandatory.value) == ("alice@legal", True)
    before = pr.scene
    mandatory.value = False
    assert pr.definition["nodes"][1]["config"]["reviewers"] == [{"userId": "alice@legal", "mandatory": False}]
    assert [(f.key, f.where) for f in pr.findings] == [("schema", "data.nodes[1].config.reviewers")]
    assert any("at least one reviewer must be mandatory" in f["message"] for f in pr.scene["findings"])
    assert pr.scene != before and "at least one reviewer must be mandatory" in pr.view.source
    mandatory.value = True
    nodes.add_reviewer.click()
    user2 = nodes.reviewer_rows.children[1].children[0]
    user2.value = "carol@legal"
    assert [r["userId"] for r in pr.definition["nodes"][1]["config"]["reviewers"]] == ["alice@legal", "carol@legal"]
    assert pr.findings == []
    nodes.reviewer_rows.children[0].children[2].click()  # ✕ on alice
    assert pr.definition["nodes"][1]["config"]["reviewers"] == [{"userId": "carol@legal", "mandatory": True}]


def test_node_name_sla_and_rename_forms(pr):
    nodes = pr.node_editor
    nodes.list.value = "publish"
    nodes.name.value = "Publish it"
    nodes.sla_hours.value = 2
    node = pr.definition["nodes"][3]
    assert node["name"] == "Publish it" and node["slaMs"] == 7_200_000
    assert "SLA 2h" in pr.view.source
    nodes.sla_hours.value = 0
    assert "slaMs" not in pr.definition["nodes"][3]
    nodes.list.value = "legal-review"
    nodes.node_id.value = "legal"
    assert pr.definition["groups"][0]["memberNodeIds"] == ["legal", "brand-review"]
    assert {"from": "legal", "to": "publish", "on": "approve"} in pr.definition["edges"]
    assert nodes.list.value == "legal" and "legal" in node_ids_drawn(pr.view)
    assert pr.findings == []


def test_sla_without_breach_route_is_caught():
    d = Designer()
    d.add_node("review", "human")
    d.add_node("done", "agent")
    d.add_edge("review", "done", on="approve")
    d.add_edge("review", "done", on="reject")
    assert d.findings == []
    d.node_editor.list.value = "review"
    d.node_editor.sla_hours.value = 48
    assert keys(d) == ["missing-breach-edge"]
    assert "◷ SLA 48h" in d.view.source


def test_agent_form_blocking_policy_and_mock_output(pr):
    nodes = pr.node_editor
    nodes.list.value = "draft"
    assert nodes.config_box.children == (nodes.agent_box,)
    nodes.blocking.value = True
    config = pr.definition["nodes"][0]["config"]
    assert config["blocking"] is True and config["resolutionPolicy"] == {"kind": "allResolved"}
    assert "blocking agent" in pr.view.source
    nodes.expected.value = 3
    nodes.resolution_policy.value = "minResolved"
    nodes.min_count.value = 2
    config = pr.definition["nodes"][0]["config"]
    assert config["resolutionPolicy"] == {"kind": "minResolved", "minCount": 2} and config["expectedResolutions"] == 3
    nodes.blocking.value = False
    config = pr.definition["nodes"][0]["config"]
    assert config["blocking"] is False and "resolutionPolicy" not in config and "expectedResolutions" not in config
    nodes.mock_output.value = "{not json"
    assert "not JSON" in nodes.mock_status.value
    assert config["mockOutput"]["decision"] == "approve"  # unchanged
    nodes.mock_output.value = '{"decision": "reject", "reason": "tone"}'
    assert pr.definition["nodes"][0]["config"]["mockOutput"] == {"decision": "reject", "reason": "tone"}
    nodes.agent_id.value = "writer-2"
    assert pr.definition["nodes"][0]["config"]["agentId"] == "writer-2"
    assert pr.findings == []


def test_type_change_resets_the_config(pr):
    pr.node_editor.list.value = "publish"
    pr.node_editor.type.value = "webhook"
    assert pr.definition["nodes"][3] == {
        "nodeId": "publish",
        "type": "webhook",
        "name": "Publish to the website",
        "config": {},
    }
    assert pr.node_editor.config_box.children == (pr.node_editor.webhook_box,)
    pr.node_editor.url.value = "http://insecure.example.com"
    assert ("schema", "data.nodes[3].config.url") in [(f.key, f.where) for f in pr.findings]
    pr.node_editor.url.value = "https://hooks.example.com/x"
    assert pr.findings == []


def test_add_and_remove_buttons():
    d = Designer()
    d.node_editor.new_id.value, d.node_editor.new_type.value = "draft", "agent"
    d.node_editor.add.click()
    d.node_editor.new_id.value, d.node_editor.new_type.value = "review", "human"
    d.node_editor.add.click()
    assert edits.node_ids(d.definition) == ["draft", "review"] and d.node_editor.list.value == "review"
    edges = d.edge_editor
    edges.new_from.value, edges.new_to.value, edges.new_on.value = ("node", "draft"), ("node", "review"), "approve"
    edges.add.click()
    assert d.definition["edges"] == [{"from": "draft", "to": "review", "on": "approve"}]
    assert keys(d) == ["APPROVAL_HUMAN_NODE_REQUIRES_REJECT_PATH"]
    d.group_editor.new_id.value = "board"
    d.group_editor.add.click()
    assert d.definition["groups"] == [{"groupId": "board", "memberNodeIds": [], "onQuorumMet": "waitAll"}]
    d.group_editor.remove.click()
    assert "groups" not in d.definition
    d.node_editor.list.value = "draft"
    d.node_editor.remove.click()  # it has an edge: asked first
    assert "Remove draft and its 1 edge?" in d.node_editor.question.value and len(d.definition["nodes"]) == 2
    d.node_editor.no.click()
    assert len(d.definition["nodes"]) == 2 and d.node_editor.ask_row.layout.display == "none"
    d.node_editor.remove.click()
    d.node_editor.yes.click()
    assert edits.node_ids(d.definition) == ["review"] and d.definition["edges"] == []
    d.node_editor.new_id.value = "review"
    d.node_editor.add.click()  # a duplicate: refused, said beside the button
    assert isinstance(d.last_error, ValueError)
    assert "There is already a node &#x27;review&#x27;." in d.node_editor.message.value  # beside the Add button
    assert "ValueError" not in d.node_editor.message.value and "already" not in d.status.value


def test_edge_form_predicate_builder():
    d = Designer("risk-score-routing")
    edges = d.edge_editor
    index = next(i for i, e in enumerate(d.definition["edges"]) if e.get("when") and "execution.input" in e["when"])
    edges.list.value = index
    assert (edges.path.value, edges.op.value, edges.value.value, edges.negate.value) == (
        "execution.input.amount",
        "gte",
        "10000",
        False,
    )
    edges.value.value = "5000"
    assert json.loads(d.definition["edges"][index]["when"]) == {
        "op": "gte",
        "args": [{"var": "execution.input.amount"}, 5000],
    }
    assert "5000" in d.view.source and d.findings == []
    edges.negate.value = True
    assert json.loads(d.definition["edges"][index]["when"])["op"] == "not"
    edges.when.value = '{"op": "bogus", "args": []}'
    assert "bogus" in edges.when_status.value
    assert d.findings and d.findings[0].where == f"edge:{index}"
    # a compound predicate stays editable as JSON; the builder steps aside
    edges.when.value = '{"op": "and", "args": [{"op": "exists", "args": [{"var": "output.score"}]}, true]}'
    assert edges.path.disabled and "compound predicate" in edges.when_status.value
    assert d.findings == []


def test_edge_form_role_endpoints_and_loop(pr):
    edges = pr.edge_editor
    edges.list.value = 3
    assert (edges.source.value, edges.target.value, edges.on.value) == (
        ("group", "review-board"),
        ("node", "draft"),
        "reject",
    )
    assert edges.is_loop.value and edges.max_iterations.value == 3
    edges.max_iterations.value = 1
    assert pr.definition["edges"][3]["loop"] == {"maxIterations": 1}
    assert "↺ max 1" in pr.view.source
    edges.is_loop.value = False
    assert "loop" not in pr.definition["edges"][3]
    assert "cycle-detected" in keys(pr)
    edges.is_loop.value = True
    edges.on.value = "custom"
    edge = pr.definition["edges"][3]
    assert edge["on"] == "custom" and json.loads(edge["when"])["op"] == "eq"
    assert not edges.builder_box.layout.display
    edges.on.value = "reject"
    assert "when" not in pr.definition["edges"][3]
    edges.list.value = 1
    edges.target.value = ("node", "draft")
    assert pr.definition["edges"][1]["to"] == "draft"
    edges.source.value = ("group", "review-board")
    assert pr.definition["edges"][1]["from"] == {"kind": "group", "groupId": "review-board"}


def test_group_form(pr):
    groups = pr.group_editor
    assert groups.list.value == "review-board"
    assert groups.members.value == ("legal-review", "brand-review") and groups.policy.value == "joinOnQuorum"
    pr.add_node("privacy-review", "human")
    pr.add_edge("draft", "privacy-review", on="approve")
    groups.list.value = "review-board"
    groups.members.value = ("legal-review", "brand-review", "privacy-review")
    group = pr.definition["groups"][0]
    assert group["memberNodeIds"] == ["legal-review", "brand-review", "privacy-review"]
    assert group["expectedSteps"] == 3  # followed the member count
    groups.policy.value = "cancelOnQuorum"
    groups.quorum.value = 2
    groups.required.value = ("legal-review",)
    group = pr.definition["groups"][0]
    assert (group["onQuorumMet"], group["quorum"], group["requiredNodeIds"]) == ("cancelOnQuorum", 2, ["legal-review"])
    assert "cancelOnQuorum" in pr.view.source or "cancel" in pr.view.source
    groups.quorum.value = 0
    assert "quorum" not in pr.definition["groups"][0]
    groups.group_id.value = "board"
    assert pr.definition["edges"][0]["to"] == {"kind": "group", "groupId": "board"}
    assert groups.list.value == "board"


def test_definition_info_fields(pr):
    pr.id_field.value = "Bad Id"
    assert pr.definition["definitionId"] == "Bad Id"
    assert [f.where for f in pr.findings] == ["data.definitionId"]
    assert node_ids_drawn(pr.view) >= {"draft", "publish"}  # still drawn
    pr.name_field.value = "Renamed"
    pr.id_field.value = "campaign-review"
    assert pr.definition["name"] == "Renamed" and pr.findings == []


# ---------------------------------------------------------------- loading and exporting


def test_start_from_example_file_upload_and_scratch(tmp_path):
    d = Designer()
    d.example_field.value = "sla-escalation"
    d.load_example_button.click()
    assert d.definition == examples.load("sla-escalation") and d.node_editor.list.value == "extract-terms"
    path = tmp_path / "flow.json"
    path.write_text(json.dumps({"data": examples.load("translation-retry")}))
    d.path_field.value = str(path)
    d.open_button.click()
    assert d.definition["definitionId"] == "translation-retry" and "opened" in d.status.value
    d.upload.value = (
        {
            "name": "x.json",
            "type": "application/json",
            "size": 1,
            "last_modified": datetime(2026, 1, 1, tzinfo=UTC),
            "content": memoryview(json.dumps(examples.load("webhook-notify")).encode()),
        },
    )
    assert d.definition["definitionId"] == "webhook-notify"
    d.new_button.click()
    assert d.definition["nodes"] == []


def test_a_definition_view_loads_without_its_read_only_fields():
    view = {
        **examples.load("parallel-review"),
        "version": 3,
        "status": "active",
        "createdAt": 1,
        "updatedAt": 2,
        "compiled": {"forwardEdges": [], "loops": []},
    }
    assert Designer(view).definition == examples.load("parallel-review")


@contextmanager
def served(app):
    """uvicorn serving ``app`` on a free 127.0.0.1 port in a background thread; yields the base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        sock.close()


def test_export_is_what_the_server_accepts_as_is(tmp_path):
    from server import Settings, create_app
    from toolkit.services.runtime import SystemClock
    from toolkit.services.workspaces import create_workspace
    from toolkit.store import Store

    d = build_parallel_review(Designer())
    d.move_node("publish", 420.5, 260)  # a dragged position rides along in custom
    d.export_path_field.value = str(tmp_path / "pr.json")
    d.export_button.click()
    path = tmp_path / "pr.json"
    assert json.loads(path.read_text()) == {"data": d.definition} and "exported" in d.status.value
    bare = d.export(tmp_path / "bare.json", envelope=False)
    assert json.loads(bare.read_text()) == d.definition

    db = tmp_path / "server.duckdb"
    with Store(db) as store:
        creds = create_workspace(store, "designer-test", now_ms=SystemClock().now())
    with served(create_app(Settings(db=db, timers=False))) as url:
        response = httpx.post(
            f"{url}/v2/workflow/definitions/create",
            content=path.read_bytes(),
            timeout=30,
            headers={
                "x-service-api-key": creds.api_key,
                "x-service-auth-token": creds.auth_token,
                "content-type": "application/json",
            },
        )
    assert response.status_code == 200, response.text
    assert response.json()["result"]["definitionId"] == "parallel-review"
    assert response.json()["result"]["custom"] == {"layout": {"publish": {"x": 420.5, "y": 260.0}}}
    assert Designer(str(path)).definition == d.definition  # and it opens again
    echoed = Designer(response.json()["result"])  # so does what the server sends back
    assert {k: echoed.definition[k] for k in ("nodes", "edges", "groups", "custom")} == {
        k: d.definition[k] for k in ("nodes", "edges", "groups", "custom")
    }
    assert echoed.scene["layout"] == {"publish": [420.5, 260.0]}


def test_export_refuses_a_definition_with_errors(tmp_path):
    d = build_parallel_review(Designer(), with_loop=False)
    with pytest.raises(ValueError, match="2 lint error"):
        d.export(tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()
    assert d.export(tmp_path / "x.json", force=True).exists()


def test_widgets_display_as_jupyter_widgets(pr):
    for widget in (
        pr,
        Player(examples.load("parallel-review"), []),
        SimulationPanel(examples.load("parallel-review"), runs=10),
    ):
        bundle = widget._repr_mimebundle_()
        assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "collab-designer" in pr.widget._dom_classes
    assert repr(pr) == "<Designer 'parallel-review': 4 nodes, 4 edges, 0 error(s), 0 warning(s)>"


# ---------------------------------------------------------------- Player


@pytest.fixture(scope="module")
def simulated():
    return simulate(examples.load("parallel-review"), runs=5, seed=4)


def test_player_steps_through_a_simulated_run(simulated):
    player = Player.from_simulation(simulated, 0, examples.load("parallel-review"))
    events = simulated.events(0)
    assert player.index == len(events) - 1 and player.event["type"] == "execution.completed"
    assert "execution.completed" in player.caption.value and "completed" in player.view.source
    player.first()
    assert player.index == 0 and "execution.dispatched" in player.caption.value
    first = player.graph.value
    player.slider.value = 7  # the slider, as dragged: 7th event
    assert player.index == 6 and player.event == events[6] and player.graph.value != first
    assert f"▶ seq {events[6]['seq']}" in player.view.source
    player.next()
    player.previous()
    player.previous()
    assert player.index == 5
    player._buttons[3].click()  # ⏭
    assert player.index == len(events) - 1
    player.go(-2)
    assert player.index == len(events) - 2
    assert player.play.max == player.slider.max == len(events)


def test_player_over_a_client_fetches_new_events():
    from toolkit.client import LocalClient

    with LocalClient.open() as client:
        client.create_definition(examples.load("parallel-review"))
        execution_id = client.dispatch("parallel-review")["executionId"]
        player = Player.from_client(client, execution_id)
        assert [e["type"] for e in player.events] == [
            "execution.dispatched",
            "step.completed",
            "step.awaiting-approval",
            "step.awaiting-approval",
        ]
        assert "waiting" in player.view.source
        for step in client.get_execution(execution_id)["steps"]:
            if step["status"] == "waiting":
                client.record_reviewer_decision(execution_id, step["stepId"], step["reviewerIds"][0], "approve")
        player.fetch.click()
        assert player.events[-1]["type"] == "execution.completed"
        assert player.index == len(player.events) - 1 and "new event(s)" in player.status.value
    with pytest.raises(ValueError, match="not made from a client"):
        Player(examples.load("parallel-review"), []).refresh()


def test_describe_event_names_reviewer_decisions():
    text = player_module.describe_event(
        {
            "seq": 9,
            "type": "step.response-recorded",
            "stepId": "x__to__legal-review",
            "timestamp": 1767229200000,
            "data": {"reviewerId": "alice@legal", "decision": "reject"},
        },
        1767225600000,
    )
    assert (
        text == "seq 9 · step.response-recorded · legal-review · alice@legal: reject · "
        "2026-01-01 01:00:00 UTC (+1h00m00s)"
    )


# ---------------------------------------------------------------- SimulationPanel


def test_panel_has_a_slider_per_reviewer_and_agent():
    panel = SimulationPanel(examples.load("blocking-agent-quorum"))
    definition = Definition.model_validate(examples.load("blocking-agent-quorum"))
    reviewers = {r.user_id for n in definition.nodes if n.type == "human" for r in n.config.reviewer_list}
    assert set(panel.reviewer_sliders) == reviewers
    assert panel.resolution_sliders, "the blocking agents get a resolution slider"
    assert all(s.value == 0.9 for s in panel.reviewer_sliders.values())


def test_panel_slider_changes_the_outcome():
    panel = SimulationPanel(
        examples.load("parallel-review"), runs=300, seed=2, policy={"reviewers": {"*": {"latencyMs": 60_000}}}
    )
    panel.button.click()  # runs in a thread, so Cancel stays clickable
    assert panel.wait(120)
    assert panel.last_error is None, panel.last_traceback
    assert int(panel.outcomes["runs"].sum()) == 300
    assert panel.progress.value == panel.progress.max == 300
    assert "Outcomes of 300 runs" in panel.table.value and panel.histogram.count('class="bar"') == 20
    assert {"draft", "publish"} <= node_ids_drawn(panel.heatmap)
    assert panel.policy["reviewers"]["*"] == {"latencyMs": 60_000}
    completed = dict(zip(panel.outcomes["status"], panel.outcomes["runs"])).get("completed", 0)

    panel.reviewer_sliders["alice@legal"].value = 0.0  # legal never approves
    result = panel.run()
    assert result.summary.outcomes == {"failed": 300}
    assert set(panel.outcomes["reason"]) == {"rejected 3 times: Legal and brand review → Draft campaign copy"}
    assert completed > 200
    panel.reviewer_sliders["alice@legal"].value = 1.0
    panel.reviewer_sliders["bob@brand"].value = 1.0
    panel.agent_sliders["publisher"].value = 1.0  # the publisher always fails
    panel.run(runs=50, seed=9)
    assert panel.result.summary.failure_reasons and panel.runs.value == 50


def test_panel_runs_are_reproducible():
    a = SimulationPanel(examples.load("parallel-review"), runs=200, seed=5)
    b = SimulationPanel(examples.load("parallel-review"), runs=200, seed=5)
    a.run()
    b.run()
    assert a.outcomes.equals(b.outcomes) and a.histogram == b.histogram


def test_histogram_edges():
    assert "nothing to count" in charts.histogram_svg([])
    svg = charts.histogram_svg([1000] * 99 + [10_000_000], bins=10, label="latency")
    assert svg.count('class="bar"') == 10 and "latency (seconds)" in svg and "+ seconds: 1 runs" in svg


# ---------------------------------------------------------------- the docstring examples


@pytest.mark.parametrize(
    "module",
    [toolkit.widgets, designer_module, edits, when, preview, panes, player_module, simulation_module, charts],
    ids=lambda m: m.__name__,
)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
