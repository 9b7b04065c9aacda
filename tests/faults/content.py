"""Comment annotations and activity logs: added, updated and deleted by each worker in its
own organization, then read back after a restart.

Facts (owner = the worker): ``annotation`` (document, annotationId) = its first comment's
text; ``commentActivity`` (annotationId) = True for the activity a comment with
``triggerActivities`` records in the same transaction; ``activity`` (id) = its
``displayMessageTemplate``; ``contentReader`` = True once the organization member whose
counts are checked was added.
"""

from __future__ import annotations

from faults.access import UADD, _listed
from faults.context import Ctx
from faults.ledger import ABSENT
from faults.registry import check, operation

AADD, AGET, ACOUNT, ADEL = (
    "/v2/commentannotations/add",
    "/v2/commentannotations/get",
    "/v2/commentannotations/count/get",
    "/v2/commentannotations/delete",
)
LADD, LGET, LUPD, LDEL = "/v2/activities/add", "/v2/activities/get", "/v2/activities/update", "/v2/activities/delete"
MAX_DOCS = 4


def org_of(owner) -> str:
    return f"w{owner}-corg"


def reader_of(owner) -> str:
    return f"w{owner}-reader"


def _all_ok(ids):
    return lambda result: all(result["data"][i]["success"] is True for i in ids)


# ------------------------------------------------------------------ annotations


@operation(4)
def add_annotation(ctx: Ctx) -> None:
    org = org_of(ctx.owner)
    if ctx.ledger.value(("contentReader", ctx.owner)) is ABSENT:  # first: a member whose counts are checked
        reader = reader_of(ctx.owner)
        ctx.write(
            UADD,
            {"organizationId": org, "users": [{"userId": reader, "name": "Reader"}]},
            {("contentReader", ctx.owner): True},
            ok=lambda r: r["data"][reader]["success"],
        )
        return
    docs = ctx.state.setdefault("annotation_docs", [])
    if not docs or (len(docs) < MAX_DOCS and ctx.rng.random() < 0.2):
        docs.append(ctx.new_id("adoc"))
    doc, aid = ctx.rng.choice(docs), ctx.new_id("ann")
    trigger = ctx.rng.random() < 0.3
    comments = [
        {"commentText": f"note {aid}", "triggerActivities": trigger, "from": {"userId": f"w{ctx.owner}-author"}}
    ]
    if ctx.rng.random() < 0.3:
        comments[0]["agent"] = {
            "agentId": "spell-check",
            "agentName": "Spell check",
            "url": f"https://docs.example.com/{doc}#top",
        }
    if ctx.rng.random() < 0.3:
        comments.append({"commentText": f"reply to {aid}"})
    facts = {("annotation", ctx.owner, doc, aid): f"note {aid}"}
    if trigger:
        facts[("commentActivity", ctx.owner, aid)] = True
    ctx.write(
        AADD,
        {
            "organizationId": org,
            "documentId": doc,
            "createOrganization": True,
            "createDocument": True,
            "commentAnnotations": [{"annotationId": aid, "commentData": comments}],
        },
        facts,
        ok=_all_ok([aid]),
    )


@operation(1)
def delete_annotations(ctx: Ctx) -> None:
    present = sorted(ctx.ledger.keys("annotation", ctx.owner, present=True))
    if not present:
        return add_annotation(ctx)
    doc = ctx.rng.choice(present)[2]
    mine = [k for k in present if k[2] == doc]
    keys = ctx.rng.sample(mine, min(len(mine), ctx.rng.randint(1, 3)))
    ids = [k[3] for k in keys]
    ctx.write(
        ADEL,
        {"organizationId": org_of(ctx.owner), "documentId": doc, "annotationIds": ids},
        {k: ABSENT for k in keys},
        ok=_all_ok(ids),
    )


@operation(1)
def read_annotations(ctx: Ctx) -> None:
    docs = ctx.state.get("annotation_docs")
    if not docs or ctx.ledger.value(("contentReader", ctx.owner)) is ABSENT:
        return
    if ctx.rng.random() < 0.5:
        ctx.read(AGET, {"organizationId": org_of(ctx.owner), "documentId": ctx.rng.choice(docs), "pageSize": 50})
    else:
        ctx.read(ACOUNT, {"organizationId": org_of(ctx.owner), "documentIds": docs, "userId": reader_of(ctx.owner)})


# ------------------------------------------------------------------ activities


@operation(3)
def add_activity(ctx: Ctx) -> None:
    aid = ctx.new_id("act")
    template = f"{{{{user}}}} changed {aid} ({ctx.rng.randrange(10**6)})"
    record = {
        "id": aid,
        "featureType": "document",
        "actionType": "document.update",
        "targetEntityId": f"entity-{aid}",
        "displayMessageTemplate": template,
        "displayMessageTemplateData": {"user": "Ann"},
    }
    ctx.write(
        LADD,
        {"organizationId": org_of(ctx.owner), "activities": [record]},
        {("activity", ctx.owner, aid): template},
        ok=_all_ok([aid]),
    )


@operation(2)
def update_activity(ctx: Ctx) -> None:
    present = sorted(ctx.ledger.keys("activity", ctx.owner, present=True))
    if not present:
        return add_activity(ctx)
    key = ctx.rng.choice(present)
    template = f"{{{{user}}}} edited {key[2]} ({ctx.rng.randrange(10**6)})"
    ctx.write(
        LUPD,
        {"organizationId": org_of(ctx.owner), "activities": [{"id": key[2], "displayMessageTemplate": template}]},
        {key: template},
        ok=_all_ok([key[2]]),
    )


@operation(1)
def delete_activities(ctx: Ctx) -> None:
    present = sorted(ctx.ledger.keys("activity", ctx.owner, present=True))
    if len(present) < 4:
        return add_activity(ctx)
    keys = ctx.rng.sample(present, ctx.rng.randint(1, 3))
    ids = [k[2] for k in keys]
    ctx.write(
        LDEL, {"organizationId": org_of(ctx.owner), "activityIds": ids}, {k: ABSENT for k in keys}, ok=_all_ok(ids)
    )


# ------------------------------------------------------------------ checks


@check("online")
def annotations_intact(ctx: Ctx) -> None:
    """Every acknowledged annotation is there once (deleted ones gone); counts agree with
    what get returns; a comment's activity exists exactly when its annotation was added."""
    for owner in ctx.run.owners:
        org, keys = org_of(owner), ctx.ledger.keys("annotation", owner)
        if ctx.ledger.keys("contentReader", owner):
            members = _listed(ctx, f"of organization {org}", organizationId=org)
            if isinstance(members, dict) or members is ABSENT:
                present = isinstance(members, dict) and reader_of(owner) in members
                ctx.ledger.settle(("contentReader", owner), True if present else ABSENT)
        # annotations whose add (which writes the annotation and its activity) was in flight
        doubtful = {k[3] for k in keys if ctx.ledger.in_doubt(k)} & {
            k[2] for k in ctx.ledger.keys("commentActivity", owner) if ctx.ledger.in_doubt(k)
        }
        verdicts = {}
        totals = {}
        for doc in sorted({k[2] for k in keys}):
            stored = ctx.pages(AGET, {"organizationId": org, "documentId": doc, "pageSize": 1000})
            if stored is None:
                continue
            ids = [a["annotationId"] for a in stored]
            if len(ids) != len(set(ids)):
                ctx.report.duplicate(f"annotations of {org}/{doc}: an id appears twice: {ids}")
            texts = {a["annotationId"]: a["commentData"][0].get("commentText") for a in stored}
            totals[doc] = len(set(ids))
            mine = [k for k in keys if k[2] == doc]
            for key in mine:
                verdicts[key[3]] = ctx.ledger.settle(key, texts.get(key[3], ABSENT))
            for aid in set(texts) - {k[3] for k in mine}:
                ctx.ledger.settle(("annotation", owner, doc, aid), texts[aid])
        if totals and ctx.ledger.value(("contentReader", owner)) is True:
            counts = ctx.read(
                ACOUNT, {"organizationId": org, "documentIds": sorted(totals)[:30], "userId": reader_of(owner)}
            )
            for doc, count in (counts or {"data": {}})["data"].items():
                if count["total"] != totals[doc]:
                    ctx.report.problem(f"count of {org}/{doc} says {count['total']}, get lists {totals[doc]}")
        activities_intact(ctx, owner, doubtful, verdicts)


def activities_intact(ctx: Ctx, owner, doubtful: set[str], annotation_verdicts: dict[str, str]) -> None:
    org = org_of(owner)
    stored = ctx.pages(LGET, {"organizationId": org, "pageSize": 1000})
    if stored is None:
        return
    ids = [a["id"] for a in stored]
    if len(ids) != len(set(ids)):
        ctx.report.duplicate(f"activities of {org}: an id appears twice")
    own = {a["id"]: a.get("displayMessageTemplate") for a in stored if a["id"].startswith(f"w{owner}-act")}
    keys = ctx.ledger.keys("activity", owner)
    for key in keys:
        ctx.ledger.settle(key, own.get(key[2], ABSENT))
    for aid in set(own) - {k[2] for k in keys}:
        ctx.ledger.settle(("activity", owner, aid), own[aid])
    by_comment = [a["targetEntityId"] for a in stored if a.get("actionType") == "comment.add"]
    if len(by_comment) != len(set(by_comment)):
        ctx.report.duplicate(f"activities of {org}: one comment recorded its activity twice")
    for key in ctx.ledger.keys("commentActivity", owner):
        verdict = ctx.ledger.settle(key, True if key[2] in by_comment else ABSENT)
        if key[2] in doubtful and verdict != annotation_verdicts.get(key[2], verdict):
            ctx.report.problem(
                f"annotation {key[2]} in flight at a kill: the annotation "
                f"{annotation_verdicts[key[2]]}, its activity {verdict} (half-applied)"
            )
