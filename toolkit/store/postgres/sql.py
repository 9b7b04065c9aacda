"""The store's SQL in psycopg's parameter style.

Statements in ``toolkit/store`` are written once, with DuckDB's placeholders: ``?`` for a
positional parameter and ``$name`` for a named one. psycopg wants ``%s`` and ``%(name)s``
(and a literal ``%`` doubled). The text is rewritten once per statement and kept; quoted
literals and identifiers (a JSON path such as ``'$.steps'``) are left alone.

>>> pyformat("SELECT * FROM t WHERE a = ? AND b LIKE 'x%' AND c = $name AND d = '$.e?'")
"SELECT * FROM t WHERE a = %s AND b LIKE 'x%%' AND c = %(name)s AND d = '$.e?'"
>>> pyformat("SELECT ?::VARCHAR[] AS v, 5 % 2")
'SELECT %s::VARCHAR[] AS v, 5 %% 2'
"""

from __future__ import annotations

import functools
import re

# A quoted literal or identifier, a named parameter, a positional one, or a percent sign.
_TOKEN = re.compile(r"""('(?:[^']|'')*'|"(?:[^"]|"")*")|\$([A-Za-z_][A-Za-z0-9_]*)|(\?)|(%)""")


def _replace(match: re.Match[str]) -> str:
    quoted, name, positional, percent = match.groups()
    if quoted is not None:
        return quoted.replace("%", "%%")
    if name is not None:
        return f"%({name})s"
    if positional is not None:
        return "%s"
    return "%%"


@functools.lru_cache(maxsize=2048)
def pyformat(sql: str) -> str:
    """``sql`` with DuckDB's placeholders turned into psycopg's (computed once per text)."""
    return _TOKEN.sub(_replace, sql)
