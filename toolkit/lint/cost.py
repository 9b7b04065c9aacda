"""Cost limits (issue 13): how much predicate work one node's routing may hold.

A custom edge's predicate runs every time its source step ends — on the server, inside the
command that ended it. These rules bound what one source may ask for, so that an ordinary
output routes in milliseconds and no definition can turn one step into seconds of work:

- ``too-many-custom-edges``: more than :data:`~toolkit.limits.MAX_CUSTOM_EDGES_PER_NODE`
  custom edges leave one node or group;
- ``too-many-regex-ops``: their predicates hold more than
  :data:`~toolkit.limits.MAX_REGEX_PER_NODE` ``regex`` ops together (one predicate holds at
  most :data:`~toolkit.limits.MAX_REGEX_PER_PREDICATE`: ``APPROVAL_EDGE_WHEN_INVALID``).

What an output's size adds at run time is the work budget's to bound (:mod:`toolkit.work`).
"""

from __future__ import annotations

from toolkit.compiler import check_when
from toolkit.errors import listed
from toolkit.limits import MAX_CUSTOM_EDGES_PER_NODE, MAX_REGEX_PER_NODE
from toolkit.lint.findings import Facts, Finding, error


def check(f: Facts) -> list[Finding]:
    out = []
    for (kind, ref), edges in f.out_edges.items():
        custom = [(i, e) for i, e in edges if e.on == "custom"]
        where, name = f"{kind}:{ref}", f"{kind} '{ref}'"
        if len(custom) > MAX_CUSTOM_EDGES_PER_NODE:
            out.append(
                error(
                    "too-many-custom-edges",
                    f"{name} has {len(custom)} custom edges (edges {listed(str(i) for i, _ in custom)}), "
                    f"more than {MAX_CUSTOM_EDGES_PER_NODE}: route on fewer, broader predicates",
                    where,
                )
            )
        regex = [(i, p.regex_ops) for i, p in ((i, _predicate(e)) for i, e in custom) if p is not None and p.regex_ops]
        total = sum(n for _, n in regex)
        if total > MAX_REGEX_PER_NODE:
            out.append(
                error(
                    "too-many-regex-ops",
                    f"the custom edges leaving {name} hold {total} regex ops "
                    f"(edges {listed(str(i) for i, _ in regex)}), more than {MAX_REGEX_PER_NODE}",
                    where,
                )
            )
    return out


def _predicate(edge):
    return check_when(edge.when)[0] if edge.when is not None else None
