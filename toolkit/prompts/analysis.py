"""A small, honest reading of a one-line QA instruction.

:func:`analyse` pulls out what the instruction itself says — quoted terms, lists introduced by
"such as", replacement pairs ("use X instead of Y"), placeholders (``{{brand_name}}``,
``<product>``, "our product name"), the parts of the page it names (headings, footer, …) —
and decides which kind of check it is from keyword signals. Everything downstream (rules,
demos, descriptions) is built from this :class:`Analysis`; nothing is invented that the
instruction does not support, and the same text always gives the same analysis.

>>> a = analyse("Flag any use of the word 'utilize' and suggest 'use' instead.")
>>> a.kind, a.facet, a.terms, a.preferred
('terminology', 'forbidden', ('utilize',), ('use',))
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from toolkit.prompts.limits import PLURALS, SUBJECTS, Limit, read_limit

KINDS = (
    "terminology",
    "claims",
    "tone",
    "links",
    "accessibility",
    "formatting",
    "numbers_dates",
    "required_elements",
    "spelling_grammar",
    "lengths",
    "personal_data",
    "structure",
    "acronyms",
    "readability",
    "openers",
)
# Ties between keyword scores go to the more specific kind: terminology signals ("avoid",
# "don't use") are the most generic, so it comes last.
_TIE_ORDER = (
    "readability",
    "acronyms",
    "personal_data",
    "claims",
    "accessibility",
    "links",
    "formatting",
    "numbers_dates",
    "tone",
    "spelling_grammar",
    "required_elements",
    "terminology",
)

# Keyword signals per kind (lower-cased text).
_SIGNALS: dict[str, tuple[str, ...]] = {
    "terminology": (
        r"\bthe (?:word|term|phrase|expression)s?\b",
        r"\bwording",
        r"instead of",
        r"\breplace",
        r"\bbann",
        r"forbidden",
        r"prohibited",
        r"\b(?:don'?t|do not|never|not|no) (?:use|say|write|mention)",
        r"\bavoid",
        r"competitor",
        r"glossary",
        r"brand name",
        r"trademark",
        r"\bspell(?:ed|ing)? (?:of|as)\b",
        r"written as",
        r"\bmentions? of\b",
        r"refer(?:ence)?s? to",
        r"lorem ipsum",
        r"(?:placeholder|dummy|filler) (?:text|copy)",
        r"\b(?:todo|tbd)\b",
    ),
    "claims": (
        r"\bclaims?\b",
        r"guarantee",
        r"\bpromis",
        r"100 ?%",
        r"risk[- ]free",
        r"complian",
        r"\blegal",
        r"regulat",
        r"superlative",
        r"substantiat",
        r"\bcures?\b",
        r"medical",
        r"financial advice",
        r"\bfda\b",
        r"misleading",
        r"exaggerat",
        r"greenwash",
        r"health",
    ),
    "tone": (
        r"\btone\b",
        r"\bvoice\b",
        r"(?:second|third)[- ]person",
        r"address(?:es|ing)? the reader",
        r"profan",
        r"swear",
        r"curse words?",
        r"obscen",
        r"vulgar",
        r"offensive",
        r"\bslurs?\b",
        r"friendly",
        r"\bformal",
        r"informal",
        r"casual",
        r"professional",
        r"jargon",
        r"passive",
        r"active voice",
        r"polite",
        r"empath",
        r"aggressive",
        r"\bslang",
        r"inclusive",
        r"gender[- ]neutral",
        r"\bgendered\b",
        r"plain (?:language|english)",
        r"buzzword",
        r"condescend",
        r"\bblam",
    ),
    "links": (
        r"\blinks?\b",
        r"\bhref",
        r"\burls?\b",
        r"hyperlink",
        r"broken",
        r"\b404\b",
        r"\bhttps?\b",
        r"\banchors?\b",
        r"redirect",
        r"new (?:tab|window)",
    ),
    "accessibility": (
        r"\balt\b",
        r"alt[- ]text",
        r"alternative text",
        r"accessib",
        r"screen ?readers?",
        r"\baria\b",
        r"wcag",
        r"a11y",
        r"contrast",
        r"heading (?:level|hierarch|order|structure)",
        r"skip(?:s|ped|ping)? (?:a |one )?(?:heading )?levels?",
        r"form (?:field|input|label)s?",
        r"\blabels?\b",
        r"keyboard",
        r"captions?",
    ),
    "formatting": (
        r"sentence case",
        r"title case",
        r"capitali[sz]",
        r"capital letters?",
        r"upper ?case",
        r"all caps",
        r"\bbold",
        r"italic",
        r"bullet",
        r"punctuation",
        r"oxford comma",
        r"serial comma",
        r"double spac",
        r"exclamation",
        r"emoji",
        r"hashtags?",
    ),
    "numbers_dates": (
        r"\bdates?\b",
        r"time format",
        r"24[- ]hour",
        r"12[- ]hour",
        r"currenc",
        r"\bprices?\b",
        r"\bnumbers?\b",
        r"numerals?",
        r"percent",
        r"per cent",
        r"% sign",
        r"\bunits?\b",
        r"\biso\b",
        r"yyyy",
        r"mm/dd",
        r"dd/mm",
        r"decimal",
        r"\bspell(?:ed)? out\b",
        r"\bas words\b",
        r"\b(?:one|zero) to nine\b",
        r"\b(?:under|below) (?:10|ten)\b",
    ),
    "required_elements": (
        r"\b(?:must|should|always|to) (?:include|contain|have|show|display|mention|state|list|"
        r"ends? with|starts? with|begins? with)",
        r"\brequired?\b",
        r"\bmissing\b",
        r"\b(?:every|each) (?:page|article|post|email|blog)",
        r"\bfooter\b",
        r"byline",
        r"copyright",
        r"disclaimer",
        r"call[- ]to[- ]action",
        r"\bcta\b",
        r"table of contents",
        r"\bincludes?\b",
        r"\bwithout an?\b",
    ),
    "readability": (
        r"reading level",
        r"readabilit",
        r"grade level",
        r"flesch",
        r"reading (?:age|ease)",
        r"\bgrade[- ]\d",
        r"\d(?:st|nd|rd|th)?[- ]grade",
    ),
    "acronyms": (  # spelled out at first use; "avoid abbreviations like e.g." is terminology
        r"(?:acronyms?|abbreviations?|initialisms?)\b.*\b(?:defin|spell|expand|explain|first (?:use|mention)|introduc)",
        r"\b(?:defin|spell(?:ed)? out|expand|explain|introduc)\w*\b.*\b(?:acronyms?|abbreviations?|initialisms?)",
    ),
    "personal_data": (
        r"personal (?:data|information|details|info)",
        r"\bpii\b",
        r"e-?mail address",
        r"(?:tele|mobile |cell )?phone numbers?",
        r"(?:home|street|postal|mailing) address",
        r"credit cards?|card numbers?",
        r"social security|\bssns?\b|passport|national id",
        r"dates? of birth|birth ?dates?|\bdob\b",
        r"\bgdpr\b",
        r"contact details",
    ),
    "spelling_grammar": (
        r"spelling",
        r"(?:repeated|duplicated?|doubled?) words?",
        r"\bword twice\b",
        r"\bspell ?check",
        r"typos?\b",
        r"misspell",
        r"grammar",
        r"grammatical",
        r"subject[- ]verb",
        r"\btense\b",
    ),
}

_PROHIBIT = re.compile(
    r"\b(?:don'?t|do not|never|avoid|no|not|flag|remove|ban(?:ned)?|forbid(?:den)?|prohibit(?:ed)?|"
    r"must not|should not|shouldn'?t|disallow(?:ed)?)\b",
    re.I,
)
_REQUIRE = re.compile(r"\b(?:must|should|always|ensure|make sure|require[sd]?|every|each|include)\b", re.I)

_HTML_TAGS = {
    "a",
    "abbr",
    "article",
    "aside",
    "b",
    "blockquote",
    "body",
    "br",
    "button",
    "caption",
    "code",
    "div",
    "em",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "hr",
    "html",
    "i",
    "iframe",
    "img",
    "input",
    "label",
    "li",
    "link",
    "main",
    "meta",
    "nav",
    "ol",
    "option",
    "p",
    "pre",
    "section",
    "select",
    "small",
    "span",
    "strong",
    "style",
    "table",
    "td",
    "textarea",
    "th",
    "title",
    "tr",
    "u",
    "ul",
    "video",
    "audio",
    "figure",
    "figcaption",
    "svg",
    "time",
    "script",
}

# Nouns after "our"/"your" that name a runtime value the user must supply (not "our users").
_INPUT_NOUNS = {
    "name",
    "names",
    "brand",
    "brands",
    "product",
    "products",
    "company",
    "competitor",
    "competitors",
    "guide",
    "guidelines",
    "glossary",
    "terms",
    "terminology",
    "tagline",
    "slogan",
    "url",
    "urls",
    "domain",
    "domains",
    "website",
    "email",
    "phone",
    "address",
    "trademark",
    "trademarks",
    "policy",
    "disclaimer",
    "price",
    "prices",
    "plan",
    "plans",
    "keywords",
    "words",
    "values",
    "region",
    "regions",
    "market",
    "markets",
    "audience",
    "persona",
    "legal",
    "notice",
    "hashtag",
    "hashtags",
    "handle",
}
_LIST_NOUNS = {
    "names",
    "brands",
    "products",
    "competitors",
    "terms",
    "terminology",
    "urls",
    "domains",
    "trademarks",
    "prices",
    "plans",
    "keywords",
    "words",
    "values",
    "regions",
    "markets",
    "hashtags",
}
_STOP = {
    "a",
    "an",
    "the",
    "and",
    "or",
    "in",
    "on",
    "at",
    "to",
    "of",
    "for",
    "with",
    "by",
    "from",
    "is",
    "are",
    "be",
    "must",
    "should",
    "always",
    "never",
    "that",
    "which",
    "who",
    "when",
    "where",
    "if",
    "unless",
    "as",
    "it",
    "its",
    "this",
    "these",
    "those",
    "any",
    "all",
    "every",
    "each",
    "no",
    "not",
    "do",
    "does",
    "don't",
    "use",
    "used",
    "using",
    "make",
    "sure",
    "ensure",
    "check",
    "flag",
    "find",
    "page",
    "pages",
    "content",
    "text",
    "copy",
    "we",
    "our",
    "your",
    "you",
    "they",
    "their",
    "there",
    "than",
    "then",
    "so",
    "such",
    "like",
    "e.g.",
    "including",
    "example",
    "instead",
    "also",
    "only",
    "more",
    "most",
    "same",
    "into",
    "out",
    "up",
    "about",
    "have",
    "has",
    "write",
    "written",
    "say",
    "said",
    "mention",
    "mentions",
    "mentioned",
    "contain",
    "contains",
    "include",
    "includes",
    "suggest",
    "please",
    "can",
    "could",
    "would",
    "will",
    "may",
    "might",
    "without",
    "within",
    "across",
    "throughout",
    "them",
    "one",
    "per",
    "via",
    "whether",
    "other",
    "others",
    "what",
    "how",
    "why",
    "anywhere",
    "everywhere",
    "words",
    "word",
    "term",
    "terms",
    "phrase",
    "phrases",
    "over",
}

# Parts of a page an instruction can name: (pattern, label used in the prompt and demos).
_LOCATIONS = (
    (r"\b(?:headings?|headlines?|titles?|h[1-6])\b", "headings"),
    (r"\bfooters?\b", "footer"),
    (r"\b(?:buttons?|calls? to action|ctas?)\b", "buttons"),
    (r"\blink text\b", "link text"),
    (r"\b(?:images?|pictures?|photos?|img)\b", "images"),
    (r"\btables?\b", "tables"),
    (r"\b(?:first paragraph|intro(?:duction)?|opening paragraph)\b", "introduction"),
    (r"\bmeta description\b", "meta description"),
)


@dataclass(frozen=True)
class Placeholder:
    """A runtime value the instruction refers to: ``{{brand_name}}``, ``<product>``, "our product name"."""

    id: str
    title: str
    raw: str
    source: str  # "placeholder" (written as a template slot) or "instruction" ("our …")
    type: str  # "string" or "list"
    sample: tuple[str, ...]  # values to write the demos with

    @property
    def ref(self) -> str:
        """How the analysis prompt names it."""
        return "{{" + self.id + "}}"


@dataclass(frozen=True)
class Analysis:
    instruction: str  # the prompt, whitespace-normalised
    kind: str  # one of KINDS
    facet: str  # the kind's variant (e.g. forbidden / canonical)
    polarity: str  # "forbid" (the thing must not appear) or "require"
    terms: tuple[str, ...]  # offending forms the check looks for (demo values, not slots)
    preferred: tuple[str, ...]  # approved replacements or the canonical form
    term_refs: tuple[str, ...]  # how the prompt names each term (a slot like {{competitors}} or the term)
    locations: tuple[str, ...]  # parts of the page the instruction names
    key_phrases: tuple[str, ...]  # the instruction's own content words, in order
    element: str | None  # what a required-element check wants present
    inputs: tuple[Placeholder, ...]  # runtime values (placeholders and "our …")
    notes: tuple[str, ...] = field(default=())
    limit: Limit | None = None  # what a length check measures, and its bound


def normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\ue000", "").replace("\ue001", "")).strip()


# ------------------------------------------------------------------ extraction

_QUOTES = re.compile(r"\"([^\"]{1,80})\"|“([^”]{1,80})”|‘([^’]{1,80})’|`([^`]{1,80})`|(?<![\w])'([^']{1,80})'(?![\w])")
_SLOTS = re.compile(
    r"\{\{\s*([A-Za-z][\w .-]{0,40}?)\s*\}\}|\{([A-Za-z][\w.-]{0,40})\}|<([A-Za-z][\w -]{0,40})>|"
    r"\[([A-Za-z][\w -]{0,40})\](?!\()"
)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "value"


def _title(slug: str) -> str:
    words = slug.replace("_", " ").replace("-", " ").split()
    return " ".join(words)[:1].upper() + " ".join(words)[1:] if words else "Value"


_SAMPLES = (
    ("competitor", ("Globex", "Initech")),
    ("brand", ("Northwind",)),
    ("product", ("Northwind Cloud",)),
    ("company", ("Northwind Ltd.",)),
    ("tagline", ("Reports, not spreadsheets",)),
    ("slogan", ("Reports, not spreadsheets",)),
    ("url", ("https://northwind.example",)),
    ("domain", ("northwind.example",)),
    ("website", ("https://northwind.example",)),
    ("email", ("support@northwind.example",)),
    ("phone", ("+1 555 0100",)),
    ("price", ("$49",)),
    ("region", ("EU",)),
    ("market", ("EU",)),
    ("keyword", ("self-serve analytics",)),
    ("hashtag", ("#NorthwindCloud",)),
    ("name", ("Northwind",)),
    ("term", ("synergy", "leverage")),
    ("word", ("synergy", "leverage")),
    ("disclaimer", ("Results may vary.",)),
)


def _sample(slug: str, plural: bool) -> tuple[str, ...]:
    for key, values in _SAMPLES:
        if key in slug:
            return values if plural or len(values) == 1 else values[:1]
    return ("Sample " + _title(slug).lower(),)


def _placeholders(text: str, samples: dict[str, tuple[str, ...]]) -> list[Placeholder]:
    found: list[Placeholder] = []
    for m in _SLOTS.finditer(text):
        name = next(g for g in m.groups() if g is not None)
        if m.group(3) is not None and name.lower() in _HTML_TAGS:
            continue  # <img>, <a>: markup the instruction talks about, not a slot
        slug = _slug(name)
        plural = slug.endswith("s") and not slug.endswith("ss")
        found.append(
            Placeholder(
                slug,
                _title(slug),
                m.group(0),
                "placeholder",
                "list" if plural else "string",
                samples.get(slug) or _sample(slug, plural),
            )
        )
    for m in re.finditer(r"\b(?:our|your)\s+((?:[a-z][\w-]*\s+){0,2}[a-z][\w-]*)", text, re.I):
        words = []
        for w in m.group(1).split():
            if w.lower() in _STOP or w.lower().endswith("ly"):
                break
            words.append(w.lower())
        while words and words[-1] not in _INPUT_NOUNS:
            words.pop()
        if not words:
            continue
        slug = _slug(" ".join(words))
        plural = words[-1] in _LIST_NOUNS
        raw = m.group(0).split()[0] + " " + " ".join(words)
        found.append(
            Placeholder(
                slug,
                _title(slug),
                raw,
                "instruction",
                "list" if plural else "string",
                samples.get(slug) or _sample(slug, plural),
            )
        )
    unique: dict[str, Placeholder] = {}
    for p in found:
        unique.setdefault(p.id, p)
    return list(unique.values())


def _tokenise_quotes(text: str) -> tuple[str, list[str]]:
    """Replace quoted strings by numbered markers (private-use characters around an index, which
    :func:`normalise` keeps out of the text) so patterns can treat each as one word."""
    quoted: list[str] = []

    def keep(m: re.Match) -> str:
        quoted.append(next(g for g in m.groups() if g is not None).strip())
        return f" \ue000{len(quoted) - 1}\ue001 "

    return re.sub(r"\s+", " ", _QUOTES.sub(keep, text)).strip(), quoted


_TOKEN = r"(\ue000\d+\ue001|[\w#%$@.+-]*\w%?)"
_PAIRS = (  # (pattern, index of the forbidden group, index of the preferred group)
    (rf"\b(?:use|write|say|prefer) {_TOKEN} instead of {_TOKEN}", 2, 1),
    (rf"\binstead of {_TOKEN},? (?:use|write|say) {_TOKEN}", 1, 2),
    (rf"\breplace {_TOKEN} (?:with|by) {_TOKEN}", 1, 2),
    (rf"\b(?:write|spell) {_TOKEN} as {_TOKEN}", 1, 2),
    (rf"(?<![\w#%$@.+-]){_TOKEN} should be (?:written|spelled|replaced with|changed to) {_TOKEN}", 1, 2),
    (rf"\bprefer {_TOKEN} (?:over|to) {_TOKEN}", 2, 1),
    (rf"\b(?:use|write) {_TOKEN},? (?:and )?not {_TOKEN}", 2, 1),
    ("(\ue000\\d+\ue001),? (?:and )?not (\ue000\\d+\ue001)", 2, 1),
    (rf"(?<![\w#%$@.+-]){_TOKEN} ?(?:->|=>|→) ?{_TOKEN}", 1, 2),
)
_LIST_INTRO = re.compile(r"\b(?:such as|like|e\.g\.,?|for example,?|including|namely)\s+(.+?)(?:[.;:!?)]|$)", re.I)
_LIST_STOP = {
    "that",
    "which",
    "who",
    "unless",
    "because",
    "when",
    "where",
    "in",
    "on",
    "from",
    "without",
    "with",
    "and",
    "or",
    "to",
    "if",
    "as",
    "are",
    "is",
    "must",
    "should",
    "need",
    "needs",
}


def _list_items(tail: str, quoted: list[str]) -> list[str]:
    items = []
    for part in re.split(r",\s*|\s+(?:and|or|and/or)\s+", tail):
        words: list[str] = []
        for w in part.split():
            if w.lower() in _LIST_STOP and words:
                break
            words.append(w)
            if len(words) == 4:
                break
        item = " ".join(words).strip(" ,")
        if item:
            items.append(_unquote(item, quoted))
        if len(part.split()) > len(words):  # the list ended inside this item
            break
    return [i for i in items if i and (i.lower() not in _STOP or "'" in i)]  # "don't" listed is a term


def _unquote(token: str, quoted: list[str]) -> str:
    return re.sub("\ue000(\\d+)\ue001", lambda m: quoted[int(m.group(1))], token)


def _terms(text: str) -> tuple[list[str], list[str], list[str]]:
    """(all mentioned terms, forbidden terms of replacement pairs, preferred terms)."""
    marked, quoted = _tokenise_quotes(text)
    forbidden, preferred = [], []
    for pattern, bad, good in _PAIRS:
        for m in re.finditer(pattern, marked, re.I):
            b, g = _unquote(m.group(bad), quoted), _unquote(m.group(good), quoted)
            if b.lower() not in _STOP and g.lower() not in _STOP:
                forbidden.append(b)
                preferred.append(g)
    for m in re.finditer(rf"\b(?:suggest|recommend|use|prefer)(?:ing)? {_TOKEN}(?: instead)?\b", marked, re.I):
        negated = re.search(r"\b(?:don'?t|do not|never|not|no|avoid|stop)\s*$", marked[: m.start()], re.I)
        if m.group(1).startswith("\ue000") and not negated:
            g = _unquote(m.group(1), quoted)
            if g not in preferred and g not in forbidden:
                preferred.append(g)
    if re.search(r"\breplace\b", marked, re.I):  # "replace A with B and C with D"
        for m in re.finditer(rf"(?:,|\band) {_TOKEN} (?:with|by) {_TOKEN}", marked, re.I):
            forbidden.append(_unquote(m.group(1), quoted))
            preferred.append(_unquote(m.group(2), quoted))
    mentioned = list(quoted)
    for m in re.finditer(rf"\bthe (?:word|term|phrase|expression)s? {_TOKEN}", marked, re.I):
        mentioned.append(_unquote(m.group(1), quoted))
    for m in _LIST_INTRO.finditer(marked):
        mentioned.extend(_list_items(m.group(1), quoted))
    ordered = list(dict.fromkeys(t for t in mentioned + forbidden if t and not _SLOTS.fullmatch(t)))
    return ordered, list(dict.fromkeys(forbidden)), list(dict.fromkeys(preferred))


def key_phrases(text: str) -> tuple[str, ...]:
    """The instruction's content words and short phrases, in order (no stop words)."""
    phrases: list[str] = []
    current: list[str] = []
    for raw in re.findall(r"[\w#%$@'’.+-]+|[,.;:!?()]", _SLOTS.sub(" , ", text)):
        w = raw.strip(".'’").lower()
        if not w or w in _STOP or not re.search(r"\w", w):
            if current:
                phrases.append(" ".join(current))
            current = []
            continue
        current.append(w)
        if len(current) == 3:
            phrases.append(" ".join(current))
            current = []
    if current:
        phrases.append(" ".join(current))
    return tuple(dict.fromkeys(p for p in phrases if len(p) > 1))


def _scores(low: str) -> dict[str, int]:
    return {kind: sum(1 for p in pats if re.search(p, low)) for kind, pats in _SIGNALS.items()}


_CANONICAL = re.compile(
    r"\b(?:always (?:write|spell|capitali[sz]e)|spell(?:ed)?\b|capitali[sz]|capital letter|"
    r"exactly as|correct (?:spelling|capitali[sz]ation)|written as|write\b.+\bas\b|casing)",
    re.I,
)
_ELEMENT = re.compile(
    r"\b(?:include|includes|contain|contains|have|has|show|display|mention|state|list|"
    r"ends? with|starts? with|begins? with|add|missing|without)\s+(?:an?\s+|the\s+|one\s+)?(.+?)"
    r"(?=\s+(?:in|on|at|under|near|above|below|before|after|with|that|which|for|and|or|so)\b"
    r"|[.;,!?]|$)",
    re.I,
)


# Structure checks of the markup, each named by a pattern (lower-cased instruction).
_STRUCTURE = {
    "one_h1": r"\b(?:one|single|exactly one|only one|multiple|several|more than one|two) h1s?\b|\bh1s\b",
    "table_headers": r"\btables?\b.*\bheaders?\b|\bheader (?:rows?|cells?)\b|<th>",
    "unique_headings": r"\b(?:unique|duplicated?|duplicates|repeated|identical|same) headings?\b|"
    r"\bheadings?\b.*\b(?:unique|duplicated?)\b",
    "captions": r"\b(?:images?|figures?|photos?|pictures?|charts?|diagrams?|screenshots?)\b.*\bcaptions?\b",
}


def _structure(low: str) -> str | None:
    """The structure check the instruction asks for, if any (alt text stays an accessibility check)."""
    if re.search(r"\balt\b|alt[- ]text|alternative text", low):
        return None
    return next((facet for facet, pattern in _STRUCTURE.items() if re.search(pattern, low)), None)


def _names_another_subject(low: str, limit: Limit) -> bool:
    """Whether the instruction names a subject besides the length: a keyword signal outside the
    measured thing's own words ("button labels" is not a form label) and the generic "avoid"."""
    rest = re.sub(SUBJECTS[limit.subject][0], " ", low)
    return any(score for kind, score in _scores(rest).items() if kind != "terminology")


def _classify(low: str, terms: list[str], inputs: list[Placeholder]) -> str:
    scores = _scores(low)
    has_term = bool(terms) or any(p.source == "placeholder" for p in inputs)
    if terms:  # words the instruction quotes or lists are what a terminology check is about
        scores["terminology"] += 1
    if re.search(
        r"sentences? (?:that |which )?(?:start|begin)s? with|(?:start|begin)(?:ning)? (?:a |any )?sentences? with", low
    ):
        return "openers"
    if re.search(r"link text|click here|read more|descriptive links?", low) or (
        re.search(r"\blinks?(?:ing|ed)? to\b|\blinks? (?:that )?(?:go|point)", low)
        and re.search(r"competitor|rival", low)
    ):
        return "links"
    if re.search(r"\balt\b|alt[- ]text|alternative text", low):
        return "accessibility"
    if has_term and _CANONICAL.search(low) and not re.search(r"sentence case|title case|all caps", low):
        return "terminology"
    if re.search(r"\bformat|written as|international|e\.164", low) and not re.search(
        r"personal|\bpii\b|gdpr|privacy|publish|expos|leak|share", low
    ):
        scores["personal_data"] = 0  # "phone numbers in international format" is about writing them
    best = max(_TIE_ORDER, key=lambda k: (scores[k], -_TIE_ORDER.index(k)))
    if best == "spelling_grammar" and terms and not re.search(r"gramma|repeated|duplicat|doubled|twice", low):
        return "terminology"  # "Flag British spellings such as colour": the listed words are the check
    if scores[best] == 0:
        if has_term or _PROHIBIT.search(low):
            return "terminology"
        wants_element = _ELEMENT.search(low) or re.search(r"\b(?:is|are) (?:present|shown|visible|there)\b", low)
        return "required_elements" if _REQUIRE.search(low) and wants_element else "spelling_grammar"
    return best


def _facet(kind: str, low: str, has_term: bool, forbidden: list[str]) -> str | None:
    """The kind's variant; None when the instruction has the kind's words but asks for something
    no check here is written for ("bold text", "dates in the past")."""
    pats: tuple[str, ...]  # the loops below go over pattern tuples of several lengths

    def any_of(*patterns: str) -> bool:
        return any(re.search(p, low) for p in patterns)

    if kind == "terminology":
        canonical = has_term and _CANONICAL.search(low) and not forbidden
        return "canonical" if canonical else "forbidden"
    if kind == "accessibility":
        if any_of(r"\balt\b", r"alt[- ]text", r"alternative text", r"\bimages?\b"):
            return "alt_text"
        if any_of(r"\bvideos?\b", r"\bcaptions?\b", r"subtitles?"):
            return "captions"
        if any_of(r"contrast", r"colou?r"):
            return "contrast"
        if any_of(r"heading", r"h[1-6]\b"):
            return "headings"
        if any_of(r"\bform", r"\blabels?\b", r"\binputs?\b"):
            return "form_labels"
        return "general"
    if kind == "links":
        if any_of(r"link text", r"click here", r"read more", r"descriptive"):
            return "link_text"
        if any_of(r"https", r"secure", r"\bhttp\b"):
            return "https"
        if any_of(r"competitor", r"rival"):
            return "competitor"
        if any_of(r"broken", r"missing", r"\b404\b") and any_of(r"\bimages?\b", r"\bimg\b", r"pictures?"):
            return "broken_images"
        if any_of(r"new (?:tab|window)", r"target"):
            return "new_tab"
        return "broken"
    if kind == "tone":
        for facet, pats in (
            ("second_person", (r"(?:second|third)[- ]person", r"address(?:es|ing)? the reader")),
            ("profanity", (r"profan", r"swear", r"curse", r"obscen", r"vulgar", r"offensive", r"\bslurs?\b")),
            ("inclusive", (r"inclusive", r"gender", r"neutral", r"discriminat")),
            ("active", (r"passive", r"active voice")),
            ("plain", (r"jargon", r"plain", r"buzzword", r"simple", r"clear")),
            ("formal", (r"\bformal", r"professional", r"casual", r"slang", r"informal")),
            ("friendly", (r"friendly", r"warm", r"polite", r"empath", r"aggressive", r"blam", r"condescend")),
        ):
            if any_of(*pats):
                return facet
        return "formal"
    if kind == "formatting":
        for facet, pats in (
            ("sentence_case", (r"sentence case",)),
            ("title_case", (r"title case",)),
            ("exclamation", (r"exclamation", r"!")),
            ("oxford_comma", (r"oxford comma", r"serial comma")),
            ("all_caps", (r"all caps", r"upper ?case", r"shout")),
            ("spacing", (r"double spac", r"spaces")),
            ("emoji", (r"emoji",)),
            ("hashtags", (r"hashtags?",)),
        ):
            if any_of(*pats):
                return facet
        return "sentence_case" if any_of(r"heading", r"headline", r"title") else None
    if kind == "numbers_dates":
        if any_of(r"\bdates?\b", r"yyyy", r"mm/dd", r"dd/mm", r"\biso\b"):
            # how dates are written, not which dates ("dates in the past for upcoming events")
            written = any_of(
                r"format|\biso\b|yyyy|mm|dd|writ|spell|style|order",
                r"american|british|european|\bus\b|\buk\b|numeric|long|short",
            )
            return "dates" if written else None
        if any_of(r"24[- ]hour", r"12[- ]hour", r"time format", r"\btimes?\b"):
            return "time"
        if any_of(r"(?:tele|mobile |cell )?phone numbers?", r"\btel(?:ephone)?\b"):
            return "phone"
        if any_of(r"currenc", r"\bprices?\b", r"\bcost"):
            return "currency"
        if any_of(r"percent", r"per cent", r"%"):
            return "percent"
        return "numerals"
    if kind == "spelling_grammar":
        if any_of(r"(?:repeated|duplicated?|doubled?) words?", r"\bword twice\b"):
            return "repeated"
        return "grammar" if any_of(r"grammar", r"grammatical", r"subject[- ]verb", r"tense") else "spelling"
    if kind == "claims":
        for facet, pats in (
            ("health", (r"health", r"medical", r"\bcures?\b", r"\bfda\b", r"supplement", r"clinical")),
            ("financial", (r"financ", r"invest", r"returns?\b", r"income", r"profit")),
            ("environmental", (r"\beco\b", r"environment", r"green", r"sustainab", r"carbon")),
            ("superlative", (r"superlative", r"\bbest\b", r"number one", r"#1", r"leading")),
        ):
            if any_of(*pats):
                return facet
        return "general"
    if kind == "personal_data":
        return "personal"
    if kind == "acronyms":
        return "first_use"
    if kind == "readability":
        return "grade"
    if kind == "openers":
        return "first_word"
    return "element"


def _locations(low: str, kind: str) -> tuple[str, ...]:
    found = [label for pattern, label in _LOCATIONS if re.search(pattern, low)]
    if kind in ("accessibility", "links"):
        found = [f for f in found if f not in ("images", "link text")]
    if kind == "formatting" and re.search(r"sentence case|title case", low):
        found = [f for f in found if f != "headings"] + ["headings"]
    return tuple(dict.fromkeys(found))


def _element(text: str) -> str | None:
    marked, quoted = _tokenise_quotes(text)
    for m in _ELEMENT.finditer(marked):
        words = [w for w in _unquote(m.group(1), quoted).split() if w.lower() not in {"a", "an", "the"}]
        phrase = " ".join(words[:5]).strip(" ,.")
        if phrase and phrase.lower() not in _STOP:
            return phrase
    return None


def analyse(prompt: str, samples: dict[str, tuple[str, ...]] | None = None) -> Analysis:
    """Read the instruction: kind, facet, terms, placeholders, locations, key phrases.

    ``samples`` gives demo values for placeholders by id (from the caller's context fields);
    without one a placeholder gets a stock value ("Northwind" for a brand).
    """
    text = normalise(prompt)
    low = text.lower()
    inputs = _placeholders(text, samples or {})
    mentioned, forbidden, preferred = _terms(text)
    limit = read_limit(text)
    aside = []
    if limit and limit.assumed and (mentioned or _names_another_subject(low, limit)):
        # "Avoid jargon and long sentences": the named subject wins over a length with no number
        aside.append(
            f"The instruction also asks for short {PLURALS[limit.subject]}; this check covers the rest. "
            "Validate the length as an instruction of its own (for example with a number of words)."
        )
        limit = None
    structure = _structure(low)
    kind = "lengths" if limit else "structure" if structure else _classify(low, mentioned, inputs)
    slots = [p for p in inputs if p.source == "placeholder" or kind == "terminology"]
    has_term = bool(mentioned) or bool(slots)
    facet = limit.subject if limit else structure or _facet(kind, low, has_term, forbidden)
    if facet is None:
        kind, facet = "spelling_grammar", "spelling"  # the general review, with its note
    polarity = "require" if kind == "required_elements" or facet == "canonical" else "forbid"
    terms, refs, prefer = _resolve_terms(kind, facet, mentioned, forbidden, preferred, slots, text)
    notes = aside
    if kind == "spelling_grammar" and not _scores(low)["spelling_grammar"]:
        notes.append(
            "The offline generator has no check written for this instruction's subject (or it names "
            "none), so the result is a general editorial review. Name the words, elements or rules to "
            "look for to sharpen it, or run it with a provider."
        )
    if kind == "terminology" and facet == "forbidden" and not terms:
        kind, facet = "spelling_grammar", "spelling"
        notes.append(
            "The instruction names no word or phrase to look for, and the offline generator has no check "
            "written for its subject, so the result is a general editorial review. Quote the terms (e.g. "
            "'utilize') to get a terminology check, or run it with a provider."
        )
    if limit and limit.assumed:
        notes.append(
            f"The instruction gives no number; the check assumes at most {limit.n} {limit.unit} per "
            f"{PLURALS[limit.subject][:-1]}, a common house-style limit. State the limit (for example "
            f"“longer than {limit.n} {limit.unit}”) to set your own."
        )
    element = _element(text) if kind == "required_elements" else None
    if kind == "required_elements" and element is None:
        kp = key_phrases(text)
        element = kp[0] if kp else "the required element"
    return Analysis(
        text,
        kind,
        facet,
        polarity,
        tuple(terms),
        tuple(prefer),
        tuple(refs),
        _locations(low, kind),
        key_phrases(text),
        element,
        tuple(inputs),
        tuple(notes),
        limit,
    )


_PLACEHOLDER_TEXT = r"lorem ipsum|(?:placeholder|dummy|filler) (?:text|copy)|\b(?:todo|tbd)\b"


def _resolve_terms(kind, facet, mentioned, forbidden, preferred, slots, text):
    """Offending terms (demo values), how the prompt names them, and approved forms."""
    if kind == "terminology" and facet == "canonical":
        canon = [t for t in mentioned if t not in forbidden] or list(preferred)
        if canon:
            return [], canon[:3], canon[:3]
        if slots:  # the canonical form is a runtime value: the prompt names the slot, demos use its sample
            return [], [slots[0].ref], list(slots[0].sample[:1])
        return [], [], []
    if kind not in ("terminology", "claims", "tone", "links", "openers"):
        return [], [], []
    terms = list(forbidden) or [t for t in mentioned if t not in preferred]
    refs = list(terms)
    for p in slots if kind == "terminology" and not terms else ():
        terms.extend(p.sample)
        refs.append(p.ref)
    if kind == "terminology" and not terms:
        for pattern, words in _CATEGORY_TERMS:  # a category an editor means as a known list of words
            if re.search(pattern, text.lower()):
                return list(words), list(words), list(preferred)
    if kind == "terminology" and not terms and _scores(text.lower())["terminology"]:
        terms = _literal_terms(text)
        refs = list(terms)
    return list(dict.fromkeys(terms)), list(dict.fromkeys(refs)), list(preferred)


_CATEGORY_TERMS = (
    (_PLACEHOLDER_TEXT, ("lorem ipsum", "TODO", "TBD")),  # leftover placeholder text
    (r"\blatin abbreviations?\b", ("e.g.", "i.e.", "etc.")),
)
_AFTER_SIGNAL = re.compile(
    r"\b(?:avoid(?:ing)?|(?:don'?t|do not|never|not|no) (?:use|say|write|mention)|never)\s+"
    r"(?:the |any |using |saying |writing )?(?P<rest>[^.;:!?()]+)",
    re.I,
)
_CUT = re.compile(r"\s+(?:in|on|at|for|from|with|to|when|unless|because|as|if)\b.*$", re.I)


_CLAUSE_VERBS = {"keep", "make", "use", "write", "be", "avoid", "ensure", "add", "include", "check", "stay", "prefer"}


def _literal_terms(text: str) -> list[str]:
    """The words or short phrases after the last terminology signal ("Don't say cheap or budget
    in headlines": cheap, budget), or none when what follows names a category rather than words
    to look for: a plural noun ("Avoid click-bait headlines", "Avoid clichés"), a number, or
    more than three words."""
    matches = list(_AFTER_SIGNAL.finditer(text))
    if not matches:
        return []
    parts = re.split(r"\s*(?:,|\band\b|\bor\b)\s*", _CUT.sub("", matches[-1]["rest"].strip()), flags=re.I)
    terms = []
    for part in filter(None, parts):
        words = part.lower().split()
        if words[0] in _CLAUSE_VERBS:  # "Don't say cheap, and keep it short": another instruction
            break
        terms.append(words)
    if not terms or any(not 0 < len(words) <= 3 or any(_plural(w) or w.isdigit() for w in words) for words in terms):
        return []
    return [" ".join(words) for words in terms]


def _plural(word: str) -> bool:
    low = word.lower().strip("'’")
    return len(low) > 3 and low.endswith("s") and not low.endswith(("ss", "us", "is", "'s", "’s"))
