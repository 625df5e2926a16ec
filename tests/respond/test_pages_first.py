"""Pages first, on the real FalkorDB and the local Slack API: an incident whose investigation is
not done `BLAST_PAGE_WITHIN_MS` after it opened is paged without its cause (task `page`, which
the claim query creates), once, and the investigation's `respond` edits the cause into that
page; a calm incident gets one page, with its cause, and no edit."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from adapters.falkordb import GraphStore, TenantGraph
from adapters.outbox import Outbox
from adapters.slack.notifier import SlackNotifier
from agents.investigate.investigator import Investigator
from agents.respond import lifecycle, maintenance
from agents.respond.responder import Responder
from agents.tasks.coordination import claim, claim_batch
from agents.tasks.kinds import ROLE_KINDS
from agents.tasks.worker import Worker
from tests.slack_api import TOKEN, SlackAPI
from tests.tasks.test_coordination import INVESTIGATE, RESPOND, open_incident

#: The page deadline of these tests' workers (ms); a held-back investigation is made older.
WITHIN_MS = 1_000
ANY = list(ROLE_KINDS["any"])


def worker(
    store: GraphStore, tenant: str, api: SlackAPI, outbox: Outbox, role: str = "any"
) -> Worker:
    """A worker of `role` paging through the local Slack API (tickets in the outbox), with the
    page deadline on."""
    slack = SlackNotifier(SecretStr(TOKEN), api.base_url, "C0DEFAULT")
    agents: list[Any] = [Responder(slack, outbox, fallback=outbox)]
    if role != "responder":
        agents.append(Investigator())
    return Worker(store, [tenant], agents, role=role, claim_batch=8, page_within_ms=WITHIN_MS)


def late(graph: TenantGraph, incident: str, within_ms: int = WITHIN_MS) -> None:
    """Make the incident's investigation older than the page deadline `within_ms` (it was
    held back)."""
    graph._graph.query(
        "MATCH (t:Task {kind: 'investigate', incident_id: $id})"
        " SET t.created_at = t.created_at - $ms",
        {"id": incident, "ms": within_ms + 500},
    )


def tasks(graph: TenantGraph, incident: str) -> dict[str, str]:
    """Task kind -> status of the incident's tasks (one of each kind here)."""
    rows = graph.rows("incident_tasks", {"incident_id": incident})
    assert len({r["kind"] for r in rows}) == len(rows)
    return {r["kind"]: r["status"] for r in rows}


def actions(graph: TenantGraph, incident: str) -> dict[str, str]:
    """Intent id -> status of the incident's actions."""
    rows = graph.rows("incident_actions", {"incident_id": incident})
    return {r["intent_id"]: r["status"] for r in rows}


def burst(w: Worker) -> None:
    w.run(threading.Event(), burst=True)


def test_a_late_diagnosis_pages_without_a_cause_once_then_edits_the_cause_in(
    store: GraphStore, graph: TenantGraph, tenant: str, tmp_path: Path, api: SlackAPI
) -> None:
    incident = open_incident(graph, "payment")
    late(graph, incident)
    outbox = Outbox(tmp_path / "outbox.jsonl")
    # only a responder runs: the investigation is held back, and the page goes anyway
    burst(worker(store, tenant, api, outbox, role="responder"))
    (page,) = api.roots()
    assert "Root cause: under investigation" in page["text"]
    assert "errors on payment" in page["text"]  # the alert's summary: what triage knows
    buttons = [e["text"]["text"] for b in page["blocks"] if b["type"] == "actions"
               for e in b["elements"]]  # fmt: skip
    assert "Wrong cause" not in buttons and "Confirm cause" not in buttons
    assert tasks(graph, incident) == {"investigate": "open", "page": "done"}
    assert actions(graph, incident) == {f"incident:{incident}:initial-notification": "sent"}
    assert [e for e in outbox.entries() if e["kind"] == "ticket"] == []  # with the cause, later
    # the investigation runs now; its respond edits the cause into the page
    burst(worker(store, tenant, api, outbox))
    cause = graph.one("incident_get", {"incident_id": incident})["root_cause"]
    assert cause == "payment"
    assert api.called("chat.postMessage") == 1  # paged once: no second page, no repage
    (page,) = api.roots()
    assert page["edited"] == 1
    assert "under investigation" not in page["text"]
    assert "Root cause: *payment*" in page["text"]
    assert api.called("chat.update") == 1
    assert actions(graph, incident) == {
        f"incident:{incident}:initial-notification": "sent",
        f"incident:{incident}:ticket": "sent",
        f"incident:{incident}:diagnosis": "sent",
    }
    assert set(tasks(graph, incident).values()) == {"done"}
    assert len(tasks(graph, incident)) == 3  # investigate, page, respond: no task per edit
    (ticket,) = [e for e in outbox.entries() if e["kind"] == "ticket"]
    assert ticket["notice"]["root_cause"] == "payment"
    row = graph._graph.query(
        "MATCH (i:Incident {id: $id}) RETURN i.notified, i.notified_root_cause", {"id": incident}
    ).result_set
    assert row == [[True, "payment"]]


def test_an_acknowledgement_before_the_diagnosis_keeps_the_page_under_investigation(
    store: GraphStore, graph: TenantGraph, tenant: str, tmp_path: Path, api: SlackAPI
) -> None:
    """Acknowledged while the investigation is held back: the page's edit says who took it and
    still "under investigation", not an inconclusive finding nobody made."""
    incident = open_incident(graph, "payment")
    late(graph, incident)
    outbox = Outbox(tmp_path / "outbox.jsonl")
    burst(worker(store, tenant, api, outbox, role="responder"))
    lifecycle.acknowledge(graph, incident, "Bo Example")
    burst(worker(store, tenant, api, outbox, role="responder"))
    (page,) = api.roots()
    assert page["edited"] == 1 and "Bo Example" in page["text"]
    assert "Root cause: under investigation" in page["text"]
    assert "inconclusive" not in page["text"]


def test_a_calm_incident_gets_one_page_with_its_cause_and_no_edit(
    store: GraphStore, graph: TenantGraph, tenant: str, tmp_path: Path, api: SlackAPI
) -> None:
    incident = open_incident(graph, "payment")
    outbox = Outbox(tmp_path / "outbox.jsonl")
    burst(worker(store, tenant, api, outbox))
    (page,) = api.roots()
    assert "Root cause: *payment*" in page["text"]
    assert "under investigation" not in page["text"]
    assert "edited" not in page and api.called("chat.update") == 0
    assert api.called("chat.postMessage") == 1
    assert tasks(graph, incident) == {"investigate": "done", "respond": "done"}
    assert f"incident:{incident}:diagnosis" not in actions(graph, incident)


def test_the_respond_waits_for_an_unfinished_page_so_the_two_never_both_page(
    store: GraphStore, graph: TenantGraph, tenant: str, tmp_path: Path, api: SlackAPI
) -> None:
    incident = open_incident(graph, "payment")
    late(graph, incident)
    outbox = Outbox(tmp_path / "outbox.jsonl")
    responder = worker(store, tenant, api, outbox, role="responder")
    # the page is claimed, not run yet, when the investigation finishes
    (page,) = claim_batch(graph, RESPOND, responder.name, 30_000, 5, 8, WITHIN_MS)
    assert (page.kind, page.task_id, page.epoch) == ("page", f"page:{incident}", 1)
    burst(worker(store, tenant, api, outbox))
    assert tasks(graph, incident)["respond"] == "paused"  # waits for the page task
    assert api.roots() == []
    # the page task finds the diagnosis in: it leaves the page to the respond, with the cause
    responder.run_batch(graph, tenant, [page], None)
    assert api.roots() == [] and tasks(graph, incident)["page"] == "done"
    time.sleep(0.3)  # the respond's wait is over
    burst(worker(store, tenant, api, outbox))
    (sent,) = api.roots()
    assert api.called("chat.postMessage") == 1 and "edited" not in sent
    assert "Root cause: *payment*" in sent["text"]


def test_a_page_is_created_once_only_when_due_and_only_while_the_deadline_is_on(
    graph: TenantGraph,
) -> None:
    incident = open_incident(graph, "payment")
    other = open_incident(graph, "ad", 1)
    # not due yet, or the deadline off, or not a worker that pages: no page task
    assert claim_batch(graph, RESPOND, "r", 30_000, 5, 8, WITHIN_MS) == []
    late(graph, incident)
    assert claim_batch(graph, RESPOND, "r", 30_000, 5, 8, 0) == []
    assert claim_batch(graph, ["respond"], "r", 30_000, 5, 8, WITHIN_MS) == []
    (page,) = claim_batch(graph, RESPOND, "r", 30_000, 5, 8, WITHIN_MS)
    assert (page.kind, page.incident_id, page.owner, page.attempts) == ("page", incident, "r", 1)
    assert claim_batch(graph, RESPOND, "r2", 30_000, 5, 8, WITHIN_MS) == []  # once
    # its worker died: the page task is taken over once its lease expired, as any task is
    graph._graph.query("MATCH (t:Task {id: $id}) SET t.lease_until = 0", {"id": page.task_id})
    (again,) = claim_batch(graph, RESPOND, "r3", 30_000, 5, 8, WITHIN_MS)
    assert (again.task_id, again.epoch, again.owner, again.taken_over) == (
        page.task_id, 2, "r3", True,
    )  # fmt: skip
    # the late investigation itself is still there to claim, oldest first
    first = claim(graph, INVESTIGATE, "i", 30_000, 5)
    assert first is not None and (first.kind, first.incident_id) == ("investigate", incident)
    assert claim(graph, INVESTIGATE, "i", 30_000, 5).incident_id == other
    # a page is claimed before any other kind, by its incident's age
    late(graph, other)
    (second,) = claim_batch(graph, ANY, "a", 30_000, 5, 8, WITHIN_MS)
    assert (second.kind, second.incident_id) == ("page", other)


def test_a_quiet_window_holds_the_page_before_the_diagnosis_too(
    store: GraphStore, graph: TenantGraph, tenant: str, tmp_path: Path, api: SlackAPI
) -> None:
    maintenance.start(graph, ["payment"], [], "db upgrade", "Ed Example", minutes=30)
    incident = open_incident(graph, "payment")
    late(graph, incident)
    burst(worker(store, tenant, api, Outbox(tmp_path / "outbox.jsonl"), role="responder"))
    assert api.roots() == []
    assert tasks(graph, incident)["page"] == "paused"
    assert actions(graph, incident) == {}
