"""The Designer's undo history and its canvas actions, from Python.

Every kind of edit, undone, gives back the definition byte for byte, and redone gives back
the edited one; a property test runs random sequences of edits and as many undos. The
canvas's gestures arrive as the messages the browser sends (``_canvas_action``), so these
tests cover what a click does without a browser.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit import examples
from toolkit.widgets import Designer
from toolkit.widgets.history import History


def text(d: Designer) -> str:
    return json.dumps(d.definition, ensure_ascii=False)


EDITS = {
    "set_info": lambda d: d.set_info(name="Renamed flow", description="why"),
    "add_node": lambda d: d.add_node("privacy-review", "human", sla_ms=3_600_000),
    "add_node_at": lambda d: d.add_node(None, "agent", position=(40, 300)),
    "update_node": lambda d: d.update_node("legal-review", name="Legal", sla_ms=60_000),
    "rename_node": lambda d: d.update_node("legal-review", nodeId="legal"),
    "retype_node": lambda d: d.update_node("publish", type="webhook"),
    "set_reviewers": lambda d: d.set_reviewers("brand-review", [("bob@brand", True), ("eve@brand", False)]),
    "remove_node": lambda d: d.remove_node("legal-review"),
    "move_node": lambda d: d.move_node("draft", 12.5, 80),
    "relayout": lambda d: d.relayout(),
    "add_edge": lambda d: d.add_edge("draft", "publish", on="always"),
    "connect": lambda d: d.connect("node:publish", "group:review-board", "reject-loop"),
    "update_edge": lambda d: d.update_edge(1, on="custom", when={"op": "exists", "args": [{"var": "output.x"}]}),
    "remove_edge": lambda d: d.remove_edge(0),
    "add_group": lambda d: d.add_group("final", ["publish"], policy="waitAll"),
    "update_group": lambda d: d.update_group("review-board", members=["legal-review"], quorum=1),
    "rename_group": lambda d: d.update_group("review-board", groupId="board"),
    "remove_group": lambda d: d.remove_group("review-board"),
    "delete_selection": lambda d: (d.select("node:brand-review"), d.delete_selection()),
    "load": lambda d: d.load(examples.load("sla-escalation")),
    "load_example": lambda d: d.load_example("webhook-notify"),
    "new": lambda d: d.new(),
    "form_name": lambda d: (d.select("node:draft"), setattr(d.node_editor.name, "value", "Write it")),
    "in_place": lambda d: (d.definition["nodes"][0].update(description="edited in place"), d.refresh()),
}


SETUP = {"relayout": lambda d: d.move_node("draft", 12.5, 80)}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_every_edit_undoes_and_redoes_byte_for_byte(edit):
    d = Designer("parallel-review")
    SETUP.get(edit, lambda d: None)(d)
    d.history.clear()
    before = text(d)
    EDITS[edit](d)
    after = text(d)
    assert after != before
    assert d.history.can_undo == 1  # one gesture, one step (selecting is no step)
    assert d.undo()
    assert text(d) == before
    assert d.redo()
    assert text(d) == after
    assert not d.redo() and "nothing to redo" in d.canvas.status


def test_one_change_is_one_step_and_a_new_change_drops_the_redo():
    d = Designer("parallel-review")
    assert (d.history.can_undo, d.canvas.history) == (0, [0, 0])  # what it opened with is where undo stops
    assert not d.undo()
    d.add_node("a", "agent")
    d.add_node("b", "agent")
    assert d.canvas.history == [2, 0]
    d.undo()
    assert d.canvas.history == [1, 1] and [n["nodeId"] for n in d.definition["nodes"]][-1] == "a"
    d.add_node("c", "agent")
    assert d.canvas.history == [2, 0]
    d.update_node("c", name=None)  # no change: no step
    assert d.history.can_undo == 2


def test_a_refused_edit_changes_nothing_and_is_no_step():
    d = Designer("parallel-review")
    before = text(d)
    with pytest.raises(ValueError, match="already a node 'draft'"):
        d.update_node("legal-review", name="half-done", nodeId="draft")  # name set, then the rename fails
    assert text(d) == before and d.history.can_undo == 0


def test_history_is_bounded_at_200_steps():
    h = History()
    for i in range(250):
        h.record(str(i))
    undone = []
    while (state := h.undo("now")) is not None:
        undone.append(state)
    assert len(undone) == 200 and undone[-1] == "50"


# ---------------------------------------------------------------- random sequences


def _ops():
    node = st.sampled_from(["draft", "legal-review", "brand-review", "publish", "n1", "n2"])
    return st.one_of(
        st.tuples(st.just("add_node"), st.sampled_from(["n1", "n2", "n3"]), st.sampled_from(["human", "agent"])),
        st.tuples(st.just("remove_node"), node),
        st.tuples(st.just("rename"), node, st.sampled_from(["x1", "x2"])),
        st.tuples(st.just("add_edge"), node, node, st.sampled_from(["approve", "reject", "always"])),
        st.tuples(st.just("remove_edge"), st.integers(0, 6)),
        st.tuples(st.just("move"), node, st.integers(0, 500), st.integers(0, 300)),
        st.tuples(st.just("relayout")),
        st.tuples(st.just("group"), st.lists(node, max_size=3, unique=True)),
        st.tuples(st.just("info"), st.text("abc ", min_size=1, max_size=5)),
        st.tuples(
            st.just("connect"),
            node,
            st.sampled_from(["node:publish", "group:review-board"]),
            st.sampled_from(["approve", "reject-loop", "custom"]),
        ),
        st.tuples(st.just("add_at"), st.sampled_from(["human", "agent", "webhook"]), st.integers(0, 400)),
        st.tuples(st.just("delete"), st.sampled_from(["node:draft", "edge:0", "group:review-board"])),
    )


def _apply(d: Designer, op) -> None:
    kind, *args = op
    {
        "add_node": lambda: d.add_node(args[0], args[1]),
        "remove_node": lambda: d.remove_node(args[0]),
        "rename": lambda: d.update_node(args[0], nodeId=args[1]),
        "add_edge": lambda: d.add_edge(args[0], args[1], on=args[2]),
        "remove_edge": lambda: d.remove_edge(args[0]),
        "move": lambda: d.move_node(args[0], args[1], args[2]),
        "relayout": d.relayout,
        "group": lambda: d.update_group("review-board", members=args[0]),
        "info": lambda: d.set_info(name=args[0]),
        "connect": lambda: d.connect(f"node:{args[0]}", args[1], args[2]),
        "add_at": lambda: d.add_node(None, args[0], position=(args[1], 50)),
        "delete": lambda: (d.select(args[0]), d.delete_selection()),
    }[kind]()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_ops(), max_size=6))
def test_any_edits_then_as_many_undos_give_back_the_start(ops):
    d = Designer("parallel-review")
    start = text(d)
    for op in ops:
        try:
            _apply(d, op)
        except (KeyError, ValueError, IndexError):
            pass  # refused (no such node, a duplicate id...): leaves no step
    for _ in ops:
        d.undo()
    assert text(d) == start


# ---------------------------------------------------------------- canvas gestures as messages


def test_canvas_messages_call_the_designer_methods():
    d = Designer("parallel-review")
    act = d._canvas_action
    act({"type": "select", "target": "node:legal-review"})
    assert d.selection == ("node", "legal-review") and d.node_editor.list.value == "legal-review"
    assert d.tabs.selected_index == 0 and d.canvas.selection == "node:legal-review"
    act({"type": "select", "target": "edge:3"})
    assert d.selection == ("edge", 3) and d.edge_editor.list.value == 3 and d.tabs.selected_index == 1
    act({"type": "select", "target": "group:review-board"})
    assert d.group_editor.list.value == "review-board" and d.tabs.selected_index == 2
    d.node_editor.list.value = "publish"  # a pick in a form's list selects on the canvas
    assert d.selection == ("node", "publish") and d.canvas.selection == "node:publish"
    act({"type": "add_node", "node_type": "human", "node_id": "", "x": 30, "y": 250})
    assert d.selection == ("node", "human-1") and d.definition["custom"]["layout"]["human-1"] == {"x": 30.0, "y": 250.0}
    assert d.scene["roles"]["node:human-1"][:2] == ["approve", "reject"]  # valid roles for a human first
    assert d.scene["roles"]["node:draft"][0] == "always"
    assert [(c["id"], c["edges"]) for c in d.scene["clusters"]] == [("review-board", 2)]  # Delete asks first
    act({"type": "connect", "source": "node:human-1", "target": "node:publish", "role": "approve"})
    assert d.definition["edges"][-1] == {"from": "human-1", "to": "publish", "on": "approve"}
    finding = next(i for i, f in enumerate(d.scene["findings"]) if f["target"] == "node:human-1")
    act({"type": "finding", "index": finding})
    assert d.selection == ("node", "human-1") and d.canvas.highlight == "node:human-1"
    act({"type": "delete"})
    assert "human-1" not in json.dumps(d.definition["nodes"]) and d.selection is None
    act({"type": "undo"})
    assert d.definition["edges"][-1]["from"] == "human-1"
    act({"type": "redo"})
    act({"type": "move", "node": "draft", "x": 5, "y": 6})
    assert d.scene["layout"]["draft"] == [5.0, 6.0]
    act({"type": "relayout"})
    assert "draft" not in d.scene["layout"]
    act({"type": "connect", "source": "node:nope", "target": "node:draft", "role": "approve"})
    assert d.canvas.status == "There is no node 'nope' (nodes: draft, legal-review, brand-review, publish).\0error"


def test_a_drag_keeps_the_findings_and_moves_only_the_node():
    d = Designer("parallel-review")
    d.remove_edge(3)
    findings, view = d.findings, d.view
    before = {n["id"]: n for n in d.scene["nodes"]}
    d.move_node("publish", 700, 30)
    assert d.findings is findings and d.view is view  # no lint, no new layout for a drag
    assert d.model is None or d.model.custom["layout"] == {"publish": {"x": 700.0, "y": 30.0}}
    assert {n["id"]: n for n in d.scene["nodes"]} == before and d.scene["layout"] == {"publish": [700.0, 30.0]}
    d.definition["custom"] = "not an object"  # a custom the schema refuses...
    d.refresh()
    assert "data.custom" in [f.where for f in d.findings]
    d.move_node("publish", 1, 2)  # ...replaced by the drag: linted again
    assert "data.custom" not in [f.where for f in d.findings]
    assert d.definition["custom"] == {"layout": {"publish": {"x": 1.0, "y": 2.0}}}


def test_hover_says_reviewers_agent_sla_and_loops():
    d = Designer("parallel-review")
    d.update_node("legal-review", sla_ms=7_200_000)
    hover = {n["id"]: n["hover"] for n in d.scene["nodes"]}
    assert hover["legal-review"] == [
        "Legal review (legal-review, human)",
        "reviewers: alice@legal (mandatory)",
        "SLA: 2h",
    ]
    assert "agent: copywriter" in hover["draft"]
    assert "loop: review-board → draft, at most 3 iterations" in hover["draft"]


def test_form_errors_are_plain_words_beside_their_control(tmp_path):
    d = Designer("parallel-review")
    d.node_editor.new_id.value = "my node!"
    d.node_editor.add.click()
    assert "cannot be a node id: use letters, digits" in d.node_editor.message.value
    assert "my node!" not in json.dumps(d.definition) and "Error" not in d.node_editor.message.value
    d.node_editor.new_id.value = "my-node"
    d.node_editor.add.click()
    assert d.node_editor.message.value == ""  # cleared by the next success
    d.group_editor.new_id.value = "a__b"
    d.group_editor.add.click()
    assert "&#x27;__&#x27; is reserved" in d.group_editor.message.value
    (tmp_path / "bad.json").write_text('{"definitionId": ')
    d.path_field.value = str(tmp_path / "bad.json")
    d.open_button.click()
    d.confirm_button.click()
    assert "This is not valid JSON (line 1, column 18" in d.start_status.value
    d.path_field.value = str(tmp_path / "missing.json")
    d.open_button.click()  # unsaved edits: asked first
    assert "Replace your unsaved edits" in d.confirm_text.value
    d.confirm_button.click()
    assert "There is no file" in d.start_status.value and "FileNotFoundError" not in d.start_status.value
    assert "file" not in d.status.value  # not beside Export


def test_replacing_unsaved_edits_asks_first_and_can_be_undone():
    d = Designer("parallel-review")
    d.example_field.value = "sla-escalation"
    d.load_example_button.click()  # nothing unsaved: no question
    assert d.definition == examples.load("sla-escalation")
    d.remove_node("extract-terms")
    d.example_field.value = "webhook-notify"
    d.load_example_button.click()
    assert d.confirm_box.layout.display == "flex" and d.definition["definitionId"] == "sla-escalation"
    d.cancel_button.click()
    assert d.confirm_box.layout.display == "none" and d.definition["definitionId"] == "sla-escalation"
    d.load_example_button.click()
    d.confirm_button.click()
    assert d.definition == examples.load("webhook-notify")
    d.undo()
    assert d.definition["definitionId"] == "sla-escalation" and "extract-terms" not in json.dumps(d.definition)


def test_export_with_errors_offers_export_anyway(tmp_path):
    d = Designer("parallel-review")
    d.remove_edge(3)  # the reject loop: two errors
    d.export_path_field.value = str(tmp_path / "draft.json")
    d.export_button.click()
    assert "2 lint errors: the server would refuse this definition" in d.status.value
    assert "force" not in d.status.value and d.export_anyway_button.layout.display is None
    assert not (tmp_path / "draft.json").exists()
    d.export_anyway_button.click()
    assert json.loads((tmp_path / "draft.json").read_text())["data"] == d.definition
    assert d.export_anyway_button.layout.display == "none" and not d.dirty
