"""The live Player in a real browser: a notebook starts a server, dispatches an execution and
shows ``Player.from_client(..., follow=True)``; then, with the kernel idle and no cell
running, this test decides the execution's steps over HTTP as the reviewers would, and the
picture on the page moves by itself: the second round opens, the execution completes, and
the player says it has stopped following.
"""

from __future__ import annotations

import json
import time

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

try:
    from playwright.sync_api import expect
except ImportError:  # the fixture reports it
    expect = None

from e2e.lab import ARTIFACTS, CURRENT, open_browser, open_notebook, run_all_cells, wait_idle
from toolkit.client import HttpClient

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CELLS = [
    """
import json
from pathlib import Path

from toolkit import examples
from toolkit.client import serve_in_background
from toolkit.widgets import Player

server = serve_in_background()
client = server.client()
client.create_definition(examples.load("parallel-review"))
execution_id = client.dispatch("parallel-review")["executionId"]
Path("live-server.json").write_text(json.dumps({"url": server.url, "executionId": execution_id,
                                                **server.credentials}))
""",
    """
live = Player.from_client(client, execution_id, follow=True, poll_s=0.2)
live
""",
]


def decide_waiting(client: HttpClient, execution_id: str, decision: str, iteration: int) -> None:
    """Wait for both reviews of round ``iteration``; the first approves, the last answers ``decision``."""
    deadline = time.monotonic() + 60
    while True:
        steps = [
            s
            for s in client.get_execution(execution_id)["steps"]
            if s["status"] == "waiting" and s["iteration"] == iteration
        ]
        if len(steps) == 2:
            break
        assert time.monotonic() < deadline, "the reviews never opened"
        time.sleep(0.1)
    # a rejection restarts the loop at once, cancelling a review still open: it comes last
    for step, answer in zip(steps, ["approve", decision]):
        client.record_reviewer_decision(execution_id, step["stepId"], step["reviewerIds"][0], answer)


def test_live_player_moves_while_the_server_decides_steps(lab, tmp_path):
    notebook = new_notebook(
        cells=[new_code_cell(c.strip()) for c in CELLS],
        metadata={"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}},
    )
    nbformat.write(notebook, lab.root / "live.ipynb")
    with open_browser(tmp_path / "profile") as page:
        try:
            open_notebook(page, lab, "live.ipynb")
            run_all_cells(page)
            player = page.locator(f"{CURRENT} .collab-player").first
            graph = player.locator(".collab-player-graph")
            expect(graph).to_contain_text("waiting for alice@legal", timeout=120_000)
            expect(player).to_contain_text("following the execution live")
            wait_idle(page)  # from here on no cell runs

            server = json.loads((lab.root / "live-server.json").read_text())
            with HttpClient(server["url"], server["apiKey"], server["authToken"]) as client:
                decide_waiting(client, server["executionId"], "reject", 1)
                expect(graph).to_contain_text("↺ iteration 2 of 3", timeout=60_000)  # the loop sent it back
                expect(player.locator(".collab-player-caption")).not_to_contain_text("execution.completed")
                decide_waiting(client, server["executionId"], "approve", 2)
            caption = player.locator(".collab-player-caption")
            expect(caption).to_contain_text("execution.completed", timeout=60_000)
            expect(caption).to_contain_text("event 15 of 15")
            expect(player).to_contain_text("execution completed: all 15 events")
            expect(player.get_by_role("button", name="✓ all events fetched")).to_be_disabled()
            expect(player.get_by_role("button", name="■ stop following")).to_be_hidden()
            assert (
                page.locator(
                    f"{CURRENT} .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
                ).count()
                == 0
            )
        except Exception:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "test_live_player_moves.png"), full_page=True)
            (ARTIFACTS / "test_live_player_moves.jupyterlab.log").write_text(lab.log())
            raise
