"""Remediations over HTTP: what an incident may run, and the web's Approve / Reject.

- `GET /api/v1/incidents/{id}/remediations`: `{incident_id, actions_enabled, remediations:
  [{remediation, attempts, approval, rejection, verification, cannot_run}]}` (API credentials,
  or a signed-in web session's cookie, as the other incident routes). `cannot_run`: for one
  still proposed, why it cannot be approved with this server's settings (actions off, or
  the credential its type needs is not set: `run.cannot_run`), else null.
- `POST /api/v1/incidents/{id}/remediations/{rid}/approve` and `…/reject`: decide as the
  web's signed-in person: the session's person (their own viewer token, or the authenticating
  proxy's email), never the body; a bearer token names a tenant, not a person, and open mode
  names nobody, so neither can approve. CSRF: the session's
  token as form field `csrf` or header `X-CSRF-Token`. Answer: the decision as JSON
  (`{id, status, fresh, by, at, source}`), or, for the page's form, 303 back to the incident
  with what happened; a refusal of the page's form is an HTML page with the status below and
  the reason, as every refusal of the web's forms is.

Status codes: 401 no web session; 403 bad CSRF token, an open-mode session, or a person who is
neither a member nor an approver of the owning team (the detail says which teams may); 404 no
such incident or remediation; 409 actions are off (`BLAST_ACTIONS_ENABLED=false`), a setting the
remediation needs is not set (an approval only: `BLAST_RUNBOOK_WEBHOOK_SECRET` for a webhook,
`GITHUB_TOKEN` for the GitHub types), the incident is no longer open, or it was decided the
other way."""

from __future__ import annotations

import logging
import threading
import urllib.parse
from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Request, Response
from fastapi.responses import JSONResponse, RedirectResponse
from slack_sdk.webhook import WebhookClient
from starlette.concurrency import run_in_threadpool

from adapters.falkordb import TenantGraph, graph_name, key_problem
from adapters.notify import AdapterError
from adapters.slack.payloads import Action, Interaction
from agents.act.approval import Approver, Refused, decide
from agents.act.notices import APPROVE
from agents.act.run import cannot_run
from agents.respond import lifecycle
from gateway.http.incident_views import api_tenant
from gateway.http.limits import ParsedOnceRoute, read_limited
from gateway.ops.runtime import remediation_credentials
from gateway.settings import Settings
from gateway.web.pages import render
from gateway.web.session import COOKIE, Session, Sessions, check_csrf

router = APIRouter(route_class=ParsedOnceRoute)
log = logging.getLogger(__name__)


#: The largest form the page posts (a CSRF token).
FORM_LIMIT = 4 * 1024


@router.get("/api/v1/incidents/{incident_id}/remediations")
async def list_remediations(request: Request, incident_id: str) -> dict[str, Any]:
    """The incident's remediations, newest first (see the module docstring); 404 when the
    incident is not in the caller's tenant."""
    graph = request.app.state.store.graph(graph_name(api_tenant(request)))

    def read() -> list[dict[str, Any]] | None:
        if graph.one("incident_get", {"incident_id": incident_id}) is None:
            return None
        rows: list[dict[str, Any]] = graph.rows(
            "incident_remediations", {"incident_id": incident_id}
        )
        return rows

    rows = await run_in_threadpool(read)
    if rows is None:
        raise HTTPException(404, f"no incident {incident_id!r}")
    settings = request.app.state.settings
    creds = remediation_credentials(settings)
    for row in rows:  # a proposal nobody can approve here says so (`run.cannot_run`)
        row["cannot_run"] = cannot_run(row["remediation"], creds, settings.actions_enabled)
    return {"incident_id": incident_id, "remediations": rows,
            "actions_enabled": settings.actions_enabled}  # fmt: skip


async def _decide(
    request: Request, incident_id: str, remediation_id: str, verb: Literal["approve", "reject"]
) -> Response:
    sessions: Sessions = request.app.state.sessions
    session = await run_in_threadpool(sessions.read, request.cookies.get(COOKIE))
    if session is None:
        raise HTTPException(401, "sign in on the web UI first (/ui/login)")
    form_post = request.headers.get("content-type", "").startswith(
        "application/x-www-form-urlencoded"
    )
    back = f"/ui/incidents/{urllib.parse.quote(incident_id, safe='')}"
    try:
        done = await _decided(request, session, form_post, incident_id, remediation_id, verb)
    except HTTPException as exc:
        if not form_post:
            raise
        # a person in a browser sent it: a page with the status and the reason, and a way
        # back, as every refusal of the web's forms is (`gateway.web.pages._act`)
        return await render(
            request, "error.html", session, None, status_code=exc.status_code,
            title=f"Remediation not {'approved' if verb == 'approve' else 'rejected'}",
            message=str(exc.detail), back=back,
        )  # fmt: skip
    if done["fresh"]:  # its edit_proposal (and remediate) task: wake an idle worker
        request.app.state.store.wake()
    if form_post:
        said = urllib.parse.urlencode({"remediation": decided_words(verb, done)})
        return RedirectResponse(f"{back}?{said}#remediations", status_code=303)
    return JSONResponse(done)


def decided_words(verb: Literal["approve", "reject"], done: dict[str, Any]) -> str:
    """What the page says after a decision: "Approved by Cy." when this click made it; a
    repeat (a double click, `fresh` false) says it was made already and where the remediation
    is now: "Already approved by Cy; it is running." """
    made = "approved" if verb == "approve" else "rejected"
    if done["fresh"]:
        return f"{made.capitalize()} by {done['by']}."
    now = "" if done["status"] == made else f"; it is {done['status']}"
    return f"Already {made} by {done['by']}{now}."


async def _decided(
    request: Request, session: Session, form_post: bool, incident_id: str, remediation_id: str,
    verb: Literal["approve", "reject"],
) -> dict[str, Any]:  # fmt: skip
    """`_decide`'s work as `session`'s person: the decision (`agents.act.approval.decide`).
    Raises HTTPException: 403 bad CSRF token, an open-mode session or a person who may not
    decide it; 404, 409 as `decide` refuses (`Refused`), with the reason."""
    settings: Settings = request.app.state.settings
    token = request.headers.get("x-csrf-token")
    if form_post:
        fields = urllib.parse.parse_qs((await read_limited(request, FORM_LIMIT)).decode(
            "utf-8", "replace"))  # fmt: skip
        token = (fields.get("csrf") or [token or ""])[0]
    check_csrf(session, token)
    if session.via == "open":
        raise HTTPException(
            403, "the web UI names no person in open mode: sign in with your own viewer token "
            "or through the authenticating proxy, or approve in Slack",
        )  # fmt: skip
    if key_problem(remediation_id) is not None:
        raise HTTPException(404, f"no remediation {remediation_id[:200]!r} on this incident")
    graph = request.app.state.store.graph(graph_name(session.tenant))

    def decided() -> dict[str, Any]:
        # a refusal names them as the world does ("Pay Person may not …"), not by their email
        name = lifecycle.web_name(graph, session.person)
        who = Approver(session.person, "web", None, name if name != session.person else None)
        return decide(graph, remediation_id, who, verb == "approve", settings.actions_enabled,
                      incident_id, remediation_credentials(settings))  # fmt: skip

    try:
        done: dict[str, Any] = await run_in_threadpool(decided)
    except Refused as exc:
        raise HTTPException(exc.status, exc.reason) from None
    return done


@router.post("/api/v1/incidents/{incident_id}/remediations/{remediation_id}/approve")
async def approve(request: Request, incident_id: str, remediation_id: str) -> Response:
    """Approve as the web's signed-in person (see the module docstring)."""
    return await _decide(request, incident_id, remediation_id, "approve")


@router.post("/api/v1/incidents/{incident_id}/remediations/{remediation_id}/reject")
async def reject(request: Request, incident_id: str, remediation_id: str) -> Response:
    """Reject as the web's signed-in person (see the module docstring)."""
    return await _decide(request, incident_id, remediation_id, "reject")


def _slack_decide(state: Any, user_id: str, action: Action) -> str:
    """Decide the remediation named by a Slack button as the Slack user `user_id` (from the
    verified request); returns what to tell them."""
    remediation_id = action.value or ""
    if key_problem(remediation_id) is not None:
        return "That button names no remediation."
    settings: Settings = state.settings
    creds = remediation_credentials(settings)
    for tenant in settings.tenants:
        graph = state.store.graph(graph_name(tenant))
        if graph.one("remediation_get", {"remediation_id": remediation_id}) is None:
            continue
        approve = action.action_id == APPROVE
        try:
            try:
                done = decide(graph, remediation_id, Approver(user_id, "slack"), approve,
                              settings.actions_enabled, creds=creds)  # fmt: skip
            except Refused as exc:
                if exc.status != 403:
                    raise
                # matched by the email Slack holds, else refused naming them as the world does
                email = slack_email(state, user_id)
                name = slack_person(graph, user_id, email)
                if email is None and name is None:
                    raise
                who = Approver(user_id, "slack", email, name)
                done = decide(graph, remediation_id, who, approve, settings.actions_enabled,
                              creds=creds)  # fmt: skip
        except Refused as exc:
            return f"Not done: {exc.reason}."
        if done["fresh"]:  # its edit_proposal (and remediate) task
            state.store.wake()
        return decided_words("approve" if approve else "reject", done)
    return "That remediation is gone."


def slack_person(graph: TenantGraph, user_id: str, email: str | None) -> str | None:
    """The name the world knows Slack user `user_id` by: the person with that Slack user id,
    else the one with `email` (the email Slack holds for them, `slack_email`); None when
    neither is known. Raises `GraphUnavailable`."""
    known = graph.one("person_by_slack_id", {"slack_user_id": user_id})
    if known is not None and known["name"]:
        return str(known["name"])
    by_email = graph.one("person_by_email", {"email": email}) if email else None
    return str(by_email["name"]) if by_email is not None and by_email["name"] else None


def slack_email(state: Any, user_id: str) -> str | None:
    """The email Slack holds for the clicking user, to match a person the world file knows by
    email only; None when Slack is off, has none, or cannot be asked (logged: the click is
    refused with the reason, never a 5xx). One Slack client per app, made on first use."""
    settings: Settings = state.settings
    if settings.slack_bot_token is None:
        return None
    directory = getattr(state, "slack_directory", None)
    if directory is None:
        from adapters.slack.notifier import SlackNotifier

        directory = SlackNotifier(settings.slack_bot_token, settings.slack_api_url)
        state.slack_directory = directory
    try:
        email: str | None = directory.user_email(user_id)
    except AdapterError as exc:
        log.warning("could not ask Slack for the approver's email: %s", exc)
        return None
    return email


def _slack_reply_url(url: str | None, settings: Settings) -> str | None:
    """`url` when it is Slack's (`https://hooks.slack.com/…`) or on `SLACK_API_URL`'s host
    (a test's stand-in), else None: the reply goes nowhere else."""
    if not url:
        return None
    parts, api = urllib.parse.urlsplit(url), urllib.parse.urlsplit(settings.slack_api_url)
    ok = (parts.scheme == "https" and parts.hostname == "hooks.slack.com") or (
        parts.scheme == api.scheme and parts.netloc == api.netloc
    )
    return url if ok else None


def _tell(url: str, text: str) -> None:
    """Answer the clicker only (an ephemeral message through `response_url`); logged, never
    raised: the decision is recorded either way."""
    try:
        WebhookClient(url, timeout=5).send(
            text=text, response_type="ephemeral", replace_original=False
        )
    except Exception as exc:
        log.warning("could not answer the Slack click: %s", type(exc).__name__)


def remediation_click(state: Any, payload: Interaction, action: Action) -> dict[str, Any]:
    """Approve / Reject clicked in Slack (the request's signature was verified): the approver
    is the clicking Slack user. The clicker is told the outcome, or why not, in an ephemeral
    reply sent from a thread, so Slack's answer is not held up. Returns what happened."""
    user = payload.user.id
    if not user:
        raise HTTPException(400, "block_actions payload lacks user.id")
    said = _slack_decide(state, user, action)
    url = _slack_reply_url(payload.response_url, state.settings)
    if url is not None:
        threading.Thread(target=_tell, args=(url, said), daemon=True).start()
    return {"remediation": action.value, "said": said}
