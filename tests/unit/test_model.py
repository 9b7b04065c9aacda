"""Unit tests for toolkit.model: the schema limits of api-v2 §2.4–2.7, §4.5, §8 and
semantics §3, each an INVALID_ARGUMENT naming the field path."""

from __future__ import annotations

import copy
import json

import pytest
from pydantic import ValidationError
from strategies import agent, definition, edge, group, human, webhook

from toolkit.errors import ApiError, ErrorCode
from toolkit.model import (
    AgentConfig,
    Definition,
    DefinitionUpdate,
    EdgeEndpoint,
    HumanConfig,
    Trigger,
    describe_errors,
    validate,
)


def base() -> dict:
    """Valid: nodes[0] agent, nodes[1] human, nodes[2] agent; edges[1] is the reject edge."""
    return definition([agent("a"), human("h"), agent("fix")], [edge("h", "a", "approve"), edge("h", "fix", "reject")])


def at(raw: dict, path: str):
    """The container and final key of a dotted path like 'nodes.2.config' in raw."""
    *parents, last = path.split(".")
    node = raw
    for p in parents:
        node = node[int(p)] if isinstance(node, list) else node[p]
    return node, (int(last) if isinstance(node, list) else last)


def setting(path: str, value):
    def mutate(raw):
        container, key = at(raw, path)
        container[key] = value

    return mutate


def removing(path: str):
    def mutate(raw):
        container, key = at(raw, path)
        del container[key]

    return mutate


def updating(path: str, **values):
    def mutate(raw):
        container, key = at(raw, path)
        container[key].update(values)

    return mutate


def invalid(mutate) -> ApiError:
    raw = base()
    mutate(raw)
    with pytest.raises(ApiError) as info:
        validate(Definition, raw)
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    assert info.value.code.http_status == 400
    return info.value


def valid(mutate) -> Definition:
    raw = base()
    mutate(raw)
    return validate(Definition, raw)


REJECTED = [
    # ---------------------------------------------------------------- definition fields
    ("defid-upper", setting("definitionId", "Flow-1"), "data.definitionId", "should match pattern"),
    ("defid-short", setting("definitionId", "ab"), "data.definitionId", "should match pattern"),
    ("defid-long", setting("definitionId", "a" * 65), "data.definitionId", "should match pattern"),
    ("defid-leading-dash", setting("definitionId", "-abc"), "data.definitionId", "should match pattern"),
    ("defid-underscore", setting("definitionId", "ab_c"), "data.definitionId", "should match pattern"),
    ("defid-missing", removing("definitionId"), "data.definitionId", "field required"),
    ("name-empty", setting("name", ""), "data.name", "at least 1 character"),
    ("name-long", setting("name", "x" * 201), "data.name", "at most 200 characters"),
    ("name-missing", removing("name"), "data.name", "field required"),
    ("description-long", setting("description", "x" * 2001), "data.description", "at most 2000 characters"),
    ("nodes-empty", setting("nodes", []), "data.nodes", "at least 1 item"),
    ("nodes-101", setting("nodes", [agent(f"n{i}") for i in range(101)]), "data.nodes", "at most 100 items"),
    ("nodes-missing", removing("nodes"), "data.nodes", "field required"),
    ("edges-501", setting("edges", [edge("a", "a")] * 501), "data.edges", "at most 500 items"),
    ("edges-missing", removing("edges"), "data.edges", "field required"),
    ("groups-101", setting("groups", [group(f"g{i}", "a") for i in range(101)]), "data.groups", "at most 100 items"),
    (
        "triggers-51",
        setting("triggers", [{"triggerId": f"t{i}"} for i in range(51)]),
        "data.triggers",
        "at most 50 items",
    ),
    ("trigger-id-empty", setting("triggers", [{"triggerId": ""}]), "data.triggers[0].triggerId", "at least 1"),
    ("trigger-id-long", setting("triggers", [{"triggerId": "t" * 129}]), "data.triggers[0].triggerId", "at most 128"),
    ("trigger-id-missing", setting("triggers", [{"eventName": "x"}]), "data.triggers[0].triggerId", "field required"),
    (
        "trigger-event-long",
        setting("triggers", [{"triggerId": "t", "eventName": "e" * 129}]),
        "data.triggers[0].eventName",
        "at most 128",
    ),
    ("tags-21", setting("tags", ["t"] * 21), "data.tags", "at most 20 items"),
    ("tag-65", setting("tags", ["ok", "t" * 65]), "data.tags[1]", "at most 64 characters"),
    ("custom-not-object", setting("custom", [1]), "data.custom", "valid dictionary"),
    # ---------------------------------------------------------------- node ids and fields
    ("node-id-dunder", setting("nodes.0.nodeId", "a__b"), "data.nodes[0].nodeId", "'__'"),
    ("node-id-space", setting("nodes.0.nodeId", "a b"), "data.nodes[0].nodeId", "should match pattern"),
    ("node-id-slash", setting("nodes.0.nodeId", "a/b"), "data.nodes[0].nodeId", "should match pattern"),
    ("node-id-empty", setting("nodes.0.nodeId", ""), "data.nodes[0].nodeId", "should match pattern"),
    ("node-id-65", setting("nodes.0.nodeId", "x" * 65), "data.nodes[0].nodeId", "should match pattern"),
    ("node-id-missing", removing("nodes.0.nodeId"), "data.nodes[0].nodeId", "field required"),
    ("node-type-unknown", setting("nodes.2.type", "robot"), "data.nodes[2].type", "agent, human, webhook"),
    ("node-type-missing", removing("nodes.2.type"), "data.nodes[2].type", "field required"),
    ("node-name-empty", setting("nodes.0.name", ""), "data.nodes[0].name", "at least 1 character"),
    ("node-name-long", setting("nodes.0.name", "n" * 201), "data.nodes[0].name", "at most 200 characters"),
    (
        "node-description-long",
        setting("nodes.0.description", "d" * 2001),
        "data.nodes[0].description",
        "at most 2000 characters",
    ),
    ("node-sla-zero", setting("nodes.0.slaMs", 0), "data.nodes[0].slaMs", "greater than or equal to 1"),
    ("node-not-object", setting("nodes.1", "h"), "data.nodes[1]", "valid object"),
    ("node-null", setting("nodes.1", None), "data.nodes[1]", "valid object"),
    # ---------------------------------------------------------------- edges
    ("edge-on-unknown", setting("edges.0.on", "maybe"), "data.edges[0].on", "'approve', 'reject'"),
    ("edge-from-missing", removing("edges.0.from"), "data.edges[0].from", "field required"),
    ("edge-to-number", setting("edges.0.to", 7), "data.edges[0].to", "node id string"),
    ("edge-endpoint-no-id", setting("edges.0.from", {"kind": "node"}), "data.edges[0].from.nodeId", "exactly nodeId"),
    (
        "edge-endpoint-both-ids",
        setting("edges.0.from", {"kind": "group", "groupId": "g", "nodeId": "h"}),
        "data.edges[0].from.nodeId",
        "exactly groupId",
    ),
    (
        "edge-node-endpoint-with-group",
        setting("edges.0.from", {"kind": "node", "nodeId": "h", "groupId": "g"}),
        "data.edges[0].from.groupId",
        "not allowed",
    ),
    (
        "edge-group-endpoint-no-id",
        setting("edges.0.from", {"kind": "group"}),
        "data.edges[0].from.groupId",
        "field required",
    ),
    (
        "edge-endpoint-kind",
        setting("edges.0.from", {"kind": "edge", "nodeId": "h"}),
        "data.edges[0].from.kind",
        "'node' or 'group'",
    ),
    ("edge-endpoint-dunder", setting("edges.0.to", "a__b"), "data.edges[0].to.nodeId", "'__'"),
    (
        "edge-group-endpoint-dunder",
        setting("edges.0.to", {"kind": "group", "groupId": "g__1"}),
        "data.edges[0].to.groupId",
        "'__'",
    ),
    (
        "edge-when-long",
        updating("edges.0", on="custom", when="x" * 1001),
        "data.edges[0].when",
        "at most 1000 characters",
    ),
    (
        "edge-when-object",
        updating("edges.0", on="custom", when={"op": "eq", "args": [1, 1]}),
        "data.edges[0].when",
        "valid string",
    ),
    (
        "loop-0",
        setting("edges.1.loop", {"maxIterations": 0}),
        "data.edges[1].loop.maxIterations",
        "greater than or equal to 1",
    ),
    (
        "loop-21",
        setting("edges.1.loop", {"maxIterations": 21}),
        "data.edges[1].loop.maxIterations",
        "less than or equal to 20",
    ),
    ("loop-missing", setting("edges.1.loop", {}), "data.edges[1].loop.maxIterations", "field required"),
    (
        "loop-float",
        setting("edges.1.loop", {"maxIterations": 2.0}),
        "data.edges[1].loop.maxIterations",
        "valid integer",
    ),
    # ---------------------------------------------------------------- groups
    ("group-id-dunder", setting("groups", [group("g__1", "a")]), "data.groups[0].groupId", "'__'"),
    ("group-id-pattern", setting("groups", [group("g 1", "a")]), "data.groups[0].groupId", "should match pattern"),
    ("group-member-dunder", setting("groups", [group("g", "a__x")]), "data.groups[0].memberNodeIds[0]", "'__'"),
    (
        "group-required-dunder",
        setting("groups", [group("g", "a", requiredNodeIds=["a__x"])]),
        "data.groups[0].requiredNodeIds[0]",
        "'__'",
    ),
    (
        "group-101-members",
        setting("groups", [group("g", *[f"m{i}" for i in range(101)])]),
        "data.groups[0].memberNodeIds",
        "at most 100 items",
    ),
    ("group-members-missing", setting("groups", [{"groupId": "g"}]), "data.groups[0].memberNodeIds", "field required"),
    (
        "group-policy",
        setting("groups", [group("g", "a", onQuorumMet="anyOf")]),
        "data.groups[0].onQuorumMet",
        "'waitAll', 'joinOnQuorum' or 'cancelOnQuorum'",
    ),
    ("group-quorum-string", setting("groups", [group("g", "a", quorum="1")]), "data.groups[0].quorum", "valid integer"),
    # ---------------------------------------------------------------- agent config
    ("agent-id-missing", removing("nodes.2.config.agentId"), "data.nodes[2].config.agentId", "field required"),
    ("agent-id-empty", setting("nodes.0.config.agentId", ""), "data.nodes[0].config.agentId", "at least 1"),
    (
        "agent-id-129",
        setting("nodes.0.config.agentId", "x" * 129),
        "data.nodes[0].config.agentId",
        "at most 128 characters",
    ),
    (
        "blocking-without-policy",
        setting("nodes.0.config.blocking", True),
        "data.nodes[0].config.resolutionPolicy",
        "required when blocking",
    ),
    (
        "policy-without-blocking",
        setting("nodes.0.config.resolutionPolicy", "allResolved"),
        "data.nodes[0].config.resolutionPolicy",
        "only allowed when blocking",
    ),
    (
        "policy-with-blocking-false",
        updating("nodes.0.config", blocking=False, resolutionPolicy={"kind": "allResolved"}),
        "data.nodes[0].config.resolutionPolicy",
        "only allowed when blocking",
    ),
    (
        "policy-unknown-shorthand",
        updating("nodes.0.config", blocking=True, resolutionPolicy="someResolved"),
        "data.nodes[0].config.resolutionPolicy.kind",
        "'allResolved' or 'minResolved'",
    ),
    (
        "min-resolved-shorthand-needs-count",
        updating("nodes.0.config", blocking=True, resolutionPolicy="minResolved"),
        "data.nodes[0].config.resolutionPolicy.minCount",
        "required for minResolved",
    ),
    (
        "min-resolved-needs-count",
        updating("nodes.0.config", blocking=True, resolutionPolicy={"kind": "minResolved"}),
        "data.nodes[0].config.resolutionPolicy.minCount",
        "required for minResolved",
    ),
    (
        "min-count-over-expected",
        updating(
            "nodes.0.config",
            blocking=True,
            resolutionPolicy={"kind": "minResolved", "minCount": 3},
            expectedResolutions=2,
        ),
        "data.nodes[0].config.resolutionPolicy.minCount",
        "<= expectedResolutions",
    ),
    (
        "min-count-over-default-expected",
        updating("nodes.0.config", blocking=True, resolutionPolicy={"kind": "minResolved", "minCount": 2}),
        "data.nodes[0].config.resolutionPolicy.minCount",
        "<= expectedResolutions",
    ),
    (
        "min-count-zero",
        updating("nodes.0.config", blocking=True, resolutionPolicy={"kind": "minResolved", "minCount": 0}),
        "data.nodes[0].config.resolutionPolicy.minCount",
        "greater than or equal to 1",
    ),
    (
        "policy-unknown-key",
        updating("nodes.0.config", blocking=True, resolutionPolicy={"kind": "allResolved", "threshold": 1}),
        "data.nodes[0].config.resolutionPolicy.threshold",
        "unknown field",
    ),
    (
        "expected-resolutions-zero",
        setting("nodes.0.config.expectedResolutions", 0),
        "data.nodes[0].config.expectedResolutions",
        "greater than or equal to 1",
    ),
    (
        "runtime-over-a-day",
        setting("nodes.0.config.agentMaxRuntimeMs", 86_400_001),
        "data.nodes[0].config.agentMaxRuntimeMs",
        "less than or equal to 86400000",
    ),
    (
        "mock-output-not-object",
        setting("nodes.0.config.mockOutput", "approve"),
        "data.nodes[0].config.mockOutput",
        "valid dictionary",
    ),
    # ---------------------------------------------------------------- human config
    (
        "reviewers-and-ids",
        setting("nodes.1.config.reviewers", [{"userId": "bob", "mandatory": True}]),
        "data.nodes[1].config.reviewerIds",
        "exactly one of reviewers or reviewerIds",
    ),
    (
        "reviewers-neither",
        setting("nodes.1.config", {"commentBody": "hi"}),
        "data.nodes[1].config.reviewers",
        "exactly one of reviewers or reviewerIds",
    ),
    (
        "reviewers-empty",
        setting("nodes.1.config", {"reviewers": []}),
        "data.nodes[1].config.reviewers",
        "at least 1 item",
    ),
    (
        "reviewer-ids-empty",
        setting("nodes.1.config", {"reviewerIds": []}),
        "data.nodes[1].config.reviewerIds",
        "at least 1 item",
    ),
    (
        "reviewers-101",
        setting("nodes.1.config", {"reviewers": [{"userId": f"u{i}"} for i in range(101)]}),
        "data.nodes[1].config.reviewers",
        "at most 100 items",
    ),
    (
        "reviewer-ids-101",
        setting("nodes.1.config", {"reviewerIds": [f"u{i}" for i in range(101)]}),
        "data.nodes[1].config.reviewerIds",
        "at most 100 items",
    ),
    (
        "reviewers-duplicate",
        setting("nodes.1.config", {"reviewers": [{"userId": "u"}, {"userId": "u", "mandatory": False}]}),
        "data.nodes[1].config.reviewers[1].userId",
        "userId 'u' is given more than once (also reviewers[0])",
    ),
    (
        "reviewer-ids-duplicate",
        setting("nodes.1.config", {"reviewerIds": ["u", "v", "u"]}),
        "data.nodes[1].config.reviewerIds[2]",
        "userId 'u' is given more than once (also reviewerIds[0])",
    ),
    (
        "reviewers-none-mandatory",
        setting("nodes.1.config", {"reviewers": [{"userId": "u", "mandatory": False}]}),
        "data.nodes[1].config.reviewers",
        "at least one reviewer must be mandatory",
    ),
    (
        "reviewer-user-missing",
        setting("nodes.1.config", {"reviewers": [{"mandatory": True}]}),
        "data.nodes[1].config.reviewers[0].userId",
        "field required",
    ),
    (
        "reviewer-unknown-key",
        setting("nodes.1.config", {"reviewers": [{"userId": "u", "role": "boss"}]}),
        "data.nodes[1].config.reviewers[0].role",
        "unknown field",
    ),
    (
        "reviewer-emails-51",
        setting("nodes.1.config.reviewerEmails", [f"u{i}@x.io" for i in range(51)]),
        "data.nodes[1].config.reviewerEmails",
        "at most 50 items",
    ),
    (
        "comment-body-8001",
        setting("nodes.1.config.commentBody", "c" * 8001),
        "data.nodes[1].config.commentBody",
        "at most 8000 characters",
    ),
    # ---------------------------------------------------------------- webhook config
    (
        "webhook-http",
        lambda raw: raw["nodes"].append(webhook("w", url="http://hooks.example.com")),
        "data.nodes[3].config.url",
        "https",
    ),
    (
        "webhook-no-scheme",
        lambda raw: raw["nodes"].append(webhook("w", url="hooks.example.com")),
        "data.nodes[3].config.url",
        "https",
    ),
    # ---------------------------------------------------------------- unknown keys, by name
    ("unknown-top-key", setting("owner", "me"), "data.owner", "unknown field"),
    ("unknown-node-key", setting("nodes.0.timeoutMs", 5), "data.nodes[0].timeoutMs", "unknown field"),
    ("unknown-edge-key", setting("edges.0.label", "yes"), "data.edges[0].label", "unknown field"),
    (
        "unknown-endpoint-key",
        setting("edges.0.from", {"kind": "node", "nodeId": "h", "port": 1}),
        "data.edges[0].from.port",
        "unknown field",
    ),
    (
        "unknown-loop-key",
        setting("edges.1.loop", {"maxIterations": 2, "delayMs": 5}),
        "data.edges[1].loop.delayMs",
        "unknown field",
    ),
    (
        "unknown-group-key",
        setting("groups", [group("g", "a", policy="waitAll")]),
        "data.groups[0].policy",
        "unknown field",
    ),
    (
        "unknown-trigger-key",
        setting("triggers", [{"triggerId": "t", "cron": "* * * * *"}]),
        "data.triggers[0].cron",
        "unknown field",
    ),
    ("unknown-scope-key", setting("scope", {"level": "apiKey", "team": "x"}), "data.scope.team", "unknown field"),
    ("snake-case-key", setting("definition_id", "abc"), "data.definition_id", "unknown field"),
    # ---------------------------------------------------------------- strict types
    ("bool-as-string", setting("nodes.0.config.blocking", "true"), "data.nodes[0].config.blocking", "valid boolean"),
    (
        "bool-as-int",
        setting("nodes.0.config.requireNonEmptyOutput", 1),
        "data.nodes[0].config.requireNonEmptyOutput",
        "valid boolean",
    ),
    (
        "mandatory-as-string",
        setting("nodes.1.config", {"reviewers": [{"userId": "u", "mandatory": "yes"}]}),
        "data.nodes[1].config.reviewers[0].mandatory",
        "valid boolean",
    ),
    ("int-as-string", setting("nodes.0.slaMs", "5000"), "data.nodes[0].slaMs", "valid integer"),
    ("int-as-bool", setting("nodes.0.slaMs", True), "data.nodes[0].slaMs", "valid integer"),
    (
        "int-as-float",
        setting("nodes.0.config.expectedResolutions", 2.0),
        "data.nodes[0].config.expectedResolutions",
        "valid integer",
    ),
    ("string-as-number", setting("name", 7), "data.name", "valid string"),
    ("list-as-object", setting("nodes", {"a": agent("a")}), "data.nodes", "valid list"),
    ("tags-as-string", setting("tags", "finance"), "data.tags", "valid list"),
    # ---------------------------------------------------------------- scope
    (
        "scope-org-without-id",
        setting("scope", {"level": "organization"}),
        "data.organizationId",
        "required when scope.level is organization",
    ),
    (
        "scope-doc-without-ids",
        setting("scope", {"level": "document"}),
        "data.organizationId",
        "required when scope.level is document",
    ),
    (
        "scope-doc-without-document",
        setting("scope", {"level": "document", "organizationId": "org"}),
        "data.documentId",
        "required when scope.level is document",
    ),
    (
        "scope-level-unknown",
        setting("scope", {"level": "team"}),
        "data.scope.level",
        "'apiKey', 'organization' or 'document'",
    ),
    (
        "scope-org-disagrees",
        lambda raw: raw.update(scope={"level": "organization", "organizationId": "org-1"}, organizationId="org-2"),
        "data.scope.organizationId",
        "disagrees with the top-level organizationId",
    ),
    (
        "scope-doc-disagrees",
        lambda raw: raw.update(
            scope={"level": "document", "documentId": "d-1"}, organizationId="org", documentId="d-2"
        ),
        "data.scope.documentId",
        "disagrees with the top-level documentId",
    ),
    ("scope-empty-org-id", setting("organizationId", ""), "data.organizationId", "at least 1 character"),
]


@pytest.mark.parametrize("mutate, path, fragment", [c[1:] for c in REJECTED], ids=[c[0] for c in REJECTED])
def test_schema_violation_names_the_field(mutate, path, fragment):
    err = invalid(mutate)
    assert err.message.startswith(f"{path}: "), err.message
    assert fragment in err.message.split("; ")[0], err.message


def test_message_format_matches_the_spec_example():
    err = invalid(removing("nodes.2.config.agentId"))
    assert err.message == "data.nodes[2].config.agentId: field required"
    assert err.to_body() == {"error": {"message": err.message, "status": "INVALID_ARGUMENT"}}


def test_every_error_is_named_the_first_leading():
    raw = base()
    raw["name"] = ""
    del raw["nodes"][2]["config"]["agentId"]
    raw["edges"][1]["loop"] = {"maxIterations": 99}
    with pytest.raises(ApiError) as info:
        validate(Definition, raw)
    parts = info.value.message.split("; ")
    assert [p.split(": ")[0] for p in parts] == [
        "data.name",
        "data.nodes[2].config.agentId",
        "data.edges[1].loop.maxIterations",
    ]


def test_describe_errors_and_prefix():
    with pytest.raises(ValidationError) as info:
        Definition.model_validate({"definitionId": "abc", "name": "n", "nodes": [{"nodeId": "a"}], "edges": []})
    assert describe_errors(info.value) == [("data.nodes[0].type", "field required")]
    assert describe_errors(info.value, prefix="") == [("nodes[0].type", "field required")]
    with pytest.raises(ApiError) as api:
        validate(Trigger, {"triggerId": "t", "x": 1}, prefix="data.triggers[3]")
    assert api.value.message == "data.triggers[3].x: unknown field"


def test_non_object_body_names_data():
    for raw in (None, [], "x", 1):
        with pytest.raises(ApiError) as info:
            validate(Definition, raw)
        assert info.value.message.startswith("data: ")


# ------------------------------------------------------------------------- accepted at the limits

ACCEPTED = [
    ("defid-3", setting("definitionId", "a-1")),
    ("defid-64", setting("definitionId", "a" + "-9" * 31 + "z")),
    ("name-200", setting("name", "n" * 200)),
    ("name-unicode", setting("name", "Prüfung ✓")),
    ("description-2000", setting("description", "d" * 2000)),
    ("description-empty", setting("description", "")),
    ("description-null", setting("description", None)),
    ("nodes-100", lambda raw: raw.update(nodes=[agent(f"n{i}") for i in range(100)], edges=[])),
    ("edges-0", setting("edges", [])),
    ("edges-500", setting("edges", [edge("a", "fix")] * 500)),
    ("groups-100", setting("groups", [group(f"g{i}", "a") for i in range(100)])),
    ("groups-null", setting("groups", None)),
    (
        "triggers-50",
        setting("triggers", [{"triggerId": f"t{i}", "filters": {"any": [1, {"x": None}]}} for i in range(50)]),
    ),
    ("trigger-128", setting("triggers", [{"triggerId": "t" * 128, "eventName": "e" * 128}])),
    ("tags-20", setting("tags", ["t" * 64] * 20)),
    ("node-id-64", lambda raw: raw["nodes"].append(agent("x" * 64))),
    ("node-id-chars", lambda raw: raw["nodes"].append(agent("A.b:c-d_e9"))),
    ("node-id-single-underscores", lambda raw: raw["nodes"].append(agent("_a_b_"))),
    ("node-name-description", updating("nodes.0", name="n" * 200, description="d" * 2000, slaMs=1)),
    ("loop-1", setting("edges.1.loop", {"maxIterations": 1})),
    ("loop-20", setting("edges.1.loop", {"maxIterations": 20})),
    ("loop-null", setting("edges.1.loop", None)),
    (
        "endpoint-forms",
        lambda raw: raw["edges"].extend(
            [
                edge({"kind": "node", "nodeId": "a"}, {"nodeId": "fix", "kind": "node"}),
                edge("a", {"kind": "group", "groupId": "g"}),
            ]
        ),
    ),
    ("runtime-a-day", setting("nodes.0.config.agentMaxRuntimeMs", 86_400_000)),
    ("blocking-shorthand", updating("nodes.0.config", blocking=True, resolutionPolicy="allResolved")),
    (
        "min-resolved",
        updating(
            "nodes.0.config",
            blocking=True,
            expectedResolutions=3,
            resolutionPolicy={"kind": "minResolved", "minCount": 3},
        ),
    ),
    (
        "reviewers-100",
        setting("nodes.1.config", {"reviewers": [{"userId": f"u{i}", "mandatory": i == 0} for i in range(100)]}),
    ),
    ("reviewer-mandatory-default", setting("nodes.1.config", {"reviewers": [{"userId": "u"}]})),
    ("reviewer-emails-50", setting("nodes.1.config.reviewerEmails", [f"u{i}@x.io" for i in range(50)])),
    ("comment-8000", setting("nodes.1.config.commentBody", "c" * 8000)),
    ("webhook-https", lambda raw: raw["nodes"].append(webhook("w", url="https://hooks.example.com/a"))),
    ("webhook-no-url", lambda raw: raw["nodes"].append(webhook("w", anything={"goes": True}))),
    ("node-without-config", lambda raw: raw["nodes"].append({"nodeId": "w", "type": "agent"})),
    ("scope-org-top-level", lambda raw: raw.update(scope={"level": "organization"}, organizationId="org")),
    ("scope-org-inside", setting("scope", {"level": "organization", "organizationId": "org"})),
    ("scope-doc-split", lambda raw: raw.update(scope={"level": "document", "documentId": "d"}, organizationId="o")),
    (
        "scope-agree",
        lambda raw: raw.update(
            scope={"level": "document", "organizationId": "o", "documentId": "d"}, organizationId="o", documentId="d"
        ),
    ),
    ("scope-default", setting("scope", {})),
]


@pytest.mark.parametrize("mutate", [c[1] for c in ACCEPTED], ids=[c[0] for c in ACCEPTED])
def test_values_at_the_limits_are_accepted(mutate):
    assert isinstance(valid(mutate), Definition)


# ------------------------------------------------------------------------- free-form objects


def test_unknown_keys_are_kept_inside_node_configs_and_custom():
    raw = base()
    raw["nodes"][0]["config"].update(temperature=0.2, prompt={"system": "be brief"})
    raw["nodes"][1]["config"]["escalateTo"] = "boss"
    raw["nodes"].append(webhook("w", url="https://x.example", headers={"X-Key": "1"}))
    raw["custom"] = {"anything": {"deep": [1, None, "x"]}}
    d = validate(Definition, raw)
    assert d.nodes[0].config.model_extra == {"temperature": 0.2, "prompt": {"system": "be brief"}}
    assert d.nodes[1].config.model_extra == {"escalateTo": "boss"}
    assert d.nodes[3].config.model_extra == {"headers": {"X-Key": "1"}}
    dumped = d.dump()
    assert dumped["nodes"][0]["config"]["prompt"] == {"system": "be brief"}
    assert dumped["custom"] == raw["custom"]


def test_validation_never_mutates_the_input():
    raw = base()
    raw["edges"].append(edge({"nodeId": "a", "kind": "node"}, "fix", "custom", when='{"op":"eq","args":[1,1]}'))
    raw["nodes"][0]["config"].update(blocking=True, resolutionPolicy="allResolved")
    before = json.dumps(raw)
    snapshot = copy.deepcopy(raw)
    validate(Definition, raw)
    assert json.dumps(raw) == before and raw == snapshot


# ------------------------------------------------------------------------- model helpers


def test_endpoints_normalise():
    d = valid(lambda raw: raw["edges"].append(edge({"nodeId": "a", "kind": "node"}, {"kind": "group", "groupId": "g"})))
    e = d.edges[-1]
    assert (e.from_.kind, e.from_.ref, e.to.kind, e.to.ref) == ("node", "a", "group", "g")
    assert d.edges[0].from_ == EdgeEndpoint(kind="node", node_id="h")
    assert d.edges[0].on == "approve" and d.edges[-1].on == "always"


def test_agent_config_defaults_and_required_successes():
    c = AgentConfig.model_validate({"agentId": "x"})
    assert (c.blocking, c.require_non_empty_output, c.expected_resolutions, c.agent_max_runtime_ms, c.external) == (
        False,
        False,
        1,
        600_000,
        False,
    )
    c = AgentConfig.model_validate(
        {"agentId": "x", "blocking": True, "resolutionPolicy": "allResolved", "expectedResolutions": 3}
    )
    assert c.resolution_policy.kind == "allResolved" and c.required_successes == 3
    c = AgentConfig.model_validate(
        {
            "agentId": "x",
            "blocking": True,
            "expectedResolutions": 3,
            "resolutionPolicy": {"kind": "minResolved", "minCount": 2},
        }
    )
    assert c.required_successes == 2


def test_human_reviewer_list():
    assert [
        (r.user_id, r.mandatory) for r in HumanConfig.model_validate({"reviewerIds": ["a", "b"]}).reviewer_list
    ] == [("a", True), ("b", True)]
    c = HumanConfig.model_validate({"reviewers": [{"userId": "a", "mandatory": False}, {"userId": "b"}]})
    assert [(r.user_id, r.mandatory) for r in c.reviewer_list] == [("a", False), ("b", True)]
    assert c.reviewer_emails == []


def test_group_defaults():
    d = valid(
        setting(
            "groups", [group("g", "a", "fix"), group("q", "h", expectedSteps=1, quorum=1, onQuorumMet="joinOnQuorum")]
        )
    )
    g, q = d.group_list
    assert (g.expected, g.quorum_value, g.on_quorum_met, g.required_node_ids) == (2, 2, "waitAll", [])
    assert (q.expected, q.quorum_value) == (1, 1)
    assert valid(lambda raw: None).group_list == []


def test_effective_scope_folds_top_level_ids():
    d = valid(lambda raw: raw.update(scope={"level": "document", "documentId": "d"}, organizationId="o"))
    s = d.effective_scope
    assert (s.level, s.organization_id, s.document_id) == ("document", "o", "d")
    d = valid(lambda raw: raw.update(organizationId="o"))
    assert (d.effective_scope.level, d.effective_scope.organization_id) == ("apiKey", None)


def test_definition_update_requires_if_version():
    raw = base()
    with pytest.raises(ApiError) as info:
        validate(DefinitionUpdate, raw)
    assert info.value.message == "data.ifVersion: field required"
    raw["ifVersion"] = 0
    with pytest.raises(ApiError):
        validate(DefinitionUpdate, raw)
    raw["ifVersion"] = 2
    assert validate(DefinitionUpdate, raw).if_version == 2


def test_the_documents_not_blank_pattern_refuses_exactly_what_the_server_refuses():
    """An agent's name and a prompt carry a `pattern` in /openapi.json; a client that checks it
    refuses the same strings the server does, character by character."""
    import re

    from toolkit.model.agents import NOT_BLANK, CreateAgent

    pattern = re.compile(CreateAgent.model_json_schema()["properties"]["name"]["pattern"])
    assert pattern.pattern == NOT_BLANK
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF:  # not text: refused before any rule (a lone surrogate)
            continue
        name = f" {chr(code)}\t"
        refused_by_server = True
        try:
            CreateAgent.model_validate({"name": name})
            refused_by_server = False
        except ValidationError as e:
            assert "must not be empty or only whitespace" in str(e)
        assert (pattern.search(name) is None) == refused_by_server, hex(code)
