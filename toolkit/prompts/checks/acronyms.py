"""Acronyms spelled out at first use: "single sign-on (SSO)" before "SSO" alone."""

from __future__ import annotations

from toolkit.prompts.analysis import Analysis
from toolkit.prompts.checks import Check, check, demos, page, said


def acronyms(a: Analysis) -> Check:
    return check(
        issue_type="acronym",
        name="Acronyms spelled out at first use",
        objective=f"Find acronyms used before the page spells them out (“{said(a)}”).",
        look_at=["All visible text, in reading order"],
        ignore=["Acronyms every reader knows (PDF, URL, CSV, FAQ)", "Product names styled in capitals", "Code"],
        rules=[
            "Find each acronym: a word of two or more capital letters (SSO, SLA, API).",
            "At its first appearance on the page, it must come with its expansion: “single sign-on (SSO)” or "
            "“SSO (single sign-on)”, or an `<abbr title>`.",
            "Flag the first appearance when the expansion is missing there, even if it comes later.",
            "Report the first sentence that uses the acronym; suggest that sentence with the expansion added.",
        ],
        not_issues=["Acronyms every reader knows (PDF, URL, CSV, FAQ)", "Later uses, once it has been spelled out"],
        cases=demos(
            (
                "acronym never spelled out",
                "Bare acronym",
                page("Security", "<p>Turn on SSO for your workspace from Settings.</p>"),
                "“SSO” is never spelled out.",
            ),
            (
                "spelled out only at its second use",
                "Expansion comes too late",
                page(
                    "Security",
                    "<p>Every plan includes an SLA.</p>",
                    "<p>Our service-level agreement (SLA) promises 99.9% uptime.</p>",
                ),
                "“SLA” appears first without its expansion; spelling it out later does not help the first reader.",
            ),
            (
                "acronyms every reader knows",
                "Common acronyms",
                page("Security", "<p>Download the report as a PDF or share its URL.</p>"),
                "PDF and URL need no expansion.",
            ),
            (
                "spelled out at first use",
                "Expanded at first use",
                page(
                    "Security",
                    "<p>Turn on single sign-on (SSO) for your workspace.</p>",
                    "<p>SSO works with every identity provider.</p>",
                ),
                "“SSO” is spelled out the first time and used alone afterwards.",
            ),
        ),
        reads="text",
        severity="low",
        title_hint="Acronym not spelled out at first use: “SSO”",
        target_hint="the first sentence that uses the acronym",
        suggestion_hint="the sentence with the acronym spelled out, e.g. “single sign-on (SSO)”",
    )
