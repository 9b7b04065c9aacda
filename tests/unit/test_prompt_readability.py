"""The reading-level check (semantics §11): the grade is read from the instruction, and each
demo paragraph's Flesch–Kincaid grade — computed here from the rule the prompt states, by an
implementation of its own — is above the limit exactly in the detected tiers."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from toolkit.prompts import analyse, validate_prompt


def stated_grade(paragraph: str) -> float:
    """The prompt's rule, written out again: vowel groups less a silent final e, at least one."""

    def syllables(word: str) -> int:
        letters = "".join(c for c in word.lower() if c.isalpha())
        groups, previous = 0, False
        for c in letters:
            vowel = c in "aeiouy"
            groups += vowel and not previous
            previous = vowel
        silent = letters.endswith("e") and not letters.endswith(("le", "ee")) and groups > 1
        return max(1, groups - silent)

    words = paragraph.split()
    sentences = max(1, len(re.findall(r"[.!?]+", paragraph)))
    return 0.39 * len(words) / sentences + 11.8 * sum(map(syllables, words)) / len(words) - 15.59


class Paragraphs(HTMLParser):
    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.texts: list[str] = []
        self._in = False
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        if tag == "p":
            self._in = True
            self.texts.append("")

    def handle_endtag(self, tag):
        self._in = self._in and tag != "p"

    def handle_data(self, data):
        if self._in:
            self.texts[-1] += data


@pytest.mark.parametrize(
    "prompt, limit",
    [
        ("Ensure the reading level is grade 8 or below.", 8),
        ("Write at a 6th grade reading level", 6),
        ("Write for grade 3", 3),
        ("Aim for grade 12", 12),
        ("Text must be at a grade level of 16 or lower", 16),
        ("Keep readability high", 8),
    ],
)
def test_demo_paragraphs_are_above_the_grade_exactly_when_detected(prompt, limit):
    assert analyse(prompt).kind == "readability"
    result = validate_prompt(prompt)
    assert f"grade {limit} or below" in result["analysis_prompt"].splitlines()[0]
    for case in result["demos"]["cases"]:
        grades = [stated_grade(t) for t in Paragraphs(case["html"]).texts]
        assert grades and any(g > limit for g in grades) == (case["expected"] == "detected"), (case["tier"], grades)
        assert f"grade {max(grades):.1f}" in case["reason"]


def test_no_grade_named_assumes_grade_eight_and_says_so():
    text = validate_prompt("Keep readability high")["analysis_prompt"]
    assert "names no grade" in text[text.index("## Notes") :]
