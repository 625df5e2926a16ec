"""A message Slack refuses for good goes on along the root route, else to the outbox.

Shared by every agent that says something after the page (the escalation's levels, the
reopen's notice, the remediation's proposal, run and verification, the responder's follow-ups,
page edits and ticket-resolved comment): a channel archived or without the bot since the page
must neither lose the message nor stop what comes after it (the next escalation level, the
fix's verification, the reopen's escalation round, the resolve's ticket comment and page edit).

`deliver` sends the message where it says (the page's thread, or a channel). When that is
refused for good (`AdapterError.refused`: not found, archived, the bot not in it), the message
goes as a message of its own to each channel of the root route in turn (`root_route`: the
paged team's channel, the default team's, then `SLACK_DEFAULT_CHANNEL`), ending "(Posted here:
<where> (<reason>) refused it.)", every attempt under the message's one intent id, so a crash
between them neither repeats nor loses it (`TaskRun.act` reconciles: Slack's `find` looks in
the channel the retried attempt names). When every channel refuses it, or the failure is not a
refusal and no retry is left, a copy goes through the fallback notifier (the outbox) under
`<intent>:fallback`, saying why ("Not delivered through slack: … refused it. Copied to outbox
instead."). A page edit (kind `update`) has nothing to edit elsewhere: it skips the root route.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

from adapters.falkordb import TenantGraph
from adapters.notices import FollowUp, Span
from adapters.notify import AdapterError, Notifier, OutboundMessage
from adapters.slack.refs import parse_ref
from agents.tasks.coordination import TaskRun

log = logging.getLogger(__name__)


def root_route(graph: TenantGraph, channel: str | None, default_channel: str | None) -> list[str]:
    """The channels a refused message may go to, in order, each once: `channel` (the paged
    team's; None when unknown), the default team's (`default_route.cypher`), then
    `default_channel` (`SLACK_DEFAULT_CHANNEL`; None when unset or Slack is off). Channel ids
    or `#names` as stored. Raises `GraphUnavailable`."""
    default = graph.one("default_route")
    chain = [channel, (default or {}).get("channel"), default_channel]
    return [c for c in dict.fromkeys(chain) if c]


def paged_route(graph: TenantGraph, incident_id: str, default_channel: str | None) -> list[str]:
    """`root_route` from the channel of the team the incident's page went to (the latest route
    of `incident_paged.cypher`; none when it was never paged). Raises `GraphUnavailable`."""
    found = graph.one("incident_paged", {"incident_id": incident_id})
    paged = json.loads(found["result"]) if found else None
    return root_route(graph, (paged or {}).get("channel"), default_channel)


def no_route() -> list[str]:
    """No channel to try: a ticket comment or a page edit has nowhere else to go, so a refusal
    goes straight to the fallback's copy (`deliver`'s `route`)."""
    return []


def fallback_copy(message: OutboundMessage, why: str) -> OutboundMessage:
    """`message` as its copy through the fallback notifier: intent `<intent>:fallback`, the
    notice saying `why` it was not delivered (`undelivered`)."""
    return message.model_copy(update={
        "intent_id": f"{message.intent_id}:fallback",
        "notice": message.notice.model_copy(update={"undelivered": why}),
    })  # fmt: skip


def deliver(
    task: TaskRun,
    messenger: Notifier,
    message: OutboundMessage,
    fallback: Notifier | None,
    route: Callable[[], list[str]],
    what: str = "message",
    default_channel: str | None = None,
) -> str:
    """Deliver `message` through `messenger` under its intent id; when that is refused for
    good, along the channels `route()` gives (read only then: `root_route`), then a copy
    through `fallback` (`<intent>:fallback`), as the module docstring says. `what` names the
    message in the log (`escalation`, `reopen notice`, …); `default_channel` names where a
    message with neither thread nor channel was posted (`SLACK_DEFAULT_CHANNEL`).

    Returns the ref of the delivery that went out. Raises `AdapterError` when a retry may
    still help (retryable, and not the task's last attempt) or there is no fallback (None,
    or `messenger` itself), `LeaseLost`, `GraphUnavailable`."""
    try:
        return task.act(messenger, message)
    except AdapterError as exc:
        if fallback is None or fallback is messenger:
            raise
        if exc.retryable and not task.last_attempt:
            raise
        failed = exc
    thread = parse_ref(message.reply_to)
    # a reply goes to its thread's channel, whatever channel the message names (a team told
    # names its own: where it goes without a thread)
    first = (
        f"the page's thread in {thread[0]}" if thread
        else message.channel or default_channel or messenger.name
    )  # fmt: skip
    refused = [f"{first} ({failed.reason or failed})"]
    if failed.refused and message.kind != "update":
        for channel in route():
            if channel == message.channel and not thread:  # that one refused it just now
                continue
            notice = message.notice
            if isinstance(notice, FollowUp):  # says why it is not where it belongs
                note = Span(text=f" (Posted here: {'; '.join(refused)} refused it.)")
                notice = notice.model_copy(update={"text": [*notice.text, note]})
            tried = message.model_copy(
                update={"reply_to": None, "channel": channel, "notice": notice}
            )
            try:
                ref = task.act(messenger, tried)
            except AdapterError as exc:
                if exc.retryable and not task.last_attempt:
                    raise
                refused.append(f"{channel} ({exc.reason or exc})")
                if not exc.refused:
                    break
                continue
            log.warning("%s %s refused by %s; posted in %s instead", what, message.intent_id,
                        "; ".join(refused), channel)  # fmt: skip
            return ref
    why = (
        f"Not delivered through {messenger.name}: {'; '.join(refused)} refused it. "
        f"Copied to {fallback.name} instead."
    )
    log.error("%s %s not delivered: %s", what, message.intent_id, why)
    return task.act(fallback, fallback_copy(message, why))


def tell(
    task: TaskRun,
    messenger: Notifier,
    message: OutboundMessage,
    fallback: Notifier | None,
    route: Callable[[], list[str]],
    what: str = "message",
    default_channel: str | None = None,
) -> str | None:
    """`deliver`, for a message that what follows must not wait on (the run's verification,
    the reopen's escalation round): one that nothing can deliver (no fallback, or the
    fallback failed too) is logged and None returned, so the task goes on. Raises
    `AdapterError` only when a retry may still help (retryable, not the task's last attempt),
    `LeaseLost`, `GraphUnavailable`."""
    try:
        return deliver(task, messenger, message, fallback, route, what, default_channel)
    except AdapterError as exc:
        if exc.retryable and not task.last_attempt:
            raise
        log.error("%s %s not delivered anywhere (%s); going on without it", what,
                  message.intent_id, exc)  # fmt: skip
        return None
