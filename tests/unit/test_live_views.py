"""What a person sees in execution views and the simulation panel, and the live Player.

- a rejection is drawn as one (red, "rejected ✗"), never green "completed · reject";
- names instead of generated ids (loops, nodes, step ids), the id kept in a tooltip;
- the SimulationPanel marks results stale when a setting moves, cancels a run, refuses 0 runs;
- ``serve_in_background`` starts a real ``collab serve`` and stops it (a throw-away database
  goes with it, a given one stays), and on it ``Player.from_client(..., follow=True)`` follows
  an execution while this test decides its steps, stops when it ends or when told, and says in
  plain words when its server is gone.
"""

from __future__ import annotations

import doctest
import time
import xml.etree.ElementTree as ET

import pytest

from toolkit import examples
from toolkit.client import LocalClient, serve_in_background
from toolkit.simulate import run_script, simulate
from toolkit.viz import execution as execution_module
from toolkit.viz import names as names_module
from toolkit.viz import render_execution_from_events, style
from toolkit.viz.names import Names
from toolkit.widgets import Player, SimulationPanel

SVG = "{http://www.w3.org/2000/svg}"
LOOP_ID = "loop_review-board__to__draft"
LOOP_NAME = "rejected 3 times: Legal and brand review → Draft campaign copy"


def nodes_of(view) -> dict[str, ET.Element]:
    root = ET.fromstring(view.svg().encode("utf-8"))
    return {g.get("id"): g for g in root.iter(SVG + "g") if g.get("class") == "node"}


def text(g: ET.Element) -> str:
    return " ".join(t.text or "" for t in g.iter(SVG + "text"))


def fill(g: ET.Element) -> str:
    return next(s for s in g.iter() if s.tag in (SVG + "path", SVG + "polygon", SVG + "ellipse")).get("fill").lower()


# ---------------------------------------------------------------- execution views


def test_a_rejected_review_is_drawn_as_a_rejection():
    body = examples.load("parallel-review")
    run = run_script(
        body,
        {
            "actions": [
                {"atMs": 60_000, "node": "legal-review", "reviewer": "alice@legal", "decision": "approve"},
                {"atMs": 90_000, "node": "brand-review", "reviewer": "bob@brand", "decision": "reject"},
            ]
        },
    )
    # the picture right after brand's rejection (before the loop sends the draft round again)
    rejected = next(e.seq for e in run.events if e.type == "step.completed" and e.data.get("decision") == "reject")
    view = render_execution_from_events(body, run.events, upto_seq=rejected)
    nodes = nodes_of(view)
    brand, legal = nodes["node-brand-review"], nodes["node-legal-review"]
    rejected_fill, completed_fill = (style.STATUS[k]["fillcolor"].lower() for k in ("rejected", "completed"))
    assert fill(brand) == rejected_fill != completed_fill
    assert "rejected ✗" in text(brand) and "completed" not in text(brand)
    assert fill(legal) == style.STATUS["completed"]["fillcolor"].lower() and "approved ✓" in text(legal)
    assert "rejected" in " ".join(t.text or "" for t in ET.fromstring(view.svg().encode()).iter(SVG + "text"))


def test_a_failed_execution_names_its_loop_and_keeps_the_id_in_a_tooltip():
    body = examples.load("parallel-review")
    result = simulate(body, runs=1, seed=1, policy={"reviewers": {"alice@legal": {"approve": 0.0}}})
    assert result.events(0)[-1]["data"] == {"failureReason": f"loop-exhausted:{LOOP_ID}"}
    svg = render_execution_from_events(body, result.events(0)).svg()
    assert LOOP_NAME in svg.replace("&#45;", "-").replace("&#8594;", "→")
    assert f'title="failureReason loop-exhausted:{LOOP_ID}"' in svg.replace("&#45;", "-")


def test_names_fall_back_to_ids_for_what_has_no_name():
    names = Names(examples.load("parallel-review"))
    assert names.reason("step-rejected:brand-review") == "Brand review rejected"
    assert names.reason("step-breached:nope") == "step-breached:nope"  # unknown node: the code as is
    assert names.reason("work-limit-exceeded:edge:3") == "work-limit-exceeded:edge:3"
    assert names.step("group_review-board__to__draft__i2") == "Draft campaign copy"
    assert names.step("not-a-step-id") == "not-a-step-id"


@pytest.mark.parametrize("module", [names_module, execution_module], ids=lambda m: m.__name__)
def test_docstring_examples(module):
    result = doctest.testmod(module)
    assert result.failed == 0 and result.attempted > 0


def test_the_player_shows_node_names_with_the_step_id_in_a_tooltip():
    result = simulate(examples.load("parallel-review"), runs=1, seed=1)
    player = Player.from_simulation(result, 0, examples.load("parallel-review"))
    at = next(i for i, e in enumerate(player.events) if e["type"] == "step.awaiting-approval")
    player.go(at)
    step_id = player.event["stepId"]
    caption = player.caption.value
    assert "Legal review" in caption or "Brand review" in caption
    visible = caption.split(">", 1)[1]  # after the opening tag, whose title holds the id
    assert step_id not in visible and f'title="{step_id}"' in caption
    assert "<details" in player.details.value  # the raw event, ids included, folded away


# ---------------------------------------------------------------- SimulationPanel


@pytest.fixture
def panel():
    return SimulationPanel(
        examples.load("parallel-review"), runs=200, seed=3, policy={"reviewers": {"*": {"latencyMs": 60_000}}}
    )


def test_panel_refuses_zero_runs_and_says_so(panel):
    panel.runs.value = 0
    panel.button.click()
    assert panel.result is None and panel.progress.value == 0
    assert "Runs must be at least 1 (it is 0): nothing was simulated." in panel.status.value
    assert "runs done" not in panel.status.value
    with pytest.raises(ValueError, match="at least 1"):
        panel.run(runs=-5)


def test_panel_marks_results_stale_when_a_setting_moves(panel):
    panel.run()
    assert not panel.stale and panel.stale_note.value == "" and "opacity" not in panel.table.value
    panel.reviewer_sliders["bob@brand"].value = 0.3
    assert panel.stale and "out of date" in panel.stale_note.value
    assert "opacity:0.45" in panel.table.value and "opacity:0.45" in panel.heat.value
    panel.run()
    assert not panel.stale and panel.stale_note.value == "" and "opacity" not in panel.table.value
    panel.seed.value = 4  # the seed counts too
    assert panel.stale


def test_panel_cancel_stops_a_run_and_keeps_the_previous_results(panel):
    first = panel.run()
    cancel_once_started = lambda change: panel.cancel() if change.new > 0 else None  # noqa: E731
    panel.progress.observe(cancel_once_started, names="value")
    panel.runs.value = 2_000
    panel.button.click()  # in a thread; Cancel is clicked as it runs
    assert panel.wait(120)
    assert panel.last_error is None, panel.last_traceback
    assert panel.result is first and int(panel.outcomes["runs"].sum()) == 200
    assert "cancelled after 80 of 2,000 runs" in panel.status.value
    assert panel.stale and not panel.button.disabled and panel.cancel_button.disabled
    panel.progress.unobserve(cancel_once_started, names="value")
    assert panel.run(runs=300) is not None and int(panel.outcomes["runs"].sum()) == 300  # the next run runs


def test_panel_table_names_the_loop_and_keeps_its_id_in_a_tooltip(panel):
    panel.reviewer_sliders["alice@legal"].value = 0.0
    panel.run()
    assert list(panel.outcomes["reason"]) == [LOOP_NAME]
    assert f'title="loop-exhausted:{LOOP_ID}">{LOOP_NAME}</td>' in panel.table.value
    assert f">loop-exhausted:{LOOP_ID}<" not in panel.table.value


# ---------------------------------------------------------------- a real server


def wait_for(client, execution_id: str, ready, timeout_s: float = 60) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        execution = client.get_execution(execution_id)
        if ready(execution):
            return execution
        time.sleep(0.05)
    raise TimeoutError(f"{execution_id} did not get there")


def until(condition, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the condition never held")
        time.sleep(0.02)


def decide_all_waiting(client, execution_id: str, decision: str = "approve") -> None:
    """Answer both reviews: the first approves, the last gives ``decision`` (a rejection restarts
    the loop at once, cancelling a review still open, so it comes last)."""
    execution = wait_for(client, execution_id, lambda x: sum(s["status"] == "waiting" for s in x["steps"]) == 2)
    waiting = [s for s in execution["steps"] if s["status"] == "waiting"]
    for step, answer in zip(waiting, ["approve", decision]):
        client.record_reviewer_decision(execution_id, step["stepId"], step["reviewerIds"][0], answer)


def test_serve_in_background_keeps_a_given_database(tmp_path):
    db = tmp_path / "kept" / "collab.duckdb"
    first = serve_in_background(db=db)
    with first.client() as client:
        client.create_definition(examples.load("parallel-review"))
    first.stop()
    assert db.exists()  # a given database stays, with what was written
    with LocalClient.open(
        str(db), api_key=first.credentials["apiKey"], auth_token=first.credentials["authToken"]
    ) as client:
        assert client.get_definition("parallel-review")["definitionId"] == "parallel-review"


def test_live_player_follows_an_execution_on_a_server_in_the_background():
    with serve_in_background() as server, server.client() as client:
        folder = server.db.parent
        assert server.running and server.url == f"http://127.0.0.1:{server.port}"
        assert sorted(server.credentials) == ["apiKey", "authToken"]
        assert client.create_definition(examples.load("parallel-review"))["version"] == 1
        execution_id = client.dispatch("parallel-review")["executionId"]
        player = Player.from_client(client, execution_id, follow=True, poll_s=0.05)
        seen: list[str] = []
        player.caption.observe(lambda change: seen.append(change.new), names="value")
        assert player.following and player.stop_button.layout.display is None and player.fetch.disabled

        decide_all_waiting(client, execution_id, "reject")  # round 1: back to the draft
        # the player shows the second round by itself, while the execution still runs
        until(lambda: any(e["type"] == "loop.iteration-started" for e in player.events))
        assert "↺ iteration 2 of 3" in player.view.source and not player.ended and player.following
        mid_run = player.caption.value
        decide_all_waiting(client, execution_id, "approve")  # round 2: published
        assert player.wait(60)
        assert not player.following and player.ended
        assert player.events[-1]["type"] == "execution.completed"
        assert player.index == len(player.events) - 1  # it moved along to the end
        assert mid_run in seen and "execution.completed" not in mid_run and "execution.completed" in seen[-1]
        assert "execution completed" in player.status.value and player.fetch.description == "✓ all events fetched"
        assert "completed" in player.view.source
        assert player.fetch.disabled and player.stop_button.layout.display == "none"

        # stop() ends following before the execution does; nothing arrives after it
        second = client.dispatch("parallel-review")["executionId"]
        watcher = Player.from_client(client, second, follow=True, poll_s=0.05)
        watcher.stop_button.click()
        assert not watcher.following and "stopped following" in watcher.status.value
        count = len(watcher.events)
        decide_all_waiting(client, second)
        wait_for(client, second, lambda x: x["status"] == "completed")
        assert len(watcher.events) == count and not watcher.ended

    assert not server.running and server.exit_code is not None and not folder.exists()  # throw-away db gone
    assert server.stop() == server.exit_code  # twice is fine

    # the server is gone and the client closed: fetching says so in plain words
    watcher.fetch.click()
    assert isinstance(watcher.last_error, ConnectionError)
    assert "Cannot reach the server" in watcher.status.value and "has been closed" not in watcher.status.value
    assert len(watcher.events) == count
