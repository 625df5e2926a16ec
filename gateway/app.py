"""The FastAPI application: webhook, status API and health, built from one `Settings`."""

from __future__ import annotations

from fastapi import FastAPI

from adapters.falkordb import GraphStore
from gateway import changes, playbooks, slack_routes, status, webhook
from gateway.settings import Settings


def create_app(settings: Settings, store: GraphStore, schema_ready: bool = True) -> FastAPI:
    """Build the app. `store` is shared with the workers; nothing is read from the environment."""
    app = FastAPI(title="Blast Radius", version="0.1.0")
    app.state.settings = settings
    app.state.store = store
    app.state.schema_ready = schema_ready
    app.include_router(webhook.router)
    app.include_router(status.router)
    app.include_router(changes.router)
    app.include_router(playbooks.router)
    app.include_router(slack_routes.router)
    return app
