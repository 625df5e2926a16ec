"""Pages first, on the real FalkorDB and the local Slack API: an incident whose investigation is
not done `BLAST_PAGE_WITHIN_MS` after it opened is paged without its cause (task `page`, which
the claim query creates), once, and the investigation's `respond` edits the cause into that
page; a calm incident gets one page, with its cause, and no edit."""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime
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
from agents.triage.triage import triage
from bench.round_trips import counting
from gateway.http.payloads import normalize, parse_body
from gateway.world import demo_world_path, load_world
from gateway.world.oncall import rotation_shifts
from tests.conftest import alert_body
from tests.slack_api import TOKEN, USERS, SlackAPI
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


def two_team_incident(graph: TenantGraph) -> str:
    """One incident of an alert on frontend (storefront's) and, a minute later, one on payment
    (checkout's), which frontend reaches through checkout; return its id."""
    first, second = json.loads(alert_body("frontend")), json.loads(alert_body("payment"))
    later = second["alerts"][0]
    later["startsAt"], later["fingerprint"] = "2026-11-01T00:01:00Z", "00000000000000ff"
    first["alerts"].append(later)
    report = triage(graph, normalize(parse_body(json.dumps(first).encode()), "unknown"), 900_000)
    (incident,) = report.opened
    return incident


def on_call_now(team: str) -> str:
    """The Slack id of whoever the demo world's rotation has on call for `team` now (its
    shifts turn every Monday at 09:00 UTC: a test must not name one person)."""
    (spec,) = [t for t in load_world(demo_world_path()).teams if t.name == team]
    assert spec.oncall is not None and spec.oncall.rotation
    now = datetime.now(UTC)
    shifts = rotation_shifts(spec.oncall, now)
    (shift,) = [s for s in shifts if s["starts_at"] <= now.timestamp() * 1000 < s["ends_at"]]
    (member,) = [m for m in spec.members if m.name == shift["person"]]
    return USERS[member.email]


def test_a_late_cause_another_team_owns_is_paged_in_its_own_channel_from_what_respond_read(
    store: GraphStore, graph: TenantGraph, tenant: str, tmp_path: Path, api: SlackAPI
) -> None:
    """The early page went to storefront (frontend alerted first); the cause is payment: the
    respond pages checkout's on-call in checkout's own channel (a root message naming the
    incident and the first page), says so in the first page's thread, tells storefront, opens
    the ticket and edits the page, with what its `respond_context` read: one reservation for
    the six messages (the told message's copy to the outbox too), no other read. The records
    say what happened: the page went to storefront's on-call, checkout's was paged after it."""
    incident = two_team_incident(graph)
    late(graph, incident)
    outbox = Outbox(tmp_path / "outbox.jsonl")
    slack = SlackNotifier(SecretStr(TOKEN), api.base_url, "C0DEFAULT")
    responder = Responder(slack, outbox, records=outbox, fallback=outbox)

    def run(role: str, agents: list[Any]) -> None:
        w = Worker(store, [tenant], agents, role=role, claim_batch=8, page_within_ms=WITHIN_MS)
        w.run(threading.Event(), burst=True)

    run("responder", [responder])
    (page,) = api.roots()
    assert page["channel"] == "C0STORE"
    assert "Root cause: under investigation" in page["text"]
    paged_first = page["text"].split("Paged: ")[1]
    assert "storefront" in paged_first and "checkout" not in paged_first
    run("investigator", [Investigator()])
    assert graph.one("incident_get", {"incident_id": incident})["root_cause"] == "payment"
    with counting() as counts:
        run("responder", [responder])
    # the respond read its context once and reserved its five messages in one query (its
    # batch's, `reserve_actions`); claims, the completion and the empty claim that ends the
    # burst are the rest
    assert counts["respond_context"] == counts["reserve_actions"] == 1
    assert counts["complete_task"] == 1
    assert set(counts) <= {"claim_task", "respond_context", "reserve_actions", "complete_task",
                           "reap_tasks"}, counts  # fmt: skip
    (page,) = api.roots("C0STORE")
    assert page["edited"] == 1 and "Root cause: *payment*" in page["text"]
    # checkout's on-call is paged where they are: a root message in their own channel
    (repage,) = api.roots("C0CHECKOUT")
    assert repage["text"].startswith(f"<@{on_call_now('checkout')}> Paged for incident {incident}")
    assert "the root cause is *payment*" in repage["text"]
    assert "(on call for checkout, owner of payment)" in repage["text"]
    assert "The first page went to " in repage["text"] and "#storefront-oncall" in repage["text"]
    replies = [r["text"] for r in api.replies(page["ts"])]
    assert len(replies) == 2, replies
    assert "Paged for the new root cause *payment*: " in replies[0]
    assert "(on call for checkout, owner of payment), in #checkout-oncall." in replies[0]
    assert "<@" not in replies[0]  # a note, not a mention: the page is in their channel
    assert "(storefront): your component frontend alerts in this incident" in replies[1]
    # the edited page names its own addressee, then whom the new cause paged and where
    paged_now = page["text"].split("Paged: ")[1].splitlines()[0]
    assert (
        paged_now.index("(on call for storefront")
        < paged_now.index("then, for the new root cause payment: ")
        < paged_now.index("owner of payment) in #checkout-oncall")
    ), paged_now
    row = graph.one("web_paged", {"incident_ids": [incident]})
    assert json.loads(row["first"])["team"] == "storefront"
    assert json.loads(row["result"])["team"] == "checkout"
    assert actions(graph, incident) == {
        f"incident:{incident}:initial-notification": "sent",
        f"incident:{incident}:repage:respond:{incident}": "sent",
        f"incident:{incident}:repage-note:respond:{incident}": "sent",
        f"incident:{incident}:told:storefront": "sent",
        f"incident:{incident}:told:storefront:record": "sent",
        f"incident:{incident}:ticket": "sent",
        f"incident:{incident}:diagnosis": "sent",
    }
    (ticket,) = [e for e in outbox.entries() if e["kind"] == "ticket"]
    assert "owner of payment" in ticket["notice"]["paged"]
