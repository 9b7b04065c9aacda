"""Prompt validation: turn a one-line QA instruction into a structured check (api-v2 §4.10).

``validate_prompt(prompt, user_context_fields)`` is the deterministic offline generator;
``run_provider`` runs a configured language-model provider through a registered adapter.
"""

from toolkit.prompts.analysis import Analysis, analyse
from toolkit.prompts.generator import validate_prompt
from toolkit.prompts.providers import register_adapter, run_provider

__all__ = ["Analysis", "analyse", "register_adapter", "run_provider", "validate_prompt"]
