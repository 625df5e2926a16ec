"""The heartbeat (a dead man's switch): an always-firing alert such as kube-prometheus'
`Watchdog` proves the whole alerting pipeline works (Prometheus evaluates rules, Alertmanager
routes, its webhook reaches us). It never opens an incident; its silence does.

- On receipt, firing heartbeat alerts are taken out of the delivery before triage and only
  stamp the tenant's `(:Heartbeat {alertname, last_at, paged_at})` on the database clock
  (`cypher/heartbeat_seen.cypher`). The first one arms the check.
- The silence check (`overdue`, run by `serve`'s upkeep) finds an armed heartbeat silent for
  longer than the timeout and, in one query, marks it paged and opens one incident with its
  `respond` task (`cypher/heartbeat_overdue.cypher`): no alert names a component, so routing
  pages the default team (the root route) once, through the page's intent. A heartbeat that
  arrives again resolves that incident as a resolve by hand does (`resolved_by` "the Watchdog
  heartbeat coming back", and the responder's `notify_state:resolve:<id>` task: one resolve
  notice in the page's thread, the ticket closed, the page edited) and re-arms the check.

Alertmanager resends a firing alert every `repeat_interval` (4 h by default): the route of the
heartbeat must repeat well within the timeout (kube-prometheus' Watchdog route: 1 min or so).
"""

from __future__ import annotations

from typing import Any

from adapters.falkordb import TenantGraph
from agents.triage.alerts import NormalizedAlert


def stopped(alertname: str, last_seen: str | None) -> str:
    """What the incident of a heartbeat's silence is, in one sentence (the page, the ticket and
    the CLI say it as the web page does): `last_seen`, when it last arrived, as the caller
    writes times (None: not known)."""
    seen = f" (last seen {last_seen})" if last_seen else ""
    return (
        f"The {alertname} heartbeat stopped arriving{seen}: Prometheus, Alertmanager or the way "
        "from Alertmanager to this gateway may be down, and other alerts may be firing unseen."
    )


def split(
    alerts: list[NormalizedAlert], alertname: str
) -> tuple[list[NormalizedAlert], list[NormalizedAlert]]:
    """(heartbeat alerts, the others) of one delivery; `alertname` "" means no heartbeat (every
    alert is triaged). A resolved heartbeat is one too: it opens no incident either, but it is
    no proof of life (a rule that stopped firing), so `seen` counts only firing ones."""
    if not alertname:
        return [], alerts
    beats = [a for a in alerts if a.alertname == alertname]
    return beats, [a for a in alerts if a.alertname != alertname]


def seen(graph: TenantGraph, alertname: str, beats: list[NormalizedAlert]) -> dict[str, Any] | None:
    """Stamp the heartbeat when `beats` has a firing one: `{last_at, recovered}` (ms UTC, and
    the id of the silence's incident it resolved now, with its resolve notice task, or None);
    None when none fired. Raises `GraphUnavailable`."""
    firing = sum(1 for a in beats if a.status == "firing")
    if not firing:
        return None
    return graph.one("heartbeat_seen", {"alertname": alertname, "count": firing})


def overdue(graph: TenantGraph, timeout_ms: int) -> list[dict[str, Any]]:
    """Open the incident of every heartbeat silent for longer than `timeout_ms` and not paged
    for this silence yet; rows `{alertname, last_at, incident_id}`, one per incident opened
    now (a second call finds nothing more). Raises `GraphUnavailable`."""
    return graph.rows("heartbeat_overdue", {"timeout_ms": timeout_ms})


def heartbeats(graph: TenantGraph) -> list[dict[str, Any]]:
    """The tenant's heartbeats: rows `{alertname, last_at, paged_at, incident_id, silent_ms}`
    (ms UTC; `silent_ms`: since `last_at`, on the database clock)."""
    return graph.rows("heartbeats")
