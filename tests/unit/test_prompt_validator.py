"""Unit tests for toolkit.prompts: the deterministic offline prompt validator (api-v2 §4.10,
semantics §11) — determinism, the four tiers, demo pages that really contain or avoid the
issue, analysis prompts that name the instruction's subject, placeholders as required inputs,
the provider seam, and the generated documentation."""

from __future__ import annotations

import json
import random
import re
import string
from html.parser import HTMLParser

import pytest

from toolkit.errors import ApiError
from toolkit.model.agents import PromptValidatorResult
from toolkit.prompts import analyse, providers, register_adapter, run_provider, validate_prompt
from toolkit.prompts import docs as prompt_docs

TIERS = {"obvious_match", "subtle_match", "near_miss", "clean"}
TIERS_IN_ORDER = ("obvious_match", "subtle_match", "near_miss", "clean")
SECTIONS = ("## Objective", "## Scope", "## Detection logic", "## Output format")

INSTRUCTIONS = [
    "Flag any use of the word 'utilize' and suggest 'use' instead.",
    "Don't mention competitor names such as Acme or Globex.",
    "Don't mention our competitors.",
    "Avoid 'click here' as link text.",
    "Check that all links point to https URLs.",
    "No broken links",
    "External links should open in a new tab",
    "Flag claims like 'guaranteed results' or '100% safe' that need legal review.",
    "Don't promise health benefits",
    "Make sure every image has descriptive alt text.",
    "Headings must not skip levels",
    "Form fields need labels",
    "Check contrast of text",
    "Check the page for accessibility problems",
    "Dates must be written in ISO format (YYYY-MM-DD).",
    "Times should use the 24-hour clock",
    "Prices must include the currency symbol.",
    "Write numbers one to nine as words",
    "Headings should use sentence case.",
    "Headings must be in title case",
    "Don't use exclamation marks in headlines.",
    "Use the Oxford comma",
    "Avoid all caps",
    "No double spaces",
    "Ensure the tone is friendly and avoids jargon.",
    "Avoid passive voice",
    "Use inclusive language",
    "Be formal",
    "Check spelling.",
    "Check grammar",
    "Every page must include a copyright notice in the footer.",
    "Blog posts must have an author byline",
    "Product descriptions should mention the warranty period.",
    "Always write {{brand_name}} with a capital letter.",
    "Always write 'JavaScript' with a capital J and S.",
    "Replace 'whitelist' with 'allowlist' and 'blacklist' with 'blocklist'",
    "Never call {{product}} 'cheap' in headlines",
    "Make it better",
    "Flag sentences longer than 30 words.",
    "Make sure bullet lists have at least three items",
    "Flag personal data such as email addresses or phone numbers.",
    "No PII",
    "Flag emojis in headings.",
    "Avoid emoji",
    "Flag duplicated words like 'the the'.",
    "Flag profanity.",
    "Flag Lorem ipsum.",
    "Ensure phone numbers use international format.",
    "Check that every page has exactly one H1.",
    "Flag tables without header rows.",
    "Check that headings are unique.",
    "Flag images without captions.",
    "Check that acronyms are defined on first use.",
    "Use second person (you) rather than third person.",
    "Flag percentages written without the % sign.",
    "Ensure the reading level is grade 8 or below.",
    "Flag hashtags in body copy.",
    "Flag sentences that start with 'And' or 'But'.",
    "Don't start sentences with conjunctions",
    "Flag links to competitor websites.",
    "Videos must have captions.",
    "Check for broken images.",
]


# ------------------------------------------------------------------ a tiny HTML reader


class Page(HTMLParser):
    """Visible text (code excluded), headings, links and images of a demo page."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.headings: list[str] = []
        self.links: list[dict] = []
        self.images: list[dict] = []
        self.footer: list[str] = []
        self._stack: list[str] = []
        self._link: dict | None = None
        self.feed(html)
        self.visible = " ".join(self.text)

    def handle_starttag(self, tag, attrs):
        self._stack.append(tag)
        if tag == "a":
            self._link = {**dict(attrs), "text": ""}
            self.links.append(self._link)
        if tag == "img":
            self.images.append(dict(attrs))
            self._stack.pop()
        if re.fullmatch(r"h[1-6]", tag):
            self.headings.append("")

    def handle_endtag(self, tag):
        if tag in self._stack:
            while self._stack and self._stack.pop() != tag:
                pass
        if tag == "a":
            self._link = None

    def handle_data(self, data):
        if "code" in self._stack:
            return
        self.text.append(data)
        if self._link is not None:
            self._link["text"] += data
        if any(re.fullmatch(r"h[1-6]", t) for t in self._stack):
            self.headings[-1] += data
        if "footer" in self._stack:
            self.footer.append(data)


def cases(result: dict, *tiers: str) -> list[dict]:
    out = [c for c in result["demos"]["cases"] if c["tier"] in tiers]
    assert out, f"no case of tier {tiers}"
    return out


def pages(result: dict, *tiers: str) -> list[Page]:
    return [Page(c["html"]) for c in cases(result, *tiers)]


# ------------------------------------------------------------------ structure and determinism


@pytest.mark.parametrize("prompt", INSTRUCTIONS)
def test_full_result_for_every_kind(prompt):
    result = validate_prompt(prompt)
    PromptValidatorResult.model_validate(result)  # every field of §4.10, closed
    assert set(result) == {
        "analysis_prompt",
        "requires_tool",
        "response_descriptions",
        "demos",
        "suggested_required_inputs",
    }
    assert result["requires_tool"] in {"TOOL_TEXT_EXTRACTOR", "NONE"}
    assert set(result["response_descriptions"]) == {"title", "severity", "targetText", "suggestion", "issueType"}
    assert all(len(v) > 20 for v in result["response_descriptions"].values())
    demos = result["demos"]
    assert {c["tier"] for c in demos["cases"]} == TIERS
    for case in demos["cases"]:
        assert case["expected"] == ("detected" if case["tier"] in {"obvious_match", "subtle_match"} else "not_detected")
        assert case["dimension_tested"] in demos["detection_dimensions"]
        assert case["html"].startswith("<") and case["title"] and case["reason"]
    assert len({c["id"] for c in demos["cases"]}) == len(demos["cases"])
    assert len(set(demos["detection_dimensions"])) == len(demos["detection_dimensions"]) >= 4
    text = result["analysis_prompt"]
    positions = [text.index(s) for s in SECTIONS]
    assert positions == sorted(positions)
    assert re.search(r"^1\. ", text, re.M), "detection logic is a numbered list of rules"
    assert prompt.rstrip(".") in text


@pytest.mark.parametrize("prompt", INSTRUCTIONS)
def test_same_input_same_output(prompt):
    first = json.dumps(validate_prompt(prompt), ensure_ascii=False)
    assert all(json.dumps(validate_prompt(prompt), ensure_ascii=False) == first for _ in range(3))
    fields = [{"id": "tone", "title": "Tone", "type": "select", "example": ["formal", "casual"]}]
    assert validate_prompt(prompt, fields) == validate_prompt(prompt, [dict(f) for f in fields])


def test_whitespace_does_not_change_the_result():
    assert validate_prompt("Avoid  'click here'\n as link text.") == validate_prompt("Avoid 'click here' as link text.")


def test_any_text_gives_a_valid_result():
    rng = random.Random(7)
    samples = [
        "!!!",
        "?",
        "{{}}",
        "<>",
        "'",
        "our",
        "the word",
        "x" * 10_000,
        "é" * 50,
        "🙂 avoid emoji 🙂",
        "Don't use 'a'",
        "Replace 'x' with ''",
        "such as , , and",
        "Flag <img> tags",
        "Every <p> must contain {{x}}",
        "Replace Q3 with Q4 revenue",
        "\ue000 5 \ue001 replace \ue0009\ue001 with x",
        "x -> " * 2000,
        "write " * 1666,
    ]
    samples += ["".join(rng.choice(string.printable) for _ in range(rng.randint(1, 60))) for _ in range(200)]
    for prompt in samples:
        if prompt.strip():
            result = validate_prompt(prompt)
            PromptValidatorResult.model_validate(result)
            assert {c["tier"] for c in result["demos"]["cases"]} == TIERS, prompt


# ------------------------------------------------------------------ demos that really contain or avoid the issue


def test_forbidden_word_demos():
    r = validate_prompt("Flag any use of the word 'utilize' and suggest 'use' instead.")
    term = re.compile(r"\butiliz\w*", re.I)
    for p in pages(r, "obvious_match", "subtle_match"):
        assert term.search(p.visible), p.visible
    for p in pages(r, "near_miss", "clean"):
        assert "utiliz" not in p.visible.lower(), p.visible
    assert any(re.search(r"\buse\b", p.visible) for p in pages(r, "near_miss"))  # the approved word instead


def test_competitor_name_demos():
    r = validate_prompt("Don't mention competitor names such as Acme or Globex.")
    obvious, subtle = pages(r, "obvious_match")[0], pages(r, "subtle_match")[0]
    assert re.search(r"\bAcme\b", obvious.visible)
    assert re.search(r"\bGlobex’s\b", subtle.visible)  # the possessive form
    for p in pages(r, "near_miss", "clean"):
        assert not re.search(r"acme|globex", p.visible, re.I), p.visible


def test_competitor_list_placeholder_demos_use_the_sample_values():
    r = validate_prompt(
        "Don't mention our competitors.",
        [{"id": "competitors", "title": "Competitors", "type": "list", "example": ["Hooli", "Umbrella"]}],
    )
    assert re.search(r"\bHooli\b", pages(r, "obvious_match")[0].visible)
    assert re.search(r"\bUmbrella", pages(r, "subtle_match")[0].visible)
    for p in pages(r, "near_miss", "clean"):
        assert not re.search(r"hooli|umbrella", p.visible, re.I)
    assert "`{{competitors}}`" in r["analysis_prompt"]


def test_vague_link_text_demos():
    r = validate_prompt("Avoid 'click here' as link text.")
    for p in pages(r, "obvious_match", "subtle_match"):
        assert any(link["text"].strip().lower() == "click here" for link in p.links), p.links
    for p in pages(r, "near_miss", "clean"):
        assert p.links and all("click here" not in link["text"].lower() for link in p.links)
    # the near miss says "click" outside a descriptive link
    assert "click" in pages(r, "near_miss")[0].visible.lower()


def test_https_demos():
    r = validate_prompt("Check that all links point to https URLs.")
    for p in pages(r, "obvious_match", "subtle_match"):
        assert any(link.get("href", "").lower().startswith("http://") for link in p.links)
    for p in pages(r, "near_miss", "clean"):
        assert p.links and not any(link.get("href", "").lower().startswith("http:") for link in p.links)
    assert "http://" in cases(r, "near_miss")[0]["html"]  # only as code text
    assert r["requires_tool"] == "NONE"


def test_claims_demos():
    r = validate_prompt("Flag claims like 'guaranteed results' or '100% safe' that need legal review.")
    assert "guaranteed results" in pages(r, "obvious_match")[0].visible
    assert "100% safe" in pages(r, "subtle_match")[0].visible
    for p in pages(r, "near_miss", "clean"):
        assert "guaranteed" not in p.visible.lower() and "100%" not in p.visible
    assert re.search(r"\b(survey|study|audit)\b", pages(r, "near_miss")[0].visible)  # a sourced claim


def test_alt_text_demos():
    r = validate_prompt("Make sure every image has descriptive alt text.")
    obvious, subtle = pages(r, "obvious_match")[0], pages(r, "subtle_match")[0]
    assert obvious.images and "alt" not in obvious.images[0]
    assert re.fullmatch(r"\w+\.(jpg|png)", subtle.images[0]["alt"], re.I)
    near = pages(r, "near_miss")[0].images[0]
    assert near["alt"] == "" and near.get("role") == "presentation"
    clean = pages(r, "clean")[0].images[0]
    assert len(clean["alt"].split()) >= 5
    assert r["requires_tool"] == "NONE"


def test_date_demos():
    r = validate_prompt("Dates must be written in ISO format (YYYY-MM-DD).")
    wrong = re.compile(
        r"\b\d{2}/\d{2}/\d{4}\b|\b\d{1,2} (January|February|March|April) \d{4}\b|"
        r"\b(January|February|March|April) \d{1,2}, \d{4}\b"
    )
    for p in pages(r, "obvious_match", "subtle_match"):
        assert wrong.search(p.visible), p.visible
    for p in pages(r, "near_miss", "clean"):
        assert not wrong.search(p.visible) and re.search(r"\b\d{4}-\d{2}-\d{2}\b", p.visible)


def test_exact_spelling_demos():
    r = validate_prompt("Always write 'JavaScript' with a capital J and S.")
    any_form = re.compile(r"java[\s-]?script", re.I)
    for p in pages(r, "obvious_match", "subtle_match"):
        assert any(m.group(0) != "JavaScript" for m in any_form.finditer(p.visible)), p.visible
    for p in pages(r, "near_miss", "clean"):
        found = [m.group(0) for m in any_form.finditer(p.visible)]
        assert found and set(found) == {"JavaScript"}, found


def test_headline_exclamation_demos():
    r = validate_prompt("Don't use exclamation marks in headlines.")
    for p in pages(r, "obvious_match", "subtle_match"):
        assert any("!" in h for h in p.headings)
    for p in pages(r, "near_miss", "clean"):
        assert not any("!" in h for h in p.headings)
    # one near miss keeps the "!" in body text, outside the headings the rule covers
    assert any("!" in p.visible for p in pages(r, "near_miss"))
    assert r["requires_tool"] == "NONE"


def test_required_footer_element_demos():
    r = validate_prompt("Every page must include a copyright notice in the footer.")
    notice = re.compile(r"(©|copyright) 20\d\d \w+", re.I)
    for p in pages(r, "obvious_match", "subtle_match"):
        assert not notice.search(" ".join(p.footer))
    for p in pages(r, "near_miss", "clean"):
        assert notice.search(" ".join(p.footer))


_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
_DIGITS = re.compile(r"\d[\d .()/-]{6,}\d")


def test_personal_data_demos():
    r = validate_prompt("Flag personal data such as email addresses or phone numbers.")
    assert r["analysis_prompt"].startswith("# Personal data: e-mail addresses, phone numbers\n")
    obvious, subtle, near, clean = (pages(r, tier)[0].visible for tier in TIERS_IN_ORDER)
    assert _EMAIL.search(obvious) and _DIGITS.search(obvious)
    assert "(at)" in subtle and "(dot)" in subtle, "the subtle case disguises the address"
    assert not _EMAIL.search(near) and not _EMAIL.search(clean)
    assert not _DIGITS.search(clean)
    assert r["requires_tool"] == "TOOL_TEXT_EXTRACTOR"


def test_personal_data_covers_what_the_instruction_names_or_everything():
    phones = validate_prompt("Don't publish customers' phone numbers")
    assert phones["analysis_prompt"].startswith("# Personal data: phone numbers\n")
    obvious = pages(phones, "obvious_match")[0].visible
    assert _DIGITS.search(obvious) and not _EMAIL.search(obvious)
    near = pages(phones, "near_miss")[0].visible
    assert _DIGITS.search(near) and "Invoice" in near, "the near miss is a number shaped like a phone number"
    everything = validate_prompt("No PII")["analysis_prompt"]
    for kind in ("e-mail addresses", "phone numbers", "home addresses", "payment card", "identity", "birth"):
        assert kind in everything.split("\n")[0], kind


_EMOJI = re.compile("[\U0001f300-\U0001faff\u2600-\u27bf]")


def test_emoji_demos_follow_the_instructions_scope():
    headings = validate_prompt("Flag emojis in headings.")
    for p in pages(headings, "obvious_match", "subtle_match"):
        assert any(_EMOJI.search(h) for h in p.headings)
    near = pages(headings, "near_miss")[0]
    assert not any(_EMOJI.search(h) for h in near.headings) and _EMOJI.search(near.visible)
    assert headings["requires_tool"] == "NONE"
    text = validate_prompt("Avoid emoji")
    assert all(_EMOJI.search(p.visible) for p in pages(text, "obvious_match", "subtle_match"))
    near = pages(text, "near_miss")[0].visible
    assert "™" in near and not _EMOJI.search(near)
    assert not _EMOJI.search(pages(text, "clean")[0].visible)


def test_repeated_word_demos():
    r = validate_prompt("Flag duplicated words like 'the the'.")
    assert analyse("Flag duplicated words like 'the the'.").kind == "spelling_grammar"
    twice = re.compile(r"\b(\w+)\s+\1\b", re.I)
    for p in pages(r, "obvious_match", "subtle_match"):
        assert twice.search(p.visible)
    assert {m.group(1) for m in twice.finditer(pages(r, "near_miss")[0].visible)} == {"had", "that"}
    assert not twice.search(pages(r, "clean")[0].visible)


def test_profanity_demos_match_whole_words():
    r = validate_prompt("Flag profanity.")
    swear = re.compile(r"\b(?:damn|crap|hell)\b", re.I)
    assert all(swear.search(p.visible) for p in pages(r, "obvious_match", "subtle_match"))
    near = pages(r, "near_miss")[0].visible
    assert not swear.search(near) and re.search(r"hell|ass|sex", near, re.I), "letters of swear words inside others"
    assert not swear.search(pages(r, "clean")[0].visible)


def test_leftover_placeholder_text_is_a_terminology_check_with_the_usual_markers():
    a = analyse("Flag Lorem ipsum.")
    assert (a.kind, a.terms) == ("terminology", ("lorem ipsum", "TODO", "TBD"))
    assert analyse("Flag leftover placeholder text like TODO or TBD").terms == ("TODO", "TBD")
    r = validate_prompt("Flag dummy text")
    assert "lorem ipsum" in pages(r, "obvious_match")[0].visible.lower()


def test_phone_format_demos():
    r = validate_prompt("Ensure phone numbers use international format.")
    assert analyse("Ensure phone numbers use international format.").kind == "numbers_dates"
    number = re.compile(r"\+?[\d(][\d ().-]{8,}\d")

    def national(text):
        return [n for n in number.findall(text) if not n.startswith("+")]

    assert all(national(p.visible) for p in pages(r, "obvious_match", "subtle_match"))
    assert not any(national(p.visible) for p in pages(r, "near_miss", "clean"))
    assert "ext." in pages(r, "near_miss")[0].visible


def test_acronym_demos_spell_out_at_first_use_or_not():
    r = validate_prompt("Check that acronyms are defined on first use.")
    assert analyse("Spell out abbreviations").kind == "acronyms"
    assert analyse("Don't use acronyms").kind != "acronyms"  # a ban, not a rule about first use
    known = {"PDF", "URL", "CSV", "FAQ"}

    def first_use_bare(text):
        seen = set()
        for m in re.finditer(r"\b[A-Z]{2,}\b", text):
            acronym = m.group(0)
            if acronym in known or acronym in seen:
                continue
            seen.add(acronym)
            if text[m.start() - 1 : m.start()] != "(":
                return True
        return False

    assert all(first_use_bare(p.visible) for p in pages(r, "obvious_match", "subtle_match"))
    assert not any(first_use_bare(p.visible) for p in pages(r, "near_miss", "clean"))


def test_second_person_demos():
    r = validate_prompt("Use second person (you) rather than third person.")
    third = re.compile(r"\b(?:the user|users can|the customer)\b", re.I)
    assert all(third.search(p.visible) for p in pages(r, "obvious_match", "subtle_match"))
    assert not any(third.search(p.visible) for p in pages(r, "near_miss", "clean"))
    assert "you" in pages(r, "clean")[0].visible.lower()


@pytest.mark.parametrize(
    "prompt, right, wrong",
    [
        ("Flag percentages written without the % sign.", r"\d+%", r"\d+ ?(?:percent|per cent)|\d+ %"),
        ("Write percent as a word, not %", r"\d+ percent", r"\d+ ?%"),
    ],
)
def test_percent_demos(prompt, right, wrong):
    r = validate_prompt(prompt)
    assert all(re.search(wrong, p.visible) for p in pages(r, "obvious_match", "subtle_match"))
    for p in pages(r, "near_miss", "clean"):
        assert re.search(right, p.visible) and not re.search(wrong, p.visible)


@pytest.mark.parametrize(
    "prompt, fields, domains",
    [
        ("Flag links to competitor websites.", None, {"globex.example", "initech.example"}),
        ("Don't link to competitors such as Acme or Umbrella", None, {"acme.example", "umbrella.example"}),
        (
            "Never link to our competitors",
            [{"id": "competitors", "title": "Competitors", "type": "list", "example": ["Hooli", "Pied Piper"]}],
            {"hooli.example", "piedpiper.example"},
        ),
    ],
)
def test_competitor_link_demos(prompt, fields, domains):
    from urllib.parse import parse_qs, urlsplit

    r = validate_prompt(prompt, fields)
    assert analyse(prompt).facet == "competitor" and r["requires_tool"] == "NONE"

    def competitor_links(page):
        found = []
        for link in page.links:
            url = urlsplit(link["href"])
            targets = [url] + [urlsplit(u) for values in parse_qs(url.query).values() for u in values]
            found += [t.hostname for t in targets if t.hostname and any(t.hostname.endswith(d) for d in domains)]
        return found

    assert all(competitor_links(p) for p in pages(r, "obvious_match", "subtle_match"))
    assert not any(competitor_links(p) for p in pages(r, "near_miss", "clean"))


def test_video_caption_demos():
    r = validate_prompt("Videos must have captions.")
    assert r["requires_tool"] == "NONE"

    def uncaptioned(html):
        out = []
        for attrs, inner in re.findall(r"<video([^>]*)>(.*?)</video>", html, re.S):
            silent = "muted" in attrs and "controls" not in attrs
            captioned = re.search(r'<track[^>]*kind="captions"[^>]*src="[^"]+"', inner)
            out += [] if silent or captioned else [attrs]
        return out

    for case in r["demos"]["cases"]:
        assert bool(uncaptioned(case["html"])) == (case["expected"] == "detected"), case["tier"]


def test_broken_image_demos():
    r = validate_prompt("Check for broken images.")

    def broken(html):
        sources = re.findall(r'<img[^>]*?\bsrc="([^"]*)"', html)
        sources += [c.split()[0] for s in re.findall(r'srcset="([^"]*)"', html) for c in s.split(",")]
        good = re.compile(r"^(?:data:|/[^ ]|https?://[^ /]+)")
        return [u for u in sources if not good.match(u)]

    for case in r["demos"]["cases"]:
        assert bool(broken(case["html"])) == (case["expected"] == "detected"), case["tier"]
    assert analyse("Flag contractions like don't or can't.").terms == ("don't", "can't")


def test_hashtag_demos():
    r = validate_prompt("Flag hashtags in body copy.")
    tag = re.compile(r"(?<![\w&])#[A-Za-z]\w*")
    assert all(tag.search(p.visible) for p in pages(r, "obvious_match", "subtle_match"))
    near = pages(r, "near_miss")[0].visible
    assert "#1" in near and "C#" in near and not tag.search(near)
    assert not tag.search(pages(r, "clean")[0].visible)


@pytest.mark.parametrize(
    "prompt, words",
    [
        ("Flag sentences that start with 'And' or 'But'.", {"and", "but"}),
        ('Never begin a sentence with "However"', {"however"}),
        ("Don't start sentences with conjunctions", {"and", "but", "so", "or"}),
    ],
)
def test_sentence_opener_demos(prompt, words):
    r = validate_prompt(prompt)
    assert analyse(prompt).kind == "openers"

    def opens(page):
        texts = [t for t in page.text if t.strip()]
        starts = [m.group(1).lower() for t in texts for m in re.finditer(r"(?:^|[.!?]\s+)([A-Za-z]+)", t.strip())]
        return bool(words & set(starts))

    assert all(opens(p) for p in pages(r, "obvious_match", "subtle_match"))
    assert not any(opens(p) for p in pages(r, "near_miss", "clean"))


def test_instructions_without_a_word_to_look_for_get_no_invented_term():
    # Words of a bare "Flag …" name a category, not a term to forbid; a number is never a term.
    for prompt in (
        "Flag the same paragraph repeated on the page.",
        "Flag text that was translated by machine",
        "Flag numbered lists that should be bulleted.",  # a formatting word, but no check for it here
        "Flag dates in the past for upcoming events.",  # about the date, not how it is written
        "Ensure CTAs use action verbs.",  # a requirement, but not an element to include
    ):
        a = analyse(prompt)
        assert a.terms == () and a.kind != "terminology", prompt
        assert "## Notes" in validate_prompt(prompt)["analysis_prompt"]
    assert analyse("Flag headings that skip a level.").kind == "accessibility"
    assert (analyse("Flag gendered language").kind, analyse("Flag gendered language").facet) == ("tone", "inclusive")
    assert analyse("Don't say cheap").terms == ("cheap",)
    british = analyse("Flag British spellings such as colour or organise.")
    assert (british.kind, british.terms) == ("terminology", ("colour", "organise"))


@pytest.mark.parametrize(
    "prompt",
    [
        "Avoid click-bait headlines",
        "Avoid clichés",
        "Avoid stock photos",
        "Avoid vague calls to action",
        "Do not mention competitors",
    ],
)
def test_a_category_after_avoid_is_not_a_term_to_search_for(prompt):
    """What follows the verb names a kind of thing (a plural noun), not words a page would
    contain: the general review, with its note, rather than a search for "avoid clichés"."""
    a = analyse(prompt)
    assert a.terms == () and a.kind != "terminology", (a.kind, a.terms)
    assert "## Notes" in validate_prompt(prompt)["analysis_prompt"]


@pytest.mark.parametrize(
    "prompt, terms",
    [
        ("Don't say cheap in headlines", ("cheap",)),
        ("Don't write cheap, budget or bargain in product titles", ("cheap", "budget", "bargain")),
        ("Don't say cheap, and keep it short", ("cheap",)),
        ("Avoid saying world-class", ("world-class",)),
        ("Do not use Latin abbreviations", ("e.g.", "i.e.", "etc.")),
    ],
)
def test_the_words_after_a_terminology_signal_are_the_terms(prompt, terms):
    a = analyse(prompt)
    assert (a.kind, a.terms) == ("terminology", terms)
    r = validate_prompt(prompt)
    for page in pages(r, "obvious_match"):
        assert any(term in " ".join(page.text).lower() for term in terms), page.text


# ------------------------------------------------------------------ the analysis prompt names the subject


@pytest.mark.parametrize(
    "prompt, subject",
    [
        ("Flag any use of the word 'utilize' and suggest 'use' instead.", ["“utilize”", "“use”", "utilized"]),
        ("Don't mention competitor names such as Acme or Globex.", ["“Acme”", "“Globex”"]),
        ("Avoid 'click here' as link text.", ["“click here”", "link text"]),
        (
            "Flag claims like 'guaranteed results' or '100% safe' that need legal review.",
            ["“guaranteed results”", "“100% safe”", "source"],
        ),
        ("Make sure every image has descriptive alt text.", ["alt", "<img>"]),
        ("Dates must be written in ISO format (YYYY-MM-DD).", ["YYYY-MM-DD", "2025-03-04"]),
        ("Every page must include a copyright notice in the footer.", ["copyright notice", "footer"]),
        ("Headings should use sentence case.", ["sentence case", "<h1>"]),
        ("Ensure the tone is friendly and avoids jargon.", ["jargon", "friendly"]),
        ("Always write {{brand_name}} with a capital letter.", ["`{{brand_name}}`"]),
    ],
)
def test_analysis_prompt_names_the_subject(prompt, subject):
    text = validate_prompt(prompt)["analysis_prompt"]
    for term in subject:
        assert term in text, term
    detection = text[text.index("## Detection logic") : text.index("## Output format")]
    assert len(re.findall(r"^\d+\. ", detection, re.M)) >= 3


def test_kinds_are_read_from_the_instruction():
    assert (
        analyse("Use 'email' instead of 'e-mail'.").terms,
        analyse("Use 'email' instead of 'e-mail'.").preferred,
    ) == (("e-mail",), ("email",))
    assert analyse("Don't use 'utilize'").preferred == ()  # "use" after a negation is not an approval
    replace = analyse("Replace 'whitelist' with 'allowlist' and 'blacklist' with 'blocklist'")
    assert replace.terms == ("whitelist", "blacklist") and replace.preferred == ("allowlist", "blocklist")
    pairs = analyse("Use 'sign in' instead of 'log in' and 'email' not 'e-mail'")
    assert (pairs.terms, pairs.preferred) == (("log in", "e-mail"), ("sign in", "email"))
    assert analyse("Don't use exclamation marks in headlines.").kind == "formatting"
    assert analyse("Write numbers one to nine as words").kind == "numbers_dates"
    assert analyse("Product descriptions should mention the warranty period.").element == "warranty period"
    vague = validate_prompt("Make it better")
    assert "## Notes" in vague["analysis_prompt"] and "general editorial review" in vague["analysis_prompt"]
    assert analyse("Make sure each article ends with a summary.").element == "summary"


# ------------------------------------------------------------------ placeholders become required inputs


def test_placeholders_become_required_inputs():
    prompt = "Never compare {{brand_name}} or <product> with our competitors; sign as [company name] or {team}."
    result = validate_prompt(prompt)
    inputs = {i["id"]: i for i in result["suggested_required_inputs"]}
    assert set(inputs) == {"brand_name", "product", "company_name", "team", "competitors"}
    assert inputs["brand_name"]["placeholder"] == "{{brand_name}}" and inputs["brand_name"]["source"] == "placeholder"
    assert inputs["product"]["placeholder"] == "<product>"
    assert inputs["competitors"] == {
        **inputs["competitors"],
        "source": "instruction",
        "type": "list",
        "placeholder": "our competitors",
    }
    assert isinstance(inputs["competitors"]["example"], list)
    assert all(i["description"] for i in inputs.values())
    assert "**Runtime inputs:**" in result["analysis_prompt"]


def test_markup_in_the_instruction_is_not_a_placeholder():
    inputs = validate_prompt("Every <img> must have an alt attribute")["suggested_required_inputs"]
    assert inputs == []
    assert validate_prompt("Make sure our users feel welcome")["suggested_required_inputs"] == []


def test_user_context_fields_merge_and_fill_the_demos():
    fields = [
        {"id": "brand_name", "title": "Brand", "type": "string", "example": "SkyLark", "defaultValue": "SkyLark"},
        {"id": "region", "title": "Sales region", "type": "select", "example": ["EU", "US"]},
        {"id": "max_len", "title": "Max length", "type": "number", "defaultValue": 80},
    ]
    result = validate_prompt("Always write {{brand_name}} exactly as given.", fields)
    inputs = result["suggested_required_inputs"]
    assert [i["id"] for i in inputs] == ["brand_name", "region", "max_len"]
    brand = inputs[0]
    assert brand["title"] == "Brand" and brand["example"] == "SkyLark" and brand["defaultValue"] == "SkyLark"
    assert brand["source"] == "placeholder"
    assert inputs[1] == {
        "id": "region",
        "title": "Sales region",
        "type": "select",
        "source": "userContextField",
        "description": inputs[1]["description"],
        "example": ["EU", "US"],
    }
    assert inputs[2]["defaultValue"] == 80 and "example" not in inputs[2]
    assert "SkyLark" in pages(result, "clean")[0].visible
    assert "skylark" in pages(result, "obvious_match")[0].visible


# ------------------------------------------------------------------ requires_tool


@pytest.mark.parametrize(
    "prompt, tool",
    [
        ("Flag any use of the word 'utilize'.", "TOOL_TEXT_EXTRACTOR"),
        ("Ensure the tone is friendly.", "TOOL_TEXT_EXTRACTOR"),
        ("Dates must be written in ISO format.", "TOOL_TEXT_EXTRACTOR"),
        ("Make sure every image has descriptive alt text.", "NONE"),
        ("No broken links", "NONE"),
        ("Headings must not skip levels", "NONE"),
        ("Never call our product 'cheap' in headlines", "NONE"),
        ("Every page must include a copyright notice in the footer.", "NONE"),
    ],
)
def test_requires_tool_follows_what_the_check_reads(prompt, tool):
    result = validate_prompt(prompt)
    assert result["requires_tool"] == tool
    assert tool in result["analysis_prompt"] or (tool == "NONE" and "no tool" in result["analysis_prompt"])


# ------------------------------------------------------------------ providers


@pytest.fixture
def no_adapters():
    saved = dict(providers._ADAPTERS)
    providers._ADAPTERS.clear()
    yield
    providers._ADAPTERS.clear()
    providers._ADAPTERS.update(saved)


@pytest.mark.parametrize("provider, env", [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")])
def test_unconfigured_provider_is_a_failed_precondition(provider, env, monkeypatch, no_adapters):
    monkeypatch.delenv(env, raising=False)
    with pytest.raises(ApiError) as err:
        run_provider(provider, "Check spelling", [])
    assert err.value.code.value == "FAILED_PRECONDITION"
    assert env in err.value.message and provider in err.value.message


def test_configured_provider_runs_its_adapter(monkeypatch, no_adapters):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setattr(providers.importlib.util, "find_spec", lambda name: object())
    calls = []

    def adapter(prompt, fields):
        calls.append((prompt, fields))
        return validate_prompt("Check spelling")

    register_adapter("openai", adapter)
    assert run_provider("openai", "anything", []) == validate_prompt("Check spelling")
    assert calls == [("anything", [])]
    register_adapter("openai", lambda p, f: {"analysis_prompt": 1})
    with pytest.raises(ApiError) as err:
        run_provider("openai", "anything", [])
    assert err.value.code.value == "UNAVAILABLE"
    with pytest.raises(ValueError):
        register_adapter("gemini", adapter)


# ------------------------------------------------------------------ documentation


def test_prompt_validation_doc_is_up_to_date():
    """docs/prompt-validation.md is generated: `python -m toolkit.prompts.docs` rewrites it."""
    assert prompt_docs.DOC.read_text(encoding="utf-8") == prompt_docs.render(), (
        "docs/prompt-validation.md is stale: run python -m toolkit.prompts.docs"
    )
    assert prompt_docs.main(["--check"]) == 0


def test_doc_check_fails_on_a_stale_file(tmp_path):
    stale = tmp_path / "doc.md"
    stale.write_text("old", encoding="utf-8")
    assert prompt_docs.main(["--check", str(stale)]) == 1
    assert prompt_docs.main([str(stale)]) == 0 and prompt_docs.main(["--check", str(stale)]) == 0


def test_every_check_in_the_documented_table_is_a_check_of_its_own():
    names = []
    for prompt in prompt_docs.CHECKS:
        text = validate_prompt(prompt)["analysis_prompt"]
        assert "general editorial review" not in text, prompt
        names.append(text.split("\n", 1)[0])
    assert len(set(names)) == len(names)
