"""`weigh` rule by rule, on hand-built evidence (the pure functions; the same rules
against a real Prometheus are in tests/investigate/test_evidence.py)."""

from __future__ import annotations

from typing import Any

from agents.failure_kinds import classify, words
from agents.investigate.decision import Candidate, Decision
from agents.investigate.investigator import traffic_clients
from agents.investigate.weigh import (
    carried,
    doubt,
    failing,
    signals,
    slowed,
    stalled_topic,
    surge_origins,
    surge_upstream,
    weigh,
)


def edge(client: str, server: str, **figures: Any) -> dict[str, Any]:
    row = {
        "client": client, "server": server, "connection_type": "", "known": True,
        "client_is_source": False, "calls": 600.0, "failed": 0.0, "fail_ratio": 0.0,
        "baseline_calls": 2400.0, "baseline_fail_ratio": 0.0, "rate_per_s": 2.0,
        "baseline_rate_per_s": 2.0, "rate_change": 1.0, "latency_ms": 20.0,
        "baseline_latency_ms": 20.0,
    }  # fmt: skip
    row |= figures
    if "fail_ratio" in figures:
        row["failed"] = row["calls"] * figures["fail_ratio"]
    return row


def test_thresholds_against_the_baseline() -> None:
    assert failing(0.06, 0.0) and not failing(0.04, 0.0)
    assert not failing(0.08, 0.05)  # chronic 5 %: not this incident
    assert failing(0.3, 0.3)  # one call in three failing is never normal (spoiled baseline)
    assert slowed(90.0, 20.0) and not slowed(35.0, 20.0) and not slowed(25.0, 10.0)
    assert slowed(1500.0, None) and not slowed(400.0, None)  # no baseline: only very slow


WALK = [
    Candidate("frontend", ["frontend"], 0),
    Candidate("cart", ["cart", "frontend"], 1),
    Candidate("valkey-cart", ["cart", "frontend"], 3, kind="datastore"),
]


def test_the_silent_dependency_whose_incoming_calls_fail_beats_its_alerting_callers() -> None:
    edges = [edge("frontend", "cart", fail_ratio=0.4), edge("cart", "valkey-cart", fail_ratio=0.5)]
    decision = weigh(["cart", "frontend"], WALK, edges, [], [], [], (), set())
    assert decision is not None and decision.root_cause == "valkey-cart"
    assert decision.ruled_out["cart"] == (
        "a victim of valkey-cart, which it depends on: calls into valkey-cart fail 50 % "
        "(the hour before: 0 %)"
    )
    assert decision.confidence == 0.95
    assert decision.evidence[0] | {"text": ""} == {
        "component": "valkey-cart",
        "source": "calls",
        "magnitude": 0.5,
        "value": 0.5,
        "text": "",
        "window": "",
    }


def test_two_roots_that_nothing_separates_are_inconclusive_in_order() -> None:
    walk = [Candidate("a", ["a"], 0), Candidate("b", ["b"], 0)]
    edges = [edge("x", "a", fail_ratio=0.3), edge("y", "b", fail_ratio=0.25)]
    decision = weigh(["a", "b"], walk, edges, [], [], [], (), set())
    assert decision is not None and decision.root_cause is None
    assert decision.candidates == ["a", "b"]
    assert "nothing separates them" in decision.summary
    # a recent change on one of them separates them
    changed = weigh(["a", "b"], walk, edges, [], [], [], (), {"b"})
    assert changed is not None and changed.root_cause == "b"
    assert "changed shortly before" in changed.separated_by


def test_a_clear_margin_separates_and_says_how() -> None:
    walk = [Candidate("a", ["a"], 0), Candidate("b", ["b"], 0)]
    edges = [edge("x", "a", fail_ratio=0.6), edge("y", "b", fail_ratio=0.1)]
    decision = weigh(["a", "b"], walk, edges, [], [], [], (), set())
    assert decision is not None and decision.root_cause == "a"
    assert decision.separated_by == (
        "calls into a fail 60 % (the hour before: 0 %); calls into b fail 10 % "
        "(the hour before: 0 %)"
    )


def test_traffic_jump_from_a_client_is_the_cause() -> None:
    edges = [edge("load-generator", "frontend-proxy", client_is_source=True, rate_change=6.0,
                  rate_per_s=30.0, baseline_rate_per_s=5.0),
             edge("frontend-proxy", "frontend", latency_ms=90.0)]  # fmt: skip
    walk = [Candidate("frontend-proxy", ["frontend-proxy"], 0)]
    decision = weigh(["frontend-proxy"], walk, edges, [], [], [], {"load-generator"}, set())
    assert decision is not None and decision.root_cause == "load-generator"
    assert decision.surge_paths == [["load-generator", "frontend-proxy"]]
    # the same jump from a component the world does not mark as a client is not a surge
    other = weigh(["frontend-proxy"], walk, edges, [], [], [], set(), set())
    assert other is not None and other.root_cause == "frontend"


def test_a_surge_source_that_is_itself_called_harder_passes_the_load_on() -> None:
    """The gateway named as the source (nothing measured called it) gets a caller whose rate
    jumped: that caller is the source. Two callers jumping alike make it inconclusive between
    them; no jump leaves the gateway."""
    gateway = weigh(["cart"], WALK, [edge("gateway", "cart", rate_change=8.0, rate_per_s=16.0)],
                    [], [], [], {"gateway"}, set())  # fmt: skip
    assert gateway is not None and gateway.root_cause == "gateway"
    app = edge("app", "gateway", rate_change=10.0, rate_per_s=20.0)
    up = surge_upstream(gateway, [app, edge("cron", "gateway")])
    assert up is not None and (up.root_cause, up.confidence) == ("app", gateway.confidence)
    assert up.surge_paths == [["app", "gateway", "cart"]]
    assert up.ruled_out["gateway"] == "passes on the load from app"
    assert up.summary.startswith("Traffic surge from app: app's requests to gateway rose 10.0x")
    assert surge_upstream(gateway, [edge("cron", "gateway")]) is None
    alike = edge("partner", "gateway", rate_change=7.0, rate_per_s=14.0)
    both = surge_upstream(gateway, [app, alike])  # the gateway passes on both: never it at 0.9
    assert both is not None and (both.root_cause, both.candidates) == (None, ["app", "partner"])
    assert both.confidence == 0.25 and both.summary.startswith("Inconclusive: traffic surge")
    assert both.ruled_out["gateway"] == "passes on the load from app, partner"
    assert surge_upstream(gateway, [edge("app", "other", rate_change=10.0)]) is None


def test_nothing_degraded_means_no_decision() -> None:
    assert weigh(["cart"], WALK, [edge("frontend", "cart")], [], [], [], (), set()) is None


def test_span_errors_targets_down_and_peer_labels_are_signals() -> None:
    found = signals(
        [], [{"component": "cart", "error_ratio": 0.3, "baseline_error_ratio": 0.0}],
        [{"component": "valkey-cart"}],
        [{"component": "frontend", "peer": "cart", "label": "upstream", "alertname": "DepErr"}],
    )  # fmt: skip
    assert [g.source for g in found["cart"]] == ["spans", "alert"]
    assert found["valkey-cart"][0].text == "valkey-cart's scrape target is down"


def test_alerts_only_a_silent_datastore_behind_the_cause_makes_it_inconclusive() -> None:
    first = Decision("cart", ["cart"], 0.9, "cart explains 2 of 2")
    alerts = [{"component": "cart", "alertname": "ServiceHighErrorRate", "summary": ""}]
    decision = doubt(first, ["cart", "frontend"], alerts, WALK, ["valkey-cart"], [], {})
    assert decision.root_cause is None and decision.candidates == ["cart", "valkey-cart"]
    # an alert about cart's own process separates them
    oom = [{"component": "cart", "alertname": "ContainerRestarting", "summary": "OOMKilled"}]
    kept = doubt(first, ["cart", "frontend"], oom, WALK, ["valkey-cart"], [], {})
    assert kept.root_cause == "cart" and kept.confidence == 0.9
    assert (
        kept.ruled_out["valkey-cart"] == "cart alerts about its own process (ContainerRestarting)"
    )
    # a soft dependency is not a suspect
    soft = doubt(first, ["cart", "frontend"], alerts, WALK, [], [], {})
    assert soft is first


def test_alerts_only_a_peer_label_naming_the_cause_does_not_clear_what_is_behind_it() -> None:
    """checkout's `upstream: cart` says its calls into cart fail; they fail the same way when
    valkey-cart fails behind cart (the valkey-down-behind-cart kind)."""
    first = Decision("cart", ["cart"], 0.9, "cart explains 2 of 2")
    alerts = [{"component": "cart", "alertname": "ServiceHighErrorRate", "summary": ""}]
    peers = [{"component": "frontend", "peer": "cart", "label": "upstream", "alertname": "D"}]
    decision = doubt(first, ["cart", "frontend"], alerts, WALK, ["valkey-cart"], peers, {})
    assert decision.root_cause is None and decision.candidates == ["cart", "valkey-cart"]


def test_alerts_only_quiet_dependents_order_a_datastore_later_but_do_not_clear_it() -> None:
    walk = [
        Candidate("product-catalog", ["frontend", "product-catalog"], 1),
        Candidate("postgres", ["frontend", "product-catalog"], 3, kind="datastore"),
        Candidate("quote", ["frontend", "product-catalog"], 3),
    ]
    first = Decision("product-catalog", ["product-catalog"], 0.9, "walk")
    alerts = [{"component": "product-catalog", "alertname": "HighErrors", "summary": ""}]
    decision = doubt(
        first, ["frontend", "product-catalog"], alerts, walk, ["postgres", "quote"], [],
        {"postgres": ["accounting", "product-catalog"]}, config=["flagd"],
    )  # fmt: skip
    assert decision.root_cause is None
    assert decision.candidates == ["product-catalog", "quote", "postgres", "flagd"]
    assert "postgres's other dependents (accounting) raise none of this incident's alerts" in (
        decision.summary
    )
    assert decision.summary.endswith(
        " A configuration product-catalog reads (flagd) could fail it the same way too; check it"
        " last."
    )


def test_alerts_only_a_cpu_alert_leaves_the_traffic_sources_in_front_in_doubt() -> None:
    first = Decision("frontend", ["frontend"], 0.9, "frontend explains 2 of 2")
    alerts = [{"component": "frontend", "alertname": "ContainerCPUHigh", "summary": ""}]
    sources = [
        {"source": "load-generator", "path": ["load-generator", "frontend-proxy", "frontend"]},
        {"source": "mobile", "path": ["mobile", "api", "frontend"]},  # api does not alert
    ]
    walk = [Candidate("frontend", ["frontend", "frontend-proxy"], 1),
            Candidate("cart", ["frontend", "frontend-proxy"], 3)]  # fmt: skip
    decision = doubt(
        first, ["frontend", "frontend-proxy"], alerts, walk, ["cart"], [], {}, sources
    )  # fmt: skip
    assert decision.root_cause is None
    assert decision.candidates == ["frontend", "load-generator"]
    assert decision.ruled_out["cart"] == "frontend alerts about its own process (ContainerCPUHigh)"
    # without a traffic source in front, CPU is the process's own
    kept = doubt(first, ["frontend", "frontend-proxy"], alerts, walk, ["cart"], [], {}, [])
    assert kept.root_cause == "frontend"


def test_alerts_only_a_producer_whose_alert_names_the_broker_is_a_victim() -> None:
    walk = [
        Candidate("orders", ["accounting", "fraud-detection"], 2, kind="topic"),
        Candidate("kafka", ["accounting", "fraud-detection"], 4),
        Candidate("checkout", ["accounting", "fraud-detection"], 4, via_topic="orders"),
    ]
    first = Decision("orders", ["orders"], 0.7, "the topic")
    alerting = ["accounting", "fraud-detection", "checkout"]
    blamed = [{"component": "checkout", "peer": "kafka", "label": "upstream", "alertname": "D"}]
    kept = doubt(first, alerting, [], walk, [], blamed, {})
    assert kept.root_cause == "orders"
    assert kept.ruled_out["checkout"] == "its own alerts name kafka as the peer that fails"
    doubted = doubt(first, alerting, [], walk, [], [], {})
    assert doubted.root_cause is None and doubted.candidates == ["orders", "checkout"]


def test_alerts_only_a_backlog_on_the_cause_puts_its_alerting_readers_first() -> None:
    """A queue's backlog grows when its consumer stops reading as much as when the queue
    fails: the consumer that alerts (restarting) is not the broker's victim."""
    walk = [
        Candidate("rabbitmq", ["rabbitmq", "consumer"], 0, kind="datastore"),
        Candidate("consumer", ["consumer"], 0),
    ]
    first = Decision("rabbitmq", ["rabbitmq"], 0.9, "rabbitmq explains 2 of 2")
    alerts = [
        {"component": "rabbitmq", "alertname": "RabbitmqTooManyReadyMessages", "summary": ""},
        {"component": "consumer", "alertname": "ContainerRestarting", "summary": ""},
    ]
    decision = doubt(first, ["rabbitmq", "consumer"], alerts, walk, [], [], {})
    assert decision.root_cause is None and decision.candidates == ["consumer", "rabbitmq"]
    assert "only about a backlog" in decision.summary
    # any other kind of alert on the broker says more than a backlog: the walk stands
    down = [*alerts, {"component": "rabbitmq", "alertname": "RabbitmqDown", "summary": ""}]
    assert doubt(first, ["rabbitmq", "consumer"], down, walk, [], [], {}) is first


def test_a_client_whose_calls_into_every_server_stopped_is_the_cause() -> None:
    """Nothing fails or slowed; the consumer's calls into all three servers fell to a fifth
    while those servers answer their other clients at the usual rate."""
    fell = {"calls": 120.0, "rate_per_s": 0.4, "rate_change": 0.2}
    edges = [
        edge("consumer", "rabbitmq", **fell), edge("consumer", "graph", **fell),
        edge("consumer", "redis", **fell), edge("producer", "rabbitmq"),
        edge("web", "graph"), edge("reader", "redis"),
    ]  # fmt: skip
    walk = [Candidate("rabbitmq", ["rabbitmq", "consumer"], 0, kind="datastore"),
            Candidate("consumer", ["consumer"], 0)]  # fmt: skip
    decision = weigh(["rabbitmq", "consumer"], walk, edges, [], [], [], (), set(), win="w")
    assert decision is not None and decision.root_cause == "consumer"
    assert decision.confidence == 0.85
    assert decision.ruled_out["rabbitmq"].startswith(
        "answers other clients normally: producer's calls into rabbitmq: 2.00/s, 0 % failing"
    )
    # a server nobody else calls cannot be compared: the stop may be the server's
    alone = [e for e in edges if e["client"] != "reader"]
    assert weigh(["rabbitmq", "consumer"], walk, alone, [], [], [], (), set()) is None
    # traffic into the client fell too: it stopped arriving, the cause is in front of it
    fed = [*edges, edge("api", "consumer", **fell)]
    assert weigh(["rabbitmq", "consumer"], walk, fed, [], [], [], (), set()) is None


def test_a_reader_whose_calls_into_a_queue_with_a_backlog_stopped_is_the_cause() -> None:
    """Only the queue alerts, about a backlog; the one server its reader calls still takes the
    producer's calls as usual, while the reader's calls fell to a fifth: the reader stopped
    reading. The walk from the queue never reaches the reader (it depends on the queue)."""
    fell = {"calls": 120.0, "rate_per_s": 0.4, "rate_change": 0.2}
    edges = [edge("dispatch", "rabbitmq", **fell), edge("payment", "rabbitmq")]
    walk = [Candidate("rabbitmq", ["rabbitmq"], 0, kind="datastore")]
    decision = weigh(["rabbitmq"], walk, edges, [], [], [], (), set(), win=WIN,
                     backlog=["rabbitmq"])  # fmt: skip
    assert decision is not None and decision.root_cause == "dispatch", decision
    assert decision.confidence == 0.85
    assert "rabbitmq alerts only about a backlog, which a reader that stopped leaves." in (
        decision.summary
    )
    assert decision.ruled_out["rabbitmq"] == (
        "answers other clients normally: payment's calls into rabbitmq: 2.00/s, 0 % failing "
        "(23:05-23:15 UTC)"
    )


def test_a_consumer_that_stopped_reading_from_a_broker_is_found_by_the_calls_it_stopped() -> None:
    """The broker alerts about a backlog and a service the consumer writes to alerts that
    nothing arrives; the consumer reads through no call into the broker (its intake is a
    messaging edge from the producer, outside these edges) and the walk from the alerting
    components never reaches it. Its calls into both servers it uses fell to a twelfth while
    they answer their other clients as usual: it stopped reading. A slowdown elsewhere that
    reaches no alerting component (absorbed by its caller) does not hide it."""
    fell = {"calls": 50.0, "rate_per_s": 0.16, "rate_change": 0.08}
    edges = [
        edge("autograder", "gradebook", **fell), edge("autograder", "media", **fell),
        edge("api", "gradebook"), edge("video", "media"),
        edge("enrolment", "payments", latency_ms=85.0), edge("api", "enrolment"),
    ]  # fmt: skip
    walk = [Candidate("rabbitmq", ["rabbitmq", "gradebook"], 2, kind="datastore"),
            Candidate("gradebook", ["gradebook"], 0)]  # fmt: skip
    alerting = ["rabbitmq", "gradebook"]
    decision = weigh(alerting, walk, edges, [], [], [], (), set(), win=WIN, backlog=["rabbitmq"])
    assert decision is not None and decision.root_cause == "autograder", decision
    assert decision.confidence == 0.85
    assert decision.summary.endswith(
        "rabbitmq alerts only about a backlog, which a consumer that stopped reading leaves."
    )
    assert decision.ruled_out["gradebook"].startswith("answers other clients normally: api's")
    # the messages into it fell too (the producer's messaging edge): it stopped reading them,
    # for the backlog piles; with no backlog the same fall says nothing arrived to read
    fed = [*edges, edge("quiz", "autograder", connection_type="messaging_system", **fell)]
    found = weigh(alerting, walk, fed, [], [], [], (), set(), win=WIN, backlog=["rabbitmq"])
    assert found is not None and found.root_cause == "autograder"
    # no backlog alerting: a client that stopped calling an alerting service may have been
    # refused by it, or sent nothing to do; nobody is named from the rates
    assert weigh(alerting, walk, edges, [], [], [], (), set(), win=WIN) is None
    assert weigh(alerting, walk, fed, [], [], [], (), set(), win=WIN) is None
    # one server still served by the consumer as usual: it did not stop
    working = [e for e in edges if e["server"] != "media"] + [edge("autograder", "media")]
    assert weigh(alerting, walk, working, [], [], [], (), set(), backlog=["rabbitmq"]) is None


def test_one_server_that_stopped_answering_a_client_is_no_backlog_reader() -> None:
    """The same edges without a backlog alert on the queue (one server: the stop may be the
    server's, refusing that client), or with the producer's calls stopped too (the queue
    itself stopped): nobody is named from the rates."""
    fell = {"calls": 120.0, "rate_per_s": 0.4, "rate_change": 0.2}
    walk = [Candidate("rabbitmq", ["rabbitmq"], 0, kind="datastore")]
    edges = [edge("dispatch", "rabbitmq", **fell), edge("payment", "rabbitmq")]
    assert weigh(["rabbitmq"], walk, edges, [], [], [], (), set(), win=WIN) is None
    both = [edge("dispatch", "rabbitmq", **fell), edge("payment", "rabbitmq", **fell)]
    assert weigh(["rabbitmq"], walk, both, [], [], [], (), set(), backlog=["rabbitmq"]) is None


def test_camel_case_acronyms_are_words_so_alerts_classify() -> None:
    assert words("ContainerCPUHigh") == "Container CPU High"
    assert classify("ContainerCPUHigh") == "cpu"
    assert classify("JVMHeapHigh") == "memory"
    assert classify("HTTP5xxRatio") == "errors"
    # a queue's backlog in RabbitMQ's words is the same kind as a consumer group's lag
    assert classify("RabbitmqTooManyMessagesInQueue") == "lag"
    assert classify("RabbitmqQueueMessagesReady") == "lag"
    assert classify("QueueDepthHigh") == "lag"
    assert classify("RabbitmqTooManyUnackMessages") == "lag"
    assert classify("IncidentUnacknowledged") is None


def test_an_alert_is_the_kind_its_name_says_before_the_words_of_its_summary() -> None:
    """A new user's trial: errors alerts whose summaries mentioned a timeout read as latency,
    and a repeat of a confirmed errors lesson was held only as a lead."""
    assert classify("LoansAPIHigh5xx", "renewals returning 503, pool timeout from pgbouncer") == (
        "errors"
    )
    assert classify("PaymentErrors", "payments failing after timeout from psp") == "errors"
    assert classify("PostgresDiskSpaceCritical", "writes fail in 2 h at this rate") == "disk"
    # a name that says nothing classifiable: its summary decides
    assert classify("OrdersAlert", "connection pool exhausted") == "saturation"
    assert classify("OrdersAlert", "") is None


def test_a_dependency_slightly_slower_does_not_take_the_blame_for_a_much_slower_caller() -> None:
    """recommendation 800 ms slower, product-catalog (which it calls more now) 25 ms slower: the
    small slowdown downstream cannot explain the big one; with 600 ms more it could."""
    walk = [Candidate("recommendation", ["frontend", "recommendation"], 1),
            Candidate("product-catalog", ["frontend", "recommendation"], 3)]  # fmt: skip
    slow = edge("frontend", "recommendation", latency_ms=820.0)
    decision = weigh(
        ["frontend", "recommendation"], walk,
        [slow, edge("recommendation", "product-catalog", latency_ms=45.0)], [], [], [], (), set(),
    )  # fmt: skip
    assert decision is not None and decision.root_cause == "recommendation", decision.summary
    blamed = weigh(
        ["frontend", "recommendation"], walk,
        [slow, edge("recommendation", "product-catalog", latency_ms=620.0)], [], [], [], (),
        set(),
    )  # fmt: skip
    assert blamed is not None and blamed.root_cause == "product-catalog", blamed.summary


def test_a_client_failing_into_servers_that_answer_another_client_is_the_cause() -> None:
    """The edge's calls into two timelines fail; the writer's into the same timelines do not."""
    walk = [Candidate("edge", ["edge"], 0), Candidate("home", ["edge"], 1),
            Candidate("user-tl", ["edge"], 1), Candidate("posts", ["edge"], 2)]  # fmt: skip
    edges = [
        edge("edge", "home", fail_ratio=0.35), edge("edge", "user-tl", fail_ratio=0.35),
        edge("writer", "home"), edge("writer", "user-tl"),
        edge("home", "posts"), edge("user-tl", "posts"),
    ]  # fmt: skip
    decision = weigh(["edge"], walk, edges, [], [], [], (), set(), win="w")
    assert decision is not None and decision.root_cause == "edge"
    assert decision.confidence == 0.85
    # the timelines' own calls into the post store fail: reads reach it, the writer's writes do
    # not, so the failures follow the operation, not the client
    reads = [*edges[:4], edge("home", "posts", fail_ratio=0.6),
             edge("user-tl", "posts", fail_ratio=0.6)]  # fmt: skip
    behind = weigh(["edge"], walk, reads, [], [], [], (), set(), win="w")
    assert behind is not None and behind.root_cause == "posts", behind.summary


CACHED = [
    Candidate("posts", ["posts"], 0),
    Candidate("posts-cache", ["posts"], 1, kind="datastore"),
    Candidate("posts-db", ["posts"], 1, kind="datastore"),
]


def test_a_failing_cache_explains_the_slowness_of_the_database_beside_it() -> None:
    """posts' calls into its cache fail 71 %, its calls into its database slowed 9x (the misses
    land there): the slowdown weighs more (capped at 5x) yet the failing sibling is the cause."""
    edges = [
        edge("front", "posts", latency_ms=200.0),
        edge("posts", "posts-cache", fail_ratio=0.71),
        edge("posts", "posts-db", latency_ms=180.0),
    ]  # fmt: skip
    win = "2026-12-01T23:05:00Z/2026-12-01T23:15:00Z"
    decision = weigh(["posts"], CACHED, edges, [], [], [], (), set(), win=win)
    assert decision is not None and decision.root_cause == "posts-cache", decision.summary
    assert decision.confidence == 0.75
    assert decision.ruled_out["posts-db"] == (
        "slowed, not failing: posts's calls into posts-cache fail 71 % of 600, while its calls "
        "into posts-db only slowed (180 ms, the hour before: 20 ms) (23:05-23:15 UTC); a "
        "failing dependency's misses, retries and fallbacks load its sibling, and a slowdown "
        "fails no other dependency's calls"
    )
    assert decision.measured["posts-db"]["value"] == 0.71
    assert decision.measured["posts-db"]["source"] == "service graph"
    assert "posts-cache" in decision.measured["posts-db"]["query"]


def test_a_slowdown_does_not_set_aside_a_sibling_it_cannot_be_loaded_by() -> None:
    """Where the failing and the slowed dependency are not siblings of one client, or the
    slowed one fails too, or the failing one calls the slowed one (its failures may be its
    timeouts waiting on it), nothing says which came first: no rule sets either aside."""
    base = [edge("front", "posts", latency_ms=200.0)]
    cases = {
        "other clients": [edge("posts", "posts-db", latency_ms=180.0),
                          edge("reports", "posts-cache", fail_ratio=0.71)],
        "slowed and failing": [edge("posts", "posts-cache", fail_ratio=0.71),
                               edge("posts", "posts-db", latency_ms=180.0, fail_ratio=0.3)],
        "one calls the other": [edge("posts", "posts-cache", fail_ratio=0.71),
                                edge("posts", "posts-db", latency_ms=180.0),
                                edge("posts-cache", "posts-db", latency_ms=180.0)],
    }  # fmt: skip
    for why, more in cases.items():
        decision = weigh(["posts"], CACHED, base + more, [], [], [], (), set(), win="w")
        assert decision is not None, why
        assert decision.root_cause != "posts-cache" or decision.confidence != 0.75, why
        assert not any(r.startswith("slowed, not failing") for r in decision.ruled_out.values())


LONE = [Candidate("text", ["text"], 0), Candidate("urls", ["text"], 1),
        Candidate("mentions", ["text"], 1), Candidate("tags", ["text"], 1)]  # fmt: skip


WIN = "2026-12-01T23:05:00Z/2026-12-01T23:15:00Z"


def lone_edges(**changes: dict[str, Any]) -> list[dict[str, Any]]:
    """text calls urls, mentions and tags, nobody else does; each calls its own store."""
    rows = {
        "text>urls": {"fail_ratio": 0.25}, "text>mentions": {"fail_ratio": 0.25},
        "text>tags": {"fail_ratio": 0.25}, "urls>urls-db": {}, "mentions>mentions-db": {},
        "tags>tags-db": {},
    }  # fmt: skip
    rows |= changes
    return [edge(*k.split(">"), **v) for k, v in rows.items()]


def test_a_client_whose_every_server_fails_for_it_while_working_for_itself_is_the_cause() -> None:
    """No other client to compare: three servers that share nothing and whose own calls are
    healthy all fail for their one caller at once; one fault on its side explains it."""
    decision = weigh(["text"], LONE, lone_edges(), [], [], [], (), set(), win=WIN)
    assert decision is not None and decision.root_cause == "text", decision.summary
    assert decision.confidence == 0.6
    assert decision.ruled_out["urls"] == (
        "fails only for text, while it works for itself: urls's own calls into urls-db fail "
        "0 % of 600 (23:05-23:15 UTC)"
    )
    assert decision.measured["urls"]["query"] == (
        'traces_service_graph_request_failed_total{client="urls"} / _total'
    )


def test_a_leaf_failing_beside_servers_that_work_for_themselves_is_the_clients_doing() -> None:
    """tags makes no measured call (a leaf: nothing shows it working), but urls and mentions
    work for themselves and fail only for text: one fault on text's side explains the three,
    the leaf's reason saying it was not shown working."""
    edges = lone_edges(**{"tags>tags-db": {"calls": 0.0, "baseline_calls": 0.0}})
    decision = weigh(["text"], LONE, edges, [], [], [], (), set(), win=WIN)
    assert decision is not None and decision.root_cause == "text", decision.summary
    assert decision.confidence == 0.6
    assert decision.ruled_out["tags"] == (
        "fails only for text, as the servers that work for themselves do; it makes no measured "
        "call of its own, so nothing shows it working: calls from text into tags fail 25 % of "
        "600 (23:05-23:15 UTC)"
    )
    assert decision.measured["tags"]["value"] == 0.25
    assert {e["text"] for e in decision.evidence} >= {
        "calls from text into tags fail 25 % (the hour before: 0 %)"
    }
    assert decision.summary.endswith(
        "Its calls into tags, which make no measured call of their own, fail too: the same "
        "fault explains them."
    )


def test_no_lone_client_where_the_servers_could_fail_by_themselves_or_together() -> None:
    """A shared dependency, fewer than two servers shown working for themselves (a leaf, with
    no measured calls of its own, may fail by itself), a server whose own calls fail, a
    server of the client that still answers it, or a server another client fails into: the
    client is not named."""
    cases = {
        "shared store": {"tags>urls-db": {}},
        "shared in the world": {},
        "a leaf beside one working server": {
            "tags>tags-db": {"calls": 0.0},
            "mentions>mentions-db": {"calls": 0.0},
        },
        "own calls fail": {"urls>urls-db": {"fail_ratio": 0.5}},
        "one server answers": {"text>tags": {}},
        "another client fails": {"api>mentions": {"fail_ratio": 0.25}},
    }
    for why, change in cases.items():
        reach = {"urls": {"cache"}, "tags": {"cache"}} if why == "shared in the world" else {}
        decision = weigh(["text"], LONE, lone_edges(**change), [], [], [], (), set(), reach)
        assert decision is None or decision.root_cause != "text", why


def stall(*keep: str, **figures: Any) -> list[dict[str, Any]]:
    """The payments broker of a stall: two producers publish over `events` to three consumers
    (messaging edges fallen to a quarter but those in `keep`, `producer>consumer`), and the
    producers' own calls served as usual (`figures` changes them)."""
    flow = [
        edge(p, c, connection_type="messaging_system", calls=300.0, rate_per_s=0.5,
             baseline_rate_per_s=2.0, rate_change=1.0 if f"{p}>{c}" in keep else 0.25)
        for p in ("payments", "cards") for c in ("clearing", "statements", "screening")
    ]  # fmt: skip
    own = [edge("gateway", "payments"), edge("terminals", "cards"), edge("cards", "ledger")]
    return flow + [e | figures.get(f"{e['client']}>{e['server']}", {}) for e in own]


def stalled(edges: list[dict[str, Any]], consumers: tuple[str, ...] = ()) -> Decision | None:
    readers = set(consumers or ("clearing", "statements", "screening"))
    return stalled_topic(edges, "events", {"payments", "cards"}, readers, "broker", 3, 3, "")


def test_messages_that_stopped_from_every_live_producer_blame_the_broker() -> None:
    """Nothing fails or slowed; the messages over one topic fell on every producer -> consumer
    edge, from two producers that are alive (their other calls served): the broker that hosts
    the topic, not one consumer that stopped reading nor one producer that stopped writing."""
    found = stalled(stall())
    assert found is not None and (found.root_cause, found.confidence) == ("broker", 0.8)
    assert found.candidates == ["broker"]
    assert "payments is alive: gateway -> payments 2.00/s" in found.separated_by
    assert found.ruled_out["clearing"] == "one of 3 consumers of events whose messages all fell"
    assert {e["source"] for e in found.evidence} == {"messages"}
    assert len(found.evidence) == 6 and found.evidence[0]["value"] == 0.25


def test_a_stall_is_not_named_when_the_flow_says_otherwise() -> None:
    """Counter-cases: a consumer still getting messages from a producer (the broker delivers);
    one consumer only (`stopped_client`'s case: it stopped reading); a producer whose own calls
    stopped (it crashed: its messages stop with it). One producer alive: named, but under 0.5
    (it may have stopped publishing itself), the producer kept as a candidate."""
    assert stalled(stall("payments>statements")) is None
    assert stalled(stall(), consumers=("clearing",)) is None
    crashed = stall(**{"gateway>payments": {"rate_change": 0.1, "rate_per_s": 0.2}})
    assert stalled(crashed) is None
    one = [e for e in stall() if e["client"] != "cards" and e["server"] != "cards"]
    alone = stalled_topic(one, "events", {"payments"}, {"clearing", "statements", "screening"},
                          "broker", 3, 3, "")  # fmt: skip
    assert alone is not None and (alone.root_cause, alone.confidence) == ("broker", 0.45)
    assert alone.candidates == ["broker", "payments"]
    assert "payments may have stopped publishing itself" in alone.summary


# booking-svc publishes what the alerting consumers read; payments-db is two calls below it
TOPIC_WALK = [
    Candidate("booking-events", ["booking-events", "loyalty-svc", "notify-svc"], 0),
    Candidate("booking-svc", ["loyalty-svc", "notify-svc"], 1),
    Candidate("payments-db", ["loyalty-svc", "notify-svc"], 3, kind="datastore"),
]
TOPIC_ALERTING = ["loyalty-svc", "notify-svc", "booking-events"]


def test_a_slowdown_its_caller_absorbs_is_not_the_cause() -> None:
    # payments-db 21 -> 80 ms, yet payments-svc answers booking-svc in its usual time
    edges = [
        edge("payments-svc", "payments-db", latency_ms=80.0, baseline_latency_ms=21.0),
        edge("booking-svc", "payments-svc"),
        edge("edge-bff", "booking-svc"),
    ]
    decision = weigh(TOPIC_ALERTING, TOPIC_WALK, edges, [], [], [], (), set(), win="10m")
    assert decision is None  # nothing degraded reaches an alerting component: the walk decides


def test_a_slowdown_passed_on_to_the_callers_caller_still_blames_the_dependency() -> None:
    edges = [
        edge("payments-svc", "payments-db", latency_ms=800.0, baseline_latency_ms=21.0),
        edge("booking-svc", "payments-svc", latency_ms=900.0, baseline_latency_ms=30.0),
        edge("edge-bff", "booking-svc"),
    ]
    decision = weigh(TOPIC_ALERTING, TOPIC_WALK, edges, [], [], [], (), set(), win="10m")
    assert decision is not None and decision.root_cause == "payments-db"


def test_an_absorbed_slowdown_is_ruled_out_beside_a_cause_that_reaches_the_alerts() -> None:
    edges = [
        edge("payments-svc", "payments-db", latency_ms=80.0, baseline_latency_ms=21.0),
        edge("booking-svc", "payments-svc"),
        edge("loyalty-svc", "booking-events", fail_ratio=0.6),
    ]
    decision = weigh(TOPIC_ALERTING, TOPIC_WALK, edges, [], [], [], (), set(), win="10m")
    assert decision is not None and decision.root_cause == "booking-events"
    assert decision.ruled_out["payments-db"] == (
        "degraded (calls into payments-db take 80 ms (the hour before: 21 ms)), but "
        "payments-svc, which calls it, answers its own callers as usual: booking-svc's calls "
        "into payments-svc: 0 % of 600 failed, 20 ms (the hour before: 20 ms); it reaches no "
        "alerting component"
    )


# availability-svc reads avail-cache first and asks supplier-hub (then the bedbank) on a miss
CACHE_WALK = [
    Candidate("availability-svc", ["availability-svc", "edge-bff"], 0),
    Candidate("avail-cache", ["availability-svc", "edge-bff"], 1, kind="datastore"),
    Candidate("supplier-hub", ["availability-svc", "edge-bff", "supplier-hub"], 1),
    Candidate("wholesaler-client", ["availability-svc", "edge-bff", "supplier-hub"], 2),
]
CACHE_ALERTING = ["supplier-hub", "edge-bff", "availability-svc"]


def stampede(rate_into_bedbank: float, **bedbank: Any) -> list[dict[str, Any]]:
    return [
        edge("availability-svc", "avail-cache", latency_ms=400.0, fail_ratio=0.05),
        edge("availability-svc", "supplier-hub", latency_ms=2500.0, rate_change=6.0),
        edge(
            "supplier-hub",
            "wholesaler-client",
            latency_ms=1800.0,
            rate_change=rate_into_bedbank,
            **bedbank,
        ),
        edge("edge-bff", "availability-svc", latency_ms=4200.0),
    ]


def test_a_dependency_slowed_under_many_more_calls_is_loaded_not_the_origin() -> None:
    decision = weigh(CACHE_ALERTING, CACHE_WALK, stampede(5.5), [], [], [], (), set())
    assert decision is not None and decision.root_cause == "avail-cache"
    assert decision.ruled_out["wholesaler-client"] == (
        "slowed under more calls than usual (supplier-hub's 5.5x): loaded, not the origin"
    )


def test_a_dependency_that_slowed_at_its_usual_rate_or_fails_too_is_still_a_suspect() -> None:
    usual = weigh(CACHE_ALERTING, CACHE_WALK, stampede(1.0), [], [], [], (), set())
    assert usual is not None and usual.root_cause == "wholesaler-client"
    failing_too = weigh(
        CACHE_ALERTING, CACHE_WALK, stampede(5.5, fail_ratio=0.4), [], [], [], (), set()
    )
    assert failing_too is not None and failing_too.root_cause == "wholesaler-client"


def test_the_caller_that_sent_a_loaded_dependency_its_extra_calls_is_the_cause() -> None:
    # product-catalog calls postgres 2.7x as often as usual (a release's N+1 queries): both slow
    walk = [
        Candidate("product-catalog", ["product-catalog", "frontend"], 0),
        Candidate("postgres", ["product-catalog", "frontend"], 1, kind="datastore"),
    ]
    edges = [
        edge("product-catalog", "postgres", latency_ms=851.0, rate_change=2.7),
        edge("frontend", "product-catalog", latency_ms=1000.0),
    ]
    decision = weigh(["product-catalog", "frontend"], walk, edges, [], [], [], (), set())
    assert decision is not None and decision.root_cause == "product-catalog"
    assert decision.summary.endswith(
        " postgres slowed under more calls than usual (product-catalog's 2.7x): loaded, not the "
        "origin."
    )
    # at its usual rate the database behind it is the cause, as before
    edges[0]["rate_change"] = 1.0
    usual = weigh(["product-catalog", "frontend"], walk, edges, [], [], [], (), set())
    assert usual is not None and usual.root_cause == "postgres"


def test_a_reader_that_sends_a_database_many_more_calls_slows_its_other_readers_too() -> None:
    """A noisy neighbour: registry lost its cache and calls its database 18x as often; the
    database slows for workorders too, whose rate is as usual. The database is loaded, not the
    origin, and registry, which sent it the extra calls, is the cause; with registry's rate as
    usual the database is the cause again (both its readers slowed)."""
    walk = [
        Candidate("registry", ["registry", "billing"], 1),
        Candidate("assets-db", ["registry", "billing", "workorders"], 2, kind="datastore"),
    ]
    edges = [
        edge("registry", "assets-db", latency_ms=1200.0, rate_change=18.5),
        edge("workorders", "assets-db", latency_ms=1100.0),
        edge("billing", "registry", latency_ms=3100.0),
    ]
    alerting = ["billing", "workorders"]
    decision = weigh(alerting, walk, edges, [], [], [], (), set())
    assert decision is not None and decision.root_cause == "registry"
    assert decision.ruled_out["assets-db"] == (
        "slowed under more calls than usual (registry's 18.5x): loaded, not the origin"
    )
    edges[0]["rate_change"] = 1.0
    usual = weigh(alerting, walk, edges, [], [], [], (), set())
    assert usual is not None and usual.root_cause == "assets-db"


# A newsroom: the paywall and the syndication API both ask entitlements-svc; readers reach the
# paywall through the web front end; image-resizer and media-svc both read the media-store.
NEWS_WALK = [
    Candidate("entitlements-svc", ["paywall-svc", "syndication-api", "web-frontend"], 2),
    Candidate("paywall-svc", ["paywall-svc", "web-frontend"], 1),
    Candidate("syndication-api", ["syndication-api"], 0),
    Candidate("web-frontend", ["web-frontend"], 0),
]


def test_a_surge_that_never_reached_what_slowed_is_not_the_cause() -> None:
    """The front door's traffic rose 6x at the morning peak, but the service every alerting
    path shares slowed for both its callers at their usual rate (its CPU limit halved): the
    surge did not load it, it is the cause. With the surge's calls arriving there, the
    surge stays the cause."""
    slow = {"latency_ms": 3000.0}
    edges = [
        edge("readers", "web-frontend", rate_change=6.0, rate_per_s=12.0, latency_ms=3300.0),
        edge("web-frontend", "paywall-svc", latency_ms=3200.0),
        edge("paywall-svc", "entitlements-svc", **slow),
        edge("syndication-api", "entitlements-svc", **slow),
        edge("entitlements-svc", "subs-db"),
    ]
    alerting = ["paywall-svc", "syndication-api", "web-frontend"]
    decision = weigh(alerting, NEWS_WALK, edges, [], [], [], {"readers"}, set())
    assert decision is not None and decision.root_cause == "entitlements-svc"
    assert decision.summary.endswith(
        "Not the surge (readers's requests to web-frontend rose 6.0x (2.00/s -> 12.00/s)): "
        "calls from paywall-svc, syndication-api into entitlements-svc are degraded at their "
        "usual rate, and its own calls are as usual: the extra load did not reach it."
    )
    arrived = [*edges[:2], edge("paywall-svc", "entitlements-svc", rate_change=3.0, **slow),
               *edges[3:]]  # fmt: skip
    surge = weigh(alerting, NEWS_WALK, arrived, [], [], [], {"readers"}, set())
    assert surge is not None and surge.root_cause == "readers"


def test_a_server_failing_for_one_client_only_keeps_that_client_a_candidate() -> None:
    """media-store answers media-svc as usual and fails 15 % of image-resizer's reads: the
    measurement names media-store, under the top band, and keeps image-resizer a candidate
    (not a victim), since keys that do not exist fail the same way as a shard that does."""
    walk = [
        Candidate("media-store", ["image-resizer", "media-svc"], 2, kind="datastore"),
        Candidate("image-resizer", ["image-resizer", "media-svc"], 1),
    ]
    edges = [
        edge("media-svc", "image-resizer", fail_ratio=0.15),
        edge("image-resizer", "media-store", fail_ratio=0.15),
        edge("media-svc", "media-store", calls=900.0),
    ]
    decision = weigh(["image-resizer", "media-svc"], walk, edges, [], [], [], (), set())
    assert decision is not None
    assert (decision.root_cause, decision.candidates) == (
        "media-store",
        ["media-store", "image-resizer"],
    )
    assert decision.confidence == 0.6 and "image-resizer" not in decision.ruled_out
    assert "Only image-resizer's calls into media-store are degraded; media-svc's are served" in (
        decision.summary
    )
    # both clients failing: the store itself, at the top band, its clients victims
    both = [*edges[:2], edge("media-svc", "media-store", calls=900.0, fail_ratio=0.15)]
    store = weigh(["image-resizer", "media-svc"], walk, both, [], [], [], (), set())
    assert store is not None and (store.root_cause, store.confidence) == ("media-store", 0.95)
    assert store.ruled_out["image-resizer"].startswith("a victim of media-store")


def test_a_server_degraded_only_for_a_caller_that_raises_no_alert_is_set_aside() -> None:
    """The payment provider's client fails 90 % for payments, which both alerting services
    call; the tenant service is 57 ms slower only for the report service, which raises no
    alert, while the booking service is served in 20 ms: it is set aside (nothing measured
    carries it to the alerts), and the provider's client is named at the top band. Alone
    degraded, it is only a lead."""
    walk = [
        Candidate("psp-client", ["booking-svc", "folio-svc"], 2),
        Candidate("tenant-svc", ["booking-svc", "folio-svc"], 1),
    ]
    noise = edge("report-svc", "tenant-svc", latency_ms=57.0)
    edges = [
        edge("booking-svc", "payments-svc", fail_ratio=0.9),
        edge("folio-svc", "payments-svc", fail_ratio=0.9),
        edge("payments-svc", "psp-client", fail_ratio=0.9),
        noise,
        edge("booking-svc", "tenant-svc"),
    ]
    alerting = ["booking-svc", "folio-svc"]
    decision = weigh(alerting, walk, edges, [], [], [], (), set())
    assert decision is not None and (decision.root_cause, decision.confidence) == (
        "psp-client",
        0.95,
    )
    assert decision.ruled_out["tenant-svc"] == (
        "degraded only for report-svc, which raises no alert and is not degraded itself "
        "(booking-svc's calls into it are served as usual): nothing measured carries it to "
        "the alerting components"
    )
    alone = weigh(alerting, walk, [noise, edge("booking-svc", "tenant-svc")], [], [], [], (), set())
    assert alone is not None and (alone.root_cause, alone.confidence) == ("tenant-svc", 0.45)
    assert alone.summary.endswith("nothing measured carries it to the alerting components.")


def test_a_store_slowed_for_one_alerting_caller_explains_only_that_caller() -> None:
    """orders-db is slow only for erp-sync's batch (which alerts about its own merchant
    ERP), while station-svc and fleet-manager read it in 20 ms: it explains erp-sync alone,
    and the path planner, slowed for the fleet manager that both pickers and fleet reach,
    explains the other two and is named. Before, orders-db "explained" all three."""
    walk = [
        Candidate("orders-db", ["erp-sync", "fleet-manager", "station-svc"], 2, kind="datastore"),
        Candidate("path-planner", ["fleet-manager", "station-svc"], 2),
    ]
    edges = [
        edge("erp-sync", "orders-db", latency_ms=168.0),
        edge("station-svc", "orders-db"),
        edge("fleet-manager", "orders-db"),
        edge("station-svc", "fleet-manager"),
        edge("fleet-manager", "path-planner", latency_ms=45.0),
    ]
    alerting = ["erp-sync", "fleet-manager", "station-svc"]
    decision = weigh(alerting, walk, edges, [], [], [], (), set())
    assert decision is not None and decision.root_cause == "path-planner"
    assert decision.separated_by == "path-planner explains 2 alerting components, orders-db 1"
    assert decision.ruled_out["orders-db"].endswith(
        "; degraded only for erp-sync (station-svc's calls into it are served as usual), so "
        "it does not explain fleet-manager, station-svc"
    )
    # every caller slowed: the store itself, explaining all three
    slow = [edge(c, "orders-db", latency_ms=168.0) for c in ("station-svc", "fleet-manager")]
    store = weigh(alerting, walk, [edges[0], *slow, *edges[3:]], [], [], [], (), set())
    assert store is not None and store.root_cause == "orders-db"


def test_a_batch_that_floods_a_shared_service_starts_the_surge() -> None:
    """The nightly reconcile job, which consumes a topic (so it has a caller) and is no traffic
    source in the world file, sends the ledger 30x its usual calls; the ledger slows for
    payments too and passes the load on to its database. The job starts the surge: named as
    its source, over the ledger that "explains" both alerts. Before, the ledger was named."""
    flood = [
        edge("recon-job", "ledger-svc", calls=18_000.0, rate_change=30.0, latency_ms=900.0,
             baseline_latency_ms=700.0),
        edge("payments", "ledger-svc", latency_ms=900.0),
        edge("ledger-svc", "ledger-db", calls=18_000.0, rate_change=30.0, latency_ms=60.0),
        edge("orders", "recon-job", connection_type="messaging_system"),
        edge("recon-job", "accounts-db"),
    ]  # fmt: skip
    assert surge_origins(flood) == {"recon-job"}
    assert "recon-job" in traffic_clients(flood)  # what the investigator hands the rules
    walk = [
        Candidate("ledger-svc", ["ledger-svc", "payments"], 1),
        Candidate("ledger-db", ["ledger-svc", "payments"], 3, kind="datastore"),
    ]
    alerting = ["ledger-svc", "payments"]
    decision = weigh(alerting, walk, flood, [], [], [], surge_origins(flood), set())
    assert decision is not None and (decision.root_cause, decision.confidence) == (
        "recon-job",
        0.9,
    )
    assert decision.summary.startswith(
        "Traffic surge from recon-job: recon-job's requests to ledger-svc rose 30.0x"
    )
    # the ledger failing for payments: their retries follow the fault, they do not start it
    failing = [*flood[:1], edge("payments", "ledger-svc", fail_ratio=0.3), *flood[2:]]
    assert surge_origins(failing) == set()
    # a cache failing in front of the job: its misses are what it passes on
    missing = [*flood, edge("recon-job", "recon-cache", fail_ratio=0.2)]
    assert surge_origins(missing) == set()
    # more work sent to the job: the surge passes through it (`surge_upstream` follows it)
    fed = [*flood[:3], edge("orders", "recon-job", rate_change=5.0), *flood[4:]]
    assert surge_origins(fed) == set()


def test_a_dependency_slowed_a_little_does_not_explain_a_caller_failing_by_itself() -> None:
    """The provider directory fails 25 % and lost 22 s a call for scheduling and the patient
    BFF; its search cluster (which alerts yellow) answers it 36 ms slower. The cluster carries
    none of the directory's trouble, so it explains only its own alert and the directory,
    explaining the two callers, is named. Before, the cluster "explained" all three at 0.80."""
    walk = [
        Candidate("directory", ["patient-bff", "scheduling"], 2),
        Candidate("search", ["patient-bff", "scheduling", "search"], 2, kind="datastore"),
    ]
    edges = [
        edge("scheduling", "directory", fail_ratio=0.29, latency_ms=22_978.0),
        edge("patient-bff", "directory", fail_ratio=0.25, latency_ms=22_157.0),
        edge("directory", "search", latency_ms=56.0),
    ]
    alerting = ["patient-bff", "scheduling", "search"]
    decision = weigh(alerting, walk, edges, [], [], [], (), set())
    assert decision is not None and decision.root_cause == "directory"
    assert decision.ruled_out["search"].endswith(
        "; directory is degraded in its own right, far more than its calls into it, so it does "
        "not explain patient-bff, scheduling"
    )
    # the cluster's slowdown adding a tenth or more of what the directory lost: it carries it
    slow = [*edges[:2], edge("directory", "search", latency_ms=2_300.0)]
    carried = weigh(alerting, walk, slow, [], [], [], (), set())
    assert carried is not None and carried.root_cause == "search"
    # the directory only slow, failing nothing: a backlog multiplies a slower dependency's
    # time (an execution service 45 s behind over a database 930 ms slower), so it carries
    backlog = [
        edge("scheduling", "directory", latency_ms=22_978.0),
        edge("patient-bff", "directory", latency_ms=22_157.0),
        edges[2],
    ]
    queued = weigh(alerting, walk, backlog, [], [], [], (), set())
    assert queued is not None and "directory" not in (queued.ruled_out.get("search") or "")
    assert queued.root_cause == "search"


def test_an_alert_whose_calls_toward_a_slowdown_are_as_usual_is_not_explained_by_it() -> None:
    """A CI service: runner-api waits 42 s on secrets-svc (the cause), web-ui waits on the
    edge proxy in front of both; a red herring's alert on fleet-manager, whose calls into
    cloud-client are 650 ms slower. The walk has cloud-client reached by all three alerting
    components (runner-api -> scheduler -> fleet-manager -> cloud-client), but runner-api's
    calls into the scheduler, its one way there, are served as usual, and the proxy's way
    there is runner-api's: cloud-client explains fleet-manager alone, and secrets-svc, far
    slower, is the cause. Without the calls followed (`ways` None) the walk's three of three
    won, at 0.80 (an unseen CI story's third incident). Only alerts that say slow are
    followed so: wrong content reaches a caller through calls served as usual."""
    alerting = ["fleet-manager", "runner-api", "web-ui"]
    walk = [
        Candidate("secrets-svc", ["runner-api", "web-ui"], 3),
        Candidate("cloud-client", ["fleet-manager", "runner-api", "web-ui"], 9),
    ]
    edges = [
        edge("web-ui", "edge-proxy", latency_ms=4000.0, fail_ratio=0.02),
        edge("edge-proxy", "runner-api", latency_ms=40000.0, fail_ratio=0.09),
        edge("edge-proxy", "secrets-svc", latency_ms=30000.0, fail_ratio=0.2),
        edge("runner-api", "secrets-svc", latency_ms=42000.0, fail_ratio=0.09),
        edge("runner-api", "scheduler"),
        edge("scheduler", "fleet-manager"),
        edge("fleet-manager", "cloud-client", latency_ms=674.0),
    ]
    ways = {
        "edge-proxy": {"runner-api", "secrets-svc", "scheduler", "cloud-client"},
        "runner-api": {"secrets-svc", "scheduler", "cloud-client"},
        "scheduler": {"fleet-manager", "cloud-client"},
        "fleet-manager": {"cloud-client"},
    }
    before = weigh(alerting, walk, edges, [], [], [], (), set())
    assert before is not None and before.root_cause == "cloud-client"
    # runner-api and web-ui alert only about being slow; fleet-manager about its quota
    slow = ["runner-api", "web-ui"]
    found = weigh(alerting, walk, edges, [], [], [], (), set(), ways=ways, slow=slow)
    assert found is not None and found.root_cause == "secrets-svc"
    # alerts that do not say slow (wrong content reaches a caller through calls served as
    # usual) are not followed: the walk's three of three stand
    errors = weigh(alerting, walk, edges, [], [], [], (), set(), ways=ways)
    assert errors is not None and (errors.root_cause, errors.confidence) == (
        before.root_cause,
        before.confidence,
    )
    assert found.ruled_out["cloud-client"].startswith("degraded too, but less")
    assert carried("cloud-client", "fleet-manager", edges, ways)
    assert not carried("cloud-client", "runner-api", edges, ways)
    assert not carried("cloud-client", "web-ui", edges, ways)
    assert carried("secrets-svc", "web-ui", edges, ways)
    # nothing measured on its way: the walk decides
    assert carried("cloud-client", "billing-svc", edges, ways)
