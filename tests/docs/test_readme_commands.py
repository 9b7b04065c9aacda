"""The README names every `collab` command and every Makefile target, and nothing else: a
command added without a word in the README, or one the README still names after it went,
fails here."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from toolkit.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]

# `collab WORD` and `collab WORD WORD` as the README writes them (in code or prose)
_COLLAB = re.compile(r"\bcollab ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?")
_MAKE = re.compile(r"\bmake ([a-z][a-z-]*)\b")
# a rule line of the Makefile: `name: prerequisites` (not `VAR := value`, not `$(STAMP):`)
_RULE = re.compile(r"^([A-Za-z][\w-]*)\s*:(?!=)", re.M)


def commands(parser: argparse.ArgumentParser | None = None) -> dict[str, set[str]]:
    """Each sub-command of `collab` with the names of its own sub-commands (empty if none)."""

    def subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        for action in p._actions:  # argparse keeps sub-commands only here
            if isinstance(action, argparse._SubParsersAction):
                return dict(action.choices)
        return {}

    return {name: set(subparsers(sub)) for name, sub in subparsers(parser or build_parser()).items()}


def make_targets(makefile: str) -> set[str]:
    return set(_RULE.findall(makefile))


def problems(readme: str, known: dict[str, set[str]], targets: set[str]) -> list[str]:
    """What the README misses or names wrongly, one line each."""
    named: dict[str, set[str]] = {}
    for first, second in _COLLAB.findall(readme):
        named.setdefault(first, set())
        if second and known.get(first):
            named[first].add(second)
    found = [f"README names `collab {c}`, which does not exist" for c in sorted(named.keys() - known.keys())]
    for command, subs in sorted(known.items()):
        if command not in named:
            found.append(f"README does not name `collab {command}`")
            continue
        found += [f"README does not name `collab {command} {s}`" for s in sorted(subs - named[command])]
        found += [f"README names `collab {command} {s}`, which does not exist" for s in sorted(named[command] - subs)]
    made = set(_MAKE.findall(readme))
    found += [f"README does not name `make {t}`" for t in sorted(targets - made)]
    found += [f"README names `make {t}`, which is no Makefile target" for t in sorted(made - targets)]
    return found


def test_readme_names_every_command_and_target_and_no_other():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert problems(readme, commands(), make_targets(makefile)) == []


def test_the_check_reads_what_it_should():
    known = commands()
    assert {"lint", "serve", "workspace"} <= known.keys() and "create" in known["workspace"]
    assert {"test", "run", "serve"} <= make_targets((ROOT / "Makefile").read_text(encoding="utf-8"))
    assert problems(
        "`collab lint`, `collab workspace nope`, `make tset`", {"lint": set(), "workspace": {"create"}}, {"test"}
    ) == [
        "README does not name `collab workspace create`",
        "README names `collab workspace nope`, which does not exist",
        "README does not name `make test`",
        "README names `make tset`, which is no Makefile target",
    ]
