"""Benchmark: the `regex` predicate op's linear-time matcher (toolkit.regex_linear) against
Python's backtracking `re`, both measured in this run on the same patterns and texts.

Two workloads:

* ordinary: the patterns and short texts a workflow author writes (decisions, ids, emails),
  where `re` is at its best; the matcher is expected to be slower per call here, and the
  ratio says by how much.
* adversarial: patterns the spec admits (no nested quantifiers) on texts built to make `re`
  backtrack; the matcher runs them at the predicate's full 16 KiB cap, `re` at the largest
  length it finishes in about a second (or the cap), and the ratio compares the two at that
  same length. Then the matcher's own worst case: texts that defeat its memos.

Every pair of answers is checked equal (`re.search(...) is not None`).

Last, the work units a search is charged (toolkit.limits) against the time it takes, for
every pattern above: the slowest µs per unit times COMMAND_WORK_BUDGET is the most time one
command's predicates can take on this machine, and the spread says how well units track time.
"""

from __future__ import annotations

import os
import random
import re
import time

from toolkit.limits import COMMAND_WORK_BUDGET, REGEX_STEP_UNITS, REGEX_TEST_UNITS
from toolkit.regex_linear import compile_linear

CAP = 16384
ORDINARY = [
    ("^approve$", ["approve", "reject", "approved"]),
    (r"^\d{4}-\d{2}-\d{2}$", ["2024-01-31", "2024-1-31", "x"]),
    (r"(?i)urgent|asap", ["Please handle ASAP", "whenever", "URGENT: fix"]),
    (r"^[\w.+-]+@example\.(com|org)$", ["ann.lee+x@example.org", "bob@example.net"]),
    (r"\bfraud\b", ["possible fraud detected", "fraudulent", ""]),
]
ADVERSARIAL = [
    (r".*.*x", lambda n: "a" * n),
    (r"\d+-\w+$", lambda n: "1" * n),
    (r"(ab|a)*c", lambda n: "a" * n),
    (r"\s*\s*$", lambda n: " " * (n - 1) + "x"),
    (r"a*a*b", lambda n: "a" * n),
    (r"[ab]*a[ab]{0,200}x", lambda n: "".join("ab"[(i * 7919) % 11 % 2] for i in range(n))),
]
# Built against the matcher's memos (a new state set, or a new character, at every step): its
# worst case. Linear only: re takes exponential time on the first at any length worth measuring.
MATCHER_WORST = [
    (
        "".join(f"[{chr(0x4E00 + i)}-{chr(0x4E32 + i)}]?" for i in range(40)) + "z",
        "".join(chr(0x4E00 + i) for i in range(CAP)),
    ),
    ("[ab]*a(?:[ab]c?){120}x", "".join(random.Random(1).choices("ab", k=CAP))),
]


def per_call_us(fn, texts, reps: int) -> float:
    start = time.perf_counter()
    for _ in range(reps):
        for text in texts:
            fn(text)
    return (time.perf_counter() - start) / (reps * len(texts)) * 1e6


def timed(fn, text) -> tuple[float, bool]:
    start = time.perf_counter()
    answer = fn(text)
    return time.perf_counter() - start, answer


def main() -> None:
    print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    print("ordinary patterns, short texts (per call)")
    for pattern, texts in ORDINARY:
        ours, theirs = compile_linear(pattern), re.compile(pattern)
        assert [ours.search(t) for t in texts] == [theirs.search(t) is not None for t in texts], pattern
        linear = per_call_us(ours.search, texts, 2000)
        backtracking = per_call_us(lambda t, theirs=theirs: theirs.search(t) is not None, texts, 2000)
        print(
            f"  {pattern:34} linear {linear:7.2f} µs   re {backtracking:6.2f} µs   "
            f"linear/re {linear / backtracking:5.1f}x"
        )

    print("adversarial texts")
    for pattern, make in ADVERSARIAL:
        ours, theirs = compile_linear(pattern), re.compile(pattern)
        full, full_answer = timed(ours.search, make(CAP))
        n, re_time = 250, 0.0
        while n < CAP and re_time < 0.5:  # grow the text until re takes about a second
            n *= 2
            re_time, re_answer = timed(lambda t, theirs=theirs: theirs.search(t) is not None, make(min(n, CAP)))
        n = min(n, CAP)
        same_n, answer = timed(ours.search, make(n))
        assert answer == re_answer, pattern
        print(
            f"  {pattern[:18]:18} linear at {CAP} chars {full * 1e3:7.1f} ms | at {n:5} chars: linear "
            f"{same_n * 1e3:6.1f} ms, re {re_time * 1e3:8.1f} ms, re/linear {re_time / same_n:8.1f}x"
        )

    print("the matcher's worst case (16 KiB)")
    for pattern, text in MATCHER_WORST:
        elapsed, _ = timed(compile_linear(pattern).search, text)
        print(f"  {pattern[:22]:22} ({len(pattern)} chars) linear {elapsed * 1e3:7.1f} ms")

    print("work units against time (16 KiB searches)")
    costs = []
    for pattern, text in (
        [(p, make(CAP)) for p, make in ADVERSARIAL]
        + MATCHER_WORST
        + [(p, (texts[0] * CAP)[:CAP]) for p, texts in ORDINARY]
    ):
        linear = compile_linear(pattern)
        units = len(text) * (REGEX_STEP_UNITS + linear.positions + REGEX_TEST_UNITS * linear.class_tests)
        elapsed, _ = timed(compile_linear(pattern).search, text)  # a fresh matcher: cold memos
        costs.append(elapsed * 1e6 / units)
        print(f"  {pattern[:22]:22} {units:>10,} units {elapsed * 1e3:7.1f} ms  {costs[-1]:.4f} µs/unit")
    print(
        f"  slowest {max(costs):.4f} µs/unit, fastest {min(costs):.4f} (x{max(costs) / min(costs):.0f}); "
        f"the budget of {COMMAND_WORK_BUDGET:,} units is at most {max(costs) * COMMAND_WORK_BUDGET / 1e6:.2f} s "
        "of predicate work per command here"
    )


if __name__ == "__main__":
    main()
