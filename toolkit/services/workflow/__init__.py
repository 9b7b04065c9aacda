"""The workflow API in process: definitions, executions, steps, events and webhook deliveries
(api-v2 §4.5–4.9, semantics §6–§7). Every function takes ``(services, workspace, request)`` where ``request`` is
the validated request model, and returns the result as a JSON-ready dict."""

from toolkit.services.workflow.definitions import (
    create_definition,
    delete_definition,
    get_definition,
    list_definitions,
    update_definition,
)
from toolkit.services.workflow.deliveries import list_deliveries, redrive_deliveries
from toolkit.services.workflow.executions import (
    agent_completed,
    cancel_execution,
    cancel_step,
    dispatch,
    get_events,
    get_execution,
    list_executions,
    record_agent_resolution,
    record_reviewer_decision,
    resolve_step,
    tick,
)

__all__ = [
    "create_definition",
    "get_definition",
    "list_definitions",
    "update_definition",
    "delete_definition",
    "dispatch",
    "get_execution",
    "list_executions",
    "cancel_execution",
    "get_events",
    "resolve_step",
    "record_reviewer_decision",
    "record_agent_resolution",
    "cancel_step",
    "tick",
    "agent_completed",
    "list_deliveries",
    "redrive_deliveries",
]
