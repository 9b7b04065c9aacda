"""Checks over the words of the visible text: terminology (forbidden terms and exact
spellings), claims, tone, spelling and grammar."""

from __future__ import annotations

import re

from toolkit.prompts.analysis import Analysis
from toolkit.prompts.checks import (
    Case,
    Check,
    cap,
    check,
    demos,
    esc,
    forms,
    page,
    past,
    quote,
    quoted_list,
    said,
    shape_of,
)

WHERE_TEXT = (
    "every text-bearing part of the page: headings, paragraphs, list items, table cells, link text and button labels"
)
NOT_PROSE = "Code samples, URLs, file names and e-mail addresses: they are not prose"


def label(ref: str) -> str:
    """How the prompt names a term: a slot as code, a word in quotes."""
    return f"`{ref}`" if ref.startswith("{{") else quote(ref)


def labels(refs, conj: str = "or") -> str:
    return _join([label(r) for r in refs], conj)


def _join(items: list[str], conj: str = "and") -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" {conj} " + items[-1]


def _where(a: Analysis) -> tuple[list[str], list[str]]:
    """(look at, ignore) for a text check, narrowed to the parts the instruction names."""
    if a.locations:
        parts = ", ".join(a.locations)
        return [f"Only the parts of the page the instruction names: {parts}"], [
            f"The same wording elsewhere on the page (outside {parts})",
            NOT_PROSE,
        ]
    return [cap(WHERE_TEXT)], [NOT_PROSE]


# ------------------------------------------------------------------ terminology

_FRAMES = {  # (plain sentence, harder-to-spot variant, its usual element); {t} term, {T} capitalised, {p} past
    "verb": (
        "Teams can {t} the new export panel to share reports in one step.",
        "Last quarter, admins {p} role templates to onboard 40 new users.",
        "li",
    ),
    "phrasal": (
        "Teams {t} once and share reports in one step.",
        "Last quarter, admins {p} every morning to review new reports.",
        "li",
    ),
    "adjective": ("The new export panel is {t} for teams of every size.", "{T} setup, now on mobile", "h3"),
    "name": (
        "Unlike {t}, Northwind Cloud exports every report in one step.",
        "Import dashboards straight from {t}’s export files.",
        "li",
    ),
    "noun": (
        "The spring release brings {t} to the export panel for every team.",
        "{T} settings now live under Account.",
        "li",
    ),
}
_NEUTRAL = {"verb": "use", "phrasal": "start", "adjective": "quick to set up", "noun": "new options", "name": None}
_CLEAN_ITEMS = (
    "<li>Scheduled exports run every Monday at 09:00.</li>",
    "<li>Shared dashboards now load twice as fast.</li>",
)


def place(location: str | None, inner: str, default: str = "p") -> str:
    """``inner`` (escaped html) inside the element a location names (a paragraph by default)."""
    if location == "headings":
        return f"<h3>{inner}</h3>"
    if location == "footer":
        return f"<footer><p>{inner}</p></footer>"
    if location == "buttons":
        return f'<a class="button" href="/signup">{inner}</a>'
    if location == "tables":
        return f"<table><tr><th>Note</th><td>{inner}</td></tr></table>"
    if location == "images":
        return f'<img src="/img/export-panel.png" alt="{inner}">'
    if location == "meta description":
        return f'<meta name="description" content="{inner}">'
    if default == "li":
        return f"<ul><li>{inner}</li></ul>"
    return f"<{default}>{inner}</{default}>"


def _sentence(term: str, shape: str, which: int = 0) -> str:
    return _FRAMES[shape][which].format(t=esc(term), T=esc(cap(term)), p=esc(past(term)))


def _rewrite(term: str, shape: str, replacement: str | None) -> str:
    """The plain sentence without the term: with the approved word, or rephrased."""
    if shape == "name":
        return "Northwind Cloud exports every report in one step, whichever tool you used before."
    word = replacement or _NEUTRAL[shape] or ""  # only "name" has no neutral word, handled above
    if shape in ("verb", "phrasal") and word.lower() == term.lower():
        word = "try"
    return _sentence(word, shape)


def _pairs(a: Analysis) -> list[tuple[str, str]]:
    if a.preferred and len(a.preferred) == len(a.terms):
        return list(zip(a.terms, a.preferred))
    if len(a.preferred) == 1:
        return [(t, a.preferred[0]) for t in a.terms]
    return []


def terminology(a: Analysis) -> Check:
    if a.facet == "canonical":
        return _canonical(a)
    terms = list(a.terms)
    refs = list(a.term_refs) or terms
    subject = labels(refs)
    pairs = dict(_pairs(a))
    slots = [r for r in refs if r.startswith("{{")]
    look_at, ignore = _where(a)
    samples = {p.ref: p for p in a.inputs}
    targets = _join(
        [label(r) for r in refs if not r.startswith("{{")]
        + [
            (
                f"each entry of `{s}` (for example {quoted_list(samples[s].sample)})"
                if samples[s].type == "list"
                else f"the value of `{s}` (for example {quote(samples[s].sample[0])})"
            )
            for s in slots
        ]
    )
    shown = [v for v in dict.fromkeys([cap(terms[0]), terms[0].upper(), terms[0].lower()]) if v != terms[0]]
    rules = [
        f"Search the visible text for {targets} as whole words, ignoring case: {quote(terms[0])} also "
        f"matches {quoted_list(shown, 'and')}, but not a longer, different word that merely contains the "
        "same letters."
    ]
    inflected = [f for t in terms for f in forms(t, shape_of(t))[1:]]
    if inflected:
        rules.append("Match the inflected forms too: " + ", ".join(quote(f) for f in inflected) + ".")
    for slot in slots:
        rules.append(
            f"`{slot}` is supplied at run time; "
            + ("every entry in it" if samples[slot].type == "list" else "its value")
            + " is a forbidden term, including its possessive (“…’s”) and plural."
        )
    rules.append(
        f"Look in {WHERE_TEXT}."
        if not a.locations
        else f"Look only in the {', '.join(a.locations)}; the same words elsewhere are not findings."
    )
    rules.append("Report every occurrence separately, with the exact matched words as targetText.")
    if pairs:
        examples = [f"{quote(t)} → {quote(p)}" for t, p in pairs.items()]
        t0, p0 = next(iter(pairs.items()))
        if shape_of(t0) in ("verb", "phrasal") and shape_of(p0) in ("verb", "phrasal"):
            examples.append(f"{quote(cap(past(t0)))} → {quote(cap(past(p0)))}")
        rules.append(
            "Suggest the approved wording, keeping the original inflection and capitalisation: "
            + "; ".join(examples)
            + "."
        )
    else:
        rules.append(
            "Suggest a rewrite of the sentence without the term; for a name, drop the reference or "
            "describe the product generically."
        )
    not_issues = [
        "A longer word that only contains the same letters (match whole words only)",
        "A style guide or glossary entry that cites the term as a term (“avoid the word …”)",
    ]
    if a.preferred:
        not_issues.insert(0, f"The approved wording {quoted_list(a.preferred)}")

    first, shape = terms[0], shape_of(terms[0])
    second = terms[1] if len(terms) > 1 else first
    where = a.locations[0] if a.locations else None
    fixed = _rewrite(first, shape, pairs.get(first))
    shape2 = shape_of(second)
    variant, how = {
        "verb": (past(second), "past-tense"),
        "phrasal": (past(second), "past-tense"),
        "name": (second + "’s", "possessive"),
    }.get(shape2, (cap(second), "capitalised"))
    element = {
        "headings": "heading",
        "footer": "footer",
        "buttons": "button",
        "tables": "table cell",
        "images": "image alt text",
        "meta description": "meta description",
    }.get(where or "", "heading" if _FRAMES[shape2][2] == "h3" else "list item")
    dims = [
        "exact term in running text",
        "capitalised, inflected or possessive variant",
        "approved wording in the same sentence" if pairs else "same sentence rephrased without the term",
        "compliant page on the same topic",
    ]
    cases = [
        Case(
            "obvious_match",
            dims[0],
            f"{quote(first)} in plain view",
            page("Spring release", place(where, _sentence(first, shape))),
            f"The page uses {quote(first)} exactly as the instruction forbids.",
        ),
        Case(
            "subtle_match",
            dims[1],
            f"{quote(variant)} in a {element}",
            page(
                "Spring release",
                "<p>Scheduled exports run every Monday.</p>",
                place(where, _sentence(second, shape2, 1), _FRAMES[shape2][2]),
            ),
            f"{quote(variant)}, the {how} form of {quote(second)}, sits in a {element} away from the main "
            "text; it is still the forbidden term.",
        ),
        Case(
            "near_miss",
            dims[2],
            "Same sentence, compliant wording",
            page("Spring release", place(where, fixed)),
            (
                f"The sentence of the obvious match with {quote(pairs[first])}: the approved wording must not be "
                "flagged just because the sentence resembles a flagged one."
            )
            if first in pairs
            else "The sentence of the obvious match, rephrased without the term: nothing forbidden remains.",
        ),
    ]
    if where is not None:
        dims.insert(3, "term outside the checked parts of the page")
        cases.append(
            Case(
                "near_miss",
                dims[3],
                "Term only outside the checked parts",
                page("Spring release", place(where, fixed), f"<p>{_sentence(first, shape)}</p>"),
                f"The term appears only outside the {where}, which the instruction does not cover.",
            )
        )
    cases.append(
        Case(
            "clean",
            dims[-1],
            "Compliant release notes",
            page("Spring release", place(where, fixed), f"<ul>{''.join(_CLEAN_ITEMS)}</ul>"),
            "No forbidden term in any form; nothing to report.",
        )
    )
    kind_word = ("name" if shape == "name" else "term") + ("s" if len(refs) > 1 or slots else "")
    return check(
        issue_type="forbidden-term",
        name=f"Forbidden {kind_word}: {subject}",
        objective=(
            f"Find every place where the page uses {subject}"
            + (f" in the {', '.join(a.locations)}" if a.locations else "")
            + (
                ", so each can be replaced with the approved wording."
                if pairs
                else ", so each can be removed or reworded."
            )
        ),
        look_at=look_at,
        ignore=ignore,
        rules=rules,
        not_issues=not_issues,
        dimensions=dims,
        cases=cases,
        reads="markup" if a.locations else "text",
        severity="medium when the term is in a heading, title, link or button; low in body text",
        title_hint=f"Forbidden term {quote(first)}",
        target_hint=f"the matched words exactly as written on the page (e.g. {quote(cap(first))})",
        suggestion_hint=(
            f"the approved wording, e.g. {quote(pairs[first])}"
            if first in pairs
            else "the sentence rewritten without the term"
        ),
    )


def _variants(canon: str) -> list[str]:
    words = canon.split()
    out = [canon.lower(), canon[:1] + canon[1:].lower(), re.sub(r"(?<=[a-z])(?=[A-Z])", " ", canon)]
    if len(words) > 1:
        out += [words[0] + " " + " ".join(w.lower() for w in words[1:]), "".join(words)]
    out.append(canon.upper())
    out.append(canon[:1].lower() + canon[1:])
    return [v for v in dict.fromkeys(out) if v != canon]


def _difference(variant: str, canon: str) -> str:
    if variant.lower() == canon.lower():
        return "only in letter case"
    if variant.replace(" ", "").lower() == canon.replace(" ", "").lower():
        return "only in spacing"
    return "in spelling"


def _canonical(a: Analysis) -> Check:
    canons = list(a.preferred) or ["Northwind"]
    refs = list(a.term_refs) or canons
    canon, ref = canons[0], refs[0]
    variants = _variants(canon)
    obvious = variants[0]
    # the subtle case uses the second term when there is one, else a one-detail variant of the first
    subtle_canon = canons[1] if len(canons) > 1 else canon
    subtle = _variants(subtle_canon)[1] if len(_variants(subtle_canon)) > 1 else _variants(subtle_canon)[0]
    slug = re.sub(r"[^a-z0-9]+", "-", canon.lower()).strip("-") or "product"
    rules = [
        f"Find every mention of {label(ref)} in the visible text, comparing without regard to case, spaces "
        f"and hyphens, so that {quoted_list(variants[:3], 'and')} count as mentions too."
    ]
    if ref.startswith("{{"):
        rules.append(
            f"`{ref}` is supplied at run time (example: {quote(canon)}); compare against its value exactly as given."
        )
    rules += [
        f"A mention is correct only when it matches {quote(canon)} letter for letter, in the same case and "
        f"spacing. Every other form is a finding: {quoted_list(variants)}."
    ]
    rules += [
        f"Apply the same rule to {quote(other)}: {quoted_list(_variants(other)[:3])} and every other form are findings."
        for other in canons[1:]
    ]
    rules += [
        f"Possessives and plurals keep the exact form: {quote(canon + '’s')} is correct, "
        f"{quote(obvious + '’s')} is not.",
        "Letters typed in capitals are findings; capitals produced only by CSS (text-transform) are not.",
        "Report each wrong form with the exact text as targetText and the correct form "
        f"(e.g. {quote(canon)}) as the suggestion.",
    ]
    cases = demos(
        (
            "wrong case in running text",
            f"{quote(obvious)} in a sentence",
            page("Release notes", f"<p>We built {esc(obvious)} so reporting takes minutes, not days.</p>"),
            f"{quote(obvious)} is not written as {quote(canon)}.",
        ),
        (
            "near-identical spelling in a list item",
            f"{quote(subtle)} in a feature list",
            page(
                "Release notes",
                f"<p>{esc(canon)} now supports scheduled exports.</p>",
                f"<ul><li>Connect {esc(subtle)} to your data warehouse in two clicks.</li></ul>",
            ),
            f"One correct mention, then {quote(subtle)}, which differs from {quote(subtle_canon)} "
            f"{_difference(subtle, subtle_canon)}.",
        ),
        (
            "correct form next to URLs and file names",
            "Correct form beside a lower-case URL",
            page(
                "Release notes",
                f"<p>{esc(canon)}’s exports now include PDF. Read the "
                f'<a href="https://docs.{slug}.example/exports">export guide</a>.</p>',
            ),
            f"The possessive keeps the exact form, and the lower-case {quote(slug)} appears only inside a URL.",
        ),
        (
            "consistent, correct usage",
            "Consistent usage",
            page(
                f"What’s new in {canon}",
                f"<p>{esc(canon)} now supports scheduled exports.</p>",
                f"<p>Every {esc(canon)} workspace gets the update today.</p>",
            ),
            f"Every mention is exactly {quote(canon)}.",
        ),
    )
    return check(
        issue_type="term-spelling",
        name=f"Exact spelling of {labels(refs, 'and')}",
        objective=f"Find every mention of {labels(refs, 'and')} that is not written exactly "
        + ("that way" if refs == canons else f"as {quoted_list(canons, 'and')} (the value supplied at run time)")
        + ": wrong case, spacing, hyphenation or joined words.",
        look_at=[cap(WHERE_TEXT)],
        ignore=[f"{NOT_PROSE} (e.g. {slug}.example)"],
        rules=rules,
        not_issues=[
            "URLs, domain names, e-mail addresses and file names, where lower case is normal",
            "Other words that only begin with the same letters",
        ],
        cases=cases,
        reads="text",
        severity="medium in headings, titles and calls to action; low in body text",
        title_hint=f"{quote(obvious)} should be {quote(canon)}",
        target_hint="the misspelt form exactly as it appears",
        suggestion_hint=f"{quote(canon)}, keeping any possessive or plural ending",
    )


# ------------------------------------------------------------------ claims

_CLAIMS = {  # facet: [(trigger, sentence)], substantiated near miss, subject
    "general": (
        [
            ("guaranteed", "Northwind Cloud is guaranteed to halve your hosting bill."),
            ("risk-free", "Try it risk-free: nothing can go wrong during migration."),
        ],
        "In a 2024 survey of 312 customers, 71% said their hosting bill went down "
        '(<a href="/survey-2024">methodology</a>).',
        "unsubstantiated or absolute marketing claims",
    ),
    "health": (
        [
            ("cures", "Northwind Daily Greens cures fatigue in a week."),
            ("clinically proven", "Our formula is clinically proven to boost immunity."),
        ],
        "In a 12-week study of 240 adults, participants reported less tiredness "
        '(<a href="/study-2024">study summary</a>). Individual results vary.',
        "health claims",
    ),
    "financial": (
        [
            ("guaranteed returns", "Northwind Invest offers guaranteed returns of 12% a year."),
            ("risk-free", "A risk-free way to double your savings."),
        ],
        "The fund returned 6.1% in 2024. Past performance does not predict future results; you may lose money.",
        "financial claims",
    ),
    "environmental": (
        [
            ("carbon neutral", "Every Northwind server is carbon neutral."),
            ("100% sustainable", "Our packaging is 100% sustainable."),
        ],
        "Our data centres ran on 80% renewable electricity in 2024 "
        '(<a href="/energy-audit-2024">independent audit</a>).',
        "environmental claims",
    ),
    "superlative": (
        [
            ("the best", "Northwind Cloud is the best analytics tool on the market."),
            ("#1", "The #1 reporting platform for growing teams."),
        ],
        "Rated 4.7 out of 5 by 1,200 reviewers on G2 (March 2025).",
        "unsubstantiated superlatives",
    ),
}
_CLEAN_CLAIM = "<p>Northwind Cloud exports reports to CSV and PDF and can email them every Monday.</p>"


def claims(a: Analysis) -> Check:
    lexicon, substantiated, subject = _CLAIMS.get(a.facet, _CLAIMS["general"])
    if a.terms:
        pairs = [(t, f"Northwind Cloud: {t}.") for t in a.terms]
        subject = f"claims such as {quoted_list(a.terms)}"
    else:
        pairs = lexicon
    (t1, s1), (t2, s2) = pairs[0], pairs[1] if len(pairs) > 1 else pairs[0]
    examples = quoted_list([t for t, _ in pairs] + ([t for t, _ in lexicon] if a.terms else []))
    rules = [
        f"Find {subject}: statements that promise an outcome, rank the product above all others or state "
        f"a fact without a source. Trigger phrases include {examples}.",
        "Treat absolute words as promises: guaranteed, always, never, 100%, risk-free, proven, cures, best, #1.",
        "A claim is substantiated only when the same sentence or the element right after it cites a source "
        "(a study, survey, audit or rating with a date or sample size, or a link to one).",
        "Check small print, footnotes, testimonials, image captions and button labels as well as body text: "
        "a claim is a claim wherever it appears.",
        "A disclaimer elsewhere on the page does not fix an absolute promise; report the promise.",
        "Suggest a qualified rewrite (“may”, “in our 2024 survey, 71% …”) or flag for legal review when "
        "no source can exist.",
    ]
    cases = demos(
        (
            "absolute promise in body text",
            f"{quote(t1)} stated as fact",
            page("Why Northwind", f"<p>{esc(s1)}</p>"),
            f"{quote(t1)} promises an outcome with no source.",
        ),
        (
            "claim hidden in small print or a list",
            f"{quote(t2)} in small print",
            page("Pricing", "<p>Plans start at $49 per month.</p>", f"<p><small>* {esc(s2)}</small></p>"),
            f"The footnote still makes the claim {quote(t2)}; small print is in scope.",
        ),
        (
            "qualified claim with a cited source",
            "Qualified, sourced statement",
            page("Why Northwind", f"<p>{substantiated}</p>"),
            "The statement is qualified and cites where the number comes from; it promises nothing.",
        ),
        (
            "factual description without claims",
            "Plain feature description",
            page("Features", _CLEAN_CLAIM),
            "Describes what the product does, with no promise, ranking or statistic.",
        ),
    )
    return check(
        issue_type="unsubstantiated-claim",
        name=cap(subject),
        objective=f"Find {subject} that need evidence or legal review before publishing, so each can be "
        "qualified, sourced or removed.",
        look_at=["All visible text, including small print, footnotes, testimonials, captions and button labels"],
        ignore=["Quotations of regulations or competitors' claims presented as such", NOT_PROSE],
        rules=rules,
        not_issues=[
            "Claims with a cited source (study, survey, audit, rating) in the same or next element",
            "Hedged statements (“may help”, “results vary”) that promise no outcome",
            "Factual product descriptions (features, prices, limits)",
        ],
        cases=cases,
        reads="text",
        severity="high for promises about health, money or safety; medium for unsourced superlatives and "
        "statistics; low for mild puffery",
        title_hint=f"Unsubstantiated claim: {quote(t1)}",
        target_hint="the whole sentence or phrase that makes the claim",
        suggestion_hint="a qualified or sourced rewrite, or “needs legal review” when no evidence can exist",
    )


# ------------------------------------------------------------------ tone

# Tone and language checks demonstrate on one page each: its heading, and per tier the
# dimension and title of the case (the html and the reason come from the facet's table).
_SENTENCE_DEMOS = {
    "tone": (
        "Product update",
        [
            ("several markers in one paragraph", "Several markers at once"),
            ("a single marker in a list or table", "One marker among neutral text"),
            ("acceptable phrasing that resembles the problem", "Acceptable phrasing"),
            ("compliant copy", "Compliant copy"),
        ],
    ),
    "spelling_grammar": (
        "Release notes",
        [
            ("obvious mistakes in body text", "Mistakes in a sentence"),
            ("a single mistake in a list item", "One mistake in a list"),
            ("correct but unusual usage", "Correct variants"),
            ("error-free copy", "Correct copy"),
        ],
    ),
}


def _sentence_demos(kind: str, htmls: tuple[str, ...], reasons: tuple[str, ...]) -> list[Case]:
    heading, labels = _SENTENCE_DEMOS[kind]
    return demos(
        *[
            (dimension, title, page(heading, html), reason)
            for (dimension, title), html, reason in zip(labels, htmls, reasons)
        ]
    )


_TONE = {  # facet: (goal, markers, obvious, subtle, near miss, clean, near-miss reason)
    "plain": (
        "plain, jargon-free language",
        ["leverage", "synergy", "best-of-breed", "operationalize"],
        "<p>Leverage our best-of-breed platform to operationalize cross-team synergy.</p>",
        "<ul><li>Share a dashboard with one link.</li><li>Leverage saved filters to reuse views.</li></ul>",
        "<p>Single sign-on (SSO) lets your team log in with one company account.</p>",
        "<p>Share dashboards with one link and reuse saved filters across reports.</p>",
        "A necessary technical term, explained on first use, is not jargon.",
    ),
    "formal": (
        "a professional, formal register",
        ["gonna", "awesome", "super easy", "no biggie"],
        "<p>We're gonna make reporting super easy. It's awesome!</p>",
        "<p>Exports finish in seconds, which is pretty awesome for large teams.</p>",
        "<p>We're glad you're here. Your reports are ready to download.</p>",
        "<p>Your reports are ready. Exports complete within seconds for teams of any size.</p>",
        "Contractions such as “we're” are informal but not slang; the register stays professional.",
    ),
    "friendly": (
        "a friendly, respectful tone",
        ["obviously", "you failed to", "as already stated"],
        "<p>You failed to verify your email. Obviously, reports cannot be sent until you do.</p>",
        "<p>As already stated in the FAQ, exports need a verified email address.</p>",
        "<p>Please verify your email so we can send your reports. It takes under a minute.</p>",
        "<p>Thanks for signing up! Verify your email and your first report is on its way.</p>",
        "A firm requirement, phrased politely and with a reason, is friendly.",
    ),
    "active": (
        "the active voice",
        ["was approved by", "were generated by", "are emailed"],
        "<p>Your request was approved by the admin and the reports were generated by the system.</p>",
        "<ul><li>Invoices are emailed to the billing contact by our finance team.</li></ul>",
        "<p>The report is ready and the export is complete.</p>",
        "<p>Your admin approved the request, and the system generated your reports.</p>",
        "“is ready” and “is complete” describe a state (verb + adjective); they are not passive.",
    ),
    "second_person": (
        "the second person, speaking to the reader as “you”",
        ["the user", "users can", "the customer"],
        "<p>The user opens Settings. Users can then schedule their exports.</p>",
        "<ul><li>Choose a day.</li><li>The customer receives a confirmation email.</li></ul>",
        "<p>You can invite other users to your workspace.</p>",
        "<p>Open Settings and schedule your exports. You receive a confirmation email.</p>",
        "“other users” are people other than the reader, so the third person is right there.",
    ),
    "profanity": (
        "language free of profanity and slurs",
        ["damn", "crap", "hell of a"],
        "<p>This damn export broke again. What a load of crap.</p>",
        "<ul><li>Exports are fast.</li><li>Setup is a hell of a lot easier now.</li></ul>",
        "<p>Hello from our Essex office: the class assessment tool ships on Monday.</p>",
        "<p>This export failed again. We are sorry, and a fix ships today.</p>",
        "“Hello”, “Essex” and “assessment” only contain the letters of swear words; match whole words.",
    ),
    "inclusive": (
        "inclusive, gender-neutral language",
        ["guys", "manpower", "whitelist", "chairman"],
        "<p>Hey guys, the new whitelist settings are live.</p>",
        "<table><tr><th>Estimated manpower</th><td>3 engineers</td></tr></table>",
        "<p>Our new office in Guyana opens in May.</p>",
        "<p>Hi everyone, the new allowlist settings are live.</p>",
        "“Guyana” only contains the letters of “guy”; match whole words, not substrings.",
    ),
}


_TONE_ALSO = (
    ("second_person", r"(?:second|third)[- ]person"),
    ("plain", r"jargon|plain|buzzword"),
    ("formal", r"\bformal|professional|slang"),
    ("friendly", r"friendly|polite|respectful|empath"),
    ("active", r"passive|active voice"),
    ("inclusive", r"inclusive|gender|discriminat"),
)


def tone(a: Analysis) -> Check:
    goal, markers, obvious, subtle, near, clean, near_reason = _TONE.get(a.facet, _TONE["formal"])
    markers = list(markers)
    for facet, pattern in _TONE_ALSO:  # an instruction may ask for more than one quality
        if facet != a.facet and re.search(pattern, a.instruction.lower()):
            goal += " and " + _TONE[facet][0]
            markers += _TONE[facet][1][:2]
    if a.terms:
        markers = list(a.terms) + [m for m in markers if m not in a.terms]
    look_at, ignore = _where(a)
    rules = [
        f"Read each sentence and decide whether it keeps {goal}, as the instruction asks: “{said(a)}”.",
        f"Flag a sentence when it contains a marker of the wrong tone, such as {quoted_list(markers)}, or an "
        "equivalent phrase that has the same effect.",
        "Judge the sentence, not the word alone: one marker in an otherwise compliant page is still a finding, "
        "but a marker inside a quotation attributed to someone else is not.",
        "Report the shortest span that carries the problem (a phrase or one sentence), not a whole paragraph.",
        f"Suggest a rewrite of that span in {goal}, keeping its meaning.",
    ]
    cases = _sentence_demos(
        "tone",
        (obvious, subtle, near, clean),
        (
            f"The paragraph breaks {goal} several times.",
            "A single marker in otherwise neutral copy still breaks the tone.",
            near_reason,
            f"The copy keeps {goal}.",
        ),
    )
    return check(
        issue_type="tone",
        name=f"Tone: {goal}",
        objective=f"Find sentences that break {goal}, so they can be rewritten before publishing.",
        look_at=look_at,
        ignore=ignore + ["Direct quotations attributed to a customer or third party"],
        rules=rules,
        not_issues=[near_reason, "Product and feature names, even when they sound informal"],
        cases=cases,
        reads="markup" if a.locations else "text",
        severity="medium in headings and calls to action; low in body text",
        title_hint=f"Tone: {quote(markers[0])} breaks {goal}",
        target_hint="the phrase or sentence that carries the wrong tone, verbatim",
        suggestion_hint=f"the same sentence rewritten in {goal}",
    )


# ------------------------------------------------------------------ spelling and grammar

_LANGUAGE = {
    "spelling": (
        "spelling mistakes and typos",
        ["recieve", "definately", "occured", "teh"],
        "<p>You will recieve teh report by email.</p>",
        "<ul><li>Exports run nightly.</li><li>The sync occured twice when the network dropped.</li></ul>",
        "<p>Choose a colour theme for your organisation.</p><p>Run <code>recv_buf --init</code> once.</p>",
        "<p>You will receive the report by email. Exports run nightly.</p>",
        "British spellings (“colour”, “organisation”) are correct variants, and code is not prose.",
    ),
    "grammar": (
        "grammatical errors",
        ["reports is", "each of the dashboards have", "less errors"],
        "<p>The reports is ready, and each of the dashboards have been updated.</p>",
        "<ul><li>Exports finish faster.</li><li>The new parser makes less errors on large files.</li></ul>",
        "<p>The data are stored in the EU. None of the exports is public.</p>",
        "<p>The reports are ready, and each dashboard has been updated.</p>",
        "“The data are” and “none … is” are both standard usage, not errors.",
    ),
    "repeated": (
        "words typed twice in a row",
        ["the the", "to to", "is is"],
        "<p>Send the the report to to your team.</p>",
        "<ul><li>Exports run nightly.</li><li>Your dashboard is\nis ready.</li></ul>",
        "<p>The report we had had for years is gone. She said that that export was final.</p>",
        "<p>Send the report to your team. Your dashboard is ready.</p>",
        "“had had” and “that that” are grammatical; the second word does a job of its own.",
    ),
}


_TITLES = {"spelling": "Misspelling", "grammar": "Grammar", "repeated": "Repeated word"}


def spelling_grammar(a: Analysis) -> Check:
    goal, markers, obvious, subtle, near, clean, near_reason = _LANGUAGE[a.facet]
    rules = [
        f"Read the visible text sentence by sentence and find {goal}, for example {quoted_list(markers)}.",
        "Report each mistake separately with the exact wrong word or phrase as targetText.",
        {
            "spelling": "Accept regional spelling variants (US or UK) as long as one page is consistent; flag mixing "
            "them.",
            "grammar": "Accept standard usage that only looks wrong (“the data are”, “none … is”).",
            "repeated": "Repeats that grammar allows are not mistakes (“had had”, “that that”); flag only a word "
            "typed twice by accident, including across a line break.",
        }[a.facet],
        "Skip proper nouns, product names, code, URLs and deliberate quotations.",
        "Suggest the corrected word or phrase only, not a rewrite of the sentence.",
    ]
    cases = _sentence_demos(
        "spelling_grammar",
        (obvious, subtle, near, clean),
        (
            "The sentence contains clear mistakes.",
            "A single mistake in an otherwise correct list.",
            near_reason,
            "No mistakes.",
        ),
    )
    return check(
        issue_type=a.facet,
        name=cap(goal),
        objective=f"Find {goal} in the page's visible text so each can be corrected.",
        look_at=[cap(WHERE_TEXT)],
        ignore=[NOT_PROSE, "Proper nouns, product names and quotations"],
        rules=rules,
        not_issues=[near_reason],
        cases=cases,
        reads="text",
        severity="medium in headings, titles and calls to action; low in body text",
        title_hint=f"{_TITLES[a.facet]}: {quote(markers[0])}",
        target_hint="the wrong word or phrase exactly as written",
        suggestion_hint="the corrected word or phrase",
    )
