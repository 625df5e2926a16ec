"""Every query on the alert-to-page path finds its nodes through an index or a traversal from
one, never by scanning a label that grows with history or with the world.

A scan is invisible in a small test graph and costly in production: `respond_context` scanned
every earlier incident for the previous one with the same fingerprint, and `triage_context`
walked from every component, 45 ms per delivery in a 1,000-component world. Two traps hide
them: a `WHERE c.name IN <list variable>` (FalkorDB uses the index only for a parameter list,
so the queries UNWIND and look each name up), and an index lookup of a null parameter, which
scans the whole label (the queries coalesce such values to '').

The test runs real incidents through the gateway and the agents on the embedded FalkorDB,
records each query with the parameters it was really given, and asks FalkorDB for the plan
(GRAPH.EXPLAIN) of each.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from adapters.falkordb import EmbeddedFalkorDB, SentInTurn, TenantGraph
from gateway.ops.runtime import Runtime
from tests.conftest import alert_body, make_settings

#: Labels whose node count grows with stored history or with the size of the world. Teams,
#: people, shifts and playbooks are sized by the organisation (tens to hundreds) and left out.
GROWING = {"Incident", "IncidentText", "Alert", "Task", "Action", "Step", "Finding", "Fact",
           "Verdict", "Change", "Component"}  # fmt: skip
#: A scan of a label in a plan: FalkorDB names the operation and the node as `(var:Label)`.
SCAN = re.compile(r"(?:Node By Label Scan|All Node Scan) \| \((?:\w+)?:?(\w*)\)")


def resolved(body: bytes) -> bytes:
    """The same Alertmanager delivery, resolved."""
    payload = json.loads(body)
    payload["status"] = "resolved"
    for alert in payload["alerts"]:
        alert["status"] = "resolved"
        alert["endsAt"] = alert["startsAt"]
    return json.dumps(payload).encode()


def one_delivery(services: list[str], index: int) -> bytes:
    """One Alertmanager delivery with a firing alert on each of `services` (own fingerprints),
    starting at `alert_body`'s hour `index`: triage writes them in one batch."""
    payloads = [json.loads(alert_body(service, index)) for service in services]
    for k, payload in enumerate(payloads):
        payload["alerts"][0]["fingerprint"] = f"{index:08x}{k:08x}"
    payloads[0]["alerts"] = [payload["alerts"][0] for payload in payloads]
    return json.dumps(payloads[0]).encode()


def scans(plan: str) -> set[str]:
    """The labels a plan scans whole (an empty name: every node)."""
    return {m.group(1) or "(all nodes)" for m in SCAN.finditer(plan)}


def test_alert_to_page_queries_never_scan_a_growing_label(
    falkordb: EmbeddedFalkorDB, tmp_path: Path, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[TenantGraph, str, dict[str, Any]]] = []
    original, sending = TenantGraph.rows, SentInTurn.send

    def recording(self: TenantGraph, query: str, params: dict[str, Any] | None = None) -> Any:
        calls.append((self, query, dict(params or {})))
        return original(self, query, params)

    def sent(self: SentInTurn, query: str, params: dict[str, Any]) -> None:
        calls.append((self._graph, query, dict(params)))
        sending(self, query, params)

    runtime = Runtime(make_settings(falkordb, tmp_path, tenant))
    runtime.open()
    try:
        port = runtime.serve_http("127.0.0.1", 0)
        # one-alert incidents, one alert joining one, one delivery of alerts on checkout,
        # payment behind it and an unknown service (batch triage), and the resolve of each:
        # webhook, investigation, page, ticket, cleared notices
        bodies = [alert_body(s, i) for i, s in enumerate(("payment", "cart", "frontend"))]
        # a lone alert of payment's Alertmanager group joining its incident (`triage_lone`
        # reads for `triage_alert`, which writes it)
        bodies.append(alert_body("payment", 0).replace(b'"0000000000000000"', b'"c0"'))
        bodies.append(one_delivery(["checkout", "payment", "checkout", "no-such-service"], 5))
        monkeypatch.setattr(TenantGraph, "rows", recording)
        monkeypatch.setattr(SentInTurn, "send", sent)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            for batch in (bodies, [resolved(b) for b in bodies]):
                for body in batch:
                    answer = http.post("/api/v1/alerts", content=body,
                                       headers={"Content-Type": "application/json"})  # fmt: skip
                    assert answer.status_code == 200, answer.text
                runtime.make_worker().run(threading.Event(), burst=True)
        monkeypatch.setattr(TenantGraph, "rows", original)
        monkeypatch.setattr(SentInTurn, "send", sending)
        pages = [e for e in runtime.outbox.entries() if e["kind"] == "notification"]
        # a shape per query and set of null parameters: a null lookup value changes the plan
        shapes: dict[tuple[str, frozenset[str]], tuple[TenantGraph, dict[str, Any]]] = {}
        for graph, query, params in calls:
            nulls = frozenset(k for k, v in params.items() if v is None)
            shapes.setdefault((query, nulls), (graph, params))
        found = {
            (query, ", ".join(sorted(nulls)) or "-"): scans(graph.explain(query, params)) & GROWING
            for (query, nulls), (graph, params) in shapes.items()
        }
    finally:
        runtime.close()
    assert len(pages) == 4  # the scenario ran: four incidents paged
    names = {query for query, _ in found}
    for hot in ("triage_lone", "triage_context", "triage_alert", "triage_batch", "claim_task",
                "investigation_context",
                "write_finding", "respond_context", "reserve_actions", "reserve_action",
                "complete_task"):  # fmt: skip
        assert hot in names, hot
    assert {key: labels for key, labels in found.items() if labels} == {}
