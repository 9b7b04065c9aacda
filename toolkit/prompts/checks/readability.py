"""Reading level: the Flesch–Kincaid grade of each paragraph, against the grade the instruction
names ("grade 8 or below"; grade 8 when it names none).

The grade is computed exactly as the check's prompt states it, so the demo paragraphs are
chosen by computing it: well above the grade, just above it, just within it, well within it.

>>> round(grade("The cat sat on the mat."), 1)
-1.4
"""

from __future__ import annotations

import re
from functools import cache
from itertools import product

from toolkit.prompts.analysis import Analysis
from toolkit.prompts.checks import Case, Check, check, esc, page, said

DEFAULT_GRADE = 8

_PLAIN = (
    "You pick a day.",
    "We send the report.",
    "It lands in your inbox.",
    "Your team reads it first thing.",
    "No one has to copy a sheet by hand.",
    "You can stop it at any time.",
)
_MEDIUM = (
    "Scheduled exports deliver your reports every Monday morning.",
    "Administrators can pause a schedule from the settings page.",
    "Each report arrives as a spreadsheet attachment.",
)
_DENSE = (
    "Organizational stakeholders consequently receive comprehensive analytical documentation automatically.",
    "Administrative configuration facilitates individualized distribution methodologies.",
    "Consolidated performance visualizations substantially accelerate operational decision-making.",
)


def syllables(word: str) -> int:
    """Vowel groups (a e i o u y), less a silent final "e", at least one."""
    w = re.sub(r"[^a-z]", "", word.lower())
    count = len(re.findall(r"[aeiouy]+", w))
    if w.endswith("e") and not w.endswith(("le", "ee")) and count > 1:
        count -= 1
    return max(1, count)


def grade(text: str) -> float:
    """Flesch–Kincaid grade: 0.39 × words per sentence + 11.8 × syllables per word − 15.59."""
    sentences = max(1, len(re.findall(r"[.!?]+", text)))
    words = text.split()
    return 0.39 * len(words) / sentences + 11.8 * sum(syllables(w) for w in words) / len(words) - 15.59


def target(instruction: str) -> tuple[int, bool]:
    """The highest grade allowed, and whether the instruction named it."""
    low = instruction.lower()
    m = re.search(r"\bgrade(?: level)?(?: of)?[- ]?(\d{1,2})\b|\b(\d{1,2})(?:st|nd|rd|th)?[- ]grade\b", low)
    if m:
        n = int(m.group(1) or m.group(2))
        if 3 <= n <= 16:
            return n, True
    return DEFAULT_GRADE, False


@cache
def _mixes() -> list[tuple[float, str]]:
    """Every paragraph of two to seven plain, medium and dense sentences, with its grade
    (computed once: the choice below runs for every validation request)."""
    texts = (
        " ".join(_MEDIUM[:m] + _DENSE[:d] + _PLAIN[:p])
        for p, m, d in product(range(7), range(4), range(4))
        if 2 <= p + m + d <= 7
    )
    return [(grade(text), text) for text in texts]


def _paragraph(lo: float, hi: float, goal: float) -> str:
    """The mix of plain, medium and dense sentences whose grade lies in [lo, hi], nearest ``goal``."""
    best: tuple[float, str] | None = None
    for g, text in _mixes():
        if lo <= g <= hi and (best is None or abs(g - goal) < best[0]):
            best = (abs(g - goal), text)
    assert best is not None, f"no paragraph of grade {lo}–{hi}"
    return best[1]


def readability(a: Analysis) -> Check:
    n, named = target(a.instruction)
    texts = {
        "obvious_match": _paragraph(n + 4, 40, n + 8),
        "subtle_match": _paragraph(n + 0.2, n + 2.5, n + 1),
        "near_miss": _paragraph(n - 1.5, n - 0.2, n - 0.5),
        "clean": _paragraph(-10, n - 3, n - 6),
    }
    about = {
        "obvious_match": ("well above the grade", "Dense, abstract prose"),
        "subtle_match": ("just above the grade", "Slightly too hard"),
        "near_miss": ("just within the grade", "Close to the limit"),
        "clean": ("well within the grade", "Plain prose"),
    }
    cases = [
        Case(
            tier,
            about[tier][0],
            about[tier][1],
            page("Scheduled exports", f"<p>{esc(text)}</p>"),
            f"The paragraph reads at grade {grade(text):.1f}; the limit is grade {n}.",
        )
        for tier, text in texts.items()
    ]
    return check(
        issue_type="readability",
        name=f"Reading level: grade {n} or below",
        objective=f"Find paragraphs that read above grade {n} (“{said(a)}”)."
        + ("" if named else f" The instruction names no grade, so the check uses grade {n}."),
        look_at=["Every paragraph of body text (`<p>`, list items taken together as one paragraph)"],
        ignore=["Headings, captions, code and tables", "Product names and quoted text"],
        rules=[
            "For each paragraph, count sentences (runs of . ! ?), words (separated by spaces) and syllables.",
            "Syllables of a word: its groups of vowels (a, e, i, o, u, y), less one for a silent final “e” "
            "(not “-le” or “-ee”), and at least one.",
            "Grade = 0.39 × words per sentence + 11.8 × syllables per word − 15.59 (Flesch–Kincaid).",
            f"Flag a paragraph whose grade is above {n}; grade {n} itself is allowed.",
            "Report the paragraph's hardest sentence as targetText, with the paragraph's grade in the title.",
            "Suggest that sentence in shorter sentences and plainer words.",
        ],
        not_issues=[f"A paragraph at grade {n} or below", "Long product or feature names the page cannot avoid"],
        cases=cases,
        reads="markup",
        severity="medium when more than two grades above the limit, low otherwise",
        title_hint=f"Paragraph at grade 14.2 (limit {n})",
        target_hint="the paragraph's hardest sentence",
        suggestion_hint="the sentence split and in plainer words",
        notes=[]
        if named
        else [f"The instruction names no grade; the check assumes grade {n}. Name one (“grade 6 or below”)."],
    )
