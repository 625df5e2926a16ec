"""`POST /api/v1/alerts` over real HTTP: credentials and tenants, body limits, bad bodies,
unmatched alerts, Grafana detection, the database being down, and a property test that no
JSON body a sender can post leads to a 5xx."""

from __future__ import annotations

import base64
import gc
import json
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import SecretStr

from adapters.falkordb import EmbeddedFalkorDB, graph_name
from adapters.notices import fmt_ms
from gateway.http import webhook
from gateway.ops.runtime import ConfigError, Runtime
from gateway.world import demo_world_path, import_world, load_world
from tests.conftest import FIXTURES, Gateway, make_settings

STARTS = "2026-11-30T02:53:51.603Z"
ALERT = {
    "status": "firing",
    "labels": {"alertname": "ServiceHighErrorRate", "service": "payment", "severity": "critical"},
    "annotations": {"summary": "payment errors"},
    "startsAt": STARTS,
    "endsAt": "0001-01-01T00:00:00Z",
    "generatorURL": "http://prometheus:9090/graph",
}


def body(*alerts: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """An Alertmanager v4 body with these alerts (default: one firing alert on payment)."""
    return {
        "version": "4",
        "groupKey": '{}:{alertname="ServiceHighErrorRate"}',
        "status": "firing",
        "receiver": "blast-radius",
        "externalURL": "http://alertmanager:9093",
        "alerts": list(alerts) or [ALERT],
    } | extra


def incidents(gw: Gateway, headers: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Every incident of the tenant the headers authenticate as, in full."""
    auth = gw.auth if headers is None else headers
    answer = gw.http.get("/api/v1/incidents", headers=auth)
    assert answer.status_code == 200, answer.text
    return [
        gw.http.get(f"/api/v1/incidents/{row['id']}", headers=auth).json()
        for row in answer.json()["incidents"]
    ]


@pytest.fixture
def serve(falkordb: EmbeddedFalkorDB, tmp_path: Path) -> Iterator[Callable[..., Gateway]]:
    """Start gateways with custom settings (tokens, limits); each tenant's graph gets the demo
    world. `serve(tenant, **settings)` returns a `Gateway` authenticated as no one."""
    runtimes: list[Runtime] = []

    def start(tenant: str, **extra: object) -> Gateway:
        runtime = Runtime(make_settings(falkordb, tmp_path / tenant, tenant, **extra))
        runtimes.append(runtime)
        store = runtime.open()
        for name in runtime.settings.tenants:
            import_world(store.graph(graph_name(name)), load_world(demo_world_path()))
        return Gateway(runtime, runtime.serve_http("127.0.0.1", 0), None)

    yield start
    for runtime in runtimes:
        runtime.close()


# --- credentials ------------------------------------------------------------------------------


def test_a_delivery_is_taken_off_the_event_loop_once_and_wakes_the_workers(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = gateway.runtime.store
    assert store is not None
    while store.wait_for_work(0.01):  # tokens of earlier deliveries
        pass
    handed: list[str] = []
    original = webhook.run_in_threadpool

    async def counted(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        handed.append(fn.__name__)
        return await original(fn, *args, **kwargs)

    monkeypatch.setattr(webhook, "run_in_threadpool", counted)
    beat = ALERT | {"labels": {"alertname": "Watchdog", "severity": "none"}}
    answer = gateway.http.post("/api/v1/alerts", json=body(ALERT, beat), headers=gateway.auth)
    assert answer.status_code == 200, answer.text
    assert answer.json()["accepted"] == 1 and answer.json()["heartbeats"] == 1
    # the body read, the heartbeat stamped, triage and the wake-up: one hand-off (each costs
    # both threads a wake-up), not one each
    assert handed == ["accept"]
    assert store.wait_for_work(0.05) and not store.wait_for_work(0.01)  # one incident, one token
    refused = gateway.http.post("/api/v1/alerts", json={"alerts": "no"}, headers=gateway.auth)
    assert refused.status_code == 422 and handed == ["accept", "accept"]


def test_a_large_delivery_is_triaged_with_the_collector_paused(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a body of at least PAUSE_MIN_BYTES is read and triaged with the cyclic collector off (a
    # storm's objects live to its end), a small one with it on; it is back on after either,
    # also after a refused body
    seen: list[bool] = []
    original = webhook.triage
    monkeypatch.setattr(webhook, "triage", lambda *a, **k: seen.append(gc.isenabled())
                        or original(*a, **k))  # fmt: skip
    assert gc.isenabled()
    many = [ALERT | {"labels": ALERT["labels"] | {"instance": f"pod-{n}"},
                     "fingerprint": f"{n:016x}"} for n in range(1200)]  # fmt: skip
    raw = json.dumps(body(*many)).encode()
    assert len(raw) >= webhook.PAUSE_MIN_BYTES
    headers = gateway.auth | {"Content-Type": "application/json"}
    for payload in (raw, json.dumps(body()).encode()):
        answer = gateway.http.post("/api/v1/alerts", content=payload, headers=headers)
        assert answer.status_code == 200, answer.text
        assert gc.isenabled()
    refused = raw.replace(b'"firing"', b'"burning"')
    answer = gateway.http.post("/api/v1/alerts", content=refused, headers=headers)
    assert answer.status_code == 422 and gc.isenabled()
    assert seen == [False, True]


def test_overlapping_pauses_share_one_and_a_long_one_collects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # deliveries that overlap share the pause (the collector is back once the last ends), and
    # one that finds the pause older than MAX_PAUSE_S collects first: cycles are not left
    # uncollected while large deliveries keep overlapping
    collected: list[int] = []
    original = gc.collect
    monkeypatch.setattr(gc, "collect", lambda *a: collected.append(1) or original(*a))
    monkeypatch.setattr(webhook, "MAX_PAUSE_S", 0.05)
    big = webhook.PAUSE_MIN_BYTES
    with webhook.collector_paused(big):
        assert not gc.isenabled()
        with webhook.collector_paused(big):
            assert not gc.isenabled() and not collected
        time.sleep(0.06)
        with webhook.collector_paused(big):
            assert collected == [1] and not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with webhook.collector_paused(big - 1):
        assert gc.isenabled()
    gc.disable()  # a process that turned it off itself keeps it off
    try:
        with webhook.collector_paused(big):
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("gateway", ["token"], indirect=True)
def test_bearer_token_is_accepted(gateway: Gateway) -> None:
    answer = gateway.http.post("/api/v1/alerts", json=body(), headers=gateway.auth)
    assert answer.status_code == 200, answer.text
    assert answer.json()["accepted"] == 1
    (incident,) = incidents(gateway)
    assert incident["alerts"][0]["component"] == "payment"


@pytest.mark.parametrize("gateway", ["token"], indirect=True)
def test_basic_auth_user_is_the_tenant_and_password_the_token(
    gateway: Gateway, tenant: str
) -> None:
    answer = gateway.http.post(
        "/api/v1/alerts", json=body(), auth=(tenant, "test-bearer-token-123")
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["tenant"] == tenant
    assert len(incidents(gateway)) == 1


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@pytest.mark.parametrize("gateway", ["token"], indirect=True)
def test_wrong_or_missing_credential_is_401_and_writes_nothing(
    gateway: Gateway, tenant: str
) -> None:
    wrong = [
        None,
        "",
        "Bearer",
        "Bearer wrong-token",
        "Bearer test-bearer-token-1234",
        "Bearer test-bearer-token-12",
        "bearer x",
        "Token test-bearer-token-123",
        "Basic !!!not-base64!!!",
        "Basic " + base64.b64encode(b"\xff\xfe:x").decode(),
        _basic(tenant, "nope"),
        _basic("someone-else", "test-bearer-token-123"),
        _basic("", "test-bearer-token-123"),
        "Basic " + base64.b64encode(tenant.encode()).decode(),
    ]
    for header in wrong:
        headers = {} if header is None else {"Authorization": header}
        answer = gateway.http.post("/api/v1/alerts", json=body(), headers=headers)
        assert answer.status_code == 401, header
        assert answer.headers["www-authenticate"].startswith("Bearer"), header
        assert "BLAST_WEBHOOK_TOKENS" in answer.json()["detail"]
        assert "test-bearer-token-123" not in answer.text
        assert gateway.http.get("/api/v1/incidents", headers=headers).status_code == 401
    assert incidents(gateway) == []


def test_tenant_comes_from_the_credential_never_from_the_body(
    serve: Callable[..., Gateway], tenant: str
) -> None:
    acme, beta = f"{tenant}-acme", f"{tenant}-beta"  # two tenants no other test uses
    tokens = {acme: SecretStr("a-token-0001"), beta: SecretStr("b-token-0002")}
    gw = serve(acme, webhook_tokens=tokens)
    as_acme = {"Authorization": "Bearer a-token-0001"}
    as_beta = {"Authorization": _basic(beta, "b-token-0002")}
    # The body names the other tenant everywhere a sender could; only the credential counts.
    for_beta = body(
        ALERT | {"labels": ALERT["labels"] | {"tenant": acme, "org": acme}},
        receiver=acme,
        orgId=1,
        tenant=acme,
    )
    assert gw.http.post("/api/v1/alerts", json=for_beta, headers=as_beta).json()["tenant"] == beta
    on_cart = ALERT | {"labels": {"alertname": "ContainerRestarting", "service": "cart"}}
    answer = gw.http.post("/api/v1/alerts", json=body(on_cart, receiver=beta), headers=as_acme)
    assert answer.json()["tenant"] == acme
    (acme_incident,) = incidents(gw, as_acme)
    (beta_incident,) = incidents(gw, as_beta)
    assert [x["component"] for x in acme_incident["alerts"]] == ["cart"]
    assert [x["component"] for x in beta_incident["alerts"]] == ["payment"]
    # One tenant cannot read the other's incident, even knowing its id.
    assert (
        gw.http.get(f"/api/v1/incidents/{beta_incident['id']}", headers=as_acme).status_code == 404
    )
    # The graphs are separate FalkorDB graphs: the other tenant's alert is not there at all.
    store = gw.runtime.store
    assert store is not None
    assert (
        store.graph(graph_name(acme)).one("incident_get", {"incident_id": beta_incident["id"]})
        is None
    )
    assert store.graph(graph_name(beta)).one("incident_get", {"incident_id": beta_incident["id"]})


# --- body size --------------------------------------------------------------------------------


LIMIT = 4096


def oversized() -> bytes:
    """A valid body just over `LIMIT` bytes (a long annotation)."""
    alert = ALERT | {"annotations": {"description": "x" * LIMIT}}
    raw = json.dumps(body(alert)).encode()
    assert len(raw) > LIMIT
    return raw


def test_body_over_the_limit_with_content_length_is_413(
    serve: Callable[..., Gateway], tenant: str
) -> None:
    gw = serve(tenant, max_body_bytes=LIMIT)
    raw = oversized()
    answer = gw.http.post("/api/v1/alerts", content=raw)
    assert answer.status_code == 413
    assert f"limit of {LIMIT} bytes" in answer.json()["detail"]
    assert incidents(gw) == []
    # a body under the limit is accepted
    small = json.dumps(body()).encode()
    assert gw.http.post("/api/v1/alerts", content=small).status_code == 200


def test_chunked_body_over_the_limit_is_413(serve: Callable[..., Gateway], tenant: str) -> None:
    gw = serve(tenant, max_body_bytes=LIMIT)
    raw = oversized()

    def chunks() -> Iterator[bytes]:
        for start in range(0, len(raw), 512):
            yield raw[start : start + 512]

    request = gw.http.build_request("POST", "/api/v1/alerts", content=chunks())
    assert request.headers.get("transfer-encoding") == "chunked"
    assert "content-length" not in request.headers
    answer = gw.http.send(request)
    assert answer.status_code == 413
    assert f"limit of {LIMIT} bytes" in answer.json()["detail"]
    assert incidents(gw) == []


# --- bad bodies -------------------------------------------------------------------------------


def alert_with(**fields: str) -> bytes:
    """A one-alert body (JSON bytes) whose alert has these fields replaced."""
    return json.dumps(body(ALERT | fields)).encode()


#: (body, status, a phrase the reason must contain)
BAD_BODIES: list[tuple[bytes, int, str]] = [
    (b"", 400, "not JSON"),
    (b"{not json", 400, "not JSON"),
    (b"\xff\xfe{}", 400, "not UTF-8"),
    # Python's own limits were 500s: RecursionError from 961 levels, ValueError over 4300
    # digits (even in a field nobody reads)
    (b"[" * 961 + b"]" * 961, 400, "nested deeper than 64"),
    (b"[" * 100_000, 400, "nested deeper than 64"),
    (b'{"alerts": [], "x": ' + b"9" * 4301 + b"}", 400, "more than 20 digits"),
    (b'{"alerts": [], "x": NaN}', 400, "NaN"),
    (b"[]", 422, "JSON object"),
    (b'"alerts"', 422, "JSON object"),
    (b"{}", 422, "alerts"),
    (b'{"alerts": {}}', 422, "alerts"),
    (b'{"alerts": [{"status": "pending", "startsAt": "2026-01-01T00:00:00Z"}]}', 422, "status"),
    (b'{"alerts": [{"status": "firing", "startsAt": "yesterday"}]}', 422, "startsAt"),
    (b'{"alerts": [{"status": "firing", "startsAt": "2026-01-01T00:00:00"}]}', 422, "offset"),
    (
        b'{"alerts": [{"status": "firing", "startsAt": "0001-01-01T00:00:00Z", '
        b'"labels": {"alertname": "X"}}]}',
        422,
        "startsAt",
    ),
    (b'{"alerts": [{"status": "firing", "startsAt": "2026-01-01T00:00:00Z"}]}', 422, "no labels"),
    (b'{"alerts": [{"status": "firing"}]}', 422, "startsAt"),
    # The alert key (fingerprint@startsAt) is a unique property; FalkorDB 4.16.3 crashed (the
    # whole server, every tenant) on a unique value with surrounding whitespace, \x01, or over
    # 4096 bytes. Such fingerprints and times are refused with the reason.
    (alert_with(fingerprint=" 0123abcd"), 422, "fingerprint"),
    (alert_with(fingerprint="ab\x01cd"), 422, "fingerprint"),
    (alert_with(fingerprint="ab\tcd"), 422, "fingerprint"),
    (alert_with(fingerprint="f" * 129), 422, "fingerprint"),
    (alert_with(startsAt="2026-01-01T00:00:00." + "0" * 5000 + "Z"), 422, "longer than 64"),
    (  # after year 9999 in UTC: was a 500 (OverflowError)
        b'{"alerts": [{"status": "firing", "startsAt": "9999-12-31T23:59:59-01:00"}]}',
        422,
        "out of range",
    ),
    (
        b'{"alerts": [{"status": "firing", "startsAt": "2026-01-01T00:00:00Z", '
        b'"labels": {"a": 1}}]}',
        422,
        "labels",
    ),
]


@pytest.mark.parametrize("gateway", ["open"], indirect=True)
def test_bad_bodies_get_a_4xx_with_the_reason(gateway: Gateway) -> None:
    for raw, status, reason in BAD_BODIES:
        answer = gateway.http.post("/api/v1/alerts", content=raw, headers=gateway.auth)
        assert answer.status_code == status, (raw, answer.text)
        assert reason in answer.json()["detail"], raw
    assert incidents(gateway) == []


@pytest.mark.parametrize("gateway", ["token"], indirect=True)
def test_legacy_grafana_body_is_422_with_the_explanation(gateway: Gateway) -> None:
    case = json.loads((FIXTURES / "alertmanager/cases/09-grafana-unified-payload.json").read_text())
    legacy = case["requests"][1]["body"]
    assert "ruleName" in legacy and "alerts" not in legacy
    answer = gateway.http.post("/api/v1/alerts", json=legacy, headers=gateway.auth)
    assert answer.status_code == 422
    detail = answer.json()["detail"]
    assert "legacy Grafana" in detail and "unified alerting" in detail
    assert incidents(gateway) == []


@pytest.mark.parametrize("gateway", ["token"], indirect=True)
def test_grafana_unified_body_is_detected(gateway: Gateway) -> None:
    case = json.loads((FIXTURES / "alertmanager/cases/09-grafana-unified-payload.json").read_text())
    grafana = case["requests"][0]["body"]
    answer = gateway.http.post("/api/v1/alerts", json=grafana, headers=gateway.auth)
    assert answer.status_code == 200, answer.text
    (incident,) = incidents(gateway)
    (alert,) = incident["alerts"]
    assert alert["source"] == "grafana"
    assert alert["key"] == "c6eadffa33fcdf37@2026-03-02T09:51:03.157076+01:00"
    assert alert["starts_at_ms"] == 1772441463157
    # and an Alertmanager body is not taken for Grafana's
    gateway.http.post("/api/v1/alerts", json=body(), headers=gateway.auth).raise_for_status()
    sources = {a["alertname"]: a["source"] for i in incidents(gateway) for a in i["alerts"]}
    assert sources == {"High memory usage": "grafana", "ServiceHighErrorRate": "alertmanager"}


@pytest.mark.parametrize("gateway", ["open"], indirect=True)
def test_truncated_alerts_are_reported(gateway: Gateway) -> None:
    """A real capture with `max_alerts: 2` (truncatedAlerts 2): the answer says how many
    Alertmanager left out, and the two it sent are in the graph."""
    capture = json.loads(
        (FIXTURES / "alertmanager/captured/05-max-alerts-2-truncatedAlerts-2.json").read_text()
    )
    answer = gateway.http.post(
        "/api/v1/alerts", content=capture["body_raw"].encode(), headers=gateway.auth
    )
    assert answer.status_code == 200
    assert answer.json()["truncated"] == 2
    assert answer.json()["accepted"] == len(capture["body"]["alerts"]) == 2


@pytest.mark.parametrize("gateway", ["open"], indirect=True)
def test_a_firing_alert_without_labels_pages_nobody(gateway: Gateway) -> None:
    """A new user's trial: `{"status": "firing", "startsAt": …}` with no labels opened an
    incident "alert without alertname (fingerprint cbf29ce484222325)" and paged the default
    team. It is a 422 naming the alert, and the body's other alert is not taken either (one
    body, one answer, as for any bad alert: the sender resends it whole once fixed); the same
    alert resolved is taken (it may end one taken before, and opens nothing)."""
    bare = {"status": "firing", "startsAt": STARTS}
    answer = gateway.http.post("/api/v1/alerts", json=body(ALERT, bare))
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"] == (
        "not an Alertmanager/Grafana webhook body: alerts.1: Value error, a firing alert with "
        "no labels at all (no alertname)"
    )
    assert incidents(gateway) == []
    resolved = gateway.http.post("/api/v1/alerts", json=body(bare | {"status": "resolved"}))
    assert resolved.status_code == 200, resolved.text
    assert (resolved.json()["accepted"], resolved.json()["opened"]) == (1, [])
    assert resolved.json()["unfired"] == [f"cbf29ce484222325@{STARTS}"]
    assert incidents(gateway) == []


@pytest.mark.parametrize("gateway", ["open"], indirect=True)
def test_unmatched_alerts_are_reported_and_kept(gateway: Gateway) -> None:
    stray = ALERT | {"labels": {"alertname": "DiskFull", "service": "no-such-service"}}
    answer = gateway.http.post("/api/v1/alerts", json=body(ALERT, stray))
    assert answer.status_code == 200, answer.text
    report = answer.json()
    assert report["accepted"] == 2
    (key,) = report["unmatched"]
    assert key.endswith(f"@{STARTS}")
    alerts = {a["key"]: a for i in incidents(gateway) for a in i["alerts"]}
    assert len(alerts) == 2
    assert alerts[key]["component"] is None
    assert alerts[key]["labels"] == {"alertname": "DiskFull", "service": "no-such-service"}


@pytest.mark.parametrize("gateway", ["open"], indirect=True)
@pytest.mark.parametrize(
    ("text", "in_json", "as_text"),
    [
        # FalkorDB's query parser stopped at a NUL: was a 500. Labels are stored as JSON
        # (NUL escaped, kept); plain string properties get U+FFFD.
        ("nul\x00byte", "nul\x00byte", "nul\ufffdbyte"),
        # not encodable as UTF-8: was a 500
        ("lone \ud800 surrogate", "lone \ufffd surrogate", "lone \ufffd surrogate"),
        # str.splitlines() split the outbox's JSON lines here, so find() missed the page
        ("line\u2028separator\u2029", "line\u2028separator\u2029", "line\u2028separator\u2029"),
        (
            "quote\" back\\slash ' <b>&amp;",
            "quote\" back\\slash ' <b>&amp;",
            "quote\" back\\slash ' <b>&amp;",
        ),
    ],
)
def test_hostile_text_is_kept_paged_once_and_found_again(
    gateway: Gateway, text: str, in_json: str, as_text: str
) -> None:
    alert = ALERT | {
        "labels": ALERT["labels"] | {"alertname": text, "detail": text},
        "annotations": {"summary": text, text: text},
        "generatorURL": text,
    }
    raw = json.dumps(body(alert, groupKey=text, receiver=text)).encode()  # \uXXXX escapes
    answer = gateway.http.post("/api/v1/alerts", content=raw)
    assert answer.status_code == 200, answer.text
    gateway.drain()
    (incident,) = incidents(gateway)
    (got,) = incident["alerts"]
    assert got["labels"]["detail"] == in_json
    assert got["annotations"] == {"summary": in_json, in_json: in_json}
    assert incident["title"] == got["alertname"] == as_text
    assert incident["root_cause"] == "payment"
    sent = gateway.outbox
    assert sorted(e["kind"] for e in sent) == ["notification", "ticket"]
    intent = f"incident:{incident['id']}:initial-notification"
    assert gateway.runtime.outbox.find(intent) == f"outbox:{intent}"
    # a NUL in a path is just an unknown id
    assert gateway.http.get("/api/v1/incidents/inc-%00").status_code == 404


@pytest.mark.parametrize("gateway", ["open"], indirect=True)
def test_whitespace_around_times_is_not_part_of_the_alert_key(gateway: Gateway) -> None:
    padded = ALERT | {"startsAt": f" {STARTS}\n", "fingerprint": "0123456789abcdef"}
    answer = gateway.http.post("/api/v1/alerts", json=body(padded))
    assert answer.status_code == 200, answer.text
    resolved = padded | {"status": "resolved", "startsAt": STARTS, "endsAt": "2026-11-30T03:00:00Z"}
    assert gateway.http.post("/api/v1/alerts", json=body(resolved)).json()["resolved"]
    (incident,) = incidents(gateway)
    (alert,) = incident["alerts"]
    assert alert["key"] == f"0123456789abcdef@{STARTS}"
    assert incident["status"] == "resolved"
    assert gateway.http.get("/health/ready").status_code == 200  # the database is still up


@pytest.mark.parametrize("gateway", ["token"], indirect=True)
def test_a_resolve_with_a_zero_end_ends_when_it_was_received(gateway: Gateway) -> None:
    """Alertmanager and Grafana may resolve an alert with Go's zero time as `endsAt`: it ends
    when the gateway received the resolve, and the thread's "Cleared" line says that time."""
    checkout = ALERT | {"labels": ALERT["labels"] | {"service": "checkout"}}
    answer = gateway.http.post("/api/v1/alerts", json=body(ALERT, checkout), headers=gateway.auth)
    (incident_id,) = answer.json()["incidents"]
    gateway.drain()
    before = int(time.time() * 1000)
    resolved = ALERT | {"status": "resolved"}  # endsAt stays "0001-01-01T00:00:00Z"
    answer = gateway.http.post("/api/v1/alerts", json=body(resolved), headers=gateway.auth)
    assert answer.status_code == 200 and answer.json()["resolved"] == []  # checkout fires on
    after = int(time.time() * 1000)
    gateway.drain()
    (incident,) = incidents(gateway)
    assert incident["status"] == "open"
    ends = {a["component"]: a["ends_at_ms"] for a in incident["alerts"]}
    assert ends["checkout"] is None and before <= ends["payment"] <= after
    cleared = f"incident:{incident_id}:cleared:"
    (note,) = [e for e in gateway.outbox if e["intent_id"].startswith(cleared)]
    assert f"on payment at {fmt_ms(ends['payment'])}." in note["text"]


# --- any JSON ---------------------------------------------------------------------------------

#: Text including lone surrogates (JSON `\\ud800`), NUL and other control characters.
ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=12)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(ANY_TEXT, inner, max_size=3),
    max_leaves=12,
)
OFFSETS = st.timedeltas(min_value=-timedelta(hours=23, minutes=59), max_value=timedelta(hours=23))
#: RFC 3339 times a sender could mean, from year 1 to 9999 with any offset, and near misses.
#: (The third kind of body below also gets any text and any JSON for its times.)
HEX = st.text("0123456789abcdef", min_size=16, max_size=16)
TIMES = st.one_of(
    st.builds(
        lambda moment, offset: moment.replace(tzinfo=timezone(offset)).isoformat(),
        st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59)),
        OFFSETS,
    ),
    st.sampled_from(
        [
            "0001-01-01T00:00:00Z",
            "9999-12-31T23:59:59-01:00",
            "0001-01-01T00:30:00+01:00",
            "2026-11-30T02:53:51.603228863Z",
            "2026-11-30T02:53Z",
            "2026-11-30",
            "2026-W48-1T00:00:00Z",
        ]
    ),
)
TEXT_MAP = st.dictionaries(
    st.sampled_from(["alertname", "service", "severity", "pod", "job", "app"]) | ANY_TEXT,
    st.sampled_from(["payment", "frontend", "cart-5d8f9c7b6d-x2x9q", "critical"]) | ANY_TEXT,
    max_size=4,
)


def alert_shape(text: Any, mapping: Any, time: Any) -> Any:
    """An element of `alerts[]` whose fields come from the given strategies (status and
    fingerprint mostly well-formed, so that most such alerts reach the graph)."""
    return st.fixed_dictionaries(
        {"status": st.sampled_from(["firing", "resolved"]) | text, "labels": mapping,
         "startsAt": time},
        optional={"endsAt": time, "annotations": mapping, "fingerprint": HEX | text,
                  "generatorURL": text,
                  "values": st.dictionaries(ANY_TEXT, st.floats() | st.none())},
    )  # fmt: skip


def body_shape(alert: Any, text: Any, number: Any) -> Any:
    """A whole body whose alerts come from `alert` and other fields from `text`/`number`."""
    return st.fixed_dictionaries(
        {"alerts": st.lists(alert, max_size=3)},
        optional={"version": st.sampled_from(["4", "1"]) | text, "orgId": number,
                  "groupKey": text, "externalURL": text, "truncatedAlerts": number,
                  "receiver": text},
    )  # fmt: skip


#: Any JSON at all; well-typed bodies with hostile strings, times and labels; bodies with any
#: JSON in any field.
BODIES = st.one_of(
    JSON,
    body_shape(alert_shape(st.nothing(), TEXT_MAP, TIMES), ANY_TEXT, st.integers()),
    body_shape(alert_shape(JSON, TEXT_MAP | JSON, TIMES | ANY_TEXT | JSON), JSON, JSON),
)


@pytest.mark.parametrize("gateway", ["token"], indirect=True)
@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(payload=BODIES)
def test_no_json_body_gets_a_5xx(gateway: Gateway, payload: Any) -> None:
    raw = json.dumps(payload).encode()  # ASCII: lone surrogates travel as \\udXXX escapes
    answer = gateway.http.post(
        "/api/v1/alerts",
        content=raw,
        headers=gateway.auth | {"Content-Type": "application/json"},
    )
    assert answer.status_code < 500, answer.text
    if answer.status_code != 200:
        assert answer.json()["detail"]


# --- configuration and availability ------------------------------------------------------------


def test_non_loopback_without_tokens_is_refused(
    falkordb: EmbeddedFalkorDB, tmp_path: Path, tenant: str
) -> None:
    with Runtime(make_settings(falkordb, tmp_path, tenant)) as runtime:
        for host in ("0.0.0.0", "::", "192.0.2.10"):  # refused before binding
            with pytest.raises(ConfigError, match="BLAST_WEBHOOK_TOKENS"):
                runtime.serve_http(host, 0)


def test_database_down_is_503_and_ready_says_so(tmp_path: Path) -> None:
    db = EmbeddedFalkorDB(tmp_path / "db")
    db.start()
    try:
        runtime = Runtime(make_settings(db, tmp_path / "data", "downtime"))
        try:
            runtime.open()
            url = f"http://127.0.0.1:{runtime.serve_http('127.0.0.1', 0)}"
            with httpx.Client(base_url=url, timeout=30) as http:
                assert http.get("/health/ready").status_code == 200
                assert http.post("/api/v1/alerts", json=body()).status_code == 200
                db.stop()
                answer = http.post("/api/v1/alerts", json=body())
                assert answer.status_code == 503
                assert answer.headers["retry-after"] == "5"
                assert "retry" in answer.json()["detail"]
                assert http.get("/api/v1/incidents").status_code == 503
                assert http.get("/health/ready").status_code == 503
                assert http.get("/health/live").status_code == 200
        finally:
            runtime.close()
    finally:
        db.stop()


def grafana_contact_point_test() -> dict[str, Any]:
    """What Grafana posts when a person presses "Test" on a webhook contact point (grafana/
    alerting `newTestAlert`: alertname TestAlert, instance Grafana, summary "Notification
    test", `values` null, no resolve ever sent)."""
    case = json.loads((FIXTURES / "alertmanager/cases/09-grafana-unified-payload.json").read_text())
    grafana = case["requests"][0]["body"]
    (alert,) = grafana["alerts"]
    alert.update({
        "labels": {"alertname": "TestAlert", "instance": "Grafana"},
        "annotations": {"summary": "Notification test",
                        "__value_string__": "[ metric='foo' labels={instance=bar} value=10 ]"},
        "values": None, "fingerprint": "57c6d9296de2ad39", "silenceURL": "",
        "startsAt": datetime.now(UTC).isoformat(),
    })  # fmt: skip
    grafana["commonLabels"] = alert["labels"]
    grafana["groupLabels"] = {}
    return dict(grafana)


@pytest.mark.parametrize("gateway", ["token"], indirect=True)
def test_grafana_s_contact_point_test_is_counted_and_goes_the_whole_path(gateway: Gateway) -> None:
    """ "Test" on a Grafana contact point: the answer counts it as a test, and it is triaged as
    any alert (the bug-report case 10 expects its alert kept with its link), so the person who
    pressed it sees the incident and the page; a real alert named TestAlert is no test."""
    answer = gateway.http.post(
        "/api/v1/alerts", json=grafana_contact_point_test(), headers=gateway.auth
    )
    assert answer.status_code == 200, answer.text
    said = answer.json()
    assert (said["tests"], said["accepted"], len(said["opened"])) == (1, 1, 1)
    gateway.drain()
    assert sorted(e["kind"] for e in gateway.outbox) == ["notification", "ticket"]
    # the page and ticket say first that it is the test, not an inconclusive incident (a new
    # user's trial: "[UNKNOWN] TestAlert … inconclusive; no known component" woke the on-call)
    for sent in gateway.outbox:
        summary = str(sent["notice"]["summary"])  # type: ignore[index]
        assert summary.startswith("This is Grafana's contact-point test notification")
        assert "Resolve this incident by hand" in str(sent["text"])
    # nor does it read as an inconclusive cause to hunt for (a later trial's ticket said
    # "**Root cause:** inconclusive", titled "… — root cause unknown")
    (ticket,) = [e for e in gateway.outbox if e["kind"] == "ticket"]
    assert ticket["title"] == "[unknown] TestAlert — a test notification, nothing is broken"
    assert "**Root cause:** none: a test notification, nothing is broken\n" in str(ticket["text"])
    (tested,) = said["incidents"]
    shown = gateway.http.get(f"/api/v1/incidents/{tested}", headers=gateway.auth).json()
    assert shown["contact_point_test"] is True  # the web page and the CLI say so too
    real = grafana_contact_point_test()
    real["alerts"][0]["labels"] = {"alertname": "TestAlert", "instance": "checkout-1"}
    answer = gateway.http.post("/api/v1/alerts", json=real, headers=gateway.auth)
    assert answer.json()["tests"] == 0 and answer.json()["accepted"] == 1
    (incident,) = answer.json()["incidents"]  # the test's, by its Grafana group
    gateway.drain()
    edit = [e for e in gateway.outbox if e["incident_id"] == incident][-1]
    assert edit["kind"] == "update" and "contact-point test" not in str(edit["text"])
    shown = gateway.http.get(f"/api/v1/incidents/{incident}", headers=gateway.auth).json()
    assert (incident, shown["contact_point_test"]) == (tested, False)  # a real alert in it
