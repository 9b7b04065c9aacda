"""COLLAB_* environment variables for command-line flags: ``--rate-limit`` is also
``COLLAB_RATE_LIMIT``, derived from the flag's name, so every flag has one without anyone
listing it (`collab serve` binds all of its flags)."""

from __future__ import annotations

import argparse
import os

_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off", "")


def env_name(option: str) -> str:
    """The environment variable of a `collab serve` flag: --rate-limit -> COLLAB_RATE_LIMIT."""
    return "COLLAB_" + option.lstrip("-").upper().replace("-", "_")


def bind_environment(p: argparse.ArgumentParser, environ=None) -> None:
    """Give every long option of ``p`` a COLLAB_* variable: named in its help, and its value
    (when set) the option's default, so a flag on the command line still wins. Values are
    checked like the flag's own (an invalid one is a usage error naming the variable) only
    when this sub-command runs."""
    environ = os.environ if environ is None else environ
    for action in p._actions:
        long = [o for o in action.option_strings if o.startswith("--")]
        if not long or action.dest == "help":
            continue
        name = env_name(long[0])
        if action.help != argparse.SUPPRESS:
            action.help = f"{action.help or ''} [env {name}]".strip()
        if name not in environ:
            continue
        raw = environ[name]
        if isinstance(action, argparse._AppendAction):  # a repeatable flag: the variable lists values
            convert = _env_checked(name, raw, action.type, action.choices)
            action.default = [_checked_now(convert, part.strip()) for part in raw.split(",") if part.strip()]
            continue
        if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
            action.type = _env_switch(name, action.const)
        else:
            action.type = _env_checked(name, raw, action.type, action.choices)
        action.default = raw  # argparse converts a string default with action.type, when the flag is absent


def _env_switch(name: str, const: bool):
    def convert(text: str) -> bool:
        if text.strip().lower() in _TRUE:
            return const
        if text.strip().lower() in _FALSE:
            return not const
        raise argparse.ArgumentTypeError(f"{name}={text!r}: use 1/true/yes/on or 0/false/no/off")

    return convert


def _env_checked(name: str, raw: str, convert, choices):
    def checked(text: str):
        try:
            value = convert(text) if convert is not None else text
        except (argparse.ArgumentTypeError, ValueError, TypeError) as exc:
            message = str(exc) if isinstance(exc, argparse.ArgumentTypeError) else f"invalid value {text!r}"
            raise argparse.ArgumentTypeError(f"{message} (from {name})" if text == raw else message) from None
        if choices is not None and value not in choices:
            raise argparse.ArgumentTypeError(f"{name}={text!r}: choose from {', '.join(map(str, choices))}")
        return value

    return checked


def _checked_now(convert, text: str):
    """A repeatable flag's value from its variable, checked at once (argparse does not convert
    list defaults)."""
    try:
        return convert(text)
    except argparse.ArgumentTypeError as exc:
        raise SystemExit(f"collab: {exc}") from None
