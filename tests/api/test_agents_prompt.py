"""Validate prompt over HTTP (api-v2 §4.10, semantics §11), the agent answers against the
published OpenAPI document, and the registry seam the workflow linter uses."""

from __future__ import annotations

import json

import httpx
import pytest
from jsonschema import Draft202012Validator

from api.support import uid

VALIDATE = "/v2/agents/prompt/validate"
CREATE, GET, UPDATE, VERSION = "/v2/agents/create", "/v2/agents/get", "/v2/agents/update", "/v2/agents/version/update"
TIERS = {"obvious_match", "subtle_match", "near_miss", "clean"}
RESULT_KEYS = {"analysis_prompt", "requires_tool", "response_descriptions", "demos", "suggested_required_inputs"}


def validation(api, data: dict) -> dict:
    result = api.ok(VALIDATE, data)
    assert result["status"] == "success" and isinstance(result["message"], str) and result["message"]
    assert set(result["data"]) == {"validationResult"}
    return result["data"]["validationResult"]


def test_validate_returns_the_full_result(api):
    r = validation(api, {"prompt": "Flag any use of the word 'utilize' and suggest 'use' instead."})
    assert set(r) == RESULT_KEYS
    text = r["analysis_prompt"]
    for section in ("## Objective", "## Scope", "## Detection logic", "## Output format"):
        assert section in text
    assert "“utilize”" in text and "“use”" in text
    assert r["requires_tool"] == "TOOL_TEXT_EXTRACTOR"
    assert set(r["response_descriptions"]) == {"title", "severity", "targetText", "suggestion", "issueType"}
    assert {c["tier"] for c in r["demos"]["cases"]} == TIERS
    for case in r["demos"]["cases"]:
        assert set(case) == {"id", "title", "tier", "dimension_tested", "html", "expected", "reason"}
        assert case["expected"] == ("detected" if case["tier"] in {"obvious_match", "subtle_match"} else "not_detected")
        assert case["dimension_tested"] in r["demos"]["detection_dimensions"]
        assert ("utiliz" in case["html"].lower()) == (case["expected"] == "detected")
    assert r["suggested_required_inputs"] == []


def test_validate_is_deterministic_and_workspace_independent(api, api_b):
    data = {
        "prompt": "Make sure every image has descriptive alt text.",
        "userContextFields": [{"id": "site", "title": "Site", "type": "url", "example": "https://x.example"}],
    }
    first = api.post(VALIDATE, data).content
    assert api.post(VALIDATE, data).content == first
    assert api_b.post(VALIDATE, data).content == first
    assert json.loads(first)["result"]["data"]["validationResult"]["requires_tool"] == "NONE"


def test_placeholders_and_context_fields_become_required_inputs(api):
    r = validation(
        api,
        {
            "prompt": "Always write {{brand_name}} exactly as given; never mention our competitors.",
            "userContextFields": [
                {"id": "brand_name", "title": "Brand", "type": "string", "example": "SkyLark"},
                {
                    "id": "audience",
                    "title": "Audience",
                    "type": "select",
                    "example": ["admins"],
                    "defaultValue": "admins",
                },
            ],
        },
    )
    inputs = {i["id"]: i for i in r["suggested_required_inputs"]}
    assert set(inputs) == {"brand_name", "competitors", "audience"}
    assert inputs["brand_name"]["title"] == "Brand" and inputs["brand_name"]["placeholder"] == "{{brand_name}}"
    assert inputs["competitors"]["source"] == "instruction" and inputs["competitors"]["type"] == "list"
    assert inputs["audience"]["source"] == "userContextField" and inputs["audience"]["defaultValue"] == "admins"
    assert "`{{brand_name}}`" in r["analysis_prompt"]


@pytest.mark.parametrize(
    "data, field",
    [
        ({}, "data.prompt"),
        ({"prompt": ""}, "data.prompt"),
        ({"prompt": "   \n\t"}, "data.prompt"),
        ({"prompt": None}, "data.prompt"),
        ({"prompt": 42}, "data.prompt"),
        ({"prompt": ["check"]}, "data.prompt"),
        ({"prompt": "x" * 10_001}, "data.prompt"),
        ({"prompt": "ok", "provider": "gemini"}, "data.provider"),
        ({"prompt": "ok", "provider": "OpenAI"}, "data.provider"),
        ({"prompt": "ok", "provider": 1}, "data.provider"),
        ({"prompt": "ok", "model": "gpt"}, "data.model"),
        ({"prompt": "ok", "userContextFields": {}}, "data.userContextFields"),
        ({"prompt": "ok", "userContextFields": [{"title": "T", "type": "string"}]}, "data.userContextFields[0].id"),
        ({"prompt": "ok", "userContextFields": [{"id": "a", "type": "string"}]}, "data.userContextFields[0].title"),
        ({"prompt": "ok", "userContextFields": [{"id": "a", "title": "A"}]}, "data.userContextFields[0].type"),
        (
            {"prompt": "ok", "userContextFields": [{"id": "a", "title": "A", "type": "colour"}]},
            "data.userContextFields[0].type",
        ),
        (
            {"prompt": "ok", "userContextFields": [{"id": "a b", "title": "A", "type": "string"}]},
            "data.userContextFields[0].id",
        ),
        (
            {"prompt": "ok", "userContextFields": [{"id": "a", "title": "", "type": "string"}]},
            "data.userContextFields[0].title",
        ),
        (
            {"prompt": "ok", "userContextFields": [{"id": "a", "title": "A", "type": "string", "extra": 1}]},
            "data.userContextFields[0].extra",
        ),
        (
            {"prompt": "ok", "userContextFields": [{"id": "n", "title": "N", "type": "number", "example": "ten"}]},
            "data.userContextFields[0].example",
        ),
        (
            {"prompt": "ok", "userContextFields": [{"id": "b", "title": "B", "type": "boolean", "defaultValue": "no"}]},
            "data.userContextFields[0].defaultValue",
        ),
        (
            {
                "prompt": "ok",
                "userContextFields": [
                    {"id": "a", "title": "A", "type": "string"},
                    {"id": "a", "title": "B", "type": "string"},
                ],
            },
            "data.userContextFields",
        ),
        (
            {"prompt": "ok", "userContextFields": [{"id": f"f{i}", "title": "F", "type": "string"} for i in range(51)]},
            "data.userContextFields",
        ),
    ],
)
def test_validate_rejects_bad_input(api, data, field):
    assert api.err(VALIDATE, data).startswith(field)


def test_validate_needs_the_envelope(api):
    api.err(VALIDATE, body={"prompt": "Check spelling"})
    api.err(VALIDATE, body=b"{not json")


@pytest.mark.parametrize("provider, env", [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")])
def test_unconfigured_provider_is_a_failed_precondition(api, provider, env):
    message = api.err(VALIDATE, {"prompt": "Check spelling", "provider": provider}, "FAILED_PRECONDITION")
    assert provider in message and "not configured" in message
    # this build registers no adapter, so the answer never depends on the machine's environment
    assert "adapter" in message


def test_unauthenticated(anon):
    anon.err(VALIDATE, {"prompt": "Check spelling"}, "UNAUTHENTICATED")


# ------------------------------------------------------------------ answers match the OpenAPI document


@pytest.fixture(scope="module")
def doc(server):
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        return client.get("/openapi.json").json()


def test_agent_answers_match_the_document(api, doc):
    def check(path, data, ok=True):
        operation = doc["paths"][path]["post"]
        request_schema = operation["requestBody"]["content"]["application/json"]["schema"]
        errors = list(
            Draft202012Validator({**request_schema, "components": doc["components"]}).iter_errors({"data": data})
        )
        assert not errors, f"{path} request: {errors[0].message}"
        resp = api.post(path, data)
        assert (resp.status_code == 200) == ok, resp.text
        schema = operation["responses"][str(resp.status_code)]["content"]["application/json"]["schema"]
        errors = list(Draft202012Validator({**schema, "components": doc["components"]}).iter_errors(resp.json()))
        assert not errors, f"{path} answer: {errors[0].message} in {resp.text[:300]}"
        return resp.json().get("result")

    agent_id = check(
        CREATE, {"name": uid("doc"), "description": "d", "enabled": True, "instructions": "i", "config": {"k": [1]}}
    )["data"]["agentId"]
    check(GET, {"agentId": agent_id})
    check(GET, {"pageSize": 3})
    check(GET, {"agentId": "spell-check", "version": 1})
    check(UPDATE, {"agentId": agent_id, "name": "n", "description": "", "enabled": False})
    check(UPDATE, {"agentId": agent_id})
    check(VERSION, {"agentId": agent_id, "instructions": "v2", "config": {}})
    check(GET, {"agentId": agent_id, "version": 1})
    check(GET, {"agentId": uid("missing")}, ok=False)
    for prompt in (
        "Flag any use of the word 'utilize'.",
        "Every page must include a copyright notice in the footer.",
        "Always write {{brand_name}} exactly as given.",
    ):
        check(
            VALIDATE,
            {
                "prompt": prompt,
                "userContextFields": [
                    {
                        "id": "brand_name",
                        "title": "Brand",
                        "type": "string",
                        "example": "SkyLark",
                        "defaultValue": "SkyLark",
                    },
                    {"id": "limit", "title": "Limit", "type": "number", "example": 3},
                ],
            },
        )
    check(VALIDATE, {"prompt": "x", "provider": "openai"}, ok=False)


# ------------------------------------------------------------------ the seam the workflow linter uses


def test_registered_agent_ids(tmp_path):
    """In process: enabled built-ins plus every custom agent, per workspace."""
    from toolkit.model import validate
    from toolkit.model.agents import CreateAgent, UpdateAgent
    from toolkit.services import agents
    from toolkit.services.context import Services
    from toolkit.services.workspaces import Authenticator, create_workspace
    from toolkit.store import Store

    with Store(tmp_path / "agents.duckdb") as store:
        services, auth = Services(store), Authenticator(store)
        a, b = (
            auth.authenticate(c.api_key, c.auth_token)
            for c in (create_workspace(store, now_ms=1), create_workspace(store, now_ms=2))
        )
        built_in = {"spell-check", "grammar-check", "broken-links", "accessibility-checker", "brand-consistency"}
        assert agents.registered_agent_ids(store.read, a.workspace_id) == built_in
        custom = agents.create_agent(services, a, validate(CreateAgent, {"name": "c", "enabled": False}))
        agents.update_agent(services, a, validate(UpdateAgent, {"agentId": "spell-check", "enabled": False}))
        assert agents.registered_agent_ids(store.read, a.workspace_id) == built_in - {"spell-check"} | {
            custom["data"]["agentId"]
        }
        assert agents.registered_agent_ids(store.read, b.workspace_id) == built_in
        assert agents.registered_agent_ids(lambda sql, params: store.read(sql, params), b.workspace_id) == built_in
