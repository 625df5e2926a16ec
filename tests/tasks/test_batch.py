"""Batches on the real FalkorDB: a worker claims several ready tasks of one kind in one query,
reads their contexts in one, and runs each with its own fenced writes, so a lease lost on one
task of the batch rejects that task's writes only."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from adapters.falkordb import GraphStore, TenantGraph
from adapters.outbox import Outbox
from agents.investigate.investigator import Investigator
from agents.respond.responder import Responder
from agents.tasks.coordination import Claim, Held, Intended, TaskRun, claim, claim_batch
from agents.tasks.worker import Worker
from bench.round_trips import counting
from tests.tasks.test_coordination import INVESTIGATE, RESPOND, investigated, open_incident

SERVICES = ("payment", "cart", "frontend", "accounting", "ad")


def worker(store: GraphStore, tenant: str, outbox: Outbox, batch: int = 8) -> Worker:
    """A worker with the investigator and the responder, claiming up to `batch` at once."""
    return Worker(store, [tenant], [Investigator(), Responder(outbox, outbox)], claim_batch=batch)


def status(graph: TenantGraph, incident: str) -> dict[str, tuple[str, int]]:
    """Task kind -> (status, epoch) of the incident's tasks."""
    rows = graph.rows("incident_tasks", {"incident_id": incident})
    return {r["kind"]: (r["status"], int(r["epoch"])) for r in rows}


def test_a_batch_is_half_of_those_claimable_of_the_most_urgent_kind(graph: TenantGraph) -> None:
    incidents = [open_incident(graph, s, n) for n, s in enumerate(SERVICES)]
    first = claim_batch(graph, INVESTIGATE, "a", 30_000, 5, 8)
    # five claimable: three, oldest first, each its own attempt
    assert [c.incident_id for c in first] == incidents[:3]
    assert len({c.attempt_id for c in first}) == 3 and all(c.epoch == 1 for c in first)
    assert [c.incident_id for c in claim_batch(graph, INVESTIGATE, "b", 30_000, 5, 8)] == [
        incidents[3]
    ]  # one of two
    assert [c.incident_id for c in claim_batch(graph, INVESTIGATE, "c", 30_000, 5, 1)] == [
        incidents[4]
    ]
    assert claim_batch(graph, INVESTIGATE, "d", 30_000, 5, 8) == []


def test_a_batch_holds_one_kind_only(store: GraphStore, graph: TenantGraph, tenant: str) -> None:
    paged = investigated(store, graph, tenant)  # its `respond` (priority 0) is open
    for n, service in enumerate(SERVICES[1:]):
        open_incident(graph, service, n + 1)
    both = INVESTIGATE + RESPOND
    batch = claim_batch(graph, both, "a", 30_000, 5, 8)
    assert [(c.kind, c.incident_id) for c in batch] == [("respond", paged)]
    assert {c.kind for c in claim_batch(graph, both, "b", 30_000, 5, 8)} == {"investigate"}


def test_a_lease_lost_mid_batch_rejects_that_tasks_writes_only(
    store: GraphStore, graph: TenantGraph, tenant: str, tmp_path: Path
) -> None:
    incidents = [open_incident(graph, s, n) for n, s in enumerate(SERVICES)]
    outbox = Outbox(tmp_path / "outbox.jsonl")
    a = worker(store, tenant, outbox)
    batch = claim_batch(graph, a.kinds, a.name, a.lease_ms, a.max_attempts, 8)
    assert [c.incident_id for c in batch] == incidents[:3]
    # the second task's lease runs out before its turn, and another worker takes it over
    lost = batch[1]
    graph._graph.query("MATCH (t:Task {id: $id}) SET t.lease_until = 0", {"id": lost.task_id})
    other = claim(graph, INVESTIGATE, "b", 30_000, 5)
    assert other is not None and (other.task_id, other.epoch) == (lost.task_id, 2)
    with counting() as by_name:
        follow_ups = a.run_batch(graph, tenant, batch, None)
        # the pages their completions claimed for `a`, run as a batch of their own
        assert [c.incident_id for c in follow_ups] == [incidents[0], incidents[2]]
        for c in follow_ups:
            assert (c.kind, c.owner) == ("respond", a.name)
        assert a.run_batch(graph, tenant, follow_ups, None) == []
    # one read of each batch's contexts
    assert by_name["investigation_context"] == by_name["respond_context"] == 1
    for incident in (incidents[0], incidents[2]):
        assert status(graph, incident) == {"investigate": ("done", 1), "respond": ("done", 1)}
    # the lost task: still b's, no finding, no step and no page from a's attempt
    assert status(graph, lost.incident_id) == {"investigate": ("claimed", 2)}
    assert graph.rows("task_steps", {"task_id": lost.task_id}) == []
    assert graph.one("incident_get", {"incident_id": lost.incident_id})["summary"] is None
    paged = sorted(e["incident_id"] for e in outbox.entries() if e["kind"] == "notification")
    assert paged == sorted([incidents[0], incidents[2]])
    # b still finishes it: its own attempt's writes are fenced on epoch 2
    b = worker(store, tenant, outbox)
    b.name = "b"
    b.run_batch(graph, tenant, [other], None)
    assert status(graph, lost.incident_id)["investigate"] == ("done", 2)


def test_tasks_not_started_when_the_worker_stops_are_given_back_uncharged(
    store: GraphStore, graph: TenantGraph, tenant: str, tmp_path: Path
) -> None:
    incidents = [open_incident(graph, s, n) for n, s in enumerate(SERVICES[:3])]
    a = worker(store, tenant, Outbox(tmp_path / "outbox.jsonl"))
    batch = claim_batch(graph, a.kinds, a.name, a.lease_ms, a.max_attempts, 8)
    assert len(batch) == 2
    stop = threading.Event()
    stop.set()
    assert a.run_batch(graph, tenant, batch, stop) == []
    for c in batch:
        rows = graph.rows("incident_tasks", {"incident_id": c.incident_id})
        assert [(r["status"], r["attempts"]) for r in rows] == [("open", 0)]
    assert claim(graph, INVESTIGATE, "next", 30_000, 5).incident_id == incidents[0]


def test_a_turn_late_in_a_batch_renews_the_lease_before_it_starts(graph: TenantGraph) -> None:
    open_incident(graph)
    (held,) = claim_batch(graph, INVESTIGATE, "a", 1_000, 5, 8)
    assert not TaskRun(graph, held, 1_000).lease_half_gone
    late = Claim(**(vars(held) | {"claimed_at": time.monotonic() - 0.6}))
    task = TaskRun(graph, late, 1_000)
    assert task.lease_half_gone
    task.heartbeat()
    assert not task.lease_half_gone


def test_a_batch_is_at_most_one_task_per_100_ms_of_the_lease(store: GraphStore) -> None:
    sized = {lease: Worker(store, [], [], lease_ms=lease, claim_batch=8).claim_batch
             for lease in (50, 100, 350, 30_000)}  # fmt: skip
    assert sized == {50: 1, 100: 1, 350: 3, 30_000: 8}
    assert Worker(store, [], [], lease_ms=30_000, claim_batch=1).claim_batch == 1


def test_a_second_task_of_one_incident_in_a_batch_reads_its_own_context(
    graph: TenantGraph,
) -> None:
    incident, other = open_incident(graph, "payment", 0), open_incident(graph, "cart", 1)

    def held(task_id: str, incident_id: str) -> Claim:
        return Claim(task_id, "reinvestigate", 1, 1, incident_id, None, False, "a", task_id)

    claims = [held("t1", incident), held("t2", other), held("t3", incident), held("t4", "gone")]
    ahead = Investigator().read_ahead(graph, claims)
    # the first of each incident; none for the second of `incident` nor for one that is gone
    assert sorted(ahead) == ["t1", "t2"]
    assert [a["component"] for a in ahead["t1"].alerts] == ["payment"]
    assert [a["component"] for a in ahead["t2"].alerts] == ["cart"]


class Expiring(Investigator):
    """An investigator that lets the lease of the task on `incident` run out once its run is
    over, before its batch's completions are written."""

    def __init__(self, incident: str) -> None:
        super().__init__()
        self.incident = incident

    def run(self, task: TaskRun) -> None:
        super().run(task)
        if task.claim.incident_id == self.incident:
            expire(task.graph, task.claim.task_id)


def expire(graph: TenantGraph, task_id: str) -> None:
    """End the task's lease now (as a worker stalled past it would find it)."""
    graph._graph.query("MATCH (t:Task {id: $id}) SET t.lease_until = 0", {"id": task_id})


def test_a_batch_writes_its_findings_in_one_query_and_a_lease_lost_before_drops_that_row(
    store: GraphStore, graph: TenantGraph, tenant: str, tmp_path: Path
) -> None:
    incidents = [open_incident(graph, s, n) for n, s in enumerate(SERVICES)]
    outbox = Outbox(tmp_path / "outbox.jsonl")
    a = Worker(store, [tenant], [Expiring(incidents[1]), Responder(outbox, outbox)], claim_batch=8)
    batch = claim_batch(graph, a.kinds, a.name, a.lease_ms, a.max_attempts, 8)
    assert [c.incident_id for c in batch] == incidents[:3]
    lost = batch[1]
    with counting() as by_name:
        follow_ups = a.run_batch(graph, tenant, batch, None)
    # the three findings (with their steps and completions) in one query; the second task's
    # row was rejected: its lease ran out after it ran, before the batch's write
    assert by_name["write_finding"] == 1 and by_name["record_steps"] == 0
    assert [c.incident_id for c in follow_ups] == [incidents[0], incidents[2]]
    assert status(graph, lost.incident_id) == {"investigate": ("claimed", 1)}
    assert graph.rows("task_steps", {"task_id": lost.task_id}) == []
    assert graph.one("incident_get", {"incident_id": lost.incident_id})["summary"] is None
    for incident in (incidents[0], incidents[2]):
        assert status(graph, incident) == {"investigate": ("done", 1), "respond": ("claimed", 1)}
        steps = graph.rows("web_incident_steps", {"incident_id": incident, "max_chars": None})
        assert "coverage_walk" in [s["tool"] for s in steps]
        assert graph.one("incident_get", {"incident_id": incident})["summary"]
    # another worker takes the lost task over and finishes it on its own epoch
    b = worker(store, tenant, outbox)
    taken = claim(graph, INVESTIGATE, b.name, 30_000, 5)
    assert taken is not None and (taken.task_id, taken.epoch) == (lost.task_id, 2)
    b.run_batch(graph, tenant, [taken], None)
    assert status(graph, lost.incident_id)["investigate"] == ("done", 2)


def test_a_batch_completes_its_pages_in_one_query_and_a_lease_lost_before_pages_once(
    store: GraphStore, graph: TenantGraph, tenant: str, tmp_path: Path
) -> None:
    incidents = [open_incident(graph, s, n) for n, s in enumerate(SERVICES[:3])]
    outbox = Outbox(tmp_path / "outbox.jsonl")
    a = worker(store, tenant, outbox)
    pages: list[Claim] = []
    while batch := claim_batch(graph, a.kinds, a.name, a.lease_ms, a.max_attempts, 8):
        pages += a.run_batch(graph, tenant, batch, None)
    assert sorted(c.incident_id for c in pages) == sorted(incidents)

    class Stalling(Responder):
        """Pages, then stalls past the lease of the second page's task (a batch of pages
        runs in phases: `plan`, then each page's `then`)."""

        def plan(self, task: TaskRun) -> Intended | None:
            intended = super().plan(task)
            if intended is None or task.claim.task_id != pages[1].task_id:
                return intended
            page = intended

            def then() -> None:
                page.then()
                expire(task.graph, task.claim.task_id)

            return Intended(page.notifier, page.message, then)

    a.by_kind["respond"] = Stalling(outbox, outbox)
    with counting() as by_name:
        assert a.run_batch(graph, tenant, pages, None) == []
    # the three completions in one query (with the pages' outcomes); the second's rejected
    assert by_name["complete_task"] == 1 and by_name["record_actions"] == 0
    lost = pages[1]
    for c in pages:
        done = c is not lost
        assert status(graph, c.incident_id)["respond"] == (("done" if done else "claimed"), 1)
    # every page went out once, and its Action says so, the lost task's too: the outcome of
    # a call that happened is written whatever the lease
    sent = [e["incident_id"] for e in outbox.entries() if e["kind"] == "notification"]
    assert sorted(sent) == sorted(incidents)
    actions = graph.rows("incident_actions", {"incident_id": lost.incident_id})
    assert {r["kind"]: r["status"] for r in actions}["notification"] == "sent"
    # the next owner finds the page sent and does not send it again
    b = worker(store, tenant, outbox)
    taken = claim(graph, RESPOND, b.name, 30_000, 5)
    assert taken is not None and (taken.task_id, taken.epoch) == (lost.task_id, 2)
    b.run_batch(graph, tenant, [taken], None)
    assert status(graph, lost.incident_id)["respond"] == ("done", 2)
    sent = [e["incident_id"] for e in outbox.entries() if e["kind"] == "notification"]
    assert sorted(sent) == sorted(incidents)


def test_held_completions_are_written_early_for_a_half_gone_lease_or_the_same_incident(
    graph: TenantGraph,
) -> None:
    incident = open_incident(graph)
    (held,) = claim_batch(graph, INVESTIGATE, "a", 1_000, 5, 8)
    run = TaskRun(graph, held, 1_000)
    completions = Held()
    run.held = completions
    run.complete("done")
    assert status(graph, incident)["investigate"] == ("claimed", 1)  # held, not written
    assert completions.holds(incident) and not completions.holds("another")
    assert not completions.due
    run._renewed -= 0.6  # over half the 1 s lease since it was last extended
    assert completions.due
    assert completions.write() == []
    assert status(graph, incident)["investigate"] == ("done", 1)
    assert not completions.holds(incident) and completions.write() == []
