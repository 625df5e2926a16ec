"""The investigator: each rule of `decide` on hand-built walks, the whole demo (10 OpenTelemetry
Demo faults) end to end, and a recent deploy posted to `POST /api/v1/changes` breaking a tie."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from adapters.falkordb import EmbeddedFalkorDB
from agents.investigate.decision import Decision
from agents.investigate.investigator import (
    Candidate,
    decide,
    described,
    guessed_over,
    left_open,
    outranks,
    surge_of,
    unseparated_by_rules,
)
from agents.investigate.recall import UNTRIED_CONFIDENCE, cited, confidence
from gateway.cli.demo import rfc3339, run_demo
from tests.conftest import Gateway, make_settings

# --- decide(), rule by rule ------------------------------------------------------------------


def test_no_alerting_component_means_no_finding() -> None:
    decision = decide([], {}, [Candidate("db", [], 0)], set(), [])
    assert decision.root_cause is None
    assert decision.candidates == []
    assert decision.confidence == 0.0
    assert "no path" in decision.summary


def test_a_walk_that_reaches_nothing_is_inconclusive() -> None:
    decision = decide(["api"], {"api": ["HighErrorRate"]}, [], set(), [])
    assert decision.root_cause is None
    assert "reached no component" in decision.summary


def test_coverage_the_cause_explains_the_most_alerting_components() -> None:
    # web -> api -> db, worker -> db; web, api and worker alert; only db is reached by all three
    candidates = [
        Candidate("web", ["web"], 0),
        Candidate("api", ["api", "web"], 1),
        Candidate("worker", ["worker"], 0),
        Candidate("db", ["api", "web", "worker"], 4),
    ]
    alerting = ["web", "api", "worker"]
    decision = decide(alerting, {n: ["HighErrorRate"] for n in alerting}, candidates, set(), [])
    assert decision.root_cause == "db"
    assert decision.candidates == ["db"]
    assert decision.ruled_out["api"] == "explains 2 of 3 alerting components"
    assert decision.ruled_out["worker"] == "explains 1 of 3 alerting components"
    # silent cause, alerts only: the graph's shape, a lead (SILENT_SHAPE x full coverage)
    assert decision.confidence == 0.45
    assert "does not alert itself" in decision.summary


def test_an_alerting_candidate_beats_an_equally_covering_silent_one() -> None:
    # frontend -> checkout -> payment -> postgres, and all but postgres alert
    alerting = ["frontend", "checkout", "payment"]
    candidates = [
        Candidate("frontend", ["frontend"], 0),
        Candidate("checkout", ["checkout", "frontend"], 1),
        Candidate("payment", ["checkout", "frontend", "payment"], 3),
        Candidate("postgres", ["checkout", "frontend", "payment"], 6),
    ]
    decision = decide(alerting, {n: ["HighErrorRate"] for n in alerting}, candidates, set(), [])
    assert decision.root_cause == "payment"
    assert decision.confidence == 0.9
    assert decision.ruled_out["postgres"] == (
        "does not alert while an equally covering component does"
    )
    assert decision.ruled_out["checkout"] == "explains 2 of 3 alerting components"


def test_victim_an_alerting_candidate_that_depends_on_another_is_ruled_out() -> None:
    # edge -> api -> db, all alerting, walked with BLAST_WALK_HOPS=1: edge reaches api but not
    # db, so api and db each explain two alerting components. api calls db: api is the victim.
    alerting = ["edge", "api", "db"]
    candidates = [
        Candidate("edge", ["edge"], 0),
        Candidate("api", ["api", "edge"], 1),
        Candidate("db", ["api", "db"], 1),
    ]
    decision = decide(alerting, {}, candidates, set(), [])
    assert decision.root_cause == "db"
    assert decision.ruled_out["api"] == "alerts, but its dependency db alerts too (victim)"
    assert decision.confidence == round(2 / 3 * 0.9, 2)


def test_victim_rule_in_a_dependency_cycle_keeps_both_and_says_so() -> None:
    # api <-> auth call each other (a cycle) and both alert; auth also reads a silent db.
    # Each alerting candidate is the other's victim: this used to leave no candidate at all
    # and crash the investigation with ZeroDivisionError (the incident was never paged).
    alerting = ["api", "auth"]
    candidates = [
        Candidate("api", ["api", "auth"], 1),
        Candidate("auth", ["api", "auth"], 1),
        Candidate("db", ["api", "auth"], 3),
    ]
    decision = decide(alerting, {}, candidates, set(), [])
    assert decision.root_cause is None
    assert decision.candidates == ["api", "auth"]
    assert decision.ruled_out == {"db": "does not alert while an equally covering component does"}
    # a recent change on one of them still singles it out
    changed = decide(alerting, {}, candidates, {"auth"}, [])
    assert changed.root_cause == "auth"


def test_silent_cause_the_nearest_silent_candidate_remains() -> None:
    # two alerting siblings share a cache (1 hop each) and, behind it, a database (2 hops each)
    alerting = ["reader", "writer"]
    candidates = [
        Candidate("reader", ["reader"], 0),
        Candidate("writer", ["writer"], 0),
        Candidate("cache", ["reader", "writer"], 2),
        Candidate("db", ["reader", "writer"], 4),
    ]
    decision = decide(alerting, {}, candidates, set(), [])
    assert decision.root_cause == "cache"
    assert (
        decision.ruled_out["db"] == "silent and further from the alerting components than another"
    )
    assert decision.ruled_out["reader"] == "explains 1 of 2 alerting components"


def test_equally_good_candidates_are_inconclusive_and_named() -> None:
    alerting = ["frontend", "accounting"]
    candidates = [
        Candidate("frontend", ["frontend"], 0),
        Candidate("accounting", ["accounting"], 0),
        Candidate("postgres", ["accounting", "frontend"], 4),
        Candidate("orders", ["accounting", "frontend"], 4),
    ]
    decision = decide(alerting, {}, candidates, set(), [])
    assert decision.root_cause is None
    assert sorted(decision.candidates) == ["orders", "postgres"]
    assert decision.confidence == 0.25  # coverage 1.0 x 0.5 / 2 candidates
    assert decision.summary.startswith("Inconclusive: ")
    assert "cannot separate them" in decision.summary


def test_recent_change_breaks_a_tie_but_not_when_both_changed() -> None:
    alerting = ["frontend", "accounting"]
    candidates = [
        Candidate("postgres", ["accounting", "frontend"], 4),
        Candidate("orders", ["accounting", "frontend"], 4),
    ]
    decision = decide(alerting, {}, candidates, {"postgres"}, [])
    assert decision.root_cause == "postgres"
    assert decision.ruled_out["orders"] == "no recent change, while postgres changed"
    both = decide(alerting, {}, candidates, {"postgres", "orders"}, [])
    assert both.root_cause is None
    assert sorted(both.candidates) == ["orders", "postgres"]
    # a change on a component that is not a remaining candidate changes nothing
    elsewhere = decide(alerting, {}, candidates, {"frontend"}, [])
    assert elsewhere.root_cause is None


SURGE = {"frontend": ["RequestRateSpike", "ServiceLatencySLOBreach"], "proxy": ["Latency"]}
SURGE_WALK = [Candidate("frontend", ["frontend", "proxy"], 1), Candidate("proxy", ["proxy"], 0)]


def test_traffic_surge_to_a_single_source_blames_the_source() -> None:
    sources = [
        {"source": "load-generator", "path": ["load-generator", "proxy", "frontend"], "hops": 2},
        # a path through a component that does not alert is not evidence of the surge
        {"source": "partner-api", "path": ["partner-api", "gateway", "frontend"], "hops": 2},
    ]
    decision = decide(["frontend", "proxy"], SURGE, SURGE_WALK, set(), sources)
    assert decision.root_cause == "load-generator"
    assert decision.candidates == ["load-generator"]
    assert decision.surge_paths == [["load-generator", "proxy", "frontend"]]
    assert decision.ruled_out["frontend"] == "receives a traffic surge: the cause is upstream"
    assert decision.confidence == 0.6


def test_traffic_surge_from_several_sources_is_inconclusive() -> None:
    sources = [
        {"source": "frontend-web", "path": ["frontend-web", "proxy", "frontend"], "hops": 2},
        {"source": "load-generator", "path": ["load-generator", "proxy", "frontend"], "hops": 2},
    ]
    decision = decide(["frontend", "proxy"], SURGE, SURGE_WALK, set(), sources)
    assert decision.root_cause is None
    assert decision.candidates == ["frontend-web", "load-generator"]
    assert "cannot tell which traffic source" in decision.summary
    assert len(decision.surge_paths) == 2
    # without the surge alert the same walk blames the alerting dependency itself
    calm = decide(["frontend", "proxy"], {"frontend": ["Latency"]}, SURGE_WALK, set(), sources)
    assert calm.root_cause == "frontend"


def test_a_surge_arriving_at_a_caller_blames_its_source_when_the_cause_only_slowed() -> None:
    """The traffic alert is on the caller (proxy), and frontend, which it calls, is slow: the
    load arriving at the proxy explains frontend's slowness; the source upstream of the proxy
    is the cause. An error on frontend, or a second caller flooded too, keeps the rules as
    they were (a retry storm raises request rates too)."""
    walk = [Candidate("frontend", ["frontend", "proxy"], 1), Candidate("proxy", ["proxy"], 0)]
    sources = [{"source": "partner", "path": ["partner", "proxy"], "hops": 1}]
    slowed = {"proxy": ["TrackingRequestRateSpike"], "frontend": ["FrontendSlowQueries"]}
    assert surge_of(["frontend"], ["frontend", "proxy"], slowed, walk) == "proxy"
    decision = decide(["frontend", "proxy"], slowed, walk, set(), sources)
    assert (decision.root_cause, decision.confidence) == ("partner", 0.6)
    assert decision.surge_paths == [["partner", "proxy"]]
    assert decision.ruled_out["frontend"] == (
        "slowed by the traffic surge arriving at proxy: the cause is upstream"
    )
    failing = slowed | {"frontend": ["FrontendSlowQueries", "FrontendHighErrorRate"]}
    assert surge_of(["frontend"], ["frontend", "proxy"], failing, walk) is None
    assert decide(["frontend", "proxy"], failing, walk, set(), sources).root_cause == "frontend"
    three = [Candidate("frontend", ["frontend", "proxy", "web"], 1),
             Candidate("proxy", ["proxy"], 0), Candidate("web", ["web"], 0)]  # fmt: skip
    both = slowed | {"web": ["WebTrafficSurge"]}
    assert surge_of(["frontend"], ["frontend", "proxy", "web"], both, three) is None
    # two slowed services the graph cannot separate, behind the one flooded caller
    pair = [Candidate("cart", ["cart", "proxy"], 1), Candidate("slots", ["slots", "proxy"], 1)]
    alike = {"proxy": ["StorefrontTrafficSurge"], "cart": ["CartP95High"], "slots": ["SlotsSlow"]}
    assert surge_of(["cart", "slots"], ["cart", "slots", "proxy"], alike, pair) == "proxy"


def test_a_surge_through_quiet_components_is_a_lead_and_an_alerting_client_the_source() -> None:
    """Only frontend alerts, a traffic alert among its own: the load still comes from upstream,
    through a proxy that raises no alert, so the traffic sources are the candidates, a lead at
    most, never frontend at the confidence of the only alerting component. A traffic source
    that alerts about its own requests is the source."""
    alone = {"frontend": ["RequestRateSpike", "ServiceLatencySLOBreach", "ContainerCPUHigh"]}
    walk = [Candidate("frontend", ["frontend"], 0)]
    sources = [
        {"source": "frontend-web", "path": ["frontend-web", "proxy", "frontend"], "hops": 2},
        {"source": "load-generator", "path": ["load-generator", "proxy", "frontend"], "hops": 2},
    ]
    decision = decide(["frontend"], alone, walk, set(), sources)
    assert (decision.root_cause, decision.candidates) == (None, ["frontend-web", "load-generator"])
    assert decision.confidence == 0.23 and "through proxy, which raise no alert" in decision.summary
    assert decide(["frontend"], alone, walk, set(), sources[1:]).confidence == 0.45  # one: a lead
    assert decide(["frontend"], alone, walk, set(), []).root_cause == "frontend"  # none known
    client = [Candidate("proxy", ["proxy", "load-generator"], 1),
              Candidate("load-generator", ["load-generator"], 0, client=True)]  # fmt: skip
    flooding = {"load-generator": ["RequestRateSpike"], "proxy": ["ServiceLatencySLOBreach"]}
    found = decide(["load-generator", "proxy"], flooding, client, set(), [])
    assert (found.root_cause, found.confidence) == ("load-generator", 0.6)
    assert (
        found.ruled_out["proxy"]
        == "slowed by the traffic surge from load-generator, a traffic source"
    )


# --- the demo, end to end ----------------------------------------------------------------------


def test_demo_with_evidence_finds_every_root_cause_and_pages_once_each(
    falkordb: EmbeddedFalkorDB, tmp_path: Path, tenant: str
) -> None:
    result = run_demo(make_settings(falkordb, tmp_path, tenant, workers=2), evidence=True)
    rows = result["scenarios"]
    assert result["total"] == len(rows) == 10 and result["evidence"]
    assert result["correct"] == sum(1 for r in rows if r["correct"]) == 10
    for row in rows:
        assert row["root_cause"] in row["expected_root_cause"], row["name"]
        assert row["incidents"] == 1, row["name"]
        assert (row["notifications"], row["tickets"]) == (1, 1), row["name"]
        assert row["resolved"], row["name"]
        assert row["alerts"] >= 2, row["name"]


def test_demo_alerts_only_is_never_confidently_wrong(
    falkordb: EmbeddedFalkorDB, tmp_path: Path, tenant: str
) -> None:
    """Alerts say where it hurts, not why: with no evidence, a cause with a silent
    dependency behind it is inconclusive, naming it first; only an alert about its own process
    (memory, GC) or a leaf keeps it conclusive."""
    result = run_demo(make_settings(falkordb, tmp_path, tenant, workers=2))
    rows = {r["name"]: r for r in result["scenarios"]}
    assert not result["evidence"]
    conclusive = {n for n, r in rows.items() if r["root_cause"]}
    assert conclusive == {
        "adFailure", "adManualGc", "emailMemoryLeak", "kafkaQueueProblems", "paymentFailure",
        "recommendationCacheFailure",
    }  # fmt: skip
    for name, row in rows.items():
        if row["root_cause"]:
            assert row["correct"], name
        else:  # the true cause is among the named candidates
            assert row["named"] and len(row["candidates"]) >= 2, name
        assert (row["notifications"], row["tickets"]) == (1, 1), name
    assert rows["cartFailure"]["candidates"][:2] == ["cart", "valkey-cart"]


# --- a recent change breaks a tie, end to end ---------------------------------------------------


def _fire(gw: Gateway, starts: datetime) -> dict[str, Any]:
    """Alerts on checkout, currency and payment (checkout calls both): each alerting dependency
    explains checkout equally well, and with alerts only nothing separates them."""
    alerts = [
        {
            "status": "firing",
            "labels": {"alertname": name, "service": service, "severity": "warning"},
            "annotations": {},
            "startsAt": rfc3339(starts + timedelta(seconds=30 * i)),
            "endsAt": "0001-01-01T00:00:00Z",
        }
        for i, (name, service) in enumerate(
            [
                ("ServiceHighErrorRate", "checkout"),
                ("ServiceHighErrorRate", "currency"),
                ("ServiceHighErrorRate", "payment"),
            ]
        )
    ]
    answer = gw.http.post("/api/v1/alerts", json={"alerts": alerts}, headers=gw.auth)
    assert answer.status_code == 200, answer.text
    (incident_id,) = answer.json()["incidents"]
    gw.drain()
    detail: dict[str, Any] = gw.http.get(f"/api/v1/incidents/{incident_id}", headers=gw.auth).json()
    return detail


@pytest.mark.parametrize("gateway", ["token"], indirect=True)
def test_recent_deploy_posted_to_the_changes_api_breaks_a_tie(gateway: Gateway) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    before = _fire(gateway, now - timedelta(hours=6))
    assert before["root_cause"] is None
    assert sorted(before["finding"]["candidates"]) == ["currency", "payment"]

    deploy = {
        "component": "payment",
        "kind": "deploy",
        "ref": "v2.4.1",
        "at": rfc3339(now - timedelta(minutes=20)),
        "author": "Cy Example",
    }
    answer = gateway.http.post("/api/v1/changes", json=deploy, headers=gateway.auth)
    assert answer.status_code == 201, answer.text
    assert answer.json() == {"id": "deploy:payment:v2.4.1"}
    # posting it again is harmless; an unknown component is a 404, a bad time a 422
    assert gateway.http.post("/api/v1/changes", json=deploy, headers=gateway.auth).is_success
    unknown = gateway.http.post(
        "/api/v1/changes", json=deploy | {"component": "nope"}, headers=gateway.auth
    )
    assert unknown.status_code == 404
    bad = gateway.http.post(
        "/api/v1/changes", json=deploy | {"at": "yesterday"}, headers=gateway.auth
    )
    assert bad.status_code == 422

    after = _fire(gateway, now - timedelta(minutes=5))
    assert after["id"] != before["id"]
    assert after["root_cause"] == "payment"
    # currency, ruled out by the change, has no dependency path to payment: its alert is
    # another failure and leaves for an incident of its own
    assert {a["component"] for a in after["alerts"]} == {"checkout", "payment"}
    rows = gateway.http.get("/api/v1/incidents", headers=gateway.auth).json()["incidents"]
    (split,) = [r for r in rows if r["id"] not in (before["id"], after["id"])]
    moved = gateway.http.get(f"/api/v1/incidents/{split['id']}", headers=gateway.auth).json()
    ((alert,),) = [moved["alerts"]]
    assert alert["joined_via"] == (
        f"split from {after['id']}: no dependency path from currency to the root cause payment"
    )
    assert moved["root_cause"] == "currency"
    # the incident the webhook named at triage time says where its alert went, and back
    assert (after["split_into"], moved["split_from"]) == ([split["id"]], after["id"])
    assert (after["split_from"], moved["split_into"]) == (None, [])
    # the deploy happened after the first incident: that one stays inconclusive
    again = gateway.http.get(f"/api/v1/incidents/{before['id']}", headers=gateway.auth).json()
    assert again["root_cause"] is None


MEASURED = Decision(
    "valkey-cart", ["valkey-cart"], 0.9, "calls into valkey-cart fail",
    evidence=[{"component": "valkey-cart", "source": "edge", "magnitude": 0.45}],
)  # fmt: skip


@pytest.mark.parametrize(
    ("other", "outranked"),
    [
        (Decision("cart", ["cart"], 0.5, "memory"), True),  # another cause, less sure
        (Decision("cart", ["cart"], 0.9, "memory"), True),  # as sure: measured wins the tie
        (Decision("cart", ["cart"], 0.95, "memory"), False),  # surer: it stands
        (Decision("valkey-cart", ["valkey-cart"], 0.5, "memory"), False),  # the same cause
        (Decision(None, ["cart", "frontend"], 0.25, "model"), True),  # no cause at all
    ],
)
def test_a_measured_cause_outranks_a_less_sure_other_one(other: Decision, outranked: bool) -> None:
    assert outranks(MEASURED, other) is outranked


def test_a_measurement_that_left_the_other_cause_a_candidate_does_not_outrank_it() -> None:
    """The store failing for one of its two readers only is measured, and the reader is kept a
    candidate (`weigh.asked_by_one`): memory's held playbook on that reader breaks the tie
    instead of yielding to the measurement. Alerts alone never leave such a tie open."""
    tie = Decision(
        "media-store", ["media-store", "image-resizer"], 0.6, "only image-resizer's calls fail",
        evidence=[{"component": "media-store", "source": "calls", "magnitude": 0.15}],
    )  # fmt: skip
    remembered = Decision("image-resizer", ["image-resizer"], 0.45, "memory")
    assert left_open(tie, "image-resizer") and not outranks(tie, remembered)
    assert outranks(tie, Decision("media-svc", ["media-svc"], 0.45, "memory"))
    assert not left_open(replace(tie, evidence=[]), "image-resizer")  # nothing measured
    assert not left_open(tie, "media-store")  # its own cause


def test_a_model_guess_does_not_replace_a_measured_cause_however_sure() -> None:
    """A device registry measured 100x slower for every caller, reached from one of three
    alerting components, is held low by the rules (0.32); a model's cause with no signal of
    its own (the broker whose queue the slow consumer let fill) does not replace it, even at
    a higher confidence. A model's cause the rules measured too may."""
    low = Decision(
        "device-registry", ["device-registry"], 0.32, "calls into device-registry take 1976 ms",
        evidence=[
            {"component": "device-registry", "source": "edge", "magnitude": 98.0},
            {"component": "registry-db", "source": "edge", "magnitude": 2.0},
        ],
    )  # fmt: skip
    guess = Decision("emqx", ["emqx"], 0.4, "model")
    assert guessed_over(low, guess) and not outranks(low, guess)
    assert not guessed_over(low, Decision("registry-db", ["registry-db"], 0.4, "model"))
    assert not guessed_over(low, Decision("device-registry", ["device-registry"], 0.6, "model"))
    assert not guessed_over(low, Decision(None, ["emqx"], 0.25, "model"))  # no cause named
    # rules from the alerts alone (no live evidence) leave the model its answer
    alone = Decision("device-registry", ["device-registry"], 0.32, "alerts only")
    assert not guessed_over(alone, guess)
    # so does an unmeasured dependency of the measured cause (a broker with no series behind
    # the service whose publishing slowed): its trouble may start there
    assert not guessed_over(low, guess, behind={"emqx", "registry-db"})


def test_a_model_pick_among_what_the_rules_could_not_separate_is_a_judgement() -> None:
    """Alerts only, the rules are inconclusive between a database alerting about its CPU and
    the partner whose traffic reaches it; the model picks the database: the others stay its
    rivals, so its answer keeps at most 0.4. Counter-cases: the rules named a cause, the
    model named one outside their list, or a measurement backs the model's cause."""
    rules = Decision(None, ["enrolment-db", "partner-lms"], 0.25, "inconclusive")
    pick = Decision("enrolment-db", ["enrolment-db"], 0.7, "model")
    assert unseparated_by_rules(rules, pick) == ["partner-lms"]
    named = Decision("enrolment-db", ["enrolment-db"], 0.9, "rules")
    assert unseparated_by_rules(named, pick) == []
    assert unseparated_by_rules(rules, Decision("video-svc", ["video-svc"], 0.7, "model")) == []
    measured = Decision(
        None, ["enrolment-db", "partner-lms"], 0.25, "inconclusive",
        evidence=[{"component": "enrolment-db", "source": "latency", "magnitude": 1.0}],
    )  # fmt: skip
    assert unseparated_by_rules(measured, pick) == []


def test_a_cause_from_alerts_alone_outranks_nothing() -> None:
    """The rules at 0.9 from the alerts and the graph (no live evidence) do not outrank memory:
    a correction taught memory what those rules got wrong before."""
    alone = Decision("shipments-db", ["shipments-db"], 0.9, "it alerts itself")
    assert not outranks(alone, Decision("partner-gateway", ["partner-gateway"], 0.5, "memory"))


@pytest.mark.parametrize(
    ("playbook", "expected"),
    [
        ({"trust": 0.5}, UNTRIED_CONFIDENCE),  # hand-written, never confirmed in use
        # learned from an engineer's verdict: that incident's cause, not yet recognised in use
        ({"trust": 0.5, "learned_from": "inc-1"}, UNTRIED_CONFIDENCE),
        ({"trust": 2 / 3, "helped": 1}, 0.67),  # confirmed once when it steered
        ({"trust": 1 / 3}, 0.33),  # misled once: its trust, already under the line
    ],
)
def test_memory_is_as_sure_as_the_playbook_a_verdict_backed(
    playbook: dict[str, Any], expected: float
) -> None:
    assert confidence(playbook) == expected


def test_a_memory_summary_says_why_it_is_held_under_the_trust_and_not_once_lifted() -> None:
    playbook = {
        "candidate": "payments-db", "title": "errors on payments-db", "trust": 0.5,
        "helped": 0, "path": ["payments-api", "payments-db"], "learned_from": "inc-1",
        "learned_at": None, "confirmed_by": "Dee Example", "lesson": "confirmed",
    }  # fmt: skip
    held = [
        "payments-db explains most alerting components (a dependency path from each)",
        "an errors alert on payments-db",
    ]
    untried = cited(playbook, held)
    assert "(trust 0.50, this finding held at 0.45: the playbook is untried (no verdict yet" in (
        untried
    )
    assert untried.endswith(
        "its checks held for payments-db: payments-db explains most alerting components (a "
        "dependency path from each); an errors alert on payments-db."
    )
    # the rules name the same cause at 0.95 and lend it their confidence: nothing is held back
    lifted = cited(playbook, held, at=0.95)
    assert "held at" not in lifted and "(trust 0.50, learned from inc-1 (confirmed by" in lifted
    # a playbook that helped before is as sure as its trust
    assert "held at" not in cited(playbook | {"helped": 1, "trust": 0.67}, held)


def test_a_memory_summary_says_a_change_check_measured_nothing_without_a_change_source() -> None:
    """ "No recent change" held only because no change source ever recorded one: the summary
    says it was not checked, not that nothing changed."""
    playbook = {
        "candidate": "payments-db", "pinned_to": "payments-db",
        "checks": [{"type": "explains_alerting"}, {"type": "no_recent_change"},
                   {"type": "alert_any"}],
    }  # fmt: skip
    ran = [{"held": True, "status": s} for s in ("ok", "no_data", "ok")]
    results = [r | {"check": c} for r, c in zip(ran, playbook["checks"], strict=True)]
    assert described(playbook | {"results": results}) == [
        "payments-db explains most alerting components (a dependency path from each)",
        "recent changes not checked (no change source has recorded a deploy or merged pull "
        "request)",
        "an alert of any kind on payments-db",
    ]
    measured = [r | {"status": "ok"} for r in results]
    assert described(playbook | {"results": measured})[1] == (
        "no recent change on the other alerting components (2 h before)"
    )
