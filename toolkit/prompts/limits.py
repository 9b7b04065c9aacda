"""Read a length or count limit from an instruction: "Flag sentences longer than 30 words",
"Meta descriptions must be under 160 characters", "Lists need at least three items".

A :class:`Limit` says what is measured (a sentence, a heading, a list…), in which unit, and
the bound: ``max`` allows at most ``n``, ``min`` at least ``n`` — both inclusive, so "under 60
characters" is ``max 59`` and "longer than 30 words" is ``max 30``.

>>> read_limit("Flag sentences longer than 30 words.")
Limit(subject='sentence', unit='words', bound='max', n=30, assumed=False)
>>> read_limit("Make sure bullet lists have at least three items")
Limit(subject='list', unit='items', bound='min', n=3, assumed=False)
>>> read_limit("Keep headings short").n  # no number: the house limit, in characters
70
>>> read_limit("Write numbers under 10 as words") is None
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# subject: (pattern, units it can be measured in, unit when the instruction names none)
SUBJECTS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "page_title": (
        r"\b(?:page|seo|meta|browser|html) titles?\b|\btitle (?:tags?|elements?)\b",
        ("characters", "words"),
        "characters",
    ),
    "meta_description": (r"\bmeta descriptions?\b", ("characters", "words"), "characters"),
    "alt_text": (r"\balt(?:[- ]texts?| attributes?)\b|\balternative texts?\b", ("characters", "words"), "characters"),
    "link_text": (r"\blink texts?\b|\blink labels?\b", ("words", "characters"), "words"),
    "button": (
        r"\bbuttons?(?: (?:labels?|texts?))?\b|\bctas?\b|\bcalls? to action\b",
        ("words", "characters"),
        "words",
    ),
    "list_item": (r"\b(?:bullet points?|bullets|list items?)\b", ("words", "characters"), "words"),
    "list": (r"\b(?:(?:bullet(?:ed)?|numbered|ordered|unordered) )?lists?\b", ("items",), "items"),
    "heading": (r"\b(?:sub)?(?:headings?|headlines?|titles?|h[1-6])\b", ("words", "characters"), "words"),
    "paragraph": (r"\bparagraphs?\b", ("words", "sentences", "characters"), "words"),
    "sentence": (r"\bsentences?\b", ("words", "characters"), "words"),
    "page": (
        r"\b(?:web ?pages?|pages?|blog posts?|posts?|articles?|copy|documents?|emails?|newsletters?)\b",
        ("words", "sentences", "paragraphs"),
        "words",
    ),
}

# How a note names the subjects, plural.
PLURALS = {
    "sentence": "sentences",
    "paragraph": "paragraphs",
    "heading": "headings",
    "page_title": "page titles",
    "meta_description": "meta descriptions",
    "alt_text": "alt texts",
    "link_text": "link texts",
    "button": "button labels",
    "list_item": "list items",
    "list": "lists",
    "page": "pages",
}

# The largest limit the demos are written for; a longer one is not read as a limit.
MAX_N = {"words": 2000, "characters": 5000, "sentences": 60, "paragraphs": 40, "items": 60}

_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety"
)
_WORDS = dict(zip(_NUMBER_WORDS.split(), [*range(21), *range(30, 100, 10)]))
_NUM = r"(\d{1,3}(?:,\d{3})+|\d+|" + "|".join(sorted(_WORDS, key=len, reverse=True)) + r")"
_UNIT = (
    r"(words?|characters?|chars?|letters?|sentences?|paragraphs?|items?|entries|entry|bullets?|bullet points?|points?)"
)
_UNIT_NAMES = {  # how an instruction writes a unit -> the unit
    **dict.fromkeys(("word", "words"), "words"),
    **dict.fromkeys(("character", "characters", "char", "chars", "letter", "letters"), "characters"),
    **dict.fromkeys(("sentence", "sentences"), "sentences"),
    **dict.fromkeys(("paragraph", "paragraphs"), "paragraphs"),
    **dict.fromkeys(("item", "items", "entry", "entries", "bullet", "bullets", "point", "points"), "items"),
    **dict.fromkeys(("bullet point", "bullet points"), "items"),
}

# (pattern around the number, bound, offset added to the number): first match wins, so the
# negated forms ("no more than") come before the bare ones ("more than").
_COMPARATORS = (
    (rf"\b(?:no|not|never) (?:more|longer|greater|bigger) than {_NUM}", "max", 0),
    (rf"\b(?:no|not|never) (?:fewer|less|shorter) than {_NUM}", "min", 0),
    (rf"\b(?:at most|up to|(?:a )?maximum(?: of)?|max|within|limit(?:ed)?(?: of| to)?) {_NUM}", "max", 0),
    (rf"\b(?:at least|(?:a )?minimum(?: of)?|min) {_NUM}", "min", 0),
    (rf"\b{_NUM}[- ](?:\w+ )?or (?:fewer|less|under)\b", "max", 0),
    (rf"\b{_NUM}[- ](?:\w+ )?or more\b", "min", 0),
    (rf"\b(?:fewer|less|shorter) than {_NUM}", "max", -1),
    (rf"\b(?:under|below) {_NUM}", "max", -1),
    (rf"\b{_NUM}[- ](?:word|character|char|sentence|item)s? (?:limit|maximum|max|cap)\b", "max", 0),
    (rf"\b(?:more|longer|greater|bigger) than {_NUM}", "over", 1),
    (rf"\b(?:over|above|exceed(?:s|ing)?|in excess of) {_NUM}", "over", 1),
)
_FLAGGING = re.compile(
    r"\b(?:flag|avoid|report|find|highlight|catch|detect|no|not|never|don'?t|shouldn'?t|too long|too many)\b"
)


@dataclass(frozen=True)
class Limit:
    subject: str  # a key of SUBJECTS
    unit: str  # words, characters, sentences, paragraphs or items
    bound: str  # "max" or "min"
    n: int  # the inclusive bound
    assumed: bool = False  # the instruction said "long" but gave no number: n is the house default

    def allows(self, count: int) -> bool:
        return count <= self.n if self.bound == "max" else count >= self.n


def _number(token: str) -> int:
    return _WORDS[token] if token in _WORDS else int(token.replace(",", ""))


def _unit_after(low: str, end: int) -> tuple[str | None, int]:
    m = re.match(rf"[- ](?:(?:total|more|fewer|full) )?{_UNIT}\b", low[end:])
    if not m:
        return None, end
    return _UNIT_NAMES[m.group(1)], end + m.end()


def _subject(low: str, span: tuple[int, int], unit: str | None) -> str | None:
    """The thing measured: the non-page subject nearest before the comparator (else the first
    after it), a page only when nothing more specific is named."""
    found: list[tuple[int, int, str]] = []
    for key, (pattern, _, _) in SUBJECTS.items():
        for m in re.finditer(pattern, low):
            if span[0] <= m.start() < span[1]:
                continue  # the unit itself ("5 sentences"), not the subject
            if key == "list" and unit == "items" and re.match(r"\s*items?", low[m.end() :]):
                continue
            found.append((m.start(), m.end(), key))
    # where two matches overlap, the longer one ("page title" over "title") names the subject
    found = [f for f in found if not any(g != f and g[0] <= f[0] and f[1] <= g[1] for g in found)]
    specific = [f for f in found if f[2] != "page"]
    pool = specific or found
    if not pool:
        return None
    before = [f for f in pool if f[1] <= span[0]]
    return (max(before, key=lambda f: f[1]) if before else min(pool))[2]


# "Flag long sentences" and "Keep headings short" name no number: the check uses a common
# house-style limit and says so.
DEFAULT_MAX = {
    "sentence": ("words", 25),
    "paragraph": ("words", 150),
    "heading": ("characters", 70),
    "page_title": ("characters", 60),
    "meta_description": ("characters", 160),
    "alt_text": ("characters", 125),
    "link_text": ("words", 8),
    "button": ("words", 4),
    "list_item": ("words", 25),
    "list": ("items", 10),
    "page": ("words", 1500),
}
_LONG = r"(?:too |overly |very |excessively )?(?:long|lengthy|wordy)"


def _assumed(low: str) -> Limit | None:
    if re.search(r"\bwalls? of text\b", low):
        unit, n = DEFAULT_MAX["paragraph"]
        return Limit("paragraph", unit, "max", n, assumed=True)
    for key, (pattern, _, _) in SUBJECTS.items():
        long_before = re.search(rf"(?<!as ){_LONG}\s+(?:[a-z-]+\s+)?(?:{pattern})", low)
        long_after = re.search(
            rf"(?:{pattern})\s+(?:that |which )?(?:are |is )?(?:too long|overly long|very long)\b", low
        )
        short = re.search(
            rf"\b(?:short|concise|brief)\s+(?:[a-z-]+\s+)?(?:{pattern})|\bkeep (?:the |all |every |each )?(?:{pattern})"
            rf"\s+(?:short|concise|brief)\b|(?:{pattern})\s+(?:should|must|need to|have to) (?:be|stay) "
            r"(?:short|concise|brief)\b",
            low,
        )
        many = key == "list" and re.search(rf"(?:{pattern})\s+(?:with |that have |having )?too many items\b", low)
        if long_before or long_after or short or many:
            unit, n = DEFAULT_MAX[key]
            return Limit(key, unit, "max", n, assumed=True)
    return None


def read_limit(text: str) -> Limit | None:
    """The length or count limit the instruction sets, or None when it sets none we can demo.

    "Flag long sentences", with no number, gets the subject's house default (:data:`DEFAULT_MAX`)
    and ``assumed=True``.
    """
    low = text.lower()
    if re.search(rf"\bbetween {_NUM} and {_NUM}", low):
        return None  # a range needs two checks; the instruction is read some other way
    for pattern, bound, offset in _COMPARATORS:
        m = re.search(pattern, low)
        if not m:
            continue
        n = _number(m.group(1))
        unit, unit_end = _unit_after(low, m.end())
        if unit is None:
            before = re.search(rf"{_NUM}[- ]{_UNIT}", m.group(0))
            if before:
                unit = _UNIT_NAMES[before.group(2)]
        if unit is None and re.search(r"\bword count\b", low):
            unit = "words"
        if unit is None and re.search(r"\bcharacter (?:count|limit)\b", low):
            unit = "characters"
        if unit is None and any(re.match(rf"\s*(?:{SUBJECTS[k][0]})", low[m.end() :]) for k in SUBJECTS):
            return None  # "at most one H1": a count of elements, not a length
        subject = _subject(low, (m.start(), unit_end), unit)
        if subject is None:
            if unit not in ("words", "sentences", "paragraphs"):
                return None
            subject = "page"
        units, default = SUBJECTS[subject][1], SUBJECTS[subject][2]
        unit = unit or default
        if unit not in units:
            return None
        if bound == "over":
            bound = "max" if _FLAGGING.search(low) else "min"
            n = n if bound == "max" else n + offset
        else:
            n += offset
        least = 1 if bound == "max" else 3 if unit == "characters" else 2
        if not least <= n <= MAX_N[unit]:
            return None  # "at least one word" asks for something, not for a length
        return Limit(subject, unit, bound, n)
    return _assumed(low)
