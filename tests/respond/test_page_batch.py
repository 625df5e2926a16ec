"""A batch of early pages (task `page`) on the real FalkorDB and outbox: reserved in one query,
each row fenced on its own task, appended to the outbox in one write and one fsync, and each
sent once, across a lease lost mid-batch and a crash between the reservation and the outcome."""

from __future__ import annotations

import os
import threading
from collections import Counter
from pathlib import Path

import pytest

from adapters.falkordb import GraphStore, TenantGraph
from adapters.outbox import Outbox
from agents.respond.responder import Responder
from agents.tasks.coordination import (
    Claim,
    Intended,
    TaskRun,
    claim_batch,
    reserve_batch,
    send_ahead,
)
from agents.tasks.worker import Worker
from bench.round_trips import counting
from tests.respond.test_pages_first import WITHIN_MS, actions, late
from tests.tasks.test_coordination import open_incident

SERVICES = ("payment", "cart", "frontend", "accounting", "ad", "email")


def responder(store: GraphStore, tenant: str, outbox: Outbox, name: str) -> Worker:
    """A responder paging to the outbox, with the page deadline on, batches of up to 8."""
    return Worker(
        store, [tenant], [Responder(outbox, outbox)], role="responder", name=name,
        claim_batch=8, page_within_ms=WITHIN_MS,
    )  # fmt: skip


def late_incidents(graph: TenantGraph, n: int) -> list[str]:
    """`n` incidents whose investigations are past the page deadline (held back)."""
    incidents = [open_incident(graph, s, k) for k, s in enumerate(SERVICES[:n])]
    for incident in incidents:
        late(graph, incident)
    return incidents


def pages(w: Worker, graph: TenantGraph) -> list[Claim]:
    """The due pages `w` claims in one claim query."""
    batch = claim_batch(
        graph, w.kinds, w.name, w.lease_ms, w.max_attempts, w.claim_batch, w.page_within_ms
    )
    assert {c.kind for c in batch} == {"page"}
    return batch


def paged(outbox: Outbox) -> Counter[str]:
    """Incident id -> how many page lines the outbox holds for it."""
    return Counter(e["incident_id"] for e in outbox.entries() if e["kind"] == "notification")


def test_a_batch_of_pages_reserves_in_one_query_appends_once_and_sends_each_once(
    store: GraphStore,
    graph: TenantGraph,
    tenant: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    incidents = late_incidents(graph, 6)
    outbox = Outbox(tmp_path / "outbox.jsonl")
    a = responder(store, tenant, outbox, "a")
    batch = pages(a, graph)
    assert len(batch) == 3  # half of the six due (the claim's rule)
    fsyncs: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: fsyncs.append(fd) or real_fsync(fd))
    with counting() as by_name:
        assert a.run_batch(graph, tenant, batch, None) == []
    # claim and read were one query each before; now one reservation, one completion, and
    # one outbox append for the three pages
    assert by_name["reserve_actions"] == 1 and by_name["reserve_action"] == 0
    assert by_name["complete_task"] == 1 and by_name["record_steps"] == 0
    assert len(fsyncs) == 1
    done = [c.incident_id for c in batch]
    assert paged(outbox) == Counter(done)
    for incident in done:
        assert actions(graph, incident) == {f"incident:{incident}:initial-notification": "sent"}
        steps = graph.rows("task_steps", {"task_id": f"page:{incident}"})
        assert [s["tool"] for s in steps] == ["response_context", "preferences"]
    # the rest in the next batches, and nothing twice
    a.run(threading.Event(), burst=True)
    assert paged(outbox) == Counter(incidents)


class Expiring(Responder):
    """Plans each page, and lets the lease of `incident`'s page task run out once it has
    planned it, before its batch's reservation (a worker stalled past it)."""

    def __init__(self, outbox: Outbox, incident: str) -> None:
        super().__init__(outbox, outbox)
        self.incident = incident

    def plan(self, task: TaskRun) -> Intended | None:
        intended = super().plan(task)
        if task.claim.incident_id == self.incident:
            task.graph._graph.query(
                "MATCH (t:Task {id: $id}) SET t.lease_until = 0", {"id": task.claim.task_id}
            )
        return intended


def test_a_lease_lost_mid_batch_drops_that_reservation_only_and_that_page_is_not_sent(
    store: GraphStore, graph: TenantGraph, tenant: str, tmp_path: Path
) -> None:
    incidents = late_incidents(graph, 6)
    outbox = Outbox(tmp_path / "outbox.jsonl")
    a = responder(store, tenant, outbox, "a")
    batch = pages(a, graph)
    lost = batch[1]
    a.by_kind["page"] = Expiring(outbox, lost.incident_id)
    with counting() as by_name:
        a.run_batch(graph, tenant, batch, None)
    assert by_name["reserve_actions"] == 1 and by_name["reserve_action"] == 0
    kept = [batch[0].incident_id, batch[2].incident_id]
    assert paged(outbox) == Counter(kept)  # the lost task sent nothing
    # nothing of its row was written: no reservation, no steps; the task is still claimed
    assert actions(graph, lost.incident_id) == {}
    assert graph.rows("task_steps", {"task_id": lost.task_id}) == []
    tasks = {r["kind"]: r["status"] for r in graph.rows("incident_tasks", {"incident_id":
             lost.incident_id})}  # fmt: skip
    assert tasks["page"] == "claimed"
    for incident in kept:
        assert actions(graph, incident) == {f"incident:{incident}:initial-notification": "sent"}
    # another worker takes it over (epoch 2) with the other due pages, and pages each once
    responder(store, tenant, outbox, "b").run(threading.Event(), burst=True)
    assert paged(outbox) == Counter(incidents)
    assert actions(graph, lost.incident_id) == {
        f"incident:{lost.incident_id}:initial-notification": "sent"
    }
    rows = graph.rows("incident_tasks", {"incident_id": lost.incident_id})
    assert [(r["status"], r["epoch"]) for r in rows if r["kind"] == "page"] == [("done", 2)]


@pytest.mark.parametrize("appended", [True, False])
def test_a_crash_after_the_reservation_does_not_send_twice_the_outbox_is_checked(
    store: GraphStore, graph: TenantGraph, tenant: str, tmp_path: Path, appended: bool
) -> None:
    late_incidents(graph, 2)
    outbox = Outbox(tmp_path / "outbox.jsonl")
    a = responder(store, tenant, outbox, "a")
    batch = pages(a, graph) + pages(a, graph)  # one of two, then the other
    agent = a.by_kind["page"]
    assert isinstance(agent, Responder)
    runs = [TaskRun(graph, c, a.lease_ms) for c in batch]
    planned = [(run, intended) for run in runs if (intended := agent.plan(run)) is not None]
    assert len(planned) == len(batch) == 2
    assert reserve_batch(planned) == []
    if appended:  # the crash came after the append, before the outcome was written
        send_ahead(planned)
        assert paged(outbox) == Counter(c.incident_id for c in batch)
    # a dies here: its Actions stay `reserved`, its tasks claimed until their leases run out
    for c in batch:
        intent_id = f"incident:{c.incident_id}:initial-notification"
        assert actions(graph, c.incident_id) == {intent_id: "reserved"}
        graph._graph.query("MATCH (t:Task {id: $id}) SET t.lease_until = 0", {"id": c.task_id})
    responder(store, tenant, outbox, "b").run(threading.Event(), burst=True)
    # each page is in the outbox once, and its Action says sent: found there (the reservation
    # was not b's, so b looked before sending), or sent by b when a never appended it
    assert paged(outbox) == Counter(c.incident_id for c in batch)
    for c in batch:
        intent_id = f"incident:{c.incident_id}:initial-notification"
        row = graph._graph.query(
            "MATCH (a:Action {intent_id: $id}) RETURN a.status, a.detail", {"id": intent_id}
        ).result_set
        assert row == [["sent", "reconciled" if appended else None]]
        rows = graph.rows("incident_tasks", {"incident_id": c.incident_id})
        assert [(r["status"], r["epoch"]) for r in rows if r["kind"] == "page"] == [("done", 2)]
