"""Every `collab serve` flag has its COLLAB_* environment variable: in `--help`, in the README
table, and in effect (the flag on the command line still wins; a bad value is a usage error
naming the variable)."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from toolkit.cli import build_parser
from toolkit.cli_env import bind_environment, env_name

README = Path(__file__).resolve().parents[2] / "README.md"


def serve_parser() -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["serve"]


def serve_flags() -> list[str]:
    return [
        next(o for o in a.option_strings if o.startswith("--"))
        for a in serve_parser()._actions
        if any(o.startswith("--") for o in a.option_strings) and a.dest != "help"
    ]


def test_env_names_derive_from_flag_names():
    assert env_name("--rate-limit") == "COLLAB_RATE_LIMIT"
    assert env_name("--db") == "COLLAB_DB"


def test_every_serve_flag_names_its_variable_in_help():
    collab = Path(sys.executable).parent / "collab"
    text = subprocess.run([str(collab), "serve", "--help"], capture_output=True, text=True, check=True).stdout
    flat = " ".join(text.split())  # argparse wraps help lines
    flags = serve_flags()
    assert {"--db", "--port", "--metrics", "--log-format", "--shutdown-timeout"} <= set(flags)
    for flag in flags:
        assert flag in flat and f"[env {env_name(flag)}]" in flat, flag


def test_every_serve_flag_is_in_the_readme_table_with_its_variable():
    rows = {}
    for line in README.read_text().splitlines():
        match = re.match(r"^\| `(--[a-z0-9-]+)[^`]*` \| `(COLLAB_[A-Z0-9_]+)` \|", line)
        if match:
            rows[match.group(1)] = match.group(2)
    for flag in serve_flags():
        assert rows.get(flag) == env_name(flag), f"README table: no row for {flag} with {env_name(flag)}"


def parse(monkeypatch, env: dict, *argv: str) -> argparse.Namespace:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return build_parser().parse_args(["serve", *argv])


def test_variables_set_the_defaults_and_flags_still_win(monkeypatch):
    env = {
        "COLLAB_PORT": "9123",
        "COLLAB_METRICS": "yes",
        "COLLAB_LOG_FORMAT": "text",
        "COLLAB_DB": "/tmp/x.duckdb",
        "COLLAB_SHUTDOWN_TIMEOUT": "7.5",
        "COLLAB_WEBHOOK_RETRY_DELAYS": "10,20",
    }
    args = parse(monkeypatch, env)
    assert (args.port, args.metrics, args.log_format, args.db, args.shutdown_timeout, args.webhook_retry_delays) == (
        9123,
        True,
        "text",
        "/tmp/x.duckdb",
        7.5,
        (10, 20),
    )
    args = parse(monkeypatch, env, "--port", "9200", "--log-format", "json")
    assert (args.port, args.log_format) == (9200, "json")
    assert parse(monkeypatch, {"COLLAB_METRICS": "0"}).metrics is False


def test_without_variables_the_defaults_hold(monkeypatch):
    for flag in serve_flags():
        monkeypatch.delenv(env_name(flag), raising=False)
    args = build_parser().parse_args(["serve"])
    assert (args.port, args.metrics, args.log_format, args.shutdown_timeout) == (8787, False, "json", 30.0)


@pytest.mark.parametrize(
    "name, value, says",
    [
        ("COLLAB_PORT", "eighty", "invalid value 'eighty' (from COLLAB_PORT)"),
        ("COLLAB_METRICS", "maybe", "COLLAB_METRICS='maybe': use 1/true/yes/on or 0/false/no/off"),
        ("COLLAB_LOG_FORMAT", "xml", "COLLAB_LOG_FORMAT='xml': choose from json, text"),
        ("COLLAB_SHUTDOWN_TIMEOUT", "-1", "seconds above 0, not '-1' (from COLLAB_SHUTDOWN_TIMEOUT)"),
    ],
)
def test_a_bad_value_is_a_usage_error_naming_the_variable(monkeypatch, capsys, name, value, says):
    with pytest.raises(SystemExit) as exit_:
        parse(monkeypatch, {name: value})
    assert exit_.value.code == 2
    assert says in capsys.readouterr().err


def test_a_bad_serve_variable_does_not_disturb_other_commands(monkeypatch):
    monkeypatch.setenv("COLLAB_PORT", "eighty")
    args = build_parser().parse_args(["lint", "x.json"])
    assert args.command == "lint"


def test_a_flag_added_later_gets_its_variable_for_free(monkeypatch):
    """What another engineer's new serve flag gets without touching the binding."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--rate-limit", type=int, default=100, help="requests a second")
    parser.add_argument("--strict-hosts", action="store_true")
    bind_environment(parser, {"COLLAB_RATE_LIMIT": "7", "COLLAB_STRICT_HOSTS": "on"})
    assert "[env COLLAB_RATE_LIMIT]" in parser.format_help()
    args = parser.parse_args([])
    assert (args.rate_limit, args.strict_hosts) == (7, True)
