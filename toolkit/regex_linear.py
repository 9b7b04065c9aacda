"""Regex search in time linear in the text: the matcher behind the `regex` predicate op.

Python's ``re`` backtracks, so even patterns without nested quantifiers take time polynomial
(or, with alternatives inside a repeat, exponential) in the text. Measured on this project's
machine with the predicate's 16 KiB input cap: ``.*x`` 0.5 s, ``\\d+-\\w+$`` 2 s, ``(ab|a)*c``
10 s, ``\\s*\\s*$`` 25 s on just 2,000 characters. A predicate runs on the server's one writer
thread, so one such edge could stall every workspace's writes.

This module runs the same patterns without backtracking. ``re``'s own parser reads the
pattern, and every character class is tested by ``re`` itself (compiled as a one-character
pattern under the flags in force), so the syntax and the meaning of classes, flags and anchors
are ``re``'s. The pattern becomes a Thompson NFA whose states are simulated together as one
bit set, so a search costs O(len(text) × positions) whatever the pattern. Only *whether* a
match exists is computed — all the `regex` op needs — so greedy and lazy repeats are the same.

Refused (:class:`UnsupportedPattern`): what needs backtracking to mean anything —
backreferences, lookahead and lookbehind, conditional groups, possessive quantifiers and atomic
groups —, scoped ``(?a:...)`` flags (under which ``re``'s own search and match disagree), and
patterns over :data:`MAX_POSITIONS` character positions once counted repeats are
expanded (``a{5000}``), which would make each step slow.

>>> p = compile_linear(r"(?i)^\\d{4}-[a-z]+$")
>>> p.search("2024-Q"), p.search("2024-"), p.search("x" * 16384 + "1")
(True, False, False)
"""

from __future__ import annotations

import re
from re import _constants as C  # type: ignore[attr-defined]  # typeshed lacks re's private modules
from re import _parser  # type: ignore[attr-defined]  # (the stdlib's own parse tree, walked here)

__all__ = ["MAX_POSITIONS", "UnsupportedPattern", "LinearPattern", "compile_linear"]

MAX_POSITIONS = 256  # character tests after expanding counted repeats
_MAX_NODES = 4 * MAX_POSITIONS  # all NFA nodes, so zero-width repeats cannot grow without bound
_CACHE_LIMIT = 4096  # per-pattern memo entries before a memo is cleared (memory stays bounded)

_CHAR, _SPLIT, _ASSERT, _MATCH = range(4)
_REFUSED = {
    C.GROUPREF: "backreferences",
    C.GROUPREF_EXISTS: "conditional groups",
    C.ASSERT: "lookahead/lookbehind",
    C.ASSERT_NOT: "lookahead/lookbehind",
    C.POSSESSIVE_REPEAT: "possessive quantifiers",
    C.ATOMIC_GROUP: "atomic groups",
}
_CATEGORIES = {
    C.CATEGORY_DIGIT: r"\d",
    C.CATEGORY_NOT_DIGIT: r"\D",
    C.CATEGORY_SPACE: r"\s",
    C.CATEGORY_NOT_SPACE: r"\S",
    C.CATEGORY_WORD: r"\w",
    C.CATEGORY_NOT_WORD: r"\W",
}
_FLAG_MASK = re.IGNORECASE | re.DOTALL | re.ASCII | re.MULTILINE


class UnsupportedPattern(ValueError):
    """A pattern this matcher cannot run in linear time; the message says which construct."""


def _letters(flags: int) -> str:
    return "".join(letter for letter, flag in _parser.FLAGS.items() if flags & flag)


def _char(code: int) -> str:
    return f"\\U{code:08x}"


def _class_source(op, av) -> str:
    """A one-character ``re`` pattern equal to the parsed atom (flags are applied when compiled)."""
    if op is C.LITERAL:
        return _char(av)
    if op is C.NOT_LITERAL:
        return f"[^{_char(av)}]"
    if op is C.ANY:
        return "."
    parts: list[str] = []
    for item_op, item_av in av:
        if item_op is C.NEGATE:
            parts.insert(0, "^")
        elif item_op is C.LITERAL:
            parts.append(_char(item_av))
        elif item_op is C.RANGE:
            parts.append(f"{_char(item_av[0])}-{_char(item_av[1])}")
        elif item_op is C.CATEGORY:
            parts.append(_CATEGORIES[item_av])
        else:  # pragma: no cover - the parser emits nothing else inside a class
            raise UnsupportedPattern(f"character class item {item_op}")
    return f"[{''.join(parts)}]"


class _Builder:
    """Builds the NFA back to front: each construct is compiled knowing the node that follows it."""

    def __init__(self) -> None:
        self.kind: list[int] = []
        self.arg: list = []  # CHAR: test index; ASSERT: (at code, flags); SPLIT: list of next nodes
        self.next: list[int] = []
        self.tests: dict[str, int] = {}  # one-character pattern source -> test index
        self.literals: dict[int, str] = {}  # test index -> its character, for case-sensitive literals
        self.positions = 0

    def node(self, kind: int, arg=None, nxt: int = -1) -> int:
        if len(self.kind) >= _MAX_NODES:
            raise UnsupportedPattern(f"pattern expands to more than {_MAX_NODES} states")
        self.kind.append(kind)
        self.arg.append(arg)
        self.next.append(nxt)
        return len(self.kind) - 1

    def sequence(self, items, nxt: int, flags: int, scopes: str = "") -> int:
        for op, av in reversed(items):
            nxt = self.item(op, av, nxt, flags, scopes)
        return nxt

    def item(self, op, av, nxt: int, flags: int, scopes: str) -> int:
        if op in _REFUSED:
            raise UnsupportedPattern(f"{_REFUSED[op]} need backtracking")
        if op in (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN):
            self.positions += 1
            if self.positions > MAX_POSITIONS:
                raise UnsupportedPattern(f"pattern expands to more than {MAX_POSITIONS} character positions")
            # Compiled inside the same scoped-flag groups as in the pattern, so that re's own
            # rules for combining them (e.g. (?a:...) inside a Unicode pattern) apply.
            source = scopes + _class_source(op, av) + ")" * scopes.count(":")
            test = self.tests.setdefault(source, len(self.tests))
            if op is C.LITERAL and not flags & re.IGNORECASE:
                self.literals[test] = chr(av)
            return self.node(_CHAR, test, nxt)
        if op is C.AT:
            return self.node(_ASSERT, (av, flags), nxt)
        if op is C.SUBPATTERN:
            _group, add, delete, sub = av
            if (add | delete) & (re.ASCII | re.UNICODE):
                # re itself is inconsistent here: re.compile("(?a:\\W)") matches "é" but finds no match
                # in it, because its search prefilter keeps the pattern's global Unicode classes.
                raise UnsupportedPattern("scoped (?a:...) / (?u:...) flags are not supported (use a global (?a))")
            if add or delete:
                scopes += f"(?{_letters(add)}{'-' + _letters(delete) if delete else ''}:"
            return self.sequence(sub.data, nxt, (flags | add) & ~delete, scopes)
        if op is C.BRANCH:
            return self.node(_SPLIT, [self.sequence(alt.data, nxt, flags, scopes) for alt in av[1]])
        if op in (C.MAX_REPEAT, C.MIN_REPEAT):
            low, high, sub = av
            tail = nxt
            if high is C.MAXREPEAT:
                tail = self.node(_SPLIT, [])
                self.arg[tail][:] = [self.sequence(sub.data, tail, flags, scopes), nxt]
            else:
                for _ in range(high - low):
                    tail = self.node(_SPLIT, [self.sequence(sub.data, tail, flags, scopes), nxt])
            for _ in range(low):
                tail = self.sequence(sub.data, tail, flags, scopes)
            return tail
        raise UnsupportedPattern(f"unsupported construct {op}")  # pragma: no cover


class LinearPattern:
    """A compiled pattern; :meth:`search` tells whether it matches anywhere in a text.
    ``positions`` is its number of character tests once counted repeats are expanded, and
    ``class_tests`` how many distinct ones are not plain literals (each an ``re`` call for
    every character the memo has not seen): together they bound the cost of one character.

    Safe to share between threads: the memos only ever gain entries that any thread would
    compute the same way, and are cleared whole when they grow past a bound.
    """

    __slots__ = (
        "pattern",
        "positions",
        "class_tests",
        "_kind",
        "_arg",
        "_next",
        "_start",
        "_chars",
        "_bits",
        "_match",
        "_tests",
        "_asserts",
        "_assert_bit",
        "_words",
        "_masks",
        "_closures",
        "_follows",
        "_steps",
        "_contexts",
        "_literals",
        "_shift",
    )

    def __init__(self, pattern: str) -> None:
        parsed = _parser.parse(pattern)
        flags = parsed.state.flags & _FLAG_MASK
        b = _Builder()
        match = b.node(_MATCH)
        self.pattern = pattern
        self._start = b.sequence(parsed.data, match, flags)
        self._kind, self._arg, self._next = b.kind, b.arg, b.next
        chars = [i for i, k in enumerate(b.kind) if k == _CHAR]
        self._chars = chars  # position -> node
        self.positions = len(chars)  # the size of the state set a search carries (its cost per character)
        self._bits = {node: 1 << i for i, node in enumerate(chars)}
        self._match = 1 << len(chars)
        masks: dict[int, int] = {}
        for node in chars:
            masks[b.arg[node]] = masks.get(b.arg[node], 0) | self._bits[node]
        # Case-sensitive literals are looked up; only the other tests need re per new character.
        self._literals: dict[str, int] = {}
        for index, ch in b.literals.items():
            self._literals[ch] = self._literals.get(ch, 0) | masks[index]
        self._tests = [
            (re.compile(source, flags).fullmatch, masks[index])
            for source, index in b.tests.items()
            if index not in b.literals
        ]
        self.class_tests = len(self._tests)  # each costs an `re` call per new character
        # Positions whose one successor is the position just below (a run of characters or a
        # counted repeat): they advance by a shift instead of a memo lookup.
        self._shift = sum(1 << p for p, node in enumerate(chars) if p and b.next[node] == chars[p - 1])
        self._asserts = [i for i, k in enumerate(b.kind) if k == _ASSERT]
        self._assert_bit = {node: 1 << bit for bit, node in enumerate(self._asserts)}
        self._words = {a: re.compile(r"\w", b.arg[a][1] & re.ASCII).fullmatch for a in self._asserts}
        self._masks: dict[str, int] = {}
        self._closures: dict[tuple[int, int], int] = {}
        self._follows: dict[tuple[int, int, int], int] = {}
        self._steps: dict[tuple, int] = {}
        self._contexts: dict[tuple, int] = {}

    def search(self, text: str) -> bool:
        """Whether ``re.search(pattern, text)`` would find a match (the pattern's own flags apply).

        One step per character: a memo lookup of (states, character, anchors) -> next states,
        computed on a miss by :meth:`_step`, so the work per character is bounded by the
        pattern's size however the text is built.
        """
        n, match, steps = len(text), self._match, self._steps
        if not self._asserts:
            states = self._closure(self._start, 0)
            for ch in text:
                if states & match:
                    return True
                following = steps.get((states, ch))
                states = self._step(states, ch, 0, (states, ch)) if following is None else following
            return bool(states & match)
        contexts, context = self._contexts, self._context
        states = self._closure(self._start, context(text, 0, n))
        for i, ch in enumerate(text):
            if states & match:
                return True
            where = (ch, text[i + 1] if i + 1 < n else None, i + 1 == n - 1)
            ctx = contexts.get(where)
            if ctx is None:
                ctx = context(text, i + 1, n)
            key = (states, ch, ctx)
            following = steps.get(key)
            states = self._step(states, ch, ctx, key) if following is None else following
        return bool(states & match)

    # ------------------------------------------------------------------ the memoised steps

    def _step(self, states: int, ch: str, ctx: int, key: tuple) -> int:
        """The states after consuming ``ch`` from ``states`` (a new match may start anywhere)."""
        live = states & (self._masks[ch] if ch in self._masks else self._mask(ch))
        following = self._closure(self._start, ctx) | (self._follow(live, ctx) if live else 0)
        if len(self._steps) >= _CACHE_LIMIT:
            self._steps.clear()
        self._steps[key] = following
        return following

    def _mask(self, ch: str) -> int:
        """The positions whose character test accepts ``ch``."""
        mask = self._literals.get(ch, 0)
        for fullmatch, bits in self._tests:
            if fullmatch(ch):
                mask |= bits
        if len(self._masks) >= _CACHE_LIMIT:
            self._masks.clear()
        self._masks[ch] = mask
        return mask

    def _context(self, text: str, i: int, n: int) -> int:
        """Bit per anchor node: whether it holds at position ``i`` (as ``re`` defines each anchor).
        It depends only on the characters either side and on whether ``i`` is the last
        position, so it is memoised by those for positions after the first."""
        ctx = 0
        for bit, node in enumerate(self._asserts):
            at, flags = self._arg[node]
            multiline = flags & re.MULTILINE
            if at is C.AT_BEGINNING:
                holds = i == 0 or (multiline and text[i - 1] == "\n")
            elif at is C.AT_BEGINNING_STRING:
                holds = i == 0
            elif at is C.AT_END:
                holds = i == n or (text[i] == "\n" if multiline else i == n - 1 and text[i] == "\n")
            elif at is C.AT_END_STRING:
                holds = i == n
            else:  # \b and \B; like re, neither holds in an empty text
                word = self._words[node]
                before = i > 0 and word(text[i - 1]) is not None
                after = i < n and word(text[i]) is not None
                holds = n > 0 and (before != after) == (at is C.AT_BOUNDARY)
            if holds:
                ctx |= 1 << bit
        if i > 0:
            if len(self._contexts) >= _CACHE_LIMIT:
                self._contexts.clear()
            self._contexts[(text[i - 1], text[i] if i < n else None, i == n - 1)] = ctx
        return ctx

    def _closure(self, node: int, ctx: int) -> int:
        """The positions (and match) reachable from ``node`` without consuming a character."""
        key = (node, ctx)
        found = self._closures.get(key)
        if found is not None:
            return found
        states, seen, stack = 0, set(), [node]
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            kind = self._kind[current]
            if kind == _CHAR:
                states |= self._bits[current]
            elif kind == _MATCH:
                states |= self._match
            elif kind == _SPLIT:
                stack.extend(self._arg[current])
            elif ctx & self._assert_bit[current]:
                stack.append(self._next[current])
        if len(self._closures) >= _CACHE_LIMIT:
            self._closures.clear()
        self._closures[key] = states
        return states

    def _follow(self, live: int, ctx: int) -> int:
        """The states after the positions in ``live`` consume their character, eight positions
        per memo entry, so a step costs at most MAX_POSITIONS / 8 lookups."""
        states, chunk = (live & self._shift) >> 1, 0
        live &= ~self._shift
        while live:
            byte = live & 0xFF
            if byte:
                key = (chunk, byte, ctx)
                part = self._follows.get(key)
                if part is None:
                    part = 0
                    for bit in range(8):
                        if byte >> bit & 1:
                            part |= self._closure(self._next[self._chars[chunk * 8 + bit]], ctx)
                    if len(self._follows) >= 4 * _CACHE_LIMIT:  # room for every chunk of 256 positions
                        self._follows.clear()
                    self._follows[key] = part
                states |= part
            live >>= 8
            chunk += 1
        return states


def compile_linear(pattern: str) -> LinearPattern:
    """Compile ``pattern`` (which must already compile with ``re``) for linear-time search, or
    raise :class:`UnsupportedPattern` naming the construct that needs backtracking."""
    return LinearPattern(pattern)
