"""Requests and results of the agent endpoints (api-v2 §4.10, §4.11, §9.3; semantics §11).

The agent registry: create, get (one or a paged list), update identity, update version; and
the prompt validator, whose result keeps the snake_case keys api-v2 §4.10 shows.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StringConstraints, field_validator, model_validator

from toolkit.model.base import ApiModel, JsonObject, absent, present, refuse_repeats, schema_rules, when

AgentId = Annotated[str, StringConstraints(min_length=1, max_length=128)]
# Not blank: some character outside Python's whitespace (what `str.strip` removes). Spelled out
# rather than `\S`, whose set differs between Python and JSON Schema's ECMA-262 regexes; only the
# document carries it (the validator below words the refusal).
NOT_BLANK = r"[^\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
_SomeText = Field(json_schema_extra={"pattern": NOT_BLANK})
AgentName = Annotated[str, StringConstraints(min_length=1, max_length=200), _SomeText]
AgentDescription = Annotated[str, StringConstraints(max_length=2000)]
Instructions = Annotated[str, StringConstraints(min_length=1, max_length=20_000)]
PromptText = Annotated[str, StringConstraints(min_length=1, max_length=10_000), _SomeText]
FieldId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")]

PROVIDERS = ("openai", "anthropic")
FIELD_TYPES = ("string", "text", "number", "boolean", "url", "email", "date", "list", "select")
FieldType = Literal["string", "text", "number", "boolean", "url", "email", "date", "list", "select"]
# A context field's example or default: a JSON scalar, or a list of strings for `list`/`select`.
FieldValue = str | int | float | bool | list[str]


def _not_blank(value: str | None) -> str | None:
    if value is not None and not value.strip():
        raise ValueError("must not be empty or only whitespace")
    return value


# ------------------------------------------------------------------ requests


class CreateAgent(ApiModel):
    name: AgentName
    description: AgentDescription | None = None
    enabled: bool = True
    instructions: Instructions | None = None
    config: JsonObject | None = None

    _name = field_validator("name")(_not_blank)


class GetAgent(ApiModel):
    """With ``agentId``: that agent (``version`` picks a past version's behaviour). Without:
    every agent of the workspace, a page at a time."""

    model_config = ConfigDict(
        json_schema_extra=schema_rules(
            {"if": present("version"), "then": present("agentId")},
            {"if": present("agentId"), "then": absent("pageSize", "pageToken")},
        )
    )

    agent_id: AgentId | None = None
    version: Annotated[int, Field(ge=1)] | None = None
    page_size: Annotated[int, Field(ge=1, le=500)] | None = None
    page_token: Annotated[str, StringConstraints(min_length=1, max_length=256)] | None = None

    @model_validator(mode="after")
    def _one_or_all(self):
        if self.agent_id is None and self.version is not None:
            raise ValueError("version: only together with agentId")
        if self.agent_id is not None and self.page_size is not None:
            raise ValueError("pageSize: only when listing (without agentId)")
        if self.agent_id is not None and self.page_token is not None:
            raise ValueError("pageToken: only when listing (without agentId)")
        return self


class UpdateAgent(ApiModel):
    """api-v2 §4.11: identity only, no new version."""

    agent_id: AgentId
    name: AgentName | None = None
    description: AgentDescription | None = None
    enabled: bool | None = None

    _name = field_validator("name")(_not_blank)


class UpdateAgentVersion(ApiModel):
    """Behaviour: a new version n+1; what is not given carries over from version n."""

    model_config = ConfigDict(json_schema_extra=schema_rules({"anyOf": [present("instructions"), present("config")]}))

    agent_id: AgentId
    instructions: Instructions | None = None
    config: JsonObject | None = None

    @model_validator(mode="after")
    def _something(self):
        if self.instructions is None and self.config is None:
            raise ValueError("instructions: give instructions, config or both (a version must change something)")
        return self


def _value_matches(kind: str, value: Any) -> bool:
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind in ("list", "select"):
        return isinstance(value, list) or isinstance(value, str)
    return isinstance(value, str)


def _values_of(kind: str, schema: dict) -> dict:
    """JSON Schema: ``example`` and ``defaultValue`` are null or match ``schema`` when ``type`` is ``kind``."""
    value = {"anyOf": [{"type": "null"}, schema]}
    return when("type", kind, {"properties": {"example": value, "defaultValue": value}})


_TEXT = {"type": "string", "maxLength": 2000}


class UserContextField(ApiModel):
    """``example`` and ``defaultValue`` match ``type`` (a number, a boolean, a string or for
    list and select a list or a string), strings at most 2000 characters."""

    model_config = ConfigDict(
        json_schema_extra=schema_rules(
            _values_of("number", {"type": "number"}),
            _values_of("boolean", {"type": "boolean"}),
            *(_values_of(kind, {"anyOf": [{"type": "array"}, _TEXT]}) for kind in ("list", "select")),
            *(_values_of(kind, _TEXT) for kind in ("string", "text", "url", "email", "date")),
        )
    )

    id: FieldId
    title: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    type: FieldType
    example: FieldValue | None = None
    default_value: FieldValue | None = None

    @model_validator(mode="after")
    def _typed_values(self):
        for name, value in (("example", self.example), ("defaultValue", self.default_value)):
            if value is not None and not _value_matches(self.type, value):
                raise ValueError(f"{name}: does not match type {self.type}")
            if isinstance(value, str) and len(value) > 2000:
                raise ValueError(f"{name}: at most 2000 characters")
        return self


class ValidatePrompt(ApiModel):
    """No ``id`` is given twice in ``userContextFields``; ``provider`` must be configured on
    the server (else INVALID_ARGUMENT naming it)."""

    prompt: PromptText
    provider: Literal["openai", "anthropic"] | None = None
    user_context_fields: Annotated[list[UserContextField], Field(max_length=50)] | None = None

    _prompt = field_validator("prompt")(_not_blank)

    @field_validator("user_context_fields")
    @classmethod
    def _unique_ids(cls, fields):
        refuse_repeats("", [f.id for f in fields or []], "id", ".id")  # the field's name is added by pydantic
        return fields


# ------------------------------------------------------------------ results (for OpenAPI)


class AgentView(ApiModel):
    agent_id: str
    name: str
    description: str | None
    enabled: bool
    built_in: bool
    version: int
    instructions: str | None
    config: JsonObject | None
    created_at: int
    updated_at: int


class AgentIdData(ApiModel):
    agent_id: str


class AgentCreated(ApiModel):
    status: Literal["success"]
    message: str
    data: AgentIdData


class AgentFetched(ApiModel):
    status: Literal["success"]
    message: str
    data: AgentView | list[AgentView]
    next_page_token: str | None = None


class AgentUpdated(ApiModel):
    status: Literal["success"]
    message: str
    data: AgentIdData


class AgentVersionData(ApiModel):
    agent_id: str
    version: int


class AgentVersionUpdated(ApiModel):
    status: Literal["success"]
    message: str
    data: AgentVersionData


class _WireAsIs(ApiModel):
    """The validator's result keeps the snake_case keys of api-v2 §4.10."""

    model_config = ConfigDict(alias_generator=None)


class ResponseDescriptions(ApiModel):
    title: str
    severity: str
    target_text: str
    suggestion: str
    issue_type: str


class DemoCase(_WireAsIs):
    id: str
    title: str
    tier: Literal["obvious_match", "subtle_match", "near_miss", "clean"]
    dimension_tested: str
    html: str
    expected: Literal["detected", "not_detected"]
    reason: str


class Demos(_WireAsIs):
    detection_dimensions: list[str]
    cases: list[DemoCase]


class RequiredInput(ApiModel):
    id: str
    title: str
    type: str
    description: str
    source: Literal["placeholder", "instruction", "userContextField"]
    placeholder: str | None = None
    example: FieldValue | None = None
    default_value: FieldValue | None = None


class PromptValidatorResult(_WireAsIs):
    analysis_prompt: str
    requires_tool: Literal["TOOL_TEXT_EXTRACTOR", "NONE"]
    response_descriptions: ResponseDescriptions
    demos: Demos
    suggested_required_inputs: list[RequiredInput]


class ValidationData(ApiModel):
    validation_result: PromptValidatorResult


class PromptValidated(ApiModel):
    status: Literal["success"]
    message: str
    data: ValidationData
