"""Workflow definitions as clients send them (api-v2 §2.4–2.7, §4.5, §8; semantics §3).

Validation here is the schema: types, limits, id rules and per-type node configs. Rules
that relate several parts of a definition (edge contracts, graph shape, groups, loops)
belong to the linter, so that one call reports everything wrong at once.
"""

from __future__ import annotations

from functools import cached_property
from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    StringConstraints,
    Tag,
    field_validator,
    model_validator,
)

from toolkit.limits import MAX_ID_CHARS
from toolkit.model.base import (
    NODE_TAG,
    ApiModel,
    Identifier,
    JsonObject,
    OpenModel,
    absent,
    present,
    refuse_repeats,
    schema_rules,
    when,
)

DEFINITION_ID_PATTERN = r"^[a-z0-9][a-z0-9-]{2,63}$"
MAX_AGENT_RUNTIME_MS = 86_400_000
DEFAULT_AGENT_RUNTIME_MS = 600_000
MAX_SLA_MS = 366 * 24 * 3_600_000  # a year and a day: past that a deadline is a data error

NodeType = Literal["agent", "human", "webhook"]
EdgeRole = Literal["approve", "reject", "always", "exhausted", "custom"]
QuorumPolicy = Literal["waitAll", "joinOnQuorum", "cancelOnQuorum"]
ScopeLevel = Literal["apiKey", "organization", "document"]

Text200 = Annotated[str, StringConstraints(min_length=1, max_length=200)]
Text2000 = Annotated[str, StringConstraints(max_length=2000)]


# ---------------------------------------------------------------- node configs


class ResolutionPolicy(ApiModel):
    model_config = ConfigDict(json_schema_extra=schema_rules(when("kind", "minResolved", present("minCount"))))

    kind: Literal["allResolved", "minResolved"]
    min_count: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _min_count(self):
        if self.kind == "minResolved" and self.min_count is None:
            raise ValueError("minCount: required for minResolved")
        return self


def _policy_shorthand(value: Any) -> Any:
    return {"kind": value} if isinstance(value, str) else value


class AgentConfig(OpenModel):
    """``resolutionPolicy.minCount`` is at most ``expectedResolutions``."""

    model_config = ConfigDict(
        json_schema_extra=schema_rules(when("blocking", True, present("resolutionPolicy"), absent("resolutionPolicy")))
    )

    agent_id: Annotated[str, StringConstraints(min_length=1, max_length=128)]
    blocking: bool = False
    require_non_empty_output: bool = False
    resolution_policy: (
        Annotated[
            ResolutionPolicy,
            # The shorthand names allResolved only: minResolved needs its minCount.
            BeforeValidator(_policy_shorthand, json_schema_input_type=Literal["allResolved"] | ResolutionPolicy),
        ]
        | None
    ) = None
    expected_resolutions: int = Field(default=1, ge=1)
    agent_max_runtime_ms: int = Field(default=DEFAULT_AGENT_RUNTIME_MS, ge=1, le=MAX_AGENT_RUNTIME_MS)
    mock_output: JsonObject | None = None
    external: bool = False

    @model_validator(mode="after")
    def _blocking_policy(self):
        if self.blocking and self.resolution_policy is None:
            raise ValueError("resolutionPolicy: required when blocking is true")
        if not self.blocking and self.resolution_policy is not None:
            raise ValueError("resolutionPolicy: only allowed when blocking is true")
        policy = self.resolution_policy
        if policy and policy.min_count is not None and policy.min_count > self.expected_resolutions:
            raise ValueError("resolutionPolicy.minCount: must be <= expectedResolutions")
        return self

    @property
    def required_successes(self) -> int:
        """Successes a blocking step needs: expectedResolutions, or minCount for minResolved."""
        policy = self.resolution_policy
        if policy is not None and policy.kind == "minResolved" and policy.min_count is not None:
            return policy.min_count
        return self.expected_resolutions


UserId = Annotated[str, StringConstraints(min_length=1, max_length=256)]


class Reviewer(ApiModel):
    user_id: UserId
    mandatory: bool = True


class HumanConfig(OpenModel):
    """No reviewer ``userId`` is given twice in ``reviewers``."""

    model_config = ConfigDict(
        json_schema_extra=schema_rules(
            {"oneOf": [present("reviewers"), present("reviewerIds")]},
            {
                "properties": {
                    "reviewerIds": {"uniqueItems": True},
                    "reviewers": {
                        "contains": {"not": {"required": ["mandatory"], "properties": {"mandatory": {"const": False}}}}
                    },
                }
            },
        )
    )

    reviewers: Annotated[list[Reviewer], Field(min_length=1, max_length=100)] | None = None
    reviewer_ids: Annotated[list[UserId], Field(min_length=1, max_length=100)] | None = None
    reviewer_emails: Annotated[list[str], Field(min_length=0, max_length=50)] = []
    comment_body: Annotated[str, StringConstraints(max_length=8000)] | None = None

    @model_validator(mode="after")
    def _reviewers(self):
        if self.reviewers is not None and self.reviewer_ids is not None:
            raise ValueError("reviewerIds: give exactly one of reviewers or reviewerIds")
        if self.reviewers is None and self.reviewer_ids is None:
            raise ValueError("reviewers: give exactly one of reviewers or reviewerIds")
        field, suffix = ("reviewers", ".userId") if self.reviewers is not None else ("reviewerIds", "")
        refuse_repeats(field, [r.user_id for r in self.reviewer_list], "userId", suffix)
        if not any(r.mandatory for r in self.reviewer_list):
            raise ValueError("reviewers: at least one reviewer must be mandatory")
        return self

    @property
    def reviewer_list(self) -> list[Reviewer]:
        """Reviewers in declared order; legacy ``reviewerIds`` are all mandatory."""
        if self.reviewers is not None:
            return self.reviewers
        return [Reviewer(user_id=u, mandatory=True) for u in self.reviewer_ids or []]


class WebhookConfig(OpenModel):
    model_config = ConfigDict(
        json_schema_extra=schema_rules(
            {"properties": {"url": {"anyOf": [{"type": "null"}, {"pattern": "^[Hh][Tt][Tt][Pp][Ss]://"}]}}}
        )
    )

    url: str | None = None

    @field_validator("url")
    @classmethod
    def _https(cls, value):
        if value is not None and not value.lower().startswith("https://"):
            raise ValueError("url must be an https URL")
        return value


# ---------------------------------------------------------------- nodes


class _NodeBase(ApiModel):
    node_id: Identifier
    sla_ms: int | None = Field(default=None, ge=1, le=MAX_SLA_MS)
    name: Text200 | None = None
    description: Text2000 | None = None


class AgentNode(_NodeBase):
    type: Literal["agent"]
    config: AgentConfig | None = None


class HumanNode(_NodeBase):
    type: Literal["human"]
    config: HumanConfig | None = None


class WebhookNode(_NodeBase):
    type: Literal["webhook"]
    config: WebhookConfig | None = None


def _node_tag(value: Any) -> str | None:
    node_type = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return f"{NODE_TAG}{node_type}" if isinstance(node_type, str) else None


Node = Annotated[
    Annotated[AgentNode, Tag(f"{NODE_TAG}agent")]
    | Annotated[HumanNode, Tag(f"{NODE_TAG}human")]
    | Annotated[WebhookNode, Tag(f"{NODE_TAG}webhook")],
    Discriminator(
        _node_tag,
        custom_error_type="node_type",
        custom_error_message="type: must be one of agent, human, webhook",
    ),
]


# ---------------------------------------------------------------- edges


class EdgeEndpoint(ApiModel):
    """A normalised endpoint: ``{kind: node, nodeId}`` or ``{kind: group, groupId}``."""

    model_config = ConfigDict(
        json_schema_extra=schema_rules(
            when("kind", "node", {**present("nodeId"), **absent("groupId")}, {**present("groupId"), **absent("nodeId")})
        )
    )

    kind: Literal["node", "group"]
    node_id: Identifier | None = None
    group_id: Identifier | None = None

    @model_validator(mode="after")
    def _one_id(self):
        if self.kind == "node" and self.node_id is None:
            raise ValueError("nodeId: field required (a node endpoint has exactly nodeId)")
        if self.kind == "node" and self.group_id is not None:
            raise ValueError("groupId: not allowed (a node endpoint has exactly nodeId)")
        if self.kind == "group" and self.group_id is None:
            raise ValueError("groupId: field required (a group endpoint has exactly groupId)")
        if self.kind == "group" and self.node_id is not None:
            raise ValueError("nodeId: not allowed (a group endpoint has exactly groupId)")
        return self

    @cached_property
    def ref(self) -> str:
        """The node or group id (cached: the linter reads it hundreds of times per edge set)."""
        ref = self.node_id if self.kind == "node" else self.group_id
        assert ref is not None, "_one_id validated it"
        return ref


def _endpoint(value: Any) -> Any:
    # A bare string is a node id (api-v2 §2.6).
    return {"kind": "node", "nodeId": value} if isinstance(value, str) else value


Endpoint = Annotated[EdgeEndpoint, BeforeValidator(_endpoint, json_schema_input_type=Identifier | EdgeEndpoint)]


class LoopSpec(ApiModel):
    max_iterations: int = Field(ge=1, le=20)


class Edge(ApiModel):
    from_: Endpoint = Field(alias="from")
    to: Endpoint
    on: EdgeRole = "always"
    when: Annotated[str, StringConstraints(max_length=1000)] | None = None
    loop: LoopSpec | None = None


# ---------------------------------------------------------------- groups, triggers, scope


class Group(ApiModel):
    group_id: Identifier
    member_node_ids: Annotated[list[Identifier], Field(min_length=0, max_length=100)]
    expected_steps: int | None = None
    quorum: int | None = None
    on_quorum_met: QuorumPolicy = "waitAll"
    required_node_ids: Annotated[list[Identifier], Field(min_length=0, max_length=100)] = []
    name: Text200 | None = None
    description: Text2000 | None = None

    @property
    def expected(self) -> int:
        return self.expected_steps if self.expected_steps is not None else len(self.member_node_ids)

    @property
    def quorum_value(self) -> int:
        return self.quorum if self.quorum is not None else self.expected


class Trigger(ApiModel):
    trigger_id: Annotated[str, StringConstraints(min_length=1, max_length=128)]
    event_name: Annotated[str, StringConstraints(max_length=128)] | None = None
    filters: JsonObject | None = None


class Scope(ApiModel):
    level: ScopeLevel = "apiKey"
    organization_id: Annotated[str, StringConstraints(min_length=1, max_length=MAX_ID_CHARS)] | None = None
    document_id: Annotated[str, StringConstraints(min_length=1, max_length=MAX_ID_CHARS)] | None = None


Tag64 = Annotated[str, StringConstraints(max_length=64)]


# ---------------------------------------------------------------- the definition


class Definition(ApiModel):
    """A definition create body (the ``data`` of /v2/workflow/definitions/create).

    Beyond this schema: node and group ids contain no ``__``; ``scope`` ids agree with the
    top-level ``organizationId`` / ``documentId``, and a level of organization or document
    needs those ids; an agent's ``resolutionPolicy.minCount`` is at most its
    ``expectedResolutions``; no reviewer ``userId`` repeats in a node; the definition passes
    `collab lint` (every edge names existing nodes, every node is reachable, a human node has approve and reject
    paths, each `when` parses…), else INVALID_ARGUMENT naming each failed validation key."""

    definition_id: Annotated[str, StringConstraints(pattern=DEFINITION_ID_PATTERN)]
    name: Text200
    description: Text2000 | None = None
    scope: Scope | None = None
    nodes: Annotated[list[Node], Field(min_length=1, max_length=100)]
    edges: Annotated[list[Edge], Field(min_length=0, max_length=500)]
    groups: Annotated[list[Group], Field(min_length=0, max_length=100)] | None = None
    triggers: Annotated[list[Trigger], Field(min_length=0, max_length=50)] | None = None
    tags: Annotated[list[Tag64], Field(min_length=0, max_length=20)] | None = None
    custom: JsonObject | None = None
    organization_id: Annotated[str, StringConstraints(min_length=1, max_length=MAX_ID_CHARS)] | None = None
    document_id: Annotated[str, StringConstraints(min_length=1, max_length=MAX_ID_CHARS)] | None = None

    @model_validator(mode="after")
    def _scope_ids(self):
        scope = self.scope or Scope()
        for field, top in (("organizationId", self.organization_id), ("documentId", self.document_id)):
            inner = getattr(scope, "organization_id" if field == "organizationId" else "document_id")
            if top is not None and inner is not None and top != inner:
                raise ValueError(f"scope.{field}: disagrees with the top-level {field}")
        org = scope.organization_id or self.organization_id
        doc = scope.document_id or self.document_id
        if scope.level in ("organization", "document") and org is None:
            raise ValueError(f"organizationId: required when scope.level is {scope.level}")
        if scope.level == "document" and doc is None:
            raise ValueError("documentId: required when scope.level is document")
        return self

    @property
    def effective_scope(self) -> Scope:
        """The scope with top-level ids folded in; ids that the level does not use are dropped."""
        scope = self.scope or Scope()
        org = scope.organization_id or self.organization_id
        doc = scope.document_id or self.document_id
        return Scope(
            level=scope.level,
            organization_id=org if scope.level != "apiKey" else None,
            document_id=doc if scope.level == "document" else None,
        )

    @property
    def group_list(self) -> list[Group]:
        return self.groups or []


class DefinitionUpdate(Definition):
    """A definitions/update body: a full replace guarded by ``ifVersion`` (semantics §7).

    Beyond this schema, the rules of definitions/create hold: node and group ids contain no
    ``__``, ``scope`` ids agree, ``minCount`` is at most ``expectedResolutions``, no reviewer
    repeats, and the definition passes `collab lint` (else INVALID_ARGUMENT naming each failed
    validation key)."""

    if_version: int = Field(ge=1)
