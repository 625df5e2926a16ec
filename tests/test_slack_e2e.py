"""Done means: Alertmanager-shaped alerts -> gateway -> agents -> local Slack API give
exactly one page per incident, even when the responder is killed between Slack's accept and
its record; and a Confirm click or a "wrong, it's <component>" reply ends as a Verdict in the
graph and an edited page."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.falkordb import EmbeddedFalkorDB, TenantGraph
from adapters.slack.refs import parse_ref
from gateway.ops.runtime import Runtime
from tests.conftest import Gateway, clean_env, make_settings
from tests.slack_api import SIGNING_SECRET, TOKEN, Failure, SlackAPI
from tests.test_slack_routes import click, detail, fire, post_event, reply, status_block

ROOT = Path(__file__).resolve().parents[1]
LEASE_MS = 1500


@pytest.fixture
def slack_gw(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, tmp_path: Path, tenant: str, api: SlackAPI
) -> Iterator[Gateway]:
    runtime = Runtime(make_settings(
        falkordb, tmp_path, tenant, slack_bot_token=TOKEN, slack_signing_secret=SIGNING_SECRET,
        slack_api_url=api.base_url, lease_ms=LEASE_MS,
    ))  # fmt: skip
    runtime.open()
    gw = Gateway(runtime, runtime.serve_http("127.0.0.1", 0), None)
    yield gw
    gw.http.close()
    runtime.close()


def responder_process(
    falkordb: EmbeddedFalkorDB, tenant: str, tmp_path: Path, api: SlackAPI
) -> subprocess.Popen[bytes]:
    """`blast-radius worker --role responder --burst` of this checkout, as its own process."""
    env = clean_env(("BLAST_", "SLACK_"))
    env |= {
        "PYTHONPATH": str(ROOT), "FALKORDB_URL": falkordb.url, "BLAST_DEFAULT_TENANT": tenant,
        "BLAST_DATA_DIR": str(tmp_path / "worker"), "BLAST_LEASE_MS": str(LEASE_MS),
        "SLACK_BOT_TOKEN": TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": api.base_url, "BLAST_DEV": "true",  # the test's secrets are samples
    }  # fmt: skip
    return subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "worker", "--role", "responder", "--burst"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


def test_killed_between_send_and_record_reconciles_through_metadata(
    slack_gw: Gateway, api: SlackAPI, falkordb: EmbeddedFalkorDB, tenant: str, tmp_path: Path
):
    incident_id = fire(slack_gw)
    slack_gw.runtime.make_worker("investigator").run(threading.Event(), burst=True)
    # Slack stores the page, then the responder dies before it hears back (so before it can
    # record the ref): SIGKILL from inside Slack's handling of the post.
    worker: dict[str, subprocess.Popen[bytes]] = {}
    api.fail("chat.postMessage", Failure(after_store=lambda: os.kill(worker["p"].pid,
                                                                     signal.SIGKILL)))  # fmt: skip
    worker["p"] = responder_process(falkordb, tenant, tmp_path, api)
    _, stderr = worker["p"].communicate(timeout=60)
    assert worker["p"].returncode == -signal.SIGKILL, stderr.decode()
    assert TOKEN not in stderr.decode()
    (page,) = api.roots()
    actions = {a["intent_id"]: a for a in detail(slack_gw, incident_id)["actions"]}
    first = actions[f"incident:{incident_id}:initial-notification"]
    assert (first["status"], first["external_ref"], first["adapter"]) == ("reserved", None, "slack")
    # a new attempt, once the dead worker's lease has run out, finds the page by its metadata
    time.sleep(LEASE_MS / 1000 + 0.2)
    slack_gw.drain()
    # one page; the only other post is storefront told in its thread
    told = [m for m in api.replies(page["ts"]) if "alert in this incident" in m["text"]]
    assert len(api.roots()) == 1 and api.called("chat.postMessage") == 1 + len(told) == 2
    assert api.called("conversations.history") == 1
    actions = {a["intent_id"]: a for a in detail(slack_gw, incident_id)["actions"]}
    first = actions[f"incident:{incident_id}:initial-notification"]
    assert first["status"] == "sent"
    assert parse_ref(first["external_ref"]) == (page["channel"], page["ts"])
    assert actions[f"incident:{incident_id}:ticket"]["status"] == "sent"  # then went on
    assert page["channel"] == "C0CHECKOUT"  # payment's owner, checkout, pages there

    # engineers answer in Slack: a Confirm click, then a correction in the thread
    assert click(slack_gw, page, "blast_confirm", incident_id).status_code == 200
    answer = post_event(slack_gw, reply(page, "wrong, it's cart", "Ev42")).json()
    assert (answer["verdict"], answer["actual_cause"]) == ("rejected", "cart")
    slack_gw.drain()
    verdicts = detail(slack_gw, incident_id)["verdicts"]
    assert [(v["verdict"], v["actual_cause"], v["by"]) for v in verdicts] == [
        ("confirmed", "payment", "U0ALICE"), ("rejected", "cart", "U0BOB")]  # fmt: skip
    (page,) = api.roots()
    assert page["edited"] == 2
    lines = status_block(page).split("\n")
    assert lines[0].startswith("Cause confirmed by <@U0ALICE>")
    assert lines[1].startswith("Cause rejected by <@U0BOB>") and lines[1].endswith("*cart*.")

    # the alerts clear: notes in the thread, the page says resolved; still one root message
    fire(slack_gw, status="resolved")
    slack_gw.drain()
    assert len(api.roots()) == 1
    assert status_block(api.roots()[0]).startswith("Resolved at ")
    assert api.replies(page["ts"]) and len(api.messages) == 1 + len(api.replies(page["ts"]))
