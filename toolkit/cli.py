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


def _at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is below 1")
    return value


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
                          progress=not args.json and sys.stderr.isatty(), replications=args.replications,
                          workers=args.workers)
    except ValueError as exc:  # --db holds tables of another shape, or a count below 1
        print(f"collab: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        print(result.summary)
        if result.intervals is not None:
            print(result.intervals.markdown() if args.markdown else result.intervals.table())
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


def cmd_serve(args) -> int:
    import uvicorn

    from server import Settings, create_app
    from server.delivery import DeliverySettings
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
    uvicorn.run(create_app(Settings(db=args.db, delivery=delivery)), host=args.host, port=args.port,
                log_level=args.log_level)
    return 0


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


def _calibration_source(args):
    """--mirror FOLDER or --db FILE, as a path calibrate() opens read-only."""
    from pathlib import Path

    path = Path(args.mirror or args.db)
    if not path.exists():
        raise SystemExit(_usage_error(f"no {'mirror folder' if args.mirror else 'database file'} {path}"))
    return _open_log(args)


def cmd_calibrate(args) -> int:
    from toolkit.simulate import calibrate

    con = _calibration_source(args)
    try:
        calibration = calibrate(con, args.definition, since=args.since, until=args.until)
    except LookupError as exc:
        return _usage_error(exc.args[0])
    except ValueError as exc:  # a bad --since/--until
        return _usage_error(f"--since/--until: {exc}")
    finally:
        con.close()
    try:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(calibration.policy, f, indent=2)
            f.write("\n")
        if args.report:
            with open(args.report, "w", encoding="utf-8") as f:
                json.dump(calibration.report, f, indent=2)
                f.write("\n")
    except OSError as exc:
        return _usage_error(f"cannot write {exc.filename}: {exc.strerror}")
    print(calibration.table())
    print(f"policy written to {args.out} (run it: collab simulate DEFINITION --policy {args.out})")
    return 0


def cmd_whatif(args) -> int:
    from toolkit.simulate import whatif

    against, findings = _check(args.against)
    if errors_of(findings):
        _print_findings(errors_of(findings), sys.stderr)
        return 1
    recorded = None
    if args.definition_file:
        recorded, findings = _check(args.definition_file)
        if errors_of(findings):
            _print_findings(errors_of(findings), sys.stderr)
            return 1
    con = _calibration_source(args)
    try:
        result = whatif(con, args.definition, against, definition=recorded, runs=args.runs,
                        replications=args.replications, seed=args.seed, since=args.since, until=args.until)
    except LookupError as exc:
        return _usage_error(exc.args[0])
    except ValueError as exc:
        return _usage_error(str(exc))
    finally:
        con.close()
    if args.format == "json":
        print(json.dumps(result.to_json(), indent=2))
    elif args.format == "markdown":
        print(result.markdown())
    else:
        print(result.table())
    return 0


def _add_calibrate(sub) -> None:
    from toolkit.store import DEFAULT_PATH

    p = sub.add_parser("calibrate", help="fit a simulation policy to a recorded event log")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--db", default=str(DEFAULT_PATH),
                        help=f"a stopped server's or a simulation's database, read-only (default {DEFAULT_PATH})")
    source.add_argument("--mirror", help="a running server's Parquet mirror folder")
    p.add_argument("--definition", required=True, help="the recorded executions' definition id")
    p.add_argument("--out", required=True, help="write the fitted policy JSON here")
    p.add_argument("--report", help="also write the report (counts, intervals, fallbacks) as JSON here")
    p.add_argument("--since", help="only executions dispatched at or after (ISO 8601)")
    p.add_argument("--until", help="only executions dispatched before (ISO 8601)")
    p.set_defaults(func=cmd_calibrate)


def _add_whatif(sub) -> None:
    from toolkit.store import DEFAULT_PATH

    p = sub.add_parser("whatif", help="calibrate from a log, then compare the recorded version with another one")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--db", default=str(DEFAULT_PATH),
                        help=f"a stopped server's or a simulation's database, read-only (default {DEFAULT_PATH})")
    source.add_argument("--mirror", help="a running server's Parquet mirror folder")
    p.add_argument("--definition", required=True, help="the recorded executions' definition id")
    p.add_argument("--against", required=True, help="the candidate version: a definition file")
    p.add_argument("--definition-file",
                   help="the recorded version's definition file (needed when the log does not store it)")
    p.add_argument("--runs", type=_at_least_one, default=1000, help="runs per replication (default 1000)")
    p.add_argument("--replications", type=_at_least_one, default=10, help="replications per version (default 10)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--since", help="calibrate on executions dispatched at or after (ISO 8601)")
    p.add_argument("--until", help="calibrate on executions dispatched before (ISO 8601)")
    p.add_argument("--format", choices=("table", "json", "markdown"), default="table")
    p.set_defaults(func=cmd_whatif)


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
    p.add_argument("--replications", type=_at_least_one, default=1,
                   help="R independent sets of --runs runs: prints 95%% confidence intervals across them")
    p.add_argument("--markdown", action="store_true", help="print the intervals as a Markdown table")
    p.add_argument("--workers", type=_at_least_one, default=1,
                   help="simulate in N processes (same results as one; default 1)")
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
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("workspace", help="manage workspaces")
    wsub = p.add_subparsers(dest="workspace_command", required=True)
    c = wsub.add_parser("create", help="create a workspace and print its API key and auth token (once)")
    c.add_argument("--db", default=str(DEFAULT_PATH))
    c.add_argument("--label", default="default")
    c.add_argument("--json", action="store_true", help='print exactly {"apiKey": ..., "authToken": ...}')
    c.set_defaults(func=cmd_workspace_create)

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

    _add_calibrate(sub)
    _add_whatif(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
