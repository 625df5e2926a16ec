"""Flapping: an alert that fires again soon after its incident resolved reopens that incident
(triage, `BLAST_REOPEN_WINDOW`) and is told in the page's thread, never paged again: the same
alert has the same cause, and the people paged for it are the ones to tell. A cause that
changes after that (new alerts on other components) re-pages as any re-investigation does.
When nobody acknowledged the incident, its team's escalation policy runs again from the reopen
(`escalation.py`): a page nobody answered must not go quiet because the alert flapped.

Task `notify_reopened` (id `reopened:<alert key>`), one per alert that fired again; its notice
is intent `incident:<id>:reopened:<alert key>` in the thread, and the page is restated
(`…:page:reopened:<alert key>`: it shows the incident open again).

A maintenance window (or a snooze) that covers the incident when it reopens holds all of that
as it holds a new page (`maintenance.hold`): the task waits, paused, for the window's end; the
incident shows `maintenance_until`. Still open then: the thread is told, the page restated, and
the policy runs from that message (`escalation.active_round`), as it runs from a held page.
Resolved again inside the window: nothing is said, then or when it resolves (a planned change).
"""

from __future__ import annotations

import json
from typing import Any

from adapters.notices import Span
from adapters.notify import Notifier
from agents.respond import escalation, maintenance, messages
from agents.respond.fallback import no_route, root_route, tell
from agents.tasks.coordination import TaskRun

#: The task kind triage enqueues for an alert that reopened its incident.
KIND = "notify_reopened"


def reopened_text(
    incident: dict[str, Any], alert: dict[str, Any], escalates: bool = False
) -> list[Span]:
    """The thread notice: which alert fired again, when, that nobody is paged again, how long
    quiet windows held this notice (the row's `held`: `messages.held_line`), and whether the
    escalation policy runs again (`escalates`)."""
    held = messages.held_line(incident.get("held"))
    then = (" Nobody acknowledged it: acknowledge it now, or its escalation policy runs again "
            "from this reopen." if escalates else "")  # fmt: skip
    return [
        Span(text="Firing again: "),
        Span(text=messages.alert_line(alert), strong=True),
        Span(text=f". Incident {incident['id']} reopened in this thread (it had resolved within "
                  f"the reopen window); nobody is paged again for the same alert."
                  f"{' ' + held if held else ''}{then}"),
    ]  # fmt: skip


class Reopener:
    """Runs `notify_reopened` tasks through `messenger` (Slack or the outbox). A notice Slack
    refuses for good goes along the root route, else to `fallback` (the outbox), and the task
    goes on (`agents.respond.fallback`); `default_channel`: `SLACK_DEFAULT_CHANNEL`, the root
    route's last channel; `public_url`: `BLAST_PUBLIC_URL`, so the page restated keeps its link
    to the incident's web page, as every other edit of it does."""

    kinds = (KIND,)

    def __init__(
        self,
        messenger: Notifier,
        fallback: Notifier | None = None,
        default_channel: str | None = None,
        public_url: str | None = None,
    ) -> None:
        self.messenger = messenger
        self.public_url = public_url
        self.fallback = fallback
        self.default_channel = default_channel

    def run(self, task: TaskRun) -> None:
        """Say in the page's thread that the incident reopened, then restate the page, and run
        the escalation policy again when nobody acknowledged it. No page yet (the incident was
        never paged): nothing to say; its page, when it goes out, shows it open and escalates.
        A window that covers the incident holds all of it until its end (`maintenance.hold`).
        A notice or page edit Slack refuses for good does not stop the rest: the notice goes
        along the root route (paged team's channel, default team's, `SLACK_DEFAULT_CHANNEL`)
        or is copied to the outbox (`<intent>:fallback`), the edit is copied there.
        Raises `LeaseLost`, `GraphUnavailable` or `AdapterError` (one a retry may help)."""
        graph, incident_id = task.graph, task.claim.incident_id
        incident = graph.one("response_incident", {"incident_id": incident_id})
        if incident is None:
            task.complete("incident missing")
            return
        alerts = sorted(incident.pop("alerts"), key=lambda a: (a["starts_at_ms"], a["key"]))
        alert = next((a for a in alerts if a["key"] == task.claim.alert_key), None)
        task.flush_records()
        refs = {
            row["intent_id"]: row["external_ref"]
            for row in graph.rows("incident_actions", {"incident_id": incident_id})
        }
        page = refs.get(f"incident:{incident_id}:initial-notification")
        if alert is None or page is None:
            task.complete("alert missing" if alert is None else "not paged")
            return
        if maintenance.hold(task, incident, alerts, "reopen"):
            return  # a quiet window: told when it ends, if still open
        if alert["status"] != "firing" and maintenance.held_since_reopen(incident):
            # held, and this alert cleared inside the window (another reopened it since)
            task.complete("cleared again during maintenance: the reopen not told")
            return
        key = task.claim.alert_key
        paged = graph.one("incident_paged", {"incident_id": incident_id})
        unanswered = incident["acknowledged_at"] is None and incident["status"] == "open"
        route = json.loads(paged["result"]) if paged else None
        again: dict[str, Any] = task.step(  # a step: a retry tells the thread the same
            "escalation_again", {"reopens": incident["reopens"]},
            lambda: escalation.follow_up(graph, incident_id, route, f"reopen:{incident['reopens']}")
            if unanswered else {},
            deferred=True,
        )  # fmt: skip
        notice = messages.followup(
            f"incident:{incident_id}:reopened:{key}", incident, "reopened",
            reopened_text(incident, alert, bool(again)), page,
        )  # fmt: skip
        channel = (route or {}).get("channel")
        tell(task, self.messenger, notice, self.fallback,
             lambda: root_route(graph, channel, self.default_channel), "reopen notice",
             self.default_channel)  # fmt: skip
        ticket = refs.get(f"incident:{incident_id}:ticket")
        # restated as every other edit of the page: its own addressee first, then whom a new
        # cause paged (`first`), and the channels that refused it (why it landed where it did)
        update = messages.page_update(
            f"incident:{incident_id}:page:reopened:{key}", page, incident, alerts, route,
            graph.rows("incident_changes", {"incident_id": incident_id}),
            graph.rows("incident_verdicts", {"incident_id": incident_id}),
            ticket if ticket and ticket.startswith(("https://", "http://")) else None,
            self.public_url,
            json.loads(paged["first"]) if paged and paged["first"] else None,
            messages.page_refusals(
                graph.rows("incident_deliveries", {"incident_id": incident_id}), incident_id
            ),
        )  # fmt: skip
        tell(task, self.messenger, update, self.fallback, no_route, "reopened page edit",
             self.default_channel)  # fmt: skip
        task.complete("reopened" + (", escalation policy again" if again else ""), **again)
