"""What people do to an incident outside Slack: `POST /api/v1/incidents/{id}/ack` and
`POST /api/v1/incidents/{id}/resolve`, body `{"by": "<a person's name>"}`.

Each is one short graph write (`agents.respond.lifecycle`); the responder then edits the page
(acknowledged: who and when; resolved: one resolve notice, the ticket closed). A repeat changes
nothing and says who did it first (`"repeat": true`). The same credentials as the rest of the
API; the tenant comes from the credential. 404 when the incident does not exist in this tenant,
409 when acknowledging a resolved incident, 422 for a body without `by` (or no body): it names
`by` and what it is, `{"loc": ["body", "by"], "msg": "Field required: who resolves the incident
(a person's name: …)", …}`.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from adapters.falkordb import TenantGraph, graph_name
from agents.respond import lifecycle
from gateway.http.auth import tenant_for
from gateway.http.limits import MAX_NAME_CHARS, ParsedOnceRoute

router = APIRouter(route_class=ParsedOnceRoute)


#: Who acts: a person's name, as the world file names people.
Person = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS, pattern=r"\S")]
#: Why the body names the person (what a 422 for a missing `by` says it is).
NAMED = "a person's name: the API's credential is a tenant's, not a person's"


class AckIn(BaseModel):
    """Who acknowledges; an unknown field is a 422 naming it."""

    model_config = ConfigDict(extra="forbid")
    by: Person = Field(description=f"who acknowledges the incident ({NAMED})")


class ResolveIn(BaseModel):
    """Who resolves; an unknown field is a 422 naming it."""

    model_config = ConfigDict(extra="forbid")
    by: Person = Field(description=f"who resolves the incident ({NAMED})")


def _graph(request: Request) -> TenantGraph:
    tenant = tenant_for(request, request.app.state.settings)
    graph: TenantGraph = request.app.state.store.graph(graph_name(tenant))
    return graph


@router.post("/api/v1/incidents/{incident_id}/ack")
async def acknowledge(request: Request, incident_id: str, given: AckIn) -> dict[str, Any]:
    """Acknowledge the incident (stops its escalation). Answers `{id, acknowledged_by,
    acknowledged_at (ms UTC), repeat}`."""
    graph = _graph(request)
    try:
        row = await run_in_threadpool(lifecycle.acknowledge, graph, incident_id, given.by.strip())
    except LookupError:
        raise HTTPException(404, f"no incident {incident_id!r}") from None
    except lifecycle.NotOpen as exc:
        raise HTTPException(409, str(exc)) from None
    if row["fresh"]:
        request.app.state.store.wake()
    return {"id": row["id"], "acknowledged_by": row["acknowledged_by"],
            "acknowledged_at": row["acknowledged_at"], "repeat": not row["fresh"]}  # fmt: skip


@router.post("/api/v1/incidents/{incident_id}/resolve")
async def resolve(request: Request, incident_id: str, given: ResolveIn) -> dict[str, Any]:
    """Resolve the incident by hand (stops its escalation; one resolve notice). Answers `{id,
    status, resolved_by, resolved_at (ms UTC), repeat}`; a merged incident is resolved where
    its alerts went."""
    graph = _graph(request)
    try:
        row = await run_in_threadpool(lifecycle.resolve, graph, incident_id, given.by.strip())
    except LookupError:
        raise HTTPException(404, f"no incident {incident_id!r}") from None
    if row["fresh"]:
        request.app.state.store.wake()
    return {"id": row["id"], "status": row["status"], "resolved_by": row["resolved_by"],
            "resolved_at": row["resolved_at"], "repeat": not row["fresh"]}  # fmt: skip
