"""Status API and health: `GET /api/v1/incidents`, `GET /api/v1/incidents/{id}`,
`GET /health/live` (no database), `GET /health/ready` (503 while the graph is not ready) and
`GET /metrics` (Prometheus text format; see `gateway/metrics.py` for the series).

Reads use the same credentials as the webhook; the tenant comes from the credential.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from starlette.concurrency import run_in_threadpool

from adapters.falkordb import TenantGraph, graph_name
from adapters.notices import ruled_out_by_rules
from agents.investigate import similar
from agents.investigate.checks import about_candidate
from agents.learn import verdicts
from agents.respond import lifecycle
from agents.triage.alerts import CONTACT_POINT_TEST, contact_point_test
from gateway.http.auth import tenant_for
from gateway.http.limits import MAX_NAME_CHARS, MAX_TEXT_CHARS, Key, ParsedOnceRoute
from gateway.http.payloads import sent_ahead

router = APIRouter(route_class=ParsedOnceRoute)


def _graph(request: Request) -> TenantGraph:
    tenant = tenant_for(request, request.app.state.settings)
    graph: TenantGraph = request.app.state.store.graph(graph_name(tenant))
    return graph


def ruled_out_rows(row: dict[str, Any]) -> list[dict[str, Any]]:
    """A finding's ruled-out candidates as the API shows them: `[{component, reason,
    evidence: {source, query, value, window, status, text}}]` by name; `evidence` is null for
    a finding written before measurements were recorded."""
    ruled: dict[str, str] = json.loads(row["ruled_out_json"] or "{}")
    measured: dict[str, Any] = json.loads(row.get("measured_json") or "{}")
    return [
        {"component": name, "reason": why, "evidence": measured.get(name)}
        for name, why in sorted(ruled.items())
    ]


#: Alerts `GET /api/v1/incidents/{id}` lists when not asked for another number
#: (`alerts_limit`), and the most it lists at once: 500 alerts are about 300 KB of JSON; an
#: incident of a storm may have tens of thousands (`alerts_offset` pages through them).
API_ALERTS = 500
MAX_API_ALERTS = 5_000
#: The largest `alerts_offset` taken: far past any incident, well inside the database's integers.
MAX_OFFSET = 1_000_000_000
#: The (component, alertname) pairs an incident's `alert_groups` lists, the most alerts first.
ALERT_GROUPS = 100


def alert_counts(graph: TenantGraph, incident_id: str) -> dict[str, Any]:
    """How many alerts an incident has (`cypher/incident_alert_counts.cypher`): `{total,
    firing, first (the key of the alert that opened it: the oldest that joined by no path,
    else the oldest; None without alerts),
    groups: [{component, alertname, alerts, firing}] (every (component, alertname) pair, the
    most alerts first; component None for alerts that matched none), components: {name:
    [alerts, firing]} (in the order their first alert started)}`."""
    rows = graph.rows("incident_alert_counts", {"incident_id": incident_id})
    components: dict[str, list[int]] = {}
    for row in sorted(rows, key=lambda r: r["since"] or 0):
        if row["component"] is not None:
            counts = components.setdefault(row["component"], [0, 0])
            counts[0] += int(row["alerts"])
            counts[1] += int(row["firing"])
    groups = [
        {"component": r["component"], "alertname": r["alertname"], "alerts": int(r["alerts"]),
         "firing": int(r["firing"])}
        for r in rows
    ]  # fmt: skip
    return {
        "total": sum(g["alerts"] for g in groups),
        "firing": sum(g["firing"] for g in groups),
        "first": rows[0]["first"] if rows else None,
        "groups": groups,
        "components": components,
    }


def alert_page(
    graph: TenantGraph,
    incident_id: str,
    limit: int,
    offset: int = 0,
    firing_first: bool = False,
    joins: bool = False,
) -> list[dict[str, Any]]:
    """`limit` of an incident's alerts after the first `offset`, oldest first (`firing_first`:
    the firing ones first), as `incident_detail` lists them; with `joins`, each also with
    `joined` (the properties of its HAS_ALERT edge: why it joined) and `received_at` (ms UTC),
    which the web page shows."""
    rows = graph.rows(
        "incident_alert_page",
        {"incident_id": incident_id, "limit": limit, "offset": offset,
         "firing_first": firing_first},
    )  # fmt: skip
    return [
        {
            "key": a["key"], "fingerprint": a["fingerprint"], "alertname": a["alertname"],
            "status": a["status"], "severity": a["severity"], "component": a["component"],
            "labels": json.loads(a["labels_json"]),
            "annotations": json.loads(a["annotations_json"]),
            "starts_at": a["starts_at"], "starts_at_ms": a["starts_at_ms"],
            "starts_at_ahead": sent_ahead(a["starts_at"], a["starts_at_ms"]),
            "ends_at_ms": a["ends_at_ms"], "generator_url": a["generator_url"], "link": a["link"],
            "source": a["source"],
            "silence_url": a["silence_url"] or None,
            "values": json.loads(a["values_json"]) if a["values_json"] else None,
            "joined_via": a["via"] or None,
        } | ({"joined": a["joined"], "received_at": a["received_at"]} if joins else {})
        for a in rows
    ]  # fmt: skip


def incident_detail(
    graph: TenantGraph,
    incident_id: str,
    alerts_limit: int = API_ALERTS,
    alerts_offset: int = 0,
    firing_first: bool = False,
    counts: dict[str, Any] | None = None,
    joins: bool = False,
) -> dict[str, Any] | None:
    """The whole incident as the API shows it, or None when there is no such incident.

    Shape: id, status (open | resolved | merged), title, severity, opened_at/resolved_at (ms,
    UTC), resolved_by (a person's name when resolved by hand), acknowledged_at (ms UTC) and
    acknowledged_by (a person's name), paged (its page reached a person on call or a channel)
    and nobody_paged (its page went out to no one: no team on call, no channel), heartbeat
    ({alertname, last_seen (ms UTC: when it last arrived)} for the incident of a heartbeat's
    silence, whose cause is no service; else null), root_cause
    (component name or null), merged_into (the incident that took its alerts, or null),
    split_from (the incident whose investigation split this one off, or null), split_into (the
    incidents its investigations split off it: where its alerts with another cause went, by id),
    finding {summary, confidence, candidates, paths, ruled_out [{component, reason, evidence
    (the measurement the reason rests on: source, query, value, window, status
    ok|no_data|not_measured|changed, text)}], planner, model (the planner model, or null),
    second_opinion (the graph's check of a model's answer)}, alerts [{key, fingerprint,
    alertname, status, severity, component, labels, annotations, starts_at (as sent),
    starts_at_ms (as kept: the time of receipt when the sent one was more than 5 min ahead of
    it), starts_at_ahead (true then: `sent_ahead`), ends_at_ms, generator_url, link, source
    (alertmanager | grafana), silence_url (where to silence it: Grafana's `silenceURL`, else a
    new Alertmanager silence; null when neither),
    values (Grafana's `values`, e.g. {"A": 2.7, "C": 1}, or null), joined_via (the dependency
    path that joined it, `a → b`, or null for the first alert)}] (`alerts_limit` of them after
    the first `alerts_offset`, oldest first, or with `firing_first` the firing ones first),
    alerts_total and alerts_firing (how many alerts it has, and how many of them fire),
    alerts_offset and alerts_limit (which of them `alerts` lists), alert_groups [{component,
    alertname, alerts, firing}] (the counts by component and alertname, the most alerts
    first, at most `ALERT_GROUPS`), contact_point_test (every alert of it is Grafana's
    contact-point test: `only_contact_point_test`), actions [{intent_id, kind,
    status, adapter, external_ref}], deliveries [{intent_id, at, channel, outcome (delivered |
    refused | error), reason, fallback_from}] (every attempt to deliver a page, oldest first),
    verdicts [{id, verdict, actual_cause, by, by_name, at, text, source, event_id, seq (its
    place among the incident's verdicts: two in the same millisecond are ordered by it)}]
    (engineers' answers in Slack, oldest first), tasks [{id, kind, status, epoch, attempts,
    taken_over, last_error, created_at}] (the agents' work on it; epoch counts claims),
    similar [{id, at, root_cause, confirmed_by, corrected, fixed_by, said (the latest
    verdict's words, at most 80 characters), text, score}] (earlier incidents whose alerts
    read alike, as found when it was investigated; `text` the text similarity, `score` mixed
    with the graph, 0-1; one that shares nothing with it, under 0.005, is left out),
    memory [{playbook, title, status, candidate, path, learned_from, confirmed_by, lesson,
    trust_at_use, checks [{check, held, status, detail, raw}], applicable, steered, verdict}]
    (the playbooks its latest decision considered; `verdict` helped | misled | not_applicable
    once an engineer answered). `counts`: the incident's `alert_counts`, when the caller read
    them already; `joins`: each alert also says why it joined (`alert_page`).
    """
    row = graph.one("incident_get", {"incident_id": incident_id})
    if row is None:
        return None
    if counts is None:
        counts = alert_counts(graph, incident_id)
    alerts = alert_page(graph, incident_id, alerts_limit, alerts_offset, firing_first, joins)
    finding = None
    if row["summary"] is not None:
        finding = {
            "summary": row["summary"],
            "confidence": row["confidence"],
            "candidates": row["candidates"],
            "paths": json.loads(row["paths_json"] or "[]"),
            "ruled_out": ruled_out_rows(row),
            "planner": row["planner"],
            "model": row["model"],
            "second_opinion": json.loads(row["second_opinion_json"] or "null"),
            "separated_by": row["separated_by"] or "",
            "evidence": json.loads(row["evidence_json"] or "[]"),
        }
    return {
        "id": row["id"],
        "status": row["status"],
        "title": row["title"],
        "severity": row["severity"],
        "opened_at": row["opened_at"],
        "resolved_at": row["resolved_at"],
        "resolved_by": row["resolved_by"],
        "acknowledged_at": row["acknowledged_at"],
        "acknowledged_by": row["acknowledged_by"],
        "root_cause": row["root_cause"],
        "merged_into": row["merged_into"],
        "split_from": row["split_from"],
        "split_into": sorted(row["split_into"]),
        "maintenance_until": row["maintenance_until"],
        "escalation_level": row["escalation_level"] or 0,
        "reopens": row["reopens"] or 0,
        "paged": row["paged"],
        "nobody_paged": row["nobody_paged"],
        "heartbeat": {"alertname": row["heartbeat"], "last_seen": row["last_seen"]}
        if row["heartbeat"]
        else None,
        "finding": finding,
        "alerts": alerts,
        "alerts_total": counts["total"],
        "alerts_firing": counts["firing"],
        "alerts_offset": alerts_offset,
        "alerts_limit": alerts_limit,
        "alert_groups": counts["groups"][:ALERT_GROUPS],
        "contact_point_test": only_contact_point_test(alerts, counts["groups"]),
        "actions": graph.rows("incident_actions", {"incident_id": incident_id}),
        "deliveries": graph.rows("incident_deliveries", {"incident_id": incident_id}),
        "verdicts": graph.rows("incident_verdicts", {"incident_id": incident_id}),
        "tasks": graph.rows("incident_tasks", {"incident_id": incident_id}),
    } | memory_of(
        graph, incident_id, row["root_cause"],
        ruled_out_by_rules(json.loads(row["ruled_out_json"] or "{}")),
    )  # fmt: skip


def only_contact_point_test(alerts: list[dict[str, Any]], groups: list[dict[str, Any]]) -> bool:
    """True when every alert of an incident is Grafana's contact-point test, as its page and
    ticket then say (`agents.respond.messages.test_note`): every (component, alertname) pair
    counted (`groups`, `alert_counts`) is the test's alertname, and the alerts listed
    (`alerts`, `alert_page` rows; at least one) are each the test
    (`agents.triage.alerts.contact_point_test`). False when none is listed: nothing says."""
    return (
        bool(alerts)
        and all(g["alertname"] == CONTACT_POINT_TEST["alertname"] for g in groups)
        and all(contact_point_test(a["alertname"], a["labels"], a["annotations"]) for a in alerts)
    )


#: How many of an incident's alerts `mark_contact_point_tests` reads: Grafana's test is one
#: alert (two presses, two); an incident with more is no test to tell apart this way.
TEST_ALERTS = 10


def mark_contact_point_tests(graph: TenantGraph, rows: list[dict[str, Any]]) -> None:
    """Set `contact_point_test` on each incident row (`list_incidents`, `web_incidents`: `id`,
    `title`, `root_cause`, `alerts`): True when every alert of it is Grafana's contact-point
    test (`only_contact_point_test`), as `incident_detail` says it, so a list does not read it
    as an inconclusive incident. Only a row titled as the test, with no cause and at most
    `TEST_ALERTS` alerts, is read further (its counts and alerts: two queries); the others are
    False without a query. Raises `GraphUnavailable`."""
    for row in rows:
        row["contact_point_test"] = False
        if (
            row["title"] == CONTACT_POINT_TEST["alertname"]
            and row["root_cause"] is None
            and 0 < int(row["alerts"]) <= TEST_ALERTS
        ):
            counts = alert_counts(graph, row["id"])
            alerts = alert_page(graph, row["id"], TEST_ALERTS)
            row["contact_point_test"] = only_contact_point_test(alerts, counts["groups"])


#: A playbook that steered though its checks held only with other components alerting.
LEAD_USE = (
    "a lead: its checks held but for the shape of the alerts (other components alert than "
    "then), steered"
)


def playbook_outcome(use: dict[str, Any]) -> str:
    """What became of one recalled playbook in a decision, in words, from its stored use
    (`applicable`, `steered`, `candidate`, `checks`: the results `{check, held, …}` in the
    order they ran). A playbook steers only when every check held and one that held looks at
    the candidate itself (`checks.about_candidate`; agents/investigate/investigator.py): one
    whose checks all held but only read the context (alerts on listed callers, nothing changed
    elsewhere, most alerting components reach it) is "held, did not steer", with that reason,
    not "not applicable"; one whose check failed says which."""
    steered, applicable = bool(use.get("steered")), bool(use.get("applicable"))
    if steered:
        return "applied, steered" if applicable else LEAD_USE
    if applicable:
        return "applied, did not steer (another cause was as likely or more)"
    results = [r for r in use.get("checks") or [] if isinstance(r, dict) and "held" in r]
    failed = next((r for r in results if not r["held"]), None)
    if failed is not None:
        kind = (failed.get("check") or {}).get("type") or "a"
        return f"not applicable: its {kind} check did not hold, did not steer"
    if results and not any(about_candidate(r.get("check") or {}) for r in results):
        return (
            f"held, did not steer: no check looks at {use.get('candidate')} itself (checks of "
            "the context, such as alerts on other components, cannot single it out)"
        )
    return "not applicable, did not steer"


def memory_of(
    graph: TenantGraph,
    incident_id: str,
    cause: str | None,
    ruled_out: dict[str, str] | None = None,
) -> dict[str, Any]:
    """`{similar, memory}` of `incident_detail` (`cypher/incident_memory.cypher`): `similar`
    without the earlier incidents that share nothing with this one (`similar.alike`, with
    `cause` its root cause and `ruled_out` the candidates its rules ruled out, reason by name),
    each with `ruled_out`: why this finding ruled its cause out (the page then does not cite
    it, `similar.cited`), else None."""
    ruled = ruled_out or {}
    row = graph.one("incident_memory", {"incident_id": incident_id}) or {}
    used = [
        {k: v for k, v in u.items() if k != "checks_json"}
        | {"checks": json.loads(u["checks_json"] or "[]")}
        for u in row.get("used") or []
    ]
    for use in used:
        use["outcome"] = playbook_outcome(use)
    found = json.loads(row.get("similar_json") or "[]")
    shown = [
        r | {"ruled_out": ruled.get(r["root_cause"]) if r["root_cause"] else None}
        for r in similar.alike(found, cause, ruled)
    ]
    return {"similar": shown, "memory": used}


@router.get("/api/v1/incidents")
async def list_incidents(
    request: Request,
    status: Literal["open", "resolved", "merged"] | None = None,
    limit: int = Query(100, ge=1, le=1000),
) -> dict[str, Any]:
    """The newest incidents first: id, status, title, severity, times, root_cause with the
    finding's `confidence` (0-1, null before a finding; under 0.5 the cause is a lead, as the
    page and web say), `paged`, `nobody_paged` and `delivered_to` (where its page was last
    delivered: a Slack channel, or `outbox`; `cypher/list_incidents.cypher`), alert counts.
    Incidents merged into another are left out unless `status=merged` asks for them.
    `contact_point_test`: every alert of it is Grafana's contact-point test
    (`mark_contact_point_tests`)."""
    graph = _graph(request)

    def read() -> list[dict[str, Any]]:
        rows = graph.rows("list_incidents", {"status": status, "limit": limit})
        for row in rows:
            row["alerts"], row["firing"] = int(row["alerts"]), int(row["firing"])
        mark_contact_point_tests(graph, rows)
        return rows

    return {"incidents": await run_in_threadpool(read)}


@router.get("/api/v1/incidents/{incident_id}")
async def get_incident(
    request: Request,
    incident_id: str,
    alerts_limit: int = Query(API_ALERTS, ge=0, le=MAX_API_ALERTS),
    alerts_offset: int = Query(0, ge=0, le=MAX_OFFSET),
) -> dict[str, Any]:
    """One incident (see `incident_detail`) with `alerts_limit` of its alerts (0 to 5,000;
    default 500) after the first `alerts_offset`, oldest first; `alerts_total` says how many
    there are. 404 when it does not exist in this tenant; 422 for a limit or offset out of
    range."""
    graph = _graph(request)
    found = await run_in_threadpool(
        incident_detail, graph, incident_id, alerts_limit, alerts_offset
    )
    if found is None:
        raise HTTPException(404, f"no incident {incident_id!r}")
    return found


@router.api_route("/health/live", methods=["GET", "HEAD"])  # HEAD: load balancers
async def live() -> dict[str, str]:
    """The process answers (does not touch the database)."""
    return {"status": "live"}


@router.api_route("/health/ready", methods=["GET", "HEAD"], response_model=None)
async def ready(request: Request) -> dict[str, Any] | JSONResponse:
    """200 when the graph answers and the schema is in place; 503 otherwise. Alert intake
    needs nothing else: `detail` lists what serve noticed that delays pages but not intake
    (Slack unreachable at start: pages wait in the graph until it answers)."""
    ok = request.app.state.schema_ready and await run_in_threadpool(request.app.state.store.ping)
    if not ok:
        return JSONResponse({"status": "not ready"}, status_code=503)
    notes = list(getattr(request.app.state, "notes", []))
    return {"status": "ready", "detail": notes} if notes else {"status": "ready"}


class VerdictIn(BaseModel):
    """A verdict given outside Slack (e.g. from the ticket tracker or a CLI). An unknown
    field is a 422 naming it: `actualCause` for `actual_cause` would drop the cause."""

    model_config = ConfigDict(extra="forbid")
    verdict: Literal["confirmed", "rejected", "resolved"]
    by: str = Field(
        min_length=1,
        max_length=MAX_NAME_CHARS,
        description="who gives it (a Slack user id or a name)",
    )
    actual_cause: str | None = Field(None, max_length=MAX_NAME_CHARS)
    text: str = Field("", max_length=MAX_TEXT_CHARS)
    id: Key | None = Field(None, description="idempotency key; a repeat changes nothing")

    @field_validator("by", "actual_cause", "text")
    @classmethod
    def _printable(cls, value: str | None, info: ValidationInfo) -> str | None:
        """422 for a control or bidirectional character (`verdicts.unprintable`), and for a
        `by` that is only blanks ("confirmed by    " on every page after)."""
        why = verdicts.unprintable(value, str(info.field_name))
        if why is not None:
            raise ValueError(why)
        if info.field_name == "by" and value is not None and not value.strip():
            raise ValueError("by names no one: give a Slack user id or a name")
        return value


@router.post("/api/v1/incidents/{incident_id}/verdicts", status_code=201)
async def add_verdict(request: Request, incident_id: str, given: VerdictIn) -> dict[str, Any]:
    """Record a verdict on the incident's diagnosis, as a Slack button would: it reaches the
    learner (trust, new playbooks). `actual_cause` defaults to the root cause when confirmed.
    404 when the incident does not exist in this tenant; 422 when `actual_cause` names no
    known component (with "did you mean 'orders-db'?" for a misspelling,
    `verdicts.unknown_cause`: no playbook is ever pinned to a component that does not exist),
    or contradicts the verdict (`verdicts.contradiction`: confirming naming
    another cause, rejecting naming the finding's own, resolving naming another: a resolve
    teaches nothing), or rejects an inconclusive finding
    naming no cause and saying nothing in `text` (`verdicts.contradiction` too; a blank
    `actual_cause` is none; with `text`, a cause outside the graph, recorded, teaching no
    playbook). Posting the same `id` again changes nothing; without an id, each post is a new
    verdict."""
    graph = _graph(request)
    key = given.id or uuid.uuid4().hex
    # a blank cause is no cause, as the web page's empty box is
    actual = (given.actual_cause or "").strip() or None

    def store() -> dict[str, Any] | None:
        found = graph.one("incident_get", {"incident_id": incident_id})
        if found is None:
            return None
        if actual is not None and not graph.rows("match_components", {"candidates": [actual]}):
            raise HTTPException(422, verdicts.unknown_cause(graph, actual))
        wrong = verdicts.contradiction(given.verdict, found["root_cause"], actual, given.text)
        if wrong is not None:
            raise HTTPException(422, wrong)
        cause = actual or (found["root_cause"] if given.verdict == "confirmed" else None)
        verdict = verdicts.Verdict(
            id=f"api:{key}", incident_id=incident_id, verdict=given.verdict, actual_cause=cause,
            by=given.by, by_name=None, at=int(time.time() * 1000), text=given.text,
            source="api", event_id=key,
        )  # fmt: skip
        try:
            row = verdicts.record(graph, verdict)
        except verdicts.IdTaken as exc:
            raise HTTPException(422, f"{exc}: use a new id for a new verdict") from None
        if given.verdict == "resolved":  # a `resolved` verdict resolves the incident
            lifecycle.resolve(graph, incident_id, given.by)
        return row

    row = await run_in_threadpool(store)
    if row is None:
        raise HTTPException(404, f"no incident {incident_id!r}")
    return {"id": row["id"], "verdict": row["verdict"], "actual_cause": row["actual_cause"]}


@router.get("/metrics")
async def metrics(request: Request) -> Response:
    """Every series of `gateway/metrics.py`, summed over processes in multiprocess mode.

    No credential (like `/health`): it names tenants but holds no alert content; keep it off
    the public side of the reverse proxy (deploy/README.md).
    """
    body = await run_in_threadpool(request.app.state.metrics.exposition)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
