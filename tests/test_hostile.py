"""Hostile input (issue #11) against the real gateway and the real FalkorDB: every value that
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
from gateway.runtime import Runtime
from tests.conftest import Gateway, alert_body, make_settings
from tests.slack_api import SIGNING_SECRET, TOKEN, SlackAPI, signed_headers

#: Values FalkorDB 4.16.3 crashed on as a unique property (signal 11, every tenant down).
CRASHING = ["x ", " x", "", "a\x01b", "tab\there", "x" * 5000, "nl\n"]
BEARER = "hostile-test-token-0123456789"


@pytest.fixture
def hostile(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, tmp_path: Path, tenant: str, api: SlackAPI
) -> Iterator[Gateway]:
    """The gateway with a token, Slack on, and a 64 KiB body limit."""
    settings = make_settings(
        falkordb, tmp_path, tenant, webhook_tokens={tenant: SecretStr(BEARER)},
        slack_bot_token=SecretStr(TOKEN), slack_signing_secret=SecretStr(SIGNING_SECRET),
        slack_api_url=api.base_url, slack_default_channel="C0DEFAULT", max_body_bytes=65536,
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
