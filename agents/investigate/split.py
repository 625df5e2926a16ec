"""Split by cause: after each investigation, the firing alerts the root cause does not explain
leave the incident for a new one with its own investigation, page and ticket.

"Explains" (`cypher/explained_by.cypher`): a business dependency path within the walk's reach
joins the alert's component and the cause, either way. An alert on no known component stays
(it joined by groupKey, with no path to judge by). A component whose firing alerts all say it
receives fewer requests than usual (failure kind `starved`: `NoRequestsDetected`,
`TrafficDrop`) is explained when a component sending it requests or messages is
(`cypher/senders.cypher`): a traffic drop points at the callers, which stopped calling because
of the cause, not along the component's own dependencies.

Which cause the incident keeps (the anchor):
1. the new root cause, when nothing was paged yet, or it is the cause that was paged, or it
   explains the paged cause (the paged cause was a victim: the responder says so in the thread
   and pages the new cause's owner);
2. else the cause that was paged: a cause once paged is never silently replaced by an
   unrelated one; the finding is set back to it and the new cause's alerts split off.
An inconclusive finding with nothing paged has no anchor: picking one of the candidates would
be confident and wrong (docs/architecture.md, evidence); the page names them all and every alerting
team
is
told. With no anchor, or when the anchor explains no firing alert, nothing is split.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from agents.failure_kinds import MONITORING_KINDS, classify, starved
from agents.investigate.checks import reached_by_calls
from agents.tasks.coordination import TaskRun
from agents.triage.triage import severity_rank

log = logging.getLogger(__name__)


def explained(task: TaskRun, components: list[str], cause: str, hops: int) -> set[str]:
    """The names among `components` that `cause` explains (see module docstring)."""
    if not components:
        return set()
    params = {"components": components, "cause": cause, "hops": hops}
    return {row["name"] for row in task.graph.rows("explained_by", params)}


def starved_explained(
    task: TaskRun, alerts: list[dict[str, Any]], ok: set[str], cause: str, hops: int
) -> set[str]:
    """The components not in `ok` whose firing alerts are all of kind `starved` and one of
    whose senders (`senders.cypher`) `cause` explains (module docstring)."""
    waiting = sorted(starved(alerts) - ok)
    if not waiting:
        return set()
    senders: dict[str, set[str]] = {}
    for row in task.graph.rows("senders", {"components": waiting}):
        senders.setdefault(row["component"], set()).add(row["sender"])
    upstream = sorted(set().union(*senders.values())) if senders else []
    fine = explained(task, upstream, cause, hops)
    return {c for c in waiting if senders.get(c, set()) & fine}


def anchor(
    task: TaskRun, root_cause: str | None, paged: str | None, hops: int
) -> tuple[str | None, bool]:
    """The cause the incident keeps, and whether the finding must be set back to it (rules 1
    and 2 of the module docstring); (None, False) when there is none."""
    if root_cause and (not paged or paged == root_cause
                       or explained(task, [paged], root_cause, hops)):  # fmt: skip
        return root_cause, False
    return (paged, True) if paged else (None, False)


def split_unexplained(
    task: TaskRun, root_cause: str | None, hops: int, by_calls: bool = False
) -> str | None:
    """Move the incident's firing alerts that its cause does not explain into a new incident
    (`cypher/split_incident.cypher`, fenced). Returns the new incident's id, or None when
    nothing was split. `root_cause`: the finding just written (None: inconclusive); `hops`:
    the walk's reach (1-6); `by_calls`: memory named `root_cause` as a caller of what alerted
    (a playbook whose `explains_alerting` goes `via: calls`), so what its calls reach, directly
    or through a component both depend on (`cypher/reached_by_calls.cypher`), is explained too:
    the other readers of the database a batch holds locks on.

    Raises `LeaseLost` (stop) or `GraphUnavailable` (retry later).
    """
    graph, incident_id = task.graph, task.claim.incident_id
    incident = graph.one("incident_get", {"incident_id": incident_id})
    if incident is None or incident["status"] != "open":
        return None
    alerts = graph.rows("incident_alerts", {"incident_id": incident_id})
    paged = incident["notified_root_cause"]
    cause, restore = anchor(task, root_cause, paged, hops)
    if cause is None:
        return None
    components = list(dict.fromkeys(a["component"] for a in alerts if a["component"]))
    ok = explained(task, components, cause, hops)
    ok |= starved_explained(task, alerts, ok, cause, hops)
    if by_calls and cause == root_cause:
        ok |= set(reached_by_calls(graph, [c for c in components if c not in ok], cause))
    moved = [a for a in alerts if a["status"] == "firing" and a["component"]
             and a["component"] not in ok]  # fmt: skip
    kept = [a for a in alerts if a not in moved]
    if not moved or not any(a["status"] == "firing" and a["component"] for a in kept):
        return None  # nothing to move, or the cause explains no firing alert: keep them together
    top = title_alert(moved)
    away = list(dict.fromkeys(a["component"] for a in moved))
    why = f"no dependency path from {', '.join(away)} to the root cause {cause}"
    summary = None
    if restore:
        instead = f"the new finding ({root_cause})" if root_cause else "the inconclusive finding"
        summary = (
            f"{cause} stays the root cause (it was paged); {instead} rested on alerts it "
            f"does not explain, on {', '.join(away)}: they were split into their own incident."
        )
    new_id = f"inc-{uuid.uuid4().hex[:12]}"
    row = task.fenced(
        "split_incident",
        {
            "incident_id": incident_id,
            "keys": [a["key"] for a in moved],
            "new_incident_id": new_id,
            "new_task_id": f"task-{uuid.uuid4().hex}",
            "severity": top["severity"],
            "severity_rank": severity_rank(top["severity"]),
            "title": top["title"],
            "opened_at": min(a["starts_at_ms"] for a in moved),
            "group_keys": list(dict.fromkeys(a["group_key"] for a in moved if a["group_key"])),
            "components": away,
            "why": why,
            "kept_components": [c for c in components if c in ok],
            "kept_alerts": len(kept),
            "keep_cause": cause,
            "keep_summary": summary,
        },
    )
    log.info("incident %s: split %d alerts into %s (%s)", incident_id, len(moved), new_id, why)
    return str(row["incident_id"])


def title_alert(moved: list[dict[str, Any]]) -> dict[str, Any]:
    """The alert that titles an incident split off (`incident_alerts` rows, at least one): a
    real alert before one about the monitoring (Grafana's `DatasourceNoData` and
    `DatasourceError`, `failure_kinds.MONITORING_KINDS`: the page would lead with a rule that
    returned no data over a real latency alert), then the most severe, then the earliest."""
    return max(moved, key=lambda a: (
        classify(a["alertname"], a.get("summary") or "") not in MONITORING_KINDS,
        severity_rank(a["severity"]), -a["starts_at_ms"],
    ))  # fmt: skip
