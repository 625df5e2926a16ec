"""Parsing of webhook bodies: every real capture, fingerprints, timestamps, bad bodies."""

from __future__ import annotations

import json

import pytest

from gateway.http.payloads import PayloadError, label_fingerprint, normalize, parse_body, rfc3339_ms
from tests.conftest import FIXTURES

CAPTURES = sorted((FIXTURES / "alertmanager" / "captured").glob("*.json"))


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.stem)
def test_every_capture_parses_and_fingerprints_match(path):
    capture = json.loads(path.read_text())
    alerts = normalize(parse_body(capture["body_raw"].encode()), "unknown")
    assert len(alerts) == len(capture["body"]["alerts"])
    for alert, raw in zip(alerts, capture["body"]["alerts"], strict=True):
        assert alert.fingerprint == raw["fingerprint"]
        assert label_fingerprint(raw["labels"]) == raw["fingerprint"]
        assert alert.key == f"{raw['fingerprint']}@{raw['startsAt']}"
        assert alert.status == raw["status"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-30T02:53:51.603228863Z", 1796007231603),
        ("2026-11-30T03:03:20.37Z", 1796007800370),
        ("2026-11-30T03:03:20Z", 1796007800000),
        ("2024-09-27T00:27:00+08:00", 1727368020000),
        ("2026-03-02T09:51:03.157076+01:00", 1772441463157),
        ("0001-01-01T00:00:00Z", None),
        ("", None),
    ],
)
def test_rfc3339_variants(text, expected):
    assert rfc3339_ms(text) == expected


def test_missing_fingerprint_is_computed_from_labels():
    body = {"alerts": [{"status": "firing", "labels": {"alertname": "X", "job": "j"},
                        "startsAt": "2026-01-01T00:00:00Z"}]}  # fmt: skip
    (alert,) = normalize(parse_body(json.dumps(body).encode()), "unknown")
    assert alert.fingerprint == label_fingerprint({"alertname": "X", "job": "j"})
    assert alert.severity == "unknown"


def test_an_alert_without_alertname_or_summary_is_titled_so():
    body = {"alerts": [{"status": "firing", "labels": {}, "startsAt": "2026-01-01T00:00:00Z"}]}
    (alert,) = normalize(parse_body(json.dumps(body).encode()), "unknown")
    assert alert.title() == f"alert without alertname (fingerprint {alert.fingerprint})"
    assert alert.fingerprint == "cbf29ce484222325"  # the trial's bare hash: no labels at all


@pytest.mark.parametrize(
    ("raw", "status", "reason"),
    [
        (b"{not json", 400, "not JSON"),
        (b"\xff\xfe", 400, "not UTF-8"),
        (b"[1, 2]", 422, "JSON object"),
        (b'{"ruleName": "x", "evalMatches": []}', 422, "legacy Grafana"),
        (b'{"alerts": [{"status": "pending", "startsAt": "2026-01-01T00:00:00Z"}]}', 422, "status"),
        (b'{"alerts": [{"status": "firing", "startsAt": "yesterday"}]}', 422, "startsAt"),
        (b'{"alerts": [{"status": "firing"}]}', 422, "startsAt"),
    ],
)
def test_bad_bodies_say_why(raw, status, reason):
    with pytest.raises(PayloadError) as err:
        parse_body(raw)
    assert err.value.status == status
    assert reason in str(err.value)
