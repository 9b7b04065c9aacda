"""Words a sentence must not start with: "Flag sentences that start with 'And' or 'But'"."""

from __future__ import annotations

from toolkit.prompts.analysis import Analysis
from toolkit.prompts.checks import Check, cap, check, demos, esc, page, quoted_list, said

CONJUNCTIONS = ("And", "But", "So", "Or")  # when the instruction names none ("conjunctions")


def openers(a: Analysis) -> Check:
    words = [cap(t) for t in a.terms] or list(CONJUNCTIONS)
    first, second = words[0], words[1 % len(words)]
    return check(
        issue_type="sentence-opener",
        name=f"Sentences starting with {quoted_list(words)}",
        objective=f"Find sentences that start with {quoted_list(words)} (“{said(a)}”).",
        look_at=["Every sentence of the visible text: paragraphs, list items, table cells, captions"],
        ignore=["The same words inside a sentence", "Quotations", "Code"],
        rules=[
            f"Split the text into sentences and take each one's first word, case ignored: {quoted_list(words)}.",
            "A list item or table cell is a sentence of its own, so it starts one too.",
            "Only the whole word counts: “Android” does not start with “And”.",
            "Report the sentence's first few words as targetText; suggest the sentence joined to the one "
            "before it, or started another way.",
        ],
        not_issues=["The words in the middle of a sentence", "Longer words that begin with the same letters"],
        cases=demos(
            (
                "a paragraph's sentence starts with the word",
                "Sentence opener in a paragraph",
                page("Exports", f"<p>Exports run nightly. {esc(first)} they arrive before nine.</p>"),
                f"The second sentence starts with “{first}”.",
            ),
            (
                "a list item starts with the word",
                "Opener in a list item",
                page("Exports", f"<ul><li>Exports run nightly.</li><li>{esc(second)} you can pause them.</li></ul>"),
                f"The list item starts with “{second}”.",
            ),
            (
                "the word inside a sentence, a longer word at the start",
                "The word mid-sentence",
                page(
                    "Exports",
                    f"<p>Exports run nightly, {esc(first.lower())} reports arrive before nine. "
                    "Android users get them too.</p>"
                    if first == "And"
                    else f"<p>Exports run nightly, {esc(first.lower())} reports arrive before nine.</p>",
                ),
                f"“{first.lower()}” joins two clauses inside one sentence; no sentence starts with it.",
            ),
            (
                "sentences that start otherwise",
                "Other openers",
                page("Exports", "<p>Exports run nightly. They arrive before nine.</p>"),
                "No sentence starts with the words.",
            ),
        ),
        reads="text",
        severity="low",
        title_hint=f"Sentence starts with “{first}”",
        target_hint="the sentence's first few words, verbatim",
        suggestion_hint="the sentence joined to the previous one, or started another way",
    )
