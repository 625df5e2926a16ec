"""Quiet windows (maintenance): incidents on the components or teams of an active window are
recorded, investigated and shown as in maintenance (`Incident.maintenance_until`, ms), but not
paged; one still open when the window ends is paged then, and one that resolved inside it is
never paged (nor ticketed): that is what a planned change looks like.

Windows are `(:Maintenance {id, components, teams, starts_at, ends_at, reason, by})` (ms,
database clock). The page waits in the graph, like every other wait: the incident's `respond`
task, when a window covers the incident, is paused until the window's end, or
`HELD_PAGE_RECHECK_MS` if sooner (`TaskRun.pause`), then checks again: another window may still
cover it, and an alert that joined since, or a cause a re-investigation named, may be one no
window covers (then it is paged within that time, not at the window's end). Ending a window
early makes those tasks claimable at once (`cypher/maintenance_end.cypher`). A snooze
("Snooze 1 h" on the page) is a window over one incident's components: its escalation waits
until the end, and new incidents there are held too. A window holds an incident's reopen the
same way (`flapping.py`: the thread's notice, the restated page and the escalation that follows
wait for its end), and an incident it holds that merges into another carries the hold there
(`cypher/merge_incident.cypher`): the survivor's escalation and diagnosis update wait too.

A window matches by name: a component, or a team (the owner of one). It covers an incident when
it names the incident's root cause, or when windows name every one of its alerting components:
a window over one of several alerting services, or over a candidate the finding only lists to
check, covers nothing, as an Alertmanager silence silences alerts, not the groups they are in.
So an outage on a service no window names is paged even when it joined, or may be caused by,
something in maintenance.
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any, Literal

from adapters.falkordb import TenantGraph
from agents.respond import messages
from agents.tasks.coordination import TaskRun

log = logging.getLogger(__name__)

#: The longest a window may last (ms): a week; a longer quiet is a change of the world file.
MAX_WINDOW_MS = 7 * 86_400_000
#: How often a held page looks again whether the windows still cover its incident (ms): a
#: window may last a week, and an alert on a service no window names may join meanwhile.
HELD_PAGE_RECHECK_MS = 60_000
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
    (`id, components, teams, starts_at, ends_at, reason, by`; each name stored once, in the
    order first given), or None when it would end now or earlier. Raises `GraphUnavailable`."""
    return graph.one(
        "maintenance_start",
        {"id": window_id or f"mw-{uuid.uuid4().hex[:12]}",
         "components": list(dict.fromkeys(components)), "teams": list(dict.fromkeys(teams)),
         "minutes": minutes, "ends_at": ends_at, "reason": reason, "by": by},
    )  # fmt: skip


def windows(graph: TenantGraph, everything: bool = False, limit: int = 100) -> list[dict[str, Any]]:
    """Windows not over yet (or every one with `everything`), newest first, each with `active`
    and `held` (ids of the incidents it held)."""
    return graph.rows("maintenance_list", {"all": everything, "limit": limit})


def end(graph: TenantGraph, window_id: str, by: str) -> dict[str, Any] | None:
    """End a window now as `by`; `{id, ends_at, ended_by, over, released, tasks}` (ms UTC;
    `released`: how many open incidents it held have a task claimable now because they
    waited for this window, `tasks`: how many tasks). A window already over (`over` true:
    it ran its course, `ended_by` null, or someone ended it) is left as it was: same end,
    same `ended_by`, nothing released. None when there is no such window. Raises
    `GraphUnavailable`."""
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


#: What a quiet window holds (`hold`'s `what`): the first page, the thread's notice of a
#: reopen, a diagnosis update (which may page a new cause's on-call).
Held = Literal["page", "reopen", "update"]


def hold(
    task: TaskRun, incident: dict[str, Any], alerts: list[dict[str, Any]], what: Held = "page"
) -> bool:
    """Before the page of `incident` (a `respond_context.cypher` row, whose `quiet_until` and
    `maintenance_until` say whether to look further), before its thread is told that it fired
    again (`what` "reopen": a `response_incident.cypher` row, always looked up, as a reopen is
    rare) or before a diagnosis update (`update`: looked up when `maintenance_until` says a
    window held the incident, e.g. one merged into it): True when it must not speak now, the
    task then paused until the covering window ends, or completed (resolved inside a window:
    a page never sent, a reopen never told); False: go on now. Windows cover by name
    (`maintenance_covering.cypher`): the root cause, or every alerting component (each named
    by a window, or owned by a team one names); a candidate never does. Raises `LeaseLost`,
    `GraphUnavailable`."""
    quiet = incident.get("quiet_until") is None and incident.get("maintenance_until") is None
    if quiet and what != "reopen":
        return False  # no window covers it, nor ever did: the common case, no query
    cause = incident.get("root_cause") or ""  # '': no cause (a null parameter is refused)
    alerting = list(dict.fromkeys(a["component"] for a in alerts if a["component"]))
    names = list(dict.fromkeys(([cause] if cause else []) + alerting))
    row = task.graph.one(
        "maintenance_covering",
        {"incident_id": incident["id"], "cause": cause, "alerting": alerting, "names": names,
         "message": what != "update"},
    )  # fmt: skip
    if row is None:
        return False
    if row["until"] is not None and row["status"] == "open":
        why = f"in maintenance until {messages.fmt_ms(row['until'])}"
        if row["reason"]:
            why += f" ({row['reason']}, by {row['by'] or 'someone'})"
        until = int(row["until"])
        if what == "page":  # looks again sooner: what the incident holds may change meanwhile
            until = min(until, int(time.time() * 1000) + HELD_PAGE_RECHECK_MS)
        task.pause(until, why)
        log.info("incident %s: %s held, %s", incident["id"], what, why)
        return True
    if row["status"] == "open" or what == "update":
        return False
    if what == "reopen" and (row["until"] is not None or held_since_reopen(incident)):
        # fired and cleared again inside a window, as a planned change does: never told
        task.complete("resolved again during maintenance: the reopen not told")
        return True
    if what == "page" and (row["until"] is not None or row["held_until"] is not None):
        # resolved inside a window: nothing to page for; mark_notified lets its follow-ups
        # (cleared alerts) finish, quietly, as there is no page to reply to
        task.complete("resolved during maintenance: not paged", mark_notified=True)
        return True
    return False


def held_since_reopen(incident: dict[str, Any]) -> bool:
    """Whether a window held `incident` (a `response_incident.cypher` row) after its latest
    reopen: `maintenance_until` (the end of the last window that covered it) is later than
    `reopened_at`. False for an incident that never reopened."""
    reopened, until = incident.get("reopened_at"), incident.get("maintenance_until")
    return reopened is not None and until is not None and int(until) > int(reopened)
