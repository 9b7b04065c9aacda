"""The bundled example definitions: valid, lint-clean, compilable, and covering every construct."""

import doctest
import json
import re

import pytest

import toolkit.examples
from toolkit import examples
from toolkit.compiler import compile_definition
from toolkit.lint import lint
from toolkit.model import Definition
from toolkit.predicates import parse

NAMES = examples.names()


def test_there_are_at_least_ten_examples_one_file_each():
    assert len(NAMES) >= 10
    assert NAMES == sorted(NAMES)
    assert NAMES == sorted(p.stem for p in examples.path(NAMES[0]).parent.glob("*.json"))


@pytest.mark.parametrize("name", NAMES)
def test_example_validates_and_is_named_after_its_file(name):
    body = examples.load(name)
    definition = Definition.model_validate(body)
    assert definition.definition_id == name == examples.path(name).stem
    assert definition.name.strip()
    assert definition.description and definition.description.strip()
    assert "\n" not in definition.description  # one line
    assert all(n.name for n in definition.nodes), "every node has a display name"


@pytest.mark.parametrize("name", NAMES)
def test_example_is_lint_clean(name):
    findings = lint(Definition.model_validate(examples.load(name)))
    errors = [(f.key, f.where, f.message) for f in findings if f.severity == "error"]
    assert errors == []
    # Examples are meant to be imitated, so they carry no warnings either.
    assert [(f.key, f.where) for f in findings] == []


@pytest.mark.parametrize("name", NAMES)
def test_example_compiles(name):
    definition = Definition.model_validate(examples.load(name))
    compiled = compile_definition(definition).to_json()
    assert compiled["forwardEdges"], "every example has forward edges"
    node_ids = {n.node_id for n in definition.nodes}
    assert {e["from"] for e in compiled["forwardEdges"]} <= node_ids
    assert {e["to"] for e in compiled["forwardEdges"]} <= node_ids
    loop_backs = [e for e in definition.edges if e.on == "reject" and e.loop is not None]
    assert len(compiled["loops"]) == len(loop_backs)
    json.dumps(compiled)  # a JSON-ready view


# ---------------------------------------------------------------- coverage of constructs


def _constructs(body: dict) -> set[str]:
    d = Definition.model_validate(body)
    found = {f"node:{n.type}" for n in d.nodes}
    for n in d.nodes:
        if n.sla_ms is not None:
            found.add("node:slaMs")
        if n.type == "agent":
            c = n.config
            found |= {"agent:blocking"} if c.blocking else set()
            found |= {f"agent:{c.resolution_policy.kind}"} if c.resolution_policy else set()
            found |= {"agent:mockOutput"} if c.mock_output is not None else set()
            found |= {"agent:external"} if c.external else set()
        if n.type == "human":
            found.add("human:reviewerIds" if n.config.reviewer_ids is not None else "human:reviewers")
            if any(not r.mandatory for r in n.config.reviewer_list):
                found.add("human:optional-reviewer")
    for g in d.group_list:
        found.add(f"group:{g.on_quorum_met}")
        if g.required_node_ids:
            found.add("group:requiredNodeIds")
        if g.quorum_value < g.expected:
            found.add("group:quorum<expected")
    exhausted_sources = {(e.from_.kind, e.from_.ref) for e in d.edges if e.on == "exhausted"}
    for e in d.edges:
        found.add(f"edge:{e.on}")
        if e.from_.kind == "group":
            found.add("edge:group-source")
        if e.to.kind == "group":
            found.add("edge:group-target")
        if e.loop is not None:
            with_route = (e.from_.kind, e.from_.ref) in exhausted_sources
            found.add("loop:with-exhausted" if with_route else "loop:without-exhausted")
            if e.from_.kind == "group":
                found.add("loop:group-source")
            if e.from_.ref == e.to.ref:
                found.add("loop:self")
        if e.when is not None:
            roots = {
                p.split(".")[0] if not p.startswith("execution.") else "execution.input" for p in parse(e.when).paths
            }
            found |= {f"when:{r}" for r in roots}
    raw_endpoints = [x for e in body["edges"] for x in (e["from"], e["to"])]
    if any(isinstance(x, dict) and x.get("kind") == "node" for x in raw_endpoints):
        found.add("endpoint:object-node")
    for key in ("triggers", "tags", "custom", "scope"):
        if body.get(key):
            found.add(f"definition:{key}")
    return found


REQUIRED = {
    "node:agent",
    "node:human",
    "node:webhook",
    "agent:blocking",
    "agent:minResolved",
    "agent:allResolved",
    "agent:mockOutput",
    "agent:external",
    "human:reviewers",
    "human:reviewerIds",
    "human:optional-reviewer",
    "group:waitAll",
    "group:joinOnQuorum",
    "group:cancelOnQuorum",
    "group:requiredNodeIds",
    "group:quorum<expected",
    "edge:approve",
    "edge:reject",
    "edge:always",
    "edge:exhausted",
    "edge:custom",
    "edge:group-source",
    "edge:group-target",
    "endpoint:object-node",
    "loop:with-exhausted",
    "loop:without-exhausted",
    "loop:group-source",
    "loop:self",
    "when:output",
    "when:step",
    "when:execution.input",
    "node:slaMs",
    "definition:triggers",
    "definition:tags",
    "definition:custom",
    "definition:scope",
}


def test_examples_cover_every_construct():
    covered = set().union(*(_constructs(examples.load(n)) for n in NAMES))
    assert REQUIRED - covered == set()


@pytest.mark.parametrize(
    "name, constructs",
    [
        ("parallel-review", {"group:joinOnQuorum", "loop:group-source", "loop:without-exhausted"}),
        ("reject-loop-exhausted", {"loop:with-exhausted", "edge:exhausted"}),
        ("blocking-agent-quorum", {"agent:blocking", "agent:minResolved"}),
        ("cancel-on-quorum", {"group:cancelOnQuorum", "group:quorum<expected", "edge:group-source"}),
        ("unanimous-signoff", {"group:waitAll", "edge:group-source", "edge:reject"}),
        ("sla-escalation", {"node:slaMs", "edge:always", "when:step"}),
        ("risk-score-routing", {"edge:custom", "when:output", "when:execution.input"}),
        ("webhook-notify", {"node:webhook", "edge:always"}),
        ("required-approver", {"group:requiredNodeIds", "group:quorum<expected"}),
        ("legacy-reviewers", {"human:reviewerIds", "human:optional-reviewer", "endpoint:object-node"}),
    ],
)
def test_each_named_example_shows_its_construct(name, constructs):
    assert constructs <= _constructs(examples.load(name))


def test_parallel_review_keeps_the_benchmark_shape():
    d = Definition.model_validate(examples.load("parallel-review"))
    nodes = {n.node_id: n for n in d.nodes}
    assert list(nodes) == ["draft", "legal-review", "brand-review", "publish"]
    draft = nodes["draft"].config
    assert nodes["draft"].type == "agent" and not draft.blocking
    assert draft.mock_output["decision"] == "approve" and draft.mock_output["text"]
    assert [nodes[m].type for m in ("legal-review", "brand-review", "publish")] == ["human", "human", "agent"]
    (group,) = d.group_list
    assert group.on_quorum_met == "joinOnQuorum"
    assert group.member_node_ids == ["legal-review", "brand-review"]
    assert group.quorum_value == group.expected == 2
    edges = {
        (e.from_.kind, e.from_.ref, e.to.kind, e.to.ref, e.on, e.loop.max_iterations if e.loop else None)
        for e in d.edges
    }
    assert edges == {
        ("node", "draft", "group", group.group_id, "approve", None),
        ("node", "legal-review", "node", "publish", "approve", None),
        ("node", "brand-review", "node", "publish", "approve", None),
        ("group", group.group_id, "node", "draft", "reject", 3),
    }


# ---------------------------------------------------------------- the module's API


def test_load_returns_a_fresh_copy():
    first = examples.load("parallel-review")
    first["nodes"].clear()
    assert examples.load("parallel-review")["nodes"]


def test_describe_maps_every_name_to_its_description():
    described = examples.describe()
    assert list(described) == NAMES
    assert described["parallel-review"] == examples.load("parallel-review")["description"]


def test_path_points_at_the_json_file():
    p = examples.path("sla-escalation")
    assert p.name == "sla-escalation.json" and p.is_file()


@pytest.mark.parametrize("call", [examples.load, examples.path])
def test_unknown_name_is_a_key_error_listing_the_examples(call):
    with pytest.raises(KeyError, match=re.escape("available: " + ", ".join(NAMES))):
        call("no-such-example")


def test_module_docstring_example_runs():
    result = doctest.testmod(toolkit.examples, optionflags=doctest.ELLIPSIS)
    assert result.attempted and not result.failed
