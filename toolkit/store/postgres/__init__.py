"""The PostgreSQL backend: the schema in this dialect and its migrations (psycopg 3)."""
