"""Coordination on the real FalkorDB: claim, lease expiry, fencing, the reaper, and actions once
per intent (reserved actions reconciled, two workers racing for one intent)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from adapters.falkordb import GraphStore, TenantGraph
from adapters.notices import Page
from adapters.notify import OutboundMessage
from adapters.outbox import Outbox
from agents.investigate.investigator import Investigator
from agents.respond.responder import Responder
from agents.tasks.coordination import (
    Claim,
    Intended,
    LeaseLost,
    TaskRun,
    claim,
    reap,
    reserve_batch,
)
from agents.tasks.kinds import ROLE_KINDS
from agents.tasks.worker import Worker
from agents.triage.triage import triage
from bench.round_trips import counting
from gateway.http.payloads import normalize, parse_body
from tests.conftest import alert_body

INVESTIGATE = list(ROLE_KINDS["investigator"])
RESPOND = list(ROLE_KINDS["responder"])
#: A lease short enough to let expire in a test, long enough for a busy machine to write in it.
SHORT_MS = 300
EXPIRED_S = 0.5


def open_incident(graph: TenantGraph, service: str = "payment", index: int = 0) -> str:
    """Triage one firing alert on `service`; return the new incident id."""
    alerts = normalize(parse_body(alert_body(service, index)), "unknown")
    report = triage(graph, alerts, 900_000)
    return report.opened[0]


def investigated(store: GraphStore, graph: TenantGraph, tenant: str) -> str:
    """An incident whose investigation is done, so its `respond` task is open."""
    incident = open_incident(graph)
    Worker(store, [tenant], [Investigator()], role="investigator").run(
        threading.Event(), burst=True
    )
    return incident


def message(incident: str, intent: str) -> OutboundMessage:
    return OutboundMessage(
        intent_id=intent, incident_id=incident, kind="notification",
        notice=Page(incident_id=incident, title="t"),
    )  # fmt: skip


def test_claim_takes_the_oldest_open_task_once(graph):
    first, second = open_incident(graph, "payment"), open_incident(graph, "ad", 1)
    a = claim(graph, INVESTIGATE, "a", 30_000, 5)
    b = claim(graph, INVESTIGATE, "b", 30_000, 5)
    assert (a.incident_id, a.epoch, a.attempts) == (first, 1, 1)
    assert (b.incident_id, b.epoch) == (second, 1)
    assert claim(graph, INVESTIGATE, "c", 30_000, 5) is None


def test_claim_takes_pages_first_then_diagnoses_then_follow_ups_then_background_work(graph):
    """Priority across kinds (agents/tasks/kinds.py), age within one: created oldest first as
    learn, reinvestigate, readback, investigate, respond, they are claimed page first."""
    seeded = ["respond", "learn", "reinvestigate", "readback", "investigate"]  # made 1,2,3,4,0
    graph.one("bench_seed_tasks", {"n": 5, "prefix": "prio-", "kinds": seeded, "status": "open"})
    order = []
    while (taken := claim(graph, list(ROLE_KINDS["any"]), "w", 30_000, 5)) is not None:
        order.append(taken.kind)
    assert order == ["respond", "investigate", "readback", "learn", "reinvestigate"]


def test_expired_lease_next_write_gets_zero_rows_and_writes_nothing(graph):
    open_incident(graph)
    held = claim(graph, INVESTIGATE, "slow", SHORT_MS, 5)
    task = TaskRun(graph, held, SHORT_MS)
    time.sleep(EXPIRED_S)
    with pytest.raises(LeaseLost, match="lease lost at step 1"):
        task.step("incident_alerts", {}, lambda: ["would be stored"])
    assert graph.rows("task_steps", {"task_id": held.task_id}) == []
    with pytest.raises(LeaseLost):
        task.heartbeat()


def test_stale_workers_late_write_is_refused(graph):
    open_incident(graph)
    stale = TaskRun(graph, claim(graph, INVESTIGATE, "stale", SHORT_MS, 5), SHORT_MS)
    stale.step("incident_alerts", {}, lambda: [1])
    time.sleep(EXPIRED_S)
    fresh_claim = claim(graph, INVESTIGATE, "fresh", 30_000, 5)
    assert (fresh_claim.task_id, fresh_claim.epoch) == (stale.claim.task_id, 2)
    assert fresh_claim.taken_over
    fresh = TaskRun(graph, fresh_claim, 30_000)
    assert fresh.step("incident_alerts", {}, lambda: pytest.fail("re-ran a stored step")) == [1]
    for late in (
        lambda: stale.step("coverage_walk", {}, lambda: ["late"]),
        stale.heartbeat,
        lambda: stale.complete("late"),
    ):
        with pytest.raises(LeaseLost):
            late()
    assert stale.release("late", 5) is None
    assert fresh.step("coverage_walk", {}, lambda: ["fresh"]) == ["fresh"]
    steps = graph.rows("task_steps", {"task_id": fresh_claim.task_id})
    assert [(s["n"], s["result"]) for s in steps] == [(1, "[1]"), (2, '["fresh"]')]
    fresh.complete("done")


def test_reaper_fails_a_task_whose_workers_keep_dying(graph):
    open_incident(graph)
    for attempt in (1, 2):
        held = claim(graph, INVESTIGATE, f"dies-{attempt}", 50, 2)
        assert held is not None and held.attempts == attempt
        time.sleep(0.1)  # the worker "died": its lease runs out
    assert claim(graph, INVESTIGATE, "next", 50, 2) is None  # no attempts left
    failed = reap(graph, 2)
    assert [row["id"] for row in failed] == [held.task_id]
    assert failed[0]["reason"] == "lease expired on attempt 2 of 2 (worker dies-2 died or stalled)"
    assert reap(graph, 2) == []
    assert {r["status"]: r["tasks"] for r in graph.rows("task_summary")} == {"failed": 1}


def test_a_graceful_release_does_not_charge_the_attempt(graph):
    open_incident(graph)
    task = TaskRun(graph, claim(graph, INVESTIGATE, "a", 30_000, 1), 30_000)
    assert task.release("worker shut down before finishing", 1, charge=False) == "open"
    again = claim(graph, INVESTIGATE, "b", 30_000, 1)
    assert (again.attempts, again.epoch) == (1, 2)
    assert TaskRun(graph, again, 30_000).release("adapter down", 1) == "failed"


def test_a_paused_task_waits_for_its_resume_time_and_keeps_its_steps(graph):
    open_incident(graph)
    task = TaskRun(graph, claim(graph, INVESTIGATE, "a", 30_000, 1), 30_000)
    assert task.step("one", {}, lambda: {"v": 1}) == {"v": 1}
    now = graph.one("task_pauses", {"task_id": task.claim.task_id})
    assert now == {"pauses": 0}
    resume_at = int(time.time() * 1000) + 600
    assert task.pause(resume_at, "every model is cooling down") == 1
    row = graph.one("task_summary")
    assert row["status"] == "paused"
    assert claim(graph, INVESTIGATE, "b", 30_000, 1) is None  # not before the resume time
    time.sleep(0.8)
    again = claim(graph, INVESTIGATE, "b", 30_000, 1)  # the pause charged no attempt
    assert (again.attempts, again.epoch, again.taken_over) == (1, 2, False)
    resumed = TaskRun(graph, again, 30_000)
    assert resumed.pauses == 1 and resumed.resumed_steps == 1
    assert resumed.step("one", {}, lambda: {"v": 2}) == {"v": 1}  # stored, not run again


@pytest.mark.parametrize("sent_before_crash", [True, False])
def test_an_action_left_reserved_is_reconciled_not_resent(
    store, graph, tenant, tmp_path, sent_before_crash
):
    outbox = Outbox(tmp_path / "outbox.jsonl")
    incident = investigated(store, graph, tenant)
    crashed = TaskRun(graph, claim(graph, RESPOND, "crashed", SHORT_MS, 5), SHORT_MS)
    intent = f"incident:{incident}:initial-notification"
    reserved = crashed.fenced(
        "reserve_action",
        {"intent_id": intent, "kind": "notification", "attempt_id": crashed.claim.attempt_id,
         "adapter": outbox.name, "lease_ms": SHORT_MS, "ahead": []},
    )  # fmt: skip
    assert (reserved["status"], reserved["mine"]) == ("reserved", True)
    if sent_before_crash:  # the call went out, then the worker died before recording it
        outbox.send(message(incident, intent))
    time.sleep(EXPIRED_S)
    worker = Worker(store, [tenant], [Responder(outbox, outbox)], role="responder")
    worker.run(threading.Event(), burst=True)
    lines = [e for e in outbox.entries() if e["intent_id"] == intent]
    assert len(lines) == 1
    assert (lines[0]["title"] == "t") is sent_before_crash
    actions = {a["intent_id"]: a for a in graph.rows("incident_actions", {"incident_id": incident})}
    assert actions[intent]["status"] == "sent"
    assert actions[intent]["external_ref"] == f"outbox:{intent}"


def test_an_action_reserved_ahead_is_sent_without_a_reservation_of_its_own(
    store, graph, tenant, tmp_path
):
    outbox = Outbox(tmp_path / "outbox.jsonl")
    incident = investigated(store, graph, tenant)
    task = TaskRun(graph, claim(graph, RESPOND, "w", 30_000, 5), 30_000)
    page, ticket = (f"incident:{incident}:{what}" for what in ("initial-notification", "ticket"))
    task.reserve_ahead(outbox, ticket, "ticket")
    with counting() as by_name:
        task.act(outbox, message(incident, page))
        task.act(outbox, message(incident, ticket))
    assert dict(by_name) == {"reserve_action": 1}
    task.flush_records()
    actions = {a["intent_id"]: a for a in graph.rows("incident_actions", {"incident_id": incident})}
    assert [actions[i]["status"] for i in (page, ticket)] == ["sent", "sent"]


def test_a_batch_reservation_reserves_ahead_for_every_task_of_the_batch(
    store, graph, tenant, tmp_path
):
    """`reserve_batch` takes each run's `reserve_ahead` actions with its row: every task's
    ticket is reserved with its page, and sent without a reservation of its own. (A MERGE in a
    CALL subquery reserved the first task's only: FalkorDB ran it for the first row.)"""
    outbox = Outbox(tmp_path / "outbox.jsonl")
    incidents = [
        open_incident(graph, service, n) for n, service in enumerate(["payment", "ad", "cart"])
    ]
    Worker(store, [tenant], [Investigator()], role="investigator").run(
        threading.Event(), burst=True
    )
    runs = [TaskRun(graph, claim(graph, RESPOND, "w", 30_000, 5), 30_000) for _ in incidents]
    assert sorted(run.claim.incident_id for run in runs) == sorted(incidents)
    planned = []
    for run in runs:
        page, ticket = (f"incident:{run.claim.incident_id}:{w}" for w in ("initial-notification",
                                                                          "ticket"))  # fmt: skip
        run.reserve_ahead(outbox, ticket, "ticket")
        planned.append((run, Intended(outbox, message(run.claim.incident_id, page), lambda: None)))
    with counting() as by_name:
        assert reserve_batch(planned) == []
        for run, intended in planned:
            run.act(outbox, intended.message)
            run.act(
                outbox, message(run.claim.incident_id, f"incident:{run.claim.incident_id}:ticket")
            )
    assert dict(by_name) == {"reserve_actions": 1}
    for run in runs:
        run.flush_records()
        rows = graph.rows("incident_actions", {"incident_id": run.claim.incident_id})
        assert {r["intent_id"].rsplit(":", 1)[1]: r["status"] for r in rows} == {
            "initial-notification": "sent", "ticket": "sent",
        }  # fmt: skip


@pytest.mark.parametrize("stale_retries_ticket", [False, True])
def test_an_action_reserved_ahead_by_a_dead_attempt_is_reconciled_not_resent(
    store, graph, tenant, tmp_path, stale_retries_ticket
):
    outbox = Outbox(tmp_path / "outbox.jsonl")
    incident = investigated(store, graph, tenant)
    page, ticket = (f"incident:{incident}:{what}" for what in ("initial-notification", "ticket"))
    stale = TaskRun(graph, claim(graph, RESPOND, "stale", SHORT_MS, 5), SHORT_MS)
    stale.reserve_ahead(outbox, ticket, "ticket")
    stale.act(outbox, message(incident, page))  # then it stalls or dies before the ticket
    time.sleep(EXPIRED_S)
    Worker(store, [tenant], [Responder(outbox, outbox)], role="responder").run(
        threading.Event(), burst=True
    )
    if stale_retries_ticket:  # its lease is long gone: it reserves again, and is fenced off
        with pytest.raises(LeaseLost):
            stale.act(outbox, message(incident, ticket))
    intents = [e["intent_id"] for e in outbox.entries()]
    assert (intents.count(page), intents.count(ticket)) == (1, 1)


class SlowOutbox(Outbox):
    """The real outbox, with a pause before the write: a worker stalled mid-call."""

    def __init__(self, path: Path, pause_s: float) -> None:
        super().__init__(path)
        self.pause_s = pause_s

    def send(self, message: OutboundMessage) -> str:
        time.sleep(self.pause_s)
        return super().send(message)


def test_two_workers_racing_for_one_intent_one_sends(store, graph, tenant, tmp_path):
    path = tmp_path / "outbox.jsonl"
    incident = investigated(store, graph, tenant)
    intent = f"incident:{incident}:initial-notification"
    stale = TaskRun(graph, claim(graph, RESPOND, "stale", SHORT_MS, 5), SHORT_MS)
    refs: dict[str, str] = {}
    racer = threading.Thread(
        target=lambda: refs.setdefault("stale", stale.act(SlowOutbox(path, 1.0), message(
            incident, intent))),
    )  # fmt: skip
    racer.start()  # reserves (renewing its lease), then stalls in the call past its lease
    time.sleep(EXPIRED_S + 0.1)
    taken: Claim | None = claim(graph, RESPOND, "fresh", 30_000, 5)
    assert taken is not None and taken.taken_over
    fresh = TaskRun(graph, taken, 30_000)
    refs["fresh"] = fresh.act(Outbox(path), message(incident, intent))  # sees it reserved
    racer.join()
    assert refs["stale"] == refs["fresh"] == f"outbox:{intent}"
    assert [e["intent_id"] for e in Outbox(path).entries()].count(intent) == 1
    fresh.complete("notified")
