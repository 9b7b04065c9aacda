"""Agents: custom agents created, their identity updated and new versions added; built-in
agents switched on and off; prompts validated.

Facts (owner = the worker): ``agent`` (name) = (description, enabled, version) — names are
unique per run, so an agent whose create was in flight at a kill is found by its name —
and ``builtin`` (agentId) = enabled, for the built-in agent that worker alone toggles.
"""

from __future__ import annotations

from faults.context import Ctx
from faults.ledger import ABSENT
from faults.registry import check, operation

CREATE, GET, UPDATE, VERSION = "/v2/agents/create", "/v2/agents/get", "/v2/agents/update", "/v2/agents/version/update"
PROMPT = "/v2/agents/prompt/validate"
BUILT_IN = ("spell-check", "grammar-check", "broken-links", "accessibility-checker", "brand-consistency")
MAX_AGENTS = 6


def _known(ctx: Ctx) -> list[tuple]:
    """This worker's agents that exist and whose id is known."""
    return [k for k in sorted(ctx.ledger.keys("agent", ctx.owner, present=True)) if k[2] in ctx.ledger.ids]


def _success(result) -> bool:
    return result["status"] == "success"


@operation(2)
def create_agent(ctx: Ctx) -> None:
    if len(ctx.ledger.keys("agent", ctx.owner)) >= MAX_AGENTS:
        return update_agent(ctx)
    name = ctx.new_id("agent")
    description = f"Checks {name}"

    def acked(result):
        ctx.ledger.ids[name] = result["data"]["agentId"]

    ctx.write(
        CREATE,
        {"name": name, "description": description, "instructions": f"Flag anything odd about {name}."},
        {("agent", ctx.owner, name): (description, True, 1)},
        ok=_success,
        on_ack=acked,
    )


@operation(2)
def update_agent(ctx: Ctx) -> None:
    agents = _known(ctx)
    if not agents:
        return create_agent(ctx)
    key = ctx.rng.choice(agents)
    _, enabled, version = ctx.ledger.value(key)
    description, enabled = f"Checks {key[2]}, take {ctx.rng.randrange(10**6)}", ctx.rng.random() < 0.7
    ctx.write(
        UPDATE,
        {"agentId": ctx.ledger.ids[key[2]], "description": description, "enabled": enabled},
        {key: (description, enabled, version)},
        ok=_success,
    )


@operation(2)
def new_agent_version(ctx: Ctx) -> None:
    agents = _known(ctx)
    if not agents:
        return create_agent(ctx)
    key = ctx.rng.choice(agents)
    description, enabled, version = ctx.ledger.value(key)
    ctx.write(
        VERSION,
        {"agentId": ctx.ledger.ids[key[2]], "instructions": f"Version {version + 1}: be stricter."},
        {key: (description, enabled, version + 1)},
        ok=lambda r: r["data"]["version"] == version + 1,
    )


@operation(1)
def toggle_built_in(ctx: Ctx) -> None:
    if not isinstance(ctx.owner, int) or ctx.owner >= len(BUILT_IN):
        return new_agent_version(ctx)
    agent_id = BUILT_IN[ctx.owner]
    key = ("builtin", ctx.owner, agent_id)
    enabled = ctx.ledger.value(key) is False  # built-ins start enabled
    ctx.write(UPDATE, {"agentId": agent_id, "enabled": enabled}, {key: enabled}, ok=_success)


@operation(1)
def read_agents(ctx: Ctx) -> None:
    agents = _known(ctx)
    if agents and ctx.rng.random() < 0.7:
        ctx.read(GET, {"agentId": ctx.ledger.ids[ctx.rng.choice(agents)[2]]})
    else:
        ctx.read(GET, {"pageSize": 20})


@operation(1)
def validate_prompt(ctx: Ctx) -> None:
    result = ctx.read(PROMPT, {"prompt": "Flag sentences longer than 40 words in the {{section}} section."})
    if result is not None and not result["data"]["validationResult"]["analysis_prompt"]:
        ctx.report.problem("validate prompt returned an empty analysis prompt")


@check("online")
def agents_intact(ctx: Ctx) -> None:
    """Every acknowledged agent, identity update, version and built-in switch is in effect."""
    listed = ctx.pages(GET, {"pageSize": 500})
    if listed is None:
        return
    ids = [a["agentId"] for a in listed]
    if len(ids) != len(set(ids)):
        ctx.report.duplicate(f"agents: an id is listed twice: {sorted(ids)}")
    for owner in ctx.run.owners:
        mine = [a for a in listed if a["name"].startswith(f"w{owner}-agent")]
        names = [a["name"] for a in mine]
        if len(names) != len(set(names)):
            ctx.report.duplicate(f"agents: a create of worker {owner} made two agents: {sorted(names)}")
        by_name = {a["name"]: a for a in mine}
        keys = ctx.ledger.keys("agent", owner)
        for name in sorted(set(by_name) | {k[2] for k in keys}):
            agent = by_name.get(name)
            ctx.ledger.settle(
                ("agent", owner, name),
                ABSENT if agent is None else (agent["description"], agent["enabled"], agent["version"]),
            )
            if agent is not None:
                ctx.ledger.ids[name] = agent["agentId"]
        for key in ctx.ledger.keys("builtin", owner):
            agent = next((a for a in listed if a["agentId"] == key[2]), None)
            # built-ins start enabled: before any acknowledged switch, True is no phantom
            ctx.ledger.settle(key, ABSENT if agent is None else agent["enabled"], default=True)
