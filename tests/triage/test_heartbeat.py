"""The heartbeat: kube-prometheus' always-firing `Watchdog` opens no incident; its silence pages
the default team once per silence, its return resolves that incident as any resolve does (one
notice in the thread, the ticket closed, the page edited), and /metrics shows when it last
arrived."""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from adapters.falkordb import TenantGraph
from adapters.github import markdown
from adapters.notices import Page, fmt_ms
from adapters.slack.blocks import page_blocks, page_buttons
from gateway.cli.doctor import check_heartbeat
from gateway.cli.incident_text import incident_report, incident_table, when
from gateway.http.status import incident_detail
from gateway.ops.runtime import Runtime
from gateway.ops.upkeep import Upkeep
from tests.conftest import make_settings


def watchdog(status: str = "firing") -> dict[str, object]:
    """An Alertmanager v4 delivery of kube-prometheus' Watchdog (its rule: `vector(1)`)."""
    labels = {"alertname": "Watchdog", "severity": "none", "prometheus": "monitoring/k8s"}
    return {
        "version": "4", "groupKey": '{}:{alertname="Watchdog"}', "status": status,
        "receiver": "deadman", "externalURL": "http://alertmanager:9093",
        "alerts": [{"status": status, "labels": labels, "annotations": {
            "summary": "An alert that should always be firing to certify that Alertmanager "
                       "is working properly."},
            "startsAt": "2026-11-01T00:00:00Z", "endsAt": "0001-01-01T00:00:00Z",
            "fingerprint": "e3b0c44298fc1c14"}],
    }  # fmt: skip


@pytest.fixture
def served(falkordb, tmp_path, tenant, graph) -> Iterator[tuple[Runtime, httpx.Client]]:
    """A gateway whose heartbeat times out after 1 s, and a client of it."""
    runtime = Runtime(make_settings(falkordb, tmp_path, tenant, heartbeat_timeout="1s"))
    runtime.open()
    port = runtime.serve_http("127.0.0.1", 0)
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
        yield runtime, client
    runtime.close()


def incidents(graph: TenantGraph) -> list[dict[str, object]]:
    return graph.rows("list_incidents", {"limit": 50, "status": None})


def test_watchdog_opens_no_incident_and_shows_in_metrics(served, graph, tenant):
    _, client = served
    before = time.time()
    answer = client.post("/api/v1/alerts", json=watchdog())
    assert answer.status_code == 200, answer.text
    assert (answer.json()["heartbeats"], answer.json()["accepted"]) == (1, 0)
    assert answer.json()["opened"] == []
    assert incidents(graph) == []
    (beat,) = graph.rows("heartbeats")
    assert beat["alertname"] == "Watchdog" and beat["paged_at"] is None
    metrics = client.get("/metrics").text
    line = next(
        x for x in metrics.splitlines()
        if x.startswith("blast_heartbeat_last_seen_seconds{") and f'tenant="{tenant}"' in x
    )  # fmt: skip
    assert before - 5 <= float(line.split()[-1]) <= time.time() + 5


def test_the_log_says_a_heartbeat_arrived_and_when_it_was_last_seen(served, graph, tenant, caplog):
    """A new user's trial: each Watchdog delivery logged "webhook: 0 alerts for demo, 0 new
    incidents", and its silence "no Watchdog heartbeat since 2026-12-07
    05:31:41.781000+00:00". The first names the heartbeat; the second says the time as
    every other line does."""
    runtime, client = served
    caplog.set_level(logging.INFO)
    assert client.post("/api/v1/alerts", json=watchdog()).status_code == 200
    said = [r.getMessage() for r in caplog.records if r.name == "gateway.http.webhook"]
    assert said == [f"webhook: 1 Watchdog heartbeat for {tenant} (proof of life: no incident)"]
    time.sleep(1.3)
    (opened,) = Upkeep(runtime.store, runtime.settings, runtime.metrics).check_heartbeats()
    (silent,) = [r.getMessage() for r in caplog.records if r.name == "gateway.ops.upkeep"]
    assert f"no Watchdog heartbeat since {fmt_ms(opened['last_at'])}: " in silent, silent


def test_a_silent_watchdog_pages_the_default_team_once_per_silence(served, graph, tenant):
    runtime, client = served
    upkeep = Upkeep(runtime.store, runtime.settings, runtime.metrics)
    assert upkeep.check_heartbeats() == []  # never armed: no page
    assert client.post("/api/v1/alerts", json=watchdog()).status_code == 200
    assert upkeep.check_heartbeats() == []  # just arrived
    time.sleep(1.3)
    (opened,) = upkeep.check_heartbeats()
    assert upkeep.check_heartbeats() == []  # paged once for this silence
    incident_id = opened["incident_id"]
    runtime.make_worker().run(threading.Event(), burst=True)
    pages = [e for e in runtime.outbox.entries() if e["kind"] == "notification"]
    assert [p["incident_id"] for p in pages] == [incident_id]
    page = pages[0]
    assert page["title"].startswith("No Watchdog heartbeat for ")
    # silent about 1.3 s: said in seconds, never "0 min"
    assert re.fullmatch(
        r"No Watchdog heartbeat for [1-9]\d? s: the alerting pipeline may be down", page["title"]
    ), page["title"]
    assert page["person"] == "Hal Example"  # on call for platform, the default team
    assert "the default team" in json.dumps(page)
    # it comes back: the silence's incident resolves, and the check is armed again
    assert client.post("/api/v1/alerts", json=watchdog()).status_code == 200
    got = graph.one("incident_get", {"incident_id": incident_id})
    assert got["status"] == "resolved"
    time.sleep(1.3)
    (again,) = upkeep.check_heartbeats()
    assert again["incident_id"] != incident_id


def test_a_resolved_watchdog_is_no_proof_of_life(served, graph, tenant, caplog):
    """A trial: a resolved Watchdog was logged "1 Watchdog heartbeat … (proof of life)" and
    counted in `heartbeats`, though it stamps nothing: Prometheus stopped firing the rule, the
    opposite of proof of life. It is counted and logged apart."""
    _, client = served
    caplog.set_level(logging.INFO)
    answer = client.post("/api/v1/alerts", json=watchdog("resolved"))
    assert answer.status_code == 200, answer.text
    assert (answer.json()["heartbeats"], answer.json()["heartbeats_resolved"]) == (0, 1)
    assert incidents(graph) == [] and graph.rows("heartbeats") == []
    said = [r.getMessage() for r in caplog.records if r.name == "gateway.http.webhook"]
    assert said == [
        f"webhook: 1 Watchdog resolved for {tenant} (not proof of life: the heartbeat's rule "
        "stopped firing; no incident)"
    ]
    caplog.clear()
    # a firing one and a resolved one of another Prometheus in one delivery: each says its own
    both = watchdog()
    ended = dict(watchdog("resolved")["alerts"][0], fingerprint="a1b2c3d4e5f60718")  # type: ignore[index]
    both["alerts"] = [*both["alerts"], ended]  # type: ignore[misc]
    answer = client.post("/api/v1/alerts", json=both)
    assert (answer.json()["heartbeats"], answer.json()["heartbeats_resolved"]) == (1, 1)
    said = [r.getMessage() for r in caplog.records if r.name == "gateway.http.webhook"]
    assert said == [
        f"webhook: 1 Watchdog heartbeat for {tenant} (proof of life: no incident), 1 Watchdog "
        "resolved (not proof of life: the heartbeat's rule stopped firing)"
    ]
    assert len(graph.rows("heartbeats")) == 1


def test_the_heartbeat_off_triages_watchdog_like_any_alert(falkordb, tmp_path, tenant, graph):
    runtime = Runtime(make_settings(falkordb, tmp_path, tenant, heartbeat_alertname=""))
    runtime.open()
    try:
        port = runtime.serve_http("127.0.0.1", 0)
        answer = httpx.post(f"http://127.0.0.1:{port}/api/v1/alerts", json=watchdog())
        assert answer.json()["heartbeats"] == 0 and len(answer.json()["opened"]) == 1
    finally:
        runtime.close()
    assert json.loads(json.dumps(incidents(graph)))[0]["title"] == "Watchdog"


def silenced(runtime: Runtime, client: httpx.Client, graph: TenantGraph) -> tuple[dict, str]:
    """The Watchdog arrives once, then stays silent past its timeout: the upkeep opens its
    incident and a worker pages it. Returns the heartbeat row as it was last seen and the
    incident's id."""
    upkeep = Upkeep(runtime.store, runtime.settings, runtime.metrics)
    assert client.post("/api/v1/alerts", json=watchdog()).status_code == 200
    (beat,) = graph.rows("heartbeats")
    time.sleep(1.3)
    (opened,) = upkeep.check_heartbeats()
    runtime.make_worker().run(threading.Event(), burst=True)
    return beat, str(opened["incident_id"])


def test_the_heartbeats_return_resolves_its_incident_as_any_resolve_does(served, graph):
    """The silence's incident resolves through the resolve path (`notify_state:resolve:<id>`):
    one resolve notice in the page's thread, the ticket closed and the page edited, saying the
    heartbeat's return resolved it; a second heartbeat changes nothing more."""
    runtime, client = served
    _, incident_id = silenced(runtime, client, graph)
    page_ref = f"outbox:incident:{incident_id}:initial-notification"
    assert [e["intent_id"] for e in runtime.outbox.entries() if e["kind"] == "ticket"] == [
        f"incident:{incident_id}:ticket"
    ]
    for _ in range(2):  # it is back; Alertmanager repeats it a minute later
        assert client.post("/api/v1/alerts", json=watchdog()).status_code == 200
        runtime.make_worker().run(threading.Event(), burst=True)
    got = graph.one("incident_get", {"incident_id": incident_id})
    assert (got["status"], got["resolved_by"]) == ("resolved", "the Watchdog heartbeat coming back")
    sent = {str(e["intent_id"]): e for e in runtime.outbox.entries()}
    mine = sorted(i for i in sent if i.startswith(f"incident:{incident_id}:"))
    assert mine == sorted(
        f"incident:{incident_id}:{what}"
        for what in ("initial-notification", "ticket", "resolve-notice", "ticket-resolved",
                     "resolved")
    ), mine  # fmt: skip
    notice = sent[f"incident:{incident_id}:resolve-notice"]
    assert notice["reply_to"] == page_ref
    assert notice["text"].startswith(
        f"Resolved by the Watchdog heartbeat coming back: incident {incident_id} at "
    )
    closing = sent[f"incident:{incident_id}:ticket-resolved"]
    assert closing["kind"] == "ticket-update"
    assert closing["reply_to"] == f"outbox:incident:{incident_id}:ticket"
    edit = sent[f"incident:{incident_id}:resolved"]
    assert (edit["kind"], edit["reply_to"]) == ("update", page_ref)
    assert "Resolved by the Watchdog heartbeat coming back at " in edit["text"]
    assert edit["notice"]["status"] == "resolved"


def test_the_web_page_reads_a_silent_heartbeat_as_what_it_is(served, graph):
    """The incident of a silence says the heartbeat stopped arriving and when it was last seen,
    with what to check, and nothing of a service incident: no cause, candidates, verdict
    buttons, alerts, dependency graph, ruled-out candidates or remediations (a new user's
    trial: "no known service", "? inconclusive: no known component", Confirm cause). The API
    and the list say the same."""
    runtime, client = served
    beat, incident_id = silenced(runtime, client, graph)
    detail = client.get(f"/api/v1/incidents/{incident_id}").json()
    assert detail["heartbeat"] == {"alertname": "Watchdog", "last_seen": beat["last_at"]}
    page = client.get(f"/ui/incidents/{incident_id}").text
    seen = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(beat["last_at"] // 1000))
    head = page.split('<p class="headline" id="heartbeat">')[1].split("</p>")[0]
    assert re.sub(r"<[^>]+>", "", head).startswith(
        f"The Watchdog heartbeat stopped arriving (last seen {seen}): "
    )
    assert "none arrived for" in page.split('id="heartbeat-summary">')[1].split("</p>")[0]
    assert page.count("other alerts may be firing unseen") == 1  # the headline's, not twice
    story = page.split('id="events">')[1].split("</ol>")[0]
    assert "The heartbeat stopped arriving: the alerting pipeline may be down" in story
    for gone in (
        "Cause:",
        "nconclusive",
        "Confirm cause",
        "Wrong cause",
        "no known service",
        'id="incident-graph"',
        'id="alerts"',
        "Set aside",
        "Snooze 1 h",
        "Similar earlier incidents",
        'id="remediations"',
        "Decisions and playbooks",
    ):
        assert gone not in page, gone  # fmt: skip
    assert 'id="acknowledge"' in page and 'id="resolve"' in page  # it is still someone's page
    listed = client.get("/").text
    row = listed.split(f'data-key="{incident_id}"')[1].split("</tr>")[0]
    assert "the alerting pipeline" in row and "⚠ the Watchdog heartbeat stopped arriving" in row
    assert "no known service" not in row and "inconclusive" not in row
    assert "0/0 firing" not in row and "no alert: the Watchdog heartbeat" in row  # a trial's


def test_the_page_ticket_and_cli_read_a_silent_heartbeat_as_what_it_is(served, graph):
    """A new user's trial: the outbox page said "Root cause: inconclusive; no known component
    to check first … Evidence:" (empty), the ticket had "### Graph path" and "Recent changes
    near the cause", and `blast-radius incidents` said `inconclusive`. They say what the web
    page says: the heartbeat stopped arriving, when it was last seen, what to check."""
    runtime, client = served
    beat, incident_id = silenced(runtime, client, graph)
    sent = {str(e["intent_id"]): e for e in runtime.outbox.entries()}
    seen = fmt_ms(beat["last_at"])
    stopped = (
        f"The Watchdog heartbeat stopped arriving (last seen {seen}): Prometheus, Alertmanager "
        "or the way from Alertmanager to this gateway may be down, and other alerts may be "
        "firing unseen."
    )
    page = sent[f"incident:{incident_id}:initial-notification"]
    lines = page["text"].splitlines()
    assert lines[1] == stopped, page["text"]
    assert lines[2].startswith("The Watchdog alert fires all the time") and "Check that" in lines[2]
    # the default team by design, not because an alert named no component (a trial's finding)
    assert lines[3].startswith(
        "Paged: Hal Example (on call for platform, the default team: the Watchdog heartbeat "
        "went silent)"
    ), lines[3]
    ticket = sent[f"incident:{incident_id}:ticket"]
    assert ticket["title"] == f"[critical] {page['title']}"
    assert f"**{markdown.text(stopped)}**" in ticket["text"]
    assert "### Paged\nHal Example (on call for platform" in ticket["text"]
    for said in (page["text"], ticket["text"]):
        for gone in (
            "Root cause",
            "nconclusive",
            "Evidence",
            "Path",
            "Graph path",
            "Recent changes",
            "Candidates",
            "Steps the investigator",
            "Raw evidence",
        ):
            assert gone not in said, (gone, said)  # fmt: skip
    notice = Page.model_validate(page["notice"])
    buttons = [b.text.text for b in page_buttons(notice)]
    assert buttons == ["Acknowledge", "Resolved"]  # no cause to judge, no component to snooze
    assert [b.block_id for b in page_blocks(notice, None)] == [
        "title", "heartbeat", "cause", "verdict",
    ]  # fmt: skip
    listed = incident_table(graph.rows("list_incidents", {"status": None, "limit": 5}))
    row = next(line for line in listed.splitlines() if line.startswith(incident_id))
    assert "the Watchdog heartbeat stopped arriving" in row and "inconclusive" not in row
    assert " 0/0 " not in row
    report = incident_report(incident_detail(graph, incident_id) or {})
    assert report.splitlines()[2] == stopped.replace(seen, when(beat["last_at"]))
    assert report.splitlines()[3].startswith("The Watchdog alert fires all the time")
    assert "root cause" not in report and "alerts (" not in report
    blocks = json.dumps([b.to_dict() for b in page_blocks(notice, None)])
    for said in (page["text"], ticket["text"], report, blocks):  # said once, in the headline
        assert said.count("other alerts may be firing unseen") == 1, said


def test_doctor_warns_of_a_heartbeat_never_seen_or_silent_and_says_what_to_check(
    served, graph, tenant
):
    """A new user's trial: every `doctor` line said ok while a "No Watchdog heartbeat"
    incident was open. Never seen, silent past its timeout (with when it was last seen and the
    incident it paged): a warning (exit code 0) naming the Watchdog rule and the route to
    check; arrived within its timeout: ok."""
    runtime, client = served
    settings = runtime.settings

    def said() -> str:
        (found,) = check_heartbeat(settings)
        assert found.ok, found.line()  # never a PROBLEM: doctor exits 0
        return found.line()

    assert said() == (
        f"warning  heartbeat: {tenant}: no Watchdog heartbeat has ever arrived, so nobody is "
        "paged if alerting stops: check that Prometheus has the always-firing Watchdog rule "
        "(kube-prometheus ships it) and that Alertmanager routes it to this receiver with a "
        "repeat_interval well under BLAST_HEARTBEAT_TIMEOUT (1s) (deploy/alertmanager.yml); "
        "BLAST_HEARTBEAT_ALERTNAME=off turns the check off"
    )
    assert client.post("/api/v1/alerts", json=watchdog()).status_code == 200
    assert re.fullmatch(
        rf"ok       heartbeat: {tenant}: Watchdog last arrived [01] s ago \(timeout 1s\)", said()
    ), said()
    _, incident_id = silenced(runtime, client, graph)
    (now,) = graph.rows("heartbeats")
    line = said()
    assert line.startswith(
        f"warning  heartbeat: {tenant}: Watchdog silent since {fmt_ms(now['last_at'])} ("
    ), line
    assert line.endswith(
        f" s, over the 1s timeout); incident {incident_id} paged the default team: check that "
        "Prometheus still evaluates the Watchdog rule, that Alertmanager is up, that "
        "Alertmanager routes it to this receiver with a repeat_interval well under "
        "BLAST_HEARTBEAT_TIMEOUT (1s), and that it reaches this gateway's webhook"
    ), line
    off = settings.model_copy(update={"heartbeat_alertname": ""})
    assert check_heartbeat(off) == []
