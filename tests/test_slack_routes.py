"""Slack inbound (gateway/http/slack_routes.py) against the real gateway and graph: requests signed
the
way Slack signs them; buttons and thread replies become Verdicts; the responder edits the page."""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.parse
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from falkordb import FalkorDB
from pydantic import SecretStr

from adapters.falkordb import EmbeddedFalkorDB, GraphStore, TenantGraph, graph_name
from adapters.notify import OutboundMessage
from adapters.outbox import Outbox
from adapters.slack.refs import parse_ref
from agents.investigate.investigator import Investigator
from agents.respond.responder import Responder
from agents.tasks.worker import Worker
from gateway.cli.demo import demo_faults_path, scenario_bodies
from gateway.ops.runtime import Runtime
from tests.conftest import Gateway, demo_graph, make_settings
from tests.slack_api import BOT_ID, BOT_USER, SIGNING_SECRET, TEAM, TOKEN, SlackAPI, signed_headers
from tests.test_webhook import grafana_contact_point_test

ROOT = Path(__file__).resolve().parents[1]


def slack_settings(api: SlackAPI, **extra: Any) -> dict[str, Any]:
    """The settings that switch Slack on, pointed at the local Slack API."""
    return {
        "slack_bot_token": SecretStr(TOKEN),
        "slack_signing_secret": SecretStr(SIGNING_SECRET),
        "slack_api_url": api.base_url,
        "slack_default_channel": "C0DEFAULT",
    } | extra


@pytest.fixture
def slack_gw(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, tmp_path: Path, tenant: str, api: SlackAPI
) -> Iterator[Gateway]:
    """The gateway with Slack on (demo world loaded), serving on a free loopback port."""
    runtime = Runtime(make_settings(falkordb, tmp_path, tenant, **slack_settings(api)))
    runtime.open()
    gw = Gateway(runtime, runtime.serve_http("127.0.0.1", 0), None)
    yield gw
    gw.http.close()
    runtime.close()


def fault(name: str) -> dict[str, Any]:
    faults = yaml.safe_load(demo_faults_path().read_text(encoding="utf-8"))["faults"]
    return next(f for f in faults if f["flag"] == name)


#: When the test alerts started (a resolve must name the same start to match the firing).
STARTS = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)


def fire(gw: Gateway, name: str = "paymentFailure", status: str = "firing") -> str:
    """Post a demo fault's Alertmanager bodies to the webhook; return the incident id."""
    starts = STARTS
    incidents: list[str] = []
    for body in scenario_bodies(fault(name), starts, status):
        answer = gw.http.post("/api/v1/alerts", json=body, headers=gw.auth)
        assert answer.status_code == 200, answer.text
        incidents += [i for i in answer.json()["incidents"] if i not in incidents]
    assert len(incidents) == 1
    return incidents[0]


def paged(gw: Gateway, api: SlackAPI) -> tuple[str, dict[str, Any]]:
    """Fire paymentFailure, run the agents; return the incident id and its page in Slack."""
    incident_id = fire(gw)
    gw.drain()
    (root,) = api.roots()
    return incident_id, root


def detail(gw: Gateway, incident_id: str) -> dict[str, Any]:
    return gw.http.get(f"/api/v1/incidents/{incident_id}", headers=gw.auth).json()


def post_event(gw: Gateway, body: dict[str, Any], **headers: str) -> Any:
    raw = json.dumps(body).encode()
    return gw.http.post(
        "/api/v1/slack/events", content=raw,
        headers={"Content-Type": "application/json"} | signed_headers(raw) | headers,
    )  # fmt: skip


USERNAMES = {"U0ALICE": "alice"}
LABELS = {"blast_confirm": "Confirm cause", "blast_reject": "Wrong cause",
          "blast_resolved": "Resolved"}  # fmt: skip


def click(gw: Gateway, root: dict[str, Any], action_id: str, value: str, user: str = "U0ALICE",
          action_ts: str = "1790000000.123456") -> Any:  # fmt: skip
    payload = {
        "type": "block_actions", "team": {"id": TEAM}, "api_app_id": "A0BLAST",
        "user": {"id": user, "username": USERNAMES.get(user, "someone"), "team_id": TEAM},
        "container": {"type": "message", "message_ts": root["ts"], "channel_id": root["channel"]},
        "channel": {"id": root["channel"]}, "message": {"ts": root["ts"]},
        "trigger_id": "1.2.3", "response_url": "https://hooks.slack.example/actions/1",
        "actions": [{"type": "button", "action_id": action_id, "block_id": "verdict",
                     "value": value, "action_ts": action_ts,
                     "text": {"type": "plain_text", "text": LABELS.get(action_id, "?")}}],
    }  # fmt: skip
    raw = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
    return gw.http.post(
        "/api/v1/slack/interactions", content=raw,
        headers={"Content-Type": "application/x-www-form-urlencoded"} | signed_headers(raw),
    )  # fmt: skip


def reply(root: dict[str, Any], text: str, event_id: str = "Ev01", **event: Any) -> dict[str, Any]:
    """An event_callback for a message in the page's thread, as Slack sends it."""
    ts = f"{float(root['ts']) + 5:.6f}"
    return {
        "token": "legacy", "team_id": TEAM, "api_app_id": "A0APP", "type": "event_callback",
        "event_id": event_id, "event_time": int(time.time()),
        "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}],
        "event": {"type": "message", "channel": root["channel"], "user": "U0BOB", "text": text,
                  "ts": ts, "thread_ts": root["ts"], "channel_type": "channel"} | event,
    }  # fmt: skip


def raw_rows(falkordb: EmbeddedFalkorDB, tenant: str, query: str) -> list[list[Any]]:
    """Test-only inspection of the graph (read-only)."""
    db = FalkorDB.from_url(falkordb.url)
    return db.select_graph(graph_name(tenant)).ro_query(query).result_set


def status_block(root: dict[str, Any]) -> str:
    return next(b for b in root["blocks"] if b.get("block_id") == "status")["elements"][0]["text"]


def test_url_verification_and_every_bad_signature(slack_gw: Gateway):
    body = json.dumps({"type": "url_verification", "challenge": "c-123", "token": "x"}).encode()
    url, kind = "/api/v1/slack/events", {"Content-Type": "application/json"}
    good = slack_gw.http.post(url, content=body, headers=kind | signed_headers(body))
    assert good.status_code == 200 and good.json() == {"challenge": "c-123"}
    stale = signed_headers(body, timestamp=int(time.time()) - 301)
    tampered = signed_headers(body.replace(b"c-123", b"c-999"))
    wrong = signed_headers(body, secret="another-secret")
    garbage = signed_headers(body) | {"X-Slack-Request-Timestamp": "soon"}
    for headers in ({}, stale, tampered, wrong, garbage):
        answer = slack_gw.http.post(url, content=body, headers=kind | headers)
        assert answer.status_code == 401, headers
        assert "signature" in answer.json()["detail"]
    not_json = b"{nope"
    answer = slack_gw.http.post(url, content=not_json, headers=kind | signed_headers(not_json))
    assert answer.status_code == 400 and answer.json()["detail"].startswith("body is not JSON")


def test_confirm_click_becomes_a_verdict_and_edits_the_page(
    slack_gw: Gateway, api: SlackAPI, falkordb: EmbeddedFalkorDB, tenant: str
):
    incident_id, root = paged(slack_gw, api)
    assert detail(slack_gw, incident_id)["root_cause"] == "payment"
    first = click(slack_gw, root, "blast_confirm", incident_id)
    assert first.status_code == 200 and first.content == b""
    again = click(slack_gw, root, "blast_confirm", incident_id)  # the same click delivered twice
    assert again.status_code == 200 and again.content == b""
    (verdict,) = detail(slack_gw, incident_id)["verdicts"]
    assert verdict == {
        "id": "slack-action:U0ALICE:blast_confirm:1790000000.123456",
        "verdict": "confirmed", "actual_cause": "payment", "by": "U0ALICE", "by_name": "alice",
        "at": 1790000000123, "text": "Confirm cause", "source": "button",
        "event_id": "U0ALICE:blast_confirm:1790000000.123456", "seq": 1,
    }  # fmt: skip
    learn = raw_rows(
        falkordb, tenant,
        "MATCH (t:Task {kind: 'learn'})-[:FOR]->(i:Incident) RETURN t.id, t.status, t.owner, "
        "t.attempt_id, t.epoch, t.attempts, t.lease_until, t.incident_id, i.id, "
        "t.created_at > 0",
    )  # fmt: skip
    assert learn == [["learn:" + verdict["id"], "open", "", "", 0, 0, 0, incident_id,
                      incident_id, True]]  # fmt: skip
    slack_gw.drain()
    (root,) = api.roots()
    assert root["edited"] == 1 and len(api.roots()) == 1
    assert status_block(root).startswith("Cause confirmed by <@U0ALICE> at ")
    # the learner took the verdict: the diagnosis (no playbook steered it) became a playbook
    assert raw_rows(falkordb, tenant, "MATCH (t:Task {kind: 'learn'}) RETURN t.status") == [
        ["done"]
    ]


def test_with_two_tenants_on_one_slack_app_each_page_names_its_tenant(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, store: GraphStore, tmp_path: Path,
    tenant: str, api: SlackAPI,
):  # fmt: skip
    """A trial: two organisations' pages side by side in one channel, nothing saying whose.
    With more than one tenant the page's title names its own ("[acme] [CRITICAL] …"), in the
    blocks and the notification text, and so does the page restated (a verdict's edit)."""
    other = f"{tenant}x"
    demo_graph(store, other)
    tokens = {tenant: SecretStr("token-a-123456"), other: SecretStr("token-b-123456")}
    settings = make_settings(falkordb, tmp_path, tenant, webhook_tokens=tokens,
                             **slack_settings(api))  # fmt: skip
    runtime = Runtime(settings)
    runtime.open()
    gw = Gateway(runtime, runtime.serve_http("127.0.0.1", 0), "token-a-123456")
    try:
        incident_id, root = paged(gw, api)
        assert root["blocks"][0]["text"]["text"].startswith(f"*[{tenant}] [")
        assert f"*[{tenant}] [" in root["text"].split("\n")[0]
        assert click(gw, root, "blast_confirm", incident_id).status_code == 200
        gw.drain()
        (root,) = api.roots()
        assert root["edited"] == 1
        assert root["blocks"][0]["text"]["text"].startswith(f"*[{tenant}] [")
    finally:
        gw.http.close()
        runtime.close()


def test_with_two_tenants_every_message_a_person_sees_names_its_tenant(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, store: GraphStore, tmp_path: Path,
    tenant: str, api: SlackAPI,
):  # fmt: skip
    """The page named its tenant, but what followed it did not: a thread reply, an
    escalation level, the resolve notice, the GitHub issue's title and the `incidents` list
    read as anyone's. With two tenants each starts with "[acme] " (the one `tenant_prefix`);
    with one, nothing is added (the escalation and CLI tests read them unprefixed)."""
    from tests.github_api import REPO, FakeGitHub
    from tests.github_api import TOKEN as GITHUB_TOKEN
    from tests.respond.test_escalation import with_policy
    from tests.test_cli import cli

    other = f"{tenant}x"
    demo_graph(store, other)
    with_policy(graph, [("1s", ["Di Example"])])
    tokens = {tenant: SecretStr("token-a-123456"), other: SecretStr("token-b-123456")}
    github = FakeGitHub().start()
    settings = make_settings(
        falkordb, tmp_path, tenant, webhook_tokens=tokens, github_token=SecretStr(GITHUB_TOKEN),
        github_repo=REPO, github_api_url=github.url, github_request_interval_s=0,
        github_write_interval_s=0, **slack_settings(api),
    )  # fmt: skip
    runtime = Runtime(settings)
    runtime.open()
    gw = Gateway(runtime, runtime.serve_http("127.0.0.1", 0), "token-a-123456")
    named = f"[{tenant}] "
    try:
        incident_id, root = paged(gw, api)
        assert f"*{named}[" in root["text"].split("\n")[0]
        (issue,) = github.issues
        assert issue["title"].startswith(f"{named}[critical] ")
        time.sleep(1.1)  # the escalation level is due
        gw.drain()
        fire(gw, status="resolved")
        gw.drain()
        replies = api.replies(root["ts"])
        said = {
            what: [m for m in replies if what in m["text"]]
            for what in ("alert in this incident", "Escalation level 1 of 1", "Resolved: ")
        }
        assert all(len(found) == 1 for found in said.values()), said
        for (reply,) in said.values():  # the text, and the blocks people see: after a mention
            for text in (reply["text"], reply["blocks"][0]["text"]["text"]):  # as on the page
                assert re.sub(r"^<@U\w+> ", "", text).startswith(named), text
        assert said["Escalation level 1 of 1"][0]["text"].startswith(f"<@U0DI> {named}Escalation")
    finally:
        gw.http.close()
        runtime.close()
        github.stop()
    env = {"FALKORDB_URL": falkordb.url, "BLAST_DEFAULT_TENANT": tenant,
           "BLAST_DATA_DIR": str(tmp_path)}  # fmt: skip
    both = f"{tenant}=token-a-123456,{other}=token-b-123456"
    (row,) = cli("incidents", BLAST_WEBHOOK_TOKENS=both, **env).stdout.splitlines()[1:]
    title = str(graph.one("incident_get", {"incident_id": incident_id})["title"])
    assert row.endswith(f"  {named}{title}"), row
    (row,) = cli("incidents", **env).stdout.splitlines()[1:]  # one tenant: as before
    assert row.endswith(f"  {title}") and named not in row, row


def test_forged_click_changes_nothing(slack_gw: Gateway, api: SlackAPI):
    incident_id, root = paged(slack_gw, api)
    payload = {"type": "block_actions", "user": {"id": "U0EVE"},
               "container": {"message_ts": root["ts"], "channel_id": root["channel"]},
               "actions": [{"action_id": "blast_reject", "value": incident_id,
                            "action_ts": "1790000001.000001"}]}  # fmt: skip
    raw = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
    for headers in ({}, signed_headers(raw, secret="guess"), signed_headers(b"payload=%7B%7D")):
        answer = slack_gw.http.post(
            "/api/v1/slack/interactions", content=raw,
            headers={"Content-Type": "application/x-www-form-urlencoded"} | headers,
        )  # fmt: skip
        assert answer.status_code == 401
    assert detail(slack_gw, incident_id)["verdicts"] == []
    assert api.roots()[0].get("edited") is None


def test_wrong_cause_reply_names_the_actual_cause(slack_gw: Gateway, api: SlackAPI):
    incident_id, root = paged(slack_gw, api)
    event = reply(root, "Wrong cause &amp; not payment: it's the <#C0CART|cart> service")
    first = post_event(slack_gw, event)
    assert first.status_code == 200
    assert first.json() | {"verdict_id": "-"} == {
        "ok": True, "verdict": "rejected", "actual_cause": "cart", "verdict_id": "-",
        "repeat": False,
    }  # fmt: skip
    retried = post_event(slack_gw, event, **{"X-Slack-Retry-Num": "1",
                                             "X-Slack-Retry-Reason": "http_timeout"})  # fmt: skip
    assert retried.json()["repeat"] is True
    (verdict,) = detail(slack_gw, incident_id)["verdicts"]
    assert (verdict["verdict"], verdict["actual_cause"], verdict["by"], verdict["source"]) == (
        "rejected", "cart", "U0BOB", "reply")  # fmt: skip
    assert verdict["event_id"] == "Ev01" and verdict["at"] == int(float(root["ts"]) * 1000) + 5000
    slack_gw.drain()
    (root,) = api.roots()
    assert "Cause rejected by <@U0BOB>" in status_block(root)
    assert status_block(root).endswith("; actual cause: *cart*.")


def test_a_misspelt_cause_is_offered_its_spelling_and_never_stored(
    slack_gw: Gateway, api: SlackAPI
) -> None:
    """ "wrong, it's prodcut-catalog": the rejection is recorded without a cause (nothing is
    learned about a component that does not exist), the replier alone is asked "did you mean
    product-catalog?", and a reply naming it completes the rejection."""
    incident_id, root = paged(slack_gw, api)
    answer = post_event(slack_gw, reply(root, "wrong, it's prodcut-catalog", "Ev10")).json()
    assert (answer["verdict"], answer["actual_cause"]) == ("rejected", None)
    assert answer["suggested"] == {"word": "prodcut-catalog", "names": ["product-catalog"]}
    (told,) = api.ephemeral
    assert (told["user"], told["thread_ts"]) == ("U0BOB", root["ts"])
    assert told["text"] == (
        "prodcut-catalog is not a component I know: did you mean product-catalog? Reply in "
        'this thread naming it ("it was product-catalog") to record the actual cause; the '
        "rejection is recorded without one."
    )
    assert not [m for m in api.messages if m["text"] == told["text"]]  # shown to Bob only
    named = post_event(slack_gw, reply(root, "product catalog", "Ev11")).json()
    assert (named["verdict"], named["actual_cause"]) == ("rejected", "product-catalog")
    assert [v["actual_cause"] for v in detail(slack_gw, incident_id)["verdicts"]] == [
        None, "product-catalog"
    ]  # fmt: skip
    # naming the rejected cause again, or words like no component, suggest nothing
    plain = post_event(slack_gw, reply(root, "wrong: payment is fine, the database is slow",
                                       "Ev12")).json()  # fmt: skip
    assert "suggested" not in plain and len(api.ephemeral) == 1


@pytest.mark.parametrize(
    ("text", "verdict", "cause"),
    [
        ("yes, confirmed", "confirmed", "payment"),
        ("that's right, payment it is", "confirmed", "payment"),
        ("nope", "rejected", None),
        ("not the cause, it's product catalog", "rejected", "product-catalog"),
        ("wrong: payment is fine, the database is slow", "rejected", None),
        ("looking into it right now", None, None),
        ("can't confirm yet", None, None),
    ],
)
def test_what_a_reply_means(slack_gw: Gateway, api: SlackAPI, text, verdict, cause):
    incident_id, root = paged(slack_gw, api)
    answer = post_event(slack_gw, reply(root, text)).json()
    assert answer.get("verdict") == verdict and answer.get("actual_cause", cause) == cause
    stored = detail(slack_gw, incident_id)["verdicts"]
    assert [(v["verdict"], v["actual_cause"]) for v in stored] == (
        [(verdict, cause)] if verdict else []
    )


def test_messages_that_are_not_replies_are_ignored(slack_gw: Gateway, api: SlackAPI):
    incident_id, root = paged(slack_gw, api)
    cases = {
        # our own follow-up in the thread, echoed back to us
        "a bot's message": reply(root, "Cleared: wrong", "E1", bot_id=BOT_ID, user=BOT_USER),
        "our own message": reply(root, "wrong", "E2", user=BOT_USER),  # our bot user, no bot_id
        "message subtype message_changed": reply(root, "wrong", "E3", subtype="message_changed"),
        "not in a thread": reply(root, "wrong", "E4", thread_ts=None),
        "not a thread of one of our pages": reply(root, "wrong", "E5", thread_ts="1.000001"),
        "the reply states no verdict": reply(root, "on it, checking dashboards", "E6"),
        "not a message event": reply(root, "wrong", "E7", type="app_mention"),
    }
    for reason, body in cases.items():
        answer = post_event(slack_gw, body)
        assert answer.status_code == 200 and answer.json() == {"ok": True, "ignored": reason}
    assert detail(slack_gw, incident_id)["verdicts"] == []


def test_buttons_for_other_messages_or_incidents_are_ignored(slack_gw: Gateway, api: SlackAPI):
    incident_id, root = paged(slack_gw, api)
    assert click(slack_gw, root, "blast_confirm", "inc-other").status_code == 200
    elsewhere = root | {"ts": "1.000001"}
    assert click(slack_gw, elsewhere, "blast_confirm", incident_id).status_code == 200
    assert click(slack_gw, root, "some_other_button", incident_id).status_code == 200
    assert detail(slack_gw, incident_id)["verdicts"] == []
    bad = b"payload=%7Bnot-json"
    answer = slack_gw.http.post(
        "/api/v1/slack/interactions", content=bad,
        headers={"Content-Type": "application/x-www-form-urlencoded"} | signed_headers(bad),
    )  # fmt: skip
    assert answer.status_code == 400 and "payload" in answer.json()["detail"]


def test_slack_routes_are_404_without_a_signing_secret(gateway: Gateway):
    body = b'{"type": "url_verification", "challenge": "x"}'
    answer = gateway.http.post("/api/v1/slack/events", content=body, headers=signed_headers(body))
    assert answer.status_code == 404 and "SLACK_SIGNING_SECRET" in answer.json()["detail"]


def test_resolved_incident_edits_the_page_and_threads_the_clearing(
    slack_gw: Gateway, api: SlackAPI
):
    incident_id, root = paged(slack_gw, api)
    assert click(slack_gw, root, "blast_resolved", incident_id).status_code == 200
    fire(slack_gw, status="resolved")
    slack_gw.drain()
    (root,) = api.roots()
    assert detail(slack_gw, incident_id)["status"] == "resolved"
    assert detail(slack_gw, incident_id)["resolved_by"] == "alice"  # the button resolved it
    lines = status_block(root).split("\n")
    assert lines[0].startswith("Resolved by alice at ") and lines[1].startswith(
        "Marked resolved by <@U0ALICE>"
    )
    assert "blast_resolved" not in json.dumps(root["blocks"])  # nothing left to resolve
    # one resolve notice in the thread, however many alerts cleared afterwards
    said = [m for m in api.replies(root["ts"]) if "alert in this incident" not in m["text"]]
    assert [m["text"].split(":")[0] for m in said] == ["Resolved by alice"]
    assert parse_ref(detail(slack_gw, incident_id)["actions"][0]["external_ref"]) == (
        root["channel"], root["ts"])  # fmt: skip


def test_grafana_s_contact_point_test_is_paged_without_cause_buttons_or_snooze(
    slack_gw: Gateway, api: SlackAPI
):
    """A new user's trial: Grafana's "Test" button paged Slack with Wrong cause and Snooze 1 h
    (and "Root cause: inconclusive; no known component to check first") while the web page
    and the CLI already said it was a test. The page says there is no cause, and offers only
    Acknowledge and Resolved, as a heartbeat's silence does; a real alert joining the test's
    incident brings the verdict buttons and Snooze back."""
    answer = slack_gw.http.post(
        "/api/v1/alerts", json=grafana_contact_point_test(), headers=slack_gw.auth
    )
    assert answer.status_code == 200, answer.text
    (incident_id,) = answer.json()["incidents"]
    slack_gw.drain()
    (root,) = api.roots()
    buttons = next(b for b in root["blocks"] if b.get("block_id") == "verdict")["elements"]
    assert [b["action_id"] for b in buttons] == ["blast_ack", "blast_resolved"]
    cause = next(b for b in root["blocks"] if b.get("block_id") == "cause")["fields"][0]["text"]
    assert cause == "*Root cause*\nnone: a test notification, nothing is broken"
    assert (
        root["text"].splitlines()[1] == "Root cause: none: a test notification, nothing is broken"
    )
    real = grafana_contact_point_test()
    real["alerts"][0]["labels"] = {"alertname": "TestAlert", "instance": "checkout-1"}
    answer = slack_gw.http.post("/api/v1/alerts", json=real, headers=slack_gw.auth)
    assert answer.json()["incidents"] == [incident_id]  # the test's, by its Grafana group
    slack_gw.drain()
    (root,) = api.roots()
    buttons = next(b for b in root["blocks"] if b.get("block_id") == "verdict")["elements"]
    assert [b["action_id"] for b in buttons] == [
        "blast_reject", "blast_ack", "blast_resolved", "blast_snooze",
    ]  # fmt: skip


def test_app_manifest_points_at_our_routes(slack_gw: Gateway):
    manifest = yaml.safe_load((ROOT / "deploy" / "slack-app-manifest.yaml").read_text())
    settings = manifest["settings"]
    urls = [settings["event_subscriptions"]["request_url"],
            settings["interactivity"]["request_url"]]  # fmt: skip
    for url in urls:  # each is served here, and refuses what Slack did not sign
        assert slack_gw.http.post(urllib.parse.urlparse(url).path, content=b"{}").status_code == 401
    assert set(settings["event_subscriptions"]["bot_events"]) == {"message.channels",
                                                                  "message.groups"}  # fmt: skip
    assert {"chat:write", "channels:history", "channels:read", "users:read.email"} <= set(
        manifest["oauth_config"]["scopes"]["bot"]
    )


class LinkTickets:
    """A ticket system whose references are web links (as GitHub issue URLs are), keeping its
    tickets in an outbox file: a stand-in for the GitHub adapter."""

    name = "tickets"

    def __init__(self, outbox: Outbox) -> None:
        self.outbox = outbox

    def send(self, message: OutboundMessage) -> str:
        self.outbox.send(message)
        return "https://tickets.example/" + urllib.parse.quote(message.intent_id)

    def find(self, intent_id: str, message: OutboundMessage | None = None) -> str | None:
        found = self.outbox.find(intent_id)
        return found and "https://tickets.example/" + urllib.parse.quote(intent_id)


def test_page_shows_the_ticket_link_and_the_recent_change(
    slack_gw: Gateway, api: SlackAPI, tmp_path: Path
):
    change = {"component": "payment", "kind": "deploy", "ref": "payment v2.0.1",
              "at": int((STARTS - timedelta(minutes=3)).timestamp() * 1000)}  # fmt: skip
    assert slack_gw.http.post("/api/v1/changes", json=change).status_code == 201
    incident_id = fire(slack_gw)
    runtime = slack_gw.runtime
    assert runtime.store is not None
    agents = [Investigator(), Responder(runtime.messenger, LinkTickets(Outbox(tmp_path / "t")))]
    Worker(runtime.store, runtime.settings.tenants, agents).run(threading.Event(), burst=True)
    (root,) = api.roots()
    assert root["edited"] == 1  # the link came after the page: the page was edited to show it
    link = f"https://tickets.example/incident%3A{incident_id}%3Aticket"
    assert root["blocks"][1]["fields"][2]["text"] == f"*Ticket*\n<{link}|{link}>"
    evidence = next(b for b in root["blocks"] if b.get("block_id") == "evidence")
    assert "change: deploy payment v2.0.1 on payment at " in evidence["elements"][0]["text"]


def test_hostile_alertmanager_body_reaches_slack_as_plain_text(slack_gw: Gateway, api: SlackAPI):
    body = scenario_bodies(fault("paymentFailure"), STARTS, "firing")[0]
    for alert in body["alerts"]:
        alert["labels"]["alertname"] = "<!channel> @here"
        alert["annotations"]["summary"] = "<@U0EVIL> <https://evil.example|login> &amp; <!here>"
    assert slack_gw.http.post("/api/v1/alerts", json=body).status_code == 200
    slack_gw.drain()
    (root,) = api.roots()
    rendered = json.dumps([root["text"], root["blocks"]])
    assert "<!" not in rendered and "<@U0EVIL" not in rendered and "<https://evil" not in rendered
    # the only links are the silences we build (labels percent-encoded: no markup survives)
    silence = "<http://alertmanager.demo:9093/#/silences/new?filter="
    assert rendered.count("<http") == rendered.count(silence) > 0
    assert "&lt;!channel&gt; @here" in rendered and "&amp;amp;" in rendered


def test_slack_answers_well_within_three_seconds(slack_gw: Gateway, api: SlackAPI):
    incident_id, root = paged(slack_gw, api)
    timings = []
    for n in range(10):
        answer = post_event(slack_gw, reply(root, f"wrong, it's cart ({n})", f"Ev{n}"))
        timings.append(answer.elapsed.total_seconds())
        answer = click(slack_gw, root, "blast_reject", incident_id, action_ts=f"1790000000.{n}")
        timings.append(answer.elapsed.total_seconds())
    assert len(detail(slack_gw, incident_id)["verdicts"]) == 20
    assert max(timings) < 1.0, timings
