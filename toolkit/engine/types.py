"""Type aliases the engine's modules share (annotations only; nothing here runs).

JSON values stay ``Any`` inside their containers: the engine passes authored outputs, inputs
and configs through without reading most of them, and the API edge validated their shape.
"""

from __future__ import annotations

from typing import Any

__all__ = ["JsonObject", "Outcome", "Target", "PlannedTarget"]

# A JSON object: step inputs and outputs, event data, a node's config.
JsonObject = dict[str, Any]

# An outcome nothing routed, ``[seq, code]``: a list (not a tuple) so that the state's JSON
# round trip is exact; ``min`` over them picks the earliest.
Outcome = list[Any]

# ``(edge_index, kind, ref)``: an edge (or a root, index -1) that fires; ``kind`` is "node"
# or "group" (every member of the group starts together).
Target = tuple[int, str, str]

# ``(kind, ref, [(node_id, step_id), ...])``: the ids a fired target's steps will get.
PlannedTarget = tuple[str, str, list[tuple[str, str]]]
