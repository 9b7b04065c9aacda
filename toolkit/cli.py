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
        # An I/O error exits 2 (a bare SystemExit(message) would exit 1, like a finding).
        print(f"collab: cannot read {path}: {exc.strerror}", file=sys.stderr)
        raise SystemExit(2) from None
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


def _load_json_arg(path: str | None, what: str):
    if path is None:
        return None
    document, bad = _read_json(path)
    if bad:
        raise SystemExit(f"collab: {what} {path}: {bad.message}")
    return document


def cmd_simulate(args) -> int:
    from toolkit.errors import ApiError
    from toolkit.model import validate
    from toolkit.simulate import Policy, Script, run_script, simulate

    definition, findings = _check(args.file)
    if errors_of(findings):
        _print_findings(errors_of(findings), sys.stderr)
        return 1
    try:
        policy = validate(Policy, _load_json_arg(args.policy, "policy"), prefix="policy") if args.policy else None
        script = validate(Script, _load_json_arg(args.script, "script"), prefix="script") if args.script else None
    except ApiError as exc:
        print(f"collab: {exc.message}", file=sys.stderr)
        return 2
    if script is not None and args.runs == 1 and args.db is None:
        run = run_script(definition, script, policy=policy, seed=args.seed)
        report = {"outcome": run.outcome, "events": [e.to_json() for e in run.external_events],
                  "scriptErrors": [{"action": i, "message": m} for i, m in run.errors],
                  "mismatches": run.mismatches()}
        if args.json:
            print(json.dumps(report, indent=2))
        else:
            o = run.outcome
            print(f"{o['status']}{' (' + o['failureReason'] + ')' if o['failureReason'] else ''} "
                  f"after {o['cycleTimeMs']} ms: {' > '.join(o['path'])}")
            for e in run.external_events:
                print(f"  {e.seq:>4}  {e.timestamp - run.state.started_at:>10} ms  {e.type:<24}{e.step_id or ''}")
            for i, m in run.errors:
                print(f"script action {i}: {m}", file=sys.stderr)
            for m in run.mismatches():
                print(f"expectation failed: {m}", file=sys.stderr)
        return 1 if run.mismatches() else 0
    try:
        result = simulate(definition, runs=args.runs, seed=args.seed, policy=policy, script=script, db=args.db,
                          progress=not args.json and sys.stderr.isatty())
    except ValueError as exc:  # --db holds tables of another shape
        print(f"collab: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result.summary.to_json(), indent=2))
    else:
        print(result.summary)
        if args.db:
            print(f"results in {args.db}: tables executions, steps, events, outcomes")
    return 0


def _open_store(path: str):
    import duckdb

    from toolkit.store import Store

    try:
        return Store(path)
    except duckdb.IOException as exc:
        raise SystemExit(f"collab: cannot open {path}: {exc} (is a server running on it? stop it first)") from None


def cmd_workspace_create(args) -> int:
    from toolkit.services.runtime import SystemClock
    from toolkit.services.workspaces import create_workspace

    with _open_store(args.db) as store:
        creds = create_workspace(store, args.label, now_ms=SystemClock().now())
    if args.json:
        print(json.dumps(creds.to_json()))
    else:
        print(f"workspace {creds.workspace_id} ({args.label}) created in {args.db}")
        print(f"  x-service-api-key:    {creds.api_key}")
        print(f"  x-service-auth-token: {creds.auth_token}")
        print("These are shown once; only their hashes are stored.")
    return 0


def _credential_change(args, change) -> int:
    """Run ``change(store, now_ms)`` on a stopped server's database; print its JSON answer."""
    from toolkit.services.credentials import CredentialError
    from toolkit.services.runtime import SystemClock

    with _open_store(args.db) as store:
        try:
            answer = change(store, SystemClock().now())
        except CredentialError as exc:
            print(f"collab: {exc}", file=sys.stderr)
            return 2
    print(json.dumps(answer))
    return 0


def _named_workspace(store, args) -> str:
    from toolkit.services.credentials import find_workspace

    return find_workspace(store, workspace_id=args.workspace, api_key=args.api_key)


def cmd_workspace_rotate_key(args) -> int:
    from toolkit.services.credentials import rotate_key

    def change(store, now_ms):
        workspace_id = _named_workspace(store, args)
        return {"workspaceId": workspace_id, "apiKey": rotate_key(store, workspace_id)}

    return _credential_change(args, change)


def cmd_workspace_revoke_token(args) -> int:
    from toolkit.services.credentials import issue_token, revoke_token, token_workspace

    def change(store, now_ms):
        workspace_id = token_workspace(store, args.token)
        # The new token first, so that the workspace is never without one.
        fresh = {"authToken": issue_token(store, workspace_id, now_ms=now_ms)} if args.issue_new else {}
        revoke_token(store, args.token, allow_last=args.allow_last)
        return {"workspaceId": workspace_id, "revoked": True, **fresh}

    return _credential_change(args, change)


def cmd_workspace_rotate_secret(args) -> int:
    from toolkit.services.credentials import rotate_secret

    def change(store, now_ms):
        workspace_id = _named_workspace(store, args)
        rotated = rotate_secret(store, workspace_id, now_ms=now_ms, grace_ms=round(args.grace_hours * 3600_000))
        return {"workspaceId": workspace_id, **rotated}

    return _credential_change(args, change)


def _add_credential_commands(wsub, default_db: str) -> None:
    def workspace_named(c) -> None:
        which = c.add_mutually_exclusive_group(required=True)
        which.add_argument("--workspace", metavar="ID", help="the workspace id (ws_…)")
        which.add_argument("--api-key", metavar="KEY", help="the workspace's current API key")

    stopped = " on a stopped server's database (prints JSON)"
    c = wsub.add_parser("rotate-key", help="give a workspace a new API key; the old one stops working" + stopped)
    c.add_argument("--db", default=default_db)
    workspace_named(c)
    c.set_defaults(func=cmd_workspace_rotate_key)
    c = wsub.add_parser("revoke-token", help="revoke an auth token: it stops working at once" + stopped)
    c.add_argument("--db", default=default_db)
    c.add_argument("--token", required=True, help="the auth token to revoke (at_…)")
    c.add_argument("--issue-new", action="store_true", help="also issue the workspace a new auth token")
    c.add_argument("--allow-last", action="store_true",
                   help="revoke even the workspace's last token (leaving it without access)")
    c.set_defaults(func=cmd_workspace_revoke_token)
    c = wsub.add_parser("rotate-secret", help="give a workspace a new user-token signing secret; the old one is "
                                              "still accepted for a grace period" + stopped)
    c.add_argument("--db", default=default_db)
    workspace_named(c)
    c.add_argument("--grace-hours", type=float, default=48.0,
                   help="how long tokens signed with the old secret stay valid (default 48: the token lifetime)")
    c.set_defaults(func=cmd_workspace_rotate_secret)


def cmd_serve(args) -> int:
    import uvicorn

    from server import Settings, create_app
    from server.delivery import DeliverySettings
    from server.protocol import uvicorn_options
    from toolkit.services.runtime import SystemClock
    from toolkit.services.workspaces import create_workspace, has_dev_workspace

    if args.dev:
        with _open_store(args.db) as store:
            if not has_dev_workspace(store):
                creds = create_workspace(store, dev=True, now_ms=SystemClock().now())
                print("Created a DEVELOPMENT workspace (for local use only). Its credentials, shown this once:")
                print(f"  x-service-api-key:    {creds.api_key}")
                print(f"  x-service-auth-token: {creds.auth_token}")
            else:
                print("Development workspace exists (its credentials were printed when it was created; "
                      "`collab workspace create` makes new ones).")
    print(f"Serving the v2 API on http://{args.host}:{args.port} with database {args.db}", flush=True)
    delivery = DeliverySettings(allow_loopback=args.webhook_allow_loopback, ca_bundle=args.webhook_ca_bundle,
                                **({"retry_delays_ms": args.webhook_retry_delays} if args.webhook_retry_delays else {}))
    limits, quotas, connections = _serve_limits(args)
    uvicorn.run(create_app(Settings(db=args.db, delivery=delivery, limits=limits, quotas=quotas)),
                host=args.host, port=args.port, log_level=args.log_level, **uvicorn_options(connections))
    return 0


def _env_default(name: str, default, kind=float):
    """The value of environment variable ``name`` (converted by ``kind``), else ``default``."""
    import os

    text = os.environ.get(name)
    if text is None:
        return default
    try:
        return kind(text)
    except ValueError:
        raise SystemExit(f"collab: {name}={text!r} is not a number") from None


_LIMIT_FLAGS = (  # flag, environment variable, type, default, help
    ("--rate-limit", "COLLAB_RATE_LIMIT", float, 100.0, "requests per second per workspace (0: no limit)"),
    ("--rate-burst", "COLLAB_RATE_BURST", int, 0, "bucket size: requests a workspace may send at once "
                                                  "(0: twice the rate)"),
    ("--max-in-flight", "COLLAB_MAX_IN_FLIGHT", int, 32, "requests of one workspace served at once"),
    ("--max-in-flight-total", "COLLAB_MAX_IN_FLIGHT_TOTAL", int, 128, "requests served at once, all workspaces"),
    ("--max-running", "COLLAB_MAX_RUNNING", int, 16, "requests doing their work at once, the turns shared fairly "
                                                    "among the workspaces waiting"),
    ("--refusal-delay", "COLLAB_REFUSAL_DELAY", float, 1.0, "seconds a 429 of the limits above waits before "
                                                           "it is sent (at most its Retry-After)"),
    ("--max-definitions", "COLLAB_MAX_DEFINITIONS", int, 10_000, "definitions one workspace may store"),
    ("--max-executions", "COLLAB_MAX_EXECUTIONS", int, 1_000_000, "executions one workspace may store"),
    ("--max-connections", "COLLAB_MAX_CONNECTIONS", int, 1024, "connections open at once"),
    ("--max-header-bytes", "COLLAB_MAX_HEADER_BYTES", int, 16 * 1024, "size of a request line and headers"),
    ("--head-timeout", "COLLAB_HEAD_TIMEOUT", float, 10.0, "seconds to send a request's headers"),
    ("--body-timeout", "COLLAB_BODY_TIMEOUT", float, 30.0, "seconds to send a request's body"),
    ("--keep-alive-timeout", "COLLAB_KEEP_ALIVE_TIMEOUT", float, 5.0, "seconds an idle connection stays open"),
)


def _add_limit_flags(p) -> None:
    group = p.add_argument_group("limits (0 turns one off; each also read from its environment variable)")
    for flag, env, kind, default, text in _LIMIT_FLAGS:
        group.add_argument(flag, type=kind, default=_env_default(env, default, kind), metavar="N",
                           help=f"{text} (default {default}; {env})")


def _serve_limits(args):
    from server.limits import Limits
    from server.protocol import ConnectionLimits
    from toolkit.services.quotas import Quotas

    for flag, *_ in _LIMIT_FLAGS:
        if getattr(args, flag[2:].replace("-", "_")) < 0:
            raise SystemExit(f"collab: {flag} must be 0 or more")
    limits = Limits(rate_per_s=args.rate_limit, burst=args.rate_burst, in_flight=args.max_in_flight,
                    in_flight_total=args.max_in_flight_total, body_timeout_s=args.body_timeout,
                    max_head_bytes=args.max_header_bytes, running=args.max_running,
                    refusal_delay_s=args.refusal_delay)
    quotas = Quotas(max_definitions=args.max_definitions, max_executions=args.max_executions)
    connections = ConnectionLimits(max_connections=args.max_connections, max_head_bytes=args.max_header_bytes,
                                   head_timeout_s=args.head_timeout, keep_alive_s=args.keep_alive_timeout)
    return limits, quotas, connections


def _delays(text: str) -> tuple[int, ...]:
    try:
        delays = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError("comma-separated milliseconds, e.g. 100,200,400") from None
    if not delays or any(d < 0 for d in delays):
        raise argparse.ArgumentTypeError("at least one delay, none negative")
    return delays


def _open_log(args):
    """A read-only DuckDB connection with the analytics views: ``--mirror FOLDER`` (a running
    server's Parquet mirror) or ``--db FILE`` (a simulation's or a stopped server's database)."""
    import duckdb

    from toolkit.analytics import open_db, open_mirror

    try:
        if getattr(args, "mirror", None):
            return open_mirror(args.mirror)
        return open_db(args.db)
    except FileNotFoundError as exc:
        raise SystemExit(_usage_error(str(exc))) from None
    except (duckdb.IOException, duckdb.ConnectionException) as exc:
        raise SystemExit(_usage_error(f"cannot open {args.db}: {exc} (a running server holds it: "
                                      "query its mirror with --mirror data/events)")) from None
    except (duckdb.Error, ValueError) as exc:
        raise SystemExit(_usage_error(f"cannot read {args.mirror or args.db}: {exc}")) from None


def _usage_error(message: str) -> int:
    print(f"collab: {message}", file=sys.stderr)
    return 2


def cmd_sql(args) -> int:
    import duckdb

    from toolkit.analytics.query import write_result

    con = _open_log(args)
    try:
        write_result(con, args.query, args.format, args.out, sys.stdout)
    except duckdb.Error as exc:
        print(f"collab: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:
        return _usage_error(str(exc))
    finally:
        con.close()
    return 0


def cmd_events_export(args) -> int:
    from toolkit.analytics import export

    con = _open_log(args)
    try:
        counts = export(con, args.to, args.out, execution_id=args.execution, definition_id=args.definition)
    except LookupError as exc:
        print(f"collab: {exc.args[0]}", file=sys.stderr)
        return 1
    except OSError as exc:
        return _usage_error(f"cannot write {args.out}: {exc.strerror}")
    finally:
        con.close()
    print(f"{counts['events']} {'step entries' if args.to == 'xes' else 'events'} of "
          f"{counts['executions']} execution(s) written to {args.out} ({args.to})")
    return 0


def cmd_replay(args) -> int:
    from toolkit.analytics import ReplayError, diff, format_diff

    against, findings = _check(args.against)
    if errors_of(findings):
        _print_findings(errors_of(findings), sys.stderr)
        return 1
    con = _open_log(args)
    try:
        result = diff(con, args.definition, against, workspace_id=args.workspace)
    except ReplayError as exc:
        return _usage_error(str(exc))
    finally:
        con.close()
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(format_diff(result))
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

    p = sub.add_parser("simulate", help="simulate a definition many times on a virtual clock")
    p.add_argument("file")
    p.add_argument("--runs", type=int, default=1000, help="how many executions (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="seed: the same seed gives the same event logs")
    p.add_argument("--policy", help="policy JSON: reviewer/agent behaviour (see README)")
    p.add_argument("--script", help="script JSON: exact actions at exact virtual times (see README)")
    p.add_argument("--json", action="store_true", help="print the summary (or scripted run) as JSON")
    p.add_argument("--db", help="write executions, steps, events and outcomes to this DuckDB file")
    p.set_defaults(func=cmd_simulate)

    from toolkit.store import DEFAULT_PATH

    p = sub.add_parser("serve", help="serve the v2 HTTP API (Starlette + uvicorn) on an embedded DuckDB file")
    p.add_argument("--db", default=str(DEFAULT_PATH), help=f"database file (default {DEFAULT_PATH})")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8787)
    p.add_argument("--dev", action="store_true",
                   help="create a clearly labelled development workspace on first start and print its credentials")
    p.add_argument("--log-level", default="info")
    hooks = p.add_argument_group("webhook delivery (for tests and local receivers; defaults follow the spec)")
    hooks.add_argument("--webhook-allow-loopback", action="store_true",
                       help="let deliveries reach 127.0.0.1 / ::1 (other private addresses stay refused)")
    hooks.add_argument("--webhook-ca-bundle", metavar="PEM", help="extra CA certificates to trust for receivers")
    hooks.add_argument("--webhook-retry-delays", metavar="MS,MS,...", type=_delays,
                       help="waits after each failed attempt, in ms (default 2000,8000,32000,120000,480000)")
    _add_limit_flags(p)
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("workspace", help="manage workspaces")
    wsub = p.add_subparsers(dest="workspace_command", required=True)
    c = wsub.add_parser("create", help="create a workspace and print its API key and auth token (once)")
    c.add_argument("--db", default=str(DEFAULT_PATH))
    c.add_argument("--label", default="default")
    c.add_argument("--json", action="store_true", help='print exactly {"apiKey": ..., "authToken": ...}')
    c.set_defaults(func=cmd_workspace_create)
    _add_credential_commands(wsub, str(DEFAULT_PATH))

    formats = ("table", "csv", "json", "parquet")
    p = sub.add_parser("sql", help="query an event log with SQL and the analytics views",
                       description="Views: step_durations, execution_outcomes, execution_summary, reviewer_latency, "
                                   "loop_iterations, sla_breaches, step_transitions, directly_follows; tables: "
                                   "executions, steps, events (and, for a server, commands and definition_versions).")
    p.add_argument("query", help='SQL, e.g. "SELECT * FROM execution_summary LIMIT 10"')
    source = p.add_mutually_exclusive_group()
    source.add_argument("--db", default=str(DEFAULT_PATH),
                        help=f"a simulation's or a stopped server's database, opened read-only (default {DEFAULT_PATH})")
    source.add_argument("--mirror", help="a running server's Parquet mirror folder (e.g. data/events)")
    p.add_argument("--format", choices=formats, default="table", help="output format (default table)")
    p.add_argument("--out", help="write to this file instead of standard output (required for parquet)")
    p.set_defaults(func=cmd_sql)

    p = sub.add_parser("events", help="export event logs")
    esub = p.add_subparsers(dest="events_command", required=True)
    c = esub.add_parser("export", help="export executions' events: parquet, csv, XES or OCEL 2.0 JSON (pm4py reads both)")
    source = c.add_mutually_exclusive_group()
    source.add_argument("--db", default=str(DEFAULT_PATH), help=f"database file, opened read-only (default {DEFAULT_PATH})")
    source.add_argument("--mirror", help="a running server's Parquet mirror folder")
    which = c.add_mutually_exclusive_group(required=True)
    which.add_argument("--execution", help="one execution id")
    which.add_argument("--definition", help="every execution of this definition id")
    c.add_argument("--to", required=True, choices=("parquet", "csv", "ocel", "xes"), help="output format")
    c.add_argument("out", help="output file")
    c.set_defaults(func=cmd_events_export)

    p = sub.add_parser("replay", help="replay a definition's recorded executions against another version and diff outcomes")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--db", default=str(DEFAULT_PATH), help=f"server database file, opened read-only (default {DEFAULT_PATH})")
    source.add_argument("--mirror", help="a running server's Parquet mirror folder")
    p.add_argument("--definition", required=True, help="the recorded executions' definition id")
    p.add_argument("--against", required=True, help="the other version: a definition file (JSON create body)")
    p.add_argument("--workspace", help="only this workspace's executions")
    p.add_argument("--json", action="store_true", help="print the diff as JSON")
    p.set_defaults(func=cmd_replay)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
