"""The ``collab`` command line: a thin wrapper over the library.

Each sub-command lives in one small function that parses its arguments, calls the
toolkit, and prints. Exit codes: 0 success, 1 findings/failures, 2 usage or I/O errors.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit import __version__
from toolkit.cli_env import bind_environment

if TYPE_CHECKING:
    from toolkit.lint import Finding

# Every command imports what it needs when it runs: `collab workspace create` or `collab serve`
# should not pay for the linter (and networkx) at start.


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
        from toolkit.lint import Finding

        return None, Finding(
            "schema", "error", f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})", "file"
        )


def _check(path: str):
    from toolkit.lint import lint_document

    document, bad_json = _read_json(path)
    if bad_json:
        return None, [bad_json]
    return lint_document(document)


def errors_of(findings: list[Finding]) -> list[Finding]:
    """The findings that are errors (the linter's own rule, imported when first needed)."""
    from toolkit.lint import errors_of as errors

    return errors(findings)


def _print_findings(findings: list[Finding], stream) -> None:
    for f in findings:
        print(f"{f.severity:<8}{f.key:<48}{f.where:<28}{f.message}", file=stream)


def _linted(path: str):
    """The definition in ``path``, or None once its errors are printed (the command exits 1)."""
    definition, findings = _check(path)
    errors = errors_of(findings)
    if errors:
        _print_findings(errors, sys.stderr)
        return None
    return definition


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

    definition = _linted(args.file)
    if definition is None:
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

    definition = _linted(args.file)
    if definition is None:
        return 1
    try:
        policy = validate(Policy, _load_json_arg(args.policy, "policy"), prefix="policy") if args.policy else None
        script = validate(Script, _load_json_arg(args.script, "script"), prefix="script") if args.script else None
    except ApiError as exc:
        print(f"collab: {exc.message}", file=sys.stderr)
        return 2
    if script is not None and args.runs == 1 and args.db is None:
        run = run_script(definition, script, policy=policy, seed=args.seed)
        report = {
            "outcome": run.outcome,
            "events": [e.to_json() for e in run.external_events],
            "scriptErrors": [{"action": i, "message": m} for i, m in run.errors],
            "mismatches": run.mismatches(),
        }
        if args.json:
            print(json.dumps(report, indent=2))
        else:
            o = run.outcome
            print(
                f"{o['status']}{' (' + o['failureReason'] + ')' if o['failureReason'] else ''} "
                f"after {o['cycleTimeMs']} ms: {' > '.join(o['path'])}"
            )
            for e in run.external_events:
                print(f"  {e.seq:>4}  {e.timestamp - run.state.started_at:>10} ms  {e.type:<24}{e.step_id or ''}")
            for i, m in run.errors:
                print(f"script action {i}: {m}", file=sys.stderr)
            for m in run.mismatches():
                print(f"expectation failed: {m}", file=sys.stderr)
        return 1 if run.mismatches() else 0
    try:
        result = simulate(
            definition,
            runs=args.runs,
            seed=args.seed,
            policy=policy,
            script=script,
            db=args.db,
            progress=not args.json and sys.stderr.isatty(),
            replications=args.replications,
            workers=args.workers,
        )
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


def _default_db() -> str:
    """``--db``'s default for every command: ``$COLLAB_DB`` (as for ``collab serve``), else the
    server's default file."""
    from toolkit.store import DEFAULT_PATH

    return os.environ.get("COLLAB_DB") or str(DEFAULT_PATH)


DB_HELP = "a DuckDB file or a postgresql:// URL (default $COLLAB_DB, else data/collab.duckdb)"
READ_HELP = (
    "a simulation's or a stopped server's DuckDB file (read-only), or a postgresql:// URL (read while "
    "it serves) (default $COLLAB_DB, else data/collab.duckdb)"
)


def _is_url(db: str) -> bool:
    from toolkit.store import is_url

    return is_url(db)


def _shown(db: str) -> str:
    """``--db`` as messages show it: a URL without its password.

    >>> _shown("postgresql://app:s3cret@db:5432/collab"), _shown("data/collab.duckdb")
    ('postgresql://app:***@db:5432/collab', 'data/collab.duckdb')
    """
    import re

    return re.sub(r"^(\w+://[^:@/]+):[^@/]*@", r"\1:***@", str(db))


def _open_store(path: str, hint: str = "is a server running on it? stop it first"):
    """The store ``--db`` names (a DuckDB file or a PostgreSQL URL); a file another process
    holds, or a database that cannot be reached, is one line and exit status 1."""
    import duckdb

    from toolkit.errors import ApiError
    from toolkit.store import is_url, open_store

    try:
        return open_store(path)
    except duckdb.IOException as exc:
        raise SystemExit(f"collab: cannot open {path}: {exc} ({hint})") from None
    except ApiError as exc:  # PostgreSQL unreachable, or refusing us (the message hides the password)
        raise SystemExit(f"collab: {exc.message}") from None
    except ModuleNotFoundError as exc:
        if is_url(path):
            extra = "pip install 'collab-workflows[postgres]'"
            raise SystemExit(f"collab: a PostgreSQL --db needs the postgres extra: {extra}") from None
        raise exc


def cmd_workspace_create(args) -> int:
    from toolkit.services.runtime import SystemClock
    from toolkit.services.workspaces import create_workspace

    with _open_store(args.db) as store:
        creds = create_workspace(store, args.label, now_ms=SystemClock().now())
    if args.json:
        print(json.dumps(creds.to_json()))
    else:
        print(f"workspace {creds.workspace_id} ({args.label}) created in {_shown(args.db)}")
        print(f"  x-service-api-key:    {creds.api_key}")
        print(f"  x-service-auth-token: {creds.auth_token}")
        print("These are shown once; only their hashes are stored.")
    return 0


def _credential_change(args, change) -> int:
    """Run ``change(store, now_ms)`` on the database (a DuckDB file only while its server is
    stopped; PostgreSQL while servers run); print its JSON answer."""
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


def cmd_workspace_settings(args) -> int:
    from toolkit.services.workspaces import workspace_settings

    def change(store, now_ms):
        on = None if args.advanced_queries is None else args.advanced_queries == "on"
        return workspace_settings(store, _named_workspace(store, args), advanced_queries=on)

    return _credential_change(args, change)


def _add_credential_commands(wsub, default_db: str) -> None:
    def workspace_named(c) -> None:
        which = c.add_mutually_exclusive_group(required=True)
        which.add_argument("--workspace", metavar="ID", help="the workspace id (ws_…)")
        which.add_argument("--api-key", metavar="KEY", help="the workspace's current API key")

    stopped = " (prints JSON; a DuckDB file only while no server runs on it)"
    c = wsub.add_parser("rotate-key", help="give a workspace a new API key; the old one stops working" + stopped)
    c.add_argument("--db", default=default_db, help=DB_HELP)
    workspace_named(c)
    c.set_defaults(func=cmd_workspace_rotate_key)
    c = wsub.add_parser(
        "settings", help="show a workspace's settings, or switch advancedQueries (servers apply it at once)" + stopped
    )
    c.add_argument("--db", default=default_db, help=DB_HELP)
    workspace_named(c)
    c.add_argument(
        "--advanced-queries",
        choices=("on", "off"),
        help="allow (on, the default) or refuse (off) get users, comment counts and agent filters on delete",
    )
    c.set_defaults(func=cmd_workspace_settings)
    c = wsub.add_parser("revoke-token", help="revoke an auth token: it stops working at once" + stopped)
    c.add_argument("--db", default=default_db, help=DB_HELP)
    c.add_argument("--token", required=True, help="the auth token to revoke (at_…)")
    c.add_argument("--issue-new", action="store_true", help="also issue the workspace a new auth token")
    c.add_argument(
        "--allow-last", action="store_true", help="revoke even the workspace's last token (leaving it without access)"
    )
    c.set_defaults(func=cmd_workspace_revoke_token)
    c = wsub.add_parser(
        "rotate-secret",
        help="give a workspace a new user-token signing secret; the old one is "
        "still accepted for a grace period" + stopped,
    )
    c.add_argument("--db", default=default_db, help=DB_HELP)
    workspace_named(c)
    c.add_argument(
        "--grace-hours",
        type=float,
        default=48.0,
        help="how long tokens signed with the old secret stay valid (default 48: the token lifetime)",
    )
    c.set_defaults(func=cmd_workspace_rotate_secret)


def cmd_serve(args) -> int:
    from server import Settings, create_app
    from server.protocol import uvicorn_options
    from server.shutdown import serve
    from toolkit.logs import configure as configure_logs
    from toolkit.services.runtime import SystemClock
    from toolkit.services.webhooks.deliverer import DeliverySettings
    from toolkit.services.workspaces import create_workspace, has_dev_workspace
    from toolkit.webhook_urls import WebhookPolicy

    # Opened here first so that a file another process holds is one line and exit 2, not
    # uvicorn's start-up traceback.
    with _open_store(args.db) as store:
        if args.dev:
            if not has_dev_workspace(store):
                creds = create_workspace(store, dev=True, now_ms=SystemClock().now())
                print("Created a DEVELOPMENT workspace (for local use only). Its credentials, shown this once:")
                print(f"  x-service-api-key:    {creds.api_key}")
                print(f"  x-service-auth-token: {creds.auth_token}")
            else:
                print(
                    "Development workspace exists (its credentials were printed when it was created; "
                    "`collab workspace create` makes new ones)."
                )
    print(f"Serving the v2 API on http://{args.host}:{args.port} with database {_shown(args.db)}", flush=True)
    policy = WebhookPolicy(allow_loopback=args.webhook_allow_loopback, extra_ports=frozenset(args.webhook_allow_port))
    delivery = DeliverySettings(
        policy=policy,
        ca_bundle=args.webhook_ca_bundle,
        **({"retry_delays_ms": args.webhook_retry_delays} if args.webhook_retry_delays else {}),
        timeout_s=args.webhook_timeout,
    )
    configure_logs(args.log_format, args.log_level)
    limits, quotas, connections = _serve_limits(args)
    settings = Settings(
        db=args.db,
        delivery=delivery,
        admin_token=args.admin_token or None,
        mirror_dir=args.mirror,
        retention_ms=args.retention,
        maintenance_every_s=args.maintenance_every,
        limits=limits,
        quotas=quotas,
        **_operations_settings(args),
    )
    return serve(
        create_app(settings),
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        shutdown_timeout_s=args.shutdown_timeout,
        **uvicorn_options(connections),
    )


def _operations_settings(args) -> dict:
    """The Settings of `collab serve`'s health, metrics and shutdown flags."""
    from toolkit.services.readiness import Readiness

    return {
        "metrics": args.metrics,
        "metrics_listen": (args.host, args.metrics_port) if args.metrics_port else None,
        "readiness": Readiness(
            writer_queue=args.ready_writer_queue, outbox_backlog=args.ready_outbox_backlog, timeout_s=args.ready_timeout
        ),
        "shutdown_timeout_s": args.shutdown_timeout,
        "lease_s": args.lease_seconds,
    }


def _add_operations_flags(p: argparse.ArgumentParser) -> None:
    ops = p.add_argument_group("operations: logs, metrics, health and shutdown")
    ops.add_argument(
        "--log-format", choices=("json", "text"), default="json", help="one JSON object a line (default) or plain text"
    )
    ops.add_argument("--metrics", action="store_true", help="serve Prometheus metrics at GET /metrics")
    ops.add_argument(
        "--metrics-port",
        type=_port,
        metavar="PORT",
        help="serve the metrics on this port (same host) instead of the API's; implies --metrics",
    )
    ops.add_argument(
        "--shutdown-timeout",
        type=_positive_seconds,
        default=30.0,
        metavar="SECONDS",
        help="on SIGTERM, finish requests in flight and drain within this many seconds, else exit 1 (default 30)",
    )
    ops.add_argument(
        "--lease-seconds",
        type=_positive_seconds,
        default=30.0,
        metavar="SECONDS",
        help="with several processes on PostgreSQL: how long the agent runs and webhook deliveries of a process "
        "that died wait before another takes them over (default 30; renewed every third of it while alive)",
    )
    ops.add_argument(
        "--ready-writer-queue",
        type=_count,
        default=1000,
        metavar="N",
        help="GET /readyz answers 503 above this many queued write jobs (default 1000)",
    )
    ops.add_argument(
        "--ready-outbox-backlog",
        type=_count,
        default=10_000,
        metavar="N",
        help="GET /readyz answers 503 above this many pending webhook deliveries (default 10000)",
    )
    ops.add_argument(
        "--ready-timeout",
        type=_positive_seconds,
        default=2.0,
        metavar="SECONDS",
        help="GET /readyz answers 503 when the database or the writer takes longer (default 2)",
    )


def _port(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"a TCP port 1-65535, not {text!r}")
    return int(text)


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"a whole number >= 0, not {text!r}")
    return int(text)


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seconds, e.g. 2.5, not {text!r}") from None
    if not 0 < value < 1e6:
        raise argparse.ArgumentTypeError(f"seconds above 0, not {text!r}")
    return value


_LIMIT_FLAGS = (  # flag, type, default, help (each gets its COLLAB_* variable)
    ("--rate-limit", float, 100.0, "requests per second per workspace (0: no limit)"),
    ("--rate-burst", int, 0, "bucket size: requests a workspace may send at once (0: twice the rate)"),
    ("--max-in-flight", int, 32, "requests of one workspace served at once"),
    ("--max-in-flight-total", int, 128, "requests served at once, all workspaces"),
    (
        "--max-running",
        int,
        16,
        "requests doing their work at once, the turns shared fairly among the workspaces waiting",
    ),
    (
        "--refusal-delay",
        float,
        1.0,
        "seconds a 429 of the limits above waits before it is sent (at most its Retry-After)",
    ),
    ("--max-definitions", int, 10_000, "definitions one workspace may store"),
    ("--max-executions", int, 1_000_000, "executions one workspace may store"),
    ("--max-connections", int, 1024, "connections open at once"),
    ("--max-header-bytes", int, 16 * 1024, "size of a request line and headers"),
    ("--head-timeout", float, 10.0, "seconds to send a request's headers"),
    ("--body-timeout", float, 30.0, "seconds to send a request's body"),
    ("--keep-alive-timeout", float, 5.0, "seconds an idle connection stays open"),
)


def _add_limit_flags(p) -> None:
    group = p.add_argument_group("limits (0 turns one off)")
    for flag, kind, default, text in _LIMIT_FLAGS:
        group.add_argument(flag, type=kind, default=default, metavar="N", help=f"{text} (default {default})")


def _serve_limits(args):
    from toolkit.services.fair_shares import Limits
    from toolkit.services.quotas import Quotas
    from toolkit.services.serving import ConnectionLimits

    for flag, *_ in _LIMIT_FLAGS:
        if getattr(args, flag[2:].replace("-", "_")) < 0:
            raise SystemExit(f"collab: {flag} must be 0 or more")
    limits = Limits(
        rate_per_s=args.rate_limit,
        burst=args.rate_burst,
        in_flight=args.max_in_flight,
        in_flight_total=args.max_in_flight_total,
        body_timeout_s=args.body_timeout,
        max_head_bytes=args.max_header_bytes,
        running=args.max_running,
        refusal_delay_s=args.refusal_delay,
    )
    quotas = Quotas(max_definitions=args.max_definitions, max_executions=args.max_executions)
    connections = ConnectionLimits(
        max_connections=args.max_connections,
        max_head_bytes=args.max_header_bytes,
        head_timeout_s=args.head_timeout,
        keep_alive_s=args.keep_alive_timeout,
    )
    return limits, quotas, connections


def _delays(text: str) -> tuple[int, ...]:
    try:
        delays = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError("comma-separated milliseconds, e.g. 100,200,400") from None
    if not delays or any(d < 0 for d in delays):
        raise argparse.ArgumentTypeError("at least one delay, none negative")
    return delays


def _existing_store(path: str):
    """An operator command's database: it must exist (a mistyped path must not create one)."""
    if not _is_url(path) and not Path(path).is_file():
        raise SystemExit(_usage_error(f"no database at {path}"))
    return _open_store(path)


def cmd_deliveries_summary(args) -> int:
    from toolkit.services.context import Services
    from toolkit.services.workflow.deliveries import outbox_summary

    with _existing_store(args.db) as store:
        rows = outbox_summary(Services(store))
    if args.json:
        print(json.dumps(rows))
        return 0
    print(f"{'workspace':<22}{'label':<16}{'pending':>9}{'dead':>9}{'delivered':>11}")
    for r in rows:
        print(f"{r['workspaceId']:<22}{(r['label'] or '')[:15]:<16}{r['pending']:>9}{r['dead']:>9}{r['delivered']:>11}")
    return 0


def cmd_deliveries_change(args) -> int:
    """`collab deliveries dead-letter|purge`: an operator empties one workspace's outbox."""
    from toolkit.services.context import Services
    from toolkit.services.workflow.deliveries import dead_letter_outbox, purge_outbox
    from toolkit.store.workspaces import workspace_by_id

    with _existing_store(args.db) as store:
        if workspace_by_id(store.read, args.workspace) is None:
            where = _shown(args.db)
            return _usage_error(f"no workspace {args.workspace} in {where} (collab deliveries summary lists them)")
        change = dead_letter_outbox if args.deliveries_command == "dead-letter" else purge_outbox
        count = change(Services(store), args.workspace, args.execution)
    what = (
        "pending deliveries dead-lettered"
        if args.deliveries_command == "dead-letter"
        else "undelivered deliveries deleted"
    )
    print(f"{count} {what} of workspace {args.workspace}" + (f", execution {args.execution}" if args.execution else ""))
    return 0


def _open_log(args):
    """A read-only DuckDB connection with the analytics views: ``--mirror FOLDER`` (a running
    server's Parquet mirror), ``--db FILE`` (a simulation's or a stopped server's database) or
    ``--db postgresql://…`` (a snapshot of the database, served or not)."""
    import duckdb

    from toolkit.analytics import open_db, open_mirror, open_postgres
    from toolkit.errors import ApiError

    try:
        if getattr(args, "mirror", None):
            return open_mirror(args.mirror)
        if _is_url(args.db):
            return open_postgres(args.db)
        return open_db(args.db)
    except ApiError as exc:  # PostgreSQL unreachable (the message hides the password)
        raise SystemExit(_usage_error(exc.message)) from None
    except LookupError as exc:
        raise SystemExit(_usage_error(f"cannot read {_shown(args.db)}: {exc.args[0]}")) from None
    except FileNotFoundError as exc:
        raise SystemExit(_usage_error(str(exc))) from None
    except (duckdb.IOException, duckdb.ConnectionException) as exc:
        raise SystemExit(
            _usage_error(
                f"cannot open {args.db}: {exc} (a running server holds it: query its mirror with --mirror data/events)"
            )
        ) from None
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
    print(
        f"{counts['events']} {'step entries' if args.to == 'xes' else 'events'} of "
        f"{counts['executions']} execution(s) written to {args.out} ({args.to})"
    )
    return 0


def cmd_replay(args) -> int:
    from toolkit.analytics import ReplayError, diff, format_diff

    against = _linted(args.against)
    if against is None:
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


def _add_version(parser: argparse.ArgumentParser) -> None:
    """``collab --version`` prints ``collab <version>`` (toolkit.__version__, from the package metadata)."""
    parser.add_argument("--version", action="version", version=f"collab {__version__}")


def _deliveries_parser(sub, default_db) -> None:
    p = sub.add_parser(
        "deliveries",
        help="operator tools for the webhook outbox of a stopped server's database",
        description="Work on a stopped server's database file (a running server holds it). "
        "A workspace's own API lists and redrives its deliveries; these commands "
        "need no credentials, only the file.",
    )
    dsub = p.add_subparsers(dest="deliveries_command", required=True)
    c = dsub.add_parser("summary", help="pending, dead and delivered counts per workspace")
    c.add_argument("--db", default=str(default_db), help=DB_HELP)
    c.add_argument("--json", action="store_true", help="print the rows as a JSON list")
    c.set_defaults(func=cmd_deliveries_summary)
    for name, text in (
        ("dead-letter", "turn a workspace's pending deliveries into dead letters (it can redrive them later)"),
        ("purge", "delete a workspace's undelivered (pending and dead) deliveries"),
    ):
        c = dsub.add_parser(name, help=text)
        c.add_argument("--db", default=str(default_db), help=DB_HELP)
        c.add_argument("--workspace", required=True, help="the workspace id (ws_…)")
        c.add_argument("--execution", help="only this execution's deliveries")
        c.set_defaults(func=cmd_deliveries_change)


def cmd_prune(args) -> int:
    from toolkit.analytics import Mirror
    from toolkit.services.retention import parse_age, prune
    from toolkit.services.runtime import SystemClock

    try:
        older_than = parse_age(args.older_than, "--older-than")
    except ValueError as exc:
        return _usage_error(str(exc))
    with _open_store(args.db, hint="a running server prunes by itself: collab serve --retention AGE") as store:
        # A stopped DuckDB server's mirror is kept in step; PostgreSQL's belongs to its servers.
        folder = None if store.shared else Path(args.db).parent / "events"
        mirror = Mirror(store, folder) if folder and (folder / "_mirror.json").exists() and not args.dry_run else None
        try:
            report = prune(
                store,
                older_than_ms=older_than,
                now_ms=SystemClock().now(),
                archive=args.archive,
                dry_run=args.dry_run,
                mirror=mirror,
            )
        finally:
            if mirror is not None:
                mirror.close()
    if args.json:
        print(json.dumps(report.to_json()))
        return 0
    verb = "would remove" if args.dry_run else "removed"
    rows = ", ".join(f"{n} {table}" for table, n in sorted(report.rows.items()))
    print(
        f"{verb} {report.executions} finished execution(s) that ended before the cut-off"
        + (f" ({rows})" if rows else "")
    )
    if args.dry_run and report.execution_ids:
        more = len(report.execution_ids) - 10
        print("  " + " ".join(report.execution_ids[:10]) + (f" … and {more} more" if more > 0 else ""))
    if report.archived:
        print(f"archived to {args.archive}: " + ", ".join(f"{n} {t}" for t, n in sorted(report.archived.items())))
    return 0


PG_DUMP = "collab: back up PostgreSQL with pg_dump: pg_dump --format=custom --file=FILE URL (see README)"
PG_RESTORE = "collab: restore PostgreSQL with pg_restore: pg_restore --dbname=URL FILE (see README)"


def cmd_backup(args) -> int:
    from toolkit.store.backup import BackupError, backup_file, fetch_backup

    if not args.server and _is_url(args.db):
        print(PG_DUMP, file=sys.stderr)
        return 2

    try:
        if args.server:
            size = fetch_backup(args.server, args.admin_token, args.to)
        else:
            size = backup_file(args.db, args.to)
    except BackupError as exc:
        return _usage_error(str(exc))
    print(f"backup of {args.server or args.db} written to {args.to} ({size} bytes)")
    return 0


def cmd_restore(args) -> int:
    from toolkit.store.backup import BackupError, restore

    if _is_url(args.db):
        print(PG_RESTORE, file=sys.stderr)
        return 2
    try:
        counts = restore(args.source, args.db)
    except BackupError as exc:
        return _usage_error(str(exc))
    print(f"restored {args.source} to {args.db}: " + ", ".join(f"{n} {t}" for t, n in counts.items()))
    return 0


def _age(text: str) -> int:
    from toolkit.services.retention import parse_age

    try:
        return parse_age(text, "age")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_serve_data_flags(p) -> None:
    """collab serve: retention, upkeep interval and the operator token (issue 16)."""
    data = p.add_argument_group("retention and backups")
    data.add_argument(
        "--retention",
        metavar="AGE",
        type=_age,
        help="prune finished executions older than AGE (e.g. 90d) every --maintenance-every "
        "seconds; default keep everything",
    )
    data.add_argument(
        "--maintenance-every",
        metavar="SECONDS",
        type=_positive_seconds,
        default=3600.0,
        help="how often retention and the mirror's compaction run (default 3600)",
    )
    data.add_argument("--admin-token", metavar="TOKEN", help="operator token for POST /admin/backup (off without one)")
    data.add_argument(
        "--mirror",
        metavar="DIR",
        help="write the Parquet mirror analysts query here (DuckDB: default events/ next to the file; "
        "PostgreSQL: no mirror unless given, and one process at a time writes it)",
    )


def _add_data_commands(sub, default_db: str) -> None:
    """prune, backup and restore (issue 16)."""
    p = sub.add_parser(
        "prune",
        help="remove finished executions older than a cut-off (a stopped server's file, or PostgreSQL while it serves)",
        description="Removes completed, failed and cancelled executions whose end is older than "
        "--older-than, with their events, commands and deliveries; running ones stay. "
        "On a DuckDB file, the server's mirror next to it (events/) is kept in step.",
    )
    p.add_argument("--db", default=default_db, help=DB_HELP)
    p.add_argument("--older-than", required=True, metavar="AGE", help="e.g. 90d, 12h, 30m, 45s")
    p.add_argument(
        "--archive", metavar="DIR", help="first write them as Parquet to DIR, which `collab sql --mirror DIR` queries"
    )
    p.add_argument("--dry-run", action="store_true", help="only count what would be removed")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_prune)

    p = sub.add_parser(
        "backup",
        help="a consistent copy of a database, also while its server runs",
        description="Without --server, copies a database no server holds. With --server, the "
        "running server makes the copy (POST /admin/backup, authenticated with the "
        "operator token it was started with).",
    )
    p.add_argument("--db", default=default_db, help=DB_HELP)
    p.add_argument("--to", required=True, metavar="FILE", help="the backup file to write (must not exist)")
    p.add_argument("--server", metavar="URL", help="the running server's base URL, e.g. http://127.0.0.1:8787")
    p.add_argument(
        "--admin-token",
        default=os.environ.get("COLLAB_ADMIN_TOKEN"),
        help="the server's operator token (default: $COLLAB_ADMIN_TOKEN)",
    )
    p.set_defaults(func=cmd_backup)

    p = sub.add_parser("restore", help="restore a backup to a new database file")
    p.add_argument("--from", dest="source", required=True, metavar="FILE", help="a file `collab backup` wrote")
    p.add_argument("--db", required=True, metavar="NEW", help="the database file to create (must not exist)")
    p.set_defaults(func=cmd_restore)


def _calibration_source(args):
    """--mirror FOLDER or --db FILE, as a path calibrate() opens read-only."""
    from pathlib import Path

    path = Path(args.mirror or args.db)
    if not args.mirror and _is_url(args.db):
        return _open_log(args)
    if not path.exists():
        raise SystemExit(_usage_error(f"no {'mirror folder' if args.mirror else 'database file'} {path}"))
    return _open_log(args)


def cmd_calibrate(args) -> int:
    from toolkit.simulate import calibrate

    recorded = None
    if args.definition_file:
        recorded = _linted(args.definition_file)
        if recorded is None:
            return 1
    con = _calibration_source(args)
    try:
        calibration = calibrate(con, args.definition, since=args.since, until=args.until, definition=recorded)
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

    against = _linted(args.against)
    if against is None:
        return 1
    recorded = None
    if args.definition_file:
        recorded = _linted(args.definition_file)
        if recorded is None:
            return 1
    con = _calibration_source(args)
    try:
        result = whatif(
            con,
            args.definition,
            against,
            definition=recorded,
            runs=args.runs,
            replications=args.replications,
            seed=args.seed,
            since=args.since,
            until=args.until,
        )
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


def _add_log_source(p) -> None:
    """The recorded log calibrate and whatif read: a database file or a mirror, and a definition."""

    source = p.add_mutually_exclusive_group()
    source.add_argument("--db", default=_default_db(), help=READ_HELP)
    source.add_argument("--mirror", help="a running server's Parquet mirror folder")
    p.add_argument("--definition", required=True, help="the recorded executions' definition id")


def _add_calibrate(sub) -> None:

    p = sub.add_parser("calibrate", help="fit a simulation policy to a recorded event log")
    _add_log_source(p)
    p.add_argument("--out", required=True, help="write the fitted policy JSON here")
    p.add_argument("--report", help="also write the report (counts, intervals, fallbacks) as JSON here")
    p.add_argument(
        "--definition-file",
        help="the recorded definition file: how many resolutions its blocking agent steps expect "
        "(else read from a server's log, or the most any step recorded)",
    )
    p.add_argument("--since", help="only executions dispatched at or after (ISO 8601)")
    p.add_argument("--until", help="only executions dispatched before (ISO 8601)")
    p.set_defaults(func=cmd_calibrate)


def _add_whatif(sub) -> None:

    p = sub.add_parser("whatif", help="calibrate from a log, then compare the recorded version with another one")
    _add_log_source(p)
    p.add_argument("--against", required=True, help="the candidate version: a definition file")
    p.add_argument(
        "--definition-file", help="the recorded version's definition file (needed when the log does not store it)"
    )
    p.add_argument("--runs", type=_at_least_one, default=1000, help="runs per replication (default 1000)")
    p.add_argument("--replications", type=_at_least_one, default=10, help="replications per version (default 10)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--since", help="calibrate on executions dispatched at or after (ISO 8601)")
    p.add_argument("--until", help="calibrate on executions dispatched before (ISO 8601)")
    p.add_argument("--format", choices=("table", "json", "markdown"), default="table")
    p.set_defaults(func=cmd_whatif)


def build_parser() -> argparse.ArgumentParser:
    from toolkit.webhooks import TIMEOUT_S

    parser = argparse.ArgumentParser(prog="collab", description="Design, lint, simulate and serve approval workflows.")
    _add_version(parser)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("lint", help="report every problem with a definition file")
    p.add_argument("file", help='a definition create body (JSON, with or without the {"data": ...} envelope)')
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
    p.add_argument(
        "--replications",
        type=_at_least_one,
        default=1,
        help="R independent sets of --runs runs: prints 95%% confidence intervals across them",
    )
    p.add_argument("--markdown", action="store_true", help="print the intervals as a Markdown table")
    p.add_argument(
        "--workers", type=_at_least_one, default=1, help="simulate in N processes (same results as one; default 1)"
    )
    p.set_defaults(func=cmd_simulate)

    from toolkit.store import DEFAULT_PATH

    p = sub.add_parser(
        "serve", help="serve the v2 HTTP API (Starlette + uvicorn) on a DuckDB file or a PostgreSQL database"
    )
    p.add_argument(
        "--db",
        default=str(DEFAULT_PATH),
        help=f"database file (DuckDB, default {DEFAULT_PATH}) or postgresql:// URL (several processes may serve it)",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8787, help="port to listen on (default 8787)")
    p.add_argument(
        "--dev",
        action="store_true",
        help="create a clearly labelled development workspace on first start and print its credentials",
    )
    p.add_argument("--log-level", default="info", help="debug, info, warning or error (default info)")
    hooks = p.add_argument_group("webhook delivery (for tests and local receivers; defaults follow the spec)")
    hooks.add_argument(
        "--webhook-allow-loopback",
        action="store_true",
        help="let deliveries reach 127.0.0.1 / ::1 (other private addresses stay refused)",
    )
    hooks.add_argument("--webhook-ca-bundle", metavar="PEM", help="extra CA certificates to trust for receivers")
    hooks.add_argument(
        "--webhook-retry-delays",
        metavar="MS,MS,...",
        type=_delays,
        help="waits after each failed attempt, in ms (default 2000,8000,32000,120000,480000)",
    )
    hooks.add_argument(
        "--webhook-timeout",
        type=_positive_seconds,
        default=TIMEOUT_S,
        metavar="SECONDS",
        help=f"an attempt that has no answer within this many seconds fails (default {TIMEOUT_S:g})",
    )
    hooks.add_argument(
        "--webhook-allow-port",
        metavar="PORT",
        type=_port,
        action="append",
        default=[],
        help="let webhook URLs use this port besides 443 (repeat for more)",
    )
    _add_operations_flags(p)
    _add_serve_data_flags(p)
    _add_limit_flags(p)
    p.set_defaults(func=cmd_serve)
    serve_parser = p
    _deliveries_parser(sub, _default_db())

    p = sub.add_parser("workspace", help="manage workspaces")
    wsub = p.add_subparsers(dest="workspace_command", required=True)
    c = wsub.add_parser("create", help="create a workspace and print its API key and auth token (once)")
    c.add_argument("--db", default=_default_db(), help=DB_HELP)
    c.add_argument("--label", default="default")
    c.add_argument("--json", action="store_true", help='print exactly {"apiKey": ..., "authToken": ...}')
    c.set_defaults(func=cmd_workspace_create)
    _add_credential_commands(wsub, _default_db())

    formats = ("table", "csv", "json", "parquet")
    p = sub.add_parser(
        "sql",
        help="query an event log with SQL and the analytics views",
        description="Views: step_durations, execution_outcomes, execution_summary, reviewer_latency, "
        "loop_iterations, sla_breaches, step_transitions, directly_follows; tables: "
        "executions, steps, events (and, for a server, commands and definition_versions).",
    )
    p.add_argument("query", help='SQL, e.g. "SELECT * FROM execution_summary LIMIT 10"')
    source = p.add_mutually_exclusive_group()
    source.add_argument("--db", default=_default_db(), help=READ_HELP)
    source.add_argument("--mirror", help="a running server's Parquet mirror folder (e.g. data/events)")
    p.add_argument("--format", choices=formats, default="table", help="output format (default table)")
    p.add_argument("--out", help="write to this file instead of standard output (required for parquet)")
    p.set_defaults(func=cmd_sql)

    p = sub.add_parser("events", help="export event logs")
    esub = p.add_subparsers(dest="events_command", required=True)
    c = esub.add_parser(
        "export", help="export executions' events: parquet, csv, XES or OCEL 2.0 JSON (pm4py reads both)"
    )
    source = c.add_mutually_exclusive_group()
    source.add_argument("--db", default=_default_db(), help=READ_HELP)
    source.add_argument("--mirror", help="a running server's Parquet mirror folder")
    which = c.add_mutually_exclusive_group(required=True)
    which.add_argument("--execution", help="one execution id")
    which.add_argument("--definition", help="every execution of this definition id")
    c.add_argument("--to", required=True, choices=("parquet", "csv", "ocel", "xes"), help="output format")
    c.add_argument("out", help="output file")
    c.set_defaults(func=cmd_events_export)

    p = sub.add_parser(
        "replay", help="replay a definition's recorded executions against another version and diff outcomes"
    )
    source = p.add_mutually_exclusive_group()
    source.add_argument("--db", default=_default_db(), help=READ_HELP)
    source.add_argument("--mirror", help="a running server's Parquet mirror folder")
    p.add_argument("--definition", required=True, help="the recorded executions' definition id")
    p.add_argument("--against", required=True, help="the other version: a definition file (JSON create body)")
    p.add_argument("--workspace", help="only this workspace's executions")
    p.add_argument("--json", action="store_true", help="print the diff as JSON")
    p.set_defaults(func=cmd_replay)
    _add_data_commands(sub, _default_db())
    _add_calibrate(sub)
    _add_whatif(sub)
    bind_environment(serve_parser)  # last: every serve flag, whoever added it, gets its variable
    return parser


def extra_providing(module: str) -> str | None:
    """The extra of this package whose requirements include the distribution of top-level
    ``module`` (``uvicorn`` -> ``server``), or None when no extra provides it."""
    import importlib.metadata
    import re

    from toolkit.version import DISTRIBUTION

    try:
        requirements = importlib.metadata.requires(DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for line in requirements:
        name = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", line)
        extra = re.search(r"""extra\s*==\s*["']([^"']+)["']""", line)
        # a distribution's import name is its name with - and . as _ (uvicorn, prometheus_client)
        if name and extra and re.sub(r"[-.]", "_", name.group(0)).lower() == module.lower():
            return extra.group(1)
    return None


def _run(args) -> int:
    """Run the sub-command; a library that only an extra installs, missing, is a usage error
    naming the extra to install instead of a traceback."""
    try:
        return args.func(args)
    except ModuleNotFoundError as exc:
        library = (exc.name or "").partition(".")[0]
        extra = extra_providing(library)
        if extra is None:
            raise
        print(
            f"collab {args.command}: needs {library}, which the '{extra}' extra installs: "
            f"pip install 'collab-workflows[{extra}]'",
            file=sys.stderr,
        )
        return 2


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return _run(args)


if __name__ == "__main__":
    sys.exit(main())
