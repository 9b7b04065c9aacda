"""Check builders: one per kind of instruction, each turning an :class:`Analysis` into a
:class:`Check` — detection rules with the instruction's own terms filled in, and demo pages
that really contain (or carefully avoid) the issue.

Every builder is a pure function of the analysis; the demo pages are fixed templates about a
fictitious product ("Northwind Cloud"), so that the same instruction always gives the same
result.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from toolkit.prompts.analysis import Analysis

TIERS = ("obvious_match", "subtle_match", "near_miss", "clean")
DETECTED = {
    "obvious_match": "detected",
    "subtle_match": "detected",
    "near_miss": "not_detected",
    "clean": "not_detected",
}


@dataclass(frozen=True)
class Case:
    tier: str
    dimension: str
    title: str
    html: str
    reason: str


@dataclass
class Check:
    issue_type: str  # the issueType every finding carries, e.g. "forbidden-term"
    name: str  # the check's name, the heading of the analysis prompt
    objective: str
    look_at: list[str]  # scope: where to look
    ignore: list[str]  # scope: what is out of scope
    rules: list[str]  # detection logic, in order
    not_issues: list[str]  # look-alikes that must not be reported
    dimensions: list[str]
    cases: list[Case]
    reads: str  # "text" (visible text suffices) or "markup" (tags and attributes)
    severity: str  # how to grade a finding
    title_hint: str
    target_hint: str
    suggestion_hint: str
    notes: list[str] = field(default_factory=list)


def demos(*rows: tuple[str, str, str, str]) -> list[Case]:
    """The usual four demo cases, one per tier in :data:`TIERS` order; each row is
    ``(dimension, title, html, reason)``. A builder with an extra case lists its cases itself."""
    if len(rows) != len(TIERS):
        raise ValueError(f"demos() takes one row per tier ({len(TIERS)}), got {len(rows)}")
    return [Case(tier, *row) for tier, row in zip(TIERS, rows)]


def check(*, cases: list[Case], dimensions: list[str] | None = None, **fields) -> Check:
    """A :class:`Check` whose detection dimensions are, unless given, its cases' dimensions in order."""
    if dimensions is None:
        dimensions = list(dict.fromkeys(c.dimension for c in cases))
    return Check(cases=cases, dimensions=dimensions, **fields)


def esc(text: str) -> str:
    return html.escape(text, quote=True)


def page(title: str, *blocks: str) -> str:
    """A small demo page: an article with a heading and the given blocks, one per line."""
    body = "\n".join(f"  {b}" for b in blocks if b)
    return f"<article>\n  <h2>{esc(title)}</h2>\n{body}\n</article>"


def said(a: Analysis) -> str:
    """The instruction, for quoting inside a sentence (without its closing full stop)."""
    return a.instruction.rstrip(".!? ")


def quote(term: str) -> str:
    return f"“{term}”"


def quoted_list(terms, conj: str = "or") -> str:
    items = [quote(t) for t in terms]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {conj} " + items[-1]


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def plural(noun: str) -> str:
    words = noun.split()
    last = words[-1]
    if last.endswith(("s", "x", "z", "ch", "sh")):
        last += "es"
    elif last.endswith("y") and len(last) > 1 and last[-2] not in "aeiou":
        last = last[:-1] + "ies"
    else:
        last += "s"
    return " ".join(words[:-1] + [last])


def _doubles(word: str) -> bool:
    """Short consonant-vowel-consonant verbs double their last letter: log → logged, chat → chatted."""
    return bool(re.fullmatch(r"[^aeiou]*[aeiou][^aeiouwxy]", word)) and len(word) <= 4


def past(verb: str) -> str:
    words = verb.split()
    first = words[0]
    if _doubles(first):
        first += first[-1] + "ed"
    elif first.endswith("e"):
        first += "d"
    elif first.endswith("y") and len(first) > 1 and first[-2] not in "aeiou":
        first = first[:-1] + "ied"
    elif first.endswith("c"):
        first += "ked"
    else:
        first += "ed"
    return " ".join([first] + words[1:])


def forms(term: str, shape: str) -> list[str]:
    """The inflected forms a check should also match (lower case)."""
    t = term.lower()
    if shape in ("verb", "phrasal"):
        first, rest = t.split()[0], t.split()[1:]
        ing = (
            first + first[-1]
            if _doubles(first)
            else first[:-1]
            if first.endswith("e") and not first.endswith("ee")
            else first
        ) + "ing"
        third = plural(first)
        out = [t] + [" ".join([w] + rest) for w in (third, past(first).split()[0], ing)]
    elif shape == "noun":
        out = [t, plural(t)]
    else:
        out = [t]
    return list(dict.fromkeys(out))


_PARTICLES = {"in", "up", "out", "on", "off", "into", "here", "over", "down", "through"}
_VERB_ENDINGS = ("ize", "ise", "ate", "ify", "yse", "yze")
_VERBS = {
    "leverage",
    "utilize",
    "click",
    "sign",
    "log",
    "check",
    "reach",
    "touch",
    "circle",
    "drill",
    "action",
    "impact",
    "incentivize",
    "socialize",
    "ideate",
    "architect",
    "deep-dive",
    "ping",
    "use",
    "buy",
    "call",
    "contact",
    "visit",
    "enable",
    "disable",
    "empower",
    "unlock",
    "revolutionize",
    "streamline",
}
_ADJECTIVES = {
    "cheap",
    "easy",
    "simple",
    "free",
    "fast",
    "best",
    "quick",
    "seamless",
    "robust",
    "cutting-edge",
    "world-class",
    "innovative",
    "revolutionary",
    "unlimited",
    "instant",
    "effortless",
    "awesome",
    "amazing",
    "perfect",
    "cheapest",
    "great",
    "powerful",
    "smart",
    "crazy",
    "insane",
    "lame",
    "dumb",
}
_ADJ_ENDINGS = ("ful", "ous", "ive", "able", "ible", "less", "est", "ish")


def shape_of(term: str) -> str:
    """ "name", "verb", "phrasal" (verb + particle), "adjective" or "noun": picks a sentence the
    term reads naturally in."""
    words = term.split()
    if not words:
        return "noun"
    if term[:1].isupper() and not term.isupper() and words[0].lower() not in _VERBS | _ADJECTIVES:
        return "name"
    first = words[0].lower()
    if len(words) == 2 and words[1].lower() in _PARTICLES and (first in _VERBS or len(first) <= 6):
        return "phrasal"
    if first in _VERBS or (len(words) == 1 and first.endswith(_VERB_ENDINGS)):
        return "verb"
    if first in _ADJECTIVES or (len(words) == 1 and first.endswith(_ADJ_ENDINGS)):
        return "adjective"
    return "noun"


def build(analysis: Analysis) -> Check:
    """The check for this analysis (dispatch on its kind)."""
    from toolkit.prompts.checks import (
        acronyms,
        layout,
        lengths,
        markup,
        openers,
        privacy,
        readability,
        structure,
        words,
    )

    builders = {
        "terminology": words.terminology,
        "claims": words.claims,
        "tone": words.tone,
        "spelling_grammar": words.spelling_grammar,
        "links": markup.links,
        "accessibility": markup.accessibility,
        "formatting": layout.formatting,
        "numbers_dates": layout.numbers_dates,
        "required_elements": layout.required_elements,
        "lengths": lengths.lengths,
        "personal_data": privacy.personal_data,
        "structure": structure.structure,
        "acronyms": acronyms.acronyms,
        "readability": readability.readability,
        "openers": openers.openers,
    }
    check = builders[analysis.kind](analysis)
    check.notes.extend(analysis.notes)
    return check
