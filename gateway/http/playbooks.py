"""Playbooks over HTTP: `GET /api/v1/playbooks` lists memory with trust and status;
`POST /api/v1/playbooks` adds a playbook written by a person (a runbook with checks);
`DELETE /api/v1/playbooks/{id}` retires one (body `{"reason", "by"?}`): it is kept, with the
reason, and never recalled again.

Body: `{"title", "component", "failure_kind"?, "checks": [{"type": …}, …], "remediation"?,
"author"?, "id"?}`; checks are the typed union of `agents/investigate/checks.py`, a remediation
the one of `agents/act/spec.py`. An unknown field in the playbook, a check or the remediation
is a 422 naming it. 404 for an unknown component or
playbook,
422 for a check of unknown type or missing a field, or naming a component the world does not
know (the detail names it), and 422 naming the
setting for a playbook over a tenant quota: `BLAST_MAX_PLAYBOOKS` kept (learned ones
counted, retired ones not; checked in the same write as the create, so concurrent posts
cannot pass it together; a repeat of an idempotent POST passes), `BLAST_MAX_PLAYBOOK_CHECKS` checks,
`BLAST_MAX_PLAYBOOK_BYTES` of checks.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.concurrency import run_in_threadpool

from adapters.falkordb import TenantGraph, graph_name
from agents.act import spec
from agents.act.run import missing_credential
from agents.failure_kinds import KINDS
from agents.investigate.checks import Check
from gateway.http.auth import tenant_for
from gateway.http.limits import MAX_CHECKS, MAX_NAME_CHARS, MAX_TITLE_CHARS, Key, ParsedOnceRoute
from gateway.ops.runtime import remediation_credentials
from gateway.settings import Settings

router = APIRouter(route_class=ParsedOnceRoute)


class PlaybookIn(BaseModel):
    """A playbook as posted by a person."""

    model_config = ConfigDict(extra="forbid")
    title: str = Field(min_length=1, max_length=MAX_TITLE_CHARS)
    component: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    failure_kind: str | None = None
    checks: list[Check] = Field(min_length=1, max_length=MAX_CHECKS)
    remediation: spec.Remediation | None = None

    @field_validator("failure_kind")
    @classmethod
    def _known_kind(cls, value: str | None) -> str | None:
        """A failure kind of the fixed vocabulary (agents/failure_kinds.py), or none."""
        known = [kind for kind, _ in KINDS]
        if value is not None and value not in known:
            raise ValueError(f"unknown failure kind {value!r}; use one of {', '.join(known)}")
        return value

    author: str | None = Field(None, max_length=MAX_NAME_CHARS)
    id: Key | None = None


def _graph(request: Request) -> TenantGraph:
    graph: TenantGraph = request.app.state.store.graph(
        graph_name(tenant_for(request, request.app.state.settings))
    )
    return graph


def check_names(check: Any) -> list[str]:
    """The component names a posted check lists (`alert_any` on components, a `signature`'s
    alerting components and paths): each must be in the tenant's world."""
    data = check.model_dump()
    names = list(data.get("components") or [])
    for alert in data.get("alerts") or []:
        names += [alert["component"], *alert.get("path", [])]
    return names


@router.post("/api/v1/playbooks", status_code=201)
async def add_playbook(request: Request, playbook: PlaybookIn) -> dict[str, Any]:
    """Store the playbook (active, trust 0.5); answer `{id, trust, status}`, plus `warning`
    when its remediation cannot run with this server's settings (`run.missing_credential`:
    `BLAST_RUNBOOK_WEBHOOK_SECRET` for a webhook, `GITHUB_TOKEN` for the GitHub types), or
    when it can never steer: no check looks at its component itself (`about_candidate`,
    agents/investigate/checks.py; the investigator's rule), both in one string."""
    graph = _graph(request)
    settings: Settings = request.app.state.settings
    checks_json = json.dumps([c.model_dump() for c in playbook.checks])
    params = {
        "id": playbook.id or f"playbook:{uuid.uuid4().hex[:12]}",
        "component": playbook.component,
        "title": playbook.title,
        "failure_kind": playbook.failure_kind,
        "checks_json": checks_json,
        "author": playbook.author,
        "remediation_json": spec.dump(playbook.remediation) if playbook.remediation else None,
        "remediation_type": playbook.remediation.type if playbook.remediation else None,
    }
    if len(playbook.checks) > settings.max_playbook_checks:
        raise HTTPException(
            422, f"{len(playbook.checks)} checks, over the limit of "
            f"{settings.max_playbook_checks} per playbook (BLAST_MAX_PLAYBOOK_CHECKS)",
        )  # fmt: skip
    size = len(checks_json.encode())
    if size > settings.max_playbook_bytes:
        raise HTTPException(
            422, f"checks of {size} bytes, over the limit of {settings.max_playbook_bytes} "
            "bytes per playbook (BLAST_MAX_PLAYBOOK_BYTES)",
        )  # fmt: skip
    named = sorted({name for check in playbook.checks for name in check_names(check)})
    if named:
        known = await run_in_threadpool(
            graph.one, "names_known", {"components": named, "teams": []}
        )
        unknown = [n for n in named if n not in set(known["components"] if known else [])]
        if unknown:
            raise HTTPException(
                422, f"the checks name components this tenant's world does not know: "
                f"{', '.join(map(repr, unknown))} (a check on them could never hold)",
            )  # fmt: skip
    # the quota is checked in the write itself, so concurrent posts cannot all pass it
    row = await run_in_threadpool(
        graph.one, "plant_playbook", params | {"max_playbooks": settings.max_playbooks}
    )
    if row is not None and row["refused"]:
        raise HTTPException(
            422, f"this tenant keeps {row['kept']} playbooks, the limit "
            f"(BLAST_MAX_PLAYBOOKS={settings.max_playbooks}): retire one first "
            "(DELETE /api/v1/playbooks/{id})",
        )  # fmt: skip
    taken = (
        row is None and await run_in_threadpool(graph.one, "playbook_exists", params) is not None
    )
    if taken:
        # a reused idempotency key with another request: 422 (IETF Idempotency-Key draft)
        raise HTTPException(422, f"id {params['id']!r} already names another playbook")
    if row is None:
        raise HTTPException(404, f"unknown component {playbook.component!r}")
    stored = {k: row[k] for k in ("id", "trust", "status")}
    # stored all the same (a credential may be set later): said now, not after an approval
    missing = missing_credential(
        playbook.remediation.type if playbook.remediation else None,
        remediation_credentials(settings),
    )
    warnings = []
    if missing:
        warnings.append(
            f"its remediation cannot run on this server: {missing}; until it is set, a proposal "
            "of it says so and cannot be approved"
        )
    if not any(check.about_candidate() for check in playbook.checks):
        warnings.append(NEVER_STEERS.format(component=playbook.component))
    if warnings:
        stored["warning"] = "; also, ".join(warnings)
    return stored


#: POST's warning for a playbook none of whose checks looks at its component itself.
NEVER_STEERS = (
    "it can never steer an investigation: none of its checks looks at {component} itself "
    "(alert_any on listed components, alert_kind or alert_firing with scope alerting, "
    "no_recent_change and explains_alerting read the incident's context, which cannot single "
    "out a cause); a recalled playbook steers, and its remediation is proposed, only when a "
    'check that held looks at its candidate: add one such as {{"type": "alert_any"}}, '
    'calls_failing or named_by_alert (docs/evidence.md). Until then it is shown as "held, did '
    'not steer"'
)


@router.get("/api/v1/playbooks")
async def list_playbooks(request: Request) -> dict[str, Any]:
    """Every playbook: id, title, failure_kind, component, checks, remediation (or null, with
    the trust its verified runs earned), helped, misled, trust, status, and who made it:
    `author` (written by a person), else `learned_from` (incident id), `learned_at` (ms UTC),
    `confirmed_by`, `lesson` (`confirmed` | `corrected`) and `corrected_from` (the cause the
    corrected finding had named); null where not stored."""
    graph = _graph(request)
    rows = await run_in_threadpool(graph.rows, "list_playbooks", {})
    for row in rows:
        row["checks"] = json.loads(row.pop("checks_json"))
        stored = row.pop("remediation_json", None)
        row["remediation"] = json.loads(stored) if stored else None
    return {"playbooks": rows}


class RetireIn(BaseModel):
    """Why a person retires a playbook, and who."""

    model_config = ConfigDict(str_strip_whitespace=True, extra="forbid")
    reason: str = Field(min_length=1, max_length=2000)
    by: str | None = Field(None, max_length=200)


@router.delete("/api/v1/playbooks/{playbook_id}")
async def retire_playbook(request: Request, playbook_id: str, body: RetireIn) -> dict[str, Any]:
    """Retire the playbook (kept, never recalled again); answer `{id, status, was, reason, by,
    retired_at}`. 404 for an unknown id; retiring twice keeps the first reason."""
    graph = _graph(request)
    params = {"id": playbook_id, "reason": body.reason, "by": body.by}
    row = await run_in_threadpool(graph.one, "retire_playbook", params)
    if row is None:
        raise HTTPException(404, f"unknown playbook {playbook_id!r}")
    return row
