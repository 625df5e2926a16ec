"""The FastAPI application: webhook, status API, Slack, memory and health, built from one
`Settings`. A database that cannot answer is a 503 on every route (`graph_unavailable`)."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from adapters.falkordb import GraphStore, GraphUnavailable, UnsafeKey
from agents.metrics import Metrics
from gateway import __version__
from gateway.http import (
    changes,
    incident_actions,
    incident_views,
    maintenance,
    playbooks,
    remediations,
    slack_routes,
    status,
    webhook,
)
from gateway.http.limits import (
    BodyError,
    RequestGuard,
    SafeJSONResponse,
    validation_failed,
)
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


async def unsafe_key(request: Request, exc: UnsafeKey) -> SafeJSONResponse:
    """An id FalkorDB would crash on (`adapters.falkordb.UnsafeKey`): 422 with the reason; the
    query was never sent."""
    return SafeJSONResponse({"detail": str(exc)}, status_code=422)


async def body_refused(request: Request, exc: BodyError) -> SafeJSONResponse:
    """A body a route parsed with `gateway.http.limits.load_json` and refused: 400 or 413."""
    return SafeJSONResponse({"detail": str(exc)}, status_code=exc.status)


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
    app = FastAPI(
        title="Blast Radius", version=__version__, default_response_class=SafeJSONResponse,
        # no /docs, /redoc or /openapi.json: unauthenticated, and Swagger's page loads scripts
        # from a CDN (the pages here load scripts from the gateway only); README documents the API
        docs_url=None, redoc_url=None, openapi_url=None,
    )  # fmt: skip
    app.state.metrics = metrics if metrics is not None else Metrics()
    app.state.settings = settings
    app.state.store = store
    app.state.schema_ready = schema_ready
    app.add_exception_handler(GraphUnavailable, graph_unavailable)  # type: ignore[arg-type]
    app.add_exception_handler(UnsafeKey, unsafe_key)  # type: ignore[arg-type]
    app.add_exception_handler(BodyError, body_refused)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, validation_failed)  # type: ignore[arg-type]
    # as `http_failed`, but a `/ui/` page no route has is an HTML page
    app.add_exception_handler(StarletteHTTPException, pages.http_error)  # type: ignore[arg-type]
    app.add_middleware(RequestGuard)  # credentials, then a bounded body, then bounded JSON
    app.include_router(webhook.router)
    app.include_router(status.router)
    app.include_router(changes.router)
    app.include_router(maintenance.router)
    app.include_router(playbooks.router)
    app.include_router(slack_routes.router)
    app.include_router(incident_actions.router)
    app.include_router(incident_views.router)
    app.include_router(remediations.router)
    pages.mount(app)  # mission control: `/` and `/ui/…`
    return app
