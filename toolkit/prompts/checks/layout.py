"""Checks of form rather than wording: formatting (case, punctuation, spacing), numbers and
dates, and elements a page must include."""

from __future__ import annotations

import re

from toolkit.prompts.analysis import Analysis
from toolkit.prompts.checks import Case, Check, cap, check, demos, esc, page, quote, said

NOT_PROSE = "Code samples, URLs, file names and e-mail addresses"


# ------------------------------------------------------------------ formatting


def formatting(a: Analysis) -> Check:
    if a.facet in _TEXT_RULES:
        return _text_rule(a)
    if a.facet == "exclamation":
        return _exclamation(a)
    if a.facet == "emoji":
        return _emoji(a)
    return _heading_check(a, *_HEADING_STYLES.get(a.facet, _HEADING_STYLES["sentence_case"]))


def _heading_check(a: Analysis, style: str, wrong: tuple[str, str], near: str, right: str, rule: str) -> Check:
    cases = demos(
        (
            f"heading not in {style}",
            "Wrong case in a heading",
            page("Exports", f"<h3>{esc(wrong[0])}</h3>", "<p>Choose a format and a day.</p>"),
            f"{quote(wrong[0])} is not in {style}.",
        ),
        (
            "a single word in the wrong case",
            "One stray capital",
            page("Exports", f"<h3>{esc(right)}</h3>", f"<h3>{esc(wrong[1])}</h3>"),
            f"Only one word of {quote(wrong[1])} breaks {style}.",
        ),
        (
            "proper nouns and acronyms keep their capitals",
            "Proper nouns in a heading",
            page("Exports", f"<h3>{esc(near)}</h3>"),
            "Proper nouns and acronyms keep their capitals in any style.",
        ),
        (
            f"headings in {style}",
            f"Headings in {style}",
            page(right, f"<h3>{esc(right)}</h3>", "<p>Choose a format and a day.</p>"),
            f"Every heading follows {style}.",
        ),
    )
    return check(
        issue_type="formatting",
        name=f"Headings in {style}",
        objective=f"Find headings that are not written in {style}, as the instruction asks: “{said(a)}”.",
        look_at=["`<h1>`–`<h6>` and the page `<title>`"],
        ignore=["Body text, buttons and link text"],
        rules=[
            "Read the text of every heading.",
            rule,
            "Keep the capitals of proper nouns, product names (Northwind Cloud, Google Sheets) and acronyms "
            "(CSV, API).",
            "Report the heading as targetText and its corrected form as the suggestion.",
        ],
        not_issues=["Proper nouns and acronyms inside a heading", "Capitals produced only by CSS text-transform"],
        cases=cases,
        reads="markup",
        severity="low (medium for the page title)",
        title_hint=f"Heading not in {style}",
        target_hint="the heading text exactly as written",
        suggestion_hint=f"the heading rewritten in {style}",
    )


# facet -> (style, two headings that break it, a heading whose capitals are all proper nouns,
# a heading that follows it, the rule)
_HEADING_STYLES = {
    "sentence_case": (
        "sentence case",
        ("How To Export Your Reports", "Export reports To CSV"),
        "Export reports to Google Sheets and CSV",
        "Export your reports",
        "Sentence case: only the first word and proper nouns start with a capital letter; flag any other word "
        "that does.",
    ),
    "title_case": (
        "title case",
        ("How to export your reports", "Export Reports to csv Files"),
        "Export Reports to CSV and Google Sheets",
        "How to Export Your Reports",
        "Title case: capitalise the first and last word and every major word; articles, short conjunctions and "
        "short prepositions (a, an, the, and, or, to, of, in, on) stay lower case unless first or last.",
    ),
}


def _headings_only(a: Analysis) -> tuple[bool, str, list[str], str]:
    """Where a check of marks in the text looks: ``(only headings, where, look_at, reads)``."""
    if "headings" in a.locations:
        return True, "headings and the page title", ["`<h1>`–`<h6>` and `<title>`"], "markup"
    return False, "the visible text", ["All visible text"], "text"


def _exclamation(a: Analysis) -> Check:
    only, where, look_at, reads = _headings_only(a)
    cases = [
        Case(
            "obvious_match",
            f"exclamation mark in {'a heading' if only else 'a sentence'}",
            "Exclamation mark",
            page(
                "Spring release",
                "<h3>Scheduled exports are here!</h3>" if only else "<p>Scheduled exports are here!</p>",
            ),
            "The text ends with an exclamation mark.",
        ),
        Case(
            "subtle_match",
            "exclamation combined with other punctuation",
            "“?!” mid-text",
            page(
                "Spring release",
                "<h3>Ready to automate your reports?!</h3>"
                if only
                else "<ul><li>Tired of manual exports?! Schedule them.</li></ul>",
            ),
            "“?!” still contains an exclamation mark.",
        ),
    ]
    if only:
        cases.append(
            Case(
                "near_miss",
                "exclamation mark outside the headings",
                "Exclamation in body text",
                page("Spring release", "<h3>Scheduled exports are here</h3>", "<p>Try them today!</p>"),
                "The instruction is about headings; body text is out of scope.",
            )
        )
    cases += [
        Case(
            "near_miss",
            "“!” as an operator in code",
            "`!=` in a code sample",
            page("Filters", "<p>Exclude drafts with a filter:</p>", "<pre><code>status != 'draft'</code></pre>"),
            "`!=` is code, not punctuation.",
        ),
        Case(
            "clean",
            "calm punctuation",
            "No exclamation marks",
            page("Spring release", "<h3>Scheduled exports are here</h3>", "<p>Try them today.</p>"),
            "No exclamation marks.",
        ),
    ]
    return check(
        issue_type="formatting",
        name=f"Exclamation marks in {where}",
        objective=f"Find exclamation marks in {where}, as the instruction asks: “{said(a)}”.",
        look_at=look_at,
        ignore=["Code samples (`!=`, `!important`)"] + (["Body text outside headings"] if only else []),
        rules=[
            f"Find every “!” in {where}, including “?!”, “!!” and full-width “！”.",
            "Skip “!” inside `<code>`, `<pre>` and URLs.",
            "Report the sentence or heading that contains it; suggest the same text ending with a full stop, "
            "or none in a heading.",
        ],
        not_issues=["“!” in code and URLs"] + (["“!” in body text (only headings are checked)"] if only else []),
        cases=cases,
        reads=reads,
        severity="low",
        title_hint="Exclamation mark in a heading" if only else "Exclamation mark",
        target_hint="the heading or sentence containing “!”",
        suggestion_hint="the same text without “!”",
    )


def _emoji(a: Analysis) -> Check:
    only, where, look_at, reads = _headings_only(a)
    block = "h3" if only else "p"
    cases = demos(
        (
            f"emoji in {'a heading' if only else 'a sentence'}",
            "An emoji",
            page("Spring release", f"<{block}>🚀 Scheduled exports are here</{block}>"),
            "“🚀” is an emoji.",
        ),
        (
            "emoji at the end, after text symbols",
            "A trailing emoji",
            page("Spring release", f"<{block}>Exports, now on schedule ✅</{block}>"),
            "“✅” is an emoji too, even at the end of the line.",
        ),
        (
            "emoji outside the headings" if only else "typographic symbols that are not emoji",
            "Emoji in body text" if only else "Symbols, not emoji",
            page("Spring release", "<h3>Scheduled exports are here</h3>", "<p>Try them today 🎉</p>")
            if only
            else page("Spring release", "<p>Northwind Cloud™ exports: Settings → Schedules, © 2025.</p>"),
            "The instruction is about headings; body text is out of scope."
            if only
            else "“™”, “→” and “©” are typographic symbols, not emoji.",
        ),
        (
            "plain text",
            "No emoji",
            page("Spring release", f"<{block}>Scheduled exports are here</{block}>"),
            "No emoji.",
        ),
    )
    return check(
        issue_type="formatting",
        name=f"Emoji in {where}",
        objective=f"Find emoji in {where}, as the instruction asks: “{said(a)}”.",
        look_at=look_at,
        ignore=["Typographic symbols (™, ©, →, •)"] + (["Body text outside headings"] if only else []),
        rules=[
            f"Find every emoji in {where}: pictographs (🚀 🎉), symbols drawn as emoji (✅ ⭐), flags and "
            "sequences joined by zero-width joiners count as one.",
            "Skip typographic symbols that are letters or punctuation rather than pictures (™, ©, →, •).",
            "Report the text around the emoji as targetText; suggest the same text without it.",
        ],
        not_issues=["Typographic symbols such as ™, © and →"] + (["Emoji in body text"] if only else []),
        cases=cases,
        reads=reads,
        severity="low",
        title_hint="Emoji in a heading" if only else "Emoji in the text",
        target_hint="the heading or sentence containing the emoji",
        suggestion_hint="the same text without the emoji",
    )


# Formatting rules of the visible text that need nothing from the instruction but its facet:
# facet -> (name, objective, rules, not issues, demo rows per tier as (dimension, title, page
# title, paragraph html, reason), title hint, target hint, suggestion hint).
_TEXT_RULES = {
    "oxford_comma": (
        "Serial (Oxford) comma",
        "Find lists of three or more items without a comma before the final “and” or “or”.",
        [
            "Find series of three or more items joined by “and” or “or”.",
            "Flag a series with no comma directly before the final conjunction.",
            "Report the series as targetText and suggest it with the comma added.",
        ],
        [
            "Two-item pairs (“reports and dashboards”) need no comma",
            "Compound names that contain “and” (“Marks and Spencer”)",
        ],
        [
            (
                "three items without the comma",
                "Missing serial comma",
                "Exports",
                "<p>Export reports, dashboards and alerts.</p>",
                "No comma before “and”.",
            ),
            (
                "a longer series in a list item",
                "Four items, no comma",
                "Exports",
                "<ul><li>Choose CSV, PDF, XLSX or JSON.</li></ul>",
                "No comma before “or”.",
            ),
            (
                "a two-item pair",
                "Two items",
                "Exports",
                "<p>Export reports and dashboards.</p>",
                "Two items need no serial comma.",
            ),
            (
                "series with the comma",
                "Serial comma present",
                "Exports",
                "<p>Export reports, dashboards, and alerts.</p>",
                "The comma is there.",
            ),
        ],
        "Missing serial comma",
        "the series as written",
        "the series with a comma before the last conjunction",
    ),
    "all_caps": (
        "Words in all capitals",
        "Find words or sentences typed in capital letters for emphasis.",
        [
            "Find words of three or more letters typed entirely in capitals.",
            "Skip known acronyms and initialisms (API, CSV, PDF, SSO, EU) and product names styled that way.",
            "Report the capitalised words as targetText; suggest sentence case, or bold for emphasis.",
        ],
        ["Acronyms such as API, CSV or SSO", "Capitals produced only by CSS text-transform"],
        [
            (
                "a sentence in capitals",
                "Shouting sentence",
                "Offer",
                "<p>DO NOT MISS THIS OFFER</p>",
                "The whole sentence is in capitals.",
            ),
            (
                "one word in capitals",
                "One emphatic word",
                "Offer",
                "<p>Exports are REALLY fast now.</p>",
                "“REALLY” is capitalised for emphasis.",
            ),
            (
                "acronyms",
                "Acronyms",
                "Offer",
                "<p>Export to CSV or PDF through the API.</p>",
                "Acronyms are not shouting.",
            ),
            ("sentence case", "Normal case", "Offer", "<p>Exports are much faster now.</p>", "No word in capitals."),
        ],
        "Text in all capitals",
        "the capitalised words",
        "the same words in sentence case",
    ),
    "hashtags": (
        "Hashtags in the copy",
        "Find hashtags (#word) in the page's visible text.",
        [
            "Find words that start with “#” followed by a letter (#NorthwindCloud, #exports).",
            "Skip “#” before a number (“#1”, “issue #42”), in language names (C#, F#), in code and in link "
            'targets (href="#pricing").',
            "Report each hashtag as targetText; suggest the words without the “#”, or removing it.",
        ],
        ["“#1” rankings and issue numbers", "C# and F#", "In-page anchors in link targets"],
        [
            (
                "hashtags in a sentence",
                "Hashtags in body text",
                "Exports",
                "<p>Scheduled exports are here! #NorthwindCloud #automation</p>",
                "Two hashtags in the copy.",
            ),
            (
                "a hashtag at the end of a list item",
                "One hashtag in a list",
                "Exports",
                "<ul><li>Choose a day.</li><li>Get reports every Monday #weekly</li></ul>",
                "“#weekly” is a hashtag.",
            ),
            (
                "“#” that is not a hashtag",
                "Numbers and C#",
                "Exports",
                '<p>Rated #1 by analysts; the C# client fixes issue #42. <a href="#pricing">See pricing</a>.</p>',
                "“#1”, “#42” and “C#” are not hashtags, and an anchor's target is not copy.",
            ),
            (
                "no hashtags",
                "Plain copy",
                "Exports",
                "<p>Scheduled exports are here, and they run every Monday.</p>",
                "No hashtags.",
            ),
        ],
        "Hashtag in the copy",
        "the hashtag as written",
        "the words without the “#”",
    ),
    "spacing": (
        "Double spaces",
        "Find two or more consecutive spaces in the visible text.",
        [
            "Find runs of two or more spaces inside text (after a full stop or between words).",
            "Ignore whitespace between tags and indentation of the HTML source.",
            "Report the words on both sides of the gap as targetText; suggest a single space.",
        ],
        ["Whitespace between HTML tags", "Non-breaking spaces used on purpose (10&nbsp;GB)"],
        [
            (
                "double space between sentences",
                "Two spaces after a full stop",
                "Exports",
                "<p>Exports are faster.  Try them today.</p>",
                "Two spaces after the stop.",
            ),
            (
                "double space between words in a list",
                "Two spaces mid-item",
                "Exports",
                "<ul><li>Schedule  weekly exports</li></ul>",
                "Two spaces between words.",
            ),
            (
                "non-breaking space",
                "Non-breaking space",
                "Exports",
                "<p>Exports up to 10&nbsp;GB.</p>",
                "A single non-breaking space is intended.",
            ),
            (
                "single spaces",
                "Single spaces",
                "Exports",
                "<p>Exports are faster. Try them today.</p>",
                "Single spaces only.",
            ),
        ],
        "Double space",
        "the words around the extra space",
        "the same words with one space",
    ),
}


def _text_rule(a: Analysis) -> Check:
    name, objective, rules, not_issues, rows, title_hint, target_hint, suggestion_hint = _TEXT_RULES[a.facet]
    return check(
        issue_type="formatting",
        name=name,
        objective=objective,
        look_at=["All visible text"],
        ignore=[NOT_PROSE],
        rules=list(rules),
        not_issues=list(not_issues),
        cases=demos(
            *[(dimension, title, page(heading, html), reason) for dimension, title, heading, html, reason in rows]
        ),
        reads="text",
        severity="low",
        title_hint=title_hint,
        target_hint=target_hint,
        suggestion_hint=suggestion_hint,
    )


# ------------------------------------------------------------------ numbers and dates

_DATE_FORMATS = {  # name: (label, sample for 4 March 2025, regex that recognises the format)
    "iso": ("ISO 8601 (YYYY-MM-DD)", "2025-03-04", r"\b\d{4}-\d{2}-\d{2}\b"),
    "us": ("US numeric (MM/DD/YYYY)", "03/04/2025", r"\b\d{2}/\d{2}/\d{4}\b"),
    "eu": ("day first (DD/MM/YYYY)", "04/03/2025", r"\b\d{2}/\d{2}/\d{4}\b"),
    "long_us": (
        "Month D, YYYY",
        "March 4, 2025",
        r"\b(?:January|February|March|April|May|June|July|August|"
        r"September|October|November|December) \d{1,2}, \d{4}\b",
    ),
    "long_eu": (
        "D Month YYYY",
        "4 March 2025",
        r"\b\d{1,2} (?:January|February|March|April|May|June|July|August|"
        r"September|October|November|December) \d{4}\b",
    ),
}


def date_target(low: str) -> str:
    if re.search(r"mm/dd|\bus\b|american", low):
        return "us"
    if re.search(r"dd/mm|european|british|\buk\b", low):
        return "eu"
    if re.search(r"month d|month day|written[- ]out|spelled[- ]out month|long form", low):
        return "long_us"
    if re.search(r"d month|day month", low):
        return "long_eu"
    return "iso"


def numbers_dates(a: Analysis) -> Check:
    return {"dates": _dates, "time": _time, "currency": _currency, "phone": _phone, "percent": _percent}.get(
        a.facet, _numerals
    )(a)


def _dates(a: Analysis) -> Check:
    target = date_target(a.instruction.lower())
    label, good, _ = _DATE_FORMATS[target]
    others = [
        k
        for k in ("us", "eu", "iso", "long_us", "long_eu")
        if k != target and _DATE_FORMATS[k][1] != good and not (target in ("us", "eu") and k in ("us", "eu"))
    ]
    bad1, bad2 = _DATE_FORMATS[others[0]][1], _DATE_FORMATS[others[-1]][1]
    cases = demos(
        (
            "numeric date in another format",
            f"{quote(bad1)} in a sentence",
            page("Release notes", f"<p>Scheduled exports ship on {bad1}.</p>"),
            f"{quote(bad1)} is not in {label}.",
        ),
        (
            "long-form date in a table",
            f"{quote(bad2)} in a table",
            page(
                "Release notes",
                f"<p>Scheduled exports ship on {good}.</p>",
                f"<table><tr><th>Beta ends</th><td>{bad2}</td></tr></table>",
            ),
            f"One date is right, the table's {quote(bad2)} is not.",
        ),
        (
            "date-like numbers that are not dates",
            "Version and ticket numbers",
            page("Release notes", f"<p>Version 25.3.4 ships on {good} and fixes ticket 2025-0342.</p>"),
            "A version number and a ticket id look date-like but are not dates; the one date is correct.",
        ),
        (
            f"every date in {label}",
            "Consistent dates",
            page("Release notes", f"<p>Scheduled exports ship on {good}; the beta ends on {good}.</p>"),
            f"All dates use {label}.",
        ),
    )
    return check(
        issue_type="date-format",
        name=f"Dates in {label}",
        objective=f"Find dates that are not written in {label} (e.g. {quote(good)}), as the instruction asks: "
        f"“{said(a)}”.",
        look_at=["All visible text, including tables, captions and small print", "`<time>` element text"],
        ignore=["`datetime` attributes (machine-readable by design)", "Version numbers, ticket ids and codes"],
        rules=[
            "Find every calendar date in the text: numeric (03/04/2025, 2025-03-04, 4.3.2025) and written "
            "(March 4, 2025; 4 March 2025; Mar 4).",
            f"Flag every date not written as {label}; the correct form of 4 March 2025 is {quote(good)}.",
            "Flag an ambiguous numeric date (03/04/2025) even when it might be right: readers cannot tell day "
            "from month.",
            "Report the date as written as targetText and the same date in the required format as the "
            "suggestion; when day and month are ambiguous, say so instead of guessing.",
        ],
        not_issues=[
            "Version numbers (25.3.4), ticket ids (2025-0342), times and durations",
            f"Dates already in {label}",
        ],
        cases=cases,
        reads="text",
        severity="low (medium in legal or pricing text)",
        title_hint=f"Date not in {label}",
        target_hint="the date exactly as written",
        suggestion_hint=f"the same date as {label}, e.g. {quote(good)}",
    )


def _time(a: Analysis) -> Check:
    twelve = "12" in a.instruction and "24" not in a.instruction
    label = "the 12-hour clock (3:00 PM)" if twelve else "the 24-hour clock (15:00)"
    right, wrong1, wrong2 = ("3:00 PM", "15:00", "09:30") if twelve else ("15:00", "3:00 PM", "9am")
    cases = demos(
        (
            "time in the other convention",
            f"{quote(wrong1)}",
            page("Maintenance", f"<p>Maintenance starts at {wrong1} UTC.</p>"),
            f"{quote(wrong1)} breaks the rule.",
        ),
        (
            "compact time in a list",
            f"{quote(wrong2)} in a list",
            page("Maintenance", f"<ul><li>Exports resume at {wrong2} UTC.</li></ul>"),
            f"{quote(wrong2)} is easy to miss.",
        ),
        (
            "ratios and scores that look like times",
            "Aspect ratio",
            page("Maintenance", f"<p>Charts now render at a 16:9 aspect ratio. Maintenance starts at {right}.</p>"),
            "16:9 is a ratio, not a time; the time is correct.",
        ),
        (
            "times in the required convention",
            "Correct times",
            page("Maintenance", f"<p>Maintenance starts at {right} UTC.</p>"),
            "Correct convention.",
        ),
    )
    return check(
        issue_type="time-format",
        name=f"Times in {label}",
        objective=f"Find times of day not written in {label}.",
        look_at=["All visible text"],
        ignore=["Ratios, scores and durations (16:9, 2:1, 1:30 long)", NOT_PROSE],
        rules=[
            "Find every time of day: 3 PM, 3:00pm, 9am, 15:00, 09:30.",
            f"Flag every time not written in {label}.",
            "Report the time as targetText and the converted time as the suggestion.",
        ],
        not_issues=["Ratios and scores (16:9, 2:1)", "Durations (1:30 hours)"],
        cases=cases,
        reads="text",
        severity="low",
        title_hint=f"Time not in {label}",
        target_hint="the time as written",
        suggestion_hint="the same time in the required convention",
    )


def _currency(a: Analysis) -> Check:
    code = bool(re.search(r"\bcode\b|\biso\b|\busd\b|\beur\b", a.instruction.lower()))
    right = "USD 49" if code else "$49"
    cases = demos(
        (
            "price without currency",
            "Bare price",
            page("Pricing", "<p>The Pro plan costs 49 per month.</p>"),
            "“49” has no currency.",
        ),
        (
            "price in a table cell",
            "Bare price in a table",
            page(
                "Pricing",
                f"<p>Pro costs {right} per month.</p>",
                "<table><tr><th>Team</th><td>99.00 / mo</td></tr></table>",
            ),
            "The table price has no currency.",
        ),
        (
            "numbers that are not prices",
            "Counts and limits",
            page("Pricing", f"<p>Pro costs {right} per month for up to 49 users and 10 GB of storage.</p>"),
            "49 users and 10 GB are quantities, not prices.",
        ),
        (
            "every price with its currency",
            "Prices with currency",
            page("Pricing", f"<p>Pro costs {right} per month; Team costs {right.replace('49', '99')}.</p>"),
            "Every price names its currency.",
        ),
    )
    return check(
        issue_type="currency-format",
        name="Prices with a currency " + ("code" if code else "symbol"),
        objective="Find prices and amounts of money written without their currency "
        + ("code (USD, EUR)." if code else "symbol ($, €, £)."),
        look_at=["All visible text, including pricing tables and small print"],
        ignore=["Quantities that are not money: users, GB, percentages", NOT_PROSE],
        rules=[
            "Find amounts of money: numbers next to price words (costs, price, per month, /mo, fee, plan) or in "
            "pricing tables.",
            f"Flag an amount with no currency {'code' if code else 'symbol'} directly before or after it.",
            "Report the amount as written; suggest it with the currency added, in the page's currency.",
        ],
        not_issues=["Counts, storage sizes, percentages and version numbers"],
        cases=cases,
        reads="text",
        severity="medium (a price must be unambiguous)",
        title_hint="Price without currency",
        target_hint="the amount as written",
        suggestion_hint=f"the amount with its currency, e.g. {quote(right)}",
    )


def _phone(a: Analysis) -> Check:
    cases = demos(
        (
            "national format with a trunk prefix",
            "A national number",
            page("Contact", "<p>Call our sales team on (555) 014-2298.</p>"),
            "“(555) 014-2298” has no country code; callers abroad cannot dial it.",
        ),
        (
            "digits grouped but no country code",
            "A number in a table",
            page(
                "Contact",
                "<p>Sales: +1 555 014 2298.</p>",
                "<table><tr><th>Support</th><td>555 014 2299</td></tr></table>",
            ),
            "The sales number is international, the support number in the table is not.",
        ),
        (
            "international numbers written differently",
            "Extensions and separators",
            page("Contact", "<p>Sales: +1-555-014-2298 ext. 12; Leeds office: +44 113 496 0000.</p>"),
            "Both start with “+” and a country code; dashes and an extension do not make them national.",
        ),
        (
            "every number international",
            "International numbers",
            page("Contact", "<p>Sales: +1 555 014 2298. Support: +1 555 014 2299.</p>"),
            "Every number starts with “+” and its country code.",
        ),
    )
    return check(
        issue_type="phone-format",
        name="Phone numbers in international format",
        objective=f"Find phone numbers written without “+” and a country code, as the instruction asks: “{said(a)}”.",
        look_at=["All visible text, including contact tables, footers and small print"],
        ignore=["Numbers that are not phone numbers: order, invoice and version numbers", "`tel:` link targets"],
        rules=[
            "Find phone numbers: groups of 7–15 digits separated by spaces, dashes, dots or parentheses, usually "
            "next to words such as call, phone, tel, fax or a team name.",
            "Flag a number that does not start with “+” followed by a country code (E.164 style, e.g. "
            "“+1 555 014 2298”).",
            "Separators and extensions are fine as long as the “+” and the country code are there.",
            "Report the number as written; suggest it with the country code, in the page's country when the "
            "page makes it clear.",
        ],
        not_issues=["“+” numbers with dashes or an extension", "Order, invoice and version numbers"],
        cases=cases,
        reads="text",
        severity="medium (a customer abroad cannot call the number)",
        title_hint="Phone number without country code",
        target_hint="the phone number exactly as written",
        suggestion_hint="the number with “+” and its country code, e.g. “+1 555 014 2298”",
    )


def _percent(a: Analysis) -> Check:
    words = bool(re.search(r"\b(?:spell|write)\b.*\bpercent\b.*\b(?:word|out)\b|\bnot\b.*%", a.instruction.lower()))
    right, wrong, wrong2 = ("40 percent", "40%", "15 %") if words else ("40%", "40 percent", "15 per cent")
    form = "the word “percent”" if words else "the % sign"
    cases = demos(
        (
            "percentage in running text",
            "Percentage in a sentence",
            page("Exports", f"<p>Scheduled exports are {wrong} faster.</p>"),
            f"“{wrong}” is not written with {form}.",
        ),
        (
            "percentage in a table cell",
            "Percentage in a table",
            page(
                "Exports",
                f"<p>Scheduled exports are {right} faster.</p>",
                f"<table><tr><th>Annual discount</th><td>{wrong2}</td></tr></table>",
            ),
            f"The sentence is right; the table's “{wrong2}” is not.",
        ),
        (
            "words about percentages that are not amounts",
            "Percentiles and points",
            page("Exports", f"<p>Exports are {right} faster at the 95th percentile.</p>"),
            "“95th percentile” names a statistic, not an amount to rewrite.",
        ),
        (
            f"every percentage with {form}",
            "Consistent percentages",
            page(
                "Exports",
                f"<p>Scheduled exports are {right} faster, and annual plans save {right.replace('40', '15')}.</p>",
            ),
            f"Every percentage uses {form}.",
        ),
    )
    return check(
        issue_type="number-format",
        name=f"Percentages with {form}",
        objective=f"Find percentages not written with {form}, as the instruction asks: “{said(a)}”.",
        look_at=["All visible text, including tables and small print"],
        ignore=["Percentiles (“95th percentile”) and percentage points when the page distinguishes them", NOT_PROSE],
        rules=[
            "Find every amount expressed as a percentage: a number followed by %, “percent” or “per cent”.",
            f"Flag each one not written as a number with {form} (e.g. “{right}”).",
            "Report the amount as written; suggest the same amount in the required form.",
        ],
        not_issues=["“95th percentile” and other statistics named with the word"],
        cases=cases,
        reads="text",
        severity="low",
        title_hint="Percentage not in house style",
        target_hint="the percentage exactly as written",
        suggestion_hint=f"the same percentage written as “{right}”",
    )


_WORDS = {1: "one", 2: "two", 3: "three", 5: "five"}


def _numerals(a: Analysis) -> Check:
    digits = bool(re.search(r"\b(?:use|always use) (?:numerals|digits)\b", a.instruction.lower()))
    if digits:
        obvious, subtle, near, clean = (
            "Export takes three steps.",
            "<li>Invite up to five teammates.</li>",
            "One of the reports is ready.",
            "Export takes 3 steps.",
        )
        rule = "Flag numbers written as words (one, two, three …) where a numeral is expected."
        name = "Numbers written as numerals"
    else:
        obvious, subtle, near, clean = (
            "Export takes 3 steps.",
            "<li>Invite up to 5 teammates.</li>",
            "Up to 12 dashboards, on API version 2.",
            "Export takes three steps.",
        )
        rule = "Flag numerals from 1 to 9 used as counts in running text; they should be written as words."
        name = "Small numbers spelled out"
    cases = demos(
        (
            "count in running text",
            "Count in a sentence",
            page("Exports", f"<p>{obvious}</p>"),
            "The count breaks the rule.",
        ),
        (
            "count in a list item",
            "Count in a list",
            page("Exports", f"<ul>{subtle}</ul>"),
            "A list item breaks the rule too.",
        ),
        (
            "numbers the rule does not cover",
            "Exempt numbers",
            page("Exports", f"<p>{near}</p>"),
            "Numbers of 10 and above, version numbers and idioms are exempt.",
        ),
        (
            "counts written as required",
            "Correct counts",
            page("Exports", f"<p>{clean}</p>"),
            "Every count follows the rule.",
        ),
    )
    return check(
        issue_type="number-format",
        name=name,
        objective=f"Find numbers that break the rule: “{said(a)}”.",
        look_at=["All visible text"],
        ignore=["Version numbers, measurements with units, dates, times and prices", NOT_PROSE],
        rules=[
            "Find every number used as a count of things in the text.",
            rule,
            "Report the number with its noun (“3 steps”) as targetText and the corrected form as suggestion.",
        ],
        not_issues=["Version numbers, measurements with units, dates, times and prices", "Numbers of 10 and above"],
        cases=cases,
        reads="text",
        severity="low",
        title_hint=name.replace("Numbers", "Number").replace("Small numbers", "Small number"),
        target_hint="the number and its noun as written",
        suggestion_hint="the corrected form, e.g. “three steps”",
    )


# ------------------------------------------------------------------ required elements

_ELEMENTS = (  # (pattern, name, how it looks, a partial form, an unusual but valid form, what makes it complete)
    (
        r"copyright",
        "copyright notice",
        "© 2025 Northwind Ltd. All rights reserved.",
        "All rights reserved.",
        "Copyright 2025 Northwind Ltd.",
        "the © symbol or the word Copyright, a year and the owner",
    ),
    (
        r"disclaimer",
        "disclaimer",
        "Results may vary. This is not financial advice.",
        "Disclaimer:",
        "Please note: results vary, and nothing here is financial advice.",
        "a statement limiting the page's claims",
    ),
    (
        r"byline|author",
        "author byline",
        "By Dana Reyes, Product Marketing",
        "By",
        "Written by Dana Reyes",
        "the author's name",
    ),
    (
        r"publi\w* date|date published|last updated|\bdate\b",
        "publication date",
        'Published <time datetime="2025-03-04">4 March 2025</time>',
        "Published",
        "Updated 4 March 2025",
        "an actual date",
    ),
    (
        r"call[- ]to[- ]action|\bcta\b",
        "call to action",
        '<a class="button" href="/signup">Start your free trial</a>',
        '<a class="button" href="">Click</a>',
        '<a href="/demo">Book a 20-minute demo</a>',
        "a link or button that names the action and leads somewhere",
    ),
    (
        r"privacy",
        "privacy policy link",
        '<a href="/privacy">Privacy policy</a>',
        "Privacy policy",
        '<a href="/legal/privacy">How we use your data</a>',
        "a working link to the privacy policy",
    ),
    (
        r"unsubscribe",
        "unsubscribe link",
        '<a href="/unsubscribe?u=123">Unsubscribe</a>',
        "Unsubscribe",
        '<a href="/preferences">Manage or stop these emails</a>',
        "a working link that stops the emails",
    ),
    (
        r"contact",
        "contact details",
        "Contact us at support@northwind.example.",
        "Contact us.",
        "Questions? Write to support@northwind.example",
        "an e-mail address, phone number or contact link",
    ),
    (
        r"summary|tl;?dr",
        "summary",
        "<strong>Summary:</strong> scheduled exports now run weekly.",
        "Summary:",
        "<strong>In short:</strong> scheduled exports now run weekly.",
        "one or two sentences stating the point",
    ),
    (
        r"warranty",
        "warranty period",
        "Covered by a 2-year limited warranty.",
        "Warranty: see store.",
        "Includes two years of warranty cover from the date of purchase.",
        "the length of the warranty",
    ),
)
# Pages the demos are built on: product elements on a product page, the rest on release notes.
_CONTEXT = {"warranty period": ("Northwind Hub 2", "<p>A compact router for small offices, with Wi-Fi 7.</p>")}
_DEFAULT_CONTEXT = ("Spring release", "<p>Scheduled exports now run every Monday.</p>")


def _element_spec(element: str):
    low = element.lower()
    for pattern, name, full, partial, unusual, complete in _ELEMENTS:
        if re.search(pattern, low):
            return name, full, partial, unusual, complete, True
    return (
        element,
        f"{esc(cap(element))}: stated here in full.",
        f"{esc(cap(element))}: TBD",
        f"<strong>{esc(cap(element))}</strong> — stated here in full.",
        f"a real, non-placeholder {element}",
        False,
    )


def required_elements(a: Analysis) -> Check:
    name, full, partial, unusual, complete, known = _element_spec(a.element or "required element")
    footer = "footer" in a.locations
    where = " in the footer" if footer else ""

    def wrap(inner: str) -> str:
        return f"<footer><p>{inner}</p></footer>" if footer else f"<p>{inner}</p>"

    title, body = _CONTEXT.get(name, _DEFAULT_CONTEXT)
    cases = [
        Case(
            "obvious_match",
            f"{name} missing entirely",
            f"No {name}",
            page(title, body, '<footer><p><a href="/about">About</a></p></footer>' if footer else ""),
            f"The page has no {name} anywhere.",
        ),
        Case(
            "subtle_match",
            f"{name} present but incomplete",
            f"Incomplete {name}",
            page(title, body, wrap(partial)),
            f"Something labelled as the {name} is there, but it lacks {complete}.",
        ),
    ]
    if footer:
        cases.append(
            Case(
                "subtle_match",
                f"{name} outside the footer",
                f"{cap(name)} in the wrong place",
                page(title, f"<p>{full}</p>", body, '<footer><p><a href="/about">About</a></p></footer>'),
                f"The {name} exists, but not in the footer where the instruction requires it.",
            )
        )
    cases += [
        Case(
            "near_miss",
            f"{name} in an unusual but valid form",
            f"Unusual {name}",
            page(title, body, wrap(unusual)),
            f"Worded differently from the usual form, but it has {complete}.",
        ),
        Case(
            "clean",
            f"complete {name}{where}",
            f"Complete {name}",
            page(title, body, wrap(full)),
            f"The {name} is present{where} and complete.",
        ),
    ]
    notes = (
        []
        if known
        else [
            f"{quote(name)} is not one of the elements this generator knows; the demos use a "
            f"generic stand-in — replace them with a real example of the {name}."
        ]
    )
    return check(
        issue_type="missing-element",
        name=f"Required: {name}{where}",
        objective=f"Check that the page includes a complete {name}{where} (“{said(a)}”), and report it when it "
        "is missing, incomplete or misplaced.",
        look_at=["The page footer (`<footer>`)" if footer else "The whole page"],
        ignore=["Navigation menus and cookie banners"]
        if not footer
        else ["Everything outside the footer, except to report a misplaced " + name],
        rules=[
            f"Look for the {name}{where}; it may be worded differently from the usual form.",
            f"The {name} is complete only with {complete}; placeholders (TBD, lorem ipsum, empty links) do not count.",
            f"Report one finding when it is missing (targetText: the {'footer' if footer else 'page title'}), "
            f"and one when it is incomplete or misplaced (targetText: the text found).",
            f"Suggest the text to add, e.g. {quote(re.sub('<[^>]+>', '', full))}.",
        ],
        not_issues=[f"An unusual wording that still has {complete}"],
        cases=cases,
        reads="markup" if footer else "text",
        severity="high when missing on a legal or transactional page; medium otherwise",
        title_hint=f"Missing {name}",
        target_hint=f"the incomplete {name} as found, or the {'footer' if footer else 'page title'} when it is missing",
        suggestion_hint=f"the {name} to add, e.g. {quote(re.sub('<[^>]+>', '', full))}",
        notes=notes,
    )
