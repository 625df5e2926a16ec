"""Quiet windows: `POST /api/v1/maintenance` opens one, `GET /api/v1/maintenance` lists them,
`DELETE /api/v1/maintenance/{id}` ends one now (agents/respond/maintenance.py says what they do).

Body of the POST: `{"components": [...]}` and/or `{"teams": [...]}` (at least one name), then
`"minutes"` (1 to 10,080: a week) or `"until"` (RFC 3339, at most a week ahead), `"reason"` and
`"by"` (who asked; shown on the incidents it holds); a name given twice counts once. Answers
201 with the window. Errors: 422
for a body of the wrong shape, both or neither of minutes/until, an `until` in the past or over
a week ahead, names the tenant's world does not know (each named, with the closest known ones:
"component 'shiping' (did you mean 'shipping'?)"); 404 for a DELETE of an unknown id, 409 for
a DELETE of a window already over (it ran its course or someone ended it: the record stays as
it is). `GET ?all=true` lists past windows too. `DELETE ?by=NAME`
records who ended it (required: a 422 names `by` when it is missing or blank).
"""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator, model_validator
from starlette.concurrency import run_in_threadpool

from adapters.falkordb import GraphStore, TenantGraph, graph_name
from adapters.notices import fmt_ms
from agents.learn import verdicts
from agents.respond import maintenance
from gateway.http.auth import tenant_for
from gateway.http.limits import MAX_NAME_CHARS, MAX_TITLE_CHARS, ParsedOnceRoute
from gateway.http.payloads import rfc3339_ms

router = APIRouter(route_class=ParsedOnceRoute)

#: The longest window in minutes (a week: `agents.respond.maintenance.MAX_WINDOW_MS`).
MAX_MINUTES = maintenance.MAX_WINDOW_MS // 60_000
#: Names one window may cover (components and teams each).
MAX_NAMES = 200
#: A component or team name as the world file allows one (1-256 characters).
Name = Annotated[str, Field(min_length=1, max_length=256)]


class WindowIn(BaseModel):
    """A quiet window as posted (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")
    components: list[Name] = Field(default_factory=list, max_length=MAX_NAMES)
    teams: list[Name] = Field(default_factory=list, max_length=MAX_NAMES)
    minutes: StrictInt | None = Field(None, ge=1, le=MAX_MINUTES)
    until: str | None = Field(None, max_length=64)
    reason: str = Field(min_length=1, max_length=MAX_TITLE_CHARS)
    by: str = Field(min_length=1, max_length=MAX_NAME_CHARS)

    @field_validator("components", "teams")
    @classmethod
    def _once_each(cls, value: list[str]) -> list[str]:
        """Each name once, in the order first given: a window naming `payment` twice (a
        trial's body) covers it once, and lists it once."""
        return list(dict.fromkeys(value))

    @field_validator("until")
    @classmethod
    def _a_time(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            ms = rfc3339_ms(value)
        except ValueError:
            ms = None
        if ms is None:
            raise ValueError(f"'until' must be an RFC 3339 time such as 2026-12-01T18:00:00Z, "
                             f"not {value[:40]!r}")  # fmt: skip
        return value

    @model_validator(mode="after")
    def _complete(self) -> WindowIn:
        if not self.components and not self.teams:
            raise ValueError("name at least one of 'components' or 'teams'")
        if (self.minutes is None) == (self.until is None):
            raise ValueError("give exactly one of 'minutes' or 'until'")
        return self

    def ends_at(self) -> int | None:
        """`until` in ms UTC (None when the window is given in minutes). Raises `ValueError`."""
        return None if self.until is None else rfc3339_ms(self.until)


def _graph(request: Request) -> TenantGraph:
    tenant = tenant_for(request, request.app.state.settings)
    graph: TenantGraph = request.app.state.store.graph(graph_name(tenant))
    return graph


def _unknown(graph: TenantGraph, window: WindowIn) -> list[str]:
    """Each name of `window` the world does not know, with the closest known names, as a
    verdict's unknown cause gets them (`verdicts.close_names`: "component 'shiping' (did you
    mean 'shipping'?)"; a component's alias counts as its name); the known names are read only
    when one is unknown. Raises `GraphUnavailable`."""
    known = graph.one("names_known", {"components": window.components, "teams": window.teams})
    assert known is not None  # both parts collect: always one row
    components = [c for c in window.components if c not in known["components"]]
    teams = [t for t in window.teams if t not in known["teams"]]
    spelt = verdicts.spellings(graph) if components else {}
    named = (
        {str(r["name"]).lower(): str(r["name"]) for r in graph.rows("team_names")} if teams else {}
    )

    def near(spellings: dict[str, str], given: str) -> str:
        close = verdicts.close_names(spellings, given)
        return f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""

    return [f"component {c!r}{near(spelt, c)}" for c in components] + [
        f"team {t!r}{near(named, t)}" for t in teams
    ]


async def open_checked(graph: TenantGraph, window: WindowIn) -> dict[str, Any]:
    """Open `window` in `graph` once its names are known there; the window's row (ms UTC).
    The API and the web page's form both open windows through here. Raises HTTPException 422
    (an `until` over a week ahead or not in the future, names the world does not know: each
    named, with the closest known ones, `_unknown`), `GraphUnavailable`."""
    ends_at = window.ends_at()
    if ends_at is not None and ends_at > time.time() * 1000 + maintenance.MAX_WINDOW_MS:
        raise HTTPException(422, "'until' is more than a week ahead; a longer quiet is a change "
                                 "of the world")  # fmt: skip
    unknown = await run_in_threadpool(_unknown, graph, window)
    if unknown:
        raise HTTPException(422, f"not in this tenant's world: {', '.join(unknown)}")
    row = await run_in_threadpool(
        maintenance.start, graph, window.components, window.teams, window.reason, window.by,
        window.minutes, ends_at,
    )  # fmt: skip
    if row is None:
        raise HTTPException(422, f"'until' {window.until} is not in the future")
    return row


@router.post("/api/v1/maintenance", status_code=201)
async def open_window(request: Request, window: WindowIn) -> dict[str, Any]:
    """Open a quiet window; answer the window `{id, components, teams, starts_at, ends_at,
    reason, by}` (ms UTC)."""
    return await open_checked(_graph(request), window)


@router.get("/api/v1/maintenance")
async def list_windows(
    request: Request, all: bool = False, limit: int = Query(100, ge=1, le=1000)
) -> dict[str, Any]:
    """Windows not over yet, newest first (`all=true`: every one), each with `active` and the
    incidents it held (`held`)."""
    graph = _graph(request)
    rows = await run_in_threadpool(maintenance.windows, graph, all, limit)
    return {"windows": rows}


@router.delete("/api/v1/maintenance/{window_id}")
async def end_window(
    request: Request,
    window_id: str,
    by: str = Query(min_length=1, max_length=MAX_NAME_CHARS, pattern=r"\S"),
) -> dict[str, Any]:
    """End a window now as `by` (required, as the POST's and an acknowledgement's `by` is: an
    API credential is a tenant's, not a person's, so the person is named; without it a 422
    names `by`, before anything is read); answer `{id, ends_at, released}` (`released`: how
    many open incidents waited for it and are claimable again: they page if no other window
    covers them)."""
    return await end_now(request.app.state.store, _graph(request), window_id, by)


async def end_now(store: GraphStore, graph: TenantGraph, window_id: str, by: str) -> dict[str, Any]:
    """End window `window_id` of `graph` now as `by` and wake the workers for the tasks it
    held; `{id, ends_at, released}` (ms UTC, incidents). Raises HTTPException 404 for an
    unknown id, 409 for a window already over (its record unchanged: "already ended at …
    (it ran its course)" or "(ended by NAME)"), `GraphUnavailable`."""
    row = await run_in_threadpool(maintenance.end, graph, window_id, by)
    if row is None:
        raise HTTPException(404, f"no maintenance window {window_id!r}")
    if row["over"]:
        how = f"ended by {row['ended_by']}" if row["ended_by"] else "it ran its course"
        raise HTTPException(409, f"maintenance window {window_id!r} already ended at "
                                 f"{fmt_ms(row['ends_at'])} ({how})")  # fmt: skip
    tasks = int(row["tasks"])
    if tasks:  # a worker for each task it held
        store.wake(tasks)
    return {"id": row["id"], "ends_at": row["ends_at"], "released": row["released"]}
