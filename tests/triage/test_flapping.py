"""Flapping: an alert that fires again within `BLAST_REOPEN_WINDOW` of its incident's resolve
reopens that incident in the same thread, with no new page; later, or with the window off, it
is a new incident."""

from __future__ import annotations

import json
import threading

from adapters.falkordb import TenantGraph
from agents.triage.triage import TriageReport, triage
from gateway.http.payloads import normalize, parse_body
from tests.conftest import alert_body

TEN_MIN = 600_000


def episode(status: str, starts: str, ends: str | None = None) -> bytes:
    """The demo's payment alert (fingerprint 0), one episode: `starts` / `ends` as HH:MM."""
    body = json.loads(alert_body("payment"))
    end = f"2026-11-01T{ends}:00Z" if ends else "0001-01-01T00:00:00Z"
    body["alerts"][0] |= {"status": status, "startsAt": f"2026-11-01T{starts}:00Z", "endsAt": end}
    return json.dumps(body).encode()


def send(graph: TenantGraph, raw: bytes, reopen_ms: int = TEN_MIN) -> TriageReport:
    return triage(graph, normalize(parse_body(raw), "unknown"), 900_000, reopen_ms=reopen_ms)


def paged_then_resolved(gateway, graph: TenantGraph) -> str:
    """An incident on payment paged at 00:00 and resolved at 00:05."""
    incident_id = send(graph, episode("firing", "00:00")).opened[0]
    gateway.drain()
    assert send(graph, episode("resolved", "00:00", "00:05")).resolved == [incident_id]
    gateway.drain()
    return incident_id


def test_a_flap_reopens_the_incident_in_its_thread_without_a_page(gateway, graph):
    incident_id = paged_then_resolved(gateway, graph)
    report = send(graph, episode("firing", "00:12"))  # 7 min after the resolve
    assert (report.opened, report.reopened, report.incidents) == ([], [incident_id], [incident_id])
    got = graph.one("incident_get", {"incident_id": incident_id})
    assert (got["status"], got["resolved_at"]) == ("open", None)
    gateway.drain()
    out = gateway.outbox
    assert [e["incident_id"] for e in out if e["kind"] == "notification"] == [incident_id]
    page_ref = f"outbox:incident:{incident_id}:initial-notification"
    (notice,) = [
        e for e in out if str(e["intent_id"]).startswith(f"incident:{incident_id}:reopened:")
    ]
    assert notice["reply_to"] == page_ref and notice["kind"] == "followup"
    assert notice["text"].startswith("Firing again: *HighErrorRate on payment (firing, since ")
    (restated,) = [e for e in out if ":page:reopened:" in str(e["intent_id"])]
    assert restated["kind"] == "update" and f"incident {incident_id}, open)" in restated["text"]
    # it resolves again: the same incident resolves, still one incident
    again = send(graph, episode("resolved", "00:12", "00:14"))
    assert again.resolved == [incident_id]
    assert graph.one("incident_get", {"incident_id": incident_id})["status"] == "resolved"
    # and says so once more: each episode gets its own resolve notice, in the same thread
    gateway.drain()
    notices = [e for e in gateway.outbox if ":resolve-notice" in str(e["intent_id"])]
    assert [n["intent_id"] for n in notices] == [
        f"incident:{incident_id}:resolve-notice",
        f"incident:{incident_id}:resolve-notice:1",
    ]
    assert {n["reply_to"] for n in notices} == {page_ref}


def test_a_refire_after_the_window_is_a_new_incident(gateway, graph):
    incident_id = paged_then_resolved(gateway, graph)
    report = send(graph, episode("firing", "00:16"))  # 11 min after the resolve
    assert report.reopened == [] and len(report.opened) == 1 and report.opened != [incident_id]


def test_the_window_off_never_reopens(gateway, graph):
    incident_id = paged_then_resolved(gateway, graph)
    report = send(graph, episode("firing", "00:06"), reopen_ms=0)
    assert report.reopened == [] and report.opened and report.opened != [incident_id]


def test_the_webhook_reopens_within_blast_reopen_window(gateway, graph):
    incident_id = paged_then_resolved(gateway, graph)
    answer = gateway.http.post(
        "/api/v1/alerts", content=episode("firing", "00:10"),
        headers=gateway.auth | {"Content-Type": "application/json"},
    )  # fmt: skip
    assert answer.status_code == 200, answer.text
    assert (answer.json()["reopened"], answer.json()["opened"]) == ([incident_id], [])
    gateway.runtime.make_worker().run(threading.Event(), burst=True)
    pages = [e for e in gateway.outbox if e["kind"] == "notification"]
    assert len(pages) == 1


def test_a_reopen_forgets_who_resolved_the_episode_before(gateway, graph):
    incident_id = send(graph, episode("firing", "00:00")).opened[0]
    gateway.drain()
    answer = gateway.http.post(
        f"/api/v1/incidents/{incident_id}/resolve", json={"by": "Ada"}, headers=gateway.auth
    )
    assert answer.is_success, answer.text
    assert graph.one("incident_get", {"incident_id": incident_id})["resolved_by"] == "Ada"
    assert send(graph, episode("firing", "00:03")).reopened == [incident_id]
    got = graph.one("incident_get", {"incident_id": incident_id})
    # open again: nobody has resolved this episode (the CLI and the page would say so)
    assert (got["status"], got["resolved_at"], got["resolved_by"]) == ("open", None, None)
