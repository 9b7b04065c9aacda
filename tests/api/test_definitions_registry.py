"""Definitions linted against the workspace's agent registry over HTTP (semantics §4, §11): a
node naming an agent the registry does not hold gets an ``agent-not-registered`` warning in
every view of the definition, the write still succeeds, and the warning follows the registry
(a disabled built-in, a custom agent created later, another workspace's agents)."""

from __future__ import annotations

import pytest

from api.support import DEF_CREATE, DEF_GET, DEF_LIST, DEF_UPDATE, uid

AGENTS_CREATE, AGENTS_UPDATE = "/v2/agents/create", "/v2/agents/update"


def agent_chain(definition_id: str, *agent_ids: str) -> dict:
    """node-0 --always--> node-1 --always--> ...; node-i runs agent_ids[i]."""
    nodes = [{"nodeId": f"node-{i}", "type": "agent", "config": {"agentId": a}} for i, a in enumerate(agent_ids)]
    edges = [{"from": f"node-{i}", "to": f"node-{i + 1}", "on": "always"} for i in range(len(agent_ids) - 1)]
    return {"definitionId": definition_id, "name": "Agents in a row", "nodes": nodes, "edges": edges}


def custom_agent(api) -> str:
    return api.ok(AGENTS_CREATE, {"name": uid("agent")})["data"]["agentId"]


def unregistered(view: dict) -> dict[str, str]:
    """node id -> the message of its agent-not-registered warning."""
    out = {}
    for finding in view["warnings"]:
        assert set(finding) == {"key", "severity", "message", "where"} and finding["severity"] == "warning"
        if finding["key"] == "agent-not-registered":
            assert finding["where"].startswith("node:")
            out[finding["where"].removeprefix("node:")] = finding["message"]
    return out


def listed(api, definition_id: str) -> list[dict]:
    """The definition's entries in the whole list, every page (the session's server holds the
    definitions of every test that ran before)."""
    found, cursor = [], None
    while True:
        page = api.ok(DEF_LIST, {"pageSize": 100, **({"cursor": cursor} if cursor else {})})
        found += [d for d in page["items"] if d["definitionId"] == definition_id]
        if not page["hasMore"]:
            return found
        cursor = page["nextCursor"]


@pytest.fixture
def spell_check_enabled_again(api):
    yield
    api.ok(AGENTS_UPDATE, {"agentId": "spell-check", "enabled": True})


def test_an_unregistered_agent_warns_and_the_write_succeeds(api):
    mine = custom_agent(api)
    ghost = uid("ghost-writer")
    body = agent_chain(uid("registry"), "spell-check", mine, ghost)
    view = api.create(body)
    assert view["version"] == 1 and view["status"] == "active"
    warned = unregistered(view)
    assert list(warned) == ["node-2"] and ghost in warned["node-2"]
    # every view of it says the same
    assert api.ok(DEF_GET, {"definitionId": body["definitionId"]}) == view
    assert listed(api, body["definitionId"]) == [view]
    # it runs: an unregistered agent is a warning, not an error
    assert api.dispatch(body["definitionId"])


def test_a_fully_registered_definition_has_no_agent_warning(api):
    view = api.create(agent_chain(uid("registered"), "grammar-check", custom_agent(api), "broken-links"))
    assert unregistered(view) == {}


def test_the_warning_follows_the_registry(api, spell_check_enabled_again):
    body = agent_chain(uid("follows"), "spell-check", "later-agent")
    created = api.create(body)
    assert list(unregistered(created)) == ["node-1"]
    ref = {"definitionId": body["definitionId"]}

    # a disabled built-in is not available to workflows: its node warns on the next read
    api.ok(AGENTS_UPDATE, {"agentId": "spell-check", "enabled": False})
    assert sorted(unregistered(api.ok(DEF_GET, ref))) == ["node-0", "node-1"]
    api.ok(AGENTS_UPDATE, {"agentId": "spell-check", "enabled": True})
    assert list(unregistered(api.ok(DEF_GET, ref))) == ["node-1"]

    # an update naming a custom agent registered meanwhile answers without that warning
    later = custom_agent(api)
    updated = api.ok(DEF_UPDATE, {**agent_chain(body["definitionId"], "spell-check", later), "ifVersion": 1})
    assert updated["version"] == 2 and unregistered(updated) == {}
    # and an update that names an unknown agent again warns (and still writes version 3)
    again = api.ok(DEF_UPDATE, {**agent_chain(body["definitionId"], "nobody-registered", later), "ifVersion": 2})
    assert again["version"] == 3 and list(unregistered(again)) == ["node-0"]


def test_another_workspaces_agents_do_not_count(api, api_b):
    # (workspace B must stay without definitions: the workflow isolation tests expect it empty)
    theirs = custom_agent(api_b)
    assert list(unregistered(api.create(agent_chain(uid("isolated"), theirs, custom_agent(api))))) == ["node-0"]


def test_warnings_are_read_only(api):
    body = agent_chain(uid("readonly"), "spell-check")
    message = api.err(DEF_CREATE, {**body, "warnings": []}, "INVALID_ARGUMENT")
    assert "warnings" in message
