"""Graph memory (issue #6): playbooks learned from confirmed diagnoses, recalled by the walk,
checked against live evidence before they are trusted, and trusted only through verdicts."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from adapters.falkordb import EmbeddedFalkorDB
from agents.failure_kinds import classify, kind_in
from agents.preferences import approve, parse_preference, propose
from agents.verdicts import Verdict, record
from gateway.demo import rfc3339
from gateway.payloads import label_fingerprint
from gateway.runtime import Runtime
from gateway.settings import graph_name
from gateway.topology import import_world, load_world
from tests.conftest import Gateway, make_settings

WORLD = Path(__file__).parent / "data" / "two-postgres-world.yaml"
WEEK1 = datetime(2026, 11, 2, 3, 12, tzinfo=UTC)


@pytest.fixture
def shop(falkordb: EmbeddedFalkorDB, tmp_path: Path) -> Iterator[Gateway]:
    """A gateway on the two-postgres world (no tokens, loopback)."""
    tenant = f"m{uuid.uuid4().hex[:10]}"
    runtime = Runtime(make_settings(falkordb, tmp_path, tenant))
    store = runtime.open()
    import_world(store.graph(graph_name(tenant)), load_world(WORLD))
    gw = Gateway(runtime, runtime.serve_http("127.0.0.1", 0), None)
    gw.graph = store.graph(graph_name(tenant))  # type: ignore[attr-defined]
    yield gw
    gw.http.close()
    runtime.close()


def fire(gw: Gateway, at: datetime, alerts: list[tuple[str, str, str]]) -> str:
    """Post (alertname, service, summary) alerts starting at `at`; run the agents; return the
    incident id (all alerts must land in one incident)."""
    body = {
        "version": "4", "groupKey": "{}:{}", "status": "firing", "receiver": "blast-radius",
        "alerts": [
            {"status": "firing", "labels": (labels := {"alertname": name, "service": svc,
                                                       "severity": "critical"}),
             "annotations": {"summary": summary}, "startsAt": rfc3339(at + timedelta(seconds=i)),
             "endsAt": "0001-01-01T00:00:00Z", "generatorURL": "",
             "fingerprint": label_fingerprint(labels)}
            for i, (name, svc, summary) in enumerate(alerts)
        ],
    }  # fmt: skip
    answer = gw.http.post("/api/v1/alerts", json=body)
    assert answer.status_code == 200, answer.text
    (incident,) = answer.json()["incidents"]
    gw.drain()
    return str(incident)


def incident(gw: Gateway, incident_id: str) -> dict:
    return gw.http.get(f"/api/v1/incidents/{incident_id}").json()


def playbooks(gw: Gateway) -> dict[str, dict]:
    return {p["id"]: p for p in gw.http.get("/api/v1/playbooks").json()["playbooks"]}


def verdict(gw: Gateway, incident_id: str, what: str, cause: str | None = None) -> None:
    key = uuid.uuid4().hex
    given = Verdict(
        id=key, incident_id=incident_id, verdict=what, actual_cause=cause, by="UDEE",
        by_name="Dee Example", at=int(datetime.now(UTC).timestamp() * 1000), text=what,
        source="button", event_id=key,
    )  # fmt: skip
    record(gw.graph, given)  # type: ignore[attr-defined]
    gw.drain()


def saturation(db: str, api: str, wording: int) -> list[tuple[str, str, str]]:
    if wording == 1:
        return [("PostgresTooManyConnections", db, f"{db} at 98% of max_connections"),
                ("HighErrorRate", api, f"5xx ratio above 5% on {api}")]  # fmt: skip
    return [("PgConnectionPoolExhausted", db, "no free connection slots"),
            ("ServiceErrorRatio", api, "errors climbing")]  # fmt: skip


def test_failure_kinds_map_different_wordings_together():
    assert (
        classify("PostgresTooManyConnections")
        == classify("PgConnectionPoolExhausted")
        == "saturation"
    )
    assert kind_in("for database saturation, don't ping me on Slack") == "saturation"


def test_story_learn_transfer_trust_and_a_deploy(shop: Gateway):
    # week 1: orders-db saturates; no memory yet, the rules find it; the engineer confirms
    first = fire(shop, WEEK1, saturation("orders-db", "orders-api", 1))
    found = incident(shop, first)
    assert found["root_cause"] == "orders-db"
    assert found["finding"]["planner"] == "rules"
    verdict(shop, first, "confirmed")
    # ... and states a preference in the thread; the bot reads it back; they approve it
    said = (
        "for database saturation, don't ping me on Slack, "
        "open a ticket with the raw slow-query lines"
    )
    pref = parse_preference(said)
    assert pref is not None
    propose(shop.graph, first, "fact-1", "UDEE", "Dee Example", said, pref)  # type: ignore[attr-defined]
    shop.drain()
    (readback,) = [e for e in shop.outbox if ":readback:" in e["intent_id"]]
    assert "don't page you on Slack" in readback["text"]
    assert [b["action_id"] for b in readback["buttons"]] == [
        "approve_preference",
        "discard_preference",
    ]
    assert approve(shop.graph, "fact-1", "UDEE") is not None  # type: ignore[attr-defined]
    (learned,) = playbooks(shop).values()
    assert learned["component"] == "orders-db" and learned["failure_kind"] == "saturation"
    assert [c["type"] for c in learned["checks"]] == ["no_recent_change", "alert_kind"]
    assert learned["trust"] == pytest.approx(0.5)

    # week 2: payments-db saturates, worded differently: recalled by tech, checks hold, no planner
    second = fire(shop, WEEK1 + timedelta(days=7), saturation("payments-db", "payments-api", 2))
    found = incident(shop, second)
    assert found["root_cause"] == "payments-db"
    assert found["finding"]["planner"] == "memory"
    sent = [e for e in shop.outbox if e["incident_id"] == second]
    assert [e["kind"] for e in sent] == ["ticket"]  # no Slack page, exactly one ticket
    assert "Not paged on Slack, as Dee Example asked on" in sent[0]["text"]
    assert "the raw slow-query lines below" in sent[0]["text"]
    verdict(shop, second, "confirmed")
    assert playbooks(shop)[learned["id"]]["trust"] == pytest.approx(2 / 3)

    # week 3: same symptoms, but payments-api was deployed just before: the first check fails,
    # the playbook is not applicable, its trust does not move, and the deploy is found
    week3 = WEEK1 + timedelta(days=14)
    change = {"component": "payments-api", "kind": "deploy", "ref": "payments-api v2.4.0",
              "at": rfc3339(week3 - timedelta(minutes=10))}  # fmt: skip
    assert shop.http.post("/api/v1/changes", json=change).status_code == 201
    third = fire(shop, week3, saturation("payments-db", "payments-api", 2))
    found = incident(shop, third)
    assert found["finding"]["planner"] == "rules"
    assert found["root_cause"] == "payments-api"
    verdict(shop, third, "confirmed")
    assert playbooks(shop)[learned["id"]]["trust"] == pytest.approx(2 / 3)
    assert playbooks(shop)[learned["id"]]["helped"] == 1


def test_a_wrong_playbook_misleads_twice_retires_and_rules_take_over(shop: Gateway):
    planted = {
        "id": "wrong",
        "title": "errors on payments-api mean payments-api",
        "component": "payments-api",
        "failure_kind": "errors",
        "checks": [{"type": "alert_kind", "kind": "errors", "scope": "candidate"}],
    }
    assert shop.http.post("/api/v1/playbooks", json=planted).status_code == 201
    trusts = []
    for week in range(2):
        wrong = fire(
            shop, WEEK1 + timedelta(days=7 * week), saturation("payments-db", "payments-api", 2)
        )
        assert incident(shop, wrong)["root_cause"] == "payments-api"  # misled by memory
        verdict(shop, wrong, "rejected", cause="payments-db")
        trusts.append(playbooks(shop)["wrong"]["trust"])
    assert trusts == [pytest.approx(1 / 3), pytest.approx(1 / 4)]
    assert playbooks(shop)["wrong"]["status"] == "retired"
    right = fire(shop, WEEK1 + timedelta(days=14), saturation("payments-db", "payments-api", 2))
    found = incident(shop, right)
    assert found["root_cause"] == "payments-db"
    assert found["finding"]["planner"] == "rules"
