"""Quiet windows (maintenance): incidents on the components or teams of an active window are
recorded, investigated and shown as in maintenance (`Incident.maintenance_until`, ms), but not
paged; one still open when the window ends is paged then, and one that resolved inside it is
never paged (nor ticketed): that is what a planned change looks like.

Windows are `(:Maintenance {id, components, teams, starts_at, ends_at, reason, by})` (ms,
database clock). The page waits in the graph, like every other wait: the incident's `respond`
task, when a window covers the incident, is paused until the window's end (`TaskRun.pause`),
then checks again (another window may still cover it). Ending a window early makes those tasks
claimable at once (`cypher/maintenance_end.cypher`). A snooze ("Snooze 1 h" on the page) is a
window over one incident's components: its escalation waits until the end, and new incidents
there are held too.

Like an Alertmanager silence, a window matches by name: a component (the incident's root cause,
candidates or alerting components) or a team (owner of one of them).
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from adapters.falkordb import TenantGraph
from agents.respond import messages
from agents.tasks.coordination import TaskRun

log = logging.getLogger(__name__)

#: The longest a window may last (ms): a week; a longer quiet is a change of the world file.
MAX_WINDOW_MS = 7 * 86_400_000
#: What "Snooze 1 h" on a page gives.
SNOOZE_MINUTES = 60


def start(
    graph: TenantGraph,
    components: list[str],
    teams: list[str],
    reason: str,
    by: str,
    minutes: int | None = None,
    ends_at: int | None = None,
    window_id: str | None = None,
) -> dict[str, Any] | None:
    """Open a window from now for `minutes`, or until `ends_at` (ms UTC); the window's row
    (`id, components, teams, starts_at, ends_at, reason, by`), or None when it would end now or
    earlier. Raises `GraphUnavailable`."""
    return graph.one(
        "maintenance_start",
        {"id": window_id or f"mw-{uuid.uuid4().hex[:12]}", "components": components,
         "teams": teams, "minutes": minutes, "ends_at": ends_at, "reason": reason, "by": by},
    )  # fmt: skip


def windows(graph: TenantGraph, everything: bool = False, limit: int = 100) -> list[dict[str, Any]]:
    """Windows not over yet (or every one with `everything`), newest first, each with `active`
    and `held` (ids of the incidents it held)."""
    return graph.rows("maintenance_list", {"all": everything, "limit": limit})


def end(graph: TenantGraph, window_id: str, by: str) -> dict[str, Any] | None:
    """End a window now; `{id, ends_at, released, tasks}` (`released`: how many incidents it
    held have a task claimable now, `tasks`: how many tasks), None when there is no such
    window. Raises `GraphUnavailable`."""
    return graph.one("maintenance_end", {"id": window_id, "by": by})


def snooze(
    graph: TenantGraph, incident_id: str, by: str, click: str, minutes: int = SNOOZE_MINUTES
) -> dict[str, Any] | None:
    """Snooze an incident for `minutes`: a window over its components (id from `click`, so a
    repeat of the same click changes nothing). `{id, components, ends_at, incident_id}`, or
    None when the incident does not exist."""
    return graph.one(
        "maintenance_snooze",
        {"incident_id": incident_id, "id": f"snooze:{click}", "minutes": minutes,
         "reason": f"incident {incident_id} snoozed for {minutes} min", "by": by},
    )  # fmt: skip


def hold(task: TaskRun, incident: dict[str, Any], alerts: list[dict[str, Any]]) -> bool:
    """Before the page of `incident` (a `respond_context.cypher` row, whose `quiet_until` and
    `maintenance_until` say whether to look further): True when it must not page now, the
    task then paused until the covering window ends, or completed (resolved inside a window:
    recorded, never paged); False: page now. Raises `LeaseLost`, `GraphUnavailable`."""
    if incident.get("quiet_until") is None and incident.get("maintenance_until") is None:
        return False  # no window covers it, nor ever did: the common case, no query
    components = [incident["root_cause"]] if incident.get("root_cause") else []
    components += [c for c in incident.get("candidates") or [] if c not in components]
    components += [
        a["component"] for a in alerts if a["component"] and a["component"] not in components
    ]
    teams = sorted({o["team"] for o in incident.get("owners") or [] if o.get("team")})
    row = task.graph.one(
        "maintenance_covering",
        {"incident_id": incident["id"], "components": components, "teams": teams},
    )
    if row is None:
        return False
    if row["until"] is not None and row["status"] == "open":
        why = f"in maintenance until {messages.fmt_ms(row['until'])}"
        if row["reason"]:
            why += f" ({row['reason']}, by {row['by'] or 'someone'})"
        task.pause(int(row["until"]), why)
        log.info("incident %s: not paged, %s", incident["id"], why)
        return True
    if row["status"] != "open" and (row["until"] is not None or row["held_until"] is not None):
        # resolved inside a window: nothing to page for; mark_notified lets its follow-ups
        # (cleared alerts) finish, quietly, as there is no page to reply to
        task.complete("resolved during maintenance: not paged", mark_notified=True)
        return True
    return False
