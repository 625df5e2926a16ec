"""A resolved alert only closes what fired (Alertmanager semantics): one the gateway never
received firing is recorded (`unfired` in the webhook answer) but joins no incident, opens
none, and adds nothing to any page or thread. And an alert on no known component in a
payment group is context for the group's incident, never one of its components or candidates."""

from __future__ import annotations

from typing import Any

import pytest

from adapters.falkordb import TenantGraph
from tests.conftest import Gateway

STARTS = "2026-11-30T02:53:51.603Z"
ENDS = "2026-11-30T03:01:00Z"
OPEN_END = "0001-01-01T00:00:00Z"


def alert(name: str, service: str, status: str = "firing", fp: str = "") -> dict[str, Any]:
    """One Alertmanager v4 alert on `service`, started at `STARTS`."""
    return {
        "status": status, "labels": {"alertname": name, "service": service, "severity": "critical"},
        "annotations": {"summary": f"{name} on {service}"}, "startsAt": STARTS,
        "endsAt": ENDS if status == "resolved" else OPEN_END,
        "generatorURL": "http://prometheus:9090/graph", "fingerprint": fp or f"fp-{name}",
    }  # fmt: skip


def post(gw: Gateway, group: str, *alerts: dict[str, Any]) -> dict[str, Any]:
    """Deliver `alerts` as one notification of Alertmanager group `group`; the answer."""
    body = {
        "version": "4", "groupKey": f'{{}}:{{group="{group}"}}', "status": "firing",
        "receiver": "blast-radius", "externalURL": "http://alertmanager:9093",
        "alerts": list(alerts),
    }  # fmt: skip
    answer = gw.http.post("/api/v1/alerts", json=body, headers=gw.auth)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def incident(gw: Gateway, incident_id: str) -> dict[str, Any]:
    """`GET /api/v1/incidents/{id}`."""
    answer = gw.http.get(f"/api/v1/incidents/{incident_id}", headers=gw.auth)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def paged_payment_incident(gw: Gateway) -> str:
    """An acknowledged incident on payment and checkout (one group), paged."""
    answer = post(gw, "checkout", alert("HighErrorRate", "payment"), alert("Errors", "checkout"))
    (incident_id,) = answer["opened"]
    gw.drain()
    acked = gw.http.post(f"/api/v1/incidents/{incident_id}/ack", json={"by": "Di"}, headers=gw.auth)
    assert acked.status_code == 200, acked.text
    gw.drain()
    return str(incident_id)


@pytest.mark.parametrize("gateway", ["open"], indirect=True)
def test_a_resolve_never_seen_firing_leaves_an_open_incident_alone(
    gateway: Gateway, graph: TenantGraph
) -> None:
    incident_id = paged_payment_incident(gateway)
    before = incident(gateway, incident_id)
    sent = len(gateway.outbox)
    # email is one hop from checkout: a firing alert there would join; a resolve must not
    ghost = post(gateway, "email", alert("Ghost", "email", "resolved"))
    never = post(gateway, "checkout", alert("NeverFired", "payment", "resolved"))
    for answer, name in ((ghost, "Ghost"), (never, "NeverFired")):
        assert answer["accepted"] == 1
        assert (answer["incidents"], answer["opened"], answer["resolved"]) == ([], [], [])
        assert answer["unfired"] == [f"fp-{name}@{STARTS}"]
    gateway.drain()
    after = incident(gateway, incident_id)
    assert [a["alertname"] for a in after["alerts"]] == [a["alertname"] for a in before["alerts"]]
    assert (after["status"], after["finding"]) == ("open", before["finding"])
    assert len(gateway.outbox) == sent  # no page edit, no "Cleared" line
    # recorded, in no incident
    stored = graph.rows("chaos_alerts", {"keys": [f"fp-Ghost@{STARTS}", f"fp-NeverFired@{STARTS}"]})
    assert sorted((r["key"], r["incident_id"]) for r in stored) == [
        (f"fp-Ghost@{STARTS}", None), (f"fp-NeverFired@{STARTS}", None),
    ]  # fmt: skip


@pytest.mark.parametrize("gateway", ["open"], indirect=True)
def test_a_resolve_never_seen_firing_opens_nothing_and_pages_nobody(gateway: Gateway) -> None:
    answer = post(gateway, "quote", alert("Ghost2", "quote", "resolved"))
    assert (answer["accepted"], answer["opened"], answer["incidents"]) == (1, [], [])
    assert answer["unfired"] == [f"fp-Ghost2@{STARTS}"]
    # a resend, and then a stale firing of the same episode, change nothing either
    assert post(gateway, "quote", alert("Ghost2", "quote", "resolved"))["unfired"] == [
        f"fp-Ghost2@{STARTS}"
    ]
    late = post(gateway, "quote", alert("Ghost2", "quote"))
    assert (late["accepted"], late["opened"], late["incidents"]) == (1, [], [])
    gateway.drain()
    listed = gateway.http.get("/api/v1/incidents?status=resolved", headers=gateway.auth).json()
    assert listed["incidents"] == []
    assert gateway.http.get("/api/v1/incidents", headers=gateway.auth).json()["incidents"] == []
    assert gateway.outbox == []  # no page, no ticket, no resolve notice


@pytest.mark.parametrize("gateway", ["open"], indirect=True)
def test_a_resolve_that_fired_still_closes_its_incident(gateway: Gateway) -> None:
    opened = post(gateway, "quote", alert("Real", "quote"))["opened"]
    answer = post(gateway, "quote", alert("Real", "quote", "resolved"))
    assert (answer["resolved"], answer["unfired"]) == (opened, [])


@pytest.mark.parametrize("gateway", ["open"], indirect=True)
def test_an_unmatched_alert_is_context_never_a_component_or_candidate(gateway: Gateway) -> None:
    answer = post(
        gateway, "checkout",
        alert("HighErrorRate", "payment"), alert("Errors", "checkout"), alert("Odd", "nosuchsvc"),
    )  # fmt: skip
    (incident_id,) = answer["opened"]
    assert answer["unmatched"] == [f"fp-Odd@{STARTS}"] and answer["incidents"] == [incident_id]
    gateway.drain()
    got = incident(gateway, incident_id)
    (odd,) = [a for a in got["alerts"] if a["alertname"] == "Odd"]
    assert odd["component"] is None
    assert odd["joined_via"] == 'same Alertmanager group {}:{group="checkout"}'
    finding = got["finding"]
    assert "nosuchsvc" not in finding["candidates"] and "nosuchsvc" not in finding["summary"]
