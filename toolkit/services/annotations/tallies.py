"""The count summary tables (migration 003): the deltas of a write, computed in Python and
applied by :func:`toolkit.store.annotation_counts.apply` with one upsert per table.

Every write that adds or removes annotations, or marks them seen, applies its deltas in the
same job, so the tallies always agree with ``annotations`` and ``annotation_seen``:

- ``annotation_tallies``: +1 per public / organizationPrivate annotation at (document,
  status, visibility type, visibility organization);
- ``annotation_user_tallies`` ``audience``: +1 per restricted annotation for each user it names;
- ``annotation_user_tallies`` ``seen``: +1 per (annotation, user) in ``annotation_seen`` whose
  visibility admits the user apart from organization membership (which is checked when
  counting, since memberships change).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import NamedTuple


class Counted(NamedTuple):
    """What the tallies need of one annotation."""

    document_id: str
    status_id: str
    visibility_type: str
    visibility_org: str | None
    visibility_users: list[str] | None


def annotation_deltas(annotations: Iterable[Counted], sign: int, doc: Counter, user: Counter) -> None:
    """Add (``sign`` 1) or remove (-1) annotations: their document and audience tallies."""
    for a in annotations:
        if a.visibility_type == "restricted":
            for user_id in dict.fromkeys(a.visibility_users or ()):
                user[(user_id, a.document_id, "audience", a.status_id, "restricted", "")] += sign
        else:
            doc[(a.document_id, a.status_id, a.visibility_type, a.visibility_org or "")] += sign


def seen_deltas(pairs: Iterable[tuple[Counted, str]], sign: int, user: Counter) -> None:
    """Add or remove (annotation, user) ``seen`` pairs."""
    for a, user_id in pairs:
        if a.visibility_type != "restricted" or user_id in (a.visibility_users or ()):
            user[(user_id, a.document_id, "seen", a.status_id, a.visibility_type, a.visibility_org or "")] += sign
