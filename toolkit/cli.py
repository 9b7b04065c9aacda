"""The ``collab`` command line: a thin wrapper over the library.

Each sub-command lives in one small function that parses its arguments, calls the
toolkit, and prints. Exit codes: 0 success, 1 findings/failures, 2 usage or I/O errors.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from toolkit.lint import Finding, errors_of, lint_document


def _read_json(path: str):
    """(document, None) or (None, a schema finding saying why the file is not JSON)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise SystemExit(f"collab: cannot read {path}: {exc.strerror}") from None
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, Finding("schema", "error", f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})", "file")


def _check(path: str):
    document, bad_json = _read_json(path)
    if bad_json:
        return None, [bad_json]
    return lint_document(document)


def _print_findings(findings: list[Finding], stream) -> None:
    for f in findings:
        print(f"{f.severity:<8}{f.key:<48}{f.where:<28}{f.message}", file=stream)


def cmd_lint(args) -> int:
    _, findings = _check(args.file)
    if args.json:
        print(json.dumps([f.to_json() for f in findings], indent=2))
    elif findings:
        _print_findings(findings, sys.stdout)
    else:
        print(f"{args.file}: no findings")
    return 1 if errors_of(findings) else 0


def cmd_compile(args) -> int:
    from toolkit.compiler import compile_definition

    definition, findings = _check(args.file)
    if errors_of(findings):
        _print_findings(errors_of(findings), sys.stderr)
        return 1
    print(json.dumps(compile_definition(definition).to_json(), indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="collab", description="Design, lint, simulate and serve approval workflows.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("lint", help="report every problem with a definition file")
    p.add_argument("file", help="a definition create body (JSON, with or without the {\"data\": ...} envelope)")
    p.add_argument("--json", action="store_true", help="print the findings as a JSON list")
    p.set_defaults(func=cmd_lint)

    p = sub.add_parser("compile", help="print the compiled {forwardEdges, loops} of a definition file")
    p.add_argument("file")
    p.set_defaults(func=cmd_compile)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
