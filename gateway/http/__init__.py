"""HTTP: the FastAPI routes (webhook, status, changes, playbooks, Slack) and the request guards
that run before any of them.
"""
