"""The offline prompt validator: instruction in, PromptValidatorResult (api-v2 §4.10) out.

Deterministic: no network, no model, no randomness, so the same instruction and context
fields always give the same result, byte for byte.

>>> r = validate_prompt("Flag any use of the word 'utilize' and suggest 'use' instead.")
>>> r["requires_tool"], sorted({c["tier"] for c in r["demos"]["cases"]})
('TOOL_TEXT_EXTRACTOR', ['clean', 'near_miss', 'obvious_match', 'subtle_match'])
>>> "“utilize”" in r["analysis_prompt"]
True
"""

from __future__ import annotations

from typing import Any

from toolkit.prompts.analysis import Analysis, Placeholder, analyse
from toolkit.prompts.checks import DETECTED, TIERS, Check, build

TOOL = {"text": "TOOL_TEXT_EXTRACTOR", "markup": "NONE"}
_READS = {
    "text": "the page's visible text; extract it with TOOL_TEXT_EXTRACTOR (markup and attributes are not needed)",
    "markup": "the HTML as given, tags and attributes included; no tool (extracted text would lose what the "
    "check needs)",
}


def _samples(fields: list[dict]) -> dict[str, tuple[str, ...]]:
    out = {}
    for f in fields:
        value = f.get("example", f.get("defaultValue"))
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            out[f["id"]] = tuple(value)
        elif isinstance(value, str) and value.strip():
            out[f["id"]] = (value,)
    return out


def _input_description(p: Placeholder, a: Analysis) -> str:
    if a.kind == "terminology" and a.facet == "canonical" and p.ref in a.term_refs:
        return f"The exact spelling to enforce, referenced as {p.raw} in the instruction."
    if a.kind == "terminology" and p.ref in a.term_refs:
        return (
            f"Referenced as {p.raw} in the instruction; every entry is treated as a forbidden term."
            if p.type == "list"
            else f"Referenced as {p.raw}; the value is treated as a forbidden term."
        )
    return f"Referenced as {p.raw} in the instruction; supply it when the check runs."


def required_inputs(a: Analysis, fields: list[dict]) -> list[dict]:
    """Placeholders and "our …" values of the instruction, merged with the caller's context fields."""
    by_id = {f["id"]: f for f in fields}
    out = []
    for p in a.inputs:
        field = by_id.get(p.id, {})
        item = {
            "id": p.id,
            "title": field.get("title", p.title),
            "type": field.get("type", p.type),
            "description": _input_description(p, a),
            "source": p.source,
            "placeholder": p.raw,
        }
        example = field.get("example", list(p.sample) if p.type == "list" else p.sample[0])
        item["example"] = example
        if "defaultValue" in field:
            item["defaultValue"] = field["defaultValue"]
        out.append(item)
    known = {p.id for p in a.inputs}
    for f in fields:
        if f["id"] in known:
            continue
        item = {
            "id": f["id"],
            "title": f["title"],
            "type": f["type"],
            "description": f"Context supplied by the caller, available to the check as `{{{{{f['id']}}}}}`.",
            "source": "userContextField",
        }
        for key in ("example", "defaultValue"):
            if key in f:
                item[key] = f[key]
        out.append(item)
    return out


def _bullets(items: list[str]) -> str:
    return "\n".join(f"- {i}" for i in items)


def analysis_prompt(a: Analysis, check: Check, inputs: list[dict]) -> str:
    lines = [
        f"# {check.name}",
        "",
        f"Instruction: “{a.instruction}”",
        "",
        "## Objective",
        "",
        check.objective,
        "",
        "## Scope",
        "",
        f"- **Check:** {'; '.join(check.look_at)}.",
        f"- **Ignore:** {'; '.join(check.ignore)}.",
        f"- **Reads:** {_READS[check.reads]}.",
    ]
    if inputs:
        lines.append(
            "- **Runtime inputs:** "
            + "; ".join(f"`{{{{{i['id']}}}}}` ({i['title']}, {i['type']})" for i in inputs)
            + "."
        )
    lines += ["", "## Detection logic", ""]
    lines += [f"{n}. {rule}" for n, rule in enumerate(check.rules, 1)]
    lines += [
        "",
        "Not an issue:",
        "",
        _bullets(check.not_issues),
        "",
        "## Output format",
        "",
        "Return a JSON array with one object per finding, or `[]` when the page complies.",
        "",
        "| Field | Content |",
        "|---|---|",
        f"| `title` | short headline naming the problem, e.g. {check.title_hint} |",
        f"| `severity` | `high`, `medium` or `low`: {check.severity} |",
        f"| `targetText` | {check.target_hint}, copied verbatim so it can be highlighted |",
        f"| `suggestion` | {check.suggestion_hint} |",
        f"| `issueType` | always `{check.issue_type}` |",
    ]
    if check.notes:
        lines += ["", "## Notes", "", _bullets(check.notes)]
    return "\n".join(lines) + "\n"


def response_descriptions(check: Check) -> dict[str, str]:
    return {
        "title": f"A short headline naming the problem, e.g. {check.title_hint}.",
        "severity": f"One of high, medium or low: {check.severity}.",
        "targetText": f"The exact text to highlight on the page: {check.target_hint}. Copy it verbatim.",
        "suggestion": f"What to write instead: {check.suggestion_hint}.",
        "issueType": f"Always “{check.issue_type}” for this check.",
    }


def demos(check: Check) -> dict[str, Any]:
    counts: dict[str, int] = {}
    cases = []
    for tier in TIERS:  # obvious matches first, clean pages last
        for c in (c for c in check.cases if c.tier == tier):
            counts[tier] = counts.get(tier, 0) + 1
            cases.append(
                {
                    "id": f"{tier}_{counts[tier]}",
                    "title": c.title,
                    "tier": tier,
                    "dimension_tested": c.dimension,
                    "html": c.html,
                    "expected": DETECTED[tier],
                    "reason": c.reason,
                }
            )
    return {"detection_dimensions": list(check.dimensions), "cases": cases}


def validate_prompt(prompt: str, user_context_fields: list[dict] | None = None) -> dict[str, Any]:
    """The full PromptValidatorResult for one instruction (api-v2 §4.10, semantics §11)."""
    fields = list(user_context_fields or [])
    a = analyse(prompt, _samples(fields))
    check = build(a)
    inputs = required_inputs(a, fields)
    return {
        "analysis_prompt": analysis_prompt(a, check, inputs),
        "requires_tool": TOOL[check.reads],
        "response_descriptions": response_descriptions(check),
        "demos": demos(check),
        "suggested_required_inputs": inputs,
    }
