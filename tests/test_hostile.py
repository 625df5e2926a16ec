"""Hostile input against the real gateway and the real FalkorDB: every value that
crashed FalkorDB 4.16.3 posted to every endpoint that writes an id, credentials checked before
the body, body and JSON limits on every route, validation errors that quote lone surrogates,
and Slack payloads with fields of the wrong type. Never a 5xx, and the server never restarts.
"""

from __future__ import annotations

import gzip
import json
import socket
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from adapters.falkordb import EmbeddedFalkorDB, GraphStore, TenantGraph, UnsafeKey, safe_key
from gateway.cli.incident_text import incident_report, when
from gateway.ops.runtime import Runtime
from tests.conftest import Gateway, alert_body, make_settings
from tests.slack_api import SIGNING_SECRET, TOKEN, SlackAPI, signed_headers

#: Values FalkorDB 4.16.3 crashed on as a unique property (signal 11, every tenant down).
CRASHING = ["x ", " x", "", "a\x01b", "tab\there", "x" * 5000, "nl\n"]
BEARER = "hostile-test-token-0123456789"
VIEWER = "hostile-viewer-token-0123456789"


@pytest.fixture
def hostile(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, tmp_path: Path, tenant: str, api: SlackAPI
) -> Iterator[Gateway]:
    """The gateway with a token, Slack on, and a 64 KiB body limit."""
    settings = make_settings(
        falkordb, tmp_path, tenant, webhook_tokens={tenant: SecretStr(BEARER)},
        slack_bot_token=SecretStr(TOKEN), slack_signing_secret=SecretStr(SIGNING_SECRET),
        slack_api_url=api.base_url, slack_default_channel="C0DEFAULT", max_body_bytes=65536,
        viewer_tokens={f"{tenant}:Vi Example": SecretStr(VIEWER)},
    )  # fmt: skip
    runtime = Runtime(settings)
    runtime.open()
    gw = Gateway(runtime, runtime.serve_http("127.0.0.1", 0), BEARER)
    yield gw
    gw.http.close()
    runtime.close()


def incident(gw: Gateway) -> str:
    answer = gw.http.post("/api/v1/alerts", content=alert_body("checkout"), headers=gw.auth)
    assert answer.status_code == 200, answer.text
    return str(answer.json()["incidents"][0])


def signed_json(gw: Gateway, path: str, body: dict[str, Any]) -> Any:
    raw = json.dumps(body).encode()
    headers = {"Content-Type": "application/json"} | signed_headers(raw)
    return gw.http.post(path, content=raw, headers=headers)


def signed_click(gw: Gateway, payload: dict[str, Any]) -> Any:
    raw = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
    headers = {"Content-Type": "application/x-www-form-urlencoded"} | signed_headers(raw)
    return gw.http.post("/api/v1/slack/interactions", content=raw, headers=headers)


def test_crashing_ids_never_reach_the_database(hostile: Gateway, falkordb: EmbeddedFalkorDB):
    assert falkordb.process is not None
    pid = falkordb.process.pid
    inc = incident(hostile)
    answers: list[tuple[str, str, int]] = []
    for value in CRASHING:
        posts = {
            "verdict": (f"/api/v1/incidents/{inc}/verdicts",
                        {"verdict": "confirmed", "by": "U1", "id": value}),
            "change": ("/api/v1/changes",
                       {"component": "checkout", "kind": "deploy", "ref": "v1", "at": 1,
                        "id": value}),
            "change ref": ("/api/v1/changes",
                           {"component": "checkout", "kind": "deploy", "ref": value, "at": 1}),
            "playbook": ("/api/v1/playbooks",
                         {"title": "t", "component": "checkout", "id": value,
                          "checks": [{"type": "alert_firing", "alertname": "X"}]}),
        }  # fmt: skip
        for what, (path, body) in posts.items():
            answer = hostile.http.post(path, json=body, headers=hostile.auth)
            answers.append((what, value[:10], answer.status_code))
        answer = hostile.http.get(f"/api/v1/incidents/{urllib.parse.quote(value)}",
                                  headers=hostile.auth)  # fmt: skip
        answers.append(("incident", value[:10], answer.status_code))
        event = {"type": "event_callback", "event_id": value, "event": {"type": "message"}}
        answers.append(
            (
                "slack event",
                value[:10],
                signed_json(hostile, "/api/v1/slack/events", event).status_code,
            )
        )
        click = {
            "type": "block_actions",
            "user": {"id": value},
            "channel": {"id": "C1"},
            "container": {"message_ts": "1.2"},
            "actions": [{"action_id": "blast_confirm", "value": inc, "action_ts": "1.3"}],
        }
        answers.append(("slack click", value[:10], signed_click(hostile, click).status_code))
        readback = {
            "type": "block_actions",
            "user": {"id": "U1"},
            "actions": [{"action_id": "approve_preference", "value": value}],
        }
        answers.append(("slack readback", value[:10], signed_click(hostile, readback).status_code))
    assert [a for a in answers if a[2] >= 500] == []
    # an id the client chose is refused with the reason; a derived one is hashed (201)
    assert {a[2] for a in answers if a[0] in ("verdict", "change", "playbook")} == {422}
    assert {a[2] for a in answers if a[0] == "change ref"} <= {201, 422}
    assert falkordb.process.poll() is None and falkordb.process.pid == pid
    assert hostile.runtime.store is not None and hostile.runtime.store.ping()


def test_the_adapter_refuses_unsafe_keys_itself(graph: TenantGraph, store: GraphStore):
    for value in CRASHING:
        with pytest.raises(UnsafeKey):
            graph.rows("record_change", {"id": value, "component": "checkout", "kind": "deploy",
                                         "ref": "r", "at": 1, "author": None})  # fmt: skip
        assert safe_key(value).startswith("sha256:") and len(safe_key(value)) == 71
        # a batch's completing rows: each row's follow-up id, checked before anything is sent
        row = {"task_id": "t", "epoch": 1, "outcome": "done", "next_kind": "respond",
               "next_id": value, "mark_notified": False, "root_cause": None,
               "claim_next": False, "next_attempt_id": "a"}  # fmt: skip
        with pytest.raises(UnsafeKey):
            graph.rows("complete_task", {"tasks": [row], "owner": "w", "lease_ms": 1,
                                         "records": [], "deliveries": []})  # fmt: skip
    assert safe_key("deploy:checkout:v1") == "deploy:checkout:v1"
    assert store.ping()


def test_credentials_are_checked_before_the_body_is_read(hostile: Gateway):
    """A 256 MiB body announced without a credential is refused at once, unread."""
    host, port = hostile.url.removeprefix("http://").split(":")
    for path in ("/api/v1/changes", "/api/v1/playbooks", "/api/v1/incidents/x/verdicts",
                 "/api/v1/alerts"):  # fmt: skip
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         f"Content-Length: {256 * 1024 * 1024}\r\n\r\n{{".encode())  # fmt: skip
            started = time.monotonic()
            head = sock.recv(4096).decode()
            assert head.startswith("HTTP/1.1 401"), head
            assert time.monotonic() - started < 2


def test_every_route_has_a_body_limit(hostile: Gateway):
    big = b'{"x": "' + b"a" * 70_000 + b'"}'
    for path in ("/api/v1/changes", "/api/v1/playbooks", "/api/v1/alerts",
                 "/api/v1/incidents/x/verdicts", "/health/live"):  # fmt: skip
        answer = hostile.http.post(path, content=big, headers=hostile.auth)
        assert answer.status_code == 413 and "65536" in answer.json()["detail"], path
    huge = b"payload=" + b"a" * (1024 * 1024 + 1)
    answer = hostile.http.post("/api/v1/slack/interactions", content=huge)
    assert answer.status_code == 413


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"[" * 961 + b"]" * 961, "nested deeper"),
        (b'{"component": "checkout", "x": ' + b"1" * 4301 + b"}", "more than 20 digits"),
        (b'{"at": Infinity}', "Infinity"),
        (b'{"id": "\\ud800", "kind": "nope"}', None),  # a lone surrogate in a 422's input
    ],
)
def test_json_limits_and_unrenderable_errors_are_4xx(hostile: Gateway, raw: bytes, reason: str):
    for path in ("/api/v1/changes", "/api/v1/playbooks", "/api/v1/incidents/x/verdicts"):
        answer = hostile.http.post(
            path, content=raw, headers=hostile.auth | {"Content-Type": "application/json"}
        )
        assert answer.status_code == (422 if reason is None else 400), (path, answer.text)
        assert reason is None or reason in answer.json()["detail"]
        # without a credential the same body is a 401 (it was a 500 before any check)
        anonymous = hostile.http.post(path, content=raw)
        assert anonymous.status_code == 401


def test_json_without_a_json_media_type_is_415_with_the_reason(hostile: Gateway):
    """curl's `-d` sends `application/x-www-form-urlencoded`: an API route that takes JSON says
    which media type to send, not a dump of the body's bytes. With it, the same body works."""
    incident = hostile.http.post(
        "/api/v1/alerts", content=alert_body("checkout"),
        headers=hostile.auth | {"Content-Type": "application/json"},
    ).json()["incidents"][0]  # fmt: skip
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    path = f"/api/v1/incidents/{incident}/ack"
    answer = hostile.http.post(path, content=b'{"by": "Bo"}', headers=hostile.auth | form)
    assert answer.status_code == 415
    assert answer.json()["detail"] == (
        "the body must be JSON sent with Content-Type: application/json "
        "(got application/x-www-form-urlencoded)"
    )
    done = hostile.http.post(path, json={"by": "Bo"}, headers=hostile.auth)
    assert done.status_code == 200, done.text
    missing = hostile.http.post(
        "/api/v1/incidents/inc-nope/ack", json={"by": "Bo"}, headers=hostile.auth
    )
    assert missing.status_code == 404


def test_the_webhook_takes_json_only_as_every_json_route_does(hostile: Gateway, graph: TenantGraph):
    """Alertmanager and Grafana send `Content-Type: application/json`. A body the webhook is
    sent as text, a form (curl's `-d`) or another type is 415 with the reason the ack route
    gives (a new user's trial: the webhook took any type), and nothing of it is written; JSON
    with a charset, a `+json` type or no Content-Type at all is taken. A route with a body
    model says the same of `text/json` (it was a 422 quoting the bytes)."""
    raw = alert_body("checkout")
    for media in ("text/plain", "application/x-www-form-urlencoded", "text/json"):
        answer = hostile.http.post(
            "/api/v1/alerts", content=raw, headers=hostile.auth | {"Content-Type": media}
        )
        assert answer.status_code == 415, (media, answer.text)
        assert answer.json()["detail"] == (
            f"the body must be JSON sent with Content-Type: application/json (got {media})"
        )
    assert graph.rows("list_incidents", {"status": None, "limit": 5}) == []
    for n, media in enumerate((None, "application/json; charset=utf-8", "application/x+json")):
        headers = hostile.auth | ({"Content-Type": media} if media else {})
        answer = hostile.http.post("/api/v1/alerts", content=alert_body("cart", n), headers=headers)
        assert answer.status_code == 200, (media, answer.text)
        assert answer.json()["accepted"] == 1
    incident_id = answer.json()["incidents"][0]
    ack = hostile.http.post(
        f"/api/v1/incidents/{incident_id}/ack", content=b'{"by": "Bo"}',
        headers=hostile.auth | {"Content-Type": "text/json"},
    )  # fmt: skip
    assert ack.status_code == 415, ack.text
    assert ack.json()["detail"].endswith("(got text/json)")


def test_a_422_quotes_the_input_as_json_not_as_python(hostile: Gateway):
    """A new user's trial: `"input":"{'components': ['shipping'], …}"`, a Python repr. The
    offending input is JSON as it was sent: the value itself when short, else the head of its
    JSON text cut at 200 characters."""
    body = {"components": ["shipping"], "minutes": 1, "by": "Ed Example"}  # no reason
    answer = hostile.http.post("/api/v1/maintenance", json=body, headers=hostile.auth)
    assert answer.status_code == 422, answer.text
    (error,) = answer.json()["detail"]
    assert (error["loc"], error["input"]) == (["body", "reason"], body)
    long = body | {"reason": "deploy", "by": "x" * 300}
    answer = hostile.http.post("/api/v1/maintenance", json=long, headers=hostile.auth)
    (error,) = answer.json()["detail"]
    assert error["loc"] == ["body", "by"]
    assert error["input"] == '"' + "x" * 198 + "…"
    answer = hostile.http.post("/api/v1/maintenance", json=[1, 2], headers=hostile.auth)
    (error,) = answer.json()["detail"]
    assert error["input"] == [1, 2] and "'" not in answer.text


def test_a_compressed_body_is_415_with_the_reason(hostile: Gateway):
    body = gzip.compress(alert_body("checkout"))
    answer = hostile.http.post(
        "/api/v1/alerts", content=body,
        headers=hostile.auth | {"Content-Type": "application/json", "Content-Encoding": "gzip"},
    )  # fmt: skip
    assert answer.status_code == 415
    assert answer.json()["detail"] == (
        "Content-Encoding 'gzip' is not supported: send the body uncompressed"
    )
    assert hostile.http.get("/api/v1/incidents", headers=hostile.auth).json()["incidents"] == []


def test_a_negative_truncated_alerts_count_is_422(hostile: Gateway):
    body = json.loads(alert_body("checkout")) | {"truncatedAlerts": -5}
    answer = hostile.http.post("/api/v1/alerts", json=body, headers=hostile.auth)
    assert answer.status_code == 422
    assert "truncatedAlerts" in answer.text


def test_no_unauthenticated_api_browser(hostile: Gateway):
    """FastAPI's /docs (scripts from a CDN), /redoc and /openapi.json are off."""
    for path in ("/docs", "/redoc", "/openapi.json"):
        assert hostile.http.get(path).status_code == 404, path


def test_slack_fields_of_the_wrong_type_are_400(hostile: Gateway):
    reply = {"type": "event_callback", "event_id": "Ev1",
             "event": {"type": "message", "channel": "C1", "user": "U1", "ts": "1.5",
                       "thread_ts": "1.2", "text": "wrong"}}  # fmt: skip
    for field, value in (("user", {"id": "U1"}), ("channel", ["C1"]), ("ts", "1e999"),
                         ("ts", 1.5), ("text", 5)):  # fmt: skip
        body = json.loads(json.dumps(reply))
        body["event"][field] = value
        answer = signed_json(hostile, "/api/v1/slack/events", body)
        assert answer.status_code == 400 and field in answer.json()["detail"], (field, answer.text)
    click = {
        "type": "block_actions",
        "user": {"id": "U1"},
        "channel": {"id": "C1"},
        "message": {"ts": "1.2"},
        "actions": [{"action_id": "blast_confirm", "value": "inc", "action_ts": "1.3"}],
    }
    for path, value in ((("user",), "U1"), (("message",), {"ts": 12}),
                        (("actions",), {"action_id": "x"}), (("channel", "id"), 7)):  # fmt: skip
        body = json.loads(json.dumps(click))
        target = body
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        answer = signed_click(hostile, body)
        assert answer.status_code == 400, (path, answer.text)
    answer = signed_json(hostile, "/api/v1/slack/events", {"type": "url_verification",
                                                           "challenge": "\ud800"})  # fmt: skip
    assert answer.status_code == 400 and "challenge" in answer.json()["detail"]  # was a 500


def junk_credentials(tenant: str) -> dict[str, dict[str, bytes]]:
    """Headers whose bytes a server decodes as Latin-1 into text that is not ASCII, each once
    on a credential the gateway reads itself (cookie, basic, bearer) and on Slack's two."""
    now = str(int(time.time())).encode()
    return {
        "cookie, odd signature": {"Cookie": f"blast_session={tenant}.1.x.".encode() + b"\xe9"},
        "cookie, non-ASCII digits": {"Cookie": f"blast_session={tenant}.".encode() + b"\xb2.x.y"},
        "basic, non-ASCII": {"Authorization": b"Basic \xe9"},
        "bearer, non-ASCII": {"Authorization": b"Bearer \xe9\xe9"},
        "slack, 400-digit timestamp": {
            "X-Slack-Request-Timestamp": b"9" * 400, "X-Slack-Signature": b"v0=00"},
        "slack, non-ASCII signature": {
            "X-Slack-Request-Timestamp": now, "X-Slack-Signature": b"v0=\xe9"},
        "slack, signature of the wrong shape": {
            "X-Slack-Request-Timestamp": now, "X-Slack-Signature": b"v0=" + b"A" * 64},
    }  # fmt: skip


@pytest.mark.parametrize(
    "path", ["/api/v1/alerts", "/api/v1/incidents", "/", "/api/v1/slack/events",
             "/api/v1/slack/interactions"],
)  # fmt: skip
def test_undecodable_credentials_are_refused_not_500(hostile: Gateway, tenant: str, path: str):
    """A header a client chose (cookie, Authorization, Slack's signature
    headers) with bytes outside ASCII, or a number no clock takes, is a refused credential:
    401 (the web page: a sign-in redirect), never a 500, and the connection stays usable."""
    for what, headers in junk_credentials(tenant).items():
        answer = hostile.http.post(path, content=b"{}", headers=headers) if path != "/" else (
            hostile.http.get(path, headers=headers, follow_redirects=False))  # fmt: skip
        assert answer.status_code in (303, 401), (what, answer.status_code, answer.text)
        # the same kept-alive connection still answers
        assert hostile.http.get("/health/live").status_code == 200, what


def test_source_links_are_http_only(hostile: Gateway):
    """A sender's `javascript:` or `data:` URL never becomes a link on the incident page; an
    http(s) one, absolute or joined to `externalURL`, does."""
    sign_in(hostile)
    cases = {
        "javascript:alert(document.domain)": ("", None),
        "/graph?g0.expr=up": ("javascript:alert(1)//", None),
        "data:text/html,<script>x</script>": ("", None),
        "/graph?g0.expr=rate": ("https://am.example/", "https://am.example/graph?g0.expr=rate"),
    }
    for index, (generator, (external, expected)) in enumerate(cases.items()):
        body = json.loads(alert_body("checkout", 100 + index))
        body["externalURL"] = external
        body["alerts"][0]["generatorURL"] = generator
        body["alerts"][0]["annotations"]["runbook_url"] = "javascript:alert(2)"
        answer = hostile.http.post("/api/v1/alerts", json=body, headers=hostile.auth)
        assert answer.status_code == 200, answer.text
        inc = answer.json()["incidents"][0]
        page = hostile.http.get(f"/ui/incidents/{inc}").text
        alerts = page.split('id="alerts-h"')[1].split("</section>")[0]  # the sender's part
        hrefs = [h.split('"')[0] for h in alerts.split('href="')[1:]]
        assert not [h for h in hrefs if "javascript" in h or h.startswith("data:")], hrefs
        if expected:
            assert expected in hrefs, hrefs
        stored = hostile.http.get(f"/api/v1/incidents/{inc}", headers=hostile.auth).json()
        assert stored["alerts"][0]["link"] == (expected or "")


def sign_in(gw: Gateway) -> None:
    """Sign `gw.http` in to the web page as the fixture's one viewer; the client keeps the
    session cookie."""
    answer = gw.http.post("/ui/login", data={"token": VIEWER}, follow_redirects=False)
    assert answer.status_code == 303, answer.text


def test_sender_clocks_cannot_hide_or_pin_an_incident(hostile: Gateway):
    """An `endsAt` before `startsAt` resolves the alert when it started (not in 2001, which made
    retention archive a new incident at once); a `startsAt` far in the future counts as the time
    of receipt (it sorted first for ever). The alert keeps its identity as sent."""
    body = json.loads(alert_body("checkout", 200))
    answer = hostile.http.post("/api/v1/alerts", json=body, headers=hostile.auth)
    inc = answer.json()["incidents"][0]
    body["status"] = body["alerts"][0]["status"] = "resolved"
    body["alerts"][0]["endsAt"] = "2001-01-01T00:00:00Z"
    assert hostile.http.post("/api/v1/alerts", json=body, headers=hostile.auth).status_code == 200
    found = hostile.http.get(f"/api/v1/incidents/{inc}", headers=hostile.auth).json()
    assert found["status"] == "resolved"
    assert found["resolved_at"] >= found["opened_at"]
    assert found["alerts"][0]["ends_at_ms"] == found["alerts"][0]["starts_at_ms"]

    future = json.loads(alert_body("payment", 201))
    future["alerts"][0]["startsAt"] = "9999-12-31T23:59:59Z"
    before = int(time.time() * 1000)
    answer = hostile.http.post("/api/v1/alerts", json=future, headers=hostile.auth)
    assert answer.status_code == 200, answer.text
    found = hostile.http.get(f"/api/v1/incidents/{answer.json()['incidents'][0]}",
                             headers=hostile.auth).json()  # fmt: skip
    assert before <= found["alerts"][0]["starts_at_ms"] <= int(time.time() * 1000)
    assert found["alerts"][0]["starts_at"] == "9999-12-31T23:59:59Z"
    # a trial: the start shown was the time of receipt with no word of the sent 9999: the API,
    # the CLI and the web page say the sent one was ahead and the start shown is the arrival
    assert found["alerts"][0]["starts_at_ahead"] is True
    on_time = hostile.http.get(f"/api/v1/incidents/{inc}", headers=hostile.auth).json()
    assert on_time["alerts"][0]["starts_at_ahead"] is False
    (line,) = [x for x in incident_report(found).splitlines() if "HighErrorRate on" in x]
    assert line.endswith(
        ", since " + when(found["alerts"][0]["starts_at_ms"]) + " (when it arrived: its "
        "startsAt was over 5 min ahead of this gateway's clock)"
    ), line
    assert "ahead of this" not in incident_report(on_time)
    sign_in(hostile)
    page = hostile.http.get(f"/ui/incidents/{found['id']}").text
    assert page.count('class="clock-ahead"') == 1
    assert "its startsAt (9999-12-31T23:59:59Z) was over 5 min ahead of this" in page


@pytest.mark.parametrize("raw", [b'{"n": 1e999}', b'{"n": -1e999}'])
def test_a_number_past_float_range_is_400(hostile: Gateway, raw: bytes):
    answer = hostile.http.post("/api/v1/alerts", content=raw, headers=hostile.auth)
    assert answer.status_code == 400
    assert "out of range" in answer.json()["detail"]


@pytest.mark.parametrize("value", ["NaN", "inf", "-Infinity"])
def test_non_finite_numbers_as_text_are_422(hostile: Gateway, value: str):
    playbook = {
        "title": "t",
        "component": "checkout",
        "checks": [{"type": "prometheus", "query": "up", "op": ">", "threshold": value}],
    }
    answer = hostile.http.post("/api/v1/playbooks", json=playbook, headers=hostile.auth)
    assert answer.status_code == 422, answer.text
    grafana = json.loads(alert_body("checkout", 300))
    grafana["alerts"][0]["values"] = {"A": value}
    answer = hostile.http.post("/api/v1/alerts", json=grafana, headers=hostile.auth)
    assert answer.status_code == 422, answer.text


def test_an_id_a_url_cannot_carry_is_422(hostile: Gateway):
    for value in ("team/x", ".", ".."):
        playbook = {
            "title": "t",
            "component": "checkout",
            "id": value,
            "checks": [{"type": "alert_firing", "alertname": "X"}],
        }
        answer = hostile.http.post("/api/v1/playbooks", json=playbook, headers=hostile.auth)
        assert answer.status_code == 422, (value, answer.text)
        assert "part of a URL path" in answer.text


def test_an_idempotency_id_reused_for_another_request_is_422(hostile: Gateway, graph: TenantGraph):
    """A repeat with the same request changes nothing (201, the same answer); the same id with
    another request is refused and writes nothing: a verdict never joins a second incident, a
    playbook is never pinned to a second component."""
    first, second = incident(hostile), hostile.http.post(
        "/api/v1/alerts", content=alert_body("payment", 400), headers=hostile.auth
    ).json()["incidents"][0]  # fmt: skip
    # a rejection names the cause (one of an inconclusive finding that names none is refused)
    verdict = {"verdict": "rejected", "by": "alice", "id": "v-1", "actual_cause": "payment"}
    path = "/api/v1/incidents/{}/verdicts"
    assert (
        hostile.http.post(path.format(first), json=verdict, headers=hostile.auth).status_code == 201
    )
    again = hostile.http.post(path.format(first), json=verdict, headers=hostile.auth)
    assert again.status_code == 201 and again.json()["verdict"] == "rejected"
    elsewhere = hostile.http.post(path.format(second), json=verdict, headers=hostile.auth)
    assert elsewhere.status_code == 422, elsewhere.text
    other = hostile.http.post(path.format(first), json=verdict | {"verdict": "confirmed"},
                              headers=hostile.auth)  # fmt: skip
    assert other.status_code == 422, other.text
    assert graph.rows("incident_verdicts", {"incident_id": second}) == []

    playbook = {
        "title": "t",
        "component": "checkout",
        "id": "pb-1",
        "checks": [{"type": "alert_firing", "alertname": "X"}],
    }
    assert (
        hostile.http.post("/api/v1/playbooks", json=playbook, headers=hostile.auth).status_code
        == 201
    )
    assert (
        hostile.http.post("/api/v1/playbooks", json=playbook, headers=hostile.auth).status_code
        == 201
    )
    moved = hostile.http.post("/api/v1/playbooks", json=playbook | {"component": "payment"},
                              headers=hostile.auth)  # fmt: skip
    assert moved.status_code == 422 and "already names another playbook" in moved.text
    listed = hostile.http.get("/api/v1/playbooks", headers=hostile.auth).json()["playbooks"]
    assert [p["component"] for p in listed if p["id"] == "pb-1"] == ["checkout"]

    change = {"component": "checkout", "kind": "deploy", "ref": "v1", "at": 1, "id": "ch-1"}
    assert (
        hostile.http.post("/api/v1/changes", json=change, headers=hostile.auth).status_code == 201
    )
    redone = hostile.http.post("/api/v1/changes", json=change | {"ref": "v2"}, headers=hostile.auth)
    assert redone.status_code == 422 and "already names another change" in redone.text


def test_stored_text_is_bounded_and_times_are_no_booleans(hostile: Gateway):
    inc = incident(hostile)
    path = f"/api/v1/incidents/{inc}/verdicts"
    for body in (
        {"verdict": "confirmed", "by": "x" * 201},
        {"verdict": "confirmed", "by": "al", "text": "t" * 2001},
    ):
        assert hostile.http.post(path, json=body, headers=hostile.auth).status_code == 422
    check = {"type": "alert_firing", "alertname": "X"}
    for body in (
        {"title": "t" * 501, "component": "checkout", "checks": [check]},
        {"title": "t", "component": "checkout", "checks": [check] * 21},
    ):
        assert (
            hostile.http.post("/api/v1/playbooks", json=body, headers=hostile.auth).status_code
            == 422
        )
    change = {"component": "checkout", "kind": "deploy", "ref": "v1", "at": True}
    assert (
        hostile.http.post("/api/v1/changes", json=change, headers=hostile.auth).status_code == 422
    )
    assert hostile.http.head("/health/live").status_code == 200


def test_a_misspelt_field_in_a_persons_request_is_a_422_naming_it(
    hostile: Gateway, graph: TenantGraph
) -> None:
    """`actualCause` for `actual_cause` would record a rejection with no cause, silently."""
    inc = incident(hostile)
    answer = hostile.http.post(
        f"/api/v1/incidents/{inc}/verdicts", headers=hostile.auth,
        json={"verdict": "rejected", "by": "alice", "actualCause": "payment"},
    )  # fmt: skip
    assert answer.status_code == 422 and "actualCause" in answer.text
    assert graph.rows("incident_verdicts", {"incident_id": inc}) == []
    ack = hostile.http.post(
        f"/api/v1/incidents/{inc}/ack", headers=hostile.auth,
        json={"by": "alice", "note": "on it"},
    )  # fmt: skip
    assert ack.status_code == 422 and "note" in ack.text
