"""The route table: one line a path — its request model, the service function, its result model.

``None`` as the request model means the service takes the raw ``data`` object (definition
bodies, whose authored JSON is stored and echoed exactly as sent).
"""

from __future__ import annotations

from typing import NamedTuple

from toolkit.model import Definition, DefinitionUpdate
from toolkit.model import workflow as m
from toolkit.services import workflow


class Endpoint(NamedTuple):
    path: str
    request: type | None
    service: object
    result: type
    schema: type  # the request schema published in OpenAPI


W = "/v2/workflow"

WORKFLOW_ROUTES: list[Endpoint] = [
    Endpoint(f"{W}/definitions/create", None, workflow.create_definition, m.DefinitionView, Definition),
    Endpoint(f"{W}/definitions/get", m.DefinitionRef, workflow.get_definition, m.DefinitionView, m.DefinitionRef),
    Endpoint(f"{W}/definitions/list", m.ListDefinitions, workflow.list_definitions, m.DefinitionList, m.ListDefinitions),
    Endpoint(f"{W}/definitions/update", None, workflow.update_definition, m.DefinitionView, DefinitionUpdate),
    Endpoint(f"{W}/definitions/delete", m.DefinitionRef, workflow.delete_definition, m.Deleted, m.DefinitionRef),
    Endpoint(f"{W}/executions/dispatch", m.Dispatch, workflow.dispatch, m.Dispatched, m.Dispatch),
    Endpoint(f"{W}/executions/get", m.ExecutionRef, workflow.get_execution, m.ExecutionView, m.ExecutionRef),
    Endpoint(f"{W}/executions/list", m.ListExecutions, workflow.list_executions, m.ExecutionList, m.ListExecutions),
    Endpoint(f"{W}/executions/cancel", m.CancelExecution, workflow.cancel_execution, m.ExecutionCancelled,
             m.CancelExecution),
    Endpoint(f"{W}/executions/getEvents", m.GetEvents, workflow.get_events, m.EventPage, m.GetEvents),
    Endpoint(f"{W}/steps/resolve", m.ResolveStep, workflow.resolve_step, m.Resolved, m.ResolveStep),
    Endpoint(f"{W}/steps/recordReviewerDecision", m.RecordReviewerDecision, workflow.record_reviewer_decision,
             m.DecisionRecorded, m.RecordReviewerDecision),
    Endpoint(f"{W}/steps/recordAgentResolution", m.RecordAgentResolution, workflow.record_agent_resolution,
             m.ResolutionRecorded, m.RecordAgentResolution),
    Endpoint(f"{W}/steps/cancel", m.CancelStep, workflow.cancel_step, m.StepCancelled, m.CancelStep),
]


def _all_routes() -> list[Endpoint]:
    from server.routes_access import ACCESS_ROUTES
    from server.routes_agents import AGENT_ROUTES
    from server.routes_annotations import ANNOTATION_ROUTES

    return WORKFLOW_ROUTES + ACCESS_ROUTES + ANNOTATION_ROUTES + AGENT_ROUTES


ROUTES: list[Endpoint] = _all_routes()
