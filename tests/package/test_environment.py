"""environment.yml installs the project through pip and agrees with pyproject.toml."""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path

import pytest
import yaml

from package.envcheck import disagreements

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def env() -> dict:
    return yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _pip(env: dict) -> list:
    return next(item["pip"] for item in env["dependencies"] if isinstance(item, dict))


def test_environment_yml_agrees_with_pyproject(env, pyproject):
    assert disagreements(env, pyproject) == []


def test_environment_installs_the_server_and_notebook_extras(env):
    assert _pip(env) == ["-e .[server,notebook]"]


def test_a_python_older_than_requires_python_is_a_disagreement(env, pyproject):
    newer = copy.deepcopy(pyproject)
    newer["project"]["requires-python"] = ">=3.12"
    assert any("'python=3.11' admits versions below requires-python >=3.12" in p for p in disagreements(env, newer))
    assert disagreements(env, pyproject) == []


def test_an_extra_pyproject_does_not_define_is_a_disagreement(env, pyproject):
    renamed = copy.deepcopy(pyproject)
    renamed["project"]["optional-dependencies"]["notebooks"] = renamed["project"]["optional-dependencies"].pop(
        "notebook"
    )
    (problem,) = disagreements(env, renamed)
    assert "extra 'notebook' is not in pyproject.toml" in problem


def test_a_dependency_listed_by_hand_is_a_disagreement(env, pyproject):
    by_hand = copy.deepcopy(env)
    _pip(by_hand).insert(0, "duckdb>=1.1")
    _pip(by_hand).append("rich")
    by_hand["dependencies"].insert(1, "pydantic>=2")
    by_hand["dependencies"].insert(1, "python-graphviz")
    problems = disagreements(by_hand, pyproject)
    assert len(problems) == 4, problems
    assert any("'duckdb>=1.1' repeats a dependency" in p for p in problems)
    assert any("'rich' is not the project" in p for p in problems)
    assert any("'pydantic>=2' repeats a Python dependency" in p for p in problems)
    assert any("'python-graphviz' repeats a Python dependency" in p for p in problems)


def test_the_project_must_be_installed_exactly_once(env, pyproject):
    without = copy.deepcopy(env)
    _pip(without).clear()
    assert any("exactly once" in p for p in disagreements(without, pyproject))
    twice = copy.deepcopy(env)
    _pip(twice).append(".[server]")
    assert any("exactly once" in p for p in disagreements(twice, pyproject))
