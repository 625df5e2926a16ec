"""Mission control, served by the gateway: server-rendered pages (Jinja2) that work without
JavaScript, plus vendored htmx (+ its SSE extension) for live updates (`static/vendor/README.md`:
versions, sources, licences). Graphs are server-rendered SVG (`drawing.py`).

Routes: `/` incidents (filters `state`, `team`, `service`, `severity`, `q`: GET parameters),
`/ui/incidents/{id}`, `/ui/memory`, `/ui/world`, `/ui/health`, `/ui/login` (GET form, POST
token), `/ui/logout` (POST), and the incident's actions (POST forms): `…/acknowledge`,
`…/resolve`, `…/snooze`, `…/verdict` (Confirm cause / Wrong cause), `/ui/maintenance` (quiet
windows: GET list and form, POST open, POST `…/{id}/end`), `/ui/events` (Server-Sent Events,
`live.py`), `/ui/static/…`. Everything a person sees comes from their session's tenant graph
only (`session.py` for sign-in, people and CSRF); what they do is recorded as them.

Writing forms: the session is checked before the body is read, the body is at most
`FORM_LIMIT` bytes, and the CSRF token must match. Bad input is a 4xx page with the reason.
"""

from __future__ import annotations

import time
import urllib.parse
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from markupsafe import Markup
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from adapters.falkordb import TenantGraph, graph_name
from adapters.notices import SET_ASIDE, in_words
from agents.act import notices
from agents.investigate.checks import describe, held_words
from agents.investigate.similar import said_by
from agents.learn import verdicts
from agents.respond import lifecycle, maintenance, messages
from gateway.http import incident_views
from gateway.http import maintenance as maintenance_api
from gateway.http.limits import MAX_NAME_CHARS, MAX_TEXT_CHARS, http_failed, read_limited
from gateway.http.payloads import http_link
from gateway.http.status import alert_counts, incident_detail
from gateway.ops.runtime import remediation_credentials
from gateway.web import drawing, live, maintenance_form, overview, timeline
from gateway.web.live import LiveFeed
from gateway.web.proxies import ForwardedFrom, forwarding_hosts
from gateway.web.session import (
    COOKIE,
    LOCAL_PERSON,
    OPEN_MODE_NAME,
    NotAViewer,
    Session,
    Sessions,
    check_csrf,
    check_same_origin,
)

HERE = Path(__file__).resolve().parent
#: Largest form body accepted (sign-in, verdict, logout): a token, a few fields.
FORM_LIMIT = 8 * 1024
#: How the verdict form's box for words (`text`) is named in its refusals' advice.
WORDS_BOX = "the box 'in words'"
#: Annotation names that hold a runbook link (Prometheus's convention is `runbook_url`).
RUNBOOK_KEYS = ("runbook_url", "runbook", "playbook_url")
#: Labels that, with `alertname`, pick an alert for a new Alertmanager silence.
SILENCE_LABELS = ("alertname", "service", "job", "namespace")

#: Every page: scripts and everything else from this origin only (the vendored files), no
#: framing (the action buttons cannot be clickjacked), forms post back here only. Inline
#: styles are allowed for htmx's indicator style.
PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": (
        "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}

router = APIRouter()
templates = Jinja2Templates(directory=HERE / "templates")
templates.env.filters["http_link"] = http_link  # only http(s) URLs become links
#: The incident page shows this many alerts at a time (firing first; `?alerts_page=N` for the
#: next ones), label and annotation text up to `CLIP_CHARS` characters each, and a step's
#: stored arguments or result up to `STEP_CHARS`: a 5 MiB annotation, 20,000 alerts, or a
#: step that read them all, would otherwise make a page of megabytes (each step whole:
#: `GET /api/v1/incidents/{id}/steps/{task_id}/{n}`).
PAGE_ALERTS = 200
CLIP_CHARS = 1_000
STEP_CHARS = 20_000


def clip(value: object) -> str:
    """`value` as text, cut to `CLIP_CHARS` characters with a note of how much was left out."""
    text = value if isinstance(value, str) else str(value)
    if len(text) <= CLIP_CHARS:
        return text
    return f"{text[:CLIP_CHARS]}… ({len(text) - CLIP_CHARS:,} more characters; the API has all)"


templates.env.filters["clip"] = clip


def verdict_words(text: str | None, source: str | None = None) -> str:
    """A verdict's `text` (what happened, in the person's words) as one line, cut to what a
    page shows (`messages.VERDICT_TEXT_SHOWN`; the API has it whole), or "" for none (a Slack
    button's label is none: `notices.in_words`)."""
    return in_words(text, messages.VERDICT_TEXT_SHOWN, source) or ""


templates.env.filters["verdict_words"] = verdict_words


class SignInRequired(Exception):
    """The request has no valid session (and the gateway is not in open mode)."""


def when(ms: int | None) -> Markup:
    """A `<time>` element for ms since the epoch: UTC text (and title, for hover), which the
    page's script rewrites in the viewer's time zone. `-` for no time."""
    if ms is None:
        return Markup("-")
    moment = datetime.fromtimestamp(ms / 1000, UTC)
    iso = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    text = moment.strftime("%Y-%m-%d %H:%M:%S UTC")
    return Markup('<time datetime="{}" title="{}">{}</time>').format(iso, text, text)


def age(ms: int | None, now_ms: int) -> str:
    """How long ago, in the largest whole unit: `45 s`, `12 min`, `3 h`, `2 d`."""
    if ms is None:
        return "-"
    seconds = max(0, (now_ms - ms) // 1000)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit}"
    return f"{seconds} s"


templates.env.globals.update(
    describe_check=describe,
    said_by=said_by,
    held_words=held_words,
    when=when,
    age=age,
    pretty=overview.pretty,
    USE_VERDICTS=overview.USE_VERDICTS,
    LOW_CONFIDENCE=timeline.LOW_CONFIDENCE,
    TEST_NOTE=messages.TEST_NOTE,
    SET_ASIDE=SET_ASIDE,
)


async def _session(request: Request) -> tuple[Session, str | None]:
    """The viewer's session and, when one was opened just now, the cookie value to set.

    A request from a trusted proxy that names a person opens a session for them (or keeps
    theirs); in open mode a first visit gets one for `local`. Raises `SignInRequired` without
    a valid session, `NotAViewer` for a proxy person no tenant lets in.
    """
    sessions: Sessions = request.app.state.sessions
    person = sessions.proxy_identity(request)
    found = await run_in_threadpool(sessions.read, request.cookies.get(COOKIE))
    if person is not None:
        tenant = sessions.tenant_for_proxy_person(person)
        if found is not None and (found.person, found.tenant, found.via) == (
            person,
            tenant,
            "proxy",
        ):
            return found, None
        value, opened = await run_in_threadpool(sessions.open, tenant, person, "proxy")
        return opened, value
    if found is not None:
        return found, None
    if sessions.open_mode:
        tenant = request.app.state.settings.default_tenant
        value, opened = await run_in_threadpool(sessions.open, tenant, LOCAL_PERSON, "open")
        return opened, value
    raise SignInRequired


def _graph(request: Request, session: Session) -> TenantGraph:
    found: TenantGraph = request.app.state.store.graph(graph_name(session.tenant))
    return found


async def render(
    request: Request,
    name: str,
    session: Session | None,
    new_cookie: str | None,
    status_code: int = 200,
    **context: Any,
) -> Response:
    """A page from `templates/`, with the session (tenant, person, CSRF), `now_ms` and the
    activity feed's first lines (`live.recent`, for a signed-in page) in context."""
    sessions: Sessions = request.app.state.sessions
    now = _now_ms()
    feed: list[dict[str, Any]] = []
    if session is not None:
        feed = await run_in_threadpool(live.recent, _graph(request, session), now)
    response = templates.TemplateResponse(
        request, name,
        {"session": session, "open_mode": sessions.open_mode, "now_ms": now, "feed": feed,
         **context},
        status_code=status_code, headers=PAGE_HEADERS,
    )  # fmt: skip
    if new_cookie is not None:
        sessions.set_cookie(request, response, new_cookie)
    return response


def _now_ms() -> int:
    return int(time.time() * 1000)


async def _form(request: Request) -> dict[str, str]:
    """The urlencoded form body (at most `FORM_LIMIT` bytes), one value per field.

    Raises HTTPException 413 (too big), 415 (not a urlencoded form), 400 (not decodable).
    """
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise HTTPException(415, "send the form as application/x-www-form-urlencoded")
    raw = await read_limited(request, FORM_LIMIT)
    try:
        fields = urllib.parse.parse_qs(raw.decode("utf-8"), strict_parsing=False)
    except (UnicodeDecodeError, ValueError):
        raise HTTPException(400, "the form is not valid UTF-8 urlencoded data") from None
    return {key: values[0] for key, values in fields.items()}


def _safe_next(target: str | None) -> str:
    """A same-site path to return to after sign-in: a local absolute path, else `/`."""
    if target and target.startswith("/") and not target.startswith(("//", "/\\")):
        return target
    return "/"


@router.get("/", response_class=HTMLResponse)
async def incidents_page(
    request: Request,
    state: str = "open",
    team: str | None = None,
    service: str | None = None,
    severity: str | None = None,
    q: str | None = None,
) -> Response:
    """The incidents list for triage: services and cause, severity, who is paged and whether
    they acknowledged, escalation, time since the page, maintenance. Filters (GET): `state`
    (`overview.STATES`: another value is a 400 page naming them), `team`, `service`,
    `severity`, `q` (any text: one no incident has matches none, and the form shows it)."""
    session, cookie = await _session(request)
    graph = _graph(request, session)
    if state not in overview.STATES:
        return await render(
            request, "error.html", session, cookie, status_code=400, title="No such state",
            message=f"There is no state {state[:40]!r} to list: choose one of "
                    f"{', '.join(overview.STATES)}.",
        )  # fmt: skip
    chosen = state
    found = await run_in_threadpool(
        overview.incident_rows, graph, _now_ms(), chosen, team or None, service or None,
        severity or None, q or None,
    )  # fmt: skip
    filters = {"state": chosen, "team": team or "", "service": service or "",
               "severity": severity or "", "q": q or ""}  # fmt: skip
    return await render(
        request, "incidents.html", session, cookie, incidents=found["rows"],
        teams=found["teams"], services=found["services"], filters=filters,
        states=overview.STATES, severities=overview.SEVERITY_ORDER,
    )  # fmt: skip


def links(request: Request, detail: dict[str, Any]) -> dict[str, Any]:
    """What a responder may want to open: `{ticket: {ref, url} | None, runbooks: [{alert,
    url}], silence: url | None, silence_in: Grafana | Alertmanager, sources: [{alert,
    component, url}]}`. Only http(s) URLs."""
    settings = request.app.state.settings
    ticket = next((a for a in detail["actions"] if a["kind"] == "ticket" and a["external_ref"]),
                  None)  # fmt: skip
    runbooks, sources, seen = [], [], set()
    for alert in detail["alerts"]:  # the alerts shown
        for key in RUNBOOK_KEYS:
            url = http_link(str(alert["annotations"].get(key) or ""))
            if url and url not in seen:
                seen.add(url)
                runbooks.append({"alert": alert["alertname"], "url": url})
        url = http_link(alert["link"] or alert["generator_url"] or "")
        if url and url not in seen:
            seen.add(url)
            sources.append({"alert": alert["alertname"], "component": alert["component"],
                            "source": alert["source"], "url": url})  # fmt: skip
    # the link the alert came with (Grafana's `silenceURL`, or the Alertmanager silence built
    # from the body's externalURL); else, for an Alertmanager alert, one on BLAST_ALERTMANAGER_URL
    # (never for a Grafana alert: Alertmanager never saw it)
    first = detail["alerts"][0] if detail["alerts"] else None
    silence = http_link(first.get("silence_url") or "") or None if first else None
    if (
        first is not None
        and silence is None
        and first["source"] != "grafana"
        and (settings.alertmanager_url)
    ):
        labels = first["labels"]
        matchers = ",".join(
            f'{k}="{str(labels[k]).replace(chr(34), "")}"' for k in SILENCE_LABELS if labels.get(k)
        )
        silence = (settings.alertmanager_url.rstrip("/") + "/#/silences/new?filter="
                   + urllib.parse.quote("{" + matchers + "}", safe=""))  # fmt: skip
    return {
        "silence_in": "Grafana" if first is not None and first["source"] == "grafana" else
        "Alertmanager",
        "ticket": {
            "ref": ticket["external_ref"].removeprefix("github:"),
            "url": timeline.ticket_link(ticket["external_ref"], settings.github_api_url),
        } if ticket else None,
        "runbooks": runbooks, "silence": silence, "sources": sources,
    }  # fmt: skip


def page_number(text: str | None) -> int:
    """The `alerts_page` GET parameter: a whole number from 1 (absent: 1). Raises
    HTTPException 400 naming what it must be."""
    if text is None:
        return 1
    if not (text.isascii() and text.isdigit() and 0 < len(text) <= 9 and int(text) >= 1):
        raise HTTPException(400, f"alerts_page must be a whole number from 1, not {text[:40]!r}")
    return int(text)


@router.get("/ui", include_in_schema=False)
@router.get("/ui/", include_in_schema=False)
@router.get("/ui/incidents", include_in_schema=False)
@router.get("/ui/incidents/", include_in_schema=False)
async def incidents_elsewhere(request: Request) -> Response:
    """The incidents list lives at `/`: a 307 there, filters kept (a new user's trial trimmed
    an incident's address to `/ui/incidents` and got "There is no page")."""
    query = request.url.query
    return RedirectResponse("/" + (f"?{query}" if query else ""), status_code=307)


@router.get("/ui/incidents/{incident_id}", response_class=HTMLResponse)
async def incident_page(request: Request, incident_id: str) -> Response:
    """One incident, responder first: status, severity and who is on it; the actions; links;
    the finding; the timeline; the alerts (`PAGE_ALERTS` at a time, firing first: page
    `alerts_page`, 1 by default; one past the last shows the last); the graph; then the
    agents' steps, decisions, ruled-out candidates and tasks, folded. A 404 page when it is
    not in the viewer's tenant; 400 for an `alerts_page` that is no whole number from 1."""
    session, cookie = await _session(request)
    graph = _graph(request, session)
    api_url = request.app.state.settings.github_api_url
    try:
        asked = page_number(request.query_params.get("alerts_page"))
    except HTTPException as exc:
        return await render(
            request, "error.html", session, cookie, status_code=exc.status_code,
            title="No such page of alerts", message=str(exc.detail),
            back=f"/ui/incidents/{urllib.parse.quote(incident_id, safe='')}",
        )  # fmt: skip

    def read() -> dict[str, Any] | None:
        counts = alert_counts(graph, incident_id)
        pages = max(1, -(-counts["total"] // PAGE_ALERTS))
        shown = min(asked, pages)
        detail = incident_detail(
            graph, incident_id, PAGE_ALERTS, (shown - 1) * PAGE_ALERTS, firing_first=True,
            counts=counts, joins=True,
        )  # fmt: skip
        if detail is None:
            return None
        paged = graph.one("web_paged", {"incident_ids": [incident_id]})
        who = incident_views.loads(paged["result"]) if paged else None
        who = who if isinstance(who, dict) else None
        first = incident_views.loads(paged["first"]) if paged and paged["first"] else None
        first = first if isinstance(first, dict) and first != who else None
        people = graph.one("web_incident_people", {"incident_id": incident_id}) or {}
        drawn = incident_views.incident_graph(graph, detail, counts["components"])
        nobody = bool(detail["nobody_paged"])
        return {
            # the Approve button names them as the world does, not by their sign-in email
            "web_person": None if session.via == "open" else acting_name(graph, session),
            "incident": detail, "paged": timeline.paged_words(who, nobody),
            "first_paged": timeline.paged_words(first, nobody), "people": people,
            "services": list(counts["components"]), "first_alert": counts["first"],
            "alerts_page": shown, "alerts_pages": pages,
            "events": timeline.events(graph, incident_id, who, api_url, first, nobody),
            "steps": incident_views.steps(graph, incident_id, STEP_CHARS),
            "decisions": incident_views.decisions(graph, incident_id),
            "graph": drawn, "graph_svg": drawing.svg(drawn),
            "remediations": overview.remediations(
                graph, incident_id, remediation_credentials(request.app.state.settings),
                request.app.state.settings.actions_enabled,
            ),
            "cause": overview.cause({
                "heartbeat": (detail["heartbeat"] or {}).get("alertname"),
                "verdict": _last_verdict(detail), "root_cause": detail["root_cause"],
                "investigated": detail["finding"] is not None,
                "confidence": (detail["finding"] or {}).get("confidence"),
                "candidates": (detail["finding"] or {}).get("candidates"),
                "status": detail["status"],
            }),
        }  # fmt: skip

    found = await run_in_threadpool(read)
    if found is None:
        return await render(
            request, "error.html", session, cookie, status_code=404,
            title="No such incident", message=f"There is no incident {incident_id!r} here.",
        )  # fmt: skip
    return await render(
        request, "incident.html", session, cookie, intent=uuid.uuid4().hex,
        page_alerts=PAGE_ALERTS, links=links(request, found["incident"]),
        actions_enabled=request.app.state.settings.actions_enabled,
        run_failed_next=notices.RUN_FAILED_NEXT,
        remediation_notice=request.query_params.get("remediation", "")[:500], **found,
    )  # fmt: skip


def _last_verdict(detail: dict[str, Any]) -> list[Any] | None:
    said = [v for v in detail["verdicts"] if v["verdict"] in ("confirmed", "rejected")]
    return [said[-1]["verdict"], said[-1]["actual_cause"]] if said else None


async def _act(request: Request, incident_id: str, what: str) -> Response:
    """Run one of the incident's actions for the signed-in person; every refusal is a page
    with the reason and a way back, since a person in a browser sent it."""
    session, _ = await _session(request)
    back = f"/ui/incidents/{urllib.parse.quote(incident_id, safe='')}"
    try:
        form = await _form(request)
        check_csrf(session, form.get("csrf"))
        graph = _graph(request, session)
        if what == "verdict":
            await _record_verdict(graph, session, incident_id, form)
        else:
            await run_in_threadpool(_change_state, graph, session, incident_id, what, form)
    except HTTPException as exc:
        return await render(
            request, "error.html", session, None, status_code=exc.status_code,
            title=f"{what.capitalize()} not recorded", message=str(exc.detail), back=back,
        )  # fmt: skip
    return RedirectResponse(f"{back}#timeline", status_code=303)


def _change_state(
    graph: TenantGraph, session: Session, incident_id: str, what: str, form: dict[str, str]
) -> None:
    """Acknowledge, resolve or snooze as `session.person`, exactly as the page's Slack buttons do
    (`agents.respond.lifecycle`: the incident's `acknowledged_at/_by` or `status,
    resolved_at/_by`, and the page edited to say so), by the person's name as the world names
    them (`acting_name`: matched by email; else the sign-in identity; in open mode "local
    (unauthenticated)"). Resolving also
    records a `resolved` verdict, as Slack's Resolved button does (the learner hears of it).
    Raises HTTPException 404 (no such incident), 409 (not open), 422 (a malformed intent id)."""
    intent = _intent(form) if what in ("resolve", "snooze") else ""
    name = acting_name(graph, session)
    try:
        if what == "acknowledge":
            lifecycle.acknowledge(graph, incident_id, name)
        elif what == "snooze":  # as the page's Snooze 1 h button: a window over its components
            if maintenance.snooze(graph, incident_id, name, f"web:{intent}") is None:
                raise LookupError(incident_id)
        else:
            row = lifecycle.resolve(graph, incident_id, name)
            if not row["fresh"]:
                raise HTTPException(409, f"incident {incident_id!r} is resolved already")
    except LookupError as exc:
        raise HTTPException(404, f"no incident {incident_id!r}") from exc
    except lifecycle.NotOpen as exc:
        raise HTTPException(409, str(exc)) from exc
    if what == "resolve":
        verdicts.record(graph, verdicts.Verdict(
            id=f"web:{intent}", incident_id=incident_id, verdict="resolved", actual_cause=None,
            by=session.person, by_name=name, at=_now_ms(), text="",
            source="web", event_id=intent,
        ))  # fmt: skip


def acting_name(graph: TenantGraph, session: Session) -> str:
    """The name what `session`'s person does in the web UI is recorded under: the person's
    name as the world names them (`lifecycle.web_name`), or, in open mode, where nobody signs
    in and so nobody is told apart, `OPEN_MODE_NAME` ("local (unauthenticated)")."""
    if session.via == "open":
        return OPEN_MODE_NAME
    return lifecycle.web_name(graph, session.person)


def _intent(form: dict[str, str]) -> str:
    intent = form.get("intent", "").strip()
    if not intent.isalnum() or len(intent) > 64:
        raise HTTPException(422, "the form's intent id is missing or malformed: reload the page")
    return intent


@router.post("/ui/incidents/{incident_id}/acknowledge")
async def acknowledge(request: Request, incident_id: str) -> Response:
    """Acknowledge as the signed-in person (form: `csrf`). 303 to the timeline; 403 bad CSRF;
    404 no such incident; 409 not open. The first acknowledgement stands."""
    return await _act(request, incident_id, "acknowledge")


@router.post("/ui/incidents/{incident_id}/snooze")
async def snooze(request: Request, incident_id: str) -> Response:
    """Snooze for an hour as the signed-in person (form: `csrf`, `intent`): a quiet window
    over the incident's components, as Slack's Snooze 1 h does. 303 to the timeline; 403 bad
    CSRF; 404 no such incident; 422 malformed intent."""
    return await _act(request, incident_id, "snooze")


@router.post("/ui/incidents/{incident_id}/resolve")
async def resolve(request: Request, incident_id: str) -> Response:
    """Resolve as the signed-in person (form: `csrf`, `intent`). 303 to the timeline; 403 bad
    CSRF; 404 no such incident; 409 not open; 422 malformed intent."""
    return await _act(request, incident_id, "resolve")


@router.post("/ui/incidents/{incident_id}/verdict")
async def give_verdict(request: Request, incident_id: str) -> Response:
    """Record a verdict as the signed-in person, exactly as a Slack button does
    (`agents/learn/verdicts.py`: a Verdict with its `learn` and `notify_verdict` tasks). Form:
    `csrf`, `verdict` (confirmed | rejected), `intent` (idempotency key: a double submit
    records once), optional `actual_cause` (a known component) and `text` (what it was, in
    words: a cause outside the graph; the verdict's `text`, as the API's). 303 to the
    timeline; 403 bad CSRF; 404 no such incident; 422 bad verdict, unknown component (with
    "did you mean …?" for a misspelling, `verdicts.unknown_cause`), a cause that contradicts
    the verdict (`verdicts.contradiction`, as the API answers: also both boxes empty
    rejecting an inconclusive finding)."""
    return await _act(request, incident_id, "verdict")


async def _record_verdict(
    graph: TenantGraph, session: Session, incident_id: str, form: dict[str, str]
) -> None:
    """`give_verdict`'s work: the Verdict's `by` is the sign-in identity, its `by_name` the
    person's name (`acting_name`), as a Slack click records a user id and a name.
    Raises HTTPException with the reason."""
    said = form.get("verdict", "")
    if said not in ("confirmed", "rejected"):
        raise HTTPException(422, "verdict must be confirmed or rejected (Resolve resolves)")
    intent = _intent(form)
    cause_given = form.get("actual_cause", "").strip() or None
    if cause_given is not None and len(cause_given) > MAX_NAME_CHARS:
        # as the API refuses it (`VerdictIn.actual_cause`); a component's name is short
        raise HTTPException(
            422,
            f"the actual cause is a component's name, at most {MAX_NAME_CHARS} characters "
            f"({len(cause_given)} given): say more in {WORDS_BOX}",
        )
    # the person's words (a cause outside the graph, said in the form's box), capped as the
    # API caps `text`; none when they wrote none (a button's label is no one's words)
    words = " ".join(form.get("text", "").split())[:MAX_TEXT_CHARS]
    for what, value in (("the actual cause", cause_given), (WORDS_BOX, words)):
        if (why := verdicts.unprintable(value, what)) is not None:
            raise HTTPException(422, why)

    def store() -> bool:
        found = graph.one("incident_get", {"incident_id": incident_id})
        if found is None:
            return False
        if cause_given is not None and not graph.rows(
            "match_components", {"candidates": [cause_given]}
        ):
            why = verdicts.unknown_cause(graph, cause_given, "actual cause", WORDS_BOX)
            raise HTTPException(422, why)
        wrong = verdicts.contradiction(said, found["root_cause"], cause_given, words, WORDS_BOX)
        if wrong is not None:
            raise HTTPException(422, wrong)
        cause = cause_given or (found["root_cause"] if said == "confirmed" else None)
        if said == "confirmed" and cause is None:
            raise HTTPException(
                422, "this finding names no single cause: type the actual cause, then Confirm"
            )
        try:
            verdicts.record(graph, verdicts.Verdict(
                id=f"web:{intent}", incident_id=incident_id, verdict=said,  # type: ignore[arg-type]
                actual_cause=cause, by=session.person,
                by_name=acting_name(graph, session), at=_now_ms(),
                text=words, source="web", event_id=intent,
            ))  # fmt: skip
        except verdicts.IdTaken:  # the same form posted for another incident or verdict
            raise HTTPException(422, "this form was already used: reload the page") from None
        return True

    if not await run_in_threadpool(store):
        raise HTTPException(404, f"no incident {incident_id!r}")


@router.get("/ui/maintenance", response_class=HTMLResponse)
async def maintenance_page(request: Request, all: bool = False) -> Response:
    """Quiet windows not over yet (`?all=true`: past ones too) with what each held, a form to
    open one of any length up to a week, and an End now button on each."""
    session, cookie = await _session(request)
    data = await run_in_threadpool(overview.maintenance, _graph(request, session), all)
    return await render(request, "maintenance.html", session, cookie, everything=all, **data)


@router.post("/ui/maintenance")
async def open_maintenance(request: Request) -> Response:
    """Open a window as the signed-in person (form: `csrf` and `maintenance_form.py`'s
    fields), checked as `POST /api/v1/maintenance` checks one. 303 to the list; 403 bad CSRF;
    422 with the reasons (unknown names, a bad length or end time)."""
    return await _quiet(request, None)


@router.post("/ui/maintenance/{window_id}/end")
async def end_maintenance(request: Request, window_id: str) -> Response:
    """End a window now as the signed-in person (form: `csrf`); incidents it held page now
    unless another window covers them. 303 to the list; 403 bad CSRF; 404 no such window;
    409 a window already over (a page older than its end), left as it was."""
    return await _quiet(request, window_id)


async def _quiet(request: Request, window_id: str | None) -> Response:
    """Open a window (`window_id` None) or end one; a refusal is a page with the reason."""
    session, _ = await _session(request)
    try:
        form = await _form(request)
        check_csrf(session, form.get("csrf"))
        graph = _graph(request, session)
        name = await run_in_threadpool(acting_name, graph, session)
        if window_id is None:
            await maintenance_api.open_checked(graph, maintenance_form.window(form, name))
        else:
            await maintenance_api.end_now(request.app.state.store, graph, window_id, name)
    except HTTPException as exc:
        return await render(
            request, "error.html", session, None, status_code=exc.status_code,
            title="Window not opened" if window_id is None else "Window not ended",
            message=str(exc.detail), back="/ui/maintenance", back_label="Back to maintenance",
        )  # fmt: skip
    return RedirectResponse("/ui/maintenance", status_code=303)


@router.get("/ui/memory", response_class=HTMLResponse)
async def memory_page(request: Request) -> Response:
    """Playbooks with where they are pinned, checks and trust history; retired ones;
    preferences with their versions."""
    session, cookie = await _session(request)
    data = await run_in_threadpool(overview.memory, _graph(request, session))
    return await render(request, "memory.html", session, cookie, **data)


@router.get("/ui/world", response_class=HTMLResponse)
async def world_page(request: Request) -> Response:
    """Topology, owners, on call now and next, coverage gaps."""
    session, cookie = await _session(request)
    data = await run_in_threadpool(overview.world, _graph(request, session), _now_ms())
    drawn = {
        "nodes": [{"id": c["name"], "note": None if c["owners"] else "⚠ no owner"}
                  for c in data["components"]],
        "edges": [{"source": c["name"], "target": e[0], "type": e[1]}
                  for c in data["components"] for e in c["edges"] if e[2] == "business"],
    }  # fmt: skip
    picture = await run_in_threadpool(
        drawing.svg, drawn, "Topology: business dependencies, callers above callees"
    )
    return await render(request, "world.html", session, cookie, topology=picture, **data)


@router.get("/ui/health", response_class=HTMLResponse)
async def health_page(request: Request) -> Response:
    """FalkorDB, workers holding a lease (task, lease left) and queue depth."""
    session, cookie = await _session(request)
    state = request.app.state
    data = await run_in_threadpool(
        overview.health, state.store, _graph(request, session), state.schema_ready
    )
    return await render(
        request, "health.html", session, cookie, configured_workers=state.settings.workers, **data
    )


@router.get("/ui/login", response_class=HTMLResponse)
async def login_page(request: Request, next: str | None = None) -> Response:
    """The sign-in form (open mode, or a person the proxy names: straight to the page)."""
    sessions: Sessions = request.app.state.sessions
    if sessions.open_mode or sessions.proxy_identity(request) is not None:
        return RedirectResponse(_safe_next(next), status_code=303)
    return await render(
        request, "login.html", None, None, next=_safe_next(next), error=None,
        token_sign_in=sessions.token_sign_in,
    )  # fmt: skip


@router.post("/ui/login")
async def login(request: Request) -> Response:
    """Check the posted viewer token; on success open a session for its person and go to
    `next`. 401 with the form again for a wrong token; 403 for a cross-site post."""
    check_same_origin(request)
    sessions: Sessions = request.app.state.sessions
    form = await _form(request)
    target = _safe_next(form.get("next"))
    found = sessions.person_for_token(form.get("token", ""))
    if found is None:
        return await render(
            request, "login.html", None, None, status_code=401, next=target,
            error="That token signs nobody in. Use your own viewer token.",
            token_sign_in=sessions.token_sign_in,
        )  # fmt: skip
    value, _ = await run_in_threadpool(sessions.open, found[0], found[1], "token")
    response = RedirectResponse(target, status_code=303)
    sessions.set_cookie(request, response, value)
    return response


#: Where a person signed in by oauth2-proxy goes after signing out here: the proxy's own
#: sign-out (its default path), else the proxy would sign them straight in again.
PROXY_SIGN_OUT = "/oauth2/sign_out"


@router.post("/ui/logout")
async def logout(request: Request) -> Response:
    """Sign out (CSRF-checked): the session is deleted from the graph, so its cookie opens
    nothing any more, anywhere; then the sign-in form (or the proxy's sign-out)."""
    session, _ = await _session(request)
    form = await _form(request)
    check_csrf(session, form.get("csrf"))
    sessions: Sessions = request.app.state.sessions
    await run_in_threadpool(sessions.close, session)
    target = PROXY_SIGN_OUT if session.via == "proxy" else "/ui/login"
    response = RedirectResponse(target, status_code=303)
    Sessions.clear_cookie(request, response)
    return response


@router.get("/ui/events")
async def events(request: Request) -> Response:
    """Server-Sent Events of the viewer's tenant graph (see `live.py`)."""
    session, _ = await _session(request)
    feed: LiveFeed = request.app.state.live
    return StreamingResponse(
        feed.stream(session.tenant, request.is_disconnected),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


async def not_a_viewer(request: Request, exc: NotAViewer) -> Response:
    """A person the proxy signed in whom no tenant lets in: 403 with who they are."""
    return templates.TemplateResponse(
        request, "error.html",
        {"session": None, "open_mode": False, "now_ms": _now_ms(), "title": "Not a viewer here",
         "message": f"{exc.person} is signed in, but BLAST_PROXY_VIEWERS lets them into no "
                    "organisation on this gateway. Ask its operator to add them."},
        status_code=403, headers=PAGE_HEADERS,
    )  # fmt: skip


async def sign_in_required(request: Request, exc: SignInRequired) -> Response:
    """No session: a browser goes to the sign-in form (htmx is told to go there); a script
    asking for events gets 401."""
    target = "/ui/login?next=" + urllib.parse.quote(request.url.path, safe="/")
    if request.headers.get("hx-request"):
        return Response(status_code=401, headers={"HX-Redirect": target})
    if request.url.path == "/ui/events":
        return Response("sign in first", status_code=401, media_type="text/plain")
    return RedirectResponse(target, status_code=303)


async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
    """An HTTP error: a page under `/ui/` no route has (404) or that takes no such method
    (405) is an HTML page saying so, as an unknown incident's is (signed in or not: it shows
    nothing of a tenant); anything else, and the live feed's, as the API answers
    (`limits.http_failed`)."""
    path = request.url.path
    if exc.status_code not in (404, 405) or not path.startswith("/ui/") or path == "/ui/events":
        return await http_failed(request, exc)
    sessions: Sessions = request.app.state.sessions
    session = await run_in_threadpool(sessions.read, request.cookies.get(COOKIE))
    missing = exc.status_code == 404
    response = await render(
        request, "error.html", session, None, status_code=exc.status_code,
        title="No such page" if missing else "Not allowed here",
        message=f"There is no page {path[:200]!r} here." if missing
        else f"{path[:200]!r} takes no {request.method[:10]} request.",
    )  # fmt: skip
    for name, value in (exc.headers or {}).items():  # 405's Allow
        response.headers[name] = value
    return response


def mount(app: FastAPI) -> None:
    """Add the pages, the sign-in, the live feed and the static files to `app` (whose state
    holds `settings` and `store`)."""
    app.state.sessions = Sessions(app.state.settings, app.state.store)
    app.state.live = LiveFeed(app.state.store, app.state.settings.live_poll_ms)
    app.add_exception_handler(SignInRequired, sign_in_required)  # type: ignore[arg-type]
    app.add_exception_handler(NotAViewer, not_a_viewer)  # type: ignore[arg-type]
    # outermost: notes the socket's peer before X-Forwarded-For replaces it (proxies.py)
    app.add_middleware(ForwardedFrom, trusted=forwarding_hosts(app.state.settings))
    app.include_router(router)
    app.mount("/ui/static", StaticFiles(directory=HERE / "static"), name="static")
