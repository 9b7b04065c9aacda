"""The layer rules of the architecture (../shared/design/architecture.md, "Rules of the
house"), read from the source with ``ast`` so a broken rule fails here and not in review:

- the engine imports no store, services, duckdb or server;
- ``toolkit`` imports no ``server`` except ``toolkit/cli.py`` (``collab serve``);
- ``server`` imports no ``toolkit.engine``, ``duckdb`` or ``psycopg``;
- the store imports no engine, services or server;
- no SQL statement outside ``toolkit/store`` (the one seam both backends implement), except
  where the toolkit reads a DuckDB file of its own making: a simulation's results
  (``toolkit/simulate``, its panel in ``toolkit/widgets/simulation.py``) and the analyst's
  views and exports (``toolkit/analytics``);
- no import cycle among the project's modules (imports at module level: those run on import).

Every import counts for the layer rules, also one inside a function: a lazy import still
ties the layers together."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("toolkit", "server")


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the project's packages, by dotted name."""
    return {module_name(p, root): p for package in PACKAGES for p in sorted((root / package).rglob("*.py"))}


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def imports(path: Path, module: str, known: set[str], top_level_only: bool = False) -> set[str]:
    """The modules ``path`` imports: for ``from a.b import c`` that is ``a.b.c`` when it is a
    module of the project, else ``a.b``. ``top_level_only`` keeps those run on import (not
    inside functions or classes, nor under ``if TYPE_CHECKING:``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    nodes = _top_level(tree.body) if top_level_only else ast.walk(tree)
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(node, module, path.name == "__init__.py")
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in known else target)
    return found


def _top_level(body: list[ast.stmt]):
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If):
            if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                yield from _top_level(node.body)
                yield from _top_level(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *[h.body for h in node.handlers]):
                yield from _top_level(block)


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def layer_violations(root: Path = ROOT) -> list[str]:
    """One line per import that breaks a layer rule."""
    modules = project_modules(root)
    known = set(modules)
    rules = [  # (importer, imported, why)
        ("toolkit.engine", ("toolkit.store", "toolkit.services", "duckdb", "server"), "the engine is pure"),
        ("toolkit", ("server",), "toolkit runs without the server (only toolkit.cli starts it)"),
        ("server", ("toolkit.engine",), "the server talks to services, not to the engine"),
        ("server", ("duckdb", "psycopg"), "the server holds no SQL: the store does"),
        ("toolkit.store", ("toolkit.engine", "toolkit.services", "server"), "the store knows rows, not rules"),
    ]
    found = []
    for module, path in modules.items():
        for imported in sorted(imports(path, module, known)):
            for importer, forbidden, why in rules:
                if module == "toolkit.cli" and importer == "toolkit":
                    continue
                if _within(module, importer) and any(_within(imported, f) for f in forbidden):
                    found.append(f"{path.relative_to(root)}: imports {imported} ({why})")
    return found


# Where SQL may be written: the store, and the readers of DuckDB files the toolkit makes itself.
SQL_HOMES = ("toolkit.store", "toolkit.analytics", "toolkit.simulate", "toolkit.widgets.simulation")
SQL_START = re.compile(
    r"^\s*(SELECT\s|INSERT\s+INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s|WITH\s+\w+\s+AS\s|"
    r"(CREATE|ALTER|DROP)\s+(TABLE|VIEW|INDEX|SEQUENCE)\s)"
)


def sql_outside_the_store(root: Path = ROOT) -> list[str]:
    """One line per string constant that starts like an SQL statement outside ``SQL_HOMES``."""
    found = []
    for module, path in project_modules(root).items():
        if any(_within(module, home) for home in SQL_HOMES):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL_START.match(node.value):
                found.append(f"{path.relative_to(root)}:{node.lineno}: {node.value.strip()[:60]}")
    return found


def import_cycles(root: Path = ROOT) -> list[list[str]]:
    """The groups of project modules that import each other at module level."""
    modules = project_modules(root)
    graph = nx.DiGraph()
    for module, path in modules.items():
        graph.add_node(module)
        for imported in imports(path, module, set(modules), top_level_only=True):
            if imported in modules and imported != module:
                graph.add_edge(module, imported)
    return sorted(sorted(group) for group in nx.strongly_connected_components(graph) if len(group) > 1)


def test_no_import_breaks_a_layer_rule():
    assert layer_violations() == []


def test_no_sql_outside_the_store():
    assert sql_outside_the_store() == []


def test_the_sql_check_finds_a_statement(tmp_path):
    (tmp_path / "toolkit" / "services").mkdir(parents=True)
    (tmp_path / "server").mkdir()
    (tmp_path / "toolkit" / "services" / "leak.py").write_text('ROWS = "SELECT * FROM executions"\n')
    assert sql_outside_the_store(tmp_path) == ["toolkit/services/leak.py:1: SELECT * FROM executions"]


def test_no_import_cycle_among_project_modules():
    assert import_cycles() == []


def test_the_checker_sees_the_whole_project():
    modules = project_modules()
    assert {"toolkit.engine", "toolkit.services.operations", "server.app", "toolkit.cli"} <= set(modules)
    # the one allowed exception is real: the CLI starts the server
    assert "server" in {i.split(".")[0] for i in imports(modules["toolkit.cli"], "toolkit.cli", set(modules))}


def test_the_server_stays_thin():
    """The HTTP layer only: everything else lives behind services (issue 15: under 700 lines)."""
    lines = sum(len(path.read_text().splitlines()) for path in (ROOT / "server").glob("*.py"))
    assert lines < 700, f"server/ has {lines} lines: move what is not HTTP into toolkit/services"
