"""Every bound on what one request may ask of the server, in one place (issue 13).

A workspace shares the server's single writer, its memory and its answers with every other
workspace; these numbers keep one of them from taking more than its share. Each is checked
where the input enters (the linter, the request models, the list services), and each error
names the field, edge or rule it hit.

Predicates (semantics §3.1; the linter refuses a definition past these):

* :data:`WHEN_MAX_CHARS`, :data:`PREDICATE_MAX_DEPTH`, :data:`REGEX_MAX_PATTERN_CHARS`,
  :data:`REGEX_INPUT_CAP` — the spec's own limits;
* :data:`MAX_REGEX_PER_PREDICATE` ``regex`` ops in one ``when``; :data:`MAX_REGEX_PER_NODE`
  in all the custom edges leaving one node (or group); :data:`MAX_CUSTOM_EDGES_PER_NODE`.

Work per command (:mod:`toolkit.work`): one engine command may spend at most
:data:`COMMAND_WORK_BUDGET` work units on predicates. A unit is a unit of *work*, never of
time, so the outcome is the same on every machine and in every replay:

* one per predicate node evaluated (an op, a var, a literal);
* a ``regex`` op: ``REGEX_STEP_UNITS + positions + REGEX_TEST_UNITS × class tests`` per
  character it scans, where ``positions`` are the pattern's character tests (the state set a
  search carries) and ``class tests`` its distinct non-literal ones (each an ``re`` call per
  new character), see :mod:`toolkit.regex_linear`;
* deep equality (``eq``, ``ne``, ``in``, ``includes`` on arrays): one per value compared.

On the project's shared 2-core machine a unit costs at most about 0.13 µs (the slowest
patterns the matcher knows, under load), so the budget is at most about half a second of one
core; measured in ``benchmarks/regex_predicates.py``.

API sizes (api-v2; the spec is silent on these):

* :data:`MAX_ID_CHARS` — every id a workflow request names;
* :data:`MAX_CURSOR_KEY` — a cursor decodes to ``0 <= k <= MAX_CURSOR_KEY`` (a 64-bit key);
* :data:`PAGE_MAX_BYTES` — a list page stops once its items pass this many bytes of JSON;
* :data:`MAX_LISTED_IN_MESSAGE` — an error message lists at most this many items, then
  "… and N more".
"""

from __future__ import annotations

__all__ = [
    "WHEN_MAX_CHARS",
    "PREDICATE_MAX_DEPTH",
    "REGEX_MAX_PATTERN_CHARS",
    "REGEX_INPUT_CAP",
    "MAX_REGEX_PER_PREDICATE",
    "MAX_REGEX_PER_NODE",
    "MAX_CUSTOM_EDGES_PER_NODE",
    "REGEX_STEP_UNITS",
    "REGEX_TEST_UNITS",
    "COMMAND_WORK_BUDGET",
    "MAX_ID_CHARS",
    "MAX_CURSOR_KEY",
    "PAGE_MAX_BYTES",
    "MAX_LISTED_IN_MESSAGE",
]

# ---------------------------------------------------------------- predicates (semantics §3.1)
WHEN_MAX_CHARS = 1000
PREDICATE_MAX_DEPTH = 32
REGEX_MAX_PATTERN_CHARS = 200
REGEX_INPUT_CAP = 16384  # characters of a value a regex op scans; the rest is never read

# Chosen so that an ordinary node — a handful of regex routes over one output — is admitted,
# while the 8-edge, 15-regex definitions of issue 13 (14.7 s of writer time each) are not.
MAX_REGEX_PER_PREDICATE = 4
MAX_REGEX_PER_NODE = 8
MAX_CUSTOM_EDGES_PER_NODE = 16

# ---------------------------------------------------------------- work per command
# Every search pays a memo lookup per character (worth about 8 positions); a pattern with
# more positions may carry a larger state set, which costs in proportion on a memo miss, and
# a character class is an `re` call (about 4 positions' worth) for each new character.
REGEX_STEP_UNITS = 8
REGEX_TEST_UNITS = 4
# Sixteen searches of a full 16 KiB text by an 8-position literal pattern (2**22 units): an
# ordinary node (8 regex routes over one output at the cap) stays below it; a command past
# it fails its execution.
COMMAND_WORK_BUDGET = 16 * REGEX_INPUT_CAP * (REGEX_STEP_UNITS + 8)

# ---------------------------------------------------------------- API sizes
MAX_ID_CHARS = 256
MAX_CURSOR_KEY = 2**63 - 1
PAGE_MAX_BYTES = 4 * 1024 * 1024
MAX_LISTED_IN_MESSAGE = 20
