"""Black-box HTTP tests: a real `collab serve` process on a temporary DuckDB file."""
