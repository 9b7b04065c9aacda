"""One version, from the package metadata: `collab --version`, toolkit.__version__, pyproject.toml."""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

import pytest

import toolkit
from toolkit.cli import main
from toolkit.version import UNKNOWN, distribution_version

ROOT = Path(__file__).resolve().parents[2]


def test_collab_version_prints_the_installed_distributions_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert capsys.readouterr().out == f"collab {declared}\n"
    assert toolkit.__version__ == importlib.metadata.version("collab-workflows") == declared


def test_a_checkout_without_an_install_reads_its_pyproject(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "not-installed-here"\nversion = "2.3.4"\n')
    assert distribution_version("not-installed-here", pyproject) == "2.3.4"


def test_without_install_or_matching_pyproject_the_version_is_unknown(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    assert distribution_version("not-installed-here", pyproject) == UNKNOWN  # no file
    pyproject.write_text('[project]\nname = "another-project"\nversion = "9.9"\n')
    assert distribution_version("not-installed-here", pyproject) == UNKNOWN
    pyproject.write_text("[project\n")
    assert distribution_version("not-installed-here", pyproject) == UNKNOWN


def test_the_changelog_has_an_entry_for_this_version_and_an_unreleased_section():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    headings = [line for line in (ROOT / "CHANGELOG.md").read_text().splitlines() if line.startswith("## ")]
    assert headings[0] == "## [Unreleased]"
    assert any(h.startswith(f"## [{declared}] - ") for h in headings), headings
