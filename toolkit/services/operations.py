"""The one table of the API's operations: for each, its path, request model, service
function, result model, published request schema and the error codes it can answer beyond
the common ones. The server's routes, ``/openapi.json`` and both clients
(:mod:`toolkit.client`) are built from it, so they cannot drift apart.

An operation's ``name`` is its service function's name (``add_users``, ``dispatch``), which is
also the clients' method name.

>>> [op.path for op in OPERATIONS if op.name == "add_users"]
['/v2/users/add']
>>> len({op.name for op in OPERATIONS}) == len(OPERATIONS)
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from toolkit.errors import ErrorCode
from toolkit.model import Definition, DefinitionUpdate, validate
from toolkit.model import access as acc
from toolkit.model import activities as act
from toolkit.model import agents as ag
from toolkit.model import annotations as ann
from toolkit.model import workflow as wf
from toolkit.services import access, activities, agents, workflow

# aliased: `annotations` is the name `from __future__ import annotations` binds
from toolkit.services import annotations as comments

if TYPE_CHECKING:
    from toolkit.services.context import Services
    from toolkit.services.workspaces import Workspace

__all__ = ["BY_NAME", "BY_PATH", "OPERATIONS", "Operation"]


class Operation(NamedTuple):
    """One endpoint. ``request`` is ``None`` when the service takes the raw ``data`` object
    (definition and annotation bodies are validated by the service and stored exactly as
    sent); ``schema`` is the request model published in OpenAPI; ``errors`` are the codes this
    operation can answer besides those every operation can (INVALID_ARGUMENT,
    FAILED_PRECONDITION, UNAUTHENTICATED, NOT_FOUND, INTERNAL)."""

    path: str
    request: type | None
    service: Callable[..., dict]
    result: type
    schema: type
    errors: tuple[ErrorCode, ...] = ()

    @property
    def name(self) -> str:
        """The client method name: the service function's name."""
        return self.service.__name__

    def call(self, services: Services, workspace: Workspace, data: Any) -> dict:
        """Validate ``data`` (the envelope's ``data`` object) and call the service function."""
        request = data if self.request is None else validate(self.request, data)
        return self.service(services, workspace, request)


_W, _A, _C, _L = "/v2/workflow", "/v2/agents", "/v2/commentannotations", "/v2/activities"
_ORG = "/v2/organizations"

OPERATIONS: tuple[Operation, ...] = (
    # workflow (api-v2 §4.5–4.9)
    Operation(
        f"{_W}/definitions/create",
        None,
        workflow.create_definition,
        wf.DefinitionView,
        Definition,
        (ErrorCode.ALREADY_EXISTS, ErrorCode.ABORTED),
    ),
    Operation(f"{_W}/definitions/get", wf.DefinitionRef, workflow.get_definition, wf.DefinitionView, wf.DefinitionRef),
    Operation(
        f"{_W}/definitions/list", wf.ListDefinitions, workflow.list_definitions, wf.DefinitionList, wf.ListDefinitions
    ),
    Operation(f"{_W}/definitions/update", None, workflow.update_definition, wf.DefinitionView, DefinitionUpdate),
    Operation(f"{_W}/definitions/delete", wf.DefinitionRef, workflow.delete_definition, wf.Deleted, wf.DefinitionRef),
    Operation(f"{_W}/executions/dispatch", wf.Dispatch, workflow.dispatch, wf.Dispatched, wf.Dispatch),
    Operation(f"{_W}/executions/get", wf.ExecutionRef, workflow.get_execution, wf.ExecutionView, wf.ExecutionRef),
    Operation(
        f"{_W}/executions/list", wf.ListExecutions, workflow.list_executions, wf.ExecutionList, wf.ListExecutions
    ),
    Operation(
        f"{_W}/executions/cancel",
        wf.CancelExecution,
        workflow.cancel_execution,
        wf.ExecutionCancelled,
        wf.CancelExecution,
    ),
    Operation(f"{_W}/executions/getEvents", wf.GetEvents, workflow.get_events, wf.EventPage, wf.GetEvents),
    Operation(
        f"{_W}/steps/resolve",
        wf.ResolveStep,
        workflow.resolve_step,
        wf.Resolved,
        wf.ResolveStep,
        (ErrorCode.PERMISSION_DENIED,),
    ),
    Operation(
        f"{_W}/steps/recordReviewerDecision",
        wf.RecordReviewerDecision,
        workflow.record_reviewer_decision,
        wf.DecisionRecorded,
        wf.RecordReviewerDecision,
    ),
    Operation(
        f"{_W}/steps/recordAgentResolution",
        wf.RecordAgentResolution,
        workflow.record_agent_resolution,
        wf.ResolutionRecorded,
        wf.RecordAgentResolution,
    ),
    Operation(f"{_W}/steps/cancel", wf.CancelStep, workflow.cancel_step, wf.StepCancelled, wf.CancelStep),
    Operation(f"{_W}/deliveries/list", wf.ListDeliveries, workflow.list_deliveries, wf.DeliveryList, wf.ListDeliveries),
    Operation(
        f"{_W}/deliveries/redrive", wf.RedriveDeliveries, workflow.redrive_deliveries, wf.Redriven, wf.RedriveDeliveries
    ),
    # tokens, permissions, users, folders, documents, user groups, access (§4.1–4.4, §4.17, §4.18)
    Operation("/v2/auth/generate_token", acc.GenerateToken, access.generate_token, acc.TokenResult, acc.GenerateToken),
    Operation(
        "/v2/auth/permissions/add", acc.AddPermissions, access.add_permissions, acc.AccessItems, acc.AddPermissions
    ),
    Operation(
        "/v2/auth/permissions/remove",
        acc.RemovePermissions,
        access.remove_permissions,
        acc.AccessItems,
        acc.RemovePermissions,
    ),
    Operation("/v2/users/add", acc.AddUsers, access.add_users, acc.AccessItems, acc.AddUsers),
    Operation("/v2/users/update", acc.UpdateUsers, access.update_users, acc.AccessItems, acc.UpdateUsers),
    Operation("/v2/users/delete", acc.DeleteUsers, access.delete_users, acc.AccessItems, acc.DeleteUsers),
    Operation("/v2/users/get", acc.GetUsers, access.get_users, acc.UsersPage, acc.GetUsers),
    Operation("/v2/folders/add", acc.AddFolders, access.add_folders, acc.AccessItems, acc.AddFolders),
    Operation("/v2/documents/add", acc.AddDocuments, access.add_documents, acc.AccessItems, acc.AddDocuments),
    Operation(f"{_ORG}/usergroups/add", acc.AddUserGroups, access.add_user_groups, acc.AccessItems, acc.AddUserGroups),
    Operation(
        f"{_ORG}/usergroups/users/add",
        acc.AddUserGroupUsers,
        access.add_user_group_users,
        acc.AccessItems,
        acc.AddUserGroupUsers,
    ),
    Operation(
        f"{_ORG}/folders/access/update",
        acc.UpdateFolderAccess,
        access.update_folder_access,
        acc.AccessItems,
        acc.UpdateFolderAccess,
    ),
    Operation(
        f"{_ORG}/documents/access/update",
        acc.UpdateDocumentAccess,
        access.update_document_access,
        acc.AccessItems,
        acc.UpdateDocumentAccess,
    ),
    Operation(
        f"{_ORG}/documents/access/disablestate/update",
        acc.UpdateDisabledState,
        access.update_disabled_state,
        acc.AccessItems,
        acc.UpdateDisabledState,
    ),
    # comment annotations and activity logs (§4.12–4.16)
    Operation(f"{_C}/add", None, comments.add_annotations, ann.AnnotationsAdded, ann.AddAnnotations),
    Operation(f"{_C}/get", ann.GetAnnotations, comments.get_annotations, ann.AnnotationPage, ann.GetAnnotations),
    Operation(
        f"{_C}/count/get",
        ann.CountAnnotations,
        comments.count_annotations,
        ann.AnnotationCounts,
        ann.CountAnnotations,
    ),
    Operation(
        f"{_C}/delete",
        ann.DeleteAnnotations,
        comments.delete_annotations,
        ann.AnnotationsDeleted,
        ann.DeleteAnnotations,
    ),
    Operation(f"{_C}/markread", ann.MarkRead, comments.mark_read, ann.MarkedRead, ann.MarkRead),
    Operation(f"{_L}/add", act.AddActivities, activities.add_activities, act.ActivitiesAdded, act.AddActivities),
    Operation(f"{_L}/get", act.GetActivities, activities.get_activities, act.ActivityPage, act.GetActivities),
    Operation(
        f"{_L}/update", act.UpdateActivities, activities.update_activities, act.ActivitiesChanged, act.UpdateActivities
    ),
    Operation(
        f"{_L}/delete", act.DeleteActivities, activities.delete_activities, act.ActivitiesChanged, act.DeleteActivities
    ),
    # agents and prompt validation (§4.10, §4.11)
    Operation(f"{_A}/create", ag.CreateAgent, agents.create_agent, ag.AgentCreated, ag.CreateAgent),
    Operation(f"{_A}/get", ag.GetAgent, agents.get_agent, ag.AgentFetched, ag.GetAgent),
    Operation(f"{_A}/update", ag.UpdateAgent, agents.update_agent, ag.AgentUpdated, ag.UpdateAgent),
    Operation(
        f"{_A}/version/update",
        ag.UpdateAgentVersion,
        agents.update_agent_version,
        ag.AgentVersionUpdated,
        ag.UpdateAgentVersion,
    ),
    Operation(
        f"{_A}/prompt/validate",
        ag.ValidatePrompt,
        agents.validate_prompt,
        ag.PromptValidated,
        ag.ValidatePrompt,
        (ErrorCode.UNAVAILABLE,),
    ),
)

BY_NAME: dict[str, Operation] = {op.name: op for op in OPERATIONS}
BY_PATH: dict[str, Operation] = {op.path: op for op in OPERATIONS}
