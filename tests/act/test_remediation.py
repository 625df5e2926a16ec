"""Acting only with approval, then verifying: a playbook's remediation is proposed when its
checks hold, approved by a verified person of the owning team (web or Slack), run once through
double clicks, 5xx answers and SIGKILL, recorded as attempts, and verified independently.

The real gateway, worker and FalkorDB; PyGithub against tests/github_api.py (Actions, pull
requests, contents); the runbook webhook against tests/runbook_receiver.py, which checks the
signature itself; Slack against tests/slack_api.py.
"""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from falkordb import FalkorDB
from pydantic import SecretStr, ValidationError
from typer.testing import CliRunner

from adapters.falkordb import EmbeddedFalkorDB, GraphStore, TenantGraph, graph_name
from adapters.github.actions import FlagdPullRequest, branch_name
from adapters.github.notifier import client
from adapters.notices import FollowUp, Span, fmt_ms
from adapters.notify import AdapterError, OutboundMessage
from agents.act import run, spec
from gateway.cli.commands import app
from gateway.cli.demo import rfc3339
from gateway.cli.demo_evidence import Edge, PrometheusServer, Window, available
from gateway.ops.runtime import Runtime
from gateway.web.timeline import events
from gateway.world import TopologyError, apply_world, demo_world_path, import_world, load_world
from gateway.world.sources import load_sources
from tests.conftest import Gateway, clean_env, make_settings
from tests.github_api import TOKEN as GITHUB_TOKEN
from tests.github_api import FakeGitHub
from tests.respond.test_escalation import with_policy
from tests.runbook_receiver import SECRET, Receiver
from tests.slack_api import SIGNING_SECRET, TEAM, SlackAPI, signed_headers
from tests.slack_api import TOKEN as SLACK_TOKEN

ROOT = Path(__file__).resolve().parents[2]
#: People with their own viewer token (`BLAST_VIEWER_TOKENS=tenant:person=token`).
PEOPLE = ["cy@example.com", "hal@example.com", "mallory@evil.example"]
#: Members of checkout (which owns payment in the demo world) and of platform.
MEMBER, OUTSIDER = "cy@example.com", "hal@example.com"
WORKFLOW = {"type": "github_workflow", "repo": "o/r", "workflow": "rollback.yml", "ref": "main",
            "inputs": {"service": "payment"}}  # fmt: skip
#: A flagd flags file as the OpenTelemetry demo ships it (src/flagd/demo.flagd.json, shortened).
FLAGS = {"$schema": "https://flagd.dev/schema/v0/flags.json", "flags": {
    "paymentFailure": {"description": "Fail payment service charge requests n%",
                       "state": "ENABLED", "variants": {"100%": 1, "50%": 0.5, "off": 0},
                       "defaultVariant": "50%"}}}  # fmt: skip


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub().start()
    fake.files[("main", "src/flagd/demo.flagd.json")] = json.dumps(FLAGS, indent=2)
    yield fake
    fake.stop()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver().start()
    yield server
    server.stop()


@pytest.fixture
def shop(
    falkordb: EmbeddedFalkorDB, tmp_path: Path, github: FakeGitHub
) -> Iterator[Callable[..., Gateway]]:
    """A gateway on the demo world, tickets on the local GitHub, with settings as given."""
    opened: list[Gateway] = []

    def start(**extra: Any) -> Gateway:
        tenant = f"r{uuid.uuid4().hex[:10]}"
        values = {
            "github_token": SecretStr(GITHUB_TOKEN), "github_repo": "o/r",
            "github_api_url": github.url, "github_request_interval_s": 0,
            "github_write_interval_s": 0, "viewer_tokens": ",".join(
                f"{tenant}:{person}=tok-{n}" for n, person in enumerate(PEOPLE)),
            "runbook_webhook_secret": SecretStr(SECRET), "actions_enabled": True,
        } | extra  # fmt: skip
        runtime = Runtime(make_settings(falkordb, tmp_path / tenant, tenant, **values))
        store = runtime.open()
        import_world(store.graph(graph_name(tenant)), load_world(demo_world_path()))
        gw = Gateway(runtime, runtime.serve_http("127.0.0.1", 0), None)
        gw.graph = store.graph(graph_name(tenant))  # type: ignore[attr-defined]
        gw.tenant = tenant  # type: ignore[attr-defined]
        opened.append(gw)
        return gw

    yield start
    for gw in opened:
        gw.http.close()
        gw.runtime.close()


def graph_of(gw: Gateway) -> TenantGraph:
    found: TenantGraph = gw.graph  # type: ignore[attr-defined]
    return found


def plant(gw: Gateway, remediation: dict[str, Any] | None, pb_id: str = "pb-rollback",
          extra_checks: list[dict[str, Any]] | None = None) -> None:  # fmt: skip
    """A playbook on payment whose check holds for a payment error alert."""
    body: dict[str, Any] = {
        "id": pb_id, "title": "Roll back payment", "component": "payment",
        "checks": [{"type": "alert_kind", "kind": "errors"}, *(extra_checks or [])],
    }  # fmt: skip
    if remediation is not None:
        body["remediation"] = remediation
    answer = gw.http.post("/api/v1/playbooks", json=body)
    assert answer.status_code == 201, answer.text


def alert(status: str, at: datetime) -> dict[str, Any]:
    return {
        "status": status, "labels": {"alertname": "ServiceHighErrorRate", "service": "payment",
                                     "severity": "critical"},
        "annotations": {"summary": "errors on payment"}, "startsAt": rfc3339(at),
        "endsAt": rfc3339(datetime.now(UTC)) if status == "resolved" else "0001-01-01T00:00:00Z",
    }  # fmt: skip


def fire(gw: Gateway, at: datetime) -> str:
    """A payment error alert; the agents run (diagnosis, page, proposal); the incident id."""
    answer = gw.http.post("/api/v1/alerts", json={"alerts": [alert("firing", at)]})
    assert answer.status_code == 200, answer.text
    (incident,) = answer.json()["incidents"]
    gw.drain()
    return str(incident)


def remediations(gw: Gateway, incident: str) -> list[dict[str, Any]]:
    answer = gw.http.get(f"/api/v1/incidents/{incident}/remediations")
    assert answer.status_code == 200, answer.text
    rows: list[dict[str, Any]] = answer.json()["remediations"]
    return rows


def decide(gw: Gateway, incident: str, verb: str, person: str | None,
           remediation_id: str | None = None) -> Any:  # fmt: skip
    """Approve or reject on the web as `person` (signed in with their own viewer token), with
    the page's CSRF token; `person` None: no session at all."""
    rid = remediation_id or f"remediation:{incident}:pb-rollback"
    headers = {}
    gw.http.cookies.clear()
    if person is not None:
        headers = {"X-CSRF-Token": sign_in(gw, incident, person)}
    return gw.http.post(
        f"/api/v1/incidents/{incident}/remediations/{urllib.parse.quote(rid, safe='')}/{verb}",
        headers=headers,
    )


def sign_in(gw: Gateway, incident: str, person: str) -> str:
    """Sign in as `person` with their viewer token; the incident page's CSRF token."""
    gw.http.cookies.clear()
    answer = gw.http.post("/ui/login", data={"token": f"tok-{PEOPLE.index(person)}", "next": "/"})
    assert answer.status_code == 303, answer.text
    page = gw.http.get(f"/ui/incidents/{incident}")
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert csrf is not None, page.text[:500]
    return csrf.group(1)


def page_as(gw: Gateway, incident: str, person: str) -> str:
    sign_in(gw, incident, person)
    return gw.http.get(f"/ui/incidents/{incident}").text


def thread(gw: Gateway, incident: str) -> list[dict[str, Any]]:
    """The outbox's follow-ups about the incident's remediations, in order, each with `text`
    (its notice's sentence) beside the record."""
    return [e | {"text": "".join(s["text"] for s in e["notice"]["text"])} for e in gw.outbox
            if e["incident_id"] == incident and ":remediation:" in str(e["intent_id"])]  # fmt: skip


def test_a_playbook_field_nobody_knows_is_a_422_naming_it(shop) -> None:
    gw = shop()
    base = {"title": "t", "component": "payment", "checks": [{"type": "named_by_alert"}]}
    cases = [
        (base | {"remediaton": WORKFLOW}, "remediaton"),
        (base | {"checks": [{"type": "named_by_alert", "scope": "x", "treshold": 1}]}, "treshold"),
        (base | {"remediation": WORKFLOW | {"input": {}}}, "input"),
        (base | {"remediation": {"type": "webhook", "url": "http://127.0.0.1:1/", "bdy": {}}},
         "bdy"),
        (base | {"remediation": {"type": "flagd_flag", "repo": "o/r", "path": "f.json",
                                 "flag": "x"}}, "variant"),
        (base | {"remediation": {"type": "restart_pod"}}, "type"),
        (base | {"remediation": WORKFLOW | {"inputs": {"blast_intent": "mine"}}}, "blast_intent"),
    ]  # fmt: skip
    for body, name in cases:
        answer = gw.http.post("/api/v1/playbooks", json=body)
        assert answer.status_code == 422, (name, answer.text)
        assert name in json.dumps(answer.json()["detail"]), (name, answer.text)
    plant(gw, WORKFLOW | {"verify_within": 120})
    (listed,) = [p for p in gw.http.get("/api/v1/playbooks").json()["playbooks"]]
    assert listed["remediation"]["inputs"] == {"service": "payment"}
    assert listed["remediation"]["verify_within"] == "PT2M"


def test_verify_within_takes_the_durations_the_world_file_uses_elsewhere() -> None:
    """`30s` is how the world file writes every other duration (escalation `after`): it is
    taken, as are seconds and ISO 8601; a word that is none of them is refused by name."""
    for given, seconds in (("90s", 90), ("10m", 600), ("1h30m", 5400), ("PT2M", 120),
                           (45, 45), ("45", 45)):  # fmt: skip
        found = spec.load(json.dumps(WORKFLOW | {"verify_within": given})).verify_within
        assert found == timedelta(seconds=seconds), given
    for bad in ("soon", "25h", "0s"):
        with pytest.raises(ValidationError, match="verify_within"):
            spec.load(json.dumps(WORKFLOW | {"verify_within": bad}))


def test_with_actions_off_the_page_says_what_would_run_and_nothing_runs(
    shop, github: FakeGitHub
) -> None:
    gw = shop(actions_enabled=False)
    plant(gw, WORKFLOW)
    incident = fire(gw, datetime.now(UTC) - timedelta(minutes=5))
    (said,) = thread(gw, incident)
    assert "It would propose: run GitHub Actions workflow rollback.yml" in said["text"]
    assert "BLAST_ACTIONS_ENABLED=false" in said["text"]
    assert said["notice"]["remediation_id"] is None  # no buttons
    page = page_as(gw, incident, MEMBER)
    assert "Would be proposed for approval; actions are off" in page and "Approve as" not in page
    refused = decide(gw, incident, "approve", MEMBER)
    assert refused.status_code == 409 and "actions are off" in refused.json()["detail"]
    gw.drain()
    assert github.runs == [] and remediations(gw, incident)[0]["remediation"]["status"] == (
        "proposed"
    )


def test_blast_radius_incident_says_what_the_server_recorded_not_this_shell_s_settings(
    shop, github: FakeGitHub, falkordb: EmbeddedFalkorDB, tmp_path: Path
) -> None:
    """A server with actions on, an operator's shell without its env file (actions off there):
    the proposal is said as the server made it, not "cannot run here: actions are off"; and a
    server with actions off is said so from a shell that has them on."""
    on, off = shop(), shop(actions_enabled=False)
    lines = {}
    for gw, shell_actions in ((on, "false"), (off, "true")):
        plant(gw, WORKFLOW)
        incident = fire(gw, datetime.now(UTC) - timedelta(minutes=5))
        env = {"FALKORDB_URL": falkordb.url, "BLAST_DEFAULT_TENANT": gw.tenant,  # type: ignore[attr-defined]
               "BLAST_DATA_DIR": str(tmp_path), "BLAST_ACTIONS_ENABLED": shell_actions}  # fmt: skip
        said = CliRunner().invoke(app, ["incident", incident], env=env)
        assert said.exit_code == 0, said.output
        (lines[gw],) = [x for x in said.output.splitlines() if "(playbook pb-rollback)" in x]
    assert lines[on] == (
        "  run GitHub Actions workflow rollback.yml on o/r@main with service=payment "
        "(playbook pb-rollback): proposed"
    )
    assert lines[off].endswith(
        "(playbook pb-rollback): proposed, but when it was proposed the server could not run "
        "it: actions are off (BLAST_ACTIONS_ENABLED=false): nothing runs, nothing is approvable "
        "(the incident's web page says whether it can now)"
    )


def test_a_world_file_playbook_proposes_its_remediation_and_runs_once_approved(
    shop, github: FakeGitHub, tmp_path: Path
) -> None:
    """A team keeps its runbook in the world file: imported with the world, recalled for an
    alert it fits, its remediation proposed, run once on an owner's approval."""
    gw = shop()
    path = tmp_path / "world.yaml"
    path.write_text(demo_world_path().read_text(encoding="utf-8") + """
playbooks:
  - id: payment-rollback
    title: Roll back payment after a bad release
    component: payment
    checks: [{type: alert_kind, kind: errors}]
    remediation: {type: github_workflow, repo: o/r, workflow: rollback.yml, ref: main,
                  inputs: {service: payment}}
""", encoding="utf-8")  # fmt: skip
    loaded = load_sources([path])
    report = apply_world(graph_of(gw), loaded.world, loaded.sources, explicit=loaded.explicit)
    assert any(line.startswith("playbook payment-rollback on payment") for line in report.new)
    incident = fire(gw, datetime.now(UTC) - timedelta(minutes=5))
    rid = f"remediation:{incident}:payment-rollback"
    (said,) = thread(gw, incident)
    assert said["notice"]["remediation_id"] == rid
    assert decide(gw, incident, "approve", MEMBER, rid).status_code == 200
    assert decide(gw, incident, "approve", MEMBER, rid).status_code == 200  # a double click
    gw.drain()
    assert [r["inputs"] for r in github.runs] == [
        {"service": "payment", "blast_intent": f"incident:{incident}:remediate:payment-rollback"}
    ]


def test_only_the_owning_team_or_its_approvers_approve_and_a_double_click_runs_once(
    shop, github: FakeGitHub
) -> None:
    gw = shop()
    plant(gw, WORKFLOW)
    incident = fire(gw, datetime.now(UTC) - timedelta(minutes=5))
    (said,) = thread(gw, incident)
    assert said["notice"]["remediation_id"] == f"remediation:{incident}:pb-rollback"
    # named as the world names them, not by their sign-in email (a trial's finding)
    assert "Approve as Cy Example</button>" in page_as(gw, incident, MEMBER)
    # a stranger, a member of another team, and nobody named are refused; nothing is queued
    for person, status in (("mallory@evil.example", 403), (OUTSIDER, 403), (None, 401)):
        answer = decide(gw, incident, "approve", person)
        assert answer.status_code == status, answer.text
    assert "only members of checkout" in decide(gw, incident, "approve", OUTSIDER).json()["detail"]
    # the page's own form, as a browser posts it: a 403 page that says why not, with the way
    # back, as the web's other refusals are (a new user's trial: a 303 where docs say 403)
    page = page_as(gw, incident, OUTSIDER)
    action = re.search(r'<form method="post" action="([^"]+/approve)"', page)
    csrf = re.search(r'name="csrf" value="([^"]+)"', page)
    assert action is not None and csrf is not None
    posted = gw.http.post(action.group(1).replace("&amp;", "&"), data={"csrf": csrf.group(1)})
    assert posted.status_code == 403 and posted.headers["content-type"].startswith("text/html")
    assert "<h1>Remediation not approved</h1>" in posted.text
    assert ("Hal Example may not decide this remediation: only "
            "members of checkout (owning payment)") in posted.text  # fmt: skip
    assert "signed-in person &#39;hal@example.com&#39;" not in posted.text
    # one the world does not know is still named by the identity they signed in with
    assert (
        decide(gw, incident, "approve", "mallory@evil.example")
        .json()["detail"]
        .startswith("signed-in person 'mallory@evil.example' may not decide this remediation")
    )
    assert f'<a href="/ui/incidents/{incident}">Back to the incident</a>' in posted.text
    forged_csrf = gw.http.post(action.group(1).replace("&amp;", "&"), data={"csrf": "0" * 32})
    assert forged_csrf.status_code == 403 and "<h1>Remediation not approved</h1>" in (
        forged_csrf.text
    )
    reject = action.group(1).replace("&amp;", "&").removesuffix("/approve") + "/reject"
    refused = gw.http.post(reject, data={"csrf": csrf.group(1)})  # a trial read "not rejectd"
    assert refused.status_code == 403 and "<h1>Remediation not rejected</h1>" in refused.text
    forged = gw.http.post(  # a body naming the approver counts for nothing: no session, no CSRF
        f"/api/v1/incidents/{incident}/remediations/remediation:{incident}:pb-rollback/approve",
        json={"by": MEMBER, "approved": True},
    )
    assert forged.status_code in (401, 403)
    gw.drain()
    assert github.runs == []
    # the platform on-call is on checkout's approvers list: now they may
    graph_of(gw).rows("import_teams", {"teams": [{
        "name": "checkout", "slack_channel": None, "escalation": None, "oncall_json": None,
        "is_default": None, "approvers": ["Hal Example"], "sources": ["test"]}]})  # fmt: skip
    first = decide(gw, incident, "approve", OUTSIDER)
    assert first.status_code == 200, first.text
    assert first.json() | {"at": 0} == {
        "id": f"remediation:{incident}:pb-rollback",
        "status": "approved",
        "fresh": True,
        "by": "Hal Example",
        "at": 0,
        "source": "web",
    }
    again = decide(gw, incident, "approve", MEMBER)  # the double click, by someone else
    assert again.status_code == 200 and again.json()["fresh"] is False
    assert decide(gw, incident, "reject", MEMBER).status_code == 409
    gw.drain()
    gw.drain()
    assert len(github.runs) == 1
    (run,) = github.runs
    assert run["inputs"] == {
        "service": "payment",
        "blast_intent": f"incident:{incident}:remediate:pb-rollback",
    }
    (row,) = remediations(gw, incident)
    assert row["approval"]["by"] == "Hal Example" and row["approval"]["source"] == "web"
    assert [(a["n"], a["outcome"]) for a in row["attempts"]] == [(1, "dispatched")]
    assert row["attempts"][0]["external_ref"].endswith(f"/actions/runs/{run['id']}")
    assert any("Remediation ran: run GitHub Actions workflow" in e["text"]
               for e in thread(gw, incident))  # fmt: skip


def test_a_dispatch_answered_502_is_reconciled_never_sent_twice(shop, github: FakeGitHub) -> None:
    gw = shop()
    plant(gw, WORKFLOW)
    incident = fire(gw, datetime.now(UTC) - timedelta(minutes=5))
    github.fail("POST", r"/repos/o/r/actions/workflows/rollback.yml/dispatches", 502, after=True)
    assert decide(gw, incident, "approve", MEMBER).status_code == 200
    for _ in range(3):  # the retry waits out its backoff
        gw.drain()
        if remediations(gw, incident)[0]["remediation"]["status"] != "approved":
            time.sleep(0.5)
    deadline = time.monotonic() + 15
    while len(remediations(gw, incident)[0]["attempts"]) < 2 and time.monotonic() < deadline:
        time.sleep(0.3)
        gw.drain()
    assert len(github.runs) == 1
    outcomes = [a["outcome"] for a in remediations(gw, incident)[0]["attempts"]]
    assert outcomes[0].startswith("error: GitHub dispatch workflow") and "502" in outcomes[0]
    assert outcomes[1:] == ["reconciled"]


def test_a_worker_killed_after_dispatch_is_reconciled_by_the_next(
    shop, github: FakeGitHub, falkordb: EmbeddedFalkorDB, tmp_path: Path
) -> None:
    gw = shop()
    plant(gw, WORKFLOW)
    incident = fire(gw, datetime.now(UTC) - timedelta(minutes=5))
    assert decide(gw, incident, "approve", MEMBER).status_code == 200
    env = clean_env(("BLAST_", "GITHUB_")) | {
        "PYTHONPATH": str(ROOT), "FALKORDB_URL": falkordb.url, "BLAST_DATA_DIR": str(tmp_path),
        "BLAST_DEFAULT_TENANT": gw.tenant, "GITHUB_TOKEN": GITHUB_TOKEN, "GITHUB_REPO": "o/r",  # type: ignore[attr-defined]
        "GITHUB_API_URL": github.url, "GITHUB_WRITE_INTERVAL_S": "0",
        "GITHUB_REQUEST_INTERVAL_S": "0", "BLAST_ACTIONS_ENABLED": "true",
        "BLAST_LEASE_MS": "1500", "BLAST_CHAOS_HALT_AFTER_STEP": "1", "BLAST_DEV": "true",
    }  # fmt: skip
    worker = subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "worker", "--role", "responder"], cwd=ROOT, env=env
    )
    try:
        deadline = time.monotonic() + 30
        while not github.runs and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(github.runs) == 1
        time.sleep(0.5)  # it halts after checkpointing the run's step: kill it there
        worker.send_signal(signal.SIGKILL)
        worker.wait(10)
    finally:
        if worker.poll() is None:
            worker.kill()
    time.sleep(1.6)  # its lease runs out
    gw.drain()
    assert len(github.runs) == 1
    (row,) = remediations(gw, incident)
    assert [a["outcome"] for a in row["attempts"]] == ["started", "reconciled"]
    assert row["remediation"]["status"] == "running"  # now verifying


def wait_verified(gw: Gateway, incident: str, timeout_s: float = 20) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        gw.drain()
        (row,) = remediations(gw, incident)
        if row["verification"] is not None:
            gw.drain()
            return row
        time.sleep(0.5)
    pytest.fail("no verification recorded")


def test_a_remediation_that_did_not_work_fails_verification_and_pages_again(
    shop, github: FakeGitHub
) -> None:
    gw = shop()
    plant(gw, WORKFLOW | {"verify_within": 2})
    incident = fire(gw, datetime.now(UTC) - timedelta(minutes=5))
    assert decide(gw, incident, "approve", MEMBER).status_code == 200
    row = wait_verified(gw, incident)
    assert row["verification"]["outcome"] == "failed"
    assert "1 of 1 alerts still firing" in row["verification"]["detail"]
    assert row["remediation"]["status"] == "failed"
    said = [e for e in thread(gw, incident) if "did NOT work" in e["text"]]
    assert len(said) == 1 and "Paging the on-call again" in said[0]["text"]
    # one sentence each, and no "unacknowledged again" for an incident nobody acknowledged
    assert said[0]["text"].startswith(
        "Remediation did NOT work: 1 of 1 alerts still firing (ServiceHighErrorRate). Paging "
        "the on-call again"
    ), said[0]["text"]
    assert "unacknowledged" not in said[0]["text"]
    assert said[0]["intent_id"].endswith(":remediation:pb-rollback:verification:failed")
    assert said[0]["notice"]["person"]["name"] in (
        "Cy Example",
        "Di Example",
    )  # checkout's on-call, named
    (issue,) = github.issues
    comments = [c["body"] for c in github.comments.get(issue["number"], [])]
    assert any("Example: failed verification: 1 of 1 alerts still firing" in c
               for c in comments), comments  # fmt: skip
    (pb,) = gw.http.get("/api/v1/playbooks").json()["playbooks"]
    assert (pb["remediation_failed"], pb["remediation_trust"]) == (1, pytest.approx(1 / 3))
    # the terminal tells it too: status, approver, attempt, verification
    from tests.test_cli import cli

    settings = gw.runtime.settings
    shown = cli("incident", incident, FALKORDB_URL=settings.falkordb_url.get_secret_value(),  # type: ignore[union-attr]
                BLAST_DEFAULT_TENANT=gw.tenant, BLAST_DATA_DIR=str(settings.data_dir))  # type: ignore[attr-defined]  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    part = shown.stdout.split("\nremediations:\n")[1].splitlines()
    assert part[0] == ("  run GitHub Actions workflow rollback.yml on o/r@main with "
                       "service=payment (playbook pb-rollback): failed")  # fmt: skip
    assert part[1].startswith("    approved by Cy Example via web at ")
    assert part[2].startswith("    attempt 1 at ") and ": dispatched (" in part[2]
    assert part[3].startswith("    failed verification at ")
    assert part[3].endswith(": 1 of 1 alerts still firing (ServiceHighErrorRate)"), part


def test_a_failed_verification_retriggers_the_incident_and_its_escalation_policy(
    shop, github: FakeGitHub
) -> None:
    """The fix the acknowledger approved did not work: their acknowledgement is cleared and
    the paged team's policy runs again, counted from the failed verification, until someone
    acknowledges again."""
    gw = shop()
    graph = graph_of(gw)
    with_policy(graph, [("1s", ["Di Example"])])
    plant(gw, WORKFLOW | {"verify_within": 2})
    incident = fire(gw, datetime.now(UTC) - timedelta(minutes=5))
    acked = gw.http.post(f"/api/v1/incidents/{incident}/ack", json={"by": "Cy Example"})
    assert acked.status_code == 200 and acked.json()["repeat"] is False
    assert decide(gw, incident, "approve", MEMBER).status_code == 200
    assert wait_verified(gw, incident)["verification"]["outcome"] == "failed"
    state = graph.one("escalation_state", {"incident_id": incident})
    assert (state["acknowledged_at"], state["retriggers"]) == (None, 1)
    level_id = f"incident:{incident}:retrigger:1:escalate:1"
    gw.drain()
    # the page itself is restated: it no longer says who acknowledged it
    acked_page = [e for e in gw.outbox if e["intent_id"] == f"incident:{incident}:acknowledged"]
    assert acked_page[0]["notice"]["acknowledged_by"] == "Cy Example"  # type: ignore[index]
    (restated,) = [
        e for e in gw.outbox if e["intent_id"] == f"incident:{incident}:page:retrigger:1"
    ]
    assert restated["kind"] == "update"
    assert restated["notice"]["acknowledged_by"] is None  # type: ignore[index]
    deadline = time.monotonic() + 20
    while level_id not in {e["intent_id"] for e in gw.outbox} and time.monotonic() < deadline:
        time.sleep(0.3)
        gw.drain()
    (level,) = [e for e in gw.outbox if e["intent_id"] == level_id]
    text = "".join(s["text"] for s in level["notice"]["text"])  # type: ignore[index, union-attr]
    assert "within 1 s of the failed remediation" in text and "Di Example" in text
    said = [e for e in thread(gw, incident) if "did NOT work" in e["text"]]
    assert "escalation policy runs again" in said[0]["text"]
    actions = {a["intent_id"]: a for a in graph.rows("incident_actions", {"incident_id": incident})}
    assert actions[level_id]["reserved_at"] >= state["retriggered_at"] + 1000
    story = [e["text"] for e in events(graph, incident, None, "https://api.github.com")]
    assert "Escalated to level 1 (after a failed remediation): Di Example via outbox" in story
    again = gw.http.post(f"/api/v1/incidents/{incident}/ack", json={"by": "Cy Example"})
    assert again.status_code == 200 and again.json()["repeat"] is False  # a fresh ack counts


def test_a_fix_that_failed_before_is_proposed_with_its_record(shop, github: FakeGitHub) -> None:
    """The same playbook's fix, proposed again on a later incident, says how its earlier runs
    went (a new user's trial: it came back without its record); after two failed
    verifications in a row on payment it warns so, in the thread and on the web page."""
    gw = shop(reopen_window="0")  # each firing after a resolve is a new incident
    plant(gw, WORKFLOW | {"verify_within": 2})
    start = datetime.now(UTC) - timedelta(minutes=30)
    failed: list[tuple[str, dict[str, Any]]] = []
    for n in range(3):
        incident = fire(gw, start + timedelta(minutes=n))
        (said,) = [e for e in thread(gw, incident) if e["intent_id"].endswith(":proposed")]
        if n == 0:
            assert "Its record" not in said["text"]  # never ran before
        else:
            runs = [
                f"on {i} at {fmt_ms(r['remediation']['ran_at'])}: failed verification "
                f"({r['verification']['detail']})"
                for i, r in reversed(failed)
            ]
            assert f"Its record: last run {'; before that '.join(runs)}." in said["text"]
            warned = "It failed verification on its last 2 runs on payment: approve it only " \
                "if something changed since."  # fmt: skip
            assert (warned in said["text"]) is (n == 2)
        if n == 2:
            page = page_as(gw, incident, MEMBER)
            assert warned in page and f"last run on {failed[-1][0]}" in page
            break
        assert decide(gw, incident, "approve", MEMBER).status_code == 200
        row = wait_verified(gw, incident)
        assert row["verification"]["outcome"] == "failed"
        failed.append((incident, row))
        resolved = gw.http.post(f"/api/v1/incidents/{incident}/resolve", json={"by": "Cy"})
        assert resolved.status_code == 200, resolved.text
        gw.drain()


def test_an_acknowledgement_after_a_retrigger_edits_the_page_once(shop, github: FakeGitHub) -> None:
    """Cy acknowledged and approved the fix; it failed verification, which cleared the
    acknowledgement. Di's acknowledgement then is a fresh one: the page is edited to name Di
    (intent keyed by the retrigger round, as its restatement is), once, however often it is
    clicked (a new user's trial: the edit was the first round's, already done)."""
    gw = shop()
    plant(gw, WORKFLOW | {"verify_within": 2})
    incident = fire(gw, datetime.now(UTC) - timedelta(minutes=5))
    first = gw.http.post(f"/api/v1/incidents/{incident}/ack", json={"by": "Cy Example"})
    assert first.json()["repeat"] is False
    assert decide(gw, incident, "approve", MEMBER).status_code == 200
    assert wait_verified(gw, incident)["verification"]["outcome"] == "failed"
    gw.drain()
    for _ in range(2):  # the second click is a repeat: nothing more to edit
        acked = gw.http.post(f"/api/v1/incidents/{incident}/ack", json={"by": "Di Example"})
        assert acked.status_code == 200 and acked.json()["acknowledged_by"] == "Di Example"
        gw.drain()
    edits = [
        e
        for e in gw.outbox
        if e["incident_id"] == incident
        and e["kind"] == "update"
        and ":remediation:" not in str(e["intent_id"])
    ]  # the page's, not the proposal's
    said = [(e["intent_id"], e["notice"]["acknowledged_by"]) for e in edits]  # type: ignore[index]
    assert said.count((f"incident:{incident}:acknowledged", "Cy Example")) == 1, said
    assert said.count((f"incident:{incident}:page:retrigger:1", None)) == 1, said
    assert said.count((f"incident:{incident}:acknowledged:retrigger:1", "Di Example")) == 1, said
    assert said[-1][1] == "Di Example"  # the page, as it reads now, names Di


def test_alerts_that_resolve_verify_the_remediation(shop, github: FakeGitHub) -> None:
    gw = shop()
    plant(gw, WORKFLOW | {"verify_within": 30})
    started = datetime.now(UTC) - timedelta(minutes=5)
    incident = fire(gw, started)
    assert decide(gw, incident, "approve", MEMBER).status_code == 200
    gw.drain()
    (row,) = remediations(gw, incident)
    assert row["verification"] is None and row["remediation"]["status"] == "running"
    answer = gw.http.post("/api/v1/alerts", json={"alerts": [alert("resolved", started)]})
    assert answer.status_code == 200
    row = wait_verified(gw, incident)
    assert row["verification"]["outcome"] == "verified"
    assert row["verification"]["detail"] == "all 1 alerts of the incident resolved"
    assert row["remediation"]["status"] == "succeeded"
    (pb,) = gw.http.get("/api/v1/playbooks").json()["playbooks"]
    assert pb["remediation_trust"] == pytest.approx(2 / 3)


@pytest.mark.skipif(not available(), reason="needs prometheus and promtool (Debian prometheus)")
def test_calls_back_under_the_threshold_verify_while_alerts_still_fire(
    shop, tmp_path: Path
) -> None:
    now = int(time.time())
    # checkout -> payment fails half its calls for 38 minutes, then recovers (series go on
    # into the next 10 minutes, so the verifier's window since the run has samples)
    edge = Edge("checkout", "payment", rate=5.0, fail=0.0,
                windows=[Window(now - 40 * 60, now - 120, fail=0.5)])  # fmt: skip
    server = PrometheusServer(
        tmp_path / "prometheus", [edge], None, times=list(range(now - 7200, now + 600, 15))
    )
    try:
        gw = shop(prometheus_url=server.url)
        plant(gw, WORKFLOW | {"verify_within": 60},
              extra_checks=[{"type": "calls_failing", "threshold": 0.1}])  # fmt: skip
        incident = fire(gw, datetime.now(UTC) - timedelta(minutes=35))
        assert decide(gw, incident, "approve", MEMBER).status_code == 200
        row = wait_verified(gw, incident)
    finally:
        server.stop()
    assert row["verification"]["outcome"] == "verified", row["verification"]
    detail = row["verification"]["detail"]
    assert detail.startswith("0 of ") and "calls into payment failed since the run" in detail
    assert "under the playbook's threshold 10.00%" in detail


def test_a_runbook_webhook_is_signed_and_posted_once(shop, receiver: Receiver) -> None:
    gw = shop()
    plant(gw, {"type": "webhook", "url": receiver.url, "body": {"runbook": "restart-payment"}})
    incident = fire(gw, datetime.now(UTC) - timedelta(minutes=5))
    # the runner as it will be called: scheme and port too (which runner, which environment)
    (proposal,) = thread(gw, incident)
    assert f"Proposed remediation: POST the runbook webhook {receiver.url}. " in proposal["text"]
    csrf = sign_in(gw, incident, MEMBER)
    path = f"/api/v1/incidents/{incident}/remediations/remediation:{incident}:pb-rollback/approve"
    clicked = gw.http.post(path, data={"csrf": csrf})
    assert clicked.status_code == 303
    assert "remediation=Approved+by+Cy+Example." in clicked.headers["location"]
    gw.drain()
    again = gw.http.post(path, data={"csrf": csrf})  # a double click, after it ran
    assert again.status_code == 303
    assert (
        "remediation=Already+approved+by+Cy+Example%3B+it+is+running."
        in (again.headers["location"])
    )
    assert receiver.refused == 0
    assert receiver.accepted == [
        {
            "runbook": "restart-payment",
            "incident_id": incident,
            "intent_id": f"incident:{incident}:remediate:pb-rollback",
        }
    ]
    (row,) = remediations(gw, incident)
    assert [a["outcome"] for a in row["attempts"]] == ["dispatched"]
    assert row["attempts"][0]["external_ref"].endswith("(run-1)")
    # ran, its verification under way: the memory page does not say "never run"
    page_as(gw, incident, MEMBER)
    fix = gw.http.get("/ui/memory").text.split('<td class="fix">', 1)[1].split("</td>", 1)[0]
    assert fix.endswith("<small>1 run not verified yet</small>"), fix


def test_a_runbook_webhook_with_the_wrong_secret_is_refused_and_fails(
    shop, receiver: Receiver
) -> None:
    gw = shop(runbook_webhook_secret=SecretStr("not-the-runners-secret"))
    plant(gw, {"type": "webhook", "url": receiver.url, "body": {}})
    incident = fire(gw, datetime.now(UTC) - timedelta(minutes=5))
    assert decide(gw, incident, "approve", MEMBER).status_code == 200
    gw.drain()
    assert receiver.refused == 1 and receiver.accepted == []
    (row,) = remediations(gw, incident)
    assert row["remediation"]["status"] == "failed"
    assert row["attempts"][0]["outcome"].endswith("answered HTTP 401")
    assert any("Remediation failed to run" in e["text"] for e in thread(gw, incident))


def test_a_runner_that_is_down_is_waited_for_minutes_then_the_failure_says_what_to_do(
    shop,
) -> None:
    """The runner down: the first retry is at once, the next ones wait 30 s, 1 min, 2 min (the
    worker's retry-after, not its 1 s backoff), each attempt saying when it is tried again;
    once the tries are used up, the thread and the page say what a person does next."""
    with socket.socket() as closed:  # a port nobody listens on: the runner is down
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/restart"
    assert [run.retry_wait_s(n) for n in range(1, 8)] == [0, 30, 60, 120, 240, 300, 300]
    gw = shop()
    plant(gw, {"type": "webhook", "url": url, "body": {}})
    incident = fire(gw, datetime.now(UTC) - timedelta(minutes=5))
    assert decide(gw, incident, "approve", MEMBER).status_code == 200
    gw.drain()
    (row,) = remediations(gw, incident)
    error = f"error: runbook webhook {url} failed: ConnectError"
    assert [a["outcome"] for a in row["attempts"]] == [
        f"{error} (tried again at once)", f"{error} (tried again in 30 s)",
    ]  # fmt: skip
    assert row["remediation"]["status"] == "running"
    rid = f"remediation:{incident}:pb-rollback"
    graph = graph_of(gw)._graph  # type: ignore[attr-defined]
    (until,) = graph.ro_query(
        "MATCH (t:Task {id: $id}) RETURN t.lease_until - timestamp()", {"id": f"remediate:{rid}"}
    ).result_set[0]
    assert 25_000 < until <= 30_000, until
    # its last try (BLAST_MAX_ATTEMPTS=5), now rather than in minutes
    graph.query("MATCH (t:Task {id: $id}) SET t.attempts = 4, t.lease_until = 0",
                {"id": f"remediate:{rid}"})  # fmt: skip
    gw.drain()
    (row,) = remediations(gw, incident)
    assert row["remediation"]["status"] == "failed"
    assert row["attempts"][-1]["outcome"] == error
    (said,) = [e for e in thread(gw, incident) if e["intent_id"].endswith(":run-failed")]
    assert said["text"] == (
        "Remediation failed to run after 3 tries: POST the runbook webhook "
        f"{url}: runbook webhook {url} failed: ConnectError. It is not tried again on this "
        "incident (an approval runs it once, and cannot be given again): run it by hand if it "
        "is still needed; a later incident proposes it again."
    )
    page = page_as(gw, incident, MEMBER)
    assert (
        '<p class="notice run-failed">It failed to run after 3 tries. It is not tried again on '
        "this incident (an approval runs it once, and cannot be given again)"
    ) in page
    fix = gw.http.get("/ui/memory").text.split('<td class="fix">', 1)[1].split("</td>", 1)[0]
    assert fix.endswith("<small>1 approved but failed to run</small>"), fix


def test_a_remediation_without_its_credential_is_said_early_never_offered_for_approval(
    shop, receiver: Receiver, github: FakeGitHub, falkordb: EmbeddedFalkorDB, tmp_path: Path
) -> None:
    """Actions on, no BLAST_RUNBOOK_WEBHOOK_SECRET: the playbook POST warns, doctor and serve
    name the playbook, the proposal says it cannot run (no buttons), the page offers no
    Approve, and an approval is refused (409) before anyone decides in vain; nothing runs."""
    from gateway.cli.commands import warn_unrunnable_remediations
    from gateway.cli.doctor import check_actions

    gw = shop(runbook_webhook_secret=None)
    body = {"id": "pb-rollback", "title": "Restart payment", "component": "payment",
            "checks": [{"type": "alert_kind", "kind": "errors"}],
            "remediation": {"type": "webhook", "url": receiver.url, "body": {}}}  # fmt: skip
    answer = gw.http.post("/api/v1/playbooks", json=body)
    assert answer.status_code == 201, answer.text
    assert answer.json()["warning"] == (
        "its remediation cannot run on this server: a webhook remediation needs "
        "BLAST_RUNBOOK_WEBHOOK_SECRET (requests are signed), which is not set; until it is "
        "set, a proposal of it says so and cannot be approved"
    )
    workflow = gw.http.post("/api/v1/playbooks", json=body | {"id": "pb-2", "remediation":
                                                              WORKFLOW})  # fmt: skip
    assert "warning" not in workflow.json()  # GITHUB_TOKEN is set
    retired = gw.http.request("DELETE", "/api/v1/playbooks/pb-2", json={"reason": "a test"})
    assert retired.status_code == 200, retired.text
    settings = gw.runtime.settings
    problems = [f.line() for f in check_actions(settings) if not f.ok]
    assert problems == [
        f"PROBLEM  actions: org_{gw.tenant}: BLAST_ACTIONS_ENABLED=true, but a webhook "  # type: ignore[attr-defined]
        "remediation needs BLAST_RUNBOOK_WEBHOOK_SECRET (requests are signed), which is not "
        "set: 1 playbook carries one (pb-rollback), whose proposals cannot be approved"
    ]
    warn_unrunnable_remediations(settings, gw.runtime)  # what serve says at start
    assert problems[0].removeprefix("PROBLEM  actions: ") in gw.runtime.notes
    incident = fire(gw, datetime.now(UTC) - timedelta(minutes=5))
    said = [e for e in thread(gw, incident) if e["intent_id"].endswith(":pb-rollback:proposed")]
    assert said[0]["notice"]["remediation_id"] is None, said  # no Approve / Reject buttons
    assert (
        "It cannot run here: a webhook remediation needs BLAST_RUNBOOK_WEBHOOK_SECRET"
        in (said[0]["text"])
    )
    assert "after a member or approver" not in said[0]["text"]
    page = page_as(gw, incident, MEMBER)
    assert "It cannot run here: a webhook remediation needs" in page
    assert "Approve as" not in page
    # the action box at the top says so too, and invites no approval
    top = page.split('id="remediation-proposed">', 1)[1].split("</p>", 1)[0]
    assert "which cannot run here: a webhook remediation needs BLAST_RUNBOOK_WEBHOOK" in top
    assert "Approve or reject" not in top and "Nothing to approve until an operator" in top
    # the API carries why, beside the status
    (api_row,) = [r for r in remediations(gw, incident)
                  if r["remediation"]["playbook_id"] == "pb-rollback"]  # fmt: skip
    assert api_row["remediation"]["status"] == "proposed"
    assert api_row["cannot_run"].startswith("a webhook remediation needs BLAST_RUNBOOK_WEBHOOK")
    # and so does `blast-radius incident`, from what the server recorded when it proposed it,
    # whatever this shell's settings (here: actions off, the default)
    env = {"FALKORDB_URL": falkordb.url, "BLAST_DEFAULT_TENANT": gw.tenant,  # type: ignore[attr-defined]
           "BLAST_DATA_DIR": str(tmp_path)}  # fmt: skip
    said = CliRunner().invoke(app, ["incident", incident], env=env)
    assert said.exit_code == 0, said.output
    assert (
        "(playbook pb-rollback): proposed, but when it was proposed the server could not run "
        "it: a webhook remediation needs BLAST_RUNBOOK_WEBHOOK_SECRET (requests are signed), "
        "which is not set (the incident's web page says whether it can now)"
    ) in said.output
    assert "actions are off" not in said.output
    refused = decide(gw, incident, "approve", MEMBER)
    assert refused.status_code == 409, refused.text
    assert refused.json()["detail"] == (
        "it cannot run here: a webhook remediation needs BLAST_RUNBOOK_WEBHOOK_SECRET (requests "
        "are signed), which is not set: ask an operator to set it first"
    )
    gw.drain()
    assert receiver.accepted == [] and receiver.refused == 0
    rows = {r["remediation"]["playbook_id"]: r for r in remediations(gw, incident)}
    assert rows["pb-rollback"]["remediation"]["status"] == "proposed"


def test_doctor_warns_when_actions_are_on_with_no_credential_at_all(
    falkordb: EmbeddedFalkorDB, tmp_path: Path
) -> None:
    from gateway.cli.doctor import NO_CREDENTIAL, check_actions

    tenant = f"r{uuid.uuid4().hex[:10]}"
    off = make_settings(falkordb, tmp_path, tenant)
    assert [f.line() for f in check_actions(off)] == [
        "ok       actions: off (BLAST_ACTIONS_ENABLED=false): remediations are only shown"
    ]
    bare = make_settings(falkordb, tmp_path, tenant, actions_enabled=True)
    assert [f.line() for f in check_actions(bare)] == [f"warning  actions: {NO_CREDENTIAL}"]


NOTE = FollowUp(about="remediation", incident_id="i", title="t", text=[Span(text="x")])


def test_a_flagd_flag_becomes_one_pull_request(shop, github: FakeGitHub) -> None:
    gw = shop()
    plant(gw, {"type": "flagd_flag", "repo": "o/r", "path": "src/flagd/demo.flagd.json",
               "flag": "paymentFailure", "variant": "off"})  # fmt: skip
    incident = fire(gw, datetime.now(UTC) - timedelta(minutes=5))
    assert decide(gw, incident, "approve", MEMBER).status_code == 200
    gw.drain()
    (pull,) = [p for p in github.pulls if p.get("head")]
    assert pull["base"] == "main" and pull["head"].startswith("blast-radius/incident-")
    changed = json.loads(github.files[(pull["head"], "src/flagd/demo.flagd.json")])
    assert changed["flags"]["paymentFailure"]["defaultVariant"] == "off"
    assert json.loads(github.files[("main", "src/flagd/demo.flagd.json")]) == FLAGS
    (row,) = remediations(gw, incident)
    assert [a["outcome"] for a in row["attempts"]] == ["dispatched"]
    assert row["attempts"][0]["external_ref"].endswith(f"/pull/{pull['number']}")
    # a pull request is not a fix that ran: the thread says it must be merged, and by when
    (said,) = [e["text"] for e in gw.outbox if str(e["intent_id"]).endswith(":started")]
    assert said.startswith("Pull request opened: open a pull request on o/r setting flagd flag")
    assert said.endswith("Nothing changes until it is merged and deployed: it is verified "
                         "within 10 min of now, and fails verification if the alerts still "
                         "fire then.")  # fmt: skip
    # what a retry asks first: the pull request is found by its branch, so none is opened again
    adapter = FlagdPullRequest(client(SecretStr(GITHUB_TOKEN), github.url, 0, 0),
                               SecretStr(GITHUB_TOKEN), "o/r", "src/flagd/demo.flagd.json",
                               "paymentFailure", "off")  # fmt: skip
    intent = f"incident:{incident}:remediate:pb-rollback"
    assert adapter.find(intent) == row["attempts"][0]["external_ref"]
    # a try killed after making its branch: the next one reuses the branch (422 expected)
    other = f"incident:{incident}:remediate:pb-other"
    github.branches[branch_name(other)] = github.branches["main"]
    github.files[(branch_name(other), "src/flagd/demo.flagd.json")] = json.dumps(FLAGS)
    assert adapter.find(other) is None
    ref = adapter.send(OutboundMessage(intent_id=other, incident_id=incident, kind="remediation",
                                       notice=NOTE))  # fmt: skip
    assert adapter.find(other) == ref and len([p for p in github.pulls if p.get("head")]) == 2
    # a flag the file does not define is refused, never written
    wrong = FlagdPullRequest(client(SecretStr(GITHUB_TOKEN), github.url, 0, 0),
                             SecretStr(GITHUB_TOKEN), "o/r", "src/flagd/demo.flagd.json",
                             "paymentFailure", "25%")  # fmt: skip
    with pytest.raises(AdapterError, match="has no variant '25%'") as refused:
        wrong.send(OutboundMessage(intent_id="i-3", incident_id=incident, kind="remediation",
                                   notice=NOTE))  # fmt: skip
    assert refused.value.retryable is False


@pytest.fixture
def slack_shop(shop, api: SlackAPI) -> Gateway:
    """Slack on, with checkout's members known by Slack user id."""
    gw: Gateway = shop(
        slack_bot_token=SecretStr(SLACK_TOKEN), slack_signing_secret=SecretStr(SIGNING_SECRET),
        slack_api_url=api.base_url, slack_default_channel="C0DEFAULT",
    )  # fmt: skip
    graph_of(gw).rows("import_people", {"people": [
        {"name": "Cy Example", "email": "cy@example.com", "slack_user_id": "U0CY",
         "team": "checkout", "sources": ["test"]},
        {"name": "Hal Example", "email": "hal@example.com", "slack_user_id": "U0HAL",
         "team": "platform", "sources": ["test"]}]})  # fmt: skip
    return gw


def slack_click(gw: Gateway, api: SlackAPI, action_id: str, value: str, user: str) -> Any:
    payload = {
        "type": "block_actions", "team": {"id": TEAM}, "user": {"id": user, "team_id": TEAM},
        "response_url": f"{api.base_url}response-{user}",
        "actions": [{"type": "button", "action_id": action_id, "value": value,
                     "action_ts": f"{time.time():.6f}"}],
    }  # fmt: skip
    raw = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
    return gw.http.post(
        "/api/v1/slack/interactions", content=raw,
        headers={"Content-Type": "application/x-www-form-urlencoded"} | signed_headers(raw),
    )  # fmt: skip


def told(api: SlackAPI, user: str) -> list[str]:
    """What the clicker `user` was told (ephemeral replies to their `response_url`)."""
    return [str(p.get("text")) for _, method, p in api.calls if method == f"response-{user}"]


def test_in_slack_a_stranger_is_told_why_and_a_member_approves(
    slack_shop: Gateway, api: SlackAPI, github: FakeGitHub
) -> None:
    gw = slack_shop
    plant(gw, WORKFLOW)
    incident = fire(gw, datetime.now(UTC) - timedelta(minutes=5))
    rid = f"remediation:{incident}:pb-rollback"
    proposal = [m for m in api.calls if m[1] == "chat.postMessage" and "Proposed remediation"
                in str(m[2].get("text"))]  # fmt: skip
    assert len(proposal) == 1 and "remediation_approve" in json.dumps(proposal[0][2])
    assert slack_click(gw, api, "remediation_approve", rid, "U0HAL").status_code == 200
    assert slack_click(gw, api, "remediation_approve", rid, "U0NOBODY").status_code == 200
    deadline = time.monotonic() + 5
    while len(told(api, "U0NOBODY")) < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    # named as the world knows them (Slack id in the world file), the id only for a stranger
    assert told(api, "U0HAL")[0].startswith(
        "Not done: Hal Example may not decide this remediation: only members of checkout"
    )
    assert "Slack user 'U0NOBODY' may not" in told(api, "U0NOBODY")[0]
    gw.drain()
    assert github.runs == []
    assert slack_click(gw, api, "remediation_approve", rid, "U0CY").status_code == 200
    assert slack_click(gw, api, "remediation_approve", rid, "U0CY").status_code == 200
    gw.drain()
    assert len(github.runs) == 1
    (row,) = remediations(gw, incident)
    assert (row["approval"]["by"], row["approval"]["identity"], row["approval"]["source"]) == (
        "Cy Example",
        "U0CY",
        "slack",
    )


@pytest.mark.parametrize(
    "refusing", [("C0CHECKOUT",), ("C0CHECKOUT", "C0PLATFORM", "C0DEFAULT")],
    ids=["root-route", "outbox"],
)  # fmt: skip
def test_a_run_whose_thread_slack_refuses_is_still_verified_and_said_once(
    slack_shop: Gateway, api: SlackAPI, github: FakeGitHub, refusing: tuple[str, ...]
) -> None:
    """The page's channel is archived between the proposal and the run: the "ran" message
    Slack refuses goes along the root route as a message of its own (else to the outbox),
    once, and the fix is verified all the same, its outcome said the same way."""
    gw = slack_shop
    plant(gw, WORKFLOW | {"verify_within": 30})
    started = datetime.now(UTC) - timedelta(minutes=5)
    incident = fire(gw, started)
    (root,) = api.roots("C0CHECKOUT")
    assert [m for m in api.replies(root["ts"]) if "Proposed remediation" in str(m["text"])]
    for channel in refusing:
        api.refuse(channel, "is_archived")
    assert decide(gw, incident, "approve", MEMBER).status_code == 200
    gw.drain()
    assert len(github.runs) == 1
    (row,) = remediations(gw, incident)
    assert row["remediation"]["status"] == "running"  # ran, now verifying
    kinds = {t["kind"]: t for t in graph_of(gw).rows("incident_tasks", {"incident_id": incident})}
    assert (kinds["remediate"]["status"], kinds["remediate"]["outcome"]) == ("done", "ran")
    assert kinds["verify_remediation"]["status"] in ("open", "paused", "claimed")
    answer = gw.http.post("/api/v1/alerts", json={"alerts": [alert("resolved", started)]})
    assert answer.status_code == 200
    row = wait_verified(gw, incident)
    assert row["verification"]["outcome"] == "verified"
    gw.drain()  # nothing is said twice
    said = [m for m in api.messages if "Remediation " in str(m["text"])]
    copies = [e for e in gw.outbox if str(e["intent_id"]).endswith(":fallback")
              and ":remediation:" in str(e["intent_id"])]  # fmt: skip
    # the proposal's edit (approved) has nothing else to edit: its copy is kept, once
    edit = f"incident:{incident}:remediation:pb-rollback:decided:fallback"
    assert [e["intent_id"] for e in copies].count(edit) == 1
    copies = [e for e in copies if e["intent_id"] != edit]
    refused = "the page's thread in C0CHECKOUT (is_archived); #checkout-oncall (is_archived)"
    if refusing == ("C0CHECKOUT",):
        assert [(m["channel"], m["thread_ts"], str(m["text"]).split(":")[0]) for m in said] == [
            ("C0PLATFORM", None, "Remediation ran"),
            ("C0PLATFORM", None, "Remediation verified"),
        ]
        assert f"(Posted here: {refused} refused it.)" in said[0]["text"]
        assert copies == []
    else:
        assert said == []
        assert [e["intent_id"] for e in copies] == [
            f"incident:{incident}:remediation:pb-rollback:{what}:fallback"
            for what in ("started", "verification:verified")
        ]
        assert "Remediation ran" in str(copies[0]["text"])
        assert copies[0]["notice"]["undelivered"] == (
            f"Not delivered through slack: {refused}; #platform-oncall (is_archived); "
            "C0DEFAULT (is_archived) refused it. Copied to outbox instead."
        )
    assert not [m for m in api.replies(root["ts"]) if "Remediation " in str(m["text"])]


def test_in_slack_a_member_known_by_email_only_approves_as_slack_names_them(
    shop, api: SlackAPI, github: FakeGitHub
) -> None:
    """The world file gives checkout's members an email and no Slack id: a click is matched
    through the email Slack holds for the clicking user (`users.info`)."""
    gw = shop(
        slack_bot_token=SecretStr(SLACK_TOKEN), slack_signing_secret=SecretStr(SIGNING_SECRET),
        slack_api_url=api.base_url, slack_default_channel="C0DEFAULT",
    )  # fmt: skip
    plant(gw, WORKFLOW)
    incident = fire(gw, datetime.now(UTC) - timedelta(minutes=5))
    rid = f"remediation:{incident}:pb-rollback"
    # U0ADA is ada@example.com in Slack: a member of another team (frontend), refused
    assert slack_click(gw, api, "remediation_approve", rid, "U0ADA").status_code == 200
    assert slack_click(gw, api, "remediation_approve", rid, "U0DI").status_code == 200
    deadline = time.monotonic() + 5
    while len(told(api, "U0DI")) + len(told(api, "U0ADA")) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    # named as the world knows the email Slack holds for them, not by the Slack id
    assert told(api, "U0ADA")[0].startswith("Not done: Ada Example may not decide")
    assert told(api, "U0DI") == ["Approved by Di Example."]
    gw.drain()
    assert len(github.runs) == 1
    (row,) = remediations(gw, incident)
    assert (row["approval"]["by"], row["approval"]["identity"]) == ("Di Example", "U0DI")


APPROVERS = """\
components:
  - {id: payment, kind: service}
teams:
  - name: checkout
    owns: [payment]
    members: [{name: Cy Park, email: cy@acme.test}]
    approvers: [Hal Lee, Nobody Known]
  - name: platform
    members: [{name: Hal Lee}]
default_team: platform
"""


def test_approvers_in_a_world_file_are_people_of_some_team(
    tmp_path: Path, store: GraphStore, tenant: str, falkordb: EmbeddedFalkorDB
) -> None:
    path = tmp_path / "world.yaml"
    path.write_text(APPROVERS, encoding="utf-8")
    with pytest.raises(TopologyError) as caught:
        load_sources([path])
    assert caught.value.problems == [
        f"{path}:7: teams.0.approvers.1: approver 'Nobody Known' of 'checkout' is not a member "
        "of any team (approvers are people by name)"
    ]
    path.write_text(APPROVERS.replace(", Nobody Known", ""), encoding="utf-8")
    loaded = load_sources([path])
    assert loaded.world.teams[0].approvers == ["Hal Lee"]
    graph = store.graph(graph_name(tenant))
    graph.ensure_schema()
    import_world(graph, loaded.world)
    inspect = FalkorDB.from_url(falkordb.url).select_graph(graph_name(tenant))  # read-only look
    rows = inspect.ro_query("MATCH (t:Team) RETURN t.name, t.approvers ORDER BY t.name")
    assert rows.result_set == [["checkout", ["Hal Lee"]], ["platform", None]]


def proposal_of(api: SlackAPI) -> dict[str, Any]:
    """The proposal's message in the page's thread (as Slack holds it now, edits included)."""
    (found,) = [m for m in api.messages if "Proposed remediation" in str(m["text"])]
    return found


def proposal_edits(api: SlackAPI, message: dict[str, Any]) -> list[dict[str, Any]]:
    """The `chat.update` calls that edited `message`."""
    where = (message["channel"], message["ts"])
    return [p for _, method, p in api.calls
            if method == "chat.update" and (p.get("channel"), p.get("ts")) == where]  # fmt: skip


@pytest.mark.parametrize("how", ["slack", "web"])
def test_an_approval_edits_the_proposal_once_to_say_who_approved_it_without_buttons(
    slack_shop: Gateway, api: SlackAPI, github: FakeGitHub, how: str
) -> None:
    """Approved from Slack or the web, the proposal's message keeps no Approve / Reject: it is
    edited once (intent `…:decided`) to say who approved it; a double click edits nothing
    more."""
    gw = slack_shop
    plant(gw, WORKFLOW)
    incident = fire(gw, datetime.now(UTC) - timedelta(minutes=5))
    rid = f"remediation:{incident}:pb-rollback"
    proposal = proposal_of(api)
    assert "remediation_approve" in json.dumps(proposal["blocks"])
    for _ in range(2):  # a double click decides once, and edits once
        if how == "slack":
            assert slack_click(gw, api, "remediation_approve", rid, "U0CY").status_code == 200
        else:
            assert decide(gw, incident, "approve", MEMBER).status_code == 200
    gw.drain()
    gw.drain()
    assert len(github.runs) == 1
    proposal = proposal_of(api)
    assert len(proposal_edits(api, proposal)) == 1 and proposal["edited"] == 1
    assert "remediation_approve" not in json.dumps(proposal["blocks"])
    assert "remediation_reject" not in json.dumps(proposal["blocks"])
    where = "in Slack" if how == "slack" else "on the web"
    assert f"Approved by Cy Example* ({where}) at " in proposal["text"], proposal["text"]
    assert "it runs once now" in proposal["text"]
    assert "Proposed remediation: " in proposal["text"]  # what it was stays said
    tasks = {t["kind"]: t for t in graph_of(gw).rows("incident_tasks", {"incident_id": incident})}
    assert (tasks["edit_proposal"]["status"], tasks["edit_proposal"]["outcome"]) == (
        "done", "proposal edited")  # fmt: skip
    story = [e["text"] for e in events(graph_of(gw), incident, None, github.url)]
    assert "Edited the fix's proposal (pb-rollback) to say who decided it via slack" in story


def test_a_rejection_on_the_web_edits_the_proposal_once_and_runs_nothing(
    slack_shop: Gateway, api: SlackAPI, github: FakeGitHub
) -> None:
    gw = slack_shop
    plant(gw, WORKFLOW)
    incident = fire(gw, datetime.now(UTC) - timedelta(minutes=5))
    proposal = proposal_of(api)
    assert decide(gw, incident, "reject", MEMBER).status_code == 200
    gw.drain()
    assert decide(gw, incident, "reject", MEMBER).json()["fresh"] is False
    gw.drain()
    assert github.runs == []
    proposal = proposal_of(api)
    assert len(proposal_edits(api, proposal)) == 1
    assert "remediation_approve" not in json.dumps(proposal["blocks"])
    assert "Rejected by Cy Example* (on the web) at " in proposal["text"], proposal["text"]
    assert proposal["text"].endswith("it will not run.")
    kinds = [t["kind"] for t in graph_of(gw).rows("incident_tasks", {"incident_id": incident})]
    assert "remediate" not in kinds and kinds.count("edit_proposal") == 1


def test_without_slack_the_proposal_s_edit_is_kept_in_the_outbox(shop, github: FakeGitHub) -> None:
    """Outbox mode: the decision is recorded as the proposal's edit (kind `update`, replying to
    the proposal's line), once, with no button to offer."""
    gw = shop()
    plant(gw, WORKFLOW)
    incident = fire(gw, datetime.now(UTC) - timedelta(minutes=5))
    assert decide(gw, incident, "reject", MEMBER).status_code == 200
    gw.drain()
    (proposal,) = [e for e in thread(gw, incident) if e["intent_id"].endswith(":proposed")]
    assert proposal["notice"]["remediation_id"] is not None
    (edit,) = [e for e in thread(gw, incident) if e["intent_id"].endswith(":decided")]
    assert (edit["kind"], edit["reply_to"]) == ("update", proposal["ref"])
    assert edit["notice"]["remediation_id"] is None
    assert "Rejected by Cy Example (on the web) at " in edit["text"]
    tasks = {t["kind"]: t for t in graph_of(gw).rows("incident_tasks", {"incident_id": incident})}
    assert tasks["edit_proposal"]["outcome"] == "proposal edited"
    # the web timeline has a row for it, as for an approval (a trial found none)
    story = [e["text"] for e in events(graph_of(gw), incident, None, github.url)]
    assert "Remediation github_workflow rejected by Cy Example" in story, story


def test_a_proposal_edit_slack_refuses_is_copied_to_the_outbox_and_the_fix_still_runs(
    slack_shop: Gateway, api: SlackAPI, github: FakeGitHub
) -> None:
    """The proposal's channel is archived before the approval: the edit Slack refuses is kept
    in the outbox (`…:decided:fallback`), once; the fix runs all the same."""
    gw = slack_shop
    plant(gw, WORKFLOW)
    incident = fire(gw, datetime.now(UTC) - timedelta(minutes=5))
    proposal = proposal_of(api)
    api.refuse(proposal["channel"], "is_archived")
    assert decide(gw, incident, "approve", MEMBER).status_code == 200
    gw.drain()
    gw.drain()
    assert len(github.runs) == 1
    assert not proposal_of(api).get("edited")
    copies = [e for e in gw.outbox if str(e["intent_id"]).endswith(":decided:fallback")]
    assert [e["intent_id"] for e in copies] == [
        f"incident:{incident}:remediation:pb-rollback:decided:fallback"
    ]
    assert "Approved by Cy Example" in str(copies[0]["text"])
    tasks = {t["kind"]: t for t in graph_of(gw).rows("incident_tasks", {"incident_id": incident})}
    assert (tasks["edit_proposal"]["status"], tasks["edit_proposal"]["outcome"]) == (
        "done", "proposal edit copied to outbox")  # fmt: skip
    assert tasks["remediate"]["status"] == "done"


def test_a_decision_before_the_proposal_is_said_edits_it_once_it_is(
    slack_shop: Gateway, api: SlackAPI, github: FakeGitHub
) -> None:
    """Approved on the web while the proposal is still to be said (diagnosed, its proposal
    held back): the edit waits, paused, for the proposal's message, then edits it once."""
    gw = slack_shop
    plant(gw, WORKFLOW)
    answer = gw.http.post("/api/v1/alerts", json={"alerts": [
        alert("firing", datetime.now(UTC) - timedelta(minutes=5))]})  # fmt: skip
    (incident,) = answer.json()["incidents"]
    gw.runtime.make_worker("investigator").run(threading.Event(), burst=True)
    (row,) = remediations(gw, incident)
    assert row["remediation"]["status"] == "proposed" and api.messages == []
    graph = graph_of(gw)
    rid = row["remediation"]["id"]

    def hold_proposal(until_ms: int) -> None:  # as a worker's pause leaves a task
        graph._graph.query(
            "MATCH (t:Task {id: $id}) SET t.status = $status, t.lease_until = $until",
            {"id": f"propose:{rid}", "status": "paused" if until_ms else "open",
             "until": until_ms},
        )  # fmt: skip

    def edit_task() -> dict[str, Any]:
        tasks = {t["kind"]: t for t in graph.rows("incident_tasks", {"incident_id": incident})}
        return tasks["edit_proposal"]

    hold_proposal(int(time.time() * 1000) + 3_600_000)
    assert decide(gw, incident, "approve", MEMBER).status_code == 200
    gw.drain()
    assert edit_task()["status"] == "paused" and api.called("chat.update") == 0
    assert not [m for m in api.messages if "Proposed remediation" in str(m["text"])]
    hold_proposal(0)
    deadline = time.monotonic() + 20
    while edit_task()["status"] != "done" and time.monotonic() < deadline:
        gw.drain()  # the paused edit waits its second, then is claimable again
        time.sleep(0.2)
    assert (edit_task()["status"], edit_task()["outcome"]) == ("done", "proposal edited")
    proposal = proposal_of(api)
    assert len(proposal_edits(api, proposal)) == 1
    assert "Approved by Cy Example* (on the web)" in proposal["text"]
    assert "remediation_approve" not in json.dumps(proposal["blocks"])
