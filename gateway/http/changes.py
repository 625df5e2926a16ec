"""`POST /api/v1/changes`: record a deploy or merged PR on a component (evidence for the
investigator: a recent change singles out one of several candidates).

Body: `{"component": "checkout", "kind": "deploy" | "pr", "ref": "v1.2.3" | "org/repo#42",
"at": RFC 3339 time or ms since the epoch (UTC), "author": optional, "id": optional}`.
The id (default `<kind>:<component>:<ref>`, hashed when FalkorDB could not index it) makes a
re-post harmless. 404 when the component is unknown in this tenant's graph; 422 for an `id`
FalkorDB cannot index (empty, surrounding spaces, control characters, over 1 KiB).
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, Field, StrictInt, field_validator
from starlette.concurrency import run_in_threadpool

from adapters.falkordb import graph_name, safe_key
from gateway.http.auth import tenant_for
from gateway.http.limits import EPOCH_MS_MAX, MAX_NAME_CHARS, MAX_TITLE_CHARS, Key, ParsedOnceRoute
from gateway.http.payloads import rfc3339_ms

router = APIRouter(route_class=ParsedOnceRoute)


class ChangeIn(BaseModel):
    """A change event as posted by CI/CD or a PR import."""

    component: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    kind: Literal["deploy", "pr"]
    ref: str = Field(min_length=1, max_length=MAX_TITLE_CHARS)
    at: StrictInt | str  # strict: JSON true is no time
    author: str | None = Field(None, max_length=MAX_NAME_CHARS)
    id: Key | None = None

    @field_validator("at")
    @classmethod
    def _to_ms(cls, value: StrictInt | str) -> int:
        if isinstance(value, int):
            if not 0 <= value <= EPOCH_MS_MAX:
                raise ValueError(f"'at' in ms since the epoch must be 0 to {EPOCH_MS_MAX}")
            return value
        ms = rfc3339_ms(value)
        if ms is None:
            raise ValueError("'at' must be a time")
        return ms


@router.post("/api/v1/changes", status_code=201)
async def record_change(request: Request, change: ChangeIn) -> dict[str, Any]:
    """Record the change; answer `{"id": …}`."""
    tenant = tenant_for(request, request.app.state.settings)
    graph = request.app.state.store.graph(graph_name(tenant))
    # the default id hashes a ref FalkorDB could not index, so a re-post still matches
    default = safe_key(f"{change.kind}:{change.component}:{change.ref}")
    params = change.model_dump() | {"id": change.id or default}
    row = await run_in_threadpool(graph.one, "record_change", params)
    taken = row is None and await run_in_threadpool(graph.one, "change_exists", params) is not None
    if taken:
        # a reused idempotency key with another request: 422 (IETF Idempotency-Key draft)
        raise HTTPException(422, f"id {params['id']!r} already names another change")
    if row is None:
        raise HTTPException(404, f"unknown component {change.component!r}")
    return {"id": row["id"]}
