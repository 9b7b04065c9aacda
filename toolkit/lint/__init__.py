"""lint(definition) -> every finding at once (semantics §4).

Rule families live in their own modules: :mod:`.contract` (APPROVAL_* edge contracts),
:mod:`.shape` (ids, cycles, reachability, configs, breach routes), :mod:`.groups`,
:mod:`.loops`, :mod:`.cost` (predicate work per node) and :mod:`.advice` (warnings). :func:`lint_document` adds
the schema (pydantic) findings, so one call reports everything wrong with a file or request body.

>>> from toolkit.model import Definition
>>> d = Definition.model_validate({"definitionId": "abc", "name": "x",
...     "nodes": [{"nodeId": "review", "type": "human", "config": {"reviewerIds": ["ann"]}}],
...     "edges": []})
>>> [f.key for f in lint(d)]
['APPROVAL_HUMAN_NODE_REQUIRES_REJECT_PATH']
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from toolkit.lint import advice, contract, cost, groups, loops, shape
from toolkit.lint.findings import Facts, Finding
from toolkit.model import Definition, describe_errors

__all__ = ["Finding", "errors_of", "lint", "lint_document", "unwrap"]


def lint(definition: Definition, known_agents: set[str] | None = None) -> list[Finding]:
    """Every problem with a schema-valid definition: errors first, then warnings.

    ``known_agents`` (the workspace's agent registry, server side) enables the
    ``agent-not-registered`` warning.
    """
    facts = Facts(definition)
    found = [*shape.check(facts), *contract.check(facts), *groups.check(facts), *cost.check(facts)]
    if facts.topological is not None:
        # Loop bodies are only meaningful on an acyclic forward graph.
        found += loops.check(facts)
    else:
        found += loops.check_exhausted_routes(facts)
    found += advice.check(facts, known_agents)
    return sorted(found, key=lambda f: f.severity != "error")


def unwrap(document: Any) -> Any:
    """Accept a create body with or without the ``{"data": ...}`` envelope."""
    if isinstance(document, dict) and set(document) == {"data"}:
        return document["data"]
    return document


def lint_document(
    document: Any, model: type[Definition] = Definition, known_agents: set[str] | None = None
) -> tuple[Definition | None, list[Finding]]:
    """Validate and lint a raw JSON document; schema violations become ``schema`` findings.

    >>> d, found = lint_document({"data": {"definitionId": "x", "name": "n", "nodes": [], "edges": []}})
    >>> d is None, [(f.key, f.where) for f in found][:1]
    (True, [('schema', 'data.definitionId')])
    """
    try:
        definition = model.model_validate(unwrap(document))
    except ValidationError as exc:
        return None, [Finding("schema", "error", msg, path) for path, msg in describe_errors(exc)]
    return definition, lint(definition, known_agents)


def errors_of(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error"]
