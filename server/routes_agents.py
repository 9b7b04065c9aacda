"""Routes for agents and prompt validation (api-v2 §4.10, §4.11; semantics §11)."""

from __future__ import annotations

from server.routes import Endpoint
from toolkit.model import agents as m
from toolkit.services import agents

A = "/v2/agents"

AGENT_ROUTES: list[Endpoint] = [
    Endpoint(f"{A}/create", m.CreateAgent, agents.create_agent, m.AgentCreated, m.CreateAgent),
    Endpoint(f"{A}/get", m.GetAgent, agents.get_agent, m.AgentFetched, m.GetAgent),
    Endpoint(f"{A}/update", m.UpdateAgent, agents.update_agent, m.AgentUpdated, m.UpdateAgent),
    Endpoint(f"{A}/version/update", m.UpdateAgentVersion, agents.update_agent_version, m.AgentVersionUpdated,
             m.UpdateAgentVersion),
    Endpoint(f"{A}/prompt/validate", m.ValidatePrompt, agents.validate_prompt, m.PromptValidated, m.ValidatePrompt),
]
