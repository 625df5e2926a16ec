"""Slack inbound: `POST /api/v1/slack/events` (Events API) and `POST /api/v1/slack/interactions`
(button clicks), the way engineers confirm or correct a page.

Every request is verified with slack-sdk's `SignatureVerifier` over the raw body (HMAC-SHA256
of `v0:<X-Slack-Request-Timestamp>:<body>` with `SLACK_SIGNING_SECRET`, 5-minute window,
constant-time compare; INTEGRATIONS.md §1). A missing, stale or wrong signature is 401 and
changes nothing; with no signing secret configured both routes are 404.

Slack wants an answer within 3 s, so a request only records: one short graph write stores the
Verdict with a `learn` task and a `notify_verdict` task (the responder edits the page later).
Slack retries events with the same `event_id`, and a click is identified by (user, action_id,
action_ts): the verdict id is made from these, so a repeat changes nothing.

- events: `url_verification` answers the challenge; `event_callback` with a `message` that
  replies in the thread of one of our pages (its `thread_ts` is the page's ts, found through
  the page Action's external ref `slack:<channel>:<ts>`) becomes a verdict when it states one
  (`agents/verdicts.py`), and a stated preference ("for database saturation, don't ping me on
  Slack, open a ticket …", `agents/preferences.py`) becomes a proposed Fact read back for
  approval. Ignored (200): other events, bots (`bot_id`), our own bot user,
  subtypes (edits, deletions, joins; `thread_broadcast` is a reply and counts), top-level
  messages, threads that are not ours.
- interactions: `application/x-www-form-urlencoded` with one field `payload` (JSON);
  `block_actions` from our buttons (`adapters/slack.py` ACTIONS, value = incident id) on one of
  our pages, and Approve / Discard of a preference read back (value = the fact id; only its
  author's click counts). Answer: an empty 200.

Status codes: 400 body not JSON / not a form with a JSON payload / missing fields, 401 bad
signature, 404 Slack not configured, 503 graph unavailable (Slack retries events).
"""

from __future__ import annotations

import json
import logging
import urllib.parse
from typing import Any

from fastapi import APIRouter, HTTPException, Request, Response
from slack_sdk.signature import SignatureVerifier
from starlette.concurrency import run_in_threadpool

from adapters.falkordb import GraphStore, TenantGraph, graph_name
from adapters.slack import ACTIONS, make_ref
from agents import preferences, verdicts
from gateway.settings import Settings
from gateway.webhook import read_limited

log = logging.getLogger(__name__)
router = APIRouter()

#: Buttons of a preference read back (`agents/messages.py` readback).
PREFERENCE_ACTIONS = ("approve_preference", "discard_preference")
#: Slack's requests are small; anything bigger is not from Slack.
SLACK_BODY_LIMIT = 1024 * 1024


async def verified_body(request: Request) -> bytes:
    """The raw body, after checking its Slack signature. Raises HTTPException 404 / 401 / 413."""
    settings: Settings = request.app.state.settings
    if settings.slack_signing_secret is None:
        raise HTTPException(404, "Slack is not configured (SLACK_SIGNING_SECRET is unset)")
    raw = await read_limited(request, SLACK_BODY_LIMIT)
    verifier = SignatureVerifier(settings.slack_signing_secret.get_secret_value())
    try:
        valid = verifier.is_valid_request(raw, dict(request.headers))
    except (ValueError, UnicodeDecodeError):  # a timestamp that is no number, a body not UTF-8
        valid = False
    if not valid:
        raise HTTPException(
            401,
            "missing, stale or invalid Slack signature (X-Slack-Signature over the body, "
            "X-Slack-Request-Timestamp within 5 minutes)",
        )
    return raw


def slack_ms(ts: object) -> int:
    """A Slack `ts` / `action_ts` (`"1700000000.000100"`, seconds) as ms since the epoch, UTC.

    Raises HTTPException 400 when it is not a number.
    """
    try:
        return int(float(str(ts)) * 1000)
    except ValueError:
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


def ignored_event(body: dict[str, Any]) -> str | None:
    """Why an `event_callback` is not a reply to consider, or None when it is one."""
    event = body.get("event")
    if not isinstance(event, dict) or event.get("type") != "message":
        return "not a message event"
    if event.get("subtype") not in (None, "thread_broadcast"):
        return f"message subtype {event.get('subtype')}"
    if event.get("bot_id") or not event.get("user"):
        return "a bot's message"
    ours = {a.get("user_id") for a in body.get("authorizations") or [] if isinstance(a, dict)}
    if event["user"] in ours:
        return "our own message"
    if not event.get("channel") or not event.get("thread_ts") or not event.get("ts"):
        return "not in a thread"
    if event["thread_ts"] == event["ts"]:
        return "a thread's first message, not a reply"
    if not body.get("event_id"):
        return "no event_id"
    return None


def record_reply(state: Any, body: dict[str, Any]) -> dict[str, Any]:
    """Turn a thread reply into a verdict if it states one. Returns what happened."""
    event = body["event"]
    ref = make_ref(str(event["channel"]), str(event["thread_ts"]))
    try:
        graph, page = find_page(state.store, state.settings, ref)
    except LookupError:
        return {"ignored": "not a thread of one of our pages"}
    text = str(event.get("text") or "")
    plain = verdicts.plain_text(text)
    profile = event.get("user_profile") or {}
    name = profile.get("display_name") or profile.get("real_name") or None
    outcome: dict[str, Any] = {}
    wish = preferences.parse_preference(plain)
    if wish is not None:
        fact_id = f"slack-event:{body['event_id']}"
        preferences.propose(
            graph, page["incident_id"], fact_id, str(event["user"]), name, text[:2000], wish
        )
        outcome["preference"] = {"id": fact_id, "understood": wish.readback()}
    said = verdicts.reply_verdict(plain)
    named = verdicts.actual_cause(graph, plain, page["root_cause"])
    if said is None and named and verdicts.awaits_cause(graph, page["incident_id"]):
        said = "rejected"  # names the cause after a "Wrong cause" click: completes it
    if said is None:
        return outcome or {"ignored": "the reply states no verdict"}
    cause = named if said == "rejected" else page["root_cause"] or named
    verdict = verdicts.Verdict(
        id=f"slack-event:{body['event_id']}", incident_id=page["incident_id"], verdict=said,
        actual_cause=cause, by=str(event["user"]),
        by_name=name, at=slack_ms(event["ts"]), text=text[:2000], source="reply",
        event_id=str(body["event_id"]),
    )  # fmt: skip
    try:
        row = verdicts.record(graph, verdict)
    except LookupError:
        return {"ignored": "the page's incident is gone"}
    return outcome | {"verdict": row["verdict"], "actual_cause": row["actual_cause"],
                      "verdict_id": row["id"], "repeat": not row["fresh"]}  # fmt: skip


@router.post("/api/v1/slack/events")
async def slack_events(request: Request) -> dict[str, Any]:
    """Events API endpoint (see the module docstring). Answers `{"challenge"}` to a
    url_verification, else `{"ok": true, …}` saying what was recorded or why it was ignored."""
    raw = await verified_body(request)
    try:
        body = json.loads(raw)
    except ValueError:
        raise HTTPException(400, "body is not JSON") from None
    if not isinstance(body, dict):
        raise HTTPException(400, "body is not a JSON object")
    if body.get("type") == "url_verification":
        if not isinstance(body.get("challenge"), str):
            raise HTTPException(400, "url_verification without a challenge")
        return {"challenge": body["challenge"]}
    if body.get("type") != "event_callback":
        return {"ok": True, "ignored": f"event type {body.get('type')!r}"}
    reason = ignored_event(body)
    if reason is not None:
        return {"ok": True, "ignored": reason}
    outcome = await run_in_threadpool(record_reply, request.app.state, body)
    if "verdict" in outcome or "preference" in outcome:
        log.info("slack event %s: %s", body["event_id"], outcome)
    return {"ok": True, **outcome}


def record_click(state: Any, payload: dict[str, Any], action: dict[str, Any]) -> dict[str, Any]:
    """Turn a click on one of our buttons into a verdict. Returns what happened."""
    user = payload.get("user") or {}
    container = payload.get("container") or {}
    channel = (payload.get("channel") or {}).get("id") or container.get("channel_id")
    message_ts = container.get("message_ts") or (payload.get("message") or {}).get("ts")
    if not user.get("id") or not channel or not message_ts or not action.get("action_ts"):
        raise HTTPException(
            400, "block_actions payload lacks user.id, channel, message ts or action_ts"
        )
    at = slack_ms(action["action_ts"])
    try:
        graph, page = find_page(state.store, state.settings, make_ref(channel, message_ts))
    except LookupError:
        return {"ignored": "not one of our pages"}
    if action.get("value") != page["incident_id"]:
        return {"ignored": "the button names another incident"}
    said = ACTIONS[action["action_id"]]
    key = f"{user['id']}:{action['action_id']}:{action['action_ts']}"
    verdict = verdicts.Verdict(
        id=f"slack-action:{key}", incident_id=page["incident_id"], verdict=said,
        actual_cause=page["root_cause"] if said == "confirmed" else None, by=str(user["id"]),
        by_name=user.get("username") or user.get("name") or None, at=at,
        text=str((action.get("text") or {}).get("text") or action["action_id"]),
        source="button", event_id=key,
    )  # fmt: skip
    try:
        row = verdicts.record(graph, verdict)
    except LookupError:
        return {"ignored": "the page's incident is gone"}
    return {"verdict": row["verdict"], "verdict_id": row["id"], "repeat": not row["fresh"]}


def answer_readback(state: Any, payload: dict[str, Any], action: dict[str, Any]) -> dict[str, Any]:
    """Approve or discard a preference read back to its author (button value = the fact id).

    Only the person who stated it may; anyone else's click changes nothing.
    """
    user = str((payload.get("user") or {}).get("id") or "")
    fact_id = str(action.get("value") or "")
    decide = (
        preferences.approve if action["action_id"] == "approve_preference" else preferences.discard
    )
    for tenant in state.settings.tenants:
        row = decide(state.store.graph(graph_name(tenant)), fact_id, user)
        if row is not None:
            return {action["action_id"]: row["id"]}
    return {"ignored": "no such proposed preference of this user"}


@router.post("/api/v1/slack/interactions")
async def slack_interactions(request: Request) -> Response:
    """Interactivity endpoint (see the module docstring). Answers an empty 200."""
    raw = await verified_body(request)
    try:
        form = urllib.parse.parse_qs(raw.decode("utf-8"))
        payload = json.loads(form["payload"][0])
    except (UnicodeDecodeError, KeyError, ValueError):
        raise HTTPException(400, "body must be form-encoded with a JSON `payload` field") from None
    if not isinstance(payload, dict):
        raise HTTPException(400, "`payload` is not a JSON object")
    actions = [
        a
        for a in payload.get("actions") or []
        if isinstance(a, dict) and a.get("action_id") in (*ACTIONS, *PREFERENCE_ACTIONS)
    ]
    if payload.get("type") != "block_actions" or not actions:
        return Response(status_code=200)
    if actions[0]["action_id"] in PREFERENCE_ACTIONS:
        done = await run_in_threadpool(answer_readback, request.app.state, payload, actions[0])
        log.info("slack preference action by %s: %s", (payload.get("user") or {}).get("id"), done)
        return Response(status_code=200)
    outcome = await run_in_threadpool(record_click, request.app.state, payload, actions[0])
    log.info("slack action by %s: %s", (payload.get("user") or {}).get("id"), outcome)
    return Response(status_code=200)
