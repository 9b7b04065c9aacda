"""The state file of a Parquet mirror folder (``_mirror.json``): which files hold its rows.

Writers — the server's :class:`~toolkit.analytics.Mirror`, its compaction, a prune's archive —
add files first and then replace the state file (write a temporary file, ``os.replace``), so
the state file always names a complete set of files. Readers list the files the state names
(:func:`table_files`) and nothing else: a file being written, or a compacted file whose parts
are still on disk, is never read twice or half.

State (format 2; format 1, written before compaction existed, has only the first three)::

    {"format": 2,
     "batch": 812,                       # the last sync batch: parts part-00000001 … part-00000812
     "marks": {"events": 90211, …},      # the mirror's high-water marks (rowids) per append-only table
     "fingerprints": {"events": [...]},  # the key of the last mirrored row of each, to notice renumbering
     "pruned": true,                     # rows were deleted: rowids past a mark may have gaps
     "compacted": {"upto": 800,          # parts up to this batch are merged into the files below
                   "generation": 3,
                   "files": {"events": ["day-2026-11-24-g000003.parquet", …], …}},
     "retired": [["events/part-00000001.parquet", 1763985000000], …]}   # replaced, deleted later

A table's rows are its compacted files plus its parts whose batch is in ``(upto, batch]``.
Retired files stay on disk for a grace period, so a reader that listed them just before they
were replaced still finds them.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

STATE_FILE = "_mirror.json"
PART = re.compile(r"^part-(\d{8})\.parquet$")
COMPACTED = re.compile(r"^day-(\d{4}-\d{2}-\d{2})-g(\d{6})\.parquet$")


def part_name(batch: int) -> str:
    return f"part-{batch:08d}.parquet"


def sql_path(path: Path | str) -> str:
    """A path as the inside of a single-quoted SQL string."""
    return str(path).replace("'", "''")


def empty_state(append_only: tuple[str, ...]) -> dict:
    return {
        "format": 2,
        "batch": 0,
        "marks": {t: 0 for t in append_only},
        "fingerprints": {},
        "pruned": False,
        "compacted": {"upto": 0, "generation": 0, "files": {}},
        "retired": [],
    }


def load_state(folder: Path, append_only: tuple[str, ...]) -> dict:
    """The folder's state, upgraded to format 2 (an empty one when there is no state file)."""
    path = Path(folder) / STATE_FILE
    if not path.exists():
        return empty_state(append_only)
    raw = json.loads(path.read_text(encoding="utf-8"))
    state = empty_state(append_only)
    state["batch"] = int(raw["batch"])
    state["marks"].update({t: int(v) for t, v in raw.get("marks", {}).items()})
    state["fingerprints"] = raw.get("fingerprints", {})
    state["pruned"] = bool(raw.get("pruned", False))
    state["compacted"] = raw.get("compacted", state["compacted"])
    state["retired"] = raw.get("retired", [])
    return state


def save_state(folder: Path, state: dict) -> None:
    """Replace the state file atomically."""
    path = Path(folder) / STATE_FILE
    tmp = path.with_name(STATE_FILE + ".tmp")
    tmp.write_text(json.dumps(state, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def parts_after(folder: Path, table: str, after: int, upto: int) -> list[tuple[int, Path]]:
    """(batch, path) of the parts of ``table`` with ``after < batch <= upto``, in batch order."""
    found = []
    directory = Path(folder) / table
    if directory.is_dir():
        for entry in os.scandir(directory):
            match = PART.match(entry.name)
            if match and after < int(match.group(1)) <= upto:
                found.append((int(match.group(1)), Path(entry.path)))
    return sorted(found)


def table_files(folder: Path, state: dict, table: str) -> list[Path]:
    """Every file holding rows of ``table`` in this state, each row in exactly one of them."""
    folder = Path(folder)
    compacted = state["compacted"]
    files = [folder / table / name for name in compacted["files"].get(table, [])]
    return files + [path for _, path in parts_after(folder, table, compacted["upto"], state["batch"])]
