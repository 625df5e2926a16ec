"""Slack inbound: `POST /api/v1/slack/events` (Events API) and `POST /api/v1/slack/interactions`
(button clicks), the way engineers confirm or correct a page.

Every request is verified with slack-sdk's `SignatureVerifier` over the raw body (HMAC-SHA256
of `v0:<X-Slack-Request-Timestamp>:<body>` with `SLACK_SIGNING_SECRET`, 5-minute window,
constant-time compare; Slack's API reference). A missing, stale or wrong signature is 401 and
changes nothing; with no signing secret configured both routes are 404.

Slack wants an answer within 3 s, so a request only records: one short graph write stores the
Verdict with a `learn` task and a `notify_verdict` task (the responder edits the page later;
the Resolved button's resolve does that instead).
Slack retries events with the same `event_id`, and a click is identified by (user, action_id,
action_ts): the verdict id is made from these, so a repeat changes nothing.

- events: `url_verification` answers the challenge; `event_callback` with a `message` that
  replies in the thread of one of our pages (its `thread_ts` is the page's ts, found through
  the page Action's external ref `slack:<channel>:<ts>`) becomes a verdict when it states one
  (`agents/learn/verdicts.py`), and a stated preference ("for database saturation, don't ping me on
  Slack, open a ticket …", `agents/respond/preferences.py`) becomes a proposed Fact read back for
  approval. Ignored (200): other events, bots (`bot_id`), our own bot user,
  subtypes (edits, deletions, joins; `thread_broadcast` is a reply and counts), top-level
  messages, threads that are not ours.
- interactions: `application/x-www-form-urlencoded` with one field `payload` (JSON);
  `block_actions` from our buttons (ids in `adapters/slack/actions.py`, dispatched from one
  table, `HANDLERS`): a verdict on one of our pages (value = incident id), and Approve /
  Discard of a preference read back (value = the fact id; only its author's click counts), and
  Approve / Reject of a proposed remediation (value = its id; `gateway/http/remediations.py`:
  only a member or approver of the owning team counts, anyone else is told why in an
  ephemeral reply). Answer: an empty 200.

Bodies are parsed into the models of `adapters/slack/payloads.py`; a field of the wrong type or
size is a 400 with the reason. Ids made from Slack's values pass through `safe_key`.

Status codes: 400 body not JSON / not a form with a JSON payload / wrong or missing fields,
401 bad signature, 403 from another workspace or app than `SLACK_TEAM_ID` / `SLACK_APP_ID`,
404 Slack not configured, 413 body over 1 MiB, 503 graph unavailable
(Slack retries events).
"""

from __future__ import annotations

import logging
import re
import urllib.parse
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, HTTPException, Request, Response
from pydantic import ValidationError
from slack_sdk.signature import SignatureVerifier
from starlette.concurrency import run_in_threadpool

from adapters.falkordb import GraphStore, TenantGraph, graph_name, key_problem, safe_key
from adapters.notify import AdapterError
from adapters.slack import actions
from adapters.slack.payloads import (
    Action,
    EventEnvelope,
    Interaction,
    MessageEvent,
    reasons,
)
from adapters.slack.refs import make_ref
from agents.learn import verdicts
from agents.respond import lifecycle, maintenance, preferences
from gateway.http.limits import BodyError, load_json
from gateway.http.remediations import remediation_click, slack_email
from gateway.settings import Settings

log = logging.getLogger(__name__)
router = APIRouter()

#: The shapes Slack's signing headers have (api.slack.com, "Verifying requests from Slack"):
#: Unix seconds, and "v0=" with a hex SHA-256 HMAC. Anything else is refused before the SDK.
SLACK_TIMESTAMP = re.compile(r"[0-9]{1,12}")
SLACK_SIGNATURE = re.compile(r"v0=[0-9a-f]{64}")


async def verified_body(request: Request) -> bytes:
    """The raw body (at most `SLACK_BODY_LIMIT`, see `gateway.http.limits`), after checking its
    Slack signature. Raises HTTPException 404 / 401."""
    settings: Settings = request.app.state.settings
    if settings.slack_signing_secret is None:
        raise HTTPException(404, "Slack is not configured (SLACK_SIGNING_SECRET is unset)")
    raw = await request.body()
    verifier = SignatureVerifier(settings.slack_signing_secret.get_secret_value())
    timestamp = request.headers.get("x-slack-request-timestamp", "")
    signature = request.headers.get("x-slack-signature", "")
    # The SDK takes any header text: int() of 400 digits overflows its clock arithmetic, and
    # compare_digest raises on non-ASCII text. Slack sends epoch seconds and v0=<64 hex>.
    valid = bool(SLACK_TIMESTAMP.fullmatch(timestamp) and SLACK_SIGNATURE.fullmatch(signature))
    try:
        valid = valid and verifier.is_valid(raw, timestamp, signature)
    except UnicodeDecodeError:  # a body that is not UTF-8
        valid = False
    if not valid:
        raise HTTPException(
            401,
            "missing, stale or invalid Slack signature (X-Slack-Signature over the body, "
            "X-Slack-Request-Timestamp within 5 minutes)",
        )
    return raw


def check_origin(settings: Settings, team_id: str | None, app_id: str | None) -> None:
    """Refuse (403) a signed request from another workspace or app than `SLACK_TEAM_ID` and
    `SLACK_APP_ID` (each checked only when set): a signing secret leaked from, or shared with,
    another installation must not reach our pages."""
    if settings.slack_team_id and team_id != settings.slack_team_id:
        raise HTTPException(403, f"request from workspace {team_id!r}, not SLACK_TEAM_ID")
    if settings.slack_app_id and app_id != settings.slack_app_id:
        raise HTTPException(403, f"request for app {app_id!r}, not SLACK_APP_ID")


def slack_ms(ts: object) -> int:
    """A Slack `ts` / `action_ts` (`"1700000000.000100"`, seconds) as ms since the epoch, UTC.

    Raises HTTPException 400 when it is not a number.
    """
    try:
        return int(float(str(ts)) * 1000)
    except (ValueError, OverflowError):  # OverflowError: "1e999" is float('inf')
        raise HTTPException(400, f"not a Slack timestamp: {str(ts)[:40]!r}") from None


def find_page(
    store: GraphStore, settings: Settings, ref: str
) -> tuple[TenantGraph, dict[str, Any]]:
    """The tenant graph and incident (`incident_id`, `root_cause`) of the page with this ref.

    Raises `LookupError` when no tenant has such a page.
    """
    for tenant in settings.tenants:
        graph = store.graph(graph_name(tenant))
        row = graph.one("slack_page", {"ref": ref})
        if row is not None:
            return graph, row
    raise LookupError(f"no page {ref}")


def ignored_event(body: EventEnvelope, event: MessageEvent | None) -> str | None:
    """Why an `event_callback` is not a reply to consider, or None when it is one."""
    if event is None:
        return "not a message event"
    if event.subtype not in (None, "thread_broadcast"):
        return f"message subtype {event.subtype}"
    if event.bot_id or not event.user:
        return "a bot's message"
    if event.user in {a.user_id for a in body.authorizations}:
        return "our own message"
    if not event.channel or not event.thread_ts or not event.ts:
        return "not in a thread"
    if event.thread_ts == event.ts:
        return "a thread's first message, not a reply"
    if not body.event_id:
        return "no event_id"
    return None


def suggest_cause(
    state: Any, graph: TenantGraph, plain: str, event: MessageEvent, rejected: str | None
) -> dict[str, Any]:
    """For a reply rejecting the finding (or completing a "Wrong cause" click) whose words name
    no known component but spell one closely ("wrong, it's orders-dbb"): tell the replier
    only (`chat.postEphemeral` in the thread) "did you mean orders-db?" and how to name it.
    Nothing is stored for the misspelt word: a rejection then waits for its cause, which a
    reply naming it completes (`verdicts.awaits_cause`). Returns `{suggested: {word, names}}`,
    or nothing when no word is close; a Slack failure is logged, never raised."""
    found = verdicts.misspelt_cause(graph, plain, rejected)
    if found is None:
        return {}
    word, near = found
    settings: Settings = state.settings
    text = (f"{word} is not a component I know: did you mean "
            f"{' or '.join(near)}? Reply in this thread naming it (\"it was {near[0]}\") to "
            "record the actual cause; the rejection is recorded without one.")  # fmt: skip
    if settings.slack_bot_token is not None and event.channel and event.user:
        directory = getattr(state, "slack_directory", None)
        if directory is None:
            from adapters.slack.notifier import SlackNotifier

            directory = SlackNotifier(settings.slack_bot_token, settings.slack_api_url)
            state.slack_directory = directory
        try:
            directory.tell(event.channel, event.user, text, event.thread_ts)
        except AdapterError as exc:
            log.warning("could not suggest a cause in Slack: %s", exc)
    return {"suggested": {"word": word, "names": near}}


def record_reply(state: Any, body: EventEnvelope, event: MessageEvent) -> dict[str, Any]:
    """Turn a thread reply (checked by `ignored_event`) into a verdict if it states one, and a
    stated preference into a proposed Fact. Returns what happened."""
    assert event.channel and event.thread_ts and event.ts and event.user and body.event_id
    ref = make_ref(event.channel, event.thread_ts)
    try:
        graph, page = find_page(state.store, state.settings, ref)
    except LookupError:
        return {"ignored": "not a thread of one of our pages"}
    text = event.text or ""
    plain = verdicts.plain_text(text)
    profile = event.user_profile
    name = (profile.display_name or profile.real_name or None) if profile else None
    # Slack's event id is the idempotency key; hashed when FalkorDB could not index it
    key = safe_key(f"slack-event:{body.event_id}")
    outcome: dict[str, Any] = {}
    wish = preferences.parse_preference(plain)
    if wish is not None:
        preferences.propose(graph, page["incident_id"], key, event.user, name, text[:2000], wish)
        outcome["preference"] = {"id": key, "understood": wish.readback()}
    said = verdicts.reply_verdict(plain)
    named = verdicts.actual_cause(graph, plain, page["root_cause"])
    if said is None and named and verdicts.awaits_cause(graph, page["incident_id"]):
        said = "rejected"  # names the cause after a "Wrong cause" click: completes it
    if named is None and (
        said == "rejected" or (said is None and verdicts.awaits_cause(graph, page["incident_id"]))
    ):  # a cause misspelt: the rejection stands without it, the replier is asked
        outcome |= suggest_cause(state, graph, plain, event, page["root_cause"])
    if said is None:
        return outcome or {"ignored": "the reply states no verdict"}
    cause = named if said == "rejected" else page["root_cause"] or named
    verdict = verdicts.Verdict(
        id=key, incident_id=page["incident_id"], verdict=said,
        actual_cause=cause, by=event.user,
        by_name=name, at=slack_ms(event.ts), text=text[:2000], source="reply",
        event_id=body.event_id,
    )  # fmt: skip
    try:
        row = verdicts.record(graph, verdict)
    except LookupError:
        return {"ignored": "the page's incident is gone"}
    if row["fresh"]:  # its learn and notify tasks: wake an idle worker
        state.store.wake()
    return outcome | {"verdict": row["verdict"], "actual_cause": row["actual_cause"],
                      "verdict_id": row["id"], "repeat": not row["fresh"]}  # fmt: skip


@router.post("/api/v1/slack/events")
async def slack_events(request: Request) -> dict[str, Any]:
    """Events API endpoint (see the module docstring). Answers `{"challenge"}` to a
    url_verification, else `{"ok": true, …}` saying what was recorded or why it was ignored."""
    raw = await verified_body(request)
    try:
        body = EventEnvelope.model_validate(load_json(raw))
        event = body.message()
    except ValidationError as exc:
        raise HTTPException(400, f"not a Slack event: {reasons(exc)}") from None
    if body.type != "url_verification":  # Slack's URL check carries no team or app
        check_origin(request.app.state.settings, body.team_id, body.api_app_id)
    if body.type == "url_verification":
        if body.challenge is None:
            raise HTTPException(400, "url_verification without a challenge")
        return {"challenge": body.challenge}
    if body.type != "event_callback":
        return {"ok": True, "ignored": f"event type {body.type!r}"}
    reason = ignored_event(body, event)
    if reason is not None or event is None:
        return {"ok": True, "ignored": reason}
    outcome = await run_in_threadpool(record_reply, request.app.state, body, event)
    if "verdict" in outcome or "preference" in outcome:
        log.info("slack event %s: %s", body.event_id, outcome)
    return {"ok": True, **outcome}


class Ignored(Exception):
    """A click that changes nothing, with the reason (logged; Slack gets its empty 200)."""


def clicked_page(
    state: Any, payload: Interaction, action: Action, needs_ts: bool = True
) -> tuple[TenantGraph, dict[str, Any]]:
    """The tenant graph and page record of the message a button was clicked on. Raises
    HTTPException 400 when the payload lacks the user, channel, message ts (or, with
    `needs_ts`, the action's ts, which identifies the click for Slack's retries), and
    `Ignored` when the message is not one of our pages or the button names another incident.
    """
    user = payload.user
    channel, message_ts = payload.channel_id(), payload.message_ts()
    if not user.id or not channel or not message_ts or (needs_ts and not action.action_ts):
        raise HTTPException(
            400, "block_actions payload lacks user.id, channel, message ts or action_ts"
        )
    try:
        graph, page = find_page(state.store, state.settings, make_ref(channel, message_ts))
    except LookupError as exc:
        raise Ignored("not one of our pages") from exc
    if action.value != page["incident_id"]:
        raise Ignored("the button names another incident")
    return graph, page


def clicker_name(state: Any, graph: TenantGraph, user: Any) -> str:
    """The clicking Slack user's name: the world's person with that Slack user id, else the
    one whose email Slack holds for the user (`users.info`, as an approval is matched: a world
    file may give a person's email and no `slack_user_id`), else the name Slack sent, else
    the id. Raises `GraphUnavailable`."""
    known = graph.one("person_by_slack_id", {"slack_user_id": user.id}) if user.id else None
    if known is not None and known["name"]:
        return str(known["name"])
    email = slack_email(state, user.id) if user.id else None
    if email:
        by_email = graph.one("person_by_email", {"email": email})
        if by_email is not None and by_email["name"]:
            return str(by_email["name"])
    return str(user.username or user.name or user.id or "someone")


def record_click(state: Any, payload: Interaction, action: Action) -> dict[str, Any]:
    """Turn a click on one of our buttons into a verdict. Returns what happened."""
    user = payload.user
    graph, page = clicked_page(state, payload, action)
    at = slack_ms(action.action_ts)
    said = actions.VERDICTS[action.action_id]
    # (user, action_id, action_ts) identifies a click: Slack's retry of it changes nothing
    key = safe_key(f"{user.id}:{action.action_id}:{action.action_ts}")
    verdict = verdicts.Verdict(
        id=f"slack-action:{key}", incident_id=page["incident_id"], verdict=said,
        actual_cause=page["root_cause"] if said == "confirmed" else None, by=user.id,
        by_name=clicker_name(state, graph, user), at=at,
        text=(action.text.text if action.text else None) or action.action_id,
        source="button", event_id=key,
    )  # fmt: skip
    try:
        row = verdicts.record(graph, verdict)
        if said == "resolved":  # the Resolved button resolves the incident, not only says so
            lifecycle.resolve(graph, page["incident_id"], verdict.by_name or user.id or "someone")
    except LookupError:
        return {"ignored": "the page's incident is gone"}
    if row["fresh"]:  # its learn and notify tasks: wake an idle worker
        state.store.wake()
    return {"verdict": row["verdict"], "verdict_id": row["id"], "repeat": not row["fresh"]}


def acknowledge_click(state: Any, payload: Interaction, action: Action) -> dict[str, Any]:
    """The Acknowledge button: the incident is acknowledged by the clicker (by name:
    `clicker_name`). A repeat, or a click after someone else acknowledged, changes nothing."""
    user = payload.user
    graph, page = clicked_page(state, payload, action, needs_ts=False)
    name = clicker_name(state, graph, user)
    try:
        row = lifecycle.acknowledge(graph, page["incident_id"], name)
    except LookupError:
        return {"ignored": "the page's incident is gone"}
    except lifecycle.NotOpen as exc:
        return {"ignored": str(exc)}
    if row["fresh"]:  # its notify_state task edits the page
        state.store.wake()
    return {"acknowledged_by": row["acknowledged_by"], "repeat": not row["fresh"]}


def answer_readback(state: Any, payload: Interaction, action: Action) -> dict[str, Any]:
    """Approve or discard a preference read back to its author (button value = the fact id).

    Only the person who stated it may; anyone else's click changes nothing.
    """
    user = payload.user.id or ""
    fact_id = action.value or ""
    if key_problem(fact_id) is not None:  # not one of our fact ids: nothing to look up
        return {"ignored": "no such proposed preference of this user"}
    decide = (
        preferences.approve if action.action_id == actions.APPROVE_PREFERENCE
        else preferences.discard
    )  # fmt: skip
    for tenant in state.settings.tenants:
        row = decide(state.store.graph(graph_name(tenant)), fact_id, user)
        if row is not None:
            return {action.action_id: row["id"]}
    return {"ignored": "no such proposed preference of this user"}


def snooze_click(state: Any, payload: Interaction, action: Action) -> dict[str, Any]:
    """ "Snooze 1 h" on one of our pages: a quiet window over its incident's components for an
    hour (agents/respond/maintenance.py), by the clicking user; a retry of the click (same
    user, action and action_ts) changes nothing."""
    user = payload.user
    graph, page = clicked_page(state, payload, action)
    click = safe_key(f"{user.id}:{action.action_id}:{action.action_ts}")
    by = clicker_name(state, graph, user)
    row = maintenance.snooze(graph, page["incident_id"], by, click)
    if row is None:
        return {"ignored": "the page's incident is gone"}
    return {"snoozed": row["incident_id"], "window": row["id"], "until": row["ends_at"]}


#: A button's `action_id` -> what a click on it does: `(app state, payload, action) -> outcome`.
HANDLERS: dict[str, Callable[[Any, Interaction, Action], dict[str, Any]]] = {
    actions.CONFIRM: record_click,
    actions.REJECT: record_click,
    actions.RESOLVED: record_click,
    actions.ACKNOWLEDGE: acknowledge_click,
    actions.SNOOZE: snooze_click,
    actions.APPROVE_PREFERENCE: answer_readback,
    actions.DISCARD_PREFERENCE: answer_readback,
    actions.APPROVE_REMEDIATION: remediation_click,
    actions.REJECT_REMEDIATION: remediation_click,
}


@router.post("/api/v1/slack/interactions")
async def slack_interactions(request: Request) -> Response:
    """Interactivity endpoint (see the module docstring). Answers an empty 200."""
    raw = await verified_body(request)
    try:
        form = urllib.parse.parse_qs(raw.decode("utf-8"), strict_parsing=False)
        payload = Interaction.model_validate(load_json(form["payload"][0]))
    except (UnicodeDecodeError, KeyError, BodyError):
        raise HTTPException(400, "body must be form-encoded with a JSON `payload` field") from None
    except ValidationError as exc:
        raise HTTPException(400, f"not a Slack block_actions payload: {reasons(exc)}") from None
    check_origin(
        request.app.state.settings, payload.team.id if payload.team else None, payload.api_app_id
    )
    clicked = [a for a in payload.actions if a.action_id in HANDLERS]
    if payload.type != "block_actions" or not clicked:
        return Response(status_code=200)
    handler = HANDLERS[clicked[0].action_id]
    try:
        outcome = await run_in_threadpool(handler, request.app.state, payload, clicked[0])
    except Ignored as exc:
        outcome = {"ignored": str(exc)}
    log.info("slack action %s by %s: %s", clicked[0].action_id, payload.user.id, outcome)
    return Response(status_code=200)
