"""Language-model providers for prompt validation: the seam, not an SDK.

``provider`` (api-v2 §4.10) names ``openai`` or ``anthropic``. A provider runs only when it is
configured on this server — its client package is installed and its API key is set — *and*
an adapter for it has been registered with :func:`register_adapter`. Otherwise the request
fails with ``FAILED_PRECONDITION`` saying what is missing; the offline generator is used only
when no provider is asked for, never as a silent fallback.

The project ships no adapter (and depends on no provider SDK); a deployment that wants one
registers a function ``adapter(prompt, user_context_fields) -> PromptValidatorResult dict``.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable

from pydantic import ValidationError

from toolkit.errors import ApiError, ErrorCode

Adapter = Callable[[str, list[dict]], dict]

# provider -> (client package, API key environment variable)
PROVIDERS: dict[str, tuple[str, str]] = {
    "openai": ("openai", "OPENAI_API_KEY"),
    "anthropic": ("anthropic", "ANTHROPIC_API_KEY"),
}
_ADAPTERS: dict[str, Adapter] = {}


def register_adapter(provider: str, adapter: Adapter | None) -> None:
    """Install (or, with None, remove) the adapter that runs ``provider``."""
    if provider not in PROVIDERS:
        raise ValueError(f"unknown provider {provider!r}; expected one of {sorted(PROVIDERS)}")
    if adapter is None:
        _ADAPTERS.pop(provider, None)
    else:
        _ADAPTERS[provider] = adapter


def missing_configuration(provider: str) -> list[str]:
    """What keeps ``provider`` from running here (empty when it is configured)."""
    package, env = PROVIDERS[provider]
    missing = []
    if importlib.util.find_spec(package) is None:
        missing.append(f"the Python package `{package}` is not installed")
    if not os.environ.get(env):
        missing.append(f"the environment variable {env} is not set")
    if provider not in _ADAPTERS:
        missing.append(f"no {provider} adapter is registered (toolkit.prompts.register_adapter)")
    return missing


def run_provider(provider: str, prompt: str, user_context_fields: list[dict]) -> dict:
    """Validate ``prompt`` with a configured provider, or FAILED_PRECONDITION naming what is missing."""
    from toolkit.model.agents import PromptValidatorResult

    missing = missing_configuration(provider)
    if missing:
        raise ApiError(
            ErrorCode.FAILED_PRECONDITION,
            f"data.provider: {provider} is not configured on this server: "
            + "; ".join(missing)
            + ". Omit provider to use the built-in offline generator.",
        )
    result = _ADAPTERS[provider](prompt, user_context_fields)
    try:
        return PromptValidatorResult.model_validate(result).model_dump(by_alias=True, exclude_none=True, mode="json")
    except ValidationError:
        raise ApiError(
            ErrorCode.UNAVAILABLE, f"the {provider} adapter returned a result that is not a PromptValidatorResult"
        ) from None
