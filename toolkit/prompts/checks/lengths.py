"""Length and count limits: sentences, paragraphs, headings, titles, lists… measured in words,
characters, sentences, paragraphs or items (:mod:`toolkit.prompts.limits` reads the limit).

The demo pages are written to exact counts, so each really is over, at or within the limit:
the obvious case is well past it, the subtle one a single unit past it, the near miss exactly
at it (the limit itself is allowed) and the clean page well within it.
"""

from __future__ import annotations

from itertools import cycle, islice

from toolkit.prompts.analysis import Analysis
from toolkit.prompts.checks import Case, Check, cap, check, esc, said
from toolkit.prompts.limits import PLURALS, Limit

# subject: (where to look, what to report as targetText); its names are limits.PLURALS
_SUBJECTS = {
    "sentence": ("Every sentence of the visible text (paragraphs, list items, table cells)", "the sentence"),
    "paragraph": ("Every `<p>` element", "the paragraph's first sentence"),
    "heading": ("`<h1>`–`<h6>`", "the heading text"),
    "page_title": ("The `<title>` element in `<head>`", "the whole title"),
    "meta_description": ('The `content` of `<meta name="description">`', "the whole description"),
    "alt_text": ("The `alt` attribute of every `<img>`", "the alt text"),
    "link_text": ("The text of every `<a href>` link", "the link text"),
    "button": ("The label of every `<button>`", "the label"),
    "list_item": ("The text of every `<li>`", "the item text"),
    "list": ("Every `<ul>` and `<ol>`", "the list's first item"),
    "page": ("All visible text of the page, headings included", "the page's first heading or sentence"),
}
_SINGLE = {"page", "page_title", "meta_description"}  # one per page: no compliant companion beside it

_UNIT_RULES = {
    "words": "A word is a run of letters or digits between spaces: “sign-up” and “2025” count as one word each.",
    "characters": "Every character counts, spaces and punctuation included; leading and trailing whitespace does not.",
    "sentences": "A sentence ends with “.”, “!” or “?”; abbreviations (“e.g.”) and decimals (“2.5”) do not end one.",
    "paragraphs": "Each `<p>` element is one paragraph, however short.",
    "items": "Each `<li>` directly inside the list is one item; a nested list is a list of its own.",
}

# Two complete clauses of each length from 2 to 10 words; longer texts join them with "and".
_CLAUSES = {
    2: ("exports run", "teams decide"),
    3: ("reports arrive early", "admins pause schedules"),
    4: ("each team picks formats", "files stay in Europe"),
    5: ("dashboards refresh every few minutes", "the finance team gets invoices"),
    6: ("Northwind Cloud sends your scheduled reports", "every export lands in your inbox"),
    7: ("admins can pause any schedule at will", "the weekly review starts with fresh numbers"),
    8: ("nobody has to export a spreadsheet by hand", "you choose the day and the hour yourself"),
    9: (
        "each colleague gets the latest figures before the meeting",
        "the numbers wait in every inbox on Monday morning",
    ),
    10: (
        "Northwind Cloud sends your scheduled reports to every team member",
        "the weekly review starts with the freshest numbers on Monday",
    ),
}
_SHORT = (
    "Exports run every night.",
    "Reports arrive before nine.",
    "Each team picks its own format.",
    "Dashboards refresh on their own.",
    "Admins can pause any schedule.",
    "Files stay in the EU.",
)
_ITEMS = (
    "Weekly sales report",
    "Monthly churn summary",
    "Quarterly revenue forecast",
    "Daily sign-up count",
    "Support ticket backlog",
    "Inventory by warehouse",
    "Marketing spend by channel",
    "Open invoices",
)
# a closing phrase of each length, to end a text on an exact character count
_ENDINGS = {
    len(e): e
    for e in (
        "a",
        "EU",
        "now",
        "fast",
        "today",
        "weekly",
        "for you",
        "by email",
        "every day",
        "in seconds",
        "for finance",
        "in one click",
        "without delay",
        "for every team",
        "in a few clicks",
        "from any browser",
        "before the review",
        "in every time zone",
        "on the first Monday",
        "for the finance team",
    )
}


def words(k: int, start: int = 0) -> str:
    """Prose of exactly ``k`` words, first letter capitalised, no final stop.

    >>> words(9)
    'Each colleague gets the latest figures before the meeting'
    """
    if k <= 1:
        return "Exports" if k == 1 else ""
    parts, left, i = [], k, start
    while left > 10:  # a clause, then "and", leaving at least two words for the next one
        size = min(10, left - 3)
        parts.append(_CLAUSES[size][i % 2])
        left -= size + 1
        i += 1
    parts.append(_CLAUSES[left][i % 2])
    return cap(" and ".join(parts))


def chars(c: int) -> str:
    """Prose of exactly ``c`` characters, first letter capitalised, no final stop: whole clauses
    joined by "and", then a closing phrase of the exact length left."""
    text = ""
    while c - len(text) > len(_ENDINGS) + (1 if text else 0):
        need = c - len(text)
        sep = " and " if text else ""
        # the longest clause not just used that leaves nothing, or room for " " and a closing
        # phrase of four characters or more (one or two read as a stray word)
        fits = [p for pair in _CLAUSES.values() for p in pair if not text.endswith(p)]
        clause = max(
            (p for p in fits if need - len(sep + p) in (0, *range(5, need))),
            default=max((p for p in fits if need - len(sep + p) in (0, *range(2, need))), key=len),
            key=len,
        )
        text += sep + clause
    left = c - len(text)
    if left:
        text += " " + _ENDINGS[left - 1] if text else _ENDINGS[left]
    return cap(text)


def _sentences(k: int) -> str:
    return " ".join(islice(cycle(_SHORT), k))


def _prose(k: int, per_sentence: int = 12) -> str:
    """``k`` words as sentences of at most ``per_sentence`` words."""
    parts, done = [], 0
    while done < k:
        take = min(per_sentence, k - done)
        parts.append(words(take, done) + ".")
        done += take
    return " ".join(parts)


def _text(limit: Limit, count: int, stop: bool) -> str:
    """Text of ``count`` of the limit's unit (words or characters), ending in a stop when asked."""
    if limit.unit == "characters":
        return chars(count - 1) + "." if stop else chars(count)
    return words(count) + ("." if stop else "") if count else ""


def _html(limit: Limit, count: int) -> str:
    """One instance of the subject measuring ``count``."""
    s, u = limit.subject, limit.unit
    if s == "paragraph":
        body = _sentences(count) if u == "sentences" else _prose(count) if u == "words" else _text(limit, count, True)
        return f"<p>{esc(body)}</p>"
    if s == "heading":
        return f"<h2>{esc(_text(limit, count, False))}</h2>"
    if s == "alt_text":
        return f'<img src="/img/exports.png" alt="{esc(_text(limit, count, False))}">'
    if s == "link_text":
        return f'<p>See <a href="https://northwind.example/docs/exports">{esc(_text(limit, count, False))}</a>.</p>'
    if s == "button":
        return f'<button type="button">{esc(_text(limit, count, False))}</button>'
    if s == "list":
        labels = [
            _ITEMS[i % len(_ITEMS)] + (f" {i // len(_ITEMS) + 1}" if i >= len(_ITEMS) else "") for i in range(count)
        ]
        return "<ul>" + "".join(f"<li>{esc(t)}</li>" for t in labels) + "</ul>"
    if s == "page_title":
        return f"<title>{esc(_text(limit, count, False))}</title>"
    if s == "meta_description":
        return f'<meta name="description" content="{esc(_text(limit, count, True))}">'
    if u == "paragraphs":
        return "\n  ".join(f"<p>{esc(_SHORT[i % len(_SHORT)])}</p>" for i in range(count))
    if u == "sentences":
        return "\n  ".join(f"<p>{esc(_sentences(min(3, count - i)))}</p>" for i in range(0, count, 3))
    return "\n  ".join(f"<p>{esc(_prose(min(60, count - i)))}</p>" for i in range(0, count, 60))


def _page(limit: Limit, counts: list[int]) -> str:
    if limit.subject in ("page_title", "meta_description"):
        head = "".join(_html(limit, c) for c in counts)
        if limit.subject == "meta_description":
            head = "<title>Scheduled exports</title>" + head
        return f"<html><head>{head}</head><body><p>{esc(_SHORT[0])}</p></body></html>"
    if limit.subject == "sentence":  # the sentences side by side in one paragraph
        blocks = ["<p>" + " ".join(esc(_text(limit, c, True)) for c in counts) + "</p>"]
    elif limit.subject == "list_item":  # the items in one list
        blocks = ["<ul>" + "".join(f"<li>{esc(_text(limit, c, False))}</li>" for c in counts) + "</ul>"]
    else:
        blocks = [_html(limit, c) for c in counts]
    return "<article>\n  " + "\n  ".join(blocks) + "\n</article>"


def _counts(limit: Limit) -> dict[str, int]:
    n = limit.n
    if limit.bound == "max":
        return {
            "far": n + max(3, n // 4),
            "off": n + 1,
            "at": n,
            "well": max(1, n // 2),
            "companion": min(max(1, n // 2), 8),
        }
    far = max(2 if limit.unit == "characters" else 1, n - max(2, n // 2))  # "A." is the shortest sentence
    well = n + max(2, n // 2)
    return {"far": far, "off": n - 1, "at": n, "well": well, "companion": well}


def _unit_name(unit: str, count: int) -> str:
    return unit[:-1] if count == 1 else unit


def lengths(a: Analysis) -> Check:
    limit = a.limit
    assert limit is not None, "a length check is built only for an instruction with a limit"
    many = PLURALS[limit.subject]
    one = many[:-1]  # every plural there is the singular and an "s"
    where, target = _SUBJECTS[limit.subject]
    unit, n = limit.unit, limit.n
    k = _counts(limit)
    over = limit.bound == "max"
    single = limit.subject in _SINGLE

    def pages(*counts: int) -> str:
        return _page(limit, [counts[-1]] if single else list(counts))

    def measured(count: int) -> str:
        return f"{count} {_unit_name(unit, count)}"

    rule = f"at most {measured(n)}" if over else f"at least {measured(n)}"
    allows = ("the check" if limit.assumed else "the instruction") + (" allows" if over else " requires")
    past = "over" if over else "under"
    cases = [
        Case(
            "obvious_match",
            f"{one} well {past} the limit",
            f"{cap(one)} of {measured(k['far'])}",
            pages(k["far"]),
            f"The {one} has {measured(k['far'])}; {allows} {rule}.",
        ),
        Case(
            "subtle_match",
            f"one {_unit_name(unit, 1)} {past} the limit",
            f"{cap(one)} of {measured(k['off'])}",
            pages(k["companion"], k["off"]),
            f"Only one {_unit_name(unit, 1)} {'too many' if over else 'short'}: {measured(k['off'])} against {rule}.",
        ),
        Case(
            "near_miss",
            "exactly at the limit",
            f"{cap(one)} of exactly {measured(n)}",
            pages(k["companion"], k["at"]),
            f"{measured(n).capitalize()} is the limit itself, which is allowed.",
        ),
        Case(
            "clean",
            "well within the limit",
            f"{cap(many)} within the limit",
            pages(k["well"], k["companion"]),
            f"Every {one} has {rule}.",
        ),
    ]
    reads = "text" if limit.subject == "sentence" or (limit.subject == "page" and unit != "paragraphs") else "markup"
    bad = f"more than {measured(n)}" if over else f"fewer than {measured(n)}"
    return check(
        issue_type="length",
        name=f"{cap(many)} with {bad}",
        objective=f"Find every {one} with {bad}: {allows} {rule} (“{said(a)}”)."
        + (" The instruction gives no number, so this is a common house-style limit." if limit.assumed else ""),
        look_at=[where],
        ignore=["Code samples, URLs and navigation menus"]
        + ([] if limit.subject == "page" else ["anything that is not a " + one]),
        rules=[
            f"Take each {one} in scope ({where[:1].lower() + where[1:]}).",
            f"Count its {unit}. {_UNIT_RULES[unit]}",
            f"Flag it when it has {bad}; a {one} of exactly {measured(n)} is allowed.",
            f"Report {target} as targetText, and put the count and the limit in the title.",
            f"Suggest {'a shorter version that keeps the meaning' if over else 'what to add to reach the limit'}.",
        ],
        not_issues=[f"A {one} of exactly {measured(n)} (the limit itself)", "Text inside code samples and URLs"],
        cases=cases,
        reads=reads,
        severity="medium when the count is a quarter or more past the limit, low otherwise",
        title_hint=f"{cap(one)} of {measured(k['far'])} ({'limit' if over else 'minimum'} {n})",
        target_hint=target,
        suggestion_hint=(
            f"the {one} cut to at most {measured(n)}"
            + (", split in two where it carries two ideas" if limit.subject in ("sentence", "paragraph") else "")
            if over
            else f"what to add so the {one} reaches {measured(n)}"
        ),
    )
