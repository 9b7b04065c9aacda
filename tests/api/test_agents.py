"""The agent registry over HTTP (api-v2 §4.11, §9.3; semantics §11): the built-in catalogue,
custom agents, identity updates (no new version) and version updates (n+1, every version
kept), paging, bad input of every kind, and workspace isolation."""

from __future__ import annotations

import threading

import pytest

from api.support import uid

CREATE, GET, UPDATE, VERSION = "/v2/agents/create", "/v2/agents/get", "/v2/agents/update", "/v2/agents/version/update"
BUILT_IN = ["spell-check", "grammar-check", "broken-links", "accessibility-checker", "brand-consistency"]
VIEW_KEYS = {
    "agentId",
    "name",
    "description",
    "enabled",
    "builtIn",
    "version",
    "instructions",
    "config",
    "createdAt",
    "updatedAt",
}


def success(result: dict) -> dict:
    assert set(result) >= {"status", "message", "data"} and result["status"] == "success", result
    assert isinstance(result["message"], str) and result["message"]
    return result["data"]


def create(api, **fields) -> str:
    data = success(api.ok(CREATE, {"name": uid("agent"), **fields}))
    assert set(data) == {"agentId"} and isinstance(data["agentId"], str) and data["agentId"]
    return data["agentId"]


def get(api, agent_id: str, **extra) -> dict:
    view = success(api.ok(GET, {"agentId": agent_id, **extra}))
    assert set(view) == VIEW_KEYS, view
    return view


def list_all(api, page_size: int = 2) -> list[dict]:
    out, token = [], None
    while True:
        data = {"pageSize": page_size} if token is None else {"pageSize": page_size, "pageToken": token}
        result = api.ok(GET, data)
        page = success(result)
        assert isinstance(page, list) and len(page) <= page_size
        out.extend(page)
        token = result.get("nextPageToken")
        if token is None:
            return out
        assert isinstance(token, str) and token


@pytest.fixture
def restore_built_ins(api):
    yield
    for agent_id in BUILT_IN:
        api.ok(UPDATE, {"agentId": agent_id, "enabled": True})


# ------------------------------------------------------------------ catalogue and create


def test_built_in_catalogue_is_listed_first_and_enabled(api_b):
    agents = list_all(api_b, page_size=500)
    assert [a["agentId"] for a in agents[:5]] == BUILT_IN
    for agent in agents[:5]:
        assert set(agent) == VIEW_KEYS
        assert agent["builtIn"] is True and agent["enabled"] is True and agent["version"] == 1
        assert agent["name"] and agent["description"] and agent["instructions"]
        assert isinstance(agent["createdAt"], int) and agent["createdAt"] <= agent["updatedAt"]
    assert get(api_b, "brand-consistency") == agents[4]


def test_create_and_get_a_custom_agent(api):
    name = uid("tone-bot")
    agent_id = create(
        api,
        name=name,
        description="Keeps the tone friendly",
        instructions="Flag rude phrasing",
        config={"severity": "low", "locales": ["en"]},
    )
    view = get(api, agent_id)
    assert view == {
        **view,
        "agentId": agent_id,
        "name": name,
        "description": "Keeps the tone friendly",
        "enabled": True,
        "builtIn": False,
        "version": 1,
        "instructions": "Flag rude phrasing",
        "config": {"severity": "low", "locales": ["en"]},
    }
    assert isinstance(view["createdAt"], int) and view["createdAt"] == view["updatedAt"] > 1_600_000_000_000
    assert agent_id not in BUILT_IN


def test_create_defaults(api):
    view = get(api, create(api))
    assert (view["description"], view["enabled"], view["instructions"], view["config"], view["version"]) == (
        None,
        True,
        None,
        None,
        1,
    )
    assert get(api, create(api, enabled=False))["enabled"] is False


def test_each_create_gets_a_new_id(api):
    name = uid("same-name")
    assert create(api, name=name) != create(api, name=name)  # names need not be unique


@pytest.mark.parametrize(
    "data, field",
    [
        ({}, "data.name"),
        ({"name": ""}, "data.name"),
        ({"name": "   "}, "data.name"),
        ({"name": "x" * 201}, "data.name"),
        ({"name": 5}, "data.name"),
        ({"name": "a", "enabled": "true"}, "data.enabled"),
        ({"name": "a", "description": "d" * 2001}, "data.description"),
        ({"name": "a", "description": 3}, "data.description"),
        ({"name": "a", "instructions": ""}, "data.instructions"),
        ({"name": "a", "instructions": "i" * 20_001}, "data.instructions"),
        ({"name": "a", "config": [1]}, "data.config"),
        ({"name": "a", "agentId": "mine"}, "data.agentId"),
        ({"name": "a", "version": 2}, "data.version"),
    ],
)
def test_create_rejects_bad_input(api, data, field):
    assert api.err(CREATE, data).startswith(field)


def test_create_needs_the_envelope(api):
    api.err(CREATE, body={"name": "unwrapped"})


# ------------------------------------------------------------------ get and list


def test_get_errors(api):
    assert "nope-agent" in api.err(GET, {"agentId": "nope-agent"}, "NOT_FOUND")
    agent_id = create(api)
    assert "version 2" in api.err(GET, {"agentId": agent_id, "version": 2}, "NOT_FOUND")
    assert api.err(GET, {"agentId": agent_id, "version": 0}).startswith("data.version")
    assert api.err(GET, {"version": 1}).startswith("data.version")
    assert api.err(GET, {"agentId": agent_id, "pageSize": 5}).startswith("data.pageSize")
    assert api.err(GET, {"agentId": agent_id, "pageToken": "abc"}).startswith("data.pageToken")
    assert api.err(GET, {"agentId": ""}).startswith("data.agentId")
    assert api.err(GET, {"agentId": 7}).startswith("data.agentId")
    assert api.err(GET, {"pageSize": 0}).startswith("data.pageSize")
    assert api.err(GET, {"pageSize": 501}).startswith("data.pageSize")
    assert api.err(GET, {"pageToken": "not-a-token"}).startswith("data.pageToken")
    assert api.err(GET, {"pageToken": "azk5OTk5OTk5OTk5OTk5OTk5OTk5OTk"}).startswith("data.pageToken")  # k99…9
    assert api.err(GET, {"filter": "x"}).startswith("data.filter")


def test_list_pages_every_agent_exactly_once_in_order(api):
    mine = [create(api, name=f"list-{i}") for i in range(5)]
    for page_size in (1, 2, 3, 500):
        ids = [a["agentId"] for a in list_all(api, page_size)]
        assert len(ids) == len(set(ids))
        assert ids[:5] == BUILT_IN
        positions = [ids.index(a) for a in mine]
        assert positions == sorted(positions)  # custom agents in creation order
    default = success(api.ok(GET, {}))
    assert [a["agentId"] for a in default[:5]] == BUILT_IN


# ------------------------------------------------------------------ update identity (api-v2 §4.11)


def test_update_custom_identity_creates_no_version(api):
    agent_id = create(api, name="before", description="old", instructions="v1 instructions")
    before = get(api, agent_id)
    result = api.ok(UPDATE, {"agentId": agent_id, "name": "after", "description": "new", "enabled": False})
    assert success(result) == {"agentId": agent_id}
    after = get(api, agent_id)
    assert (after["name"], after["description"], after["enabled"]) == ("after", "new", False)
    assert after["version"] == 1 and after["instructions"] == "v1 instructions"
    assert after["updatedAt"] >= before["updatedAt"] and after["createdAt"] == before["createdAt"]
    api.ok(UPDATE, {"agentId": agent_id, "description": ""})
    assert get(api, agent_id)["description"] == ""
    api.ok(UPDATE, {"agentId": agent_id, "enabled": True})
    assert get(api, agent_id)["enabled"] is True and get(api, agent_id)["name"] == "after"


def test_update_custom_with_no_fields_is_a_no_op_success(api):
    agent_id = create(api)
    before = get(api, agent_id)
    assert success(api.ok(UPDATE, {"agentId": agent_id})) == {"agentId": agent_id}
    assert success(api.ok(UPDATE, {"agentId": agent_id, "name": None})) == {"agentId": agent_id}
    assert get(api, agent_id) == before


def test_update_built_in_supports_only_enabled(api, restore_built_ins):
    catalogue = get(api, "spell-check")
    assert success(api.ok(UPDATE, {"agentId": "spell-check", "enabled": False})) == {"agentId": "spell-check"}
    assert get(api, "spell-check")["enabled"] is False
    # name and description sent with enabled are silently ignored
    api.ok(UPDATE, {"agentId": "spell-check", "enabled": True, "name": "Renamed", "description": "Changed"})
    view = get(api, "spell-check")
    assert (view["enabled"], view["name"], view["description"]) == (True, catalogue["name"], catalogue["description"])
    assert view["version"] == 1
    # without enabled: INVALID_ARGUMENT, with or without the other fields
    for data in (
        {"agentId": "spell-check"},
        {"agentId": "spell-check", "name": "Renamed"},
        {"agentId": "grammar-check", "description": "x"},
        {"agentId": "broken-links", "enabled": None},
    ):
        assert "enabled" in api.err(UPDATE, data)
    assert get(api, "spell-check")["name"] == catalogue["name"]


@pytest.mark.parametrize(
    "data, field",
    [
        ({}, "data.agentId"),
        ({"name": "x"}, "data.agentId"),
        ({"agentId": ""}, "data.agentId"),
        ({"agentId": 12}, "data.agentId"),
        ({"agentId": "a" * 129}, "data.agentId"),
        ({"agentId": "spell-check", "name": ""}, "data.name"),
        ({"agentId": "x", "name": ""}, "data.name"),
        ({"agentId": "x", "name": "  "}, "data.name"),
        ({"agentId": "x", "enabled": "yes"}, "data.enabled"),
        ({"agentId": "x", "description": "d" * 2001}, "data.description"),
        ({"agentId": "x", "instructions": "new"}, "data.instructions"),
        ({"agentId": "x", "version": 2}, "data.version"),
    ],
)
def test_update_rejects_bad_input(api, data, field):
    assert api.err(UPDATE, data).startswith(field)


def test_update_empty_name_on_a_real_agent_changes_nothing(api):
    agent_id = create(api, name="keep-me")
    api.err(UPDATE, {"agentId": agent_id, "name": "", "enabled": False})
    assert get(api, agent_id)["name"] == "keep-me" and get(api, agent_id)["enabled"] is True


def test_update_unknown_agent_is_not_found(api):
    assert "no-such-agent" in api.err(UPDATE, {"agentId": "no-such-agent", "enabled": True}, "NOT_FOUND")
    api.err(UPDATE, {"agentId": "no-such-agent"}, "NOT_FOUND")


# ------------------------------------------------------------------ version update (§9.3)


def test_version_update_adds_n_plus_one_and_keeps_every_version(api):
    agent_id = create(api, instructions="first", config={"level": 1})
    assert success(api.ok(VERSION, {"agentId": agent_id, "instructions": "second"})) == {
        "agentId": agent_id,
        "version": 2,
    }
    assert success(api.ok(VERSION, {"agentId": agent_id, "config": {"level": 3}}))["version"] == 3
    assert success(api.ok(VERSION, {"agentId": agent_id, "instructions": "fourth", "config": {}}))["version"] == 4
    current = get(api, agent_id)
    assert (current["version"], current["instructions"], current["config"]) == (4, "fourth", {})
    history = [
        (v["version"], v["instructions"], v["config"]) for v in (get(api, agent_id, version=n) for n in (1, 2, 3, 4))
    ]
    assert history == [
        (1, "first", {"level": 1}),
        (2, "second", {"level": 1}),
        (3, "second", {"level": 3}),
        (4, "fourth", {}),
    ]
    # identity edits leave the version alone
    api.ok(UPDATE, {"agentId": agent_id, "name": "renamed"})
    assert get(api, agent_id)["version"] == 4
    assert get(api, agent_id, version=2)["name"] == "renamed"  # identity is not versioned


def test_version_update_of_a_built_in(api_b):
    catalogue = get(api_b, "grammar-check")
    assert success(api_b.ok(VERSION, {"agentId": "grammar-check", "config": {"dialect": "en-GB"}}))["version"] == 2
    now = get(api_b, "grammar-check")
    assert (now["version"], now["config"], now["instructions"]) == (2, {"dialect": "en-GB"}, catalogue["instructions"])
    first = get(api_b, "grammar-check", version=1)
    assert (first["instructions"], first["config"]) == (catalogue["instructions"], None)
    assert success(api_b.ok(VERSION, {"agentId": "grammar-check", "instructions": "Only tense errors"}))["version"] == 3


def test_concurrent_version_updates_each_get_their_own_number(api):
    agent_id = create(api, instructions="v1")
    versions, errors = [], []

    def bump(i):
        try:
            versions.append(success(api.ok(VERSION, {"agentId": agent_id, "instructions": f"v{i}"}))["version"])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=bump, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert sorted(versions) == list(range(2, 14))
    assert get(api, agent_id)["version"] == 13


@pytest.mark.parametrize(
    "data, field",
    [
        ({}, "data.agentId"),
        ({"instructions": "x"}, "data.agentId"),
        ({"agentId": ""}, "data.agentId"),
        ({"agentId": "x"}, "data.instructions"),
        ({"agentId": "x", "instructions": ""}, "data.instructions"),
        ({"agentId": "x", "instructions": 3}, "data.instructions"),
        ({"agentId": "x", "config": "loud"}, "data.config"),
        ({"agentId": "x", "config": {}, "name": "n"}, "data.name"),
        ({"agentId": "x", "config": {}, "version": 9}, "data.version"),
    ],
)
def test_version_update_rejects_bad_input(api, data, field):
    assert api.err(VERSION, data).startswith(field)


def test_version_update_of_an_unknown_agent_is_not_found(api):
    api.err(VERSION, {"agentId": "ghost-agent", "instructions": "x"}, "NOT_FOUND")


# ------------------------------------------------------------------ workspace isolation


def test_agents_are_private_to_their_workspace(api, api_b, restore_built_ins):
    agent_id = create(api, name="private-agent")
    api_b.err(GET, {"agentId": agent_id}, "NOT_FOUND")
    api_b.err(UPDATE, {"agentId": agent_id, "enabled": False}, "NOT_FOUND")
    api_b.err(UPDATE, {"agentId": agent_id}, "NOT_FOUND")
    api_b.err(VERSION, {"agentId": agent_id, "instructions": "hijack"}, "NOT_FOUND")
    assert agent_id not in {a["agentId"] for a in list_all(api_b, 500)}
    assert get(api, agent_id)["version"] == 1 and get(api, agent_id)["enabled"] is True
    # a built-in switched off in A stays on in B
    api.ok(UPDATE, {"agentId": "broken-links", "enabled": False})
    assert get(api, "broken-links")["enabled"] is False
    assert get(api_b, "broken-links")["enabled"] is True


def test_unauthenticated(anon):
    for path in (CREATE, GET, UPDATE, VERSION):
        anon.err(path, {}, "UNAUTHENTICATED")
