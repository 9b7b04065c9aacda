"""Structure checks in the prompt validator (semantics §11): one <h1>, header cells in data
tables, unique headings, captions under images — each demo page read back by an independent
parser, so the detected tiers really break the rule and the others really keep it."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from toolkit.prompts import analyse, validate_prompt


class Outline(HTMLParser):
    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.h1 = 0
        self.headings: list[str] = []
        self.tables: list[dict] = []  # {"layout": bool, "th": int}
        self.images: list[dict] = []  # {"alt": str, "caption": str | None}
        self._heading = False
        self._figure: list[dict] | None = None
        self._caption: dict | None = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.h1 += tag == "h1"
            self.headings.append("")
            self._heading = True
        if tag == "table":
            self.tables.append({"layout": a.get("role") == "presentation", "th": 0})
        if tag == "th":
            self.tables[-1]["th"] += 1
        if tag == "figure":
            self._figure = []
        if tag == "img":
            image = {"alt": a.get("alt", ""), "caption": None}
            self.images.append(image)
            if self._figure is not None:
                self._figure.append(image)
        if tag == "figcaption" and self._figure is not None:
            for image in self._figure:
                image["caption"] = ""
            self._caption = {"figure": self._figure}

    def handle_endtag(self, tag):
        if tag.startswith("h") and tag[1:].isdigit():
            self._heading = False
        if tag == "figcaption":
            self._caption = None
        if tag == "figure":
            self._figure = None

    def handle_data(self, data):
        if self._heading:
            self.headings[-1] += data
        if self._caption is not None:
            for image in self._caption["figure"]:
                image["caption"] += data

    def breaks(self, facet: str) -> bool:
        if facet == "one_h1":
            return self.h1 != 1
        if facet == "table_headers":
            return any(not t["layout"] and not t["th"] for t in self.tables)
        if facet == "unique_headings":
            keys = [" ".join(h.lower().split()) for h in self.headings]
            return len(set(keys)) != len(keys)
        return any(i["alt"] and not (i["caption"] or "").strip() for i in self.images)


CASES = [
    ("Check that every page has exactly one H1.", "one_h1"),
    ("Use at most one H1 per page", "one_h1"),
    ("Flag tables without header rows.", "table_headers"),
    ("Data tables need <th> header cells", "table_headers"),
    ("Check that headings are unique.", "unique_headings"),
    ("Flag duplicate headings", "unique_headings"),
    ("Flag images without captions.", "captions"),
    ("Charts must have a caption", "captions"),
]


@pytest.mark.parametrize("prompt, facet", CASES)
def test_structure_checks_are_read_and_their_demos_keep_to_their_tier(prompt, facet):
    a = analyse(prompt)
    assert (a.kind, a.facet) == ("structure", facet)
    result = validate_prompt(prompt)
    assert result["requires_tool"] == "NONE", "structure lives in the markup"
    for case in result["demos"]["cases"]:
        assert Outline(case["html"]).breaks(facet) == (case["expected"] == "detected"), case["tier"]


@pytest.mark.parametrize(
    "prompt, kind",
    [
        ("Make sure every image has descriptive alt text.", "accessibility"),  # alt text, not captions
        ("Videos must have captions.", "accessibility"),
        ("Headings must not skip levels", "accessibility"),
    ],
)
def test_look_alike_instructions_keep_their_own_check(prompt, kind):
    assert analyse(prompt).kind == kind
