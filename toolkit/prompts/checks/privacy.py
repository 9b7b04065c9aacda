"""Personal data on a page: e-mail addresses, phone numbers, home addresses, card and
identity numbers, dates of birth. The check covers the kinds the instruction names, or all of
them when it names none ("Flag personal data", "No PII")."""

from __future__ import annotations

import re

from toolkit.prompts.analysis import Analysis
from toolkit.prompts.checks import Check, check, demos, esc, page, quoted_list, said

# kind: (what the instruction calls it, one of them, the pattern that names it, a plain example, a disguised
# example, a look-alike that is not personal data, why the look-alike is not)
_KINDS = {
    "email": (
        "e-mail addresses",
        "e-mail address",
        r"e-?mails?(?: address(?:es)?)?",
        "jane.doe@example.com",
        "maria.keller (at) example (dot) com",
        "Follow @NorthwindCloud for release notes.",
        "“@NorthwindCloud” is the company's social handle, not anyone's e-mail address.",
    ),
    "phone": (
        "phone numbers",
        "phone number",
        r"(?:tele)?phone|mobile numbers?|cell numbers?",
        "+1 555 014 2298",
        "555.014.2298",
        "Invoice 2025-014-2298 is attached.",
        "An invoice number shaped like a phone number reaches nobody.",
    ),
    "address": (
        "home addresses",
        "home address",
        r"(?:home|street|postal|mailing|physical) address(?:es)?",
        "42 Elm Street, Springfield",
        "flat 3, 17 Harbour Road",
        "Northwind Ltd., 1 Market Square, Leeds (registered office).",
        "A company's registered office is published on purpose and identifies no person.",
    ),
    "card": (
        "payment card numbers",
        "payment card number",
        r"credit cards?|card numbers?|payment cards?|\bpan\b",
        "4111 1111 1111 1111",
        "4111-1111-1111-1111",
        "Saved cards are shown masked, as •••• 1111.",
        "A masked card number with four digits visible is how payment pages show a card safely.",
    ),
    "id": (
        "identity numbers",
        "identity number",
        r"social security|\bssns?\b|passports?|national id|id numbers?|tax id",
        "SSN 123-45-6789",
        "passport no. X1234567",
        "Part no. 123-45-67 fits every model.",
        "A part number has the digits of an identity number but names no one.",
    ),
    "birth": (
        "dates of birth",
        "date of birth",
        r"dates? of birth|birth ?dates?|birthdays?|\bdob\b",
        "born 14 March 1987",
        "DOB 03/14/1987",
        "Northwind was founded on 14 March 1987.",
        "A company's founding date is not a person's date of birth.",
    ),
}


def named_kinds(instruction: str) -> list[str]:
    """The kinds of personal data the instruction names, in the order of :data:`_KINDS`
    (all of them when it names none)."""
    low = instruction.lower()
    named = [k for k, spec in _KINDS.items() if re.search(spec[2], low)]
    return named or list(_KINDS)


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def personal_data(a: Analysis) -> Check:
    kinds = named_kinds(a.instruction)
    name, one, _, plain, disguised, look_alike, why = _KINDS[kinds[0]]
    cases = demos(
        (
            f"{name} written plainly",
            "Contact details of a person",
            page(
                "Need help?",
                f"<p>Questions about your export? Ask Jane Doe: {esc(', '.join(_KINDS[k][3] for k in kinds))}.</p>",
            ),
            f"The page gives Jane Doe's {_and([_KINDS[k][1] for k in kinds])} in plain text.",
        ),
        (
            f"{name} disguised or reformatted",
            "Disguised in a testimonial",
            page(
                "What customers say",
                f"<blockquote>“Setup took ten minutes.” — Maria Keller, {esc(disguised)}</blockquote>",
            ),
            f"“{disguised}” is still Maria Keller's {one}, only written differently.",
        ),
        (
            f"looks like {name} but identifies no one",
            "A look-alike",
            page("Need help?", f"<p>{esc(look_alike)}</p>"),
            why,
        ),
        (
            "no personal data",
            "Help without personal details",
            page("Need help?", "<p>Questions about your export? Use the help menu or write to us from Settings.</p>"),
            "The page points to a channel, not to a person's details.",
        ),
    )
    what = [_KINDS[k][0] for k in kinds]
    return check(
        issue_type="personal-data",
        name="Personal data: " + ", ".join(what),
        objective=f"Find personal data that should not be published: {_and(what)} (“{said(a)}”).",
        look_at=["All visible text, quotations and testimonials included"],
        ignore=["Code samples that show a format (`name@example.com`) rather than someone's details"],
        rules=[
            f"Look for {quoted_list(what)} of a person, for example {quoted_list([_KINDS[k][3] for k in kinds])}.",
            "Also catch them written to dodge filters: “(at)” and “(dot)” for e-mail, dots or dashes between "
            "digits, digits split over a line.",
            "Report each item once, with the exact characters as targetText.",
            "Do not report the company's own published contact points, masked numbers (•••• 1111), or numbers "
            "that only look similar (invoice, order and part numbers).",
            "Suggest removing the item or replacing it with a channel that names no one (a help form, a role "
            "address such as support@).",
        ],
        not_issues=[why, "A person's name alone, as a byline or an attributed quotation"],
        cases=cases,
        reads="text",
        severity="high for card and identity numbers, medium for contact details and dates of birth",
        title_hint=f"Personal data: {one}",
        target_hint="the personal data exactly as written",
        suggestion_hint="remove it, or point to a channel that names no one",
    )
