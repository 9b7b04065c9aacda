"""The agent registry and the prompt validator (api-v2 §4.10, §4.11, §9.3; semantics §11).

A workspace's registry is the built-in catalogue (:data:`BUILT_IN`, enabled by default) plus
the custom agents it creates. Identity (name, description, enabled) is edited in place and
creates no version; behaviour (instructions, config) is edited by adding version n+1, and
every version is kept.

Built-in agents live in code: a workspace gets a row for one only when it first changes it,
so the catalogue needs no seeding and every workspace sees the same defaults.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from toolkit import prompts
from toolkit.errors import ApiError, ErrorCode
from toolkit.model.agents import CreateAgent, GetAgent, UpdateAgent, UpdateAgentVersion, ValidatePrompt
from toolkit.os_random import token_hex
from toolkit.services.context import Services
from toolkit.services.paging import decode_cursor, encode_cursor, fitting
from toolkit.services.workspaces import Workspace
from toolkit.store import agents as stored

DEFAULT_PAGE_SIZE = 100


@dataclass(frozen=True)
class BuiltIn:
    agent_id: str
    name: str
    description: str
    instructions: str


BUILT_IN: tuple[BuiltIn, ...] = (
    BuiltIn(
        "spell-check",
        "Spell check",
        "Finds misspelled words and typos in the page text.",
        "Flag misspelled words and typos in the visible text; ignore code, URLs and proper nouns.",
    ),
    BuiltIn(
        "grammar-check",
        "Grammar check",
        "Finds grammatical errors: agreement, tense, articles, run-on sentences.",
        "Flag grammatical errors such as subject-verb disagreement, wrong tense, missing articles "
        "and run-on sentences in the visible text.",
    ),
    BuiltIn(
        "broken-links",
        "Broken links",
        "Finds links that are empty, malformed or point nowhere.",
        "Flag broken links: empty or '#' hrefs, malformed URLs and anchors that point to no element on the page.",
    ),
    BuiltIn(
        "accessibility-checker",
        "Accessibility checker",
        "Finds common WCAG problems: missing alt text, skipped heading levels, vague link text.",
        "Make sure every image has descriptive alt text, headings do not skip levels and link text "
        "describes its destination.",
    ),
    BuiltIn(
        "brand-consistency",
        "Brand consistency",
        "Checks that the brand name is always written exactly as specified.",
        "Always write {{brand_name}} exactly as given, with the same spelling and capitalisation.",
    ),
)
_BY_ID = {b.agent_id: b for b in BUILT_IN}
# Built-ins sort before custom agents: their list keys are negative, in catalogue order.
_BUILT_IN_KEY = {b.agent_id: i - len(BUILT_IN) for i, b in enumerate(BUILT_IN)}


def _success(message: str, data, **extra) -> dict:
    return {"status": "success", "message": message, "data": data, **extra}


def _not_found(agent_id: str) -> ApiError:
    return ApiError(ErrorCode.NOT_FOUND, f"agent {agent_id} not found")


def _view(row) -> dict:
    agent_id, built_in, name, description, enabled, version, created, updated, instructions, config, _ = row
    if built_in:
        catalogue = _BY_ID[agent_id]
        name, description = catalogue.name, catalogue.description
        if instructions is None and config is None and version == 1:
            instructions = catalogue.instructions
    return {
        "agentId": agent_id,
        "name": name,
        "description": description,
        "enabled": enabled,
        "builtIn": built_in,
        "version": version,
        "instructions": instructions,
        "config": None if config is None else json.loads(config),
        "createdAt": created,
        "updatedAt": updated,
    }


def _default_row(agent_id: str, workspace_created: int) -> tuple:
    """A built-in the workspace never changed: enabled, version 1, as old as the workspace."""
    b = _BY_ID[agent_id]
    return (
        agent_id,
        True,
        b.name,
        b.description,
        True,
        1,
        workspace_created,
        workspace_created,
        b.instructions,
        None,
        _BUILT_IN_KEY[agent_id],
    )


# ------------------------------------------------------------------ registry


def registered_agent_ids(read, workspace_id: str) -> set[str]:
    """Agent ids a workflow node may name without the ``agent-not-registered`` warning: the
    enabled built-ins and every custom agent. ``read`` is ``store.read`` or ``tx.execute``."""
    rows = stored.registry(read, workspace_id)
    disabled = {agent_id for agent_id, built_in, enabled in rows if built_in and not enabled}
    custom = {agent_id for agent_id, built_in, _ in rows if not built_in}
    return {b.agent_id for b in BUILT_IN if b.agent_id not in disabled} | custom


def create_agent(services: Services, workspace: Workspace, request: CreateAgent) -> dict:
    ws = workspace.workspace_id
    agent_id = "ag_" + token_hex(8)
    config = None if request.config is None else json.dumps(request.config)

    def job(tx):
        stored.create(
            tx,
            ws,
            agent_id,
            request.name,
            request.description,
            request.enabled,
            request.instructions,
            config,
            services.clock.now(),
        )

    services.store.write(job)
    return _success("agent created", {"agentId": agent_id})


def get_agent(services: Services, workspace: Workspace, request: GetAgent) -> dict:
    if request.agent_id is None:
        return _list_agents(services, workspace, request)
    ws, agent_id = workspace.workspace_id, request.agent_id
    read = services.store.read
    row = stored.agent(read, ws, agent_id, request.version)
    if row is None and agent_id in _BY_ID:
        row = _default_row(agent_id, stored.workspace_created(read, ws))
    if row is None:
        raise _not_found(agent_id)
    current = row[5]
    if request.version is not None and request.version != current:
        if request.version > current:
            raise ApiError(
                ErrorCode.NOT_FOUND,
                f"agent {agent_id} has no version {request.version} (the current version is {current})",
            )
        row = row[:5] + (request.version,) + row[6:]
    return _success("agent found", _view(row))


def _list_agents(services: Services, workspace: Workspace, request: GetAgent) -> dict:
    """Built-ins first (catalogue order), then custom agents in creation order."""
    ws, read = workspace.workspace_id, services.store.read
    size = request.page_size or DEFAULT_PAGE_SIZE
    after = decode_cursor(request.page_token, "pageToken", minimum=-len(BUILT_IN) - 1)  # built-ins come first
    after = -len(BUILT_IN) - 1 if after is None else after
    if not -len(BUILT_IN) - 1 <= after < 2**62:
        raise ApiError(ErrorCode.INVALID_ARGUMENT, "data.pageToken: not a cursor this API returned")
    rows = []
    if after < 0:
        changed = {r[0]: r for r in stored.built_ins(read, ws)}
        missing = [b.agent_id for b in BUILT_IN if b.agent_id not in changed]
        created = stored.workspace_created(read, ws) if missing else 0
        rows = [
            changed.get(b.agent_id) or _default_row(b.agent_id, created)
            for b in BUILT_IN
            if _BUILT_IN_KEY[b.agent_id] > after
        ]
        rows = [r[:-1] + (_BUILT_IN_KEY[r[0]],) for r in rows]
    if len(rows) <= size:
        rows += stored.custom_page(read, ws, max(after, 0), size + 1 - len(rows))
    views = [_view(r) for r in rows[:size]]
    size = fitting(len(json.dumps(v, separators=(",", ":"))) for v in views)  # PAGE_MAX_BYTES
    more = len(rows) > size
    rows, views = rows[:size], views[:size]
    token = encode_cursor(rows[-1][-1]) if more else None
    return _success(f"{len(rows)} agent(s)", views, nextPageToken=token)


def update_agent(services: Services, workspace: Workspace, request: UpdateAgent) -> dict:
    """api-v2 §4.11: identity only, no new version. A custom agent with nothing to change
    succeeds as a no-op; a built-in accepts only ``enabled`` (``name`` and ``description``
    sent with it are ignored) and without it is INVALID_ARGUMENT."""
    ws, agent_id = workspace.workspace_id, request.agent_id
    built_in = agent_id in _BY_ID
    if built_in and request.enabled is None:
        raise ApiError(
            ErrorCode.INVALID_ARGUMENT,
            f"data.enabled: field required for built-in agent {agent_id} "
            "(built-in agents support only enabled; name and description cannot change)",
        )

    def job(tx):
        now = services.clock.now()
        if built_in:
            catalogue = _BY_ID[agent_id]
            stored.set_built_in_enabled(
                tx, ws, agent_id, catalogue.name, catalogue.description, _BUILT_IN_KEY[agent_id], request.enabled, now
            )
        elif not stored.update_identity(tx, ws, agent_id, request.name, request.description, request.enabled, now):
            raise _not_found(agent_id)

    services.store.write(job)
    nothing = request.name is None and request.description is None and request.enabled is None
    return _success("nothing to update" if nothing else "agent updated", {"agentId": agent_id})


def update_agent_version(services: Services, workspace: Workspace, request: UpdateAgentVersion) -> dict:
    """Version n+1 of the agent's behaviour; a field not given keeps version n's value."""
    ws, agent_id = workspace.workspace_id, request.agent_id
    built_in = agent_id in _BY_ID

    def job(tx):
        row = stored.agent(tx.execute, ws, agent_id)
        if row is None and not built_in:
            raise _not_found(agent_id)
        now = services.clock.now()
        if row is None:
            row = _default_row(agent_id, stored.workspace_created(tx.execute, ws))
        current, instructions, config = row[5], row[8], row[9]
        if built_in and current == 1 and instructions is None and config is None:
            instructions = _BY_ID[agent_id].instructions
        if request.instructions is not None:
            instructions = request.instructions
        if request.config is not None:
            config = json.dumps(request.config)
        version = current + 1
        # a built-in's first change keeps version 1 (the catalogue's) next to version 2
        catalogue = _BY_ID[agent_id].instructions if built_in and current == 1 else None
        stored.add_version(tx, ws, row, version, instructions, config, now, catalogue)
        return version

    version = services.store.write(job)
    return _success(f"agent version {version} created", {"agentId": agent_id, "version": version})


# ------------------------------------------------------------------ prompt validation


def validate_prompt(services: Services, workspace: Workspace, request: ValidatePrompt) -> dict:
    fields = [f.dump() for f in request.user_context_fields or []]
    if request.provider is not None:
        result = prompts.run_provider(request.provider, request.prompt, fields)
    else:
        result = prompts.validate_prompt(request.prompt, fields)
    return _success("prompt validated", {"validationResult": result})
