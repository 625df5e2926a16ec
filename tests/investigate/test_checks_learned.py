"""The checks a learned playbook carries, each where it must hold and where it must not: a
repeat of the same fault is worded, classified and measured differently; another fault behind
the same components is not recognised as it."""

from __future__ import annotations

import json
import time

from adapters.prometheus import Prometheus
from agents.investigate.checks import (
    Evidence,
    about_candidate,
    about_incident,
    evaluate,
    gated,
    kinds_differ,
)
from agents.learn.learner import merged_signature, proposed_checks, signature_check
from tests.investigate.test_evidence import FAULT_AGO_S, prometheus, scenario

__all__ = ["prometheus"]  # the fixture, used by name

OPENED = 1_790_000_000_000


def alerts_on(graph, *alerts: tuple[str, str]) -> Evidence:
    """Evidence of (alertname, component) alerts on the demo world, no Prometheus."""
    rows = [{"key": f"k{n}", "alertname": name, "component": c, "summary": ""}
            for n, (name, c) in enumerate(alerts)]  # fmt: skip
    return Evidence(graph, rows, list(dict.fromkeys(c for _, c in alerts)), OPENED)


def test_calls_degraded_holds_the_way_it_was_seen_by_the_rules_definitions(graph, prometheus):
    """A fault first seen failing 37 % of calls comes back failing 15 % and slow: it still
    fails by the rules' definition, where half the first ratio (18 %) would not hold. A
    dependency only slowed (as by a traffic surge upstream) does not count as failing; a
    healthy one is neither."""
    server = prometheus(scenario(**{
        "cart>valkey-cart": {"fail_after": 0.15, "latency_after_ms": 1200},
        "product-catalog>postgres": {"latency_after_ms": 300},
    }))  # fmt: skip
    client = Prometheus(server.url)
    try:
        opened = int((time.time() - FAULT_AGO_S + 120) * 1000)
        ev = Evidence(graph, [], ["cart"], opened, client)
        failing = {"type": "calls_degraded", "how": ["failing"]}
        slowed = {"type": "calls_degraded", "how": ["slowed"]}
        either = {"type": "calls_degraded", "how": ["failing", "slowed"]}
        held = evaluate(failing, "valkey-cart", ev)
        assert held["held"] and held["detail"].startswith("calls into valkey-cart fail"), held
        assert not evaluate({"type": "calls_failing", "threshold": 0.18}, "valkey-cart", ev)["held"]
        surge = evaluate(failing, "postgres", ev)
        assert not surge["held"] and "are not failing" in surge["detail"], surge
        assert "calls into postgres take" in surge["detail"]  # what it is instead
        assert evaluate(slowed, "postgres", ev)["held"]
        assert evaluate(either, "postgres", ev)["held"]
        healthy = evaluate(either, "shipping", ev)
        assert (healthy["held"], healthy["status"]) == (False, "ok"), healthy
        assert evaluate(either, "nothing-calls-it", ev)["status"] == "no_data"
    finally:
        client.close()
    for bad in ({"type": "calls_degraded"}, {"type": "calls_degraded", "how": []},
                {"type": "calls_degraded", "how": ["broken"]}):  # fmt: skip
        assert evaluate(bad, "valkey-cart", ev)["status"] == "error"


def test_alert_any_on_the_candidate_whatever_its_wording(graph):
    """Lock waits the first time, deadlocks the next: neither classifies, both alert on the
    cause. A silent candidate does not hold."""
    ev = alerts_on(graph, ("PostgresDeadlocks", "postgres"), ("Http5xx", "product-catalog"))
    check = {"type": "alert_any"}
    assert evaluate(check, "postgres", ev)["held"]
    assert not evaluate({"type": "alert_firing", "alertname": "PostgresLockWaitsHigh"},
                        "postgres", ev)["held"]  # fmt: skip
    missed = evaluate(check, "valkey-cart", ev)
    assert not missed["held"] and missed["detail"] == "an alert of any kind on valkey-cart: 0"
    assert about_candidate(check) and not about_incident(check)
    errors = evaluate({"type": "alert_kind", "kind": "errors"}, "product-catalog", ev)
    assert errors["detail"] == "an errors alert on product-catalog: 1", errors  # not "a errors"
    latency = evaluate({"type": "alert_kind", "kind": "latency"}, "postgres", ev)
    assert latency["detail"] == "a latency alert on postgres: 0", latency


def test_alert_any_on_listed_components_for_a_silent_cause(graph):
    """A silent cause's callers raised errors the first time and latency alerts the next:
    any alert on one of them holds; alerts only elsewhere do not."""
    check = {"type": "alert_any", "scope": "components", "components": ["cart", "frontend"]}
    ev = alerts_on(graph, ("CartLatencyHigh", "cart"))
    assert evaluate(check, "valkey-cart", ev)["held"]
    elsewhere = evaluate(check, "valkey-cart", alerts_on(graph, ("Http5xx", "checkout")))
    assert not elsewhere["held"]
    assert elsewhere["detail"] == "an alert of any kind on one of cart, frontend: 0"
    assert not about_candidate(check) and about_incident(check)
    for bad in ({"type": "alert_any", "scope": "components"},
                {"type": "alert_any", "components": ["cart"]}):  # fmt: skip
        assert evaluate(bad, "valkey-cart", ev)["status"] == "error"


def test_a_signature_lets_an_unclassified_alert_match_any_kind_but_not_a_different_kind(graph):
    """An alert name no keyword classifies says nothing about its kind: it matches any kind on
    its component (`unclassified: matches`). Two kinds that both classify and differ still
    differ: a cache and a configuration service behind the same callers are told apart only
    by them, so the same components with other kinds hold only as `kinds_differ` (a lead the
    investigator follows only when no other remembered cause holds), and other components not
    at all. A stored signature without the field compares names as before."""
    lock_waits = {"type": "signature", "overlap": 0.5, "unclassified": "matches", "alerts": [
        {"component": "postgres", "kind": "PostgresLockWaitsHigh", "path": []},
        {"component": "product-catalog", "kind": "errors", "path": []},
    ]}  # fmt: skip
    repeat = alerts_on(graph, ("PostgresDeadlocks", "postgres"),
                       ("ServiceHighErrorRate", "product-catalog"))  # fmt: skip
    held = evaluate(lock_waits, "postgres", repeat)
    assert (held["held"], held["raw"]["overlap"]) == (True, 1.0), held
    stored = {k: v for k, v in lock_waits.items() if k != "unclassified"}
    before = evaluate(stored, "postgres", repeat)
    assert (before["held"], round(before["raw"]["overlap"], 2)) == (True, 0.33)
    assert kinds_differ(before) and not kinds_differ(held)  # by its components only
    cache = {"type": "signature", "overlap": 0.5, "unclassified": "matches", "alerts": [
        {"component": "cart", "kind": "latency", "path": []},
        {"component": "frontend", "kind": "errors", "path": []},
    ]}  # fmt: skip
    other = evaluate(cache, "valkey-cart", alerts_on(graph, ("CartErrors", "cart"),
                                                     ("FrontendErrors", "frontend")))  # fmt: skip
    assert (other["held"], round(other["raw"]["overlap"], 2)) == (True, 0.33), other
    assert (other["raw"]["by_component"], kinds_differ(other)) == (1.0, True)
    assert "by component 1.00, kinds differ" in other["detail"]
    assert not kinds_differ(evaluate(cache, "valkey-cart", alerts_on(
        graph, ("CartLatencyHigh", "cart"), ("FrontendErrors", "frontend"))))  # fmt: skip
    elsewhere = evaluate(cache, "valkey-cart", alerts_on(
        graph, ("CheckoutErrors", "checkout"), ("FrontendErrors", "frontend")))  # fmt: skip
    assert not elsewhere["held"] and elsewhere["raw"]["by_component"] == 0.333
    # a kind about a caller's own process stays a kind: cart out of memory is cart's fault
    oom = evaluate(cache, "valkey-cart", alerts_on(graph, ("CartOOMKilled", "cart"),
                                                   ("FrontendErrors", "frontend")))  # fmt: skip
    assert not oom["held"], oom


def test_what_the_learner_writes_for_each_kind_of_cause(graph):
    """The symptom check by the cause's alert: its kind, or any alert on it when a signature
    (which keeps the kinds) is learned beside it or it had no kind; any alert on the alerting
    components when the cause was silent. The signature it learns lets unclassified alerts
    match."""
    assert proposed_checks("saturation", ["postgres"])[1] == {
        "type": "alert_kind", "kind": "saturation", "scope": "candidate"}  # fmt: skip
    assert proposed_checks("saturation", ["postgres"], signature=True)[1] == {
        "type": "alert_any", "scope": "candidate"}  # fmt: skip
    assert proposed_checks(None, ["postgres"])[1] == {"type": "alert_any", "scope": "candidate"}
    assert proposed_checks("errors", ["frontend", "cart"], silent=True)[1:] == [
        {"type": "alert_any", "scope": "components", "components": ["cart", "frontend"]},
        {"type": "named_by_alert"},
    ]
    learned = signature_check(alerts_on(graph, ("PostgresLockWaitsHigh", "postgres")), "postgres")
    assert learned["unclassified"] == "matches"
    assert learned["alerts"] == [
        {"component": "postgres", "kind": "PostgresLockWaitsHigh", "path": ["postgres"]}
    ]


def test_a_kind_transfer_keeps_the_kind_not_the_components():
    """Recalled for another component of the same tech, a playbook's checks naming its
    incident's components go; a silent cause's symptom becomes its kind on an alerting
    component."""
    checks = [
        {"type": "no_recent_change", "scope": "alerting"},
        {"type": "alert_any", "scope": "components", "components": ["cart"]},
        {"type": "calls_degraded", "how": ["failing"]},
        {"type": "signature", "overlap": 0.5, "alerts": [{"component": "cart", "kind": "errors"}]},
    ]
    entry = {"checks": checks, "candidate": "valkey-cart", "pinned_to": "valkey-cart",
             "failure_kind": "errors"}  # fmt: skip
    assert gated(entry) == [{"type": "explains_alerting"}, *checks]
    moved = gated(entry | {"candidate": "redis-sessions"})
    assert moved == [
        {"type": "explains_alerting"},
        checks[0],
        {"type": "alert_kind", "kind": "errors", "scope": "alerting"},
        checks[2],
    ]
    unkind = gated(entry | {"candidate": "redis-sessions", "failure_kind": None})
    assert [c["type"] for c in unkind] == [
        "explains_alerting",
        "no_recent_change",
        "calls_degraded",
    ]


#: A broker stall learned on the demo world: both consumers of `orders` fell behind and
#: checkout's publishes to it slowed (each reaches kafka through the topic it hosts).
BROKER_STALL = {"type": "signature", "overlap": 0.5, "unclassified": "matches", "alerts": [
    {"component": "accounting", "kind": "lag", "path": ["accounting", "orders", "kafka"]},
    {"component": "checkout", "kind": "latency", "path": ["checkout", "orders", "kafka"]},
    {"component": "fraud-detection", "kind": "lag",
     "path": ["fraud-detection", "orders", "kafka"]},
]}  # fmt: skip


def test_a_signature_counts_the_components_behind_one_hosted_topic_as_one(graph):
    """A stalled broker lags whichever consumers read at the time: the same stall comes back
    with other consumers behind and no publisher alerting. Components that reach the cause
    through one component it hosts (a topic on the broker) count as one group, so the repeat
    holds where comparing components one by one (1 of 3) would not."""
    repeat = alerts_on(graph, ("KafkaConsumerLagHigh", "accounting"),
                       ("FraudConsumerBacklog", "fraud-detection"))  # fmt: skip
    held = evaluate(BROKER_STALL, "kafka", repeat)
    assert (held["held"], held["raw"]["overlap"]) == (True, 0.5), held
    assert held["raw"]["matched"] == [["orders", "lag"]]
    assert held["detail"].startswith(
        "signature overlap 0.50 (want 0.50): lag on accounting, fraud-detection alert again"
    )


def test_one_consumer_behind_alone_is_not_the_stall_that_lagged_two(graph):
    """Counter-case: a group that had two consumers behind matches only when two are behind
    again (`GROUP_QUORUM`): one consumer lagging alone is as likely its own fault. Kinds
    within a group must still agree for a match by kind: the consumers failing is not them
    lagging, only the same components (`kinds_differ`, a lead)."""
    alone = evaluate(BROKER_STALL, "kafka", alerts_on(graph, ("ConsumerLag", "accounting")))
    assert (alone["held"], alone["raw"]["overlap"]) == (False, 0.0), alone
    # with the publisher slow too, only the publisher's kind alerts again
    one = alerts_on(graph, ("OrdersConsumerLag", "fraud-detection"), ("CheckoutSlow", "checkout"))
    assert evaluate(BROKER_STALL, "kafka", one)["raw"]["overlap"] == 0.333
    failing = alerts_on(graph, ("AccountingErrors", "accounting"),
                        ("FraudDetectionErrors", "fraud-detection"))  # fmt: skip
    assert kinds_differ(evaluate(BROKER_STALL, "kafka", failing))
    # components reaching the cause by calls, not through a hosted topic, stay one by one
    cache = {"type": "signature", "overlap": 0.5, "unclassified": "matches", "alerts": [
        {"component": "cart", "kind": "latency", "path": ["cart", "valkey-cart"]},
        {"component": "frontend", "kind": "errors", "path": ["frontend", "cart", "valkey-cart"]},
    ]}  # fmt: skip
    swapped = evaluate(cache, "valkey-cart", alerts_on(graph, ("CartErrors", "cart"),
                                                       ("FrontendSlow", "frontend")))  # fmt: skip
    assert (swapped["held"], swapped["raw"]["overlap"]) == (True, 0.0), swapped
    assert kinds_differ(swapped)


def test_an_unclassified_name_does_not_match_a_kind_about_the_component_itself(graph):
    """An alert name no keyword read matches any kind on its component, but not one about the
    component's own process: postgres killed for memory is not the lock waits remembered; the
    same cause alerting again, it is a lead (`kinds_differ`)."""
    lock_waits = {"type": "signature", "overlap": 0.5, "unclassified": "matches", "alerts": [
        {"component": "postgres", "kind": "PostgresLockWaitsHigh", "path": []},
        {"component": "product-catalog", "kind": "errors", "path": []},
    ]}  # fmt: skip
    killed = alerts_on(graph, ("PostgresOOMKilled", "postgres"),
                       ("ServiceHighErrorRate", "product-catalog"))  # fmt: skip
    found = evaluate(lock_waits, "postgres", killed)
    assert (found["held"], round(found["raw"]["overlap"], 2)) == (True, 0.33), found
    assert found["raw"]["new"] == [["postgres", "memory"]] and kinds_differ(found)


def test_a_caller_of_a_producer_is_not_one_of_the_topic_s_group(graph):
    """Only a topic's own producers and consumers count as its group: frontend reaches kafka
    through checkout, which publishes to `orders`, so frontend behind and one consumer behind
    are not the two consumers the stall lagged."""
    two_behind = {"type": "signature", "overlap": 0.5, "unclassified": "matches", "alerts": [
        {"component": "accounting", "kind": "lag", "path": ["accounting", "orders", "kafka"]},
        {"component": "fraud-detection", "kind": "lag",
         "path": ["fraud-detection", "orders", "kafka"]},
    ]}  # fmt: skip
    mixed = alerts_on(graph, ("AccountingConsumerLag", "accounting"),
                      ("FrontendQueueBacklog", "frontend"))  # fmt: skip
    found = evaluate(two_behind, "kafka", mixed)
    assert (found["held"], found["raw"]["overlap"]) == (False, 0.0), found


def test_a_next_version_keeps_the_shapes_its_repeats_came_in():
    """A correction after memory missed a repeat supersedes the playbook: the new signature is
    this incident's alerts first, then those of the old one it lacks, so either shape matches
    next time; the symptom checks are left as they are. No old playbook: as learned."""
    learned = {"type": "signature", "overlap": 0.5, "unclassified": "matches", "alerts": [
        {"component": "cart", "kind": "latency", "path": ["cart", "valkey-cart"]},
    ]}  # fmt: skip
    shape = [{"component": "cart", "kind": "latency", "path": []},
             {"component": "checkout", "kind": "errors", "path": ["checkout", "cart"]}]  # fmt: skip
    old = [{"type": "alert_any", "scope": "components", "components": ["cart"]},
           {"type": "signature", "overlap": 0.5, "alerts": shape}]  # fmt: skip
    merged = merged_signature(learned, {"id": "p1", "checks_json": json.dumps(old)})
    assert [(a["component"], a["kind"]) for a in merged["alerts"]] == [
        ("cart", "latency"),
        ("checkout", "errors"),
    ]
    assert merged["alerts"][0]["path"] == ["cart", "valkey-cart"]  # this incident's, first
    assert merged_signature(learned, None) == learned
