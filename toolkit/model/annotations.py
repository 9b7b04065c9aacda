"""Comment annotations: add, get, count, delete, mark read (api-v2 §2.10, §4.12–4.14; semantics §9).

Every object of api-v2 §4.13 is closed (an unknown key is an error naming it) except the
free-form ones of semantics §1 — `context`, `assignedTo`, `suggestion.summary` — and the
comment author `from`, whose fields beyond `userId`, `name` and `email` are not shown and are
kept as sent.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StringConstraints, ValidationError, field_validator, model_validator

from toolkit.errors import ApiError, ErrorCode, listed
from toolkit.model.base import (
    ApiModel,
    JsonObject,
    OpenModel,
    _loc_to_path,
    describe_errors,
    present,
    schema_rules,
    when,
)

Id = Annotated[str, StringConstraints(min_length=1, max_length=256)]
Text = Annotated[str, StringConstraints(max_length=100_000)]
Short = Annotated[str, StringConstraints(max_length=2048)]
Epoch = Annotated[int, Field(ge=0, le=2**53 - 1)]
CommentId = Annotated[int, Field(ge=0, le=2**53 - 1)]

MAX_ANNOTATIONS = 500  # per add request
MAX_COMMENTS = 500  # per annotation
MAX_FILTER_IDS = 1000  # annotationIds, locationIds, userIds, agentUrls
MAX_DOCUMENTS = 30  # count documentIds (api-v2 §8); get documentIds likewise
MAX_PAGE = 1000

VisibilityType = Literal["public", "organizationPrivate", "restricted"]


# ---------------------------------------------------------------- the annotation object


class Location(ApiModel):
    id: Short | None = None
    location_name: Short | None = None


class TargetElement(ApiModel):
    element_id: Short | None = None
    target_text: Text | None = None
    occurrence: int | None = None
    select_all_content: bool | None = None


class Status(ApiModel):
    id: Annotated[str, StringConstraints(min_length=1, max_length=256)]
    name: Short | None = None
    type: Short | None = None
    color: Short | None = None
    light_color: Short | None = None
    svg: Text | None = None
    icon_url: Short | None = None


class Priority(ApiModel):
    id: Short | None = None
    color: Short | None = None
    name: Short | None = None
    light_color: Short | None = None


class Suggestion(ApiModel):
    target_id: Short | None = None
    target_type: Short | None = None
    old_value: Any = None
    new_value: Any = None
    summary: JsonObject | None = None
    drift_detected: bool | None = None


class Visibility(ApiModel):
    model_config = ConfigDict(json_schema_extra=schema_rules(when("type", "restricted", present("userIds"))))

    type: VisibilityType
    organization_id: Id | None = None
    user_ids: Annotated[list[Id], Field(min_length=0, max_length=MAX_FILTER_IDS)] | None = None

    @model_validator(mode="after")
    def _restricted_users(self):
        if self.type == "restricted" and self.user_ids is None:
            raise ValueError("userIds: required when type is restricted")
        return self


class Author(OpenModel):
    """`from`: the comment author. Named fields are checked; other user fields are kept."""

    user_id: Id | None = None
    name: Short | None = None
    email: Short | None = None


class Contact(ApiModel):
    user_id: Id | None = None
    name: Short | None = None
    email: Short | None = None


class TaggedContact(ApiModel):
    user_id: Id | None = None
    contact: Contact | None = None


class Reason(ApiModel):
    title: Text | None = None
    description: Text | None = None
    severity: Short | None = None
    finding_id: Short | None = None
    finding_type: Short | None = None
    issue_type: Short | None = None
    suggestion: Text | None = None
    suggested_fix: Text | None = None
    html_snippet: Text | None = None
    html_selector: Text | None = None
    source: Text | None = None
    knowledge_section: Text | None = None
    confidence: float | None = None


class Agent(ApiModel):
    agent_source: Short | None = None
    agent_id: Short | None = None
    execution_id: Short | None = None
    agent_name: Short | None = None
    url: Short | None = None
    reason: Reason | None = None


class Comment(ApiModel):
    comment_id: CommentId | None = None
    comment_text: Text | None = None
    comment_html: Text | None = None
    context: JsonObject | None = None
    is_comment_resolver_used: bool | None = None
    is_comment_text_available: bool | None = None
    trigger_notification: bool | None = None
    trigger_activities: bool | None = None
    from_: Author | None = Field(default=None, alias="from")
    created_at: Epoch | None = None
    last_updated: Epoch | None = None
    tagged_user_contacts: Annotated[list[TaggedContact], Field(min_length=0, max_length=1000)] | None = None
    agent: Agent | None = None


def _some_text_given(name: str) -> dict:
    return {"required": [name], "properties": {name: {"type": "string", "minLength": 1}}}


class CommentAnnotation(ApiModel):
    model_config = ConfigDict(
        json_schema_extra=schema_rules(
            {
                "properties": {
                    "commentData": {
                        "contains": {"anyOf": [_some_text_given("commentText"), _some_text_given("commentHtml")]}
                    }
                }
            }
        )
    )

    annotation_id: Id | None = None
    location: Location | None = None
    target_element: TargetElement | None = None
    comment_data: Annotated[list[Comment], Field(min_length=1, max_length=MAX_COMMENTS)]
    status: Status | None = None
    assigned_to: JsonObject | None = None
    context: JsonObject | None = None
    created_at: Epoch | None = None
    last_updated: Epoch | None = None
    priority: Priority | None = None
    type: Short | None = None
    suggestion: Suggestion | None = None
    comment_type: Short | None = None
    visibility: Visibility | None = None

    @field_validator("comment_data")
    @classmethod
    def _some_text(cls, comments: list[Comment]) -> list[Comment]:
        if not any(c.comment_text or c.comment_html for c in comments):
            raise ValueError("at least one comment needs commentText or commentHtml")
        return comments


class AddAnnotations(ApiModel):
    """No ``annotationId`` is given twice in ``commentAnnotations``, nor a ``commentId`` twice
    in one annotation's ``commentData``. Without ``organizationId`` (a document without
    organization), an ``organizationPrivate`` visibility names its ``organizationId``."""

    model_config = ConfigDict(
        json_schema_extra=schema_rules(
            when(
                "verifyUserPermissions",
                True,
                {
                    "properties": {
                        "commentAnnotations": {
                            "items": {
                                "properties": {
                                    "commentData": {
                                        "items": {
                                            "required": ["from"],
                                            "properties": {"from": {"type": "object", **present("userId")}},
                                        }
                                    }
                                }
                            }
                        }
                    }
                },
            )
        )
    )

    organization_id: Id | None = None
    document_id: Id
    create_organization: bool = False
    create_document: bool = False
    verify_user_permissions: bool = False
    comment_annotations: Annotated[list[CommentAnnotation], Field(min_length=1, max_length=MAX_ANNOTATIONS)]


def validate_add(data) -> AddAnnotations:
    """Validate an add body, naming fields exactly.

    The shared error formatter drops a path part named like a workflow node type (``agent``)
    right after a list index, because there it is a union tag; in a comment it is a real
    field (``commentData[0].agent.agentId``), so the path is rebuilt here."""
    try:
        request = AddAnnotations.model_validate(data)
    except ValidationError as exc:
        parts = []
        for error, (path, message) in zip(exc.errors(include_url=False), describe_errors(exc)):
            loc = tuple(error["loc"])
            shortened = _loc_to_path(loc, "data")
            exact = "data" + "".join(
                f"[{i}]" if isinstance(i, int) else f".{i}"
                for i in loc
                if isinstance(i, int) or not i.startswith("function-")
            )
            if path.startswith(shortened) and shortened != exact:
                path = exact + path[len(shortened) :]
            parts.append(f"{path}: {message}")
        raise ApiError(ErrorCode.INVALID_ARGUMENT, listed(parts, "; ")) from None
    cross_check(request)
    return request


def cross_check(request: AddAnnotations) -> None:
    """Rules across items of an add request, each an INVALID_ARGUMENT naming the field."""
    seen: dict[str, int] = {}
    for index, annotation in enumerate(request.comment_annotations):
        where = f"data.commentAnnotations[{index}]"
        if annotation.annotation_id is not None:
            if annotation.annotation_id in seen:
                _invalid(
                    f"{where}.annotationId",
                    f"{annotation.annotation_id!r} repeats "
                    f"commentAnnotations[{seen[annotation.annotation_id]}] of this request",
                )
            seen[annotation.annotation_id] = index
        comment_ids: dict[int, int] = {}
        for j, comment in enumerate(annotation.comment_data):
            if comment.comment_id is not None:
                if comment.comment_id in comment_ids:
                    _invalid(
                        f"{where}.commentData[{j}].commentId",
                        f"{comment.comment_id} repeats commentData[{comment_ids[comment.comment_id]}]: "
                        "commentIds are unique within an annotation",
                    )
                comment_ids[comment.comment_id] = j
            if request.verify_user_permissions and (comment.from_ is None or comment.from_.user_id is None):
                _invalid(f"{where}.commentData[{j}].from.userId", "required when verifyUserPermissions is true")
        vis = annotation.visibility
        if (
            vis is not None
            and vis.type == "organizationPrivate"
            and vis.organization_id is None
            and request.organization_id is None
        ):
            _invalid(
                f"{where}.visibility.organizationId",
                "required for organizationPrivate visibility on a document without organization",
            )


def _invalid(path: str, message: str):
    raise ApiError(ErrorCode.INVALID_ARGUMENT, f"{path}: {message}")


# ---------------------------------------------------------------- reads and deletes


class GetAnnotations(ApiModel):
    """``pageToken`` is one this API returned."""

    model_config = ConfigDict(
        json_schema_extra=schema_rules(
            {"not": present("documentId", "documentIds")},
            {"anyOf": [present("organizationId"), present("documentId"), present("documentIds")]},
        )
    )

    organization_id: Id | None = None
    document_id: Id | None = None
    document_ids: Annotated[list[Id], Field(min_length=1, max_length=MAX_DOCUMENTS)] | None = None
    annotation_ids: Annotated[list[Id], Field(min_length=1, max_length=MAX_FILTER_IDS)] | None = None
    user_id: Id | None = None
    status_ids: Annotated[list[Id], Field(min_length=1, max_length=MAX_FILTER_IDS)] | None = None
    page_size: Annotated[int, Field(ge=1, le=MAX_PAGE)] = MAX_PAGE
    page_token: Annotated[str, StringConstraints(max_length=256)] | None = None

    @model_validator(mode="after")
    def _where(self):
        if self.document_id is not None and self.document_ids is not None:
            raise ValueError("documentIds: give either documentId or documentIds")
        if self.organization_id is None and self.document_id is None and self.document_ids is None:
            raise ValueError(
                "organizationId: field required (it may be omitted only for documents "
                "without organization, addressed by documentId or documentIds)"
            )
        return self


class CountAnnotations(ApiModel):
    organization_id: Id
    document_ids: Annotated[list[Id], Field(min_length=1, max_length=MAX_DOCUMENTS)]
    user_id: Id
    status_ids: Annotated[list[Id], Field(min_length=1, max_length=MAX_FILTER_IDS)] | None = None


class DeleteAnnotations(ApiModel):
    """With ``agentUrls``, at least one entry is a page URL (absolute http or https, not blank
    or fragment-only), else nothing is deleted and the answer is INVALID_ARGUMENT."""

    organization_id: Id | None = None
    document_id: Id
    location_ids: Annotated[list[Id], Field(min_length=1, max_length=MAX_FILTER_IDS)] | None = None
    annotation_ids: Annotated[list[Id], Field(min_length=1, max_length=MAX_FILTER_IDS)] | None = None
    user_ids: Annotated[list[Id], Field(min_length=1, max_length=MAX_FILTER_IDS)] | None = None
    agent_id: Id | None = None
    agent_suggestions: bool | None = None
    agent_urls: Annotated[list[Short], Field(min_length=1, max_length=MAX_FILTER_IDS)] | None = None

    @property
    def uses_agent_filters(self) -> bool:
        return self.agent_id is not None or self.agent_suggestions is True or self.agent_urls is not None


class MarkRead(ApiModel):
    organization_id: Id | None = None
    document_id: Id
    user_id: Id
    annotation_ids: Annotated[list[Id], Field(min_length=1, max_length=MAX_FILTER_IDS)]


# ---------------------------------------------------------------- results (for OpenAPI)


class AddedItem(ApiModel):
    success: bool
    annotation_id: str
    comment_ids: list[int]
    message: str


class AnnotationsAdded(ApiModel):
    status: Literal["success"]
    message: str
    data: dict[str, AddedItem]


class AnnotationView(OpenModel):
    """A stored annotation: as added (every field of api-v2 §4.13), plus these."""

    annotation_id: str
    document_id: str
    organization_id: str | None
    comment_data: list[JsonObject]
    status: JsonObject
    created_at: int
    last_updated: int


class AnnotationPage(ApiModel):
    status: Literal["success"]
    message: str
    data: list[AnnotationView]
    next_page_token: str | None


class Counts(ApiModel):
    total: int
    unread: int


class AnnotationCounts(ApiModel):
    status: Literal["success"]
    message: str
    data: dict[str, Counts]


class DeletedItem(ApiModel):
    success: bool
    id: str
    message: str


class AnnotationsDeleted(ApiModel):
    status: Literal["success"]
    message: str
    data: dict[str, DeletedItem]


class ItemOutcome(ApiModel):
    success: bool
    message: str


class MarkedRead(ApiModel):
    status: Literal["success"]
    message: str
    data: dict[str, ItemOutcome]
