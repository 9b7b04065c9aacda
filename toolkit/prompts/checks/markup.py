"""Checks that read the markup: links (security, broken targets, new tabs, link text) and
accessibility (alt text, headings, form labels, contrast)."""

from __future__ import annotations

from toolkit.prompts.analysis import Analysis
from toolkit.prompts.checks import Case, Check, cap, check, demos, esc, page, quote, quoted_list


def _check(**fields) -> Check:
    """A check that reads the markup (tags and attributes)."""
    return check(reads="markup", **fields)


# ------------------------------------------------------------------ links


def links(a: Analysis) -> Check:
    return {
        "https": _https,
        "new_tab": _new_tab,
        "link_text": _link_text,
        "competitor": _competitor,
        "broken_images": _broken_images,
    }.get(a.facet, _broken)(a)


def _https(a: Analysis) -> Check:
    return _check(
        issue_type="insecure-link",
        name="Links that do not use HTTPS",
        objective="Find every link and embedded resource on the page whose address uses plain http://, so it can "
        "be switched to https://.",
        look_at=[
            "`href` of every `<a>` and `<area>`",
            "`src` of `<img>`, `<script>`, `<iframe>`, `<video>`",
            "`action` of every `<form>`",
        ],
        ignore=[
            "Addresses shown as text inside `<code>` or `<pre>` (examples, not links)",
            "Relative links (`/pricing`, `../guide`): they inherit the page's scheme",
        ],
        rules=[
            "Collect the address of every link and resource attribute listed in scope.",
            "Compare the scheme case-insensitively: `http://`, `HTTP://` and `Http://` are all plain HTTP.",
            "Report each insecure address once per element, with the full attribute value as targetText.",
            "Suggest the same address with `https://`; if the site is known not to serve HTTPS, say so "
            "instead of guessing.",
        ],
        not_issues=[
            "`https://` addresses",
            "Relative and fragment links (`/pricing`, `#faq`)",
            "`mailto:` and `tel:` links",
            "http:// written as text inside code samples",
        ],
        cases=demos(
            (
                "plain http:// link in body text",
                "http:// status link",
                page(
                    "Service status",
                    '<p>Check the <a href="http://status.northwind.example">status page</a> for incidents.</p>',
                ),
                "The link target uses plain http://.",
            ),
            (
                "insecure address in a footer, with an upper-case scheme",
                "HTTP:// in the footer",
                page(
                    "Pricing",
                    "<p>Plans start at $49 per month.</p>",
                    '<footer><ul><li><a href="HTTP://northwind.example/legal/terms.pdf">Terms (PDF)</a></li>'
                    "</ul></footer>",
                ),
                "The scheme is upper case and tucked into the footer, but it is still plain HTTP.",
            ),
            (
                "http:// only inside a code sample",
                "http:// in a code sample",
                page(
                    "Local setup",
                    "<p>Start the agent, then check it responds:</p>",
                    "<pre><code>curl http://localhost:8080/health</code></pre>",
                    '<p>Full guide: <a href="/docs/agent">agent setup</a>.</p>',
                ),
                "The http:// address is example text in a code block, and the only link is relative.",
            ),
            (
                "secure and relative links only",
                "HTTPS everywhere",
                page(
                    "Service status",
                    '<p>Check the <a href="https://status.northwind.example">status page</a> '
                    'or read the <a href="/docs/incidents">incident guide</a>.</p>',
                ),
                "Every link is https:// or relative.",
            ),
        ),
        severity="high for forms and scripts (data or code over plain HTTP); medium for links and images",
        title_hint="Insecure link: http://status.northwind.example",
        target_hint="the full http:// address",
        suggestion_hint="the same address with https://",
    )


def _broken(a: Analysis) -> Check:
    return _check(
        issue_type="broken-link",
        name="Broken or malformed links",
        objective="Find links that cannot work as written — empty, placeholder, malformed, or pointing to an "
        "anchor that does not exist on the page — so each can be fixed before publishing.",
        look_at=["`href` of every `<a>`", "the `id` attributes on the page (targets of `#fragment` links)"],
        ignore=["Whether a well-formed external address answers: this check does not fetch anything"],
        rules=[
            "Flag `href` that is missing, empty, or only `#`.",
            "Flag malformed addresses: a scheme without `:` or `//` (`https//`, `https:/`), spaces, or "
            "a misspelt scheme (`htp://`).",
            "For every `#fragment` link, look for an element with that `id` on the page; flag it when none exists.",
            "Flag `javascript:` links used as navigation.",
            "Report the link's visible text and `href`; suggest the intended address when it is evident.",
        ],
        not_issues=[
            "`#fragment` links whose target id exists on the page",
            "`mailto:` and `tel:` links",
            "Relative links (`/docs/export`)",
        ],
        cases=demos(
            (
                "empty or placeholder href",
                "Empty href",
                page(
                    "Plans", '<p>Compare plans on the <a href="">pricing page</a> or <a href="#">contact sales</a>.</p>'
                ),
                "One link has an empty href and the other only `#`.",
            ),
            (
                "malformed scheme and dangling fragment",
                "Malformed address and missing anchor",
                page(
                    "Docs",
                    '<p>See the <a href="https//northwind.example/docs">docs</a>.</p>',
                    '<p>Questions? Jump to the <a href="#faq">FAQ</a>.</p>',
                ),
                '`https//` lacks its colon, and no element on the page has id="faq".',
            ),
            (
                "working fragment, mailto and relative links",
                "Unusual but valid links",
                page(
                    "Docs",
                    '<p><a href="#install">Skip to installation</a> · '
                    '<a href="mailto:support@northwind.example">Email support</a></p>',
                    '<h3 id="install">Installation</h3>',
                    '<p>See also <a href="/docs/export">exports</a>.</p>',
                ),
                "The fragment's target exists, mailto is a valid scheme, and the relative link is well formed.",
            ),
            (
                "well-formed links",
                "Working links",
                page(
                    "Plans", '<p>Compare plans on the <a href="https://northwind.example/pricing">pricing page</a>.</p>'
                ),
                "Every link has a well-formed target.",
            ),
        ),
        severity="high for links in navigation and calls to action; medium elsewhere",
        title_hint="Broken link: empty href on “pricing page”",
        target_hint="the link's visible text and its href",
        suggestion_hint="the corrected address, or “add the missing target”",
    )


def _broken_images(a: Analysis) -> Check:
    return _check(
        issue_type="broken-image",
        name="Broken image sources",
        objective="Find images whose source cannot load as written — missing, empty, placeholder or malformed — "
        f"as the instruction asks: “{a.instruction.rstrip('.')}”.",
        look_at=["`src` and `srcset` of every `<img>`, and `<source>` in `<picture>`"],
        ignore=["Whether a well-formed address answers: this check does not fetch anything"],
        rules=[
            "Flag an `<img>` with no `src`, an empty one, or only `#`.",
            "Flag a malformed address: a scheme without `:` or `//` (`https//`), a misspelt scheme (`htp://`), "
            "spaces, or a local file path (`C:\\…`, `file://`).",
            "Flag each malformed candidate in `srcset` the same way.",
            "A `data:` URI and a relative path (`/img/chart.png`) are valid sources.",
            "Report the image's alt text and `src`; suggest the intended address when it is evident.",
        ],
        not_issues=["`data:` URIs", "Relative paths", "Lazy-loading images whose `src` is a real placeholder file"],
        cases=demos(
            (
                "empty src",
                "Empty image source",
                page("Reports", '<p>Weekly exports at a glance:</p><img src="" alt="Exports per week">'),
                "The image has an empty `src`.",
            ),
            (
                "malformed scheme in srcset",
                "Malformed srcset",
                page(
                    "Reports",
                    '<img src="/img/chart.png" alt="Exports per week" '
                    'srcset="/img/chart.png 1x, https//cdn.northwind.example/chart@2x.png 2x">',
                ),
                "The 2x candidate lacks the colon after `https`.",
            ),
            (
                "an inline data URI",
                "Data URI",
                page(
                    "Reports",
                    '<img src="data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4=" '
                    'alt="">',
                ),
                "A `data:` URI is a complete source.",
            ),
            (
                "relative and absolute sources",
                "Working sources",
                page(
                    "Reports",
                    '<img src="/img/chart.png" alt="Exports per week">',
                    '<img src="https://cdn.northwind.example/logo.svg" alt="Northwind">',
                ),
                "Both sources are well formed.",
            ),
        ),
        severity="medium",
        title_hint="Broken image source",
        target_hint="the image's alt text and src",
        suggestion_hint="the corrected address",
    )


def _new_tab(a: Analysis) -> Check:
    return _check(
        issue_type="link-target",
        name="External links open in a new tab",
        objective="Find links to other sites that do not open in a new tab, as the instruction requires.",
        look_at=["`href`, `target` and `rel` of every `<a>`"],
        ignore=["Links to the page's own site (relative links, or the same host)"],
        rules=[
            "A link is external when its `href` is absolute and its host differs from the page's "
            "(northwind.example in the demos).",
            'Flag an external link without `target="_blank"`, or with any other target (`_self`, `_top`).',
            'Also flag `target="_blank"` without `rel="noopener"` (or `noreferrer`): the new tab can '
            "control the opener.",
            "Suggest the missing attributes.",
        ],
        not_issues=["Internal links without a target", "`mailto:` and `tel:` links"],
        cases=demos(
            (
                "external link without target",
                "External link, same tab",
                page(
                    "Integrations",
                    '<p>Connect your <a href="https://docs.github.com/webhooks">GitHub webhooks</a>.</p>',
                ),
                "An external link with no target attribute.",
            ),
            (
                "external link with an explicit _self target",
                'target="_self"',
                page(
                    "Integrations",
                    '<ul><li><a href="https://slack.com/apps" target="_self">Slack app directory</a></li></ul>',
                ),
                "The target is set, but to `_self`.",
            ),
            (
                "internal link without target",
                "Internal link",
                page("Integrations", '<p>Read our <a href="/docs/webhooks">webhook guide</a>.</p>'),
                "The link stays on the site; opening it in the same tab is correct.",
            ),
            (
                "external link with target and rel",
                "New tab, safely",
                page(
                    "Integrations",
                    '<p>Connect your <a href="https://docs.github.com/webhooks" '
                    'target="_blank" rel="noopener">GitHub webhooks</a>.</p>',
                ),
                'External, `target="_blank"` and `rel="noopener"`.',
            ),
        ),
        severity='low (medium when rel="noopener" is missing on a _blank link)',
        title_hint="External link opens in the same tab",
        target_hint="the link's visible text and href",
        suggestion_hint='add target="_blank" rel="noopener"',
    )


def _domain(name: str) -> str:
    """A competitor's site for the demos: the name as given when it is a domain, else name.example."""
    low = name.lower().strip()
    return low if "." in low else "".join(c for c in low if c.isalnum() or c == "-") + ".example"


def _competitor(a: Analysis) -> Check:
    slot = next((p for p in a.inputs if "competitor" in p.id), None)
    names = list(a.terms) or list(slot.sample if slot else ("Globex", "Initech"))
    named = quoted_list(names) if a.terms else (f"`{slot.ref}`" if slot else "the competitors you supply")
    first, second = _domain(names[0]), _domain(names[1 % len(names)])
    return _check(
        issue_type="competitor-link",
        name="Links to competitors' websites",
        objective=f"Find links that send readers to a competitor's website ({named}), as the instruction asks: "
        f"“{a.instruction.rstrip('.')}”.",
        look_at=["`href` of every `<a>` and `<area>`, including redirect and tracking links"],
        ignore=["Mentions of a competitor in text without a link", "Links within the page's own site"],
        rules=[
            f"List the competitors' domains: {', '.join([first, second] if first != second else [first])} in the "
            "demos; at run time the competitors the instruction names or the caller supplies.",
            "Flag a link whose host is a competitor's domain or one of its subdomains (www., shop., docs.).",
            "Also flag a redirect or tracking link whose target parameter (`?u=`, `?url=`, `?to=`) decodes to "
            "one of them.",
            "A link on the page's own site whose path names a competitor (/compare/globex) is not a finding.",
            "Report the link text and its href; suggest removing the link or pointing it to our own page.",
        ],
        not_issues=["A competitor named in text, unlinked", "Our own comparison pages that name a competitor"],
        cases=demos(
            (
                "a direct link to a competitor",
                "Link to a competitor",
                page(
                    "Compare plans",
                    f'<p>See how we compare to <a href="https://www.{first}/pricing">their plans</a>.</p>',
                ),
                f"The link goes to {first}.",
            ),
            (
                "a competitor behind a redirect",
                "Redirected link",
                page(
                    "Compare plans",
                    f'<ul><li><a href="https://go.northwind.example/r?u=https%3A%2F%2Fshop.{second}%2F">A '
                    "cheaper alternative</a></li></ul>",
                ),
                f"The redirect's target is shop.{second}.",
            ),
            (
                "our own page that names a competitor",
                "Internal comparison page",
                page(
                    "Compare plans",
                    f'<p>Read <a href="/compare/{first.split(".")[0]}">how Northwind compares</a>; '
                    f"{esc(names[0])} is mentioned, not linked.</p>",
                ),
                "The link stays on our site, and the competitor is only named.",
            ),
            (
                "only our own links",
                "No competitor links",
                page("Compare plans", '<p>See <a href="/pricing">our plans</a> and <a href="/docs">the docs</a>.</p>'),
                "Every link stays on our site.",
            ),
        ),
        severity="medium",
        title_hint="Link to a competitor's site",
        target_hint="the link's visible text and href",
        suggestion_hint="remove the link, or point it to our own page",
    )


_VAGUE = ["click here", "read more", "learn more", "here", "more"]


def _link_text(a: Analysis) -> Check:
    terms = list(a.terms) or _VAGUE[:3]
    vague = list(dict.fromkeys(terms + _VAGUE))
    first, second = terms[0], terms[1] if len(terms) > 1 else terms[0]
    return _check(
        issue_type="link-text",
        name=f"Vague link text such as {quoted_list(terms)}",
        objective=f"Find links whose text does not say where they lead — {quoted_list(terms)} and the like — so "
        "screen-reader users and skimmers can tell links apart.",
        look_at=["The visible text of every `<a>` (and its `aria-label` when present)"],
        ignore=["Words outside link text: “click” in a sentence is fine when the link itself is descriptive"],
        rules=[
            "Take each link's accessible name: its `aria-label` if present, else its visible text, trimmed and "
            "lower-cased.",
            f"Flag it when the name is, or is only, a vague phrase: {quoted_list(vague)}.",
            f"Match regardless of case and trailing punctuation (“{cap(first)}…” and “{first.upper()}” count).",
            "Flag several links on one page that share the same text but lead to different addresses.",
            "Suggest link text that names the destination, using the surrounding sentence and the href.",
        ],
        not_issues=[
            "Descriptive link text that happens to sit next to the word “click” or “here” in the sentence",
            "A vague visible text with a descriptive `aria-label`",
        ],
        cases=demos(
            (
                "vague phrase as the whole link text",
                f"{quote(first)} link",
                page("Exports", f'<p>To schedule a weekly export, <a href="/docs/export">{esc(first)}</a>.</p>'),
                f"The link text is {quote(first)}, which names no destination.",
            ),
            (
                "vague text in a card, different case",
                f"{quote(cap(second))} in a card",
                page(
                    "Blog",
                    '<div class="card"><h3>Q3 product update</h3>'
                    f'<a href="/blog/q3-update">{esc(cap(second))}</a></div>',
                ),
                f"{quote(cap(second))} is vague even though the card heading gives context nearby.",
            ),
            (
                "“click” outside a descriptive link",
                "Descriptive link after “click”",
                page(
                    "Exports",
                    '<p>To schedule a weekly export, click <a href="/docs/export">the export scheduling guide</a>.</p>',
                ),
                "The sentence says “click”, but the link text itself names its destination.",
            ),
            (
                "descriptive link text",
                "Descriptive links",
                page("Exports", '<p>Read the <a href="/docs/export">export scheduling guide</a>.</p>'),
                "The link text says where the link leads.",
            ),
        ),
        severity="medium (a WCAG 2.4.4 failure); low for a vague link with a descriptive aria-label missing only "
        "on decorative repeats",
        title_hint=f"Vague link text {quote(first)}",
        target_hint="the link text exactly as shown",
        suggestion_hint="link text naming the destination, e.g. “export scheduling guide”",
    )


# ------------------------------------------------------------------ accessibility


def accessibility(a: Analysis) -> Check:
    return {
        "contrast": _contrast,
        "headings": _headings,
        "form_labels": _labels,
        "general": _general,
        "captions": _video_captions,
    }.get(a.facet, _alt_text)(a)


_VIDEO = '<video controls src="/media/scheduled-exports.mp4">'


def _video_captions(a: Analysis) -> Check:
    return _check(
        issue_type="accessibility",
        name="Captions on videos",
        objective="Find videos with speech or meaningful sound that have no captions track, as the instruction "
        f"asks: “{a.instruction.rstrip('.')}”.",
        look_at=["Every `<video>` and its `<track>` children", "Embedded players (`<iframe>` from video hosts)"],
        ignore=["Muted decorative videos without sound (`muted` and no `controls`)"],
        rules=[
            'For each `<video>` with sound, look for a `<track kind="captions">` with a `src`.',
            'Flag a video with no track, or only `kind="subtitles"` (a translation for viewers who hear the '
            "audio: captions also describe sounds), or a captions track with an empty `src`.",
            "For an embedded player, flag it when the page states it has no captions; say it cannot be checked "
            "from the markup otherwise.",
            "Report the video's `src` as targetText; suggest adding a WebVTT captions track.",
        ],
        not_issues=["Muted, looping background videos without controls", "Videos with a captions track"],
        cases=demos(
            (
                "video without any track",
                "No captions track",
                page("Product tour", f"{_VIDEO}</video>"),
                "The video has no `<track>` at all.",
            ),
            (
                "subtitles but no captions",
                "Subtitles only",
                page(
                    "Product tour",
                    f'{_VIDEO}<track kind="subtitles" srclang="de" src="/media/tour.de.vtt"></video>',
                ),
                "German subtitles are no captions for deaf viewers of the English audio.",
            ),
            (
                "a muted background loop",
                "Decorative background video",
                page("Product tour", '<video autoplay muted loop src="/media/dashboard-loop.mp4"></video>'),
                "A muted loop without controls carries no sound to caption.",
            ),
            (
                "video with a captions track",
                "Captioned video",
                page(
                    "Product tour",
                    f'{_VIDEO}<track kind="captions" srclang="en" src="/media/tour.en.vtt" default></video>',
                ),
                "The video has an English captions track.",
            ),
        ),
        severity="high (WCAG 1.2.2, level A)",
        title_hint="Video without captions",
        target_hint="the video's src",
        suggestion_hint='add <track kind="captions" srclang="en" src="….vtt">',
    )


_ALT_RULES = [
    'Find every `<img>` (and `<input type="image">`, `<area>`).',
    "Flag an image with no `alt` attribute at all.",
    "Flag `alt` text that does not describe the image: a file name (`IMG_2041.jpg`), a generic word "
    "(“image”, “photo”, “picture”, “graphic”), or the same text as the adjacent caption or link.",
    "An image that carries information (chart, diagram, screenshot, photo of a person or product) needs alt "
    "text that conveys that information, e.g. the trend a chart shows.",
    "Report the image's `src` as targetText and suggest alt text from the surrounding heading, caption and file name.",
]


def _alt_text(a: Analysis) -> Check:
    return _check(
        issue_type="accessibility",
        name="Descriptive alt text on images",
        objective="Find images whose alternative text is missing or does not describe them, so screen-reader "
        "users get the same information as sighted readers.",
        look_at=['Every `<img>`, `<input type="image">` and `<area>`, with its `alt`, surrounding caption and heading'],
        ignore=["CSS background images", "Images inside `<svg>` with their own `<title>`"],
        rules=list(_ALT_RULES),
        not_issues=[
            'Decorative images with an empty `alt=""` (and ideally `role="presentation"`): empty alt '
            "is the correct way to hide them",
            "Images whose alt text describes them in a few words",
        ],
        cases=demos(
            (
                "image with no alt attribute",
                "Chart without alt",
                page("Q3 results", '<img src="/img/q3-revenue-chart.png">', "<p>Revenue grew again.</p>"),
                "The chart has no alt attribute at all.",
            ),
            (
                "alt text that is a file name",
                "File name as alt text",
                page(
                    "Team offsite",
                    '<img src="/img/team-offsite.jpg" alt="IMG_2041.jpg">',
                    "<p>Our team met in Lisbon.</p>",
                ),
                "The alt attribute exists, but a file name describes nothing.",
            ),
            (
                "decorative image with empty alt",
                "Decorative divider",
                page(
                    "Q3 results",
                    "<p>Revenue grew again.</p>",
                    '<img src="/img/divider.svg" alt="" role="presentation">',
                ),
                "Empty alt on a purely decorative image is correct.",
            ),
            (
                "descriptive alt text",
                "Described chart",
                page(
                    "Q3 results",
                    '<img src="/img/q3-revenue-chart.png" alt="Bar chart: revenue rose from $2.1M '
                    'in Q2 to $2.6M in Q3">',
                ),
                "The alt text states what the chart shows.",
            ),
        ),
        severity="high for informative images with no alt; medium for non-descriptive alt; low for redundant alt",
        title_hint="Image without alt text: q3-revenue-chart.png",
        target_hint="the image's src",
        suggestion_hint="alt text describing the image, e.g. “Bar chart: revenue rose from $2.1M to $2.6M”",
    )


def _headings(a: Analysis) -> Check:
    return _check(
        issue_type="accessibility",
        name="Heading levels in order",
        objective="Find headings that skip levels or misuse heading tags, so the page outline makes sense to "
        "screen-reader users navigating by heading.",
        look_at=["`<h1>`–`<h6>` in document order"],
        ignore=["Text styled to look like a heading without a heading tag (report separately if asked)"],
        rules=[
            "List the headings in document order with their levels.",
            "Flag a heading whose level is more than one deeper than the previous heading (h2 → h4).",
            "Flag a page with more than one `<h1>`, or none.",
            "Flag empty headings.",
            "Report the offending heading's text as targetText and suggest the correct level.",
        ],
        not_issues=[
            "Going back up any number of levels (h4 → h2): that starts a new section",
            "Consecutive headings of the same level",
        ],
        cases=demos(
            (
                "skipped level right after the title",
                "h1 followed by h4",
                "<article>\n  <h1>Exports</h1>\n  <h4>Schedule a weekly export</h4>\n  <p>Choose a day.</p>\n"
                "</article>",
                "The outline jumps from h1 to h4.",
            ),
            (
                "skipped level deep in the outline",
                "h3 followed by h5",
                "<article>\n  <h1>Exports</h1>\n  <h2>Formats</h2>\n  <h3>CSV</h3>\n  <h5>Delimiters</h5>\n</article>",
                "Correct until the last heading, which skips h4.",
            ),
            (
                "returning to a higher level",
                "h3 back to h2",
                "<article>\n  <h1>Exports</h1>\n  <h2>Formats</h2>\n  <h3>CSV</h3>\n  <h2>Schedules</h2>\n</article>",
                "Going up from h3 to h2 is allowed: it opens a new section.",
            ),
            (
                "consistent outline",
                "Nested headings",
                "<article>\n  <h1>Exports</h1>\n  <h2>Formats</h2>\n  <h3>CSV</h3>\n</article>",
                "Each heading is at most one level below the previous one.",
            ),
        ),
        severity="medium for skipped levels; high for a missing or duplicated h1",
        title_hint="Heading level skipped: h1 → h4",
        target_hint="the text of the heading that skips a level",
        suggestion_hint="the level it should have, e.g. “make this an h2”",
    )


def _labels(a: Analysis) -> Check:
    return _check(
        issue_type="accessibility",
        name="Labels on form fields",
        objective="Find form fields without an accessible label, so every input is announced correctly.",
        look_at=["`<input>` (except hidden, submit, button), `<select>`, `<textarea>` and their labels"],
        ignore=["Hidden inputs and buttons, which are labelled by their value or text"],
        rules=[
            "For each field, look for a `<label for=…>` matching its `id`, a wrapping `<label>`, `aria-label` "
            "or `aria-labelledby`.",
            "Flag a field with none of them; a `placeholder` alone is not a label.",
            "Flag a `<label for>` that points to an id that does not exist.",
            "Report the field's name or type as targetText and suggest a label text.",
        ],
        not_issues=["A field with `aria-label` or `aria-labelledby`", "A field wrapped inside its `<label>`"],
        cases=demos(
            (
                "field with only a placeholder",
                "Placeholder instead of label",
                page(
                    "Newsletter",
                    '<form><input type="email" name="email" placeholder="Email"><button>Subscribe</button></form>',
                ),
                "The email field has no label, only a placeholder.",
            ),
            (
                "label pointing to the wrong id",
                "Mismatched for/id",
                page(
                    "Newsletter",
                    '<form><label for="email">Email</label><input type="email" id="e-mail">'
                    "<button>Subscribe</button></form>",
                ),
                'The label exists, but its for="email" matches no field.',
            ),
            (
                "field labelled by aria-label",
                "aria-label",
                page(
                    "Search", '<form><input type="search" aria-label="Search the docs"><button>Search</button></form>'
                ),
                "aria-label is an accessible label.",
            ),
            (
                "properly labelled field",
                "Label with matching id",
                page(
                    "Newsletter",
                    '<form><label for="email">Email</label><input type="email" id="email">'
                    "<button>Subscribe</button></form>",
                ),
                "The label's for matches the field's id.",
            ),
        ),
        severity="high for required fields; medium otherwise",
        title_hint="Form field without a label: email",
        target_hint="the field's name, id or type",
        suggestion_hint='a visible label, e.g. <label for="email">Email</label>',
    )


def _contrast(a: Analysis) -> Check:
    return _check(
        issue_type="accessibility",
        name="Text colour contrast",
        objective="Find text whose colour contrast with its background is below WCAG AA (4.5:1 for normal text, "
        "3:1 for large text), so it stays readable.",
        look_at=["Inline `style` colours and backgrounds, and `<style>` rules that apply to text"],
        ignore=["Logos and disabled controls (exempt in WCAG)", "Colours that cannot be resolved from the HTML"],
        rules=[
            "For each text element with a resolvable colour and background (default background: white), compute "
            "the WCAG contrast ratio from relative luminance.",
            "Normal text needs at least 4.5:1; large text (24px, or 18.66px bold) needs 3:1.",
            "Report the element's text as targetText, with the two colours and the ratio in the title.",
            "Suggest the nearest darker (or lighter) colour that passes.",
        ],
        not_issues=["Ratios at or above the threshold, even if the colour looks light (#767676 on white is 4.54:1)"],
        cases=demos(
            (
                "very light text",
                "Light grey on white",
                page("Pricing", '<p style="color:#bbbbbb">Prices exclude VAT.</p>'),
                "#bbbbbb on white is 1.9:1.",
            ),
            (
                "just below the threshold",
                "4.48:1 grey",
                page("Pricing", '<p style="color:#777777">Prices exclude VAT.</p>'),
                "#777777 on white is 4.48:1, just under 4.5:1.",
            ),
            (
                "just above the threshold",
                "4.54:1 grey",
                page("Pricing", '<p style="color:#767676">Prices exclude VAT.</p>'),
                "#767676 on white is 4.54:1, which passes.",
            ),
            (
                "dark text",
                "Dark grey on white",
                page("Pricing", '<p style="color:#333333">Prices exclude VAT.</p>'),
                "#333333 on white is 12.6:1.",
            ),
        ),
        severity="high below 3:1; medium between 3:1 and 4.5:1 for normal text",
        title_hint="Low contrast: #bbbbbb on #ffffff (1.9:1)",
        target_hint="the text of the low-contrast element",
        suggestion_hint="a passing colour, e.g. #767676 or darker",
    )


def _general(a: Analysis) -> Check:
    check = _alt_text(a)
    check.name = "Common accessibility problems"
    check.objective = (
        "Find the common accessibility problems a page check can see in its HTML — images without "
        "useful alt text, skipped heading levels, vague link text and unlabelled form fields."
    )
    check.rules = _ALT_RULES[:3] + [
        "Flag a heading more than one level deeper than the previous heading (h2 → h4).",
        "Flag links whose whole text is “click here”, “read more” or “here”.",
        "Flag form fields with no `<label>`, `aria-label` or `aria-labelledby` (a placeholder is not a label).",
        "Report each problem separately; set issueType to accessibility and name the WCAG criterion in the title.",
    ]
    subtle = Case(
        "subtle_match",
        "skipped heading level",
        "h2 followed by h4",
        "<article>\n  <h1>Exports</h1>\n  <h2>Formats</h2>\n  <h4>CSV</h4>\n</article>",
        "The outline skips h3.",
    )
    check.cases[1] = subtle
    check.dimensions = list(dict.fromkeys(c.dimension for c in check.cases))
    check.title_hint = "Image without alt text (WCAG 1.1.1)"
    check.target_hint = "the element at fault: the image src, heading text, link text or field name"
    check.suggestion_hint = "the concrete fix: alt text, heading level, link text or label"
    check.notes.append(
        f"The instruction does not name one accessibility rule, so the common checks apply: "
        f"{quote('alt text')}, heading order, link text and form labels."
    )
    return check
