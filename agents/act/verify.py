"""Verify a remediation independently (task `verify_remediation`, enqueued by the run).

Not the adapter's word ("dispatched") but the evidence: the remediation worked when, within
its `verify_within` (default 10 minutes) of the run,
- every alert of the incident resolved (Alertmanager sent `resolved`), or
- the failure ratio of calls into the root cause (service-graph metrics, from the run on) fell
  below the threshold of the playbook's `calls_failing` check.
Each look is a checkpointed step; between looks the task is paused (`POLL_S`, less when
`verify_within` is short). At the deadline, with alerts still firing: `failed` when the ratio
was measured at or above the threshold or the playbook has no ratio to measure (the alerts are
the evidence), `unknown` when the ratio could not be measured (no service-graph series,
Prometheus down or not configured). An incident with no alerts left to look at is `unknown`.
"""

from __future__ import annotations

import json
from typing import Any

from adapters.falkordb import TenantGraph
from adapters.notify import AdapterError
from adapters.prometheus import Prometheus
from agents.investigate.tools.base import ToolContext
from agents.investigate.tools.evidence import WINDOW_BEFORE_MS, EdgeInput, edge_health

#: The longest pause between two looks (s).
POLL_S = 30.0
#: The shortest (s).
MIN_POLL_S = 1.0


def poll_s(within_s: float) -> float:
    """Seconds between looks: a tenth of `verify_within`, within [MIN_POLL_S, POLL_S]."""
    return min(POLL_S, max(MIN_POLL_S, within_s / 10))


def threshold(checks_json: str | None) -> float | None:
    """The playbook's `calls_failing` threshold (0-1), or None when it has none."""
    found = [c["threshold"] for c in json.loads(checks_json or "[]") if c.get("type") ==
             "calls_failing"]  # fmt: skip
    return float(min(found)) if found else None


def failure_ratio(
    graph: TenantGraph, prometheus: Prometheus | None, root: str, ran_at_ms: int
) -> dict[str, Any]:
    """The ratio of failed calls into `root` since the run (`ran_at_ms`, ms UTC): `{status,
    ratio, calls, failed, detail}` (`ratio` None unless status is ok)."""
    # edge_health's window runs from WINDOW_BEFORE_MS before `opened_ms`: start it at the run
    ctx = ToolContext(graph, [], [root], ran_at_ms + WINDOW_BEFORE_MS, prometheus)
    try:
        result = edge_health(ctx, EdgeInput(components=[root]))
    except AdapterError as exc:
        return {"status": "error", "ratio": None, "detail": str(exc)[:300]}
    rows = [r for r in (result.data or []) if r["server"] == root]
    calls = sum(float(r["calls"] or 0) for r in rows)
    failed = sum(float(r["failed"] or 0) for r in rows)
    if result.status != "ok" or calls <= 0:
        return {"status": "no_data" if result.status == "ok" else result.status, "ratio": None,
                "detail": result.detail or f"no calls into {root} since the run"}  # fmt: skip
    return {
        "status": "ok",
        "ratio": round(failed / calls, 4),
        "calls": calls,
        "failed": failed,
        "detail": f"{failed:.0f} of {calls:.0f} calls into {root} failed since the run",
    }


def look(graph: TenantGraph, prometheus: Prometheus | None, row: dict[str, Any]) -> dict[str, Any]:
    """One look: `{verdict: 'verified' | None, firing, alerts, ratio…, detail}`."""
    rem = row["remediation"]
    alerts = graph.rows("incident_alerts", {"incident_id": row["incident_id"]})
    firing = [a["alertname"] for a in alerts if a["status"] == "firing"]
    seen: dict[str, Any] = {"alerts": len(alerts), "firing": len(firing)}
    if alerts and not firing:
        return seen | {
            "verdict": "verified",
            "detail": f"all {len(alerts)} alerts of the incident resolved",
        }
    limit = threshold(row["checks_json"])
    if limit is None:
        return seen | {"verdict": None, "threshold": None,
                       "detail": f"{len(firing)} of {len(alerts)} alerts still firing "
                       f"({', '.join(sorted(set(firing))[:5])})"}  # fmt: skip
    ratio = failure_ratio(graph, prometheus, rem["component"], int(rem["ran_at"]))
    seen |= {"threshold": limit, "ratio_status": ratio["status"], "ratio": ratio["ratio"]}
    if ratio["ratio"] is not None and ratio["ratio"] < limit:
        return seen | {"verdict": "verified",
                       "detail": f"{ratio['detail']}: {ratio['ratio']:.2%}, under the "
                       f"playbook's threshold {limit:.2%}"}  # fmt: skip
    shown = "not measured" if ratio["ratio"] is None else f"{ratio['ratio']:.2%}"
    return seen | {"verdict": None,
                   "detail": f"{len(firing)} of {len(alerts)} alerts still firing; failure "
                   f"ratio into {rem['component']} {shown} ({ratio['detail']}), threshold "
                   f"{limit:.2%}"}  # fmt: skip


def final(seen: dict[str, Any]) -> str:
    """The outcome at the deadline of a look that did not verify (module docstring)."""
    if not seen["alerts"]:
        return "unknown"
    if seen.get("threshold") is None or seen.get("ratio") is not None:
        return "failed"
    return "unknown"
