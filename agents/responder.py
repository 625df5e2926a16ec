"""Responder: finds the owner and who is on call now, and sends the page and the ticket.

Every external action carries an intent id and goes through `TaskRun.act`, so a crashed or
resumed run never pages twice:
- `incident:<id>:initial-notification` and `incident:<id>:ticket` (task `respond`);
- `incident:<id>:update:<task id>` when a re-investigation changed the root cause after the page
  (task `notify_update`);
- `incident:<id>:cleared:<alert key>` per alert that clears, and `incident:<id>:ticket-resolved`
  when the last one clears (task `notify_cleared`, claimable only after the first page is out).

The page itself is restated with the incident's current state (kind `update`; Slack edits it
in place) when the ticket link is known (`…:ticket-link`), the incident resolves
(`…:resolved`), a re-investigation changes the cause (`…:page:<task id>`), and an engineer gives
a verdict (`…:page:notify_verdict:<verdict id>`, task `notify_verdict`).
"""

from __future__ import annotations

import json
from typing import Any

from adapters.notify import Notifier
from agents import messages
from agents.coordination import TaskRun


def intent(incident_id: str, what: str) -> str:
    """The intent id of an action on an incident, e.g. `incident:inc-1:initial-notification`."""
    return f"incident:{incident_id}:{what}"


def link(ref: str | None) -> str | None:
    """A ticket reference that is a web link (`http(s)://…`), else None (e.g. `outbox:…`)."""
    return ref if ref and ref.startswith(("https://", "http://")) else None


class Responder:
    """Sends notifications through `messenger` and tickets through `tickets` (both `Notifier`s)."""

    kinds = ("respond", "notify_cleared", "notify_update", "notify_verdict")

    def __init__(self, messenger: Notifier, tickets: Notifier) -> None:
        self.messenger = messenger
        self.tickets = tickets

    def run(self, task: TaskRun) -> None:
        """Handle one claimed `respond`, `notify_cleared`, `notify_update` or `notify_verdict`
        task. Raises `LeaseLost`, `GraphUnavailable` or `AdapterError` (the worker releases the
        task for a retry)."""
        graph, incident_id = task.graph, task.claim.incident_id
        incident = graph.one("incident_get", {"incident_id": incident_id})
        if incident is None:
            task.complete("incident missing")
            return
        alerts = graph.rows("incident_alerts", {"incident_id": incident_id})
        if task.claim.kind == "respond":
            self._respond(task, incident, alerts)
        elif task.claim.kind == "notify_update":
            self._update(task, incident, alerts)
        elif task.claim.kind == "notify_verdict":
            self._restate(task, incident, alerts, f"page:{task.claim.task_id}")
            task.complete("page updated")
        else:
            self._cleared(task, incident, alerts)

    def _respond(
        self, task: TaskRun, incident: dict[str, Any], alerts: list[dict[str, Any]]
    ) -> None:
        components = [incident["root_cause"]] if incident["root_cause"] else []
        components += [c for c in (incident.get("candidates") or []) if c not in components]
        components += [
            a["component"] for a in alerts if a["component"] and a["component"] not in components
        ]
        who = task.step(
            "response_context", {"components": components},
            lambda: self._who(task, components),
            touched=components,
        )  # fmt: skip
        changes = task.graph.rows("incident_changes", {"incident_id": incident["id"]})
        page = messages.notification(
            intent(incident["id"], "initial-notification"), incident, alerts, who, changes
        )
        task.act(self.messenger, page)
        issue = messages.ticket(intent(incident["id"], "ticket"), incident, alerts, who)
        if link(task.act(self.tickets, issue)):
            self._restate(task, incident, alerts, "ticket-link")
        task.complete("notified", mark_notified=True, root_cause=incident["root_cause"])

    def _update(
        self, task: TaskRun, incident: dict[str, Any], alerts: list[dict[str, Any]]
    ) -> None:
        """Tell the thread when a re-investigation changed the root cause since the page."""
        if incident["root_cause"] == incident["notified_root_cause"]:
            task.complete("unchanged")
            return
        refs = self._refs(task, incident["id"])
        update = messages.diagnosis_update(
            intent(incident["id"], f"update:{task.claim.task_id}"), incident,
            incident["notified_root_cause"],
            refs.get(intent(incident["id"], "initial-notification")),
        )  # fmt: skip
        task.act(self.messenger, update)
        self._restate(task, incident, alerts, f"page:{task.claim.task_id}")
        task.complete("updated", mark_notified=True, root_cause=incident["root_cause"])

    def _refs(self, task: TaskRun, incident_id: str) -> dict[str, str]:
        """intent id -> external ref of every action already taken for the incident."""
        rows = task.graph.rows("incident_actions", {"incident_id": incident_id})
        return {row["intent_id"]: row["external_ref"] for row in rows}

    def _who(self, task: TaskRun, components: list[str]) -> dict[str, Any] | None:
        """Owner and on-call person now of the first component (in priority order) that has one."""
        if not components:
            return None
        rows = task.graph.rows("response_context", {"components": components})
        for name in components:
            for row in rows:
                if row["component"] == name and row["person"]:
                    return row
        for name in components:
            for row in rows:
                if row["component"] == name:
                    return row
        return None

    def _cleared(
        self, task: TaskRun, incident: dict[str, Any], alerts: list[dict[str, Any]]
    ) -> None:
        alert = next((a for a in alerts if a["key"] == task.claim.alert_key), None)
        if alert is None:
            task.complete("alert missing")
            return
        refs = self._refs(task, incident["id"])
        root = refs.get(intent(incident["id"], "initial-notification"))
        note = messages.cleared(
            intent(incident["id"], f"cleared:{alert['key']}"), incident, alert, root
        )
        task.act(self.messenger, note)
        if incident["status"] == "resolved":
            issue = refs.get(intent(incident["id"], "ticket"))
            closing = messages.ticket_resolved(
                intent(incident["id"], "ticket-resolved"), incident, alerts, issue
            )
            task.act(self.tickets, closing)
            self._restate(task, incident, alerts, "resolved")
        task.complete("cleared")

    def _restate(
        self, task: TaskRun, incident: dict[str, Any], alerts: list[dict[str, Any]], what: str
    ) -> None:
        """Restate the page with the incident's current state (intent `incident:<id>:<what>`):
        cause, the person paged then, ticket link, resolution and verdicts. Nothing to do when
        no page went out."""
        incident_id = incident["id"]
        refs = self._refs(task, incident_id)
        page = refs.get(intent(incident_id, "initial-notification"))
        if page is None:
            return
        paged = task.graph.one("incident_paged", {"incident_id": incident_id})
        update = messages.page_update(
            intent(incident_id, what), page, incident, alerts,
            json.loads(paged["result"]) if paged else None,
            task.graph.rows("incident_changes", {"incident_id": incident_id}),
            task.graph.rows("incident_verdicts", {"incident_id": incident_id}),
            link(refs.get(intent(incident_id, "ticket"))),
        )  # fmt: skip
        task.act(self.messenger, update)
