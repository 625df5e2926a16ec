"""Blast Radius gateway: the FastAPI app, its settings and the `blast-radius` command line."""
