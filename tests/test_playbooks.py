"""Memory cannot stop paging (checks side): playbook checks are a typed
union (422 with the reason for a bad one), a check that errors when it runs makes its playbook
not applicable and never fails the investigation, and a person can retire a playbook."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from adapters.falkordb import EmbeddedFalkorDB, free_port, graph_name
from gateway.cli.demo import rfc3339
from gateway.cli.demo_evidence import PrometheusServer
from gateway.cli.incident_text import incident_report
from gateway.ops.runtime import Runtime
from gateway.world import demo_world_path, import_world, load_world
from tests.conftest import Gateway, make_settings


@pytest.fixture
def shop(falkordb: EmbeddedFalkorDB, tmp_path: Path) -> Iterator[Callable[[str | None], Gateway]]:
    """A gateway on the demo world (outbox) with `PROMETHEUS_URL` as given."""
    opened: list[Gateway] = []

    def start(prometheus_url: str | None) -> Gateway:
        tenant = f"p{uuid.uuid4().hex[:10]}"
        extra = {"prometheus_url": prometheus_url} if prometheus_url else {}
        runtime = Runtime(make_settings(falkordb, tmp_path / tenant, tenant, **extra))
        store = runtime.open()
        import_world(store.graph(graph_name(tenant)), load_world(demo_world_path()))
        gw = Gateway(runtime, runtime.serve_http("127.0.0.1", 0), None)
        gw.graph = store.graph(graph_name(tenant))  # type: ignore[attr-defined]
        opened.append(gw)
        return gw

    yield start
    for gw in opened:
        gw.http.close()
        gw.runtime.close()


def fire(gw: Gateway, service: str, at: datetime) -> str:
    """One critical ServiceHighErrorRate on `service` at `at`; run the agents; the incident id."""
    body = {"alerts": [{
        "status": "firing", "labels": {"alertname": "ServiceHighErrorRate", "service": service,
                                       "severity": "critical"},
        "annotations": {"summary": f"errors on {service}"}, "startsAt": rfc3339(at),
        "endsAt": "0001-01-01T00:00:00Z",
    }]}  # fmt: skip
    answer = gw.http.post("/api/v1/alerts", json=body)
    assert answer.status_code == 200, answer.text
    (incident,) = answer.json()["incidents"]
    gw.drain()
    return str(incident)


def playbook(component: str, checks: list[dict]) -> dict:
    return {"id": f"pb-{uuid.uuid4().hex[:6]}", "title": f"remembered on {component}",
            "component": component, "checks": checks}  # fmt: skip


@pytest.mark.parametrize(
    ("check", "missing"),
    [
        ({"type": "alert_firing"}, "alertname"),
        ({"type": "alert_kind"}, "kind"),
        ({"type": "prometheus", "query": "up"}, "threshold"),
        ({"type": "calls_failing"}, "threshold"),
    ],
)
def test_a_check_missing_a_field_is_refused_with_the_reason(shop, check, missing) -> None:
    gw = shop(None)
    answer = gw.http.post("/api/v1/playbooks", json=playbook("payment", [check]))
    assert answer.status_code == 422
    detail = answer.json()["detail"]
    assert any(missing in e["loc"] and e["msg"] == "Field required" for e in detail), detail
    assert gw.http.get("/api/v1/playbooks").json()["playbooks"] == []


def test_unknown_check_types_and_kinds_are_refused(shop) -> None:
    gw = shop(None)
    bad_type = gw.http.post("/api/v1/playbooks", json=playbook("payment", [{"type": "vibes"}]))
    assert bad_type.status_code == 422 and "vibes" in bad_type.text
    bad_kind = {"type": "alert_kind", "kind": "gremlins"}
    answer = gw.http.post("/api/v1/playbooks", json=playbook("payment", [bad_kind]))
    assert answer.status_code == 422 and "unknown failure kind 'gremlins'" in answer.text


def test_a_check_naming_a_component_the_world_does_not_know_is_refused(shop) -> None:
    gw = shop(None)
    listed = {"type": "alert_any", "scope": "components", "components": ["cart", "nosuch"]}
    answer = gw.http.post("/api/v1/playbooks", json=playbook("payment", [listed]))
    assert answer.status_code == 422
    assert answer.json()["detail"] == (
        "the checks name components this tenant's world does not know: 'nosuch' (a check on "
        "them could never hold)"
    )
    signature = {"type": "signature", "alerts": [
        {"component": "cart", "kind": "errors", "path": ["cart", "valkey-kart"]}]}  # fmt: skip
    typo = gw.http.post("/api/v1/playbooks", json=playbook("valkey-cart", [signature]))
    assert typo.status_code == 422 and "'valkey-kart'" in typo.json()["detail"]
    # the names the world knows pass
    listed["components"] = ["cart", "frontend"]
    assert gw.http.post("/api/v1/playbooks", json=playbook("payment", [listed])).status_code == 201


def used_checks(gw: Gateway, incident: str) -> list[dict]:
    rows = gw.graph.rows("incident_decision", {"incident_id": incident})  # type: ignore[attr-defined]
    assert len(rows) == 1
    assert rows[0]["applicable"] is False and rows[0]["steered"] is False
    checks: list[dict] = json.loads(rows[0]["checks_json"])
    return checks


def paged(gw: Gateway, incident: str) -> bool:
    return any(e["incident_id"] == incident and e["kind"] == "notification" for e in gw.outbox)


def test_a_bad_promql_check_errors_the_playbook_is_not_applicable_and_paging_goes_on(
    shop, tmp_path
) -> None:
    server = PrometheusServer(tmp_path / "prometheus", [], int(time.time()))
    try:
        gw = shop(server.url)
        broken = {"type": "prometheus", "query": "rate(up[5m]", "threshold": 0}
        assert gw.http.post("/api/v1/playbooks", json=playbook("payment", [broken])).is_success
        incident = fire(gw, "payment", datetime.now(UTC) - timedelta(minutes=5))
    finally:
        server.stop()
    gate, result = used_checks(gw, incident)  # payment explains its own alert: the gate holds
    assert (gate["check"], gate["held"]) == ({"type": "explains_alerting"}, True)
    assert result["status"] == "error" and not result["held"]
    assert "prometheus query failed (400)" in result["detail"]
    found = gw.http.get(f"/api/v1/incidents/{incident}").json()
    assert found["root_cause"] == "payment" and found["finding"]["planner"] == "rules"
    assert paged(gw, incident)


def test_prometheus_down_or_a_stored_invalid_check_never_fails_the_investigation(shop) -> None:
    gw = shop(f"http://127.0.0.1:{free_port()}")
    evidence = {"type": "calls_failing", "threshold": 0.1}
    assert gw.http.post("/api/v1/playbooks", json=playbook("payment", [evidence])).is_success
    first = fire(gw, "payment", datetime.now(UTC) - timedelta(minutes=5))
    _, result = used_checks(gw, first)
    assert result["status"] == "error" and "prometheus unreachable" in result["detail"]
    assert paged(gw, first)
    # A playbook stored before checks were typed, with a check missing its field.
    gw.graph.one("plant_playbook", {  # type: ignore[attr-defined]
        "id": "old", "component": "email", "title": "old", "failure_kind": None,
        "checks_json": json.dumps([{"type": "alert_firing"}]), "author": None,
        "remediation_json": None, "remediation_type": None, "max_playbooks": 200,
    })  # fmt: skip
    second = fire(gw, "email", datetime.now(UTC) - timedelta(hours=3))
    _, result = used_checks(gw, second)
    assert result["status"] == "error" and "alertname" in result["detail"]
    assert gw.http.get(f"/api/v1/incidents/{second}").json()["root_cause"] == "email"
    assert paged(gw, second)


def test_a_retired_playbook_is_kept_and_never_recalled_again(shop) -> None:
    gw = shop(None)
    pb = playbook("payment", [{"type": "alert_kind", "kind": "errors"}])
    assert gw.http.post("/api/v1/playbooks", json=pb).is_success
    steered = fire(gw, "payment", datetime.now(UTC) - timedelta(hours=6))
    assert gw.http.get(f"/api/v1/incidents/{steered}").json()["finding"]["planner"] == "memory"

    assert gw.http.request("DELETE", f"/api/v1/playbooks/{pb['id']}", json={}).status_code == 422
    assert (
        gw.http.request(
            "DELETE", f"/api/v1/playbooks/{pb['id']}", json={"reason": "  "}
        ).status_code
        == 422
    )
    missing = gw.http.request("DELETE", "/api/v1/playbooks/nope", json={"reason": "x"})
    assert missing.status_code == 404 and "nope" in missing.json()["detail"]
    retired = gw.http.request(
        "DELETE", f"/api/v1/playbooks/{pb['id']}",
        json={"reason": "payment was rewritten; this no longer applies", "by": "Al Smith"},
    )  # fmt: skip
    assert retired.status_code == 200, retired.text
    assert retired.json()["status"] == "retired" and retired.json()["was"] == "active"
    (listed,) = gw.http.get("/api/v1/playbooks").json()["playbooks"]
    assert listed["status"] == "retired"
    assert listed["retired_reason"] == "payment was rewritten; this no longer applies"

    later = fire(gw, "payment", datetime.now(UTC) - timedelta(hours=1))
    assert gw.graph.rows("incident_decision", {"incident_id": later}) == []  # type: ignore[attr-defined]
    found = gw.http.get(f"/api/v1/incidents/{later}").json()
    assert found["finding"]["planner"] == "rules" and found["root_cause"] == "payment"
    again = gw.http.request("DELETE", f"/api/v1/playbooks/{pb['id']}", json={"reason": "again"})
    assert again.json()["reason"] == "payment was rewritten; this no longer applies"


def test_a_playbook_of_context_checks_only_cannot_steer(shop) -> None:
    # "nothing changed, and some alerting component has errors" holds for any error incident:
    # it cannot single out the component it is pinned to.
    gw = shop(None)
    context = [{"type": "no_recent_change"},
               {"type": "alert_kind", "kind": "errors", "scope": "alerting"}]  # fmt: skip
    posted = gw.http.post("/api/v1/playbooks", json=playbook("postgres", context))
    assert posted.status_code == 201, posted.text
    # said at once: it is stored, but can never steer (nor propose its remediation)
    assert posted.json()["warning"].startswith(
        "it can never steer an investigation: none of its checks looks at postgres itself"
    )
    incident = fire(gw, "product-catalog", datetime.now(UTC) - timedelta(hours=2))
    checks = used_checks(gw, incident)
    assert [c["held"] for c in checks] == [True, True, True]  # the gate, then both checks
    found = gw.http.get(f"/api/v1/incidents/{incident}").json()
    assert found["finding"]["planner"] == "rules"
    # every check held: not "not applicable", but held and why it did not steer
    (use,) = found["memory"]
    assert use["outcome"] == (
        "held, did not steer: no check looks at postgres itself (checks of the context, such "
        "as alerts on other components, cannot single it out)"
    )
    assert use["outcome"] in incident_report(found)
    assert use["outcome"] in gw.http.get(f"/ui/incidents/{incident}").text
    # a check on the component itself: no warning
    own = playbook("postgres", [{"type": "alert_any"}])
    assert "warning" not in gw.http.post("/api/v1/playbooks", json=own).json()
