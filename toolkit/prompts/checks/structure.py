"""Checks of a page's structure in its markup: one `<h1>`, header cells in data tables,
headings that are unique, captions under images."""

from __future__ import annotations

from toolkit.prompts.analysis import Analysis
from toolkit.prompts.checks import Check, check, demos, said


def _article(*blocks: str) -> str:
    return "<article>\n" + "\n".join(f"  {b}" for b in blocks) + "\n</article>"


_BODY = "<p>Scheduled exports now run every Monday.</p>"
_PRICES = "<tr><td>Pro</td><td>$49</td></tr><tr><td>Team</td><td>$99</td></tr>"
_CHART = '<img src="/img/exports-per-week.png" alt="Exports per week, rising from 120 to 310 in March">'


def structure(a: Analysis) -> Check:
    return {"one_h1": _one_h1, "table_headers": _table_headers, "unique_headings": _unique, "captions": _captions}[
        a.facet
    ](a)


def _one_h1(a: Analysis) -> Check:
    return check(
        issue_type="structure",
        name="Exactly one <h1> per page",
        objective=f"Check that the page has exactly one `<h1>`, its main title (“{said(a)}”).",
        look_at=["Every `<h1>` in the page, sidebars, headers and footers included"],
        ignore=["The `<title>` element, which is not a heading", "How big a heading looks: only its level counts"],
        rules=[
            "Count the `<h1>` elements in the whole document.",
            "Flag a page with none (report the page's first heading) and a page with two or more (report each "
            "extra `<h1>`).",
            "An `<h2>` styled to look large is not an `<h1>`.",
            "Suggest demoting extra titles to `<h2>`, or promoting the main title when there is none.",
        ],
        not_issues=["A `<title>` with the same text as the `<h1>`", "Large `<h2>` headings"],
        cases=demos(
            (
                "two main titles",
                "Two <h1>",
                _article("<h1>Scheduled exports</h1>", _BODY, "<h1>Pricing</h1>", "<p>Exports are in every plan.</p>"),
                "The page has two `<h1>` elements.",
            ),
            (
                "a second <h1> in a sidebar",
                "<h1> in an aside",
                _article("<h1>Scheduled exports</h1>", _BODY, "<aside><h1>Related posts</h1></aside>"),
                "The sidebar's `<h1>` is a second main title.",
            ),
            (
                "a large <h2> that looks like a title",
                "Styled <h2>",
                _article("<h1>Scheduled exports</h1>", '<h2 class="display">Every Monday, on time</h2>', _BODY),
                "Only one `<h1>`; the big `<h2>` is styled, not promoted.",
            ),
            (
                "one <h1>, sections in <h2>",
                "One main title",
                _article("<h1>Scheduled exports</h1>", _BODY, "<h2>Pricing</h2>", "<p>Exports are in every plan.</p>"),
                "Exactly one `<h1>`.",
            ),
        ),
        reads="markup",
        severity="medium (search engines and screen readers take the <h1> as the page's title)",
        title_hint="Second <h1> on the page",
        target_hint="the text of the extra (or first) heading",
        suggestion_hint="the heading as an <h2>, or the main title as the only <h1>",
    )


def _table_headers(a: Analysis) -> Check:
    return check(
        issue_type="structure",
        name="Header cells in data tables",
        objective=f"Find data tables whose header row or column is not marked up as `<th>` (“{said(a)}”).",
        look_at=["Every `<table>` that holds data"],
        ignore=['Layout tables marked `role="presentation"`'],
        rules=[
            "For each data table, find the row (or column) that labels the others.",
            "Flag the table when those labels are `<td>` cells, even when bold or styled to look like headers.",
            "A table with no `<th>` at all is a finding.",
            'Report the first row\'s text as targetText; suggest `<th scope="col">` (or `scope="row"`) cells.',
        ],
        not_issues=['Layout tables with `role="presentation"`', "Tables whose headers are `<th>` in `<thead>`"],
        cases=demos(
            (
                "no header cells at all",
                "Table without <th>",
                _article(_BODY, f"<table><tr><td>Plan</td><td>Price</td></tr>{_PRICES}</table>"),
                "The labels “Plan” and “Price” are ordinary `<td>` cells.",
            ),
            (
                "bold cells posing as headers",
                "Bold first row",
                _article(
                    _BODY,
                    f"<table><tr><td><strong>Plan</strong></td><td><strong>Price</strong></td></tr>{_PRICES}</table>",
                ),
                "The first row looks like a header, but its cells are `<td>`.",
            ),
            (
                "a layout table",
                "Layout table",
                _article(
                    '<table role="presentation"><tr><td><img src="/img/logo.png" alt="Northwind"></td>'
                    "<td>Scheduled exports now run every Monday.</td></tr></table>"
                ),
                "A layout table holds no data and needs no header cells.",
            ),
            (
                "header row in <thead> with <th>",
                "Marked-up header",
                _article(
                    _BODY,
                    '<table><thead><tr><th scope="col">Plan</th><th scope="col">Price</th></tr></thead>'
                    f"<tbody>{_PRICES}</tbody></table>",
                ),
                "The header cells are `<th>`.",
            ),
        ),
        reads="markup",
        severity="medium (screen readers announce each cell with its header)",
        title_hint="Table without header cells",
        target_hint="the text of the table's first row",
        suggestion_hint='the first row as <th scope="col"> cells in a <thead>',
    )


def _unique(a: Analysis) -> Check:
    return check(
        issue_type="structure",
        name="Unique headings",
        objective=f"Find headings whose text repeats another heading on the page (“{said(a)}”).",
        look_at=["`<h1>`–`<h6>`"],
        ignore=["Body text, link text and the `<title>`"],
        rules=[
            "Collect the text of every heading, trimmed, with case and spacing ignored.",
            "Flag every heading whose text equals an earlier one.",
            "Headings that only share words (“Pricing” and “Pricing FAQ”) are different.",
            "Report the repeated heading as targetText; suggest a heading that says what its section adds.",
        ],
        not_issues=["Headings that share words but differ (“Pricing” and “Pricing FAQ”)"],
        cases=demos(
            (
                "the same heading twice",
                "Repeated heading",
                _article("<h2>Pricing</h2>", _BODY, "<h2>Pricing</h2>", "<p>Exports are in every plan.</p>"),
                "“Pricing” heads two sections.",
            ),
            (
                "the same heading in another case and level",
                "Repeat differing in case",
                _article("<h2>Scheduled exports</h2>", _BODY, "<h3>Scheduled Exports</h3>", "<p>Choose a day.</p>"),
                "“Scheduled Exports” repeats “Scheduled exports”; case does not make it different.",
            ),
            (
                "headings that share a word",
                "Similar headings",
                _article("<h2>Pricing</h2>", _BODY, "<h2>Pricing FAQ</h2>", "<p>Exports are in every plan.</p>"),
                "“Pricing FAQ” is a different heading.",
            ),
            (
                "distinct headings",
                "Distinct headings",
                _article("<h2>Scheduled exports</h2>", _BODY, "<h2>Pricing</h2>", "<p>Exports are in every plan.</p>"),
                "Every heading is different.",
            ),
        ),
        reads="markup",
        severity="low (medium when the repeated headings are links in a table of contents)",
        title_hint="Repeated heading",
        target_hint="the repeated heading text",
        suggestion_hint="a heading that names what this section adds",
    )


def _captions(a: Analysis) -> Check:
    return check(
        issue_type="structure",
        name="Captions under images",
        objective=f"Find content images without a visible caption (“{said(a)}”).",
        look_at=["Every `<img>` and `<figure>`"],
        ignore=['Decorative images (`alt=""` or `role="presentation"`)', "Logos and icons"],
        rules=[
            "For each content image, look for a `<figcaption>` in the same `<figure>`.",
            "Flag an image outside a `<figure>`, and a figure whose caption is missing or empty.",
            "Alt text is not a caption: it is read aloud, not shown.",
            "Report the image's alt text (or file name) as targetText; suggest a one-line caption.",
        ],
        not_issues=['Decorative images with `alt=""`', "Alt text standing in for a caption is still a finding"],
        cases=demos(
            (
                "an image with no figure or caption",
                "Bare image",
                _article(_BODY, _CHART),
                "The chart has alt text but no caption.",
            ),
            (
                "a figure whose caption is empty",
                "Empty figcaption",
                _article(_BODY, f"<figure>{_CHART}<figcaption></figcaption></figure>"),
                "The `<figcaption>` is there but says nothing.",
            ),
            (
                "a decorative icon",
                "Decorative icon",
                _article('<p><img src="/img/icon-clock.svg" alt=""> Scheduled exports now run every Monday.</p>'),
                'A decorative icon (`alt=""`) needs no caption.',
            ),
            (
                "a figure with its caption",
                "Captioned chart",
                _article(
                    _BODY, f"<figure>{_CHART}<figcaption>Exports per week, January to March.</figcaption></figure>"
                ),
                "The chart has a caption.",
            ),
        ),
        reads="markup",
        severity="low",
        title_hint="Image without a caption",
        target_hint="the image's alt text or file name",
        suggestion_hint="a one-line caption saying what the image shows",
    )
