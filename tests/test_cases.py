"""Every bug-report case in tests/data/alertmanager/cases/ replayed over HTTP against the real
gateway and workers, asserting the case's `expect` values step by step."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, Gateway

CASES = sorted((FIXTURES / "alertmanager" / "cases").glob("*.json"))
STATE = {"firing": "open", "resolved": "resolved"}


def alerts_by_key(gw: Gateway) -> dict[str, dict]:
    """Every alert the gateway holds, by key, with its incident id."""
    out = {}
    for row in gw.http.get("/api/v1/incidents", params={"limit": 1000}, headers=gw.auth).json()[
        "incidents"
    ]:
        detail = gw.http.get(f"/api/v1/incidents/{row['id']}", headers=gw.auth).json()
        for alert in detail["alerts"]:
            out[alert["key"]] = alert | {"incident": detail["id"]}
    return out


def check_status(expected: str, got: int, elapsed: float) -> None:
    assert str(got)[0] == expected[0], f"HTTP {got}, expected {expected}"
    if "within <10s" in expected:
        assert elapsed < 10


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_case(gateway: Gateway, path: Path) -> None:
    case = json.loads(path.read_text())
    unfired: set[str] = set()  # alerts the answers said arrived resolved without a firing
    held: set[str] = set()  # alerts some earlier step found in an incident: they did fire
    for step in case["requests"]:
        raw = step["body_raw"].encode() if "body_raw" in step else json.dumps(step["body"]).encode()
        headers = {k: v for k, v in step["headers"].items() if k.lower() != "authorization"}
        if "Authorization" in step["headers"]:
            headers |= gateway.auth
        started = time.monotonic()
        answer = gateway.http.post("/api/v1/alerts", content=raw, headers=headers)
        elapsed = time.monotonic() - started
        expect = step["expect"]
        check_status(expect["http_status"], answer.status_code, elapsed)
        if answer.status_code >= 400:
            assert answer.json()["detail"], "a 4xx must say why"
            continue
        unfired.update(answer.json()["unfired"])
        gateway.drain()
        alerts = alerts_by_key(gateway)
        for key, state in expect.get("incidents", {}).items():
            if state == "resolved" and key in unfired and key not in alerts.keys() | held:
                continue  # the cases' other outcome: recorded and logged, in no incident
            assert STATE[alerts[key]["status"]] == state, f"step {step['step']}: {key}"
        held |= alerts.keys()
        for key, severity in expect.get("severity", {}).items():
            assert alerts[key]["severity"] == ("unknown" if severity == "<default>" else severity)
        sent = gateway.outbox
        # an alert clearing while its incident stays open, or the one resolve notice
        cleared = [e for e in sent if re.search(r":(cleared:|resolve-notice$)", e["intent_id"])]
        if "resolved_messages" in expect:
            assert len(cleared) == expect["resolved_messages"]
        if "resolved_messages_total" in expect:
            assert len(cleared) == expect["resolved_messages_total"]
        if "tickets_total" in expect:
            assert sum(1 for e in sent if e["kind"] == "ticket") == expect["tickets_total"]
        if expect.get("outbound_json_valid"):
            lines = gateway.runtime.outbox.path.read_text(encoding="utf-8").splitlines()
            assert lines and all(json.loads(line) for line in lines)
        for text in expect.get("text_contains", []):
            assert any(text in e["text"] for e in sent), text
        if "link" in expect:
            assert expect["link"] in {a["link"] for a in alerts.values()}
        if "alerts_processed" in expect:
            assert answer.json()["accepted"] == expect["alerts_processed"]
    # whatever the case, nothing was paged twice
    intents = [e["intent_id"] for e in gateway.outbox]
    assert len(intents) == len(set(intents))
