"""Flapping: an alert that fires again soon after its incident resolved reopens that incident
(triage, `BLAST_REOPEN_WINDOW`) and is told in the page's thread, never paged again: the same
alert has the same cause, and the people paged for it are the ones to tell. A cause that
changes after that (new alerts on other components) re-pages as any re-investigation does.

Task `notify_reopened` (id `reopened:<alert key>`), one per alert that fired again; its notice
is intent `incident:<id>:reopened:<alert key>` in the thread, and the page is restated
(`…:page:reopened:<alert key>`: it shows the incident open again).
"""

from __future__ import annotations

import json
from typing import Any

from adapters.notices import Span
from adapters.notify import Notifier
from agents.respond import messages
from agents.tasks.coordination import TaskRun

#: The task kind triage enqueues for an alert that reopened its incident.
KIND = "notify_reopened"


def reopened_text(incident: dict[str, Any], alert: dict[str, Any]) -> list[Span]:
    """The thread notice: which alert fired again, when, and that nobody is paged again."""
    return [
        Span(text="Firing again: "),
        Span(text=messages.alert_line(alert), strong=True),
        Span(text=f". Incident {incident['id']} reopened in this thread (it had resolved within "
                  "the reopen window); nobody is paged again for the same alert."),
    ]  # fmt: skip


class Reopener:
    """Runs `notify_reopened` tasks through `messenger` (Slack or the outbox)."""

    kinds = (KIND,)

    def __init__(self, messenger: Notifier) -> None:
        self.messenger = messenger

    def run(self, task: TaskRun) -> None:
        """Say in the page's thread that the incident reopened, then restate the page. No page
        yet (the incident was never paged): nothing to say; its page, when it goes out, shows
        it open. Raises `LeaseLost`, `GraphUnavailable` or `AdapterError`."""
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
        key = task.claim.alert_key
        notice = messages.followup(
            f"incident:{incident_id}:reopened:{key}", incident, "reopened",
            reopened_text(incident, alert), page,
        )  # fmt: skip
        task.act(self.messenger, notice)
        paged = graph.one("incident_paged", {"incident_id": incident_id})
        ticket = refs.get(f"incident:{incident_id}:ticket")
        update = messages.page_update(
            f"incident:{incident_id}:page:reopened:{key}", page, incident, alerts,
            json.loads(paged["result"]) if paged else None,
            graph.rows("incident_changes", {"incident_id": incident_id}),
            graph.rows("incident_verdicts", {"incident_id": incident_id}),
            ticket if ticket and ticket.startswith(("https://", "http://")) else None,
        )  # fmt: skip
        task.act(self.messenger, update)
        task.complete("reopened")
