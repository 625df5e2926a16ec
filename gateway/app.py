"""The FastAPI application: webhook, status API, Slack, memory and health, built from one
`Settings`. A database that cannot answer is a 503 on every route (`graph_unavailable`)."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from adapters.falkordb import GraphStore, GraphUnavailable
from agents.metrics import Metrics
from gateway import changes, incident_views, playbooks, slack_routes, status, webhook
from gateway.settings import Settings
from gateway.web import pages


async def graph_unavailable(request: Request, exc: GraphUnavailable) -> JSONResponse:
    """Any route whose graph call fails because the database cannot answer: 503 with
    Retry-After, so Alertmanager (and Slack) retry; what was written before stays written."""
    return JSONResponse(
        {"detail": "graph database unavailable; retry later"},
        status_code=503,
        headers={"Retry-After": "5"},
    )


def create_app(
    settings: Settings,
    store: GraphStore,
    schema_ready: bool = True,
    metrics: Metrics | None = None,
) -> FastAPI:
    """Build the app. `store` is shared with the workers; nothing is read from the environment.

    `metrics`: the process's `Metrics` (shared with its workers); a new one with its own
    registry when not given.
    """
    app = FastAPI(title="Blast Radius", version="0.1.0")
    app.state.metrics = metrics if metrics is not None else Metrics()
    app.state.settings = settings
    app.state.store = store
    app.state.schema_ready = schema_ready
    app.add_exception_handler(GraphUnavailable, graph_unavailable)  # type: ignore[arg-type]
    app.include_router(webhook.router)
    app.include_router(status.router)
    app.include_router(changes.router)
    app.include_router(playbooks.router)
    app.include_router(slack_routes.router)
    app.include_router(incident_views.router)
    pages.mount(app)  # mission control: `/` and `/ui/…`
    return app
