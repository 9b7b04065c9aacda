"""Activity logs: add, get, update, delete (api-v2 §2.11, §4.15, §4.16; semantics §10).

`entityData` and `entityTargetData` are free-form (any JSON); `changes` maps a field name to
`{from, to}`; `actionUser` is the acting user, whose fields are not shown and kept as sent.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StringConstraints, model_validator

from toolkit.errors import ApiError, ErrorCode
from toolkit.model.base import ApiModel, JsonObject, OpenModel, present, schema_rules

Id = Annotated[str, StringConstraints(min_length=1, max_length=256)]
Name = Annotated[str, StringConstraints(min_length=1, max_length=128)]
Template = Annotated[str, StringConstraints(max_length=10_000)]
Icon = Annotated[str, StringConstraints(max_length=2048)]

MAX_ITEMS = 500
MAX_PAGE = 1000


class Change(ApiModel):
    from_: Any = Field(default=None, alias="from")
    to: Any = None


class ActionUser(OpenModel):
    user_id: Id | None = None
    name: Annotated[str, StringConstraints(max_length=2048)] | None = None
    email: Annotated[str, StringConstraints(max_length=2048)] | None = None


class ActivityContent(ApiModel):
    """The fields an activity update may change (api-v2 §4.15); a new activity has them too."""

    changes: dict[str, Change] | None = None
    entity_data: Any = None
    entity_target_data: Any = None
    display_message_template: Template | None = None
    display_message_template_data: JsonObject | None = None
    action_icon: Icon | None = None


class NewActivity(ActivityContent):
    id: Id | None = None
    document_id: Id | None = None
    target_entity_id: Id | None = None
    feature_type: Name
    action_type: Name
    action_user: ActionUser | None = None


class AddActivities(ApiModel):
    organization_id: Id
    activities: Annotated[list[NewActivity], Field(min_length=1, max_length=MAX_ITEMS)]


class ActivityChanges(ActivityContent):
    id: Id


class UpdateActivities(ApiModel):
    """No ``id`` is given twice in ``activities``."""

    organization_id: Id
    activities: Annotated[list[ActivityChanges], Field(min_length=1, max_length=MAX_ITEMS)]


class GetActivities(ApiModel):
    model_config = ConfigDict(
        json_schema_extra=schema_rules({"anyOf": [present("organizationId"), present("documentId")]})
    )

    organization_id: Id | None = None
    document_id: Id | None = None
    target_entity_id: Id | None = None
    page_size: Annotated[int, Field(ge=1, le=MAX_PAGE)] = MAX_PAGE
    page_token: Annotated[str, StringConstraints(max_length=256)] | None = None

    @model_validator(mode="after")
    def _organization(self):
        if self.organization_id is None and self.document_id is None:
            raise ValueError(
                "organizationId: field required (it may be omitted only with the documentId "
                "of a document without organization)"
            )
        return self


class DeleteActivities(ApiModel):
    model_config = ConfigDict(
        json_schema_extra=schema_rules(
            {"anyOf": [present("documentId"), present("targetEntityId"), present("activityIds")]}
        )
    )

    organization_id: Id
    document_id: Id | None = None
    target_entity_id: Id | None = None
    activity_ids: Annotated[list[Id], Field(min_length=1, max_length=1000)] | None = None

    @model_validator(mode="after")
    def _some_filter(self):
        if self.document_id is None and self.target_entity_id is None and self.activity_ids is None:
            raise ValueError("activityIds: give at least one of documentId, targetEntityId, activityIds")
        return self


def unique_ids(items, field: str = "activities") -> None:
    """Client ids key the result map, so one request may not name an id twice."""
    seen: dict[str, int] = {}
    for index, item in enumerate(items):
        if item.id is None:
            continue
        if item.id in seen:
            raise ApiError(
                ErrorCode.INVALID_ARGUMENT,
                f"data.{field}[{index}].id: {item.id!r} repeats {field}[{seen[item.id]}] of this request",
            )
        seen[item.id] = index


# ---------------------------------------------------------------- results (for OpenAPI)


class ActivityOutcome(ApiModel):
    success: bool
    message: str


class ActivityAdded(ApiModel):
    success: bool
    id: str
    message: str


class ActivitiesAdded(ApiModel):
    status: Literal["success"]
    message: str
    data: dict[str, ActivityAdded]


class ActivityView(ApiModel):
    id: str
    organization_id: str | None
    document_id: str | None = None
    target_entity_id: str | None = None
    feature_type: str
    action_type: str
    action_user: JsonObject | None = None
    changes: dict[str, JsonObject] | None = None
    entity_data: Any = None
    entity_target_data: Any = None
    display_message_template: str | None = None
    display_message_template_data: JsonObject | None = None
    action_icon: str | None = None
    created_at: int
    last_updated: int


class ActivityPage(ApiModel):
    status: Literal["success"]
    message: str
    data: list[ActivityView]
    next_page_token: str | None


class ActivitiesChanged(ApiModel):
    status: Literal["success"]
    message: str
    data: dict[str, ActivityOutcome]
