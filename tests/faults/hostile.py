"""The hostile tenant (issue 13): one more worker, in a workspace of its own, sending the worst
inputs the API accepts — bursts over its rate and in-flight limits, maximal pages, definitions
whose custom edges run regex predicates over an agent's output, and webhook URLs that today's
delivery cannot parse — while the other workers run the normal mix.

Two inputs once hurt the others (issue 13, items 1 and 2), each behind a flag of
:class:`faults.harness.Config`, on by default: ``poison_urls`` (``https://0177.0.0.1/hook``,
which made the deliverer spin and is now refused at dispatch) and ``maximal_predicates`` (the
largest regex predicates the linter admits, over the longest text a regex scans; their searches
run before the single writer). Without them the worker sends a poison-free load and small
predicates.

It is active in every other window of :data:`WINDOW_S` seconds, so the normal workers'
latency is sampled with and without it all through the same run (a request counts for the
window it started in); :func:`judge` then requires their p99 with it to stay within twice
their p99 without it or within :data:`SLACK_S` above it, whichever is larger (on a busy
2-core machine a few slow answers come whatever the load). The ledger checks hold
the normal workers to the same promises as ever: nothing lost, nothing applied twice.

The hostile worker records no facts: its own data is not checked, only what it does to the
others. Its answers must still be the API's: 200, or 429 for what its limits refuse, or the
error codes the other engineers' input limits may give (listed per operation); never a 5xx.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import httpx
from api.support import DEF_CREATE, DEF_LIST, DISPATCH, EVENTS, EXEC_LIST

from faults.context import Ctx
from toolkit.limits import MAX_REGEX_PER_NODE, MAX_REGEX_PER_PREDICATE, REGEX_INPUT_CAP

POISON_URL = "https://0177.0.0.1/hook"  # valid to urlsplit, an InvalidURL to httpx: refused at dispatch now
BURST = 24  # requests sent at once, over the server's in-flight limit of 8
HOLD_S = 0.5  # how long a burst request holds its slot before the rest of its body is sent
SLACK_S = 1.5  # p99 allowed above the quiet p99, however small that is
WINDOW_S = 2.0  # the hostile worker is active in every other window this long
# What the server runs with when the hostile worker takes part (the normal workspace stays
# inside them: four workers and the harness's own requests, at most five at once).
SERVER_ARGS = ("--rate-limit", "100", "--rate-burst", "100", "--max-in-flight", "8")
REFUSED = ("RESOURCE_EXHAUSTED",)
LIMITED = ("RESOURCE_EXHAUSTED", "INVALID_ARGUMENT")  # input limits may refuse what today's code takes


class Hostile(NamedTuple):
    name: str
    weight: float
    fn: Callable


def burst(ctx: Ctx) -> None:
    """BURST list requests at once, each holding its slot while its body trickles in (a
    request counts against its workspace's in-flight limit from its head on): the ones over
    the limits must be 429 with Retry-After. Held open, the burst meets the limit however fast
    the server answers, and however many processes it is spread over."""
    run = ctx.run
    body = json.dumps({"data": {"pageSize": 100}}).encode()

    def trickle():
        yield body[:1]
        time.sleep(HOLD_S)
        yield body[1:]

    with run.server.client(run.hostile_creds, timeout=60) as http:

        def one(_):
            try:
                return http.post(DEF_LIST, content=trickle())
            except httpx.TransportError:
                return None

        with ThreadPoolExecutor(BURST) as pool:
            answers = list(pool.map(one, range(BURST)))
    for resp in answers:
        if resp is None:
            continue  # a kill landed in the burst
        if resp.status_code == 429 and resp.headers.get("retry-after", "").isdigit():
            ctx.report.count("hostile requests refused 429")
        elif resp.status_code == 200:
            ctx.report.count("hostile requests served")
        else:
            ctx.report.problem(f"hostile burst: answered {resp.status_code} {resp.text[:300]}")


def maximal_pages(ctx: Ctx) -> None:
    ctx.read(DEF_LIST, {"pageSize": 100}, allow=REFUSED)
    page = ctx.read(EXEC_LIST, {"pageSize": 100}, allow=REFUSED)
    for item in (page or {}).get("items", [])[:3]:
        ctx.read(EVENTS, {"executionId": item["executionId"], "sinceSeq": 0, "pageSize": 500}, allow=REFUSED)


def predicate_definition(definition_id: str, maximal: bool) -> dict:
    """An agent whose output is text, and custom edges each testing it with regex operations;
    an ``always`` edge ends every execution whatever the predicates say. ``maximal``: the most
    the linter admits (toolkit.limits: regex ops per predicate and per node) over a text of the
    most a regex scans; else 1 KiB, 1 edge, 2 ops."""
    regex = {"op": "regex", "args": [{"var": "output.text"}, "(a|b)*c[0-9]x"]}
    ops, edges, size = [regex, regex], 1, 1024
    if maximal:
        per_edge = MAX_REGEX_PER_PREDICATE
        ops, edges, size = [regex] * per_edge, MAX_REGEX_PER_NODE // per_edge, REGEX_INPUT_CAP
    when = json.dumps({"op": "or", "args": ops})
    nodes = [
        {
            "nodeId": "gen",
            "type": "agent",
            "config": {"agentId": "writer", "mockOutput": {"text": ("ab" * size)[:size]}},
        },
        {"nodeId": "done", "type": "agent", "config": {"agentId": "closer"}},
    ]
    nodes += [{"nodeId": f"t{i}", "type": "agent", "config": {"agentId": f"tail-{i}"}} for i in range(edges)]
    links = [{"from": "gen", "to": f"t{i}", "on": "custom", "when": when} for i in range(edges)]
    return {
        "definitionId": definition_id,
        "name": "hostile predicates",
        "nodes": nodes,
        "edges": links + [{"from": "gen", "to": "done", "on": "always"}],
    }


def big_predicates(ctx: Ctx) -> None:
    defs = ctx.state.setdefault("predicate_defs", [])
    if not defs or ctx.rng.random() < 0.2:
        definition_id = ctx.new_id("predicates-")
        body = predicate_definition(definition_id, ctx.run.config.maximal_predicates)
        if ctx.write(DEF_CREATE, body, allow=LIMITED) is not None:
            defs.append(definition_id)
        return
    ctx.write(DISPATCH, {"definitionId": ctx.rng.choice(defs)}, allow=LIMITED)


def poison_webhook(ctx: Ctx) -> None:
    defs = ctx.state.get("predicate_defs") or []
    if ctx.run.config.poison_urls and defs:
        ctx.write(DISPATCH, {"definitionId": defs[0], "webhookUrl": POISON_URL, "webhookSecret": "s"}, allow=LIMITED)


OPERATIONS = [
    Hostile("burst", 4, burst),
    Hostile("maximal_pages", 2, maximal_pages),
    Hostile("big_predicates", 2, big_predicates),
    Hostile("poison_webhook", 1, poison_webhook),
]


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def judge(report) -> None:
    """The normal workers' p99 with the hostile worker active must stay within twice their p99
    without it, or SLACK_S above it; the hostile bursts must have met the limits."""
    quiet, loud = report.latencies[False], report.latencies[True]
    if len(quiet) < 10 or len(loud) < 10:
        report.problem(
            f"too few normal requests to compare latencies ({len(quiet)} quiet, {len(loud)} with the hostile worker)"
        )
        return
    calm, stressed = p99(quiet), p99(loud)
    report.counts["normal p99 ms without the hostile worker"] = round(calm * 1000)
    report.counts["normal p99 ms with the hostile worker"] = round(stressed * 1000)
    if stressed > max(2 * calm, calm + SLACK_S):
        report.problem(
            f"the hostile worker raised the others' p99 from {calm * 1000:.0f} ms to "
            f"{stressed * 1000:.0f} ms (more than twice, and more than {SLACK_S:g} s more)"
        )
    if not report.counts["hostile requests refused 429"]:
        report.problem("no hostile request was refused 429: the bursts never met the limits")
