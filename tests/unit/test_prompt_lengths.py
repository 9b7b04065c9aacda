"""Length and count limits in the prompt validator (semantics §11): the instruction's limit is
read exactly, the check names it, and every demo page really is over, at or within it —
measured here by an independent reader of the demo HTML."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.prompts import analyse, validate_prompt
from toolkit.prompts.checks.lengths import chars, words
from toolkit.prompts.limits import Limit, read_limit

_ELEMENTS = {
    "paragraph": ("p",),
    "heading": ("h1", "h2", "h3", "h4", "h5", "h6"),
    "page_title": ("title",),
    "link_text": ("a",),
    "button": ("button",),
    "list_item": ("li",),
}


class Measure(HTMLParser):
    """The texts of every element of interest in a demo page, and the item count of each list."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.texts: dict[str, list[str]] = {k: [] for k in _ELEMENTS}
        self.texts |= {"alt_text": [], "meta_description": [], "body": []}
        self.lists: list[int] = []
        self._open: list[tuple[str, str]] = []  # (subject, tag) whose text is being collected
        self._in_head = False
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "head":
            self._in_head = True
        if tag in ("ul", "ol"):
            self.lists.append(0)
        if tag == "li" and self.lists:
            self.lists[-1] += 1
        if tag == "img":
            self.texts["alt_text"].append(a.get("alt", ""))
        if tag == "meta" and a.get("name") == "description":
            self.texts["meta_description"].append(a.get("content", ""))
        for subject, tags in _ELEMENTS.items():
            if tag in tags:
                self.texts[subject].append("")
                self._open.append((subject, tag))

    def handle_endtag(self, tag):
        if tag == "head":
            self._in_head = False
        self._open = [(s, t) for s, t in self._open if t != tag]

    def handle_data(self, data):
        for subject, _ in self._open:
            self.texts[subject][-1] += data
        if not self._in_head:
            self.texts["body"].append(data)

    def sentences(self) -> list[str]:
        return [s.strip() for s in re.findall(r"[^.!?]+[.!?]", " ".join(self.texts["paragraph"]))]

    def counts(self, limit: Limit) -> list[int]:
        """Each measured instance of the limit's subject, in the limit's unit."""
        if limit.subject == "list":
            return self.lists
        if limit.subject == "page":
            if limit.unit == "paragraphs":
                return [len(self.texts["paragraph"])]
            body = " ".join(t.strip() for t in self.texts["body"] if t.strip())
            return [len(body.split()) if limit.unit == "words" else len(re.findall(r"[^.!?]+[.!?]", body))]
        texts = self.sentences() if limit.subject == "sentence" else self.texts[limit.subject]
        if limit.unit == "words":
            return [len(t.split()) for t in texts]
        if limit.unit == "characters":
            return [len(t.strip()) for t in texts]
        return [len(re.findall(r"[^.!?]+[.!?]", t)) for t in texts]


LIMITS = [
    ("Flag sentences longer than 30 words.", Limit("sentence", "words", "max", 30)),
    ("Avoid sentences over 40 words", Limit("sentence", "words", "max", 40)),
    ("Sentences should not be longer than 25 words", Limit("sentence", "words", "max", 25)),
    ("Flag paragraphs with more than 5 sentences.", Limit("paragraph", "sentences", "max", 5)),
    ("Paragraphs must have more than two sentences", Limit("paragraph", "sentences", "min", 3)),
    ("Keep paragraphs to at most 80 words", Limit("paragraph", "words", "max", 80)),
    ("Check that the page title is under 60 characters.", Limit("page_title", "characters", "max", 59)),
    ("Meta descriptions must be no more than 160 characters", Limit("meta_description", "characters", "max", 160)),
    ("Enforce a 160-character limit on meta descriptions", Limit("meta_description", "characters", "max", 160)),
    ("Blog post titles must be under 70 characters", Limit("heading", "characters", "max", 69)),
    ("Flag headings in blog posts that are longer than 8 words", Limit("heading", "words", "max", 8)),
    ("Headlines should have at least 4 words", Limit("heading", "words", "min", 4)),
    ("Alt text should be 125 characters or fewer", Limit("alt_text", "characters", "max", 125)),
    ("Link text must be at most 5 words", Limit("link_text", "words", "max", 5)),
    ("Buttons: maximum 3 words", Limit("button", "words", "max", 3)),
    ("Keep bullet points under 12 words", Limit("list_item", "words", "max", 11)),
    ("Make sure bullet lists have at least three items", Limit("list", "items", "min", 3)),
    ("Flag lists with more than 7 items", Limit("list", "items", "max", 7)),
    ("Flag pages longer than 1500 words.", Limit("page", "words", "max", 1500)),
    ("Keep the word count under 800", Limit("page", "words", "max", 799)),
    ("Flag pages with more than 10 paragraphs", Limit("page", "paragraphs", "max", 10)),
    ("Blog posts need at least 300 words", Limit("page", "words", "min", 300)),
]


@pytest.mark.parametrize("prompt, limit", LIMITS)
def test_the_limit_is_read_from_the_instruction(prompt, limit):
    assert read_limit(prompt) == limit
    a = analyse(prompt)
    assert (a.kind, a.facet, a.limit, a.terms) == ("lengths", limit.subject, limit, ())


ASSUMED = [
    ("Flag long sentences.", Limit("sentence", "words", "max", 25, assumed=True)),
    ("Use short sentences", Limit("sentence", "words", "max", 25, assumed=True)),
    ("Flag walls of text.", Limit("paragraph", "words", "max", 150, assumed=True)),
    ("Keep paragraphs short.", Limit("paragraph", "words", "max", 150, assumed=True)),
    ("Avoid overly long headlines", Limit("heading", "characters", "max", 70, assumed=True)),
    ("Page titles that are too long", Limit("page_title", "characters", "max", 60, assumed=True)),
    ("Flag lengthy meta descriptions", Limit("meta_description", "characters", "max", 160, assumed=True)),
    ("Keep button labels concise", Limit("button", "words", "max", 4, assumed=True)),
    ("Flag lists with too many items", Limit("list", "items", "max", 10, assumed=True)),
    ("Flag long blog posts", Limit("page", "words", "max", 1500, assumed=True)),
]


@pytest.mark.parametrize("prompt, limit", ASSUMED)
def test_a_length_without_a_number_takes_the_house_limit_and_says_so(prompt, limit):
    assert read_limit(prompt) == limit
    text = validate_prompt(prompt)["analysis_prompt"]
    notes = text[text.index("## Notes") :]
    assert "gives no number" in notes and f"at most {limit.n} {limit.unit}" in notes
    assert "common house-style limit" in text[text.index("## Objective") : text.index("## Scope")]


@pytest.mark.parametrize(
    "prompt, kind, subjects",
    [
        ("Avoid jargon and long sentences", "tone", "sentences"),
        ("Flag long sentences and passive voice", "tone", "sentences"),
        ("Keep paragraphs short and avoid all caps", "formatting", "paragraphs"),
    ],
)
def test_a_length_without_a_number_yields_to_a_subject_the_instruction_names(prompt, kind, subjects):
    a = analyse(prompt)
    assert (a.kind, a.limit) == (kind, None)
    assert any(f"also asks for short {subjects}" in note for note in a.notes)


@pytest.mark.parametrize("prompt", ["Keep it as long as needed", "Flag long-term promises", "Give a brief summary"])
def test_long_and_short_outside_a_length_are_not_limits(prompt):
    assert read_limit(prompt) is None


@pytest.mark.parametrize(
    "prompt",
    [
        "Write numbers under 10 as words",  # numbers to spell out, not a length
        "Use at most one H1 per page",  # a count of elements
        "Headlines between 30 and 60 characters",  # a range
        "Don't use more than 2 exclamation marks",
        "Prices under $100 need a note",
        "Flag pages longer than 90000 words",  # longer than demos are written for
    ],
)
def test_numbers_that_are_not_a_length_limit_are_not_read_as_one(prompt):
    assert read_limit(prompt) is None
    assert analyse(prompt).kind != "lengths"


@pytest.mark.parametrize("prompt, limit", LIMITS + ASSUMED)
def test_demo_pages_really_are_over_at_or_within_the_limit(prompt, limit):
    result = validate_prompt(prompt)
    by_tier = {c["tier"]: Measure(c["html"]).counts(limit) for c in result["demos"]["cases"]}
    for tier, counts in by_tier.items():
        assert counts, (tier, "the demo holds no instance of the subject")
        breaks = [c for c in counts if not limit.allows(c)]
        assert bool(breaks) == (tier in ("obvious_match", "subtle_match")), (tier, counts)
    past = 1 if limit.bound == "max" else -1
    assert limit.n + past in by_tier["subtle_match"], "the subtle case is one unit past the limit"
    assert limit.n in by_tier["near_miss"], "the near miss sits exactly on the limit"


@pytest.mark.parametrize("prompt, limit", LIMITS)
def test_the_check_states_the_limit_and_how_to_count(prompt, limit):
    result = validate_prompt(prompt)
    text = result["analysis_prompt"]
    unit = limit.unit if limit.n != 1 else limit.unit[:-1]
    assert f"{limit.n} {unit}" in text
    detection = text[text.index("## Detection logic") : text.index("## Output format")]
    assert "is allowed" in detection and "Count its " + limit.unit in detection
    assert "Always “length”" in result["response_descriptions"]["issueType"]
    markup = limit.subject not in ("sentence", "page") or limit.unit == "paragraphs"
    assert result["requires_tool"] == ("NONE" if markup else "TOOL_TEXT_EXTRACTOR")


def test_an_instruction_limit_is_not_turned_into_a_forbidden_term():
    # Before lengths were read, "30" was taken for a forbidden word.
    result = validate_prompt("Flag sentences longer than 30 words.")
    assert "Forbidden" not in result["analysis_prompt"]
    assert result["analysis_prompt"].startswith("# Sentences with more than 30 words")


@given(st.integers(0, 3000))
def test_prose_of_an_exact_character_count(c):
    assert len(chars(c)) == c


@given(st.integers(0, 3000), st.integers(0, 100))
def test_prose_of_an_exact_word_count(k, start):
    assert len(words(k, start).split()) == k


@settings(deadline=None)  # a 2,000-word page takes a while to write and measure
@given(
    st.sampled_from(
        [
            "Flag sentences",
            "Paragraphs must be",
            "Headlines should be",
            "Keep page titles",
            "Lists need",
            "Bullet points must be",
            "Meta descriptions",
            "Alt text must be",
            "Link text",
            "Buttons",
            "Pages must be",
        ]
    ),
    st.sampled_from(["under", "at most", "at least", "more than", "fewer than", "no more than", "over", "up to"]),
    st.one_of(st.integers(0, 6000).map(str), st.sampled_from(["one", "two", "three", "twenty", "fifty"])),
    st.sampled_from(["words", "characters", "chars", "sentences", "items", "paragraphs", "bullets", ""]),
)
def test_any_limit_read_gets_demos_that_keep_to_their_tier(subject, comparator, number, unit):
    prompt = f"{subject} {comparator} {number} {unit}".strip()
    limit = analyse(prompt).limit
    if limit is None:
        return
    for case in validate_prompt(prompt)["demos"]["cases"]:
        counts = Measure(case["html"]).counts(limit)
        assert counts and any(not limit.allows(c) for c in counts) == (case["expected"] == "detected"), case["tier"]
