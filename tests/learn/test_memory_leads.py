"""Memory's leads weighed against the alerts: a remembered cause that leaves an alerting
component unexplained, where another candidate or the alerting component itself explains
them all, does not name the incident (agents/investigate/investigator.py `_remembered_lead`,
`alone_explains`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from adapters.falkordb import EmbeddedFalkorDB
from agents.investigate.decision import Candidate, Decision
from agents.investigate.investigator import alone_explains, outexplained
from agents.investigate.remembered import measure_missed, remembered_lead_of
from tests.conftest import Gateway
from tests.learn.test_memory import (
    WEEK1,
    clear,
    close_shop,
    fire,
    incident,
    open_shop,
    remembered,
    verdict,
)
from tests.slack_api import SlackAPI

LEADS = Path(__file__).resolve().parents[1] / "data" / "leads-world.yaml"


@pytest.fixture
def home(falkordb: EmbeddedFalkorDB, tmp_path: Path, api: SlackAPI) -> Iterator[Gateway]:
    """A gateway on the leads world (a smart home's registry and shadow store; payouts)."""
    gw = open_shop(falkordb, tmp_path, api, world=LEADS)
    yield gw
    close_shop(gw)


def corrected_then_again(
    home: Gateway,
    before: list[tuple[str, str, str]],
    cause: str,
    after: list[tuple[str, str, str]],
) -> dict:
    """`before` fires, an engineer corrects it naming `cause`, it clears; two days later
    `after` fires. The second incident, investigated."""
    verdict(home, fire(home, WEEK1, before), "rejected", cause)
    clear(home, WEEK1, before)
    return incident(home, fire(home, WEEK1 + timedelta(days=2), after))


def restart_pay(home: Gateway, check: dict[str, str]) -> None:
    """A hand-written playbook "Restart pay" pinned to pay with one `check`: no verdict has
    ever backed it (untried, a lead at 0.45)."""
    answer = home.http.post("/api/v1/playbooks", json={
        "id": "pb-pay-restart", "title": "Restart pay", "component": "pay", "checks": [check],
    })  # fmt: skip
    assert answer.status_code == 201, answer.text


def test_a_remembered_lead_that_explains_fewer_alerting_components_does_not_steer(home: Gateway):
    """shadow-store, silent, was named in a correction when app-gateway and voice were slow.
    Next, voice, command and notifier fail: the correction's playbook misses only on the
    shape (other callers), and the walk reaches notifier from shadow-store through the events
    it consumes, so the rules cannot tell shadow-store from registry. But no call path leads
    from notifier to shadow-store, while all three call registry: memory would name a cause
    that leaves notifier's alert unexplained, so it names nothing, and its playbook's trust
    does not move on the verdict."""
    slow = [
        ("HomeDashboardSlow", "app-gateway", "GET /homes/{id}/state p99 2.4s"),
        ("VoiceQueryDeadlineExceeded", "voice", "7% of voice queries after the 2s deadline"),
    ]
    again = corrected_then_again(home, slow, "shadow-store", [
        ("VoiceDirectiveErrors", "voice", "24% of directives answered NO_SUCH_ENDPOINT"),
        ("CommandRejections", "command", "19% of commands rejected as 'device not in home'"),
        ("NotifierNoRecipients", "notifier", "31% of alarm events failing to find a recipient"),
    ])  # fmt: skip
    assert (again["root_cause"], again["finding"]["planner"]) == ("registry", "rules")
    assert again["finding"]["confidence"] < 0.5
    (use,) = again["memory"]
    assert (use["applicable"], use["steered"]) == (False, False)
    assert use["checks"][0]["detail"] == (
        "shadow-store explains 2 of 3 alerting components (not notifier)"
    )
    verdict(home, again["id"], "confirmed")
    (book,) = [p for p in home.http.get("/api/v1/playbooks").json()["playbooks"]
               if p["component"] == "shadow-store"]  # fmt: skip
    assert (book["helped"], book["misled"]) == (0, 0)


def test_a_remembered_lead_loses_to_an_alerting_component_that_explains_every_alert(
    home: Gateway,
):
    """policy, silent, was named in a correction when claims and payments were slow. Next,
    bank-client alerts its own latency with the same two: the correction's playbook holds
    (its signature's pairs are two of the three), a lead at 0.45. But policy does not explain
    bank-client's alert, and bank-client alone explains all three (payments calls it, claims
    consumes what payments publishes): memory's cause would need a second fault, so the
    rules decide (the words of the overruling: `test_why_a_remembered_cause_is_the_longer_
    explanation`)."""
    slow = [
        ("ClaimsCoverageCheckSlow", "claims", "coverage-check step p95 6.1s"),
        ("PayoutRunSlow", "payments", "payee lookups averaging 4.8s"),
    ]
    again = corrected_then_again(home, slow, "policy", [
        ("BankApiLatencyHigh", "bank-client", "bank payments API p99 14s (contract 2s)"),
        ("PayoutSettlementSlow", "payments", "settlement to payout p95 3h20m (SLO 30m)"),
        ("SettlementLatencyHigh", "claims", "approved claims settled after 2h, p95 latency"),
    ])  # fmt: skip
    assert (again["root_cause"], again["finding"]["planner"]) == ("bank-client", "rules")
    assert not [u for u in again["memory"] if u["steered"]]
    # claims reaches bank-client only through the events it consumes: split off after the
    # finding (`split.split_unexplained`), as every alert its cause has no path from
    assert sorted(a["component"] for a in again["alerts"]) == ["bank-client", "payments"]


def test_of_two_causes_held_by_their_components_the_one_that_explains_more_is_the_lead(
    home: Gateway,
):
    """registry is remembered for errors on voice, command and notifier; shadow-store for
    latency on voice and command. All three saturated: both playbooks hold by their
    components only, with other kinds (a lead each). registry explains 3 of 3 alerting
    components, shadow-store 2 (no call path from notifier): memory follows registry as a
    lead, as it breaks the rules' ties (it had left both, unsure, to the rules)."""
    remembered(home, "registry", ("voice", "errors"), ("command", "errors"),
               ("notifier", "errors"))  # fmt: skip
    remembered(home, "shadow-store", ("voice", "latency"), ("command", "latency"))
    found = incident(home, fire(home, WEEK1, [
        ("VoicePoolSaturated", "voice", "worker pool saturated"),
        ("CommandPoolSaturated", "command", "worker pool saturated"),
        ("NotifierPoolSaturated", "notifier", "worker pool saturated"),
    ]))  # fmt: skip
    assert {u["playbook"] for u in found["memory"] if u["applicable"]} == {
        "on-registry",
        "on-shadow-store",
    }
    assert (found["root_cause"], found["finding"]["planner"]) == ("registry", "memory")
    assert [u["playbook"] for u in found["memory"] if u["steered"]] == ["on-registry"]
    assert "so it held by its components only: a lead" in found["finding"]["summary"]


def test_why_a_remembered_cause_is_the_longer_explanation():
    """`alone_explains` names the alerting component the walk finds covering every alerting
    component when the remembered cause's `explains_alerting` check found no path from it;
    nothing when the remembered cause explains it too, or only one component alerts."""
    walk = [
        Candidate("bank-client", ["bank-client", "claims", "payments"], 3),
        Candidate("policy", ["claims", "payments"], 2),
    ]
    steered = {"id": "p1", "candidate": "policy"}
    explains = {"type": "explains_alerting"}

    def used(raw: dict[str, list[str] | None]) -> list[dict[str, object]]:
        return [{"playbook": "p1", "checks_json": json.dumps([{"check": explains, "raw": raw}])}]

    alerting = ["bank-client", "payments", "claims"]
    missing = used({"bank-client": None, "payments": ["payments", "policy"],
                    "claims": ["claims", "policy"]})  # fmt: skip
    assert alone_explains(walk, alerting, steered, missing) == (
        "bank-client alerts itself and alone explains every alerting component; "
        "policy does not explain bank-client"
    )
    reached = used({"bank-client": ["bank-client", "policy"], "payments": ["payments", "policy"],
                    "claims": ["claims", "policy"]})  # fmt: skip
    assert alone_explains(walk, alerting, steered, reached) is None
    assert alone_explains(walk, ["bank-client"], steered, missing) is None
    narrower = [Candidate("bank-client", ["bank-client", "payments"], 1), walk[1]]
    assert alone_explains(narrower, alerting, steered, missing) is None
    # a trusted playbook (`claimed`) yields only for a component its checks never looked at
    # and its cause does not depend on
    signature = {"type": "signature", "alerts": [
        {"component": "bank-client", "kind": "errors", "path": ["bank-client"]}]}  # fmt: skip
    learned_with = [{"playbook": "p1", "checks_json": json.dumps([
        {"check": explains, "raw": {"bank-client": None}}, {"check": signature}])}]  # fmt: skip
    assert alone_explains(walk, alerting, steered, learned_with, claimed=True) is None
    assert alone_explains(walk, alerting, steered, learned_with) is not None
    assert alone_explains(walk, alerting, steered, missing, claimed=True) is not None
    assert alone_explains(walk, alerting, steered, missing, True, {"bank-client"}) is None


def test_a_trusted_playbook_yields_to_an_alerting_component_it_never_claimed(home: Gateway):
    """registry was named twice behind the app gateway and voice (corrected, then confirmed:
    trusted, 0.67). Then shadow-svc alerts itself beside them: it alone explains every
    alerting component (both call it), registry does not explain it, none of registry's checks
    looked at it, and registry does not depend on it. One fault explains the incident,
    memory's needs a second: the rules decide, shadow-svc first (an unseen airline's seat cache was
    named as the loyalty service at 0.67 by a playbook learned on the check-in and boarding
    alerts). The same alerts with the registry's own database alerting instead (behind the
    registry) leave memory's registry standing."""
    slow = [("AppGatewayLatencyHigh", "app-gateway", "app gateway p99 3.1s"),
            ("VoiceSlow", "voice", "voice commands p95 2.8s")]  # fmt: skip
    verdict(home, fire(home, WEEK1, slow), "rejected", "registry")
    clear(home, WEEK1, slow)
    again = [("AppGatewayTimeouts", "app-gateway", "app gateway timing out on device lookups"),
             ("VoiceErrors", "voice", "5xx ratio 12% on voice")]  # fmt: skip
    second = fire(home, WEEK1 + timedelta(days=2), again)
    assert (incident(home, second)["root_cause"], incident(home, second)["finding"]["planner"]) == (
        "registry",
        "memory",
    )
    verdict(home, second, "confirmed")
    clear(home, WEEK1 + timedelta(days=2), again)
    third = incident(home, fire(home, WEEK1 + timedelta(days=4), [
        *slow, ("ShadowServiceErrors", "shadow-svc", "shadow-svc answering 503 to 40% of reads"),
    ]))  # fmt: skip
    # the rules decide: shadow-svc, not told apart from what it depends on (alerts only)
    assert (third["root_cause"], third["finding"]["planner"]) == (None, "rules")
    assert third["finding"]["candidates"][0] == "shadow-svc"
    assert third["finding"]["summary"].endswith(
        "the alerts rule it out: shadow-svc alerts itself and alone explains every alerting "
        "component; registry does not explain shadow-svc."
    )
    (use,) = [u for u in third["memory"] if u["playbook"].endswith(":registry")][:1]
    assert (round(use["trust_at_use"], 2), use["applicable"], use["steered"]) == (0.67, True, False)
    clear(home, WEEK1 + timedelta(days=4), slow)
    behind = incident(home, fire(home, WEEK1 + timedelta(days=6), [
        *slow, ("PostgresSlowQueries", "registry-db", "registry-db p95 query time 900ms"),
    ]))  # fmt: skip
    assert (behind["root_cause"], behind["finding"]["planner"]) == ("registry", "memory")


def test_an_untried_playbook_held_on_most_alerting_services_loses_to_what_explains_them_all(
    home: Gateway,
):
    """A hand-written playbook (no verdict yet: a lead at 0.45) says "errors on pay: restart
    pay", and its check holds. orders, pay and catalog fail with errors, the shop gateway slows:
    shop-db, which orders, pay and catalog read, explains all four; pay three (catalog does not
    call it). Memory does not name pay (a new user's trial: an untried playbook on payments
    paged the checkout team for a postgres outage and split an alert off); the rules' shop-db
    stands, and the finding says which remembered cause it overruled and why."""
    restart_pay(home, {"type": "alert_kind", "kind": "errors"})
    found = incident(home, fire(home, WEEK1, [
        ("OrdersErrors", "orders", "5xx ratio 31% on orders"),
        ("PayErrors", "pay", "5xx ratio 40% on pay"),
        ("CatalogErrors", "catalog", "5xx ratio 22% on catalog"),
        ("GatewayLatencyHigh", "shop-gateway", "p99 4.2s on the shop gateway"),
    ]))  # fmt: skip
    assert (found["root_cause"], found["finding"]["planner"]) == ("shop-db", "rules")
    assert found["finding"]["summary"].endswith(
        "Memory suggested pay (playbook 'Restart pay', 0.45); the alerts rule it out: shop-db "
        "explains 4 of 4 alerting components, pay 3."
    )
    (use,) = found["memory"]
    assert (use["applicable"], use["steered"]) == (True, False)
    assert len(found["alerts"]) == 4  # one incident: nothing split off


def test_an_untried_playbook_does_not_unsettle_a_cause_people_confirmed(home: Gateway):
    """orders and pay fail, an engineer names shop-db; then someone writes "pay has an alert:
    restart pay" (one check, no verdict ever). The same fault again, worded otherwise: both
    playbooks hold, but only shop-db's rests on a verdict, so memory names shop-db (a new
    user's trial: the two held alike, neither steered, and the page sent the on-call to pay)."""
    first = [("OrdersErrors", "orders", "5xx ratio 31% on orders"),
             ("PayLatencyHigh", "pay", "pay p99 3.2s")]  # fmt: skip
    verdict(home, fire(home, WEEK1, first), "rejected", "shop-db")
    clear(home, WEEK1, first)
    restart_pay(home, {"type": "alert_any"})
    again = incident(home, fire(home, WEEK1 + timedelta(days=2), [
        ("OrderApiFailureRatio", "orders", "orders failing 27% of requests"),
        ("PaymentRequestsSlow", "pay", "payment requests p95 2.9s"),
    ]))  # fmt: skip
    assert (again["root_cause"], again["finding"]["planner"]) == ("shop-db", "memory")
    uses = {u["playbook"]: (u["applicable"], u["steered"]) for u in again["memory"]}
    assert uses["pb-pay-restart"] == (True, False)
    assert [v for k, v in uses.items() if k.endswith(":shop-db")] == [(True, True)]


def test_a_remembered_lead_says_what_the_rules_had_when_nothing_else_stood():
    """A new user's trial read "the rules cannot tell quote from nothing else"."""
    row: dict[str, object] = {"steered": False}
    missed = [{
        "candidate": "quote", "title": "latency on quote", "trust": 0.5, "helped": 1,
        "checks": [], "row": row, "results": [], "pinned_to": "quote",
    }]  # fmt: skip
    alone = Decision("quote", ["quote"], 0.4, "quote alerts alone.")
    lead = remembered_lead_of(alone, missed)
    assert lead is not None and row["steered"] is True
    assert lead.summary.startswith(
        "A lead from memory: the rules name quote too, at 0.40, but only as a lead, and nothing "
        "measured rules it out;"
    )
    nothing = Decision(None, [], 0.0, "No alert matched a known component.")
    lead = remembered_lead_of(nothing, [dict(missed[0], row={"steered": False})])
    assert lead is not None
    assert lead.summary.startswith(
        "A lead from memory: the rules have no candidate of their own, and nothing measured"
    )


def _entitlements(results: list[dict[str, object]], **more: object) -> dict[str, object]:
    """A playbook learned from a confirmed verdict on entitlements-svc, with its check run."""
    return {
        "candidate": "entitlements-svc", "pinned_to": "entitlements-svc",
        "title": "latency on entitlements-svc", "trust": 0.5, "helped": 0,
        "learned_from": "inc-1", "confirmed_by": "Ola", "checks": [], "results": results,
        "row": {"steered": False},
    } | more  # fmt: skip


HELD = [
    {"check": {"type": "explains_alerting"}, "held": True},
    {"check": {"type": "no_recent_change", "scope": "alerting"}, "held": True},
    {"check": {"type": "alert_any", "scope": "components", "components": ["paywall-svc"]},
     "held": True},
]  # fmt: skip
CALLS = {"check": {"type": "calls_degraded", "how": ["failing", "slowed"]}}


def test_a_playbook_that_missed_only_on_its_calls_is_a_measure_miss():
    """An unseen newsroom: the entitlements service was slow the first time; the next time it
    answered at its usual speed with the wrong entitlements, and the same services alerted.
    Every check but the calls held: `measure_missed`. Anything else failing, a check not
    run, or a playbook no verdict backs is not."""
    results = [*HELD, CALLS | {"held": False}]
    assert measure_missed(_entitlements(results), results, 4)
    assert not measure_missed(_entitlements(results), results, 5)  # a check never ran
    shape = [HELD[0], HELD[1], HELD[2] | {"held": False}, CALLS | {"held": False}]
    assert not measure_missed(_entitlements(shape), shape, 4)  # the shape missed too
    untried = _entitlements(results, learned_from=None, helped=0)
    assert not measure_missed(untried, results, 4)
    held = [*HELD, CALLS | {"held": True}]
    assert not measure_missed(_entitlements(held), held, 4)  # it held: it steers instead


def test_a_measure_miss_leads_though_its_calls_were_measured_as_usual():
    """With the evidence blaming no call, the remembered cause measured as usual is no more
    refuted than the rules' own candidates (`unrefuted` keeps it) and the lead says why;
    the same playbook without the mark is refuted by that measurement."""
    results = [*HELD, CALLS | {"held": False}]
    measured = {"entitlements-svc": {"status": "ok", "value": 0.0, "text": "0.0 % failed"}}
    rules = Decision(None, ["syndication-api", "content-api"], 0.25, "inconclusive",
                     measured=measured)  # fmt: skip
    lead = remembered_lead_of(rules, [_entitlements(results, quiet=True)])
    assert lead is not None and lead.root_cause == "entitlements-svc"
    assert lead.confidence < 0.5
    assert lead.candidates == ["entitlements-svc", "syndication-api", "content-api"]
    assert (
        "Its checks held but for the calls into entitlements-svc: they neither failed nor "
        "slowed, and no measured call near the incident did" in lead.summary
    )
    assert remembered_lead_of(rules, [_entitlements(results)]) is None


def test_how_a_remembered_cause_outexplains_what_the_evidence_blamed():
    """`outexplained` says how many alerting components a remembered cause and each rival
    explain, only when the cause explains more than every rival; a tie is no lead."""
    counts = {"entitlements-svc": 2, "syndication-api": 1, "paywall-svc": 1}
    assert outexplained(counts, "entitlements-svc", ["syndication-api", "paywall-svc"]) == (
        "entitlements-svc explains 2 alerting components, syndication-api 1, paywall-svc 1"
    )
    assert outexplained(counts | {"paywall-svc": 2}, "entitlements-svc", ["paywall-svc"]) is None
    assert outexplained(counts, "entitlements-svc", ["entitlements-svc"]) == (
        "entitlements-svc explains 2 alerting components"
    )
