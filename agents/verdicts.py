"""Verdicts: what an engineer said about a diagnosis, as graph nodes the learner reads."""

from __future__ import annotations

from typing import Any, Literal

from adapters.falkordb import TenantGraph

Verdict = Literal["confirmed", "rejected", "resolved"]


def record_verdict(
    graph: TenantGraph,
    incident_id: str,
    verdict_id: str,
    verdict: Verdict,
    *,
    by: str,
    by_name: str | None = None,
    actual_cause: str | None = None,
    text: str = "",
    source: Literal["button", "reply"] = "button",
    event_id: str | None = None,
) -> dict[str, Any] | None:
    """Store a Verdict on the incident and enqueue `learn:<verdict_id>` (idempotent by id).

    `by`: the Slack user id; `actual_cause`: a component name when the engineer named one.
    Returns `{id, verdict, at}` (at: ms, UTC), or None when the incident does not exist.
    """
    return graph.one(
        "record_verdict",
        {
            "incident_id": incident_id, "id": verdict_id, "verdict": verdict,
            "actual_cause": actual_cause, "by": by, "by_name": by_name, "text": text,
            "source": source, "event_id": event_id,
        },
    )  # fmt: skip
