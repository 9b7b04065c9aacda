"""Ready-made workflow definitions, one JSON file each, to learn from, test and benchmark with.

Each example is a definition create body (the ``data`` of
``/v2/workflow/definitions/create``) whose ``definitionId`` is its file name. Together they
use every construct of the workflow model: agent, human and webhook nodes; blocking agents;
the three group policies (``waitAll``, ``joinOnQuorum``, ``cancelOnQuorum``) and
``requiredNodeIds``; reject loop-backs with and without an ``exhausted`` route; custom
predicates; SLAs with a breach route; groups as edge sources; legacy ``reviewerIds``;
object-form edge endpoints. ``parallel-review`` is the benchmark workload.

>>> from toolkit import examples
>>> from toolkit.model import Definition
>>> "parallel-review" in examples.names()
True
>>> body = examples.load("parallel-review")
>>> Definition.model_validate(body).definition_id
'parallel-review'
>>> examples.describe()["parallel-review"].startswith("An agent drafts")
True
>>> examples.load("no-such-example")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
KeyError: "no example named 'no-such-example'; available: blocking-agent-quorum, ..."
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["describe", "load", "names", "path"]

_DIR = Path(__file__).resolve().parent


def names() -> list[str]:
    """The example names (file stems, equal to their ``definitionId``), sorted."""
    return sorted(p.stem for p in _DIR.glob("*.json"))


def path(name: str) -> Path:
    """The JSON file of example ``name``; ``KeyError`` naming the available ones if unknown."""
    available = names()
    if name not in available:
        raise KeyError(f"no example named {name!r}; available: {', '.join(available)}")
    return _DIR / f"{name}.json"


def load(name: str) -> dict:
    """The raw create body of example ``name``: a fresh dict on every call, safe to mutate."""
    return json.loads(path(name).read_text(encoding="utf-8"))


def describe() -> dict[str, str]:
    """``{name: description}`` for every example, in name order."""
    return {name: load(name)["description"] for name in names()}
