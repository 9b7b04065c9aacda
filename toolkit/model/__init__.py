"""Pydantic models of every request, resource and view (api-v2 §2, §4).

Import from here: ``from toolkit.model import Definition, Edge, validate``.
"""

from toolkit.model.base import ApiModel, describe_errors, invalid_argument, validate
from toolkit.model.definition import (
    AgentConfig,
    AgentNode,
    Definition,
    DefinitionUpdate,
    Edge,
    EdgeEndpoint,
    Group,
    HumanConfig,
    HumanNode,
    LoopSpec,
    Node,
    ResolutionPolicy,
    Reviewer,
    Scope,
    Trigger,
    WebhookConfig,
    WebhookNode,
)

__all__ = [
    "AgentConfig",
    "AgentNode",
    "ApiModel",
    "Definition",
    "DefinitionUpdate",
    "Edge",
    "EdgeEndpoint",
    "Group",
    "HumanConfig",
    "HumanNode",
    "LoopSpec",
    "Node",
    "ResolutionPolicy",
    "Reviewer",
    "Scope",
    "Trigger",
    "WebhookConfig",
    "WebhookNode",
    "describe_errors",
    "invalid_argument",
    "validate",
]
