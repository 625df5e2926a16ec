"""Retention (agents/retention.py): an incident resolved longer ago than the retention period
loses its bulky fields once; newer and open incidents keep theirs; who was paged stays."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from adapters.falkordb import GraphStore, TenantGraph
from adapters.outbox import Outbox
from agents.investigator import Investigator
from agents.responder import Responder
from agents.retention import DAY_MS, trim_old_incidents
from agents.triage import triage
from agents.worker import Worker
from gateway.payloads import normalize, parse_body
from tests.conftest import alert_body

WINDOW_MS = 900_000


def deliver(graph: TenantGraph, service: str, index: int, resolved: bool = False) -> str:
    """Triage one alert (resolved: its resolve) and return its incident id."""
    body = json.loads(alert_body(service, index))
    if resolved:
        body["status"] = body["alerts"][0]["status"] = "resolved"
        body["alerts"][0]["endsAt"] = body["alerts"][0]["startsAt"].replace(":00:00Z", ":30:00Z")
    alerts = normalize(parse_body(json.dumps(body).encode()), "warning")
    return triage(graph, alerts, WINDOW_MS).incidents[0]


def test_old_resolved_incidents_are_trimmed_once_and_keep_who_was_paged(
    store: GraphStore, graph: TenantGraph, tenant: str, tmp_path: Path
) -> None:
    old = deliver(graph, "checkout", 0)
    young = deliver(graph, "ad", 48)  # two days later
    outbox = Outbox(tmp_path / "outbox.jsonl")
    Worker(store, [tenant], [Investigator(), Responder(outbox, outbox)]).run(
        threading.Event(), burst=True
    )
    deliver(graph, "checkout", 0, resolved=True)
    deliver(graph, "ad", 48, resolved=True)
    resolved_at = graph.rows("incident_alerts", {"incident_id": old})[0]["ends_at_ms"]
    # 30 days of retention, 31 days after the first resolve, 29 after the second
    now_ms = resolved_at + 31 * DAY_MS
    assert trim_old_incidents(graph, 30, now_ms, batch=1) == 1
    assert trim_old_incidents(graph, 30, now_ms) == 0  # trimmed once
    assert trim_old_incidents(graph, 0, now_ms + 100 * DAY_MS) == 0  # 0 days: retention off

    trimmed = graph.rows("incident_alerts", {"incident_id": old})[0]
    assert (trimmed["labels_json"], trimmed["annotations_json"]) == ("{}", "{}")
    assert trimmed["status"] == "resolved" and trimmed["fingerprint"]
    kept = graph.rows("incident_alerts", {"incident_id": young})[0]
    assert json.loads(kept["labels_json"])["service"] == "ad"

    def investigation_steps(incident_id: str) -> list[dict[str, object]]:
        rows = graph.rows("web_incident_steps", {"incident_id": incident_id})
        return [r for r in rows if r["kind"] in ("investigate", "reinvestigate")]

    assert investigation_steps(old) == []  # the investigation's steps
    assert len(investigation_steps(young)) > 2
    paged = graph.one("incident_paged", {"incident_id": old})
    assert paged is not None and json.loads(paged["result"])  # the page still names its people
