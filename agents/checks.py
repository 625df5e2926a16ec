"""Checks: a playbook's conditions, as data, each answered by a real evidence call.

A check is a JSON object with a `type`:

- `no_recent_change` — no Change on the other alerting components (not the candidate) in the
  lookback window before the incident opened. A fresh deploy upstream explains the symptoms
  better than the remembered failure.
- `recent_change` — a Change on the candidate in that window.
- `alert_kind` `{kind}` — an alert on the candidate is of this failure kind
  (`agents.failure_kinds`), whatever its wording.
- `alert_firing` `{alertname}` — an alert of exactly this name on the candidate.
- `prometheus` `{query, op, threshold}` — an instant query (at the incident's opening time)
  whose first sample compares true against the threshold; `$component` in the query is replaced
  by the candidate's name, quoted as a PromQL string. Needs `PROMETHEUS_URL`; without it the
  check cannot hold (unverified evidence is not trusted).

Checks run in order and stop at the first that does not hold (`run_checks`). Each result keeps
the raw answer of its evidence call.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable
from typing import Any

from adapters.notify import AdapterError
from agents.failure_kinds import classify
from agents.tools.base import ToolContext

#: How long before the incident opened a change still counts as recent (ms).
CHANGE_LOOKBACK_MS = 2 * 60 * 60 * 1000
OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le, "==": operator.eq,
}  # fmt: skip


#: What checks may look at: the incident's alerts, its alerting components, when it opened
#: (ms, UTC) and the evidence sources — the same context the investigation tools get.
Evidence = ToolContext


def promql_string(value: str) -> str:
    """A PromQL double-quoted string literal (JSON escaping is valid PromQL escaping)."""
    return json.dumps(value)


def evaluate(check: dict[str, Any], candidate: str, ev: Evidence) -> dict[str, Any]:
    """Answer one check for `candidate`: `{"held": bool, "raw": …, "detail": str}`.

    Never raises for missing evidence: an unreachable source gives `held: False` with the reason.
    """
    kind = check.get("type")
    since, until = ev.opened_ms - CHANGE_LOOKBACK_MS, ev.opened_ms
    if kind in ("no_recent_change", "recent_change"):
        scope = (
            [c for c in ev.alerting if c != candidate]
            if kind == "no_recent_change"
            else [candidate]
        )
        rows = ev.graph.rows(
            "recent_changes", {"components": scope, "since": since, "until": until}
        )
        raw = [{k: r[k] for k in ("component", "kind", "ref", "at")} for r in rows]
        held = not rows if kind == "no_recent_change" else bool(rows)
        what = ", ".join(f"{r['kind']} {r['ref']} on {r['component']}" for r in raw) or "none"
        return {"held": held, "raw": raw, "detail": f"changes in the last 2 h: {what}"}
    if kind in ("alert_kind", "alert_firing"):
        mine = [a for a in ev.alerts if a["component"] == candidate]
        if kind == "alert_kind":
            hits = [
                a for a in mine if classify(a["alertname"], a.get("summary", "")) == check["kind"]
            ]
            want = f"a {check['kind']} alert"
        else:
            hits = [a for a in mine if a["alertname"] == check["alertname"]]
            want = f"alert {check['alertname']}"
        raw = [{"key": a["key"], "alertname": a["alertname"]} for a in hits]
        return {"held": bool(hits), "raw": raw, "detail": f"{want} on {candidate}: {len(hits)}"}
    if kind == "prometheus":
        if ev.prometheus is None:
            return {
                "held": False,
                "raw": None,
                "detail": "PROMETHEUS_URL is not set: cannot verify",
            }
        query = str(check["query"]).replace("$component", promql_string(candidate))
        try:
            samples = ev.prometheus.instant(query, ev.opened_ms / 1000)
        except AdapterError as exc:
            return {"held": False, "raw": None, "detail": f"prometheus: {exc}"}
        compare = OPERATORS[check.get("op", ">")]
        held = bool(samples) and compare(samples[0]["value"], float(check["threshold"]))
        return {"held": held, "raw": samples[:5], "detail": f"{query} -> {samples[:1]}"}
    return {"held": False, "raw": None, "detail": f"unknown check type {kind!r}"}
