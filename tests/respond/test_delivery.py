"""After the page, against the real gateway, graph and slack-sdk on the local Slack API: a page a
channel refuses lands further along the root route and says why; acknowledge and resolve from
Slack and the API; one resolve notice however many alerts clear; Slack requests from another
workspace or app are refused."""

from __future__ import annotations

import html
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from adapters.falkordb import EmbeddedFalkorDB, GraphStore, TenantGraph, free_port
from adapters.outbox import Outbox
from adapters.slack.refs import parse_ref
from agents.respond.responder import Responder
from agents.tasks.coordination import TaskRun, claim
from agents.tasks.kinds import ROLE_KINDS
from agents.triage.triage import triage
from gateway.cli.doctor import check_slack_world
from gateway.cli.incident_text import incident_report
from gateway.http.payloads import normalize, parse_body
from gateway.ops.runtime import Runtime
from tests.conftest import Gateway, alert_body, clean_env, make_settings
from tests.respond.test_escalation import with_policy
from tests.slack_api import SIGNING_SECRET, TOKEN, Failure, SlackAPI, signed_headers
from tests.tasks.test_coordination import investigated
from tests.tasks.test_crash import incident, spawn, task, wait_for
from tests.test_slack_routes import click, detail, fire, slack_settings, status_block

__all__ = ["spawn"]  # the fixture, used by name

PUBLIC = "https://blast.example.com"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def slack_gw(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, tmp_path: Path, tenant: str, api: SlackAPI
) -> Iterator[Gateway]:
    """The gateway with Slack on, `BLAST_PUBLIC_URL` set and the workspace and app pinned."""
    settings = slack_settings(
        api, public_url=PUBLIC, slack_team_id="T0TEST", slack_app_id="A0BLAST"
    )
    runtime = Runtime(make_settings(falkordb, tmp_path, tenant, **settings))
    runtime.open()
    gw = Gateway(runtime, runtime.serve_http("127.0.0.1", 0), None)
    yield gw
    gw.http.close()
    runtime.close()


def metric(gw: Gateway, name: str, reason: str) -> float:
    """The value of `name{reason="…"}` on /metrics (0 when absent)."""
    text = gw.http.get("/metrics").text
    for line in text.splitlines():
        if line.startswith(f'{name}{{reason="{reason}"}}'):
            return float(line.split()[-1])
    return 0.0


def tied(graph: TenantGraph, incident_id: str, order: tuple[int, int]) -> None:
    """Write the page's two delivery records again with one timestamp, in `order` (0: the
    refusal, 1: the delivery that fell back)."""
    graph._graph.query(
        "MATCH (i:Incident {id: $id})-[:HAS_DELIVERY]->(d:Delivery) "
        "WITH i, collect(d) AS old, max(d.at) AS at FOREACH (d IN old | DELETE d) "
        "WITH i, at UNWIND $rows AS r "
        "CREATE (i)-[:HAS_DELIVERY]->(:Delivery {intent_id: r.intent_id, at: at, "
        "channel: r.channel, outcome: r.outcome, reason: r.reason, fallback_from: r.from})",
        {"id": incident_id, "rows": [[
            {"intent_id": f"incident:{incident_id}:initial-notification", "channel": c,
             "outcome": o, "reason": r, "from": f}
            for c, o, r, f in (("#checkout-oncall", "refused", "is_archived", None),
                               ("#platform-oncall", "delivered", None, "#checkout-oncall"))
        ][n] for n in order]},
    )  # fmt: skip


def delivery_lines(page: str) -> list[str]:
    """The delivery lines of an incident page's timeline (its `ev-delivery` events), in order."""
    story = page.split('id="events">')[1].split("</ol>")[0]
    return [html.unescape(t) for t in re.findall(
        r'class="ev-delivery"[^>]*>.*?<span class="what">([^<]+)</span>', story, re.S)]  # fmt: skip


def test_a_refused_channel_falls_back_along_the_root_route_and_says_why(slack_gw, api, graph):
    api.refuse("C0CHECKOUT", "is_archived")  # the owner's channel (payment: checkout)
    incident_id = fire(slack_gw)
    slack_gw.drain()
    assert api.roots("C0CHECKOUT") == []
    (root,) = api.roots("C0PLATFORM")  # the default team's channel took it
    assert "#checkout-oncall refused it (is_archived)" in root["text"]
    assert "#checkout-oncall refused it (is_archived)" in status_block(root)
    found = detail(slack_gw, incident_id)
    page = f"incident:{incident_id}:initial-notification"
    assert [(d["intent_id"], d["channel"], d["outcome"], d["reason"], d["fallback_from"])
            for d in found["deliveries"]] == [
        (page, "#checkout-oncall", "refused", "is_archived", None),
        (page, "#platform-oncall", "delivered", None, "#checkout-oncall"),
    ]  # fmt: skip
    report = incident_report(found)  # `blast-radius incident ID`
    assert "refused   #checkout-oncall (is_archived) at " in report
    assert "delivered #platform-oncall, after #checkout-oncall refused at " in report
    assert metric(slack_gw, "blast_deliveries_failed_total", "is_archived") == 1
    assert metric(slack_gw, "blast_delivery_fallbacks_total", "is_archived") == 1
    # the web page's header says where it landed, not the refusal recorded in the same write:
    # both carry one timestamp, and which comes first among equals is FalkorDB's choice
    for order in ((0, 1), (1, 0)):
        tied(graph, incident_id, order)
        web = slack_gw.http.get(f"/ui/incidents/{incident_id}").text
        delivered = web.split('id="delivered">')[1].split("</dd>")[0]
        assert delivered == "✓ to #platform-oncall (fell back from #checkout-oncall)", order
        row = slack_gw.http.get("/").text.split(f'data-key="{incident_id}"')[1].split("</tr>")[0]
        assert "✗" not in row, order  # the list's Paged cell: no refusal either
        # the timeline tells it in the order it happened: the refusal, then where it landed
        assert delivery_lines(web) == [
            "Not delivered to #checkout-oncall: refused (is_archived)",
            "Delivered to #platform-oncall (fell back from #checkout-oncall)",
        ], order
        found = [(d["channel"], d["outcome"]) for d in detail(slack_gw, incident_id)["deliveries"]]
        assert found == [("#checkout-oncall", "refused"), ("#platform-oncall", "delivered")], order
    # the page links the incident's web page; the thread and edits follow it where it landed
    assert f"<{PUBLIC}/ui/incidents/{incident_id}|" in root["text"]
    fire(slack_gw, status="resolved")
    slack_gw.drain()
    (root,) = api.roots("C0PLATFORM")
    assert root.get("edited") and "Resolved at " in status_block(root)
    assert "refused it (is_archived)" in status_block(root)  # the restated page still says so
    notes = [m["text"] for m in api.replies(root["ts"]) if m["text"].startswith("Resolved")]
    assert len(notes) == 1
    link = f"<{PUBLIC}/ui/incidents/{incident_id}|Incident page>"
    assert all(link in m["text"] for m in api.replies(root["ts"]))  # every thread reply links it
    assert api.roots("C0CHECKOUT") == []


def test_every_channel_refusing_keeps_the_page_in_the_outbox_and_says_so(slack_gw, api, graph):
    for channel in ("C0CHECKOUT", "C0PLATFORM", "C0DEFAULT"):
        api.refuse(channel, "not_in_channel")
    incident_id = fire(slack_gw)
    slack_gw.drain()
    assert [
        r for r in api.roots() if r["channel"] in ("C0CHECKOUT", "C0PLATFORM", "C0DEFAULT")
    ] == []
    outcomes = [(d["channel"], d["outcome"]) for d in detail(slack_gw, incident_id)["deliveries"]]
    assert outcomes == [("#checkout-oncall", "refused"), ("#platform-oncall", "refused"),
                        ("C0DEFAULT", "refused"), ("outbox", "delivered")]  # fmt: skip
    (copy,) = [e for e in slack_gw.outbox if e["intent_id"].endswith(":fallback")]
    assert "C0DEFAULT refused it (not_in_channel)" in copy["text"]
    # the list does not let "Who has it" read as if someone was messaged
    row = slack_gw.http.get("/").text.split(f'data-key="{incident_id}"')[1].split("</tr>")[0]
    assert "✗ only in the outbox: every channel refused it" in row
    # the timeline says it in words, the intent id on hover (a trial read "Sent notification
    # (initial-notification:fallback) via outbox")
    story = slack_gw.http.get(f"/ui/incidents/{incident_id}").text.split('id="events">')[1]
    copied = f'title="incident:{incident_id}:initial-notification:fallback"><span class="at">'
    assert copied in story
    line = story.split(copied)[1].split("</li>")[0]
    assert "Copied the page to the outbox: no channel took it</span>" in line, line
    # in the order it happened: every refusal, then where the page went instead
    assert delivery_lines(slack_gw.http.get(f"/ui/incidents/{incident_id}").text) == [
        "Not delivered to #checkout-oncall: refused (not_in_channel)",
        "Not delivered to #platform-oncall: refused (not_in_channel)",
        "Not delivered to C0DEFAULT: refused (not_in_channel)",
        "Delivered to outbox (fell back from C0DEFAULT)",
        "Copied the page to the outbox: no channel took it",
    ]
    # the copy's own clock reading can come a millisecond before the refusals': still after them
    graph._graph.query(
        "MATCH (x:Action {intent_id: $copy})-[:FOR]->(i:Incident)-[:HAS_DELIVERY]->(d:Delivery) "
        "WITH x, min(d.at) AS first SET x.updated_at = first - 1, x.reserved_at = first - 1",
        {"copy": f"incident:{incident_id}:initial-notification:fallback"},
    )
    assert delivery_lines(slack_gw.http.get(f"/ui/incidents/{incident_id}").text)[3:] == [
        "Delivered to outbox (fell back from C0DEFAULT)",
        "Copied the page to the outbox: no channel took it",
    ]
    assert "Not delivered through slack" in copy["text"]
    assert metric(slack_gw, "blast_deliveries_failed_total", "not_in_channel") == 3


def run_policy(gw: Gateway, graph: TenantGraph, incident_id: str) -> dict[str, Any]:
    """Run a responder until the incident's escalation task is done or failed; its row."""
    stop = threading.Event()
    thread = threading.Thread(target=gw.runtime.make_worker("responder").run, args=(stop,))
    thread.start()
    try:
        wait_for("the policy run", lambda: task(graph, incident_id, "escalate")["status"] in
                 ("done", "failed"))  # fmt: skip
    finally:
        stop.set()
        thread.join()
    return task(graph, incident_id, "escalate")


def test_a_refused_level_goes_along_the_root_route_and_the_next_level_still_runs(
    slack_gw, api, graph
):
    with_policy(graph, [("1s", ["Di Example"]), ("2s", ["+platform"])])
    incident_id = fire(slack_gw)
    slack_gw.drain()
    (root,) = api.roots("C0CHECKOUT")
    api.refuse("C0CHECKOUT", "is_archived")  # archived after the page: its thread refuses
    done = run_policy(slack_gw, graph, incident_id)
    assert done["status"] == "done", done
    levels = [m for m in api.roots("C0PLATFORM") if "Escalation level" in m["text"]]
    assert [m["text"].split(":")[0] for m in levels] == [
        "<@U0DI> Escalation level 1 of 2",
        "Escalation level 2 of 2",
    ]
    assert levels[0]["text"].endswith(
        "(Posted here: the page's thread in C0CHECKOUT (is_archived); #checkout-oncall "
        "(is_archived) refused it.)"
    )
    assert not [m for m in api.replies(root["ts"]) if "Escalation" in m["text"]]


def test_every_channel_refusing_a_level_keeps_it_in_the_outbox_and_the_policy_goes_on(
    slack_gw, api, graph
):
    with_policy(graph, [("1s", ["Di Example"]), ("2s", ["+platform"])])
    for channel in ("C0CHECKOUT", "C0PLATFORM", "C0DEFAULT"):
        api.refuse(channel, "not_in_channel")
    incident_id = fire(slack_gw)
    slack_gw.drain()  # the page: in the outbox only
    done = run_policy(slack_gw, graph, incident_id)
    assert done["status"] == "done", done
    copies = {e["intent_id"]: e["text"] for e in slack_gw.outbox
              if ":escalate:" in str(e["intent_id"])}  # fmt: skip
    assert sorted(copies) == [f"incident:{incident_id}:escalate:{n}:fallback" for n in (1, 2)]
    first = copies[f"incident:{incident_id}:escalate:1:fallback"]
    assert "Escalation level 1 of 2" in first and "Notifying Di Example" in first
    assert "Not delivered through slack: C0DEFAULT (not_in_channel); #checkout-oncall " in first
    assert (
        "Hal Example (on call for platform)"
        in copies[f"incident:{incident_id}:escalate:2:fallback"]
    )


@pytest.mark.parametrize(
    "refusing", [("C0CHECKOUT",), ("C0CHECKOUT", "C0PLATFORM", "C0DEFAULT")],
    ids=["root-route", "outbox"],
)  # fmt: skip
def test_a_worker_killed_mid_fallback_delivers_the_level_once_after_restart(
    slack_gw, api, graph, spawn, refusing
):
    """The page's channel is archived after the page; a responder process is SIGKILLed in the
    middle of a level's fallback delivery, after the message landed and before its outcome
    was recorded: inside Slack's accept of the post along the root route, or (every channel
    refusing) just after the outbox copy was appended. A worker taking over finds it there,
    and the level lands exactly once, its Action recorded sent."""
    with_policy(graph, [("1s", ["Di Example"]), ("2s", ["+platform"])])
    incident_id = fire(slack_gw)
    slack_gw.drain()
    (root,) = api.roots("C0CHECKOUT")
    for channel in refusing:
        api.refuse(channel, "is_archived")
    time.sleep(2.1)  # both levels due: the worker sends level 1, then checkpoints level 2's step
    first = f"incident:{incident_id}:escalate:1"
    slack_env = {"SLACK_BOT_TOKEN": TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
                 "SLACK_API_URL": api.base_url, "SLACK_DEFAULT_CHANNEL": "C0DEFAULT",
                 "BLAST_DEV": "true", "BLAST_LEASE_MS": "500"}  # fmt: skip
    doomed: dict[str, subprocess.Popen[bytes]] = {}
    if refusing == ("C0CHECKOUT",):

        def kill_on_platform() -> None:
            # Slack has stored the level in #platform-oncall; the worker dies before the answer
            last = api.messages[-1]
            level = last["channel"] == "C0PLATFORM" and "Escalation level 1" in str(last["text"])
            if level and doomed["p"].poll() is None:
                os.kill(doomed["p"].pid, signal.SIGKILL)

        api.fail("chat.postMessage", Failure(after_store=kill_on_platform), times=10)
        doomed["p"] = spawn("worker", "--role", "responder", **slack_env)
    else:  # step 3 (level 2's whom) is checkpointed right after level 1's outbox copy
        doomed["p"] = spawn("worker", "--role", "responder", BLAST_CHAOS_HALT_AFTER_STEP="3",
                            **slack_env)  # fmt: skip
        escalate = {"task_id": task(graph, incident_id, "escalate")["id"]}
        wait_for("level 2's step", lambda: len(graph.rows("task_steps", escalate)) == 3)
        doomed["p"].send_signal(signal.SIGKILL)
    assert doomed["p"].wait(30) == -signal.SIGKILL

    def levels(n: int) -> list[dict[str, Any]]:
        return [m for m in api.messages if f"Escalation level {n} of 2" in str(m["text"])]

    def copies(n: int) -> list[dict[str, Any]]:
        return [e for e in slack_gw.outbox if e["intent_id"] == f"{first[:-1]}{n}:fallback"]

    def actions() -> dict[str, dict[str, Any]]:
        rows = graph.rows("incident_actions", {"incident_id": incident_id})
        return {a["intent_id"]: a for a in rows}

    # the dead worker's delivery landed, its outcome unknown to the graph
    if refusing == ("C0CHECKOUT",):
        assert [m["channel"] for m in levels(1)] == ["C0PLATFORM"] and copies(1) == []
        assert actions()[first]["external_ref"] is None
    else:
        assert levels(1) == [] and len(copies(1)) == 1
        assert actions()[f"{first}:fallback"]["status"] == "reserved"
    done = run_policy(slack_gw, graph, incident_id)
    assert (done["status"], done["taken_over"]) == ("done", True), done
    slack_gw.drain()  # nothing is said twice
    if refusing == ("C0CHECKOUT",):
        (landed,) = levels(1)
        assert [m["channel"] for m in levels(2)] == ["C0PLATFORM"]
        assert copies(1) == copies(2) == []
        assert (actions()[first]["status"], parse_ref(actions()[first]["external_ref"])) == (
            "sent", (landed["channel"], landed["ts"]))  # fmt: skip
    else:
        assert levels(1) == levels(2) == []
        assert len(copies(1)) == len(copies(2)) == 1
        assert actions()[f"{first}:fallback"]["status"] == "sent"
    assert not [m for m in api.replies(root["ts"]) if "Escalation" in str(m["text"])]


def test_a_click_from_a_person_the_world_knows_by_email_is_recorded_by_their_name(slack_gw, api):
    """The demo world gives Cy and Di an email and no Slack id; Slack holds those emails for
    U0CY and U0DI (`users.info`), as an approval is matched: their clicks carry their names,
    not the Slack username."""
    incident_id = fire(slack_gw)
    slack_gw.drain()
    (root,) = api.roots()
    assert click(slack_gw, root, "blast_ack", incident_id, user="U0CY").status_code == 200
    assert click(slack_gw, root, "blast_confirm", incident_id, user="U0DI").status_code == 200
    assert click(slack_gw, root, "blast_resolved", incident_id, user="U0DI",
                 action_ts="1790000001.000001").status_code == 200  # fmt: skip
    slack_gw.drain()
    found = detail(slack_gw, incident_id)
    assert (found["acknowledged_by"], found["resolved_by"]) == ("Cy Example", "Di Example")
    assert {v["by_name"] for v in found["verdicts"]} == {"Di Example"}
    (root,) = api.roots()
    assert "Acknowledged by Cy Example at " in status_block(root)


def reopen(graph: TenantGraph, incident_id: str) -> None:
    """Resolve the payment alert at 00:05 and fire it again at 00:07: inside the 10-minute
    reopen window, so triage reopens the incident (task `notify_reopened`)."""
    for status, starts, ends in (("resolved", "00:00", "2026-11-01T00:05:00Z"),
                                 ("firing", "00:07", "0001-01-01T00:00:00Z")):  # fmt: skip
        body = json.loads(alert_body("payment"))
        body["alerts"][0] |= {"status": status, "startsAt": f"2026-11-01T{starts}:00Z",
                              "endsAt": ends}  # fmt: skip
        report = triage(graph, normalize(parse_body(json.dumps(body).encode()), "unknown"),
                        900_000, reopen_ms=600_000)  # fmt: skip
    assert report.reopened == [incident_id]


def test_the_page_restated_after_a_reopen_keeps_the_incident_page_link(slack_gw, api, graph):
    """A reopen edits the page (`…:page:reopened:<alert key>`) as every other edit does: with
    the link to the incident's web page under `BLAST_PUBLIC_URL`."""
    incident_id = incident(graph)
    slack_gw.drain()
    (root,) = api.roots("C0CHECKOUT")
    link = f"<{PUBLIC}/ui/incidents/{incident_id}|"
    assert link in root["text"] and not root.get("edited")
    reopen(graph, incident_id)
    slack_gw.drain()
    assert task(graph, incident_id, "notify_reopened")["status"] == "done"
    (root,) = api.roots("C0CHECKOUT")
    edits = [p for _, m, p in api.calls if m == "chat.update" and p.get("ts") == root["ts"]]
    assert len(edits) == 1 and root["edited"] == 1
    assert link in root["text"], root["text"]


def test_the_page_restated_after_a_reopen_still_says_which_channel_refused_it(slack_gw, api, graph):
    """The page fell back from checkout's archived channel to platform's and says why; every
    edit of it keeps saying so, the reopen's too (it dropped the refusal: the restated page
    read as if the page had gone to platform's channel first)."""
    api.refuse("C0CHECKOUT", "is_archived")
    incident_id = incident(graph)
    slack_gw.drain()
    (root,) = api.roots("C0PLATFORM")
    assert "#checkout-oncall refused it (is_archived)" in status_block(root)
    reopen(graph, incident_id)
    slack_gw.drain()
    assert task(graph, incident_id, "notify_reopened")["status"] == "done"
    (root,) = api.roots("C0PLATFORM")
    edits = [p for _, m, p in api.calls if m == "chat.update" and p.get("ts") == root["ts"]]
    assert len(edits) == 1 and root["edited"] == 1  # the reopen's edit
    assert "#checkout-oncall refused it (is_archived)" in status_block(root), status_block(root)
    assert "#checkout-oncall refused it (is_archived)" in root["text"]


@pytest.mark.parametrize(
    "refusing", [("C0CHECKOUT",), ("C0CHECKOUT", "C0PLATFORM", "C0DEFAULT")],
    ids=["root-route", "outbox"],
)  # fmt: skip
def test_a_reopen_notice_slack_refuses_goes_along_the_root_route_and_the_task_completes(
    slack_gw, api, graph, refusing
):
    """The page's channel is archived after the page: the reopen's notice goes along the root
    route as a message of its own (else to the outbox), once, the page's edit is kept in the
    outbox, and the policy's reopen round is still enqueued."""
    with_policy(graph, [("1h", ["Di Example"])])
    incident_id = incident(graph)
    slack_gw.drain()
    (root,) = api.roots("C0CHECKOUT")
    for channel in refusing:
        api.refuse(channel, "is_archived")
    reopen(graph, incident_id)
    slack_gw.drain()
    assert task(graph, incident_id, "notify_reopened")["status"] == "done"
    rounds = [t["id"] for t in graph.rows("incident_tasks", {"incident_id": incident_id})]
    assert f"escalate:{incident_id}:reopen:1" in rounds
    slack_gw.drain()  # nothing is said twice
    told = [m for m in api.messages if "Firing again" in str(m["text"])]
    copies = [e for e in slack_gw.outbox if str(e["intent_id"]).endswith(":fallback")]
    notices = [e for e in copies if f"{incident_id}:reopened:" in str(e["intent_id"])]
    # the page's edit (open again) is refused in its channel too: kept in the outbox, once
    edits = [e for e in copies if f"{incident_id}:page:reopened:" in str(e["intent_id"])]
    assert len(edits) == 1 and edits[0]["kind"] == "update"
    refused = "the page's thread in C0CHECKOUT (is_archived); #checkout-oncall (is_archived)"
    if refusing == ("C0CHECKOUT",):
        assert [(m["channel"], m["thread_ts"]) for m in told] == [("C0PLATFORM", None)]
        assert f"(Posted here: {refused} refused it.)" in told[0]["text"]
        assert notices == []
    else:
        assert told == [] and len(notices) == 1
        assert "Firing again" in notices[0]["text"]
        assert notices[0]["notice"]["undelivered"] == (
            f"Not delivered through slack: {refused}; #platform-oncall (is_archived); "
            "C0DEFAULT (is_archived) refused it. Copied to outbox instead."
        )
    assert not [m for m in api.replies(root["ts"]) if "Firing again" in str(m["text"])]


@pytest.mark.parametrize(
    "refusing", [("C0CHECKOUT",), ("C0CHECKOUT", "C0PLATFORM", "C0DEFAULT")],
    ids=["root-route", "outbox"],
)  # fmt: skip
def test_a_resolve_notice_slack_refuses_goes_along_the_root_route_and_the_task_completes(
    slack_gw, api, refusing
):
    """The page's channel is archived after the page, then the alerts resolve: the
    `notify_cleared` task ends done, its notice goes along the root route as a message of its
    own (else to the outbox), once, and the page's edit is kept in the outbox."""
    incident_id = fire(slack_gw)
    slack_gw.drain()
    (root,) = api.roots("C0CHECKOUT")
    for channel in refusing:
        api.refuse(channel, "is_archived")
    fire(slack_gw, status="resolved")
    slack_gw.drain()
    cleared = [t for t in detail(slack_gw, incident_id)["tasks"] if t["kind"] == "notify_cleared"]
    assert cleared and {t["status"] for t in cleared} == {"done"}
    slack_gw.drain()  # nothing is said twice
    told = [m for m in api.messages if str(m["text"]).startswith("Resolved: incident")]
    copies = [e for e in slack_gw.outbox if str(e["intent_id"]).endswith(":fallback")]
    notices = [e for e in copies if e["intent_id"].startswith(f"incident:{incident_id}:resolve-")]
    edits = [e for e in copies if e["intent_id"] == f"incident:{incident_id}:resolved:fallback"]
    assert len(edits) == 1 and edits[0]["kind"] == "update"
    refused = "the page's thread in C0CHECKOUT (is_archived); #checkout-oncall (is_archived)"
    if refusing == ("C0CHECKOUT",):
        assert [(m["channel"], m["thread_ts"]) for m in told] == [("C0PLATFORM", None)]
        assert f"(Posted here: {refused} refused it.)" in told[0]["text"]
        assert notices == []
    else:
        assert told == [] and len(notices) == 1
        assert notices[0]["intent_id"] == f"incident:{incident_id}:resolve-notice:fallback"
        assert "Resolved: incident" in notices[0]["text"]
        assert notices[0]["notice"]["undelivered"] == (
            f"Not delivered through slack: {refused}; #platform-oncall (is_archived); "
            "C0DEFAULT (is_archived) refused it. Copied to outbox instead."
        )
    assert not [m for m in api.replies(root["ts"]) if "Resolved" in str(m["text"])]


def test_acknowledge_from_the_button_and_the_api(slack_gw, api):
    incident_id = fire(slack_gw)
    slack_gw.drain()
    (root,) = api.roots()
    assert "blast_ack" in json.dumps(root["blocks"])
    assert click(slack_gw, root, "blast_ack", incident_id).status_code == 200
    slack_gw.drain()
    (root,) = api.roots()
    found = detail(slack_gw, incident_id)
    assert found["acknowledged_by"] == "alice" and found["acknowledged_at"] > 0
    assert status_block(root).startswith("Acknowledged by alice at ")
    assert "blast_ack" not in json.dumps(root["blocks"])  # nothing left to acknowledge
    again = slack_gw.http.post(f"/api/v1/incidents/{incident_id}/ack", json={"by": "Cy Example"})
    assert again.status_code == 200
    assert again.json() | {"acknowledged_at": 0} == {
        "id": incident_id,
        "acknowledged_by": "alice",
        "acknowledged_at": 0,
        "repeat": True,
    }
    assert slack_gw.http.post("/api/v1/incidents/nope/ack", json={"by": "x"}).status_code == 404
    assert slack_gw.http.post(f"/api/v1/incidents/{incident_id}/ack", json={}).status_code == 422
    # no body at all (a new user's trial: `{"loc": ["body"], "msg": "Field required"}`): the
    # 422 names `by` and what it is, as for `{}`
    bare = slack_gw.http.post(f"/api/v1/incidents/{incident_id}/resolve")
    assert (bare.status_code, bare.json()["detail"]) == (422, [{
        "loc": ["body", "by"], "type": "missing", "input": None,
        "msg": "Field required: who resolves the incident (a person's name: the API's "
               "credential is a tenant's, not a person's)",
    }]), bare.text  # fmt: skip
    done = slack_gw.http.post(f"/api/v1/incidents/{incident_id}/resolve", json={"by": "Cy"})
    assert done.status_code == 200 and done.json()["status"] == "resolved"
    assert done.json()["resolved_by"] == "Cy" and not done.json()["repeat"]
    late = slack_gw.http.post(f"/api/v1/incidents/{incident_id}/ack", json={"by": "Di"})
    assert late.status_code == 409 and "resolved" in late.json()["detail"]


def test_resolving_many_alerts_sends_one_notice_per_incident(slack_gw, api):
    incident_id = fire(slack_gw, "cartFailure")  # several alerts in one incident
    slack_gw.drain()
    alerts = detail(slack_gw, incident_id)["alerts"]
    assert len(alerts) > 1
    fire(slack_gw, "cartFailure", status="resolved")
    slack_gw.drain()
    (root,) = api.roots()
    said = [m["text"] for m in api.replies(root["ts"]) if "alert in this incident" not in m["text"]]
    assert len(said) == 1 and said[0].startswith(f"Resolved: incident {incident_id} at ")
    assert all(a["alertname"] in said[0] or a["component"] in said[0] for a in alerts)
    assert root.get("edited") and "blast_resolved" not in json.dumps(root["blocks"])


def signed_form(payload: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    raw = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
    headers = {"Content-Type": "application/x-www-form-urlencoded"} | signed_headers(raw)
    return raw, headers


@pytest.mark.parametrize(
    ("team", "app", "status"),
    [("T0OTHER", "A0BLAST", 403), ("T0TEST", "A0OTHER", 403), ("T0TEST", "A0BLAST", 200)],
)
def test_slack_requests_from_another_workspace_or_app_are_refused(slack_gw, team, app, status):
    click = {"type": "block_actions", "team": {"id": team}, "api_app_id": app,
             "user": {"id": "U0ALICE"}, "actions": []}  # fmt: skip
    raw, headers = signed_form(click)
    answer = slack_gw.http.post("/api/v1/slack/interactions", content=raw, headers=headers)
    assert answer.status_code == status, answer.text
    event = json.dumps({"type": "event_callback", "team_id": team, "api_app_id": app,
                        "event_id": "Ev1", "event": {"type": "reaction_added"}})  # fmt: skip
    answer = slack_gw.http.post(
        "/api/v1/slack/events", content=event.encode(),
        headers={"Content-Type": "application/json"} | signed_headers(event.encode()),
    )  # fmt: skip
    assert answer.status_code == status, answer.text


def test_doctor_names_every_refusing_channel_and_unknown_person(slack_gw, api):
    api.refuse("C0CHECKOUT", "is_archived")
    api.refuse("C0CATALOG", "not_in_channel")
    api.refuse("C0DATA", "channel_not_found")
    api.refuse("C0DEFAULT", "not_in_channel")
    runtime = slack_gw.runtime
    assert runtime.slack is not None and runtime.store is not None
    found = check_slack_world(runtime.settings, runtime.store, runtime.slack)
    assert [f.what for f in found if f.what.startswith("SLACK_DEFAULT_CHANNEL")] == [
        "SLACK_DEFAULT_CHANNEL C0DEFAULT: not_in_channel: invite the bot (/invite) (the last "
        "channel a refused page tries before the outbox)"
    ]
    problems = sorted(f.what.split(": ", 1)[1] for f in found
                      if not f.ok and not f.what.startswith("SLACK_"))  # fmt: skip
    assert problems == [
        "team catalog: Ed Example: users_not_found: Slack knows no user with that email",
        "team catalog: channel #catalog-oncall: not_in_channel: invite the bot (/invite)",
        "team checkout: channel #checkout-oncall: is_archived",
        "team data-platform: Flo Example: users_not_found: Slack knows no user with that email",
        "team data-platform: Gus Example: users_not_found: Slack knows no user with that email",
        "team data-platform: channel #data-platform-oncall: channel_not_found",
        "team platform: Hal Example: users_not_found: Slack knows no user with that email",
        "team storefront: Bo Example: users_not_found: Slack knows no user with that email",
    ]


def test_serve_takes_alerts_while_slack_is_unreachable_and_survives_sighup(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, tenant: str, tmp_path: Path
) -> None:
    port, nobody = free_port(), free_port()  # nothing listens on `nobody`: Slack unreachable
    log = tmp_path / "serve.log"
    env = clean_env(("BLAST_", "FALKORDB_", "PROMETHEUS_", "SLACK_")) | {
        "FALKORDB_URL": falkordb.url, "BLAST_DEFAULT_TENANT": tenant,
        "BLAST_DATA_DIR": str(tmp_path), "BLAST_PORT": str(port), "BLAST_WORKERS": "0",
        "BLAST_DEV": "true", "SLACK_BOT_TOKEN": TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": f"http://127.0.0.1:{nobody}/api/",
    }  # fmt: skip
    with log.open("w") as out:
        serve = subprocess.Popen([sys.executable, "-m", "gateway.cli", "serve"], cwd=ROOT,
                                 env=env, stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        ready = None
        deadline = time.monotonic() + 90
        while ready is None and time.monotonic() < deadline and serve.poll() is None:
            try:
                ready = httpx.get(f"{url}/health/ready", timeout=2)
            except httpx.HTTPError:
                time.sleep(0.2)
        assert ready is not None and ready.status_code == 200, log.read_text()
        note, workers = ready.json()["detail"]
        assert "Slack unreachable" in note and "pages wait until Slack answers" in note
        assert workers.startswith("BLAST_WORKERS=0: no worker process runs here")
        answer = httpx.post(f"{url}/api/v1/alerts", content=alert_body("payment"), timeout=30)
        assert answer.status_code == 200 and answer.json()["incidents"]
        serve.send_signal(signal.SIGHUP)
        time.sleep(0.5)
        assert serve.poll() is None and httpx.get(f"{url}/health/live").status_code == 200
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(60)
    text = log.read_text()
    assert "SIGHUP received and ignored" in text, text
    assert serve.returncode == 0, text


class MergedMidQuery:
    """The tenant graph, except that the first `respond_context` read finds the incident being
    merged into another: the merge commits, and that read fails as FalkorDB failed on it."""

    def __init__(self, graph: TenantGraph, into: str) -> None:
        self._graph, self.into, self.failed = graph, into, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._graph, name)

    def rows(self, query: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        if query == "respond_context" and not self.failed:
            self.failed = True
            assert params is not None
            self._graph._graph.query(
                "MATCH (i:Incident {id: $id}) SET i.status = 'merged', i.merged_into = $into",
                {"id": params["incident_ids"][0], "into": self.into},
            )
            raise redis.ResponseError("the incident's alerts moved while it was read")
        return self._graph.rows(query, params)


def test_a_respond_task_whose_incident_was_merged_meanwhile_finishes_cleanly(
    store: GraphStore, graph: TenantGraph, tenant: str, tmp_path: Path
) -> None:
    incident = investigated(store, graph, tenant)
    taken = claim(graph, list(ROLE_KINDS["responder"]), "w", 30_000, 5)
    assert taken is not None and taken.incident_id == incident
    outbox = Outbox(tmp_path / "outbox.jsonl")
    run = TaskRun(MergedMidQuery(graph, "inc-survivor"), taken, 30_000)  # type: ignore[arg-type]
    Responder(outbox, outbox).run(run)
    (row,) = [t for t in graph.rows("incident_tasks", {"incident_id": incident})
              if t["id"] == taken.task_id]  # fmt: skip
    assert row["status"] == "done" and row["last_error"] is None
    assert outbox.entries() == []  # nobody paged for an incident that no longer exists as such


def test_a_batch_whose_read_ahead_fails_leaves_each_task_to_read_its_own(
    store: GraphStore, graph: TenantGraph, tenant: str, tmp_path: Path
) -> None:
    """The same merge, met by the batch's read-ahead (`Worker.run_batch`): the worker does not
    die with its batch claimed; the task reads its own context, as without a batch, and ends."""
    from agents.tasks.worker import Worker

    incident = investigated(store, graph, tenant)
    taken = claim(graph, list(ROLE_KINDS["responder"]), "w", 30_000, 5)
    assert taken is not None and taken.incident_id == incident
    outbox = Outbox(tmp_path / "outbox.jsonl")
    worker = Worker(store, [tenant], [Responder(outbox, outbox)], claim_batch=8)
    merging = MergedMidQuery(graph, "inc-survivor")
    assert worker.run_batch(merging, tenant, [taken], None) == []  # type: ignore[arg-type]
    assert merging.failed  # the read-ahead met the merge
    (row,) = [t for t in graph.rows("incident_tasks", {"incident_id": incident})
              if t["id"] == taken.task_id]  # fmt: skip
    assert row["status"] == "done" and row["last_error"] is None
    assert outbox.entries() == []
