"""`Triage.fast`: a storm's new firing alerts grouped in Python from one read of the open
incidents and written 1,000 per `triage_batch` query, exactly as alert-by-alert triage
(`triage_alert`) groups them, and alert by alert again when the graph changed in between."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
import redis

from adapters.falkordb import GraphStore, GraphUnavailable, SentInTurn, TenantGraph
from agents.tasks.coordination import claim
from agents.triage import triage as triage_module
from agents.triage.triage import Heads, alert_candidates, alert_value_rows, read_ahead, triage
from tests.conftest import demo_graph
from tests.triage import test_triage_batches
from tests.triage.test_triage_batches import WINDOW_MS, graph_queries, storm

HOLD_MS = 5_000


def another_delivery(seed: int) -> list[Any]:
    """Six alerts of a delivery other than the storm: keys and fingerprints of their own."""
    other = storm(6, seed=seed)
    for alert in other:
        alert.key, alert.fingerprint = f"o{alert.key}", f"o{alert.fingerprint}"
    return other


def shape(graph: TenantGraph) -> list[Any]:
    """Every incident with its alerts (how each joined) and its tasks, ids left out (a merge's
    `via` names the incident merged)."""
    return sorted(
        [r["status"], r["severity"], r["severity_rank"], r["firing"], r["components"],
         r["group_keys"], r["opened_at"], r["held"],
         [[re.sub(r"inc-[0-9a-f]{12}", "inc", str(v)) for v in a] for a in r["alerts"]],
         r["tasks"]]
        for r in graph.rows("bench_incident_shape")
    )  # fmt: skip


@pytest.mark.parametrize(("seed", "spread_s"), [(11, 0), (12, 1800), (13, 3600)])
def test_a_storm_onto_open_incidents_is_grouped_as_alert_by_alert_triage_does(
    store: GraphStore, seed: int, spread_s: int
) -> None:
    # an earlier delivery left open incidents (one per component) the storm may join, bridge
    # (a merge: alert by alert from there) or lie beyond (a held page)
    earlier = storm(12, seed=seed + 100, spread_s=spread_s)
    alerts = storm(1500, seed=seed, spread_s=spread_s)
    for alert in alerts:
        alert.key, alert.fingerprint = f"s{alert.key}", f"s{alert.fingerprint}"
    fast = demo_graph(store, f"fast{seed}")
    single = demo_graph(store, f"single{seed}")
    for graph, batch in ((fast, True), (single, False)):
        triage(graph, earlier, WINDOW_MS, batch=False, hold_ms=HOLD_MS)
        report = triage(graph, alerts, WINDOW_MS, batch=batch, hold_ms=HOLD_MS)
        assert report.accepted == 1500
    assert shape(fast) == shape(single)


def test_a_storm_is_a_few_writes(store: GraphStore, falkordb: Any) -> None:
    graph = demo_graph(store, "fastwrites")
    before = graph_queries(falkordb)
    report = triage(graph, storm(3000, seed=21), WINDOW_MS)
    # triage_context, then 3 triage_batch writes (unless a merge sends a few alone), settling
    assert report.accepted == 3000 and graph_queries(falkordb) - before < 12


def test_a_graph_changed_since_the_read_sends_the_storm_alert_by_alert(
    store: GraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # another delivery opens incidents between the storm's read and its first write: the write
    # sees the open incidents differ and writes nothing; the storm then goes alert by alert,
    # and ends grouped as if that delivery had come first
    other = another_delivery(seed=31)
    alerts = storm(800, seed=32)
    changed = demo_graph(store, "fastchanged")
    reference = demo_graph(store, "fastreference")
    triage(reference, other, WINDOW_MS, batch=False)
    triage(reference, alerts, WINDOW_MS, batch=False)
    written = writes_seen(monkeypatch)
    sent: list[int] = []
    original = SentInTurn.send

    def interfering(self: SentInTurn, query: str, params: Any) -> None:
        if query == "triage_batch" and not sent:
            triage(changed, other, WINDOW_MS, batch=False)
        sent.append(len(params["alert_rows"]))
        original(self, query, params)

    monkeypatch.setattr(SentInTurn, "send", interfering)
    report = triage(changed, alerts, WINDOW_MS)
    monkeypatch.setattr(SentInTurn, "send", original)
    assert written[0] == 0 and report.accepted == 800
    assert [g[:1] + g[3:6] + g[8:] for g in map(list, shape(changed))] == [
        g[:1] + g[3:6] + g[8:] for g in map(list, shape(reference))
    ]


def test_a_lone_alert_is_no_batch(graph: TenantGraph, monkeypatch: Any) -> None:
    seen: list[str] = []
    original = TenantGraph.one

    def recording(self: TenantGraph, query: str, params: dict[str, Any] | None = None) -> Any:
        seen.append(query)
        return original(self, query, params)

    monkeypatch.setattr(TenantGraph, "one", recording)
    triage(graph, storm(1, seed=41), WINDOW_MS)
    # it opens an incident: read and written by `triage_lone` (tests/triage/test_triage_lone.py)
    assert seen == ["triage_lone"]
    assert triage_module.FAST_MIN == 2


def writes_seen(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that gets each `triage_batch` answer's `written` as `Triage.fast` reads them."""
    written: list[int] = []
    original = SentInTurn.answers

    def answers(self: SentInTurn) -> list[dict[str, Any] | None]:
        found = original(self)
        written.extend(int(row["written"]) if row else 0 for row in found)
        return found

    monkeypatch.setattr(SentInTurn, "answers", answers)
    return written


def stored_alerts(graph: TenantGraph) -> int:
    return sum(len(r["fingerprints"]) for r in graph.rows("bench_incident_groups"))


def test_a_write_after_a_refused_one_writes_nothing_though_sent_before_its_answer(
    store: GraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the writes go out before the ones before them answer; the second is refused (one of its
    # alerts came in another delivery meanwhile), and the third, decided as if the second had
    # written, must not write either (`$after`), though the open incidents are as it expects
    # (one service: the first write opened the one incident every later alert joins): the
    # storm goes on alert by alert from the second batch and ends as if that alert came first
    monkeypatch.setattr(test_triage_batches, "SERVICES", ["checkout"])
    alerts = storm(2500, seed=42)
    by_key = {a.key: a for a in alerts}
    graph, reference = demo_graph(store, "fastafter"), demo_graph(store, "fastafterref")
    written = writes_seen(monkeypatch)
    original = SentInTurn.send
    batches: list[list[str]] = []

    def interfering(self: SentInTurn, query: str, params: Any) -> None:
        if query == "triage_batch" and len(batches) == 1:
            for _ in range(200):  # the first write ran (it was sent, not read)
                if stored_alerts(graph) == 1000:
                    break
                time.sleep(0.01)
            triage(graph, [by_key[params["alert_rows"][0][0]]], WINDOW_MS, batch=False)
        batches.append([row[0] for row in params["alert_rows"]])
        original(self, query, params)

    monkeypatch.setattr(SentInTurn, "send", interfering)
    report = triage(graph, alerts, WINDOW_MS)
    monkeypatch.setattr(SentInTurn, "send", original)
    assert [len(b) for b in batches] == [1000, 1000, 500] and written == [1000, 0, 0]
    assert report.accepted == stored_alerts(graph) == 2500  # one of them the other way
    first, early = set(batches[0]), batches[1][0]
    triage(reference, [a for a in alerts if a.key in first], WINDOW_MS, batch=False)
    triage(reference, [by_key[early]], WINDOW_MS, batch=False)
    rest = [a for a in alerts if a.key not in first and a.key != early]
    triage(reference, rest, WINDOW_MS, batch=False)
    assert shape(graph) == shape(reference)


@pytest.mark.parametrize("claimed", [False, True])
def test_a_storm_leaves_a_reinvestigation_only_once_the_first_investigation_started(
    store: GraphStore, monkeypatch: pytest.MonkeyPatch, claimed: bool
) -> None:
    # the storm's later writes add components to incidents its first write opened: while their
    # `investigate` task is unclaimed it will read every alert, so the writes leave no
    # `reinvestigate` task and nothing is settled after them, as alert by alert; once it is
    # claimed (here: by a worker just after the first write), the tasks are left and settled
    alerts = storm(3000, seed=52)
    original, send = TenantGraph.rows, SentInTurn.send
    asked: list[tuple[str, int]] = []
    fast = demo_graph(store, f"fastsettled{int(claimed)}")

    def recording(self: TenantGraph, query: str, params: Any = None) -> Any:
        asked.append((query, 0))
        return original(self, query, params)

    def sending(self: SentInTurn, query: str, params: Any) -> None:
        if claimed and len([q for q, _ in asked if q == "triage_batch"]) == 1:
            for _ in range(200):  # the first write ran (it was sent, not read)
                if stored_alerts(fast) == 1000:
                    break
                time.sleep(0.01)
            while claim(fast, ["investigate"], "w", 30_000, 5):
                pass
        asked.append((query, len(params["reinvestigate"])))
        send(self, query, params)

    monkeypatch.setattr(SentInTurn, "send", sending)
    monkeypatch.setattr(TenantGraph, "rows", recording)
    triage(fast, alerts, WINDOW_MS)
    monkeypatch.setattr(TenantGraph, "rows", original)
    monkeypatch.setattr(SentInTurn, "send", send)
    assert sum(n for q, n in asked if q == "triage_batch") > 0  # components new to incidents
    assert ("settle_reinvestigations" in [q for q, _ in asked]) is claimed
    left = [kind for row in shape(fast) for kind in row[-1]]
    assert ("reinvestigate" in left) is claimed and left.count("investigate") == 2
    if not claimed:
        single = demo_graph(store, "fastsettledsingle")
        triage(single, alerts, WINDOW_MS, batch=False)
        assert shape(fast) == shape(single)


def test_a_component_both_named_and_of_the_group_is_walked_once(store: GraphStore) -> None:
    # a later storm of a group names the components its open incidents hold: their links are
    # read once (they were read twice, once as named and once as the group's), the same rows
    # as without the group
    graph = demo_graph(store, "walkedonce")
    alerts = storm(40, seed=61)
    triage(graph, alerts, WINDOW_MS)
    _, names = alert_candidates(alerts)
    read = {"candidates": names, "keys": [], "hops": 4, "lo": 1, "hi": 0, "fingerprints": [],
            "topology": "", "fresh": [], "walked": []}  # fmt: skip
    alone = graph.one("triage_context", read | {"group_keys": []})
    grouped = graph.one("triage_context", read | {"group_keys": [alerts[0].group_key]})
    assert alone and grouped and alone["grouped"] == []
    assert grouped["grouped"] and set(grouped["grouped"]) <= {m["name"] for m in alone["matched"]}
    assert len(alone["links"]) > 10
    assert grouped["links"] == alone["links"]


@pytest.mark.parametrize("same", [True, False])
def test_a_read_started_ahead_is_taken_only_for_the_same_alerts(
    store: GraphStore, monkeypatch: pytest.MonkeyPatch, same: bool
) -> None:
    # the webhook sends triage's read while it builds the alerts (`read_ahead`): triage takes
    # that answer when it would have read the same, and closes it and reads again otherwise
    # (here: the read was sent for the storm's alerts but one was left out, as a heartbeat
    # is); either way the graph ends as without a read ahead
    alerts = storm(1200, seed=71)
    triaged = alerts if same else alerts[1:]
    original = TenantGraph.one
    asked: list[str] = []

    def recording(self: TenantGraph, query: str, params: Any = None) -> Any:
        asked.append(query)
        return original(self, query, params)

    ahead_graph, plain_graph = (
        demo_graph(store, f"ahead{int(same)}"),
        demo_graph(store, f"plain{int(same)}"),
    )
    monkeypatch.setattr(TenantGraph, "one", recording)
    ahead = read_ahead(ahead_graph, Heads.of(alerts), WINDOW_MS, reopen_ms=600_000)
    assert ahead is not None and ahead.params["fingerprints"]
    closed: list[bool] = []
    close = ahead.answer.close
    monkeypatch.setattr(ahead.answer, "close", lambda: closed.append(True) or close())
    report = triage(ahead_graph, triaged, WINDOW_MS, reopen_ms=600_000, ahead=ahead)
    assert asked.count("triage_context") == (0 if same else 1) and closed == [True] * (not same)
    monkeypatch.setattr(TenantGraph, "one", original)
    triage(plain_graph, triaged, WINDOW_MS, reopen_ms=600_000)
    assert report.accepted == len(triaged) and shape(ahead_graph) == shape(plain_graph)


@pytest.mark.parametrize("answered", [False, True])
def test_a_storms_alert_values_are_worked_out_while_its_read_ahead_is_under_way(
    store: GraphStore, monkeypatch: pytest.MonkeyPatch, answered: bool
) -> None:
    # with a read sent ahead whose answer is not in yet, each alert's stored values are worked
    # out before triage waits on it (none is left for deciding the batches); with the answer
    # in, none before: they are worked out batch by batch as the writes go. The graph is the
    # same either way
    alerts = storm(1100, seed=73)
    ahead_graph = demo_graph(store, f"valuesahead{int(answered)}")
    plain_graph = demo_graph(store, f"valuesplain{int(answered)}")
    original = triage_module.alert_values
    calls: list[str] = []
    monkeypatch.setattr(triage_module, "alert_values",
                        lambda alert: calls.append(alert.key) or original(alert))  # fmt: skip
    ahead = read_ahead(ahead_graph, Heads.of(alerts), WINDOW_MS)
    assert ahead is not None
    monkeypatch.setattr(ahead.answer, "answered", lambda: answered)
    answer = ahead.answer.one  # the answer taken: the values worked out before it, or none

    def taken() -> Any:
        before = [] if answered else sorted(a.key for a in alerts)
        assert sorted(calls) == before
        return answer()

    monkeypatch.setattr(ahead.answer, "one", taken)
    report = triage(ahead_graph, alerts, WINDOW_MS, ahead=ahead)
    assert report.accepted == len(alerts) and len(calls) == len(alerts)
    monkeypatch.setattr(triage_module, "alert_values", original)
    triage(plain_graph, alerts, WINDOW_MS)
    assert shape(ahead_graph) == shape(plain_graph)
    assert alert_value_rows(alerts) == {id(a): original(a) for a in alerts}


def test_no_read_ahead_for_a_delivery_built_sooner_than_handed_over(store: GraphStore) -> None:
    # fewer firing alerts than AHEAD_MIN are built in less time than the read takes (and a
    # lone alert is read by `triage_lone`): read as before, on no connection of its own
    graph = demo_graph(store, "aheadsmall")
    assert triage_module.AHEAD_MIN == 1000
    resolved = storm(1000, seed=81, status="resolved")
    assert read_ahead(graph, Heads.of(storm(1, seed=81)), WINDOW_MS) is None
    assert read_ahead(graph, Heads.of(storm(999, seed=82) + resolved), WINDOW_MS) is None
    assert read_ahead(graph, Heads.of(storm(1000, seed=83)), WINDOW_MS) is not None


def test_a_storms_writes_are_all_sent_before_the_first_answer_is_read(
    store: GraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # each write goes out as soon as it is decided: the server runs them back to back while
    # the next is decided, with no wait for this process to read an answer in between
    graph = demo_graph(store, "inturn")
    events: list[str] = []
    send, answers = SentInTurn.send, SentInTurn.answers
    monkeypatch.setattr(SentInTurn, "send",
                        lambda self, q, p: events.append(q) or send(self, q, p))  # fmt: skip
    monkeypatch.setattr(SentInTurn, "answers",
                        lambda self: events.append("answers") or answers(self))  # fmt: skip
    report = triage(graph, storm(3000, seed=85), WINDOW_MS)
    assert report.accepted == 3000
    assert events == ["triage_batch"] * 3 + ["answers"]


def test_a_write_that_fails_stops_the_storm_with_its_error(
    store: GraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the database goes away while the second write is sent: triage raises it (the webhook
    # answers 503 and the sender retries), nothing after it is sent, and the first write ran
    # whole or not at all (its connection was closed with it, maybe before the server read
    # it): the sender's retry stores every alert once either way
    graph = demo_graph(store, "aheadfailed")
    alerts = storm(3500, seed=91)
    original = SentInTurn.send
    sent: list[int] = []

    def failing(self: SentInTurn, query: str, params: Any) -> None:
        if query == "triage_batch" and len(sent) == 1:
            connection, failed = self._connection, []

            def gone(*args: Any, **kwargs: Any) -> None:
                if failed:  # the connection, back in the pool, works again
                    return type(connection).send_command(connection, *args, **kwargs)
                failed.append(True)
                raise redis.ConnectionError("gone")

            monkeypatch.setattr(connection, "send_command", gone)
        if self._error is None:
            sent.append(len(params["alert_rows"]))
        original(self, query, params)

    monkeypatch.setattr(SentInTurn, "send", failing)
    with pytest.raises(GraphUnavailable):
        triage(graph, alerts, WINDOW_MS)
    monkeypatch.setattr(SentInTurn, "send", original)
    assert sent == [1000, 1000]
    assert stored_alerts(graph) in (0, 1000)
    assert triage(graph, alerts, WINDOW_MS).accepted == 3500  # the sender's retry
    assert stored_alerts(graph) == 3500
