"""Packaging: the built wheel, its install, environment.yml, typing for consumers."""
