"""Archive (gateway/ops/archive.py): an incident resolved longer ago than `BLAST_ARCHIVE_DAYS`
leaves the graph whole for the tenant's archive file, unless something still needs it (a
verdict, an unfinished task); `blast-radius incident ID` still finds it there."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from adapters.falkordb import EmbeddedFalkorDB, GraphStore, TenantGraph
from adapters.outbox import Outbox
from agents.investigate.investigator import Investigator
from agents.learn.learner import Learner
from agents.learn.retention import DAY_MS, trim_old_incidents
from agents.metrics import Metrics
from agents.respond.responder import Responder
from agents.tasks.worker import Worker
from gateway.http.status import incident_detail
from gateway.ops.archive import archive_old_incidents, archive_path, find_archived
from gateway.ops.upkeep import Upkeep
from tests.conftest import make_settings
from tests.learn.test_retention import deliver
from tests.test_cli import cli


def test_old_incidents_leave_the_graph_for_the_archive_file(
    falkordb: EmbeddedFalkorDB, store: GraphStore, graph: TenantGraph, tenant: str, tmp_path: Path
) -> None:
    old = deliver(graph, "payment", 0)
    judged = deliver(graph, "cart", 12)  # 12 hours later; gets a verdict
    young = deliver(graph, "ad", 48)  # two days later
    outbox = Outbox(tmp_path / "outbox.jsonl")

    def work() -> None:
        Worker(store, [tenant], [Investigator(), Responder(outbox, outbox), Learner()]).run(
            threading.Event(), burst=True
        )

    work()
    for service, index in (("payment", 0), ("cart", 12), ("ad", 48)):
        deliver(graph, service, index, resolved=True)
    graph.rows("record_verdict", {
        "incident_id": judged, "id": "verdict-1", "verdict": "helped", "actual_cause": None,
        "by": "U1", "by_name": "Ada", "at": 0, "text": "", "source": "slack", "event_id": "e1",
    })  # fmt: skip
    work()  # cleared notices, the verdict's learn and notify tasks
    resolved_at = graph.rows("incident_alerts", {"incident_id": old})[0]["ends_at_ms"]
    path = archive_path(tmp_path, tenant)
    now_ms = resolved_at + 31 * DAY_MS  # 31 days after the first, 29 after the third

    # trimmed first (7 days), as serve's upkeep does: the archive keeps what is left
    assert trim_old_incidents(graph, 7, now_ms) == 3
    assert archive_old_incidents(graph, path, 30, now_ms, batch=1) == 1
    assert archive_old_incidents(graph, path, 30, now_ms) == 0  # once
    assert archive_old_incidents(graph, path, 0, now_ms + 100 * DAY_MS) == 0  # 0 days: off

    assert incident_detail(graph, old) is None
    assert graph.rows("incident_alerts", {"incident_id": old}) == []
    assert graph.rows("incident_tasks", {"incident_id": old}) == []
    assert graph.rows("incident_actions", {"incident_id": old}) == []
    record = find_archived(path, old)
    assert record is not None and record["archived_at"] == now_ms
    assert (record["incident"]["id"], record["incident"]["root_cause"]) == (old, "payment")
    assert record["finding"]["summary"] and record["finding"]["root_cause"] == "payment"
    assert [a["fingerprint"] for a in record["alerts"]] == [f"{0:016x}"]
    assert {a["kind"] for a in record["actions"]} >= {"notification", "ticket"}
    (task, steps), *_ = record["tasks"]
    assert task["kind"] == "respond" and [s["tool"] for s in steps] == ["response_context"]
    assert json.loads(steps[0]["result"])  # who was paged, as the graph had it

    # the judged incident is as old but memory points at it; the young one is not old enough
    assert find_archived(path, judged) is None and find_archived(path, young) is None
    assert incident_detail(graph, judged) is not None
    assert incident_detail(graph, young) is not None
    assert find_archived(tmp_path / "none.jsonl.gz", old) is None

    # the command line reads the archive once the graph has no such incident
    env = {"FALKORDB_URL": falkordb.url, "BLAST_DEFAULT_TENANT": tenant,
           "BLAST_DATA_DIR": str(tmp_path)}  # fmt: skip
    shown = cli("incident", old, **env)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["incident"]["id"] == old and "archived" in shown.stderr
    assert cli("incident", "inc-nope", **env).returncode == 1


def test_an_incident_with_an_unfinished_task_stays(
    store: GraphStore, graph: TenantGraph, tmp_path: Path
) -> None:
    """No worker ever loses a task it holds or may claim to the archive."""
    opened = deliver(graph, "payment", 0)  # its investigation never ran
    deliver(graph, "payment", 0, resolved=True)
    now_ms = graph.rows("incident_alerts", {"incident_id": opened})[0]["ends_at_ms"] + 90 * DAY_MS
    path = archive_path(tmp_path, "t")
    assert archive_old_incidents(graph, path, 30, now_ms) == 0
    assert not path.exists() and incident_detail(graph, opened) is not None


def test_serve_upkeep_trims_archives_and_purges(
    falkordb: EmbeddedFalkorDB, store: GraphStore, graph: TenantGraph, tenant: str, tmp_path: Path
) -> None:
    """`Upkeep.trim` (serve's retention round) runs both tiers for every tenant, into the data
    folder's archive. The test alerts are from November 2026, so a day is old enough."""
    opened = deliver(graph, "payment", 0)
    outbox = Outbox(tmp_path / "outbox.jsonl")
    Worker(store, [tenant], [Investigator(), Responder(outbox, outbox)]).run(
        threading.Event(), burst=True
    )
    deliver(graph, "payment", 0, resolved=True)
    Worker(store, [tenant], [Responder(outbox, outbox)]).run(threading.Event(), burst=True)
    settings = make_settings(falkordb, tmp_path, tenant, retention_days=1, archive_days=1)
    assert Upkeep(store, settings, Metrics()).trim() == 2  # trimmed, then archived
    assert incident_detail(graph, opened) is None
    record = find_archived(archive_path(tmp_path, tenant), opened)
    assert record is not None and record["incident"]["trimmed_at"]  # trimmed before it left
    off = make_settings(falkordb, tmp_path, tenant, retention_days=0, archive_days=0)
    assert Upkeep(store, off, Metrics()).trim() == 0
