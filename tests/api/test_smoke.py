"""The README way in: `collab workspace create`, `collab serve`, then the parallel-review
example from definition to `execution.completed`."""

from __future__ import annotations

import subprocess

from api.support import DECIDE, DEF_CREATE, Api, Server, collab_bin, create_workspace
from toolkit import examples


def test_readme_quickstart(tmp_path):
    db = tmp_path / "data" / "collab.duckdb"
    creds = create_workspace(db)
    server = Server(db, tmp_path / "serve.log").start()
    try:
        with server.client(creds) as client:
            api = Api(client)
            body = examples.load("parallel-review")
            view = api.ok(DEF_CREATE, body)
            assert view["definitionId"] == "parallel-review" and view["version"] == 1
            execution_id = api.dispatch("parallel-review")
            steps = api.execution(execution_id)["steps"]
            assert [s["nodeId"] for s in steps] == ["draft", "legal-review", "brand-review"]
            assert [s["status"] for s in steps] == ["completed", "waiting", "waiting"]
            for step, reviewer in ((steps[1], "alice@legal"), (steps[2], "bob@brand")):
                result = api.ok(
                    DECIDE,
                    {
                        "executionId": execution_id,
                        "stepId": step["stepId"],
                        "reviewerId": reviewer,
                        "decision": "approve",
                    },
                )
                assert result["recorded"] is True
            types = [e["type"] for e in api.events(execution_id)]
            assert types[0] == "execution.dispatched" and types[-1] == "execution.completed"
            assert "group.quorum-met" in types
            final = api.execution(execution_id)
            assert final["status"] == "completed"
            assert [s["nodeId"] for s in final["steps"]][-1] == "publish"
            # the README says to stop the server before `workspace create`: a running one holds the file
            busy = subprocess.run(
                [collab_bin(), "workspace", "create", "--db", str(db), "--json"],
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert busy.returncode != 0 and busy.stdout == ""
            assert "is a server running on it" in busy.stderr and "Traceback" not in busy.stderr
            assert api.execution(execution_id) == final  # and the server is unaffected
    finally:
        server.stop()
    assert "Serving the v2 API" in server.log()
