"""A correction that names a caller of what alerted (a batch holding row locks on the database
that alerts): its playbook explains the alerting components by the caller's own calls
(`explains_alerting` `via: calls`), is recalled from its callees even when the caller is
silent; and when the rules give the answer a person corrected again, with nothing measured,
they are no longer sure of it (`investigator.corrected_before`)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest

from adapters.falkordb import EmbeddedFalkorDB
from agents.investigate.decision import Decision
from agents.investigate.investigator import corrected_before
from agents.investigate.recall import UPSTREAM, rank
from agents.investigate.remembered import calls_reach
from agents.learn.learner import merged_components, playbook_title
from tests.conftest import Gateway
from tests.learn.test_memory import WEEK1, clear, close_shop, fire, incident, open_shop, verdict
from tests.learn.test_memory_leads import LEADS, corrected_then_again
from tests.slack_api import SlackAPI

#: A batch job reading two databases (tests/data/batch-world.yaml).
BATCH = Path(__file__).resolve().parents[1] / "data" / "batch-world.yaml"
#: The OpenTelemetry Demo world the demo ships.
DEMO = Path(__file__).resolve().parents[2] / "gateway" / "data" / "otel-demo" / "topology.yaml"

#: The shop of the leads world: shop-gateway calls orders, pay and catalog; orders calls pay;
#: all three read shop-db. orders' nightly export holds row locks on shop-db.
LOCKED = [
    ("OrdersExportOverrun", "orders", "order export 2h10m past its window, 41 shards left"),
    ("ShopDbLockWaits", "shop-db", "shop-db: 212 sessions waiting on row locks > 30s"),
    ("PayCaptureLatency", "pay", "pay capture p99 7.2s"),
]
AGAIN = [
    ("OrdersExportStuck", "orders", "order export still running at 09:40, 3 shards retried"),
    ("ShopDbLockWaits", "shop-db", "shop-db: oldest transaction open 2h02m, 96 waiting"),
    ("CatalogReadsSlow", "catalog", "catalog GET /items p95 5.8s"),
]


@pytest.fixture
def shop(falkordb: EmbeddedFalkorDB, tmp_path: Path, api: SlackAPI) -> Iterator[Gateway]:
    gw = open_shop(falkordb, tmp_path, api, world=LEADS)
    yield gw
    close_shop(gw)


def learned_on(gw: Gateway, component: str) -> dict:
    (book,) = [p for p in gw.http.get("/api/v1/playbooks").json()["playbooks"]
               if p["component"] == component and p["status"] == "active"]  # fmt: skip
    return book


def recalled_explains(found: dict, candidate: str) -> str:
    """The detail of the first check (`explains_alerting`) of `candidate`'s playbook as
    recalled for the incident `found` (the API's incident); it must be recalled."""
    recalled = {u["candidate"]: u for u in found["memory"]}
    assert candidate in recalled, sorted(recalled)
    return str(recalled[candidate]["checks"][0]["detail"])


def test_a_correction_naming_the_caller_is_checked_and_doubts_the_rules_next_time(
    shop: Gateway,
):
    first = incident(shop, fire(shop, WEEK1, LOCKED))
    # the rules: shop-db explains every alerting component, orders only itself and shop-db
    assert (first["root_cause"], first["finding"]["planner"]) == ("shop-db", "rules")
    assert first["finding"]["confidence"] == 0.9
    verdict(shop, first["id"], "rejected", "orders")
    clear(shop, WEEK1, LOCKED)
    book = learned_on(shop, "orders")
    assert book["checks"][0] == {"type": "explains_alerting", "via": "calls"}
    assert (book["lesson"], book["corrected_from"]) == ("corrected", "shop-db")

    again = incident(shop, fire(shop, WEEK1 + timedelta(days=3), AGAIN))
    # orders' playbook held (before, its dependency-direction gate failed: 1 of 3); as an
    # untried lead it does not replace the rules' answer, but the rules are no longer sure
    (use,) = [u for u in again["memory"] if u["candidate"] == "orders"]
    assert use["checks"][0]["detail"] == "orders explains 3 of 3 alerting components"
    assert all(c["held"] for c in use["checks"])
    assert (again["root_cause"], again["finding"]["planner"]) == ("shop-db", "rules")
    assert again["finding"]["confidence"] == 0.45
    assert (
        "Dee Example corrected this same answer to orders on inc-" in (again["finding"]["summary"])
    )
    # the person's answer stands beside the rules', not among what they ruled out
    assert again["finding"]["candidates"][:1] == ["shop-db"]
    assert "orders" in again["finding"]["candidates"]
    assert "orders" not in {r["component"] for r in again["finding"]["ruled_out"]}


def test_a_silent_caller_s_lesson_is_recalled_from_its_callees(shop: Gateway):
    """Before `upstream` recall, a playbook on orders was reached only when orders alerted:
    recall walks from the alerting components down their dependencies."""
    verdict(shop, fire(shop, WEEK1, LOCKED), "rejected", "orders")
    clear(shop, WEEK1, LOCKED)
    silent = [
        ("ShopDbLockWaits", "shop-db", "shop-db: 180 sessions waiting on row locks > 30s"),
        ("PayCaptureLatency", "pay", "pay capture p99 6.4s"),
    ]
    again = incident(shop, fire(shop, WEEK1 + timedelta(days=3), silent))
    assert recalled_explains(again, "orders") == "orders explains 2 of 2 alerting components"


def test_corrected_before_only_with_nothing_measured_and_the_same_answer():
    playbook = {
        "candidate": "orders", "corrected_from": "shop-db", "confirmed_by": "Dee Example",
        "learned_from": "inc-1",
    }  # fmt: skip
    rules = Decision("shop-db", ["shop-db"], 0.9, "shop-db explains 3 of 3.")
    alerts_only = SimpleNamespace(prometheus=None)
    doubted = corrected_before(playbook, rules, alerts_only)  # type: ignore[arg-type]
    assert doubted is not None
    assert (doubted.root_cause, doubted.confidence) == ("shop-db", 0.45)
    assert doubted.candidates == ["shop-db", "orders"]
    assert doubted.summary == (
        "shop-db explains 3 of 3. Dee Example corrected this same answer to orders on inc-1, an "
        "incident memory's checks find alike, and nothing measured here tells the two apart: a "
        "lead, not a conclusion."
    )
    measured = SimpleNamespace(prometheus=object())  # the measurements decide
    assert corrected_before(playbook, rules, measured) is None  # type: ignore[arg-type]
    other = Decision("pay", ["pay"], 0.9, "pay explains 3 of 3")
    assert corrected_before(playbook, other, alerts_only) is None  # type: ignore[arg-type]
    never = playbook | {"corrected_from": None}
    assert corrected_before(never, rules, alerts_only) is None  # type: ignore[arg-type]


def test_a_silent_cause_s_next_version_keeps_the_callers_it_alerted_behind_before():
    before = {"checks_json": '[{"type": "alert_any", "scope": "components", '
              '"components": ["pay", "shop-db"]}, {"type": "named_by_alert"}]'}  # fmt: skip
    now = {"type": "alert_any", "scope": "components", "components": ["catalog", "shop-db"]}
    assert merged_components(now, before)["components"] == ["catalog", "shop-db", "pay"]
    assert merged_components(now, None) == now
    kind = {"type": "alert_kind", "kind": "latency", "scope": "candidate"}
    assert merged_components(kind, before) == kind


def test_a_caller_s_lesson_is_listed_after_what_the_alerting_components_reach():
    """A caller of everything taught once (an API gateway) reaches every alerting component by
    its calls; listed by that reach it headed every recall list and pushed the right memory
    out of the first five (a robotic fulfilment month)."""

    def row(pid: str, candidate: str, path: list[str], source: int) -> dict[str, object]:
        return {
            "id": pid, "title": pid, "failure_kind": None, "trust": 0.5, "checks_json": "[]",
            "candidate": candidate, "pinned_to": candidate, "path": path,
            "hops": len(path) - 1, "source": source, "learned_at": 1,
        }  # fmt: skip

    rows = [
        row("pb-gw", "api-gateway", ["pick-svc", "api-gateway"], UPSTREAM),
        row("pb-gw", "api-gateway", ["pack-svc", "api-gateway"], UPSTREAM),
        row("pb-db", "orders-db", ["pick-svc", "orders-db"], 0),
    ]
    ranked = rank(rows)
    assert [(e["candidate"], e["reached_from"]) for e in ranked] == [
        ("orders-db", 1),
        ("api-gateway", 0),
    ]
    assert ranked[1]["score"] == ranked[0]["score"]  # checked by score as any other


def test_a_producer_s_lesson_is_learned_and_recalled_from_its_topic_s_consumers(shop: Gateway):
    """shadow-svc publishes home-events, which notifier consumes: a correction naming it when
    notifier alone alerts (the events stopped, or came wrong) is a lesson on a producer. Before,
    no dependency walk from notifier reached it, so no playbook was learned ("would fail its
    explains_alerting check on this very incident"), and none was recalled next time."""
    stale = [("NotifierNoEvents", "notifier", "notifier: no home events consumed for 20 min")]
    verdict(shop, fire(shop, WEEK1, stale), "rejected", "shadow-svc")
    clear(shop, WEEK1, stale)
    book = learned_on(shop, "shadow-svc")
    assert book["checks"][0] == {"type": "explains_alerting", "via": "calls"}
    wrong = [("NotifierPushesGarbled", "notifier", "notifier: 31% of pushes name the wrong room")]
    again = incident(shop, fire(shop, WEEK1 + timedelta(days=2), wrong))
    assert recalled_explains(again, "shadow-svc") == (
        "shadow-svc explains 1 of 1 alerting components"
    )


def test_a_silent_cause_s_playbook_is_titled_by_what_alerted_in_front_of_it():
    """A playbook learned on a cause that raised no alert names it behind its callers' kind
    ("latency on loans-db" read as if the database had alerted); one that alerted, or a
    traffic source whose fault is its traffic, keeps "<kind> on <cause>"."""
    alerts = [{"component": c, "alertname": n} for c, n in (
        ("orders", "OrdersSlow"), ("pay", "PayCaptureLatency"), ("catalog", "CatalogSlow"),
        ("shop-gateway", "GatewaySlow"))]  # fmt: skip
    assert playbook_title("shop-db", "latency", alerts) == (
        "shop-db behind latency on orders, pay, catalog, …"
    )
    assert playbook_title("shop-db", None, alerts[:1]) == "shop-db behind OrdersSlow on orders"
    assert playbook_title("pay", "latency", alerts) == "latency on pay"
    assert playbook_title("pay", None, alerts) == "PayCaptureLatency on pay"
    assert playbook_title("web", "traffic", alerts, traffic_source=True) == "traffic on web"
    # a caller (a batch flooding what alerts) is upstream of it, not behind it
    assert playbook_title("nightly", "saturation", alerts[:2], upstream=True) == (
        "nightly upstream of saturation on orders, pay"
    )


def test_a_producer_s_lesson_is_not_overruled_by_the_topic_its_consumers_depend_on(
    falkordb: EmbeddedFalkorDB, tmp_path: Path, api: SlackAPI
):
    """checkout publishes `orders`, which accounting and fraud-detection consume (the
    OpenTelemetry Demo world). Both lag: the rules cannot tell the topic from its producer.
    Corrected to checkout, the repeat's lead is checkout: the topic explains the two consumers
    by a dependency path, checkout by its publishes (`reached_by_its_calls`); before, the
    finding read "the alerts rule it out: orders explains 2 of 2 alerting components,
    checkout 0" beside "✓ held: checkout explains 2 of 2" (a new user's trial)."""
    gw = open_shop(falkordb, tmp_path, api, world=DEMO)
    try:
        lag = [
            ("KafkaConsumerLag", "accounting", "accounting consumer lag on orders 50k"),
            ("KafkaConsumerLag", "fraud-detection", "fraud-detection lag on orders 40k"),
        ]
        quiet = [
            ("OrdersNotBooked", "accounting", "no orders booked for 10 minutes"),
            ("FraudChecksIdle", "fraud-detection", "no fraud checks for 10 minutes"),
        ]
        again = corrected_then_again(gw, lag, "checkout", quiet)
        assert recalled_explains(again, "checkout") == (
            "checkout explains 2 of 2 alerting components"
        )
        assert (again["root_cause"], again["finding"]["planner"]) == ("checkout", "memory")
        assert "rule it out" not in again["finding"]["summary"]
    finally:
        close_shop(gw)


def test_a_batch_corrected_on_two_databases_keeps_both_corrections(
    falkordb: EmbeddedFalkorDB, tmp_path: Path, api: SlackAPI
):
    """nightly-export floods orders-db (the rules name orders-db at 0.90; corrected to the
    batch), then billing-db (corrected again: the playbook's next version). When orders-db's
    alerts come back, the rules' orders-db is a lead, not a conclusion: a person corrected that
    answer too. Before, the next version kept only billing-db (`corrected_from`), and the
    second correction made memory surer of the first wrong answer (a new user's trial)."""
    gw = open_shop(falkordb, tmp_path, api, world=BATCH)
    try:

        def flood(db: str, api_: str, n: int) -> list[tuple[str, str, str]]:
            return [(f"PostgresConnectionsSaturated{n}", db, f"{db} at 100% of max_connections"),
                    (f"ApiLatencyHigh{n}", api_, f"{api_} p99 3s")]  # fmt: skip

        first = fire(gw, WEEK1, flood("orders-db", "orders-api", 1))
        found = incident(gw, first)
        assert (found["root_cause"], found["finding"]["confidence"]) == ("orders-db", 0.9)
        verdict(gw, first, "rejected", "nightly-export")
        clear(gw, WEEK1, flood("orders-db", "orders-api", 1))
        second = fire(gw, WEEK1 + timedelta(days=1), flood("billing-db", "billing-api", 2))
        verdict(gw, second, "rejected", "nightly-export")
        clear(gw, WEEK1 + timedelta(days=1), flood("billing-db", "billing-api", 2))
        book = learned_on(gw, "nightly-export")
        assert book["corrected_from"] == "billing-db"
        assert book["title"].startswith("nightly-export upstream of ")
        again = incident(
            gw, fire(gw, WEEK1 + timedelta(days=2), flood("orders-db", "orders-api", 3))
        )
        assert again["root_cause"] == "orders-db"
        assert again["finding"]["confidence"] == 0.45
        assert "corrected this same answer to nightly-export" in again["finding"]["summary"]
    finally:
        close_shop(gw)


def export_corrected_on_orders_db(gw: Gateway) -> str:
    """orders-db saturates with orders-api slow (WEEK1), a person names nightly-export, the
    alerts clear. Returns the incident's id."""
    saturated = [
        ("PostgresConnectionsSaturated", "orders-db", "orders-db at 100% of max_connections"),
        ("OrdersApiLatency", "orders-api", "orders-api p99 3s"),
    ]
    first = fire(gw, WEEK1, saturated)
    verdict(gw, first, "rejected", "nightly-export")
    clear(gw, WEEK1, saturated)
    return first


def test_a_batch_corrected_on_one_database_is_a_suspect_on_the_other(
    falkordb: EmbeddedFalkorDB, tmp_path: Path, api: SlackAPI
):
    """nightly-export flooded orders-db (corrected to the batch); then billing-db saturates,
    which the batch reads too, with other components alerting than the lesson's. With alerts
    only nothing tells the batch's flood from billing-db's own fault: the rules' billing-db is
    a lead, the batch second, and the page says who named it where. Before, billing-db was
    0.90 and the page never named the batch (a new user's trial, M15; an unseen hotel month's
    night audit, corrected on one database, flooding the other at 0.90)."""
    gw = open_shop(falkordb, tmp_path, api, world=BATCH)
    try:
        first = export_corrected_on_orders_db(gw)
        other = incident(gw, fire(gw, WEEK1 + timedelta(days=1), [
            ("PostgresLockWaits", "billing-db", "billing-db: 180 sessions waiting on locks"),
            ("BillingApiLatency", "billing-api", "billing-api p99 4s"),
        ]))  # fmt: skip
        finding = other["finding"]
        assert (other["root_cause"], finding["confidence"]) == ("billing-db", 0.45)
        assert finding["candidates"][:2] == ["billing-db", "nightly-export"]
        assert "nightly-export" not in finding["ruled_out"]
        assert (
            "Memory holds a lesson on nightly-export, whose calls reach billing-db"
            in finding["summary"]
        )
        assert f"learned from {first}" in finding["summary"]
    finally:
        close_shop(gw)


def test_calls_reach_reads_the_ways_a_caller_s_lesson_found():
    """`calls_reach`: the held `via: calls` check's paths run from each alerting component to
    the caller; the blamed component is one of them, or lies on one, not their far end."""
    held = {"check": {"type": "explains_alerting", "via": "calls"}, "held": True,
            "raw": {"billing-db": ["billing-db", "nightly-export"],
                    "billing-api": ["billing-api", "billing-db", "nightly-export"],
                    "shop": None}}  # fmt: skip
    lesson = {"candidate": "nightly-export", "results": [held]}
    assert calls_reach(lesson, "billing-db")
    assert calls_reach(lesson, "billing-api")
    assert not calls_reach(lesson, "nightly-export")
    assert not calls_reach(lesson, "orders-db")
    assert not calls_reach({**lesson, "results": [held | {"held": False}]}, "billing-db")


def test_a_withdrawn_next_version_gives_memory_back_the_version_it_superseded(
    falkordb: EmbeddedFalkorDB, tmp_path: Path, api: SlackAPI
):
    """nightly-export was corrected on orders-db, then on billing-db: the second lesson is the
    first's next version, which it supersedes. When the second verdict changes (billing-db
    was the cause after all), its lesson retires, and the first version is memory's again.
    Before, the first stayed superseded and the batch's lesson was gone from memory."""
    gw = open_shop(falkordb, tmp_path, api, world=BATCH)
    try:
        first = export_corrected_on_orders_db(gw)
        second = fire(gw, WEEK1 + timedelta(days=1), [
            ("PostgresConnectionsSaturated", "billing-db", "billing-db at 100% of connections"),
            ("BillingApiLatency", "billing-api", "billing-api p99 4s"),
        ])  # fmt: skip
        verdict(gw, second, "rejected", "nightly-export")
        older, newer = f"playbook:{first}:nightly-export", f"playbook:{second}:nightly-export"

        def status() -> dict[str, str]:
            books = gw.http.get("/api/v1/playbooks").json()["playbooks"]
            return {p["id"]: p["status"] for p in books if p["id"] in (older, newer)}

        assert status() == {older: "superseded", newer: "active"}
        verdict(gw, second, "confirmed", "billing-db")
        assert status() == {older: "active", newer: "retired"}
    finally:
        close_shop(gw)
