"""Mission control, served by the gateway: server-rendered pages (Jinja2) that work without
JavaScript, plus vendored htmx (+ its SSE extension) for live updates and cytoscape.js for the
graph drawings (`static/vendor/README.md`: versions, sources, licences).

Routes: `/` incidents (open first; filters `status`, `severity`, `q`), `/ui/incidents/{id}`,
`/ui/memory`, `/ui/world`, `/ui/health`, `/ui/login` (GET form, POST token), `/ui/logout`
(POST), `/ui/incidents/{id}/verdict` (POST: the Slack buttons' Confirm / Wrong cause /
Resolved), `/ui/events` (Server-Sent Events, `live.py`), `/ui/static/…`. Everything a person
sees comes from their session's tenant graph only (`session.py` for sign-in and CSRF).

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

from adapters.falkordb import TenantGraph, graph_name
from agents.learn import verdicts
from gateway.http import incident_views
from gateway.http.limits import read_limited
from gateway.http.payloads import http_link
from gateway.http.status import incident_detail
from gateway.web import overview
from gateway.web.live import LiveFeed
from gateway.web.session import COOKIE, Session, Sessions, check_csrf, check_same_origin

HERE = Path(__file__).resolve().parent
#: Largest form body accepted (sign-in, verdict, logout): a token, a few fields.
FORM_LIMIT = 8 * 1024
#: Verdict buttons: form value -> what is recorded (the same three as the Slack buttons).
VERDICTS = {"confirmed": "Confirm cause", "rejected": "Wrong cause", "resolved": "Resolved"}

#: Every page: scripts and everything else from this origin only (the vendored files), no
#: framing (the verdict buttons cannot be clickjacked), forms post back here only. Inline
#: styles are allowed for cytoscape's canvas sizing and htmx's indicator style.
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
#: The incident page shows at most this many alerts (the API has every one), and label and
#: annotation text up to `CLIP_CHARS` characters each: a 5 MiB annotation or 1,000 alerts
#: would otherwise make a page of megabytes.
PAGE_ALERTS = 200
CLIP_CHARS = 1_000


def clip(value: object) -> str:
    """`value` as text, cut to `CLIP_CHARS` characters with a note of how much was left out."""
    text = value if isinstance(value, str) else str(value)
    if len(text) <= CLIP_CHARS:
        return text
    return f"{text[:CLIP_CHARS]}… ({len(text) - CLIP_CHARS:,} more characters; the API has all)"


templates.env.filters["clip"] = clip


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


templates.env.globals.update(when=when, age=age, pretty=overview.pretty, VERDICTS=VERDICTS)


def _session(request: Request) -> tuple[Session, str | None]:
    """The viewer's session and, in open mode on a first visit, a new cookie value to set.

    Raises `SignInRequired` without a valid session outside open mode.
    """
    sessions: Sessions = request.app.state.sessions
    found = sessions.read(request.cookies.get(COOKIE))
    if found is not None:
        return found, None
    if sessions.open_mode:
        value, found = sessions.issue(request.app.state.settings.default_tenant)
        return found, value
    raise SignInRequired


def _graph(request: Request, session: Session) -> TenantGraph:
    found: TenantGraph = request.app.state.store.graph(graph_name(session.tenant))
    return found


def render(
    request: Request,
    name: str,
    session: Session | None,
    new_cookie: str | None,
    status_code: int = 200,
    **context: Any,
) -> Response:
    """A page from `templates/`, with the session (tenant, CSRF) and `now_ms` in context."""
    sessions: Sessions = request.app.state.sessions
    response = templates.TemplateResponse(
        request, name,
        {"session": session, "open_mode": sessions.open_mode, "now_ms": _now_ms(), **context},
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
    status: str | None = None,
    severity: str | None = None,
    q: str | None = None,
) -> Response:
    """Mission control: incidents (open first) with severity, title, root cause, age, who was
    paged; filters `status` (open | resolved; anything else = all), `severity`, `q` (text)."""
    session, cookie = _session(request)
    graph = _graph(request, session)
    chosen = status if status in ("open", "resolved") else None
    rows = await run_in_threadpool(overview.incident_rows, graph, chosen, severity or None, q)
    return render(
        request, "incidents.html", session, cookie, incidents=rows,
        filters={"status": chosen or "", "severity": severity or "", "q": q or ""},
        severities=overview.SEVERITY_ORDER,
    )  # fmt: skip


@router.get("/ui/incidents/{incident_id}", response_class=HTMLResponse)
async def incident_page(request: Request, incident_id: str) -> Response:
    """One incident: alerts and why each joined, the graph with the path to the root cause,
    ruled-out candidates, the steps timeline with raw results, decisions, actions, verdicts and
    the verdict buttons. A 404 page when it is not in the viewer's tenant."""
    session, cookie = _session(request)
    graph = _graph(request, session)

    def read() -> dict[str, Any] | None:
        detail = incident_detail(graph, incident_id)
        if detail is None:
            return None
        joins = {r["key"]: r for r in graph.rows("web_alert_joins", {"incident_id": incident_id})}
        paged = graph.one("web_paged", {"incident_ids": [incident_id]})
        who = incident_views.loads(paged["result"]) if paged else None
        return {
            "incident": detail,
            "paged": who if isinstance(who, dict) else None,
            "joins": joins,
            "steps": incident_views.steps(graph, incident_id),
            "decisions": incident_views.decisions(graph, incident_id),
            "graph": incident_views.incident_graph(graph, detail),
        }

    found = await run_in_threadpool(read)
    if found is None:
        return render(
            request, "error.html", session, cookie, status_code=404,
            title="No such incident", message=f"There is no incident {incident_id!r} here.",
        )  # fmt: skip
    return render(
        request, "incident.html", session, cookie, intent=uuid.uuid4().hex,
        page_alerts=PAGE_ALERTS, **found,
    )  # fmt: skip


@router.post("/ui/incidents/{incident_id}/verdict")
async def give_verdict(request: Request, incident_id: str) -> Response:
    """Record a verdict from the page, exactly as a Slack button does (`agents/learn/verdicts.py`:
    a Verdict with its `learn` and `notify_verdict` tasks). Form: `csrf`, `verdict` (confirmed
    | rejected | resolved), `intent` (idempotency key: a double submit records once),
    optional `actual_cause` (a known component) and `name` (who gives it). 303 back to the
    incident; 403 bad CSRF; 404 no such incident; 422 bad verdict or unknown component: each
    refusal a page with the reason and a way back, since a person in a browser sent it."""
    session, _ = _session(request)
    try:
        return await _record_verdict(request, session, incident_id)
    except HTTPException as exc:
        back = f"/ui/incidents/{urllib.parse.quote(incident_id, safe='')}"
        return render(
            request, "error.html", session, None, status_code=exc.status_code,
            title="Verdict not recorded", message=str(exc.detail), back=back,
        )  # fmt: skip


async def _record_verdict(request: Request, session: Session, incident_id: str) -> Response:
    """`give_verdict` without the error page; raises HTTPException with the reason."""
    form = await _form(request)
    check_csrf(session, form.get("csrf"))
    said = form.get("verdict", "")
    if said not in VERDICTS:
        raise HTTPException(422, f"verdict must be one of {', '.join(VERDICTS)}")
    intent = form.get("intent", "").strip()
    if not intent.isalnum() or len(intent) > 64:
        raise HTTPException(422, "the form's intent id is missing or malformed: reload the page")
    graph = _graph(request, session)
    cause_given = form.get("actual_cause", "").strip() or None
    name = form.get("name", "").strip()[:200] or None

    def store() -> bool:
        found = graph.one("incident_get", {"incident_id": incident_id})
        if found is None:
            return False
        if cause_given is not None and not graph.rows(
            "match_components", {"candidates": [cause_given]}
        ):
            raise HTTPException(422, f"actual cause {cause_given!r} is not a known component")
        cause = cause_given or (found["root_cause"] if said == "confirmed" else None)
        try:
            verdicts.record(graph, verdicts.Verdict(
                id=f"web:{intent}", incident_id=incident_id, verdict=said,  # type: ignore[arg-type]
                actual_cause=cause, by=f"web:{session.nonce[:8]}", by_name=name, at=_now_ms(),
                text=VERDICTS[said], source="web", event_id=intent,
            ))  # fmt: skip
        except verdicts.IdTaken:  # the same form posted for another incident or verdict
            raise HTTPException(422, "this form was already used: reload the page") from None
        return True

    if not await run_in_threadpool(store):
        raise HTTPException(404, f"no incident {incident_id!r}")
    target = f"/ui/incidents/{urllib.parse.quote(incident_id, safe='')}#verdicts"
    return RedirectResponse(target, status_code=303)


@router.get("/ui/memory", response_class=HTMLResponse)
async def memory_page(request: Request) -> Response:
    """Playbooks with where they are pinned, checks and trust history; retired ones;
    preferences with their versions."""
    session, cookie = _session(request)
    data = await run_in_threadpool(overview.memory, _graph(request, session))
    return render(request, "memory.html", session, cookie, **data)


@router.get("/ui/world", response_class=HTMLResponse)
async def world_page(request: Request) -> Response:
    """Topology, owners, on call now and next, coverage gaps."""
    session, cookie = _session(request)
    data = await run_in_threadpool(overview.world, _graph(request, session), _now_ms())
    return render(request, "world.html", session, cookie, **data)


@router.get("/ui/health", response_class=HTMLResponse)
async def health_page(request: Request) -> Response:
    """FalkorDB, workers holding a lease (task, lease left) and queue depth."""
    session, cookie = _session(request)
    state = request.app.state
    data = await run_in_threadpool(
        overview.health, state.store, _graph(request, session), state.schema_ready
    )
    return render(
        request, "health.html", session, cookie, configured_workers=state.settings.workers, **data
    )


@router.get("/ui/login", response_class=HTMLResponse)
async def login_page(request: Request, next: str | None = None) -> Response:
    """The sign-in form (in open mode: straight to the page, no sign-in needed)."""
    sessions: Sessions = request.app.state.sessions
    if sessions.open_mode:
        return RedirectResponse(_safe_next(next), status_code=303)
    return render(request, "login.html", None, None, next=_safe_next(next), error=None)


@router.post("/ui/login")
async def login(request: Request) -> Response:
    """Check the posted viewer token; on success set the session cookie and go to `next`.
    401 with the form again for a wrong token; 403 for a cross-site post."""
    check_same_origin(request)
    sessions: Sessions = request.app.state.sessions
    form = await _form(request)
    target = _safe_next(form.get("next"))
    tenant = sessions.tenant_for_token(form.get("token", ""))
    if tenant is None:
        return render(
            request, "login.html", None, None, status_code=401, next=target,
            error="That token signs nobody in. Use your team's viewer token.",
        )  # fmt: skip
    value, _ = sessions.issue(tenant)
    response = RedirectResponse(target, status_code=303)
    sessions.set_cookie(request, response, value)
    return response


@router.post("/ui/logout")
async def logout(request: Request) -> Response:
    """Clear the session cookie (CSRF-checked) and go to the sign-in form."""
    session, _ = _session(request)
    form = await _form(request)
    check_csrf(session, form.get("csrf"))
    response = RedirectResponse("/ui/login", status_code=303)
    Sessions.clear_cookie(request, response)
    return response


@router.get("/ui/events")
async def events(request: Request) -> Response:
    """Server-Sent Events of the viewer's tenant graph (see `live.py`)."""
    session, _ = _session(request)
    feed: LiveFeed = request.app.state.live
    return StreamingResponse(
        feed.stream(session.tenant, request.is_disconnected),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


async def sign_in_required(request: Request, exc: SignInRequired) -> Response:
    """No session: a browser goes to the sign-in form (htmx is told to go there); a script
    asking for events gets 401."""
    target = "/ui/login?next=" + urllib.parse.quote(request.url.path, safe="/")
    if request.headers.get("hx-request"):
        return Response(status_code=401, headers={"HX-Redirect": target})
    if request.url.path == "/ui/events":
        return Response("sign in first", status_code=401, media_type="text/plain")
    return RedirectResponse(target, status_code=303)


def mount(app: FastAPI) -> None:
    """Add the pages, the sign-in, the live feed and the static files to `app` (whose state
    holds `settings` and `store`)."""
    app.state.sessions = Sessions(app.state.settings)
    app.state.live = LiveFeed(app.state.store, app.state.settings.live_poll_ms)
    app.add_exception_handler(SignInRequired, sign_in_required)  # type: ignore[arg-type]
    app.include_router(router)
    app.mount("/ui/static", StaticFiles(directory=HERE / "static"), name="static")
