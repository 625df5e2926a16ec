"""Playbooks over HTTP: `GET /api/v1/playbooks` lists memory with trust and status;
`POST /api/v1/playbooks` adds a playbook written by a person (a runbook with checks).

Body: `{"title", "component", "failure_kind"?, "checks": [{"type": …}, …], "author"?, "id"?}`;
check types are those of `agents/checks.py`. 404 for an unknown component, 422 for an
unknown check type.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.concurrency import run_in_threadpool

from adapters.falkordb import TenantGraph, graph_name
from agents.failure_kinds import KINDS
from gateway.auth import tenant_for
from gateway.limits import Key

router = APIRouter()


class CheckIn(BaseModel):
    """One check of a playbook (see agents/checks.py for each type's fields)."""

    model_config = ConfigDict(extra="allow")
    type: Literal["no_recent_change", "recent_change", "alert_kind", "alert_firing", "prometheus"]


class PlaybookIn(BaseModel):
    """A playbook as posted by a person."""

    title: str = Field(min_length=1)
    component: str = Field(min_length=1)
    failure_kind: str | None = None
    checks: list[CheckIn] = Field(min_length=1)

    @field_validator("failure_kind")
    @classmethod
    def _known_kind(cls, value: str | None) -> str | None:
        """A failure kind of the fixed vocabulary (agents/failure_kinds.py), or none."""
        known = [kind for kind, _ in KINDS]
        if value is not None and value not in known:
            raise ValueError(f"unknown failure kind {value!r}; use one of {', '.join(known)}")
        return value

    author: str | None = None
    id: Key | None = None


def _graph(request: Request) -> TenantGraph:
    graph: TenantGraph = request.app.state.store.graph(
        graph_name(tenant_for(request, request.app.state.settings))
    )
    return graph


@router.post("/api/v1/playbooks", status_code=201)
async def add_playbook(request: Request, playbook: PlaybookIn) -> dict[str, Any]:
    """Store the playbook (active, trust 0.5); answer `{id, trust, status}`."""
    graph = _graph(request)
    params = {
        "id": playbook.id or f"playbook:{uuid.uuid4().hex[:12]}",
        "component": playbook.component,
        "title": playbook.title,
        "failure_kind": playbook.failure_kind,
        "checks_json": json.dumps([c.model_dump() for c in playbook.checks]),
        "author": playbook.author,
    }
    row = await run_in_threadpool(graph.one, "plant_playbook", params)
    if row is None:
        raise HTTPException(404, f"unknown component {playbook.component!r}")
    return row


@router.get("/api/v1/playbooks")
async def list_playbooks(request: Request) -> dict[str, Any]:
    """Every playbook: id, title, failure_kind, component, checks, helped, misled, trust, status."""
    graph = _graph(request)
    rows = await run_in_threadpool(graph.rows, "list_playbooks", {})
    for row in rows:
        row["checks"] = json.loads(row.pop("checks_json"))
    return {"playbooks": rows}
