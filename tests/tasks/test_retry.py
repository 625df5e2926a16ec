"""Retry decided once on the real FalkorDB and the local
Slack API: a permanent adapter error fails its action at once and the page is copied to the
outbox; a retryable one backs off (Retry-After honoured); a bug fails the task with its
traceback logged; an investigation that fails for any reason still pages."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pytest
from pydantic import SecretStr

from adapters.falkordb import GraphStore, TenantGraph
from adapters.outbox import Outbox
from adapters.slack.notifier import SlackNotifier
from agents.investigate.investigator import Investigator
from agents.respond.responder import Responder
from agents.tasks.coordination import Claim, TaskRun, claim
from agents.tasks.worker import Worker, backoff_ms
from tests.slack_api import TOKEN, Failure, SlackAPI
from tests.tasks.test_coordination import INVESTIGATE, investigated, open_incident


def task(graph: TenantGraph, task_id: str) -> dict[str, object]:
    (row,) = [t for t in graph.rows("incident_tasks", {"incident_id": task_id.split(":")[1]})
              if t["id"] == task_id]  # fmt: skip
    return row


def slack_responder(api: SlackAPI, outbox: Outbox) -> Responder:
    slack = SlackNotifier(SecretStr(TOKEN), api.base_url, "C0DEFAULT")
    return Responder(slack, outbox, fallback=outbox)


def test_a_permanent_error_is_not_retried_and_the_page_is_copied_to_the_outbox(
    store: GraphStore, graph: TenantGraph, tenant: str, tmp_path: Path, api: SlackAPI
):
    incident = investigated(store, graph, tenant)
    api.fail("chat.postMessage", Failure(error="channel_not_found"), times=10)
    outbox = Outbox(tmp_path / "outbox.jsonl")
    worker = Worker(store, [tenant], [slack_responder(api, outbox)], role="responder")
    worker.run(threading.Event(), burst=True)
    # once per channel of the root route (the owner's, the default team's), not five attempts
    # at a channel that is not there
    assert api.called("chat.postMessage") == 2
    (page,) = [e for e in outbox.entries() if e["kind"] == "notification"]
    assert page["intent_id"] == f"incident:{incident}:initial-notification:fallback"
    assert (
        "Not delivered through slack: slack chat.postMessage failed: channel_not_found"
        in (page["text"])
    )
    assert task(graph, f"respond:{incident}")["status"] == "done"
    actions = {
        a["intent_id"]: a["status"]
        for a in graph.rows("incident_actions", {"incident_id": incident})
    }
    assert actions[f"incident:{incident}:initial-notification"] == "failed"


def test_a_retryable_error_backs_off_and_honours_retry_after(
    store: GraphStore, graph: TenantGraph, tenant: str, tmp_path: Path, api: SlackAPI
):
    incident = investigated(store, graph, tenant)
    api.fail("chat.postMessage", Failure(status=500, error="internal_error"), times=2)
    outbox = Outbox(tmp_path / "outbox.jsonl")
    worker = Worker(store, [tenant], [slack_responder(api, outbox)], role="responder")
    worker.run(threading.Event(), burst=True)  # attempt 1 fails, 2 at once fails: backing off
    held = task(graph, f"respond:{incident}")
    assert (held["status"], held["attempts"], api.called("chat.postMessage")) == ("claimed", 2, 2)
    assert "internal_error" in str(held["last_error"])
    assert outbox.entries() == []  # not the last attempt: no copy
    worker.run(threading.Event(), burst=True)
    assert api.called("chat.postMessage") == 2  # still backing off (0.8-1.2 s)
    time.sleep(1.3)
    worker.run(threading.Event(), burst=True)
    assert task(graph, f"respond:{incident}")["status"] == "done"
    assert api.called("chat.postMessage") == 3  # (Retry-After: tests/test_github.py)


def test_backoff_doubles_with_jitter_and_a_ceiling():
    def after(attempts: int) -> int:
        return backoff_ms(Claim("t", "respond", 1, attempts, "i", None, False, "w", "a"))

    assert after(1) == 0 and 800 <= after(2) <= 1200 and 3200 <= after(4) <= 4800
    assert 48_000 <= after(30) <= 72_000


class Broken:
    """An investigator with a bug."""

    kinds = ("investigate",)

    def run(self, task: TaskRun) -> None:
        raise KeyError("metric")


def test_a_bug_fails_the_investigation_at_once_and_the_incident_still_pages(
    store: GraphStore, graph: TenantGraph, tenant: str, tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
):  # fmt: skip
    incident = open_incident(graph)
    outbox = Outbox(tmp_path / "outbox.jsonl")
    worker = Worker(store, [tenant], [Broken(), Responder(outbox, outbox)])
    with caplog.at_level(logging.ERROR):
        worker.run(threading.Event(), burst=True)
    failed = [t for t in graph.rows("incident_tasks", {"incident_id": incident})
              if t["kind"] == "investigate"]  # fmt: skip
    assert [(t["status"], t["attempts"]) for t in failed] == [("failed", 1)]
    bug = next(r for r in caplog.records if "bug" in r.getMessage())
    assert bug.exc_info is not None and "KeyError" in bug.getMessage()
    (page,) = [e for e in outbox.entries() if e["kind"] == "notification"]
    assert "Diagnosis failed: bug: KeyError: 'metric'" in page["text"]
    row = graph.one("incident_get", {"incident_id": incident})
    assert row is not None and row["planner"] == "failed" and row["root_cause"] is None


def test_an_investigation_whose_workers_keep_dying_still_pages(
    store: GraphStore, graph: TenantGraph, tenant: str, tmp_path: Path
):
    incident = open_incident(graph)
    assert claim(graph, INVESTIGATE, "dies", 1, 1) is not None  # its only attempt, never ended
    time.sleep(0.05)
    outbox = Outbox(tmp_path / "outbox.jsonl")
    worker = Worker(store, [tenant], [Investigator(), Responder(outbox, outbox)], max_attempts=1)
    worker.run(threading.Event(), burst=True)
    (page,) = [e for e in outbox.entries() if e["kind"] == "notification"]
    assert "Diagnosis failed: lease expired on attempt 1 of 1" in page["text"]
    assert graph.one("incident_get", {"incident_id": incident})["planner"] == "failed"
