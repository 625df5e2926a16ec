"""Weigh live evidence against the walk: which component do the calls themselves blame?

Alerts say where it hurts, not why; the next thing an SRE reads is the call graph's own health.
Pure functions over tool results (`agents/investigate/tools/evidence.py`, `alert_peers`):

1. A component is *degraded* when calls into it fail (ratio at least `FAIL_RATIO` and that much
   above its baseline), got slow (mean server time at least `SLOW_FACTOR` x its baseline and
   `SLOW_MS` more), its spans fail (span metrics, same thresholds), its scrape target is down,
   or an alert on a caller names it (peer label; the weakest signal).
2. A degraded component whose own calls into a degraded dependency fail, or slowed by at
   least half the time it lost itself (`accounts_for`), or whose walk reaches a degraded
   dependency, is a *victim*; degraded components that are not victims
   are the *roots*. So a silent dependency whose incoming calls fail beats its alerting caller.
   A dependency that only slowed beside a failing sibling of the same client is set aside
   (`fallbacks`: the failing one's misses and retries load it), and so is one that only
   slowed under `RATE_JUMP` x its usual calls (`surged_into`: something sent it more work)
   and a silent one whose callers still serve their own callers as usual (`absorbed`: its
   degradation reaches no alerting component). A root degraded only in one client's calls,
   its other clients served as usual, keeps that client a candidate, not a victim
   (`asked_by_one`). A root explains only the alerting components that reach it through the
   clients that carry its trouble (`confined`): not through calls it serves as usual, nor
   through a client failing in its own right that a few ms more cannot explain; nor an
   alerting component that alerts only about being slow whose own measured calls on its way to
   the root are all as usual, there or further along (`carried`: latency adds up along the
   calls).
3. A client (traffic source) whose request rate into the incident's components jumped at least
   `RATE_JUMP` x is the cause: the load comes from there (this replaces alert-name lists);
   so is a caller that starts a surge itself (`surge_origins`: a batch flooding a shared
   service, which has callers of its own or consumes a topic);
   followed up through the callers whose own rate jumped (`surge_upstream`) to its source,
   unless what degraded near the incident never got the extra calls (`load_missed`).
   With nothing degraded, a client whose calls into every server it uses fell while those
   servers serve others as usual is the cause (`stopped_client`: a consumer that stopped; one
   server is enough when it alerts only about a backlog). A client whose calls fail into
   servers that answer others normally (`client_fault`), or into every server it uses while
   at least two of them work for themselves (`lone_client`), is the cause.
   With nothing degraded, messages over a topic that stopped on every producer -> consumer
   edge, to two consumers or more, from producers that are alive blame the topic's broker
   (`stalled_topic`; the investigator asks it of the walk's topics).
4. Roots rank by how many alerting components they explain, then by magnitude. The winner is
   conclusive when it explains more than the runner-up, or its magnitude is `SEPARATION` x
   the runner-up's, or it alone changed recently; otherwise the finding is inconclusive and
   names the roots in order. Confident and wrong is the worst outcome (docs/architecture.md,
   evidence).

With alerts only, `doubt` keeps the walk honest: an alerting cause with a silent dependency
that could fail behind it is inconclusive unless an alert about its own process separates
them, and a CPU alert leaves the traffic sources in front of it in doubt.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from agents.failure_kinds import SELF_KINDS, classify, kind_text, words
from agents.investigate.decision import Candidate, Decision
from agents.investigate.measure import (
    SERVICE_GRAPH_QUERY,
    SPAN_QUERY,
    UP_QUERY,
    calls_into,
    healthy,
    measurement,
    span,
)

#: How a rule-out that measured a component's trouble coming from a dependency begins.
VICTIM_OF = "a victim of "
#: The service graph's connection type of a producer -> consumer edge over a broker.
MESSAGING = "messaging_system"
#: Calls into a component fail at least this often, and this much more than in the baseline.
FAIL_RATIO = 0.05
#: A single caller's edge speaks for its server from this many calls in the window.
EDGE_MIN_CALLS = 20
#: Calls failing this often count as failing even against a spoiled baseline.
HIGH_FAIL_RATIO = 0.2
#: Mean server time at least this many times the baseline, and at least `SLOW_MS` more.
SLOW_FACTOR = 2.0
SLOW_MS = 20.0
#: Without a baseline, a mean server time this long (ms) counts as slow.
SLOW_ABSOLUTE_MS = 1000.0
#: A traffic source's request rate at least this many times its baseline.
RATE_JUMP = 2.0
#: A dependency's added latency explains its caller's slowdown from this share of it on.
ACCOUNTS_FOR = 0.5
#: The winner's magnitude at least this many times the runner-up's separates them.
SEPARATION = 2.0
#: Magnitude of a signal that only an alert's peer label gives (weaker than any measurement).
ALERT_MAGNITUDE = 0.1
SELF_WORDS = re.compile(r"\bgc\b|garbage|jvm|heap|\boom", re.IGNORECASE)


@dataclass
class Signal:
    """One piece of evidence that a component is degraded: `source` (calls, latency, spans,
    down, alert), `magnitude` (0-1: fail-ratio rise, scaled slowdown, 1 for down) and a line."""

    component: str
    source: str
    magnitude: float
    text: str
    #: What was measured: a fail ratio (calls, spans), a slowdown factor (latency), 1 (down,
    #: alert). Learned checks take their thresholds from it (`checks.evidence_checks`).
    value: float | None = None


def pct(ratio: float | None) -> str:
    """0.4123 -> `41 %`; small non-zero ratios keep a decimal (`0.4 %`); None (too few calls,
    or no series) -> `no data`, never a healthy-looking number."""
    if ratio is None:
        return "no data"
    value = 100 * ratio
    return f"{value:.0f} %" if value >= 10 or value == 0 else f"{value:.1f} %"


def inbound(edges: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Calls into each server summed over its clients: calls, failed, baseline calls and
    failed, and call-weighted mean latency now and in the baseline (ms)."""
    into: dict[str, dict[str, float]] = {}
    for e in edges:
        s = into.setdefault(e["server"], dict.fromkeys(
            ("calls", "failed", "base", "base_failed", "lat", "lat_n", "base_lat", "base_lat_n"),
            0.0,
        ))  # fmt: skip
        s["calls"] += e["calls"]
        s["failed"] += e["failed"]
        s["base"] += e["baseline_calls"]
        s["base_failed"] += (e["baseline_fail_ratio"] or 0.0) * e["baseline_calls"]
        if e["latency_ms"] is not None:
            s["lat"] += e["latency_ms"] * e["calls"]
            s["lat_n"] += e["calls"]
        if e["baseline_latency_ms"] is not None:
            s["base_lat"] += e["baseline_latency_ms"] * e["baseline_calls"]
            s["base_lat_n"] += e["baseline_calls"]
    return into


def fail_ratios(calls: dict[str, float]) -> tuple[float | None, float | None]:
    """`(fail ratio now, the hour before)` of the calls into a component (`inbound` totals),
    each None under 5 calls."""
    ratio = calls["failed"] / calls["calls"] if calls["calls"] >= 5 else None
    return ratio, calls["base_failed"] / calls["base"] if calls["base"] >= 5 else None


def failing(ratio: float | None, baseline: float | None) -> bool:
    """A fail ratio that counts as failing against its baseline (rule 1). A ratio of
    `HIGH_FAIL_RATIO` or more fails whatever the baseline (a fault older than the incident
    window spoils the baseline; one call in five failing is never normal)."""
    if ratio is None or ratio < FAIL_RATIO:
        return False
    return ratio - (baseline or 0.0) >= FAIL_RATIO or ratio >= HIGH_FAIL_RATIO


def slowed(latency: float | None, baseline: float | None) -> bool:
    """A mean latency that counts as slowed against its baseline (rule 1); without a baseline
    (series younger than the incident), only a mean of `SLOW_ABSOLUTE_MS` or more."""
    if latency is None:
        return False
    if baseline is None or baseline <= 0:
        return latency >= SLOW_ABSOLUTE_MS
    return latency >= SLOW_FACTOR * baseline and latency - baseline >= SLOW_MS


def edge_degraded(e: dict[str, Any]) -> bool:
    """One client -> server edge fails or slowed (rule 1, per edge)."""
    return failing(e["fail_ratio"], e["baseline_fail_ratio"]) or slowed(
        e["latency_ms"], e["baseline_latency_ms"]
    )


def stopped(e: dict[str, Any]) -> bool:
    """One edge's calls fell to `STOPPED` of their rate the hour before, or lower (an edge
    with no earlier rate, `rate_change` None, has not stopped)."""
    return e["rate_change"] is not None and e["rate_change"] <= STOPPED


def as_usual(e: dict[str, Any]) -> bool:
    """One edge carries its calls as usual: not stopped, not failing, not slowed."""
    return not stopped(e) and not edge_degraded(e)


def signals(
    edges: list[dict[str, Any]],
    services: list[dict[str, Any]],
    down: list[dict[str, Any]],
    peers: list[dict[str, Any]],
) -> dict[str, list[Signal]]:
    """Every degraded component with its signals (rule 1), strongest first."""
    out: dict[str, list[Signal]] = {}

    def add(name: str, source: str, magnitude: float, text: str, value: float = 1.0) -> None:
        out.setdefault(name, []).append(
            Signal(name, source, round(magnitude, 4), text, round(value, 4))
        )

    into: dict[str, list[dict[str, Any]]] = {}
    for e in edges:
        if e["calls"] >= EDGE_MIN_CALLS:
            into.setdefault(e["server"], []).append(e)
    for name, s in inbound(edges).items():
        ratio, base = fail_ratios(s)
        if not failing(ratio, base):
            # Only some callers may suffer (a flag evaluated by two of eleven readers): then
            # the worst of their edges speaks, naming them.
            bad = [
                e for e in into.get(name, []) if failing(e["fail_ratio"], e["baseline_fail_ratio"])
            ]
            if bad:
                worst = max(bad, key=lambda e: e["fail_ratio"])
                ratio, base = worst["fail_ratio"], worst["baseline_fail_ratio"]
                callers = ", ".join(sorted(e["client"] for e in bad))
                text = (
                    f"calls from {callers} into {name} fail {pct(ratio)} "
                    f"(the hour before: {pct(base)})"
                )
                add(name, "calls", _rise(ratio, base), text, ratio)
        else:
            assert ratio is not None
            text = f"calls into {name} fail {pct(ratio)} (the hour before: {pct(base)})"
            add(name, "calls", _rise(ratio, base), text, ratio)
        lat = s["lat"] / s["lat_n"] if s["lat_n"] else None
        base_lat = s["base_lat"] / s["base_lat_n"] if s["base_lat_n"] else None
        who = ""
        if not slowed(lat, base_lat):
            slow = [
                e for e in into.get(name, []) if slowed(e["latency_ms"], e["baseline_latency_ms"])
            ]
            if not slow:
                continue
            worst = max(slow, key=lambda e: e["latency_ms"])
            lat, base_lat = worst["latency_ms"], worst["baseline_latency_ms"]
            who = f" from {', '.join(sorted(e['client'] for e in slow))}"
        assert lat is not None
        factor = lat / base_lat if base_lat else SLOW_FACTOR * lat / SLOW_ABSOLUTE_MS
        before = f"{base_lat:.0f} ms" if base_lat else "no data"
        text = f"calls{who} into {name} take {lat:.0f} ms (the hour before: {before})"
        add(name, "latency", min(1.0, (factor - 1) / 4), text, factor)
    for row in services:
        if failing(row["error_ratio"], row["baseline_error_ratio"]):
            rise = row["error_ratio"] - (row["baseline_error_ratio"] or 0.0)
            add(row["component"], "spans", rise,
                f"{pct(row['error_ratio'])} of {row['component']}'s spans fail "
                f"(the hour before: {pct(row['baseline_error_ratio'])})",
                row["error_ratio"])  # fmt: skip
    for row in down:
        add(row["component"], "down", 1.0, f"{row['component']}'s scrape target is down")
    for row in peers:
        add(row["peer"], "alert", ALERT_MAGNITUDE,
            f"alert {row['alertname']} on {row['component']} names {row['peer']} "
            f"({row['label']})")  # fmt: skip
    for sigs in out.values():
        sigs.sort(key=lambda g: -g.magnitude)
    return out


def accounts_for(
    e: dict[str, Any], caller: dict[str, float] | None, share: float = ACCOUNTS_FOR
) -> bool:
    """Whether a degraded call edge client -> server can explain its client's own degradation
    (rule 2): failing calls can (one failing dependency fails a whole request), and so can a
    slowdown that adds at least `share` (`ACCOUNTS_FOR`) of the time the client's own callers
    lost. A dependency 20 ms slower cannot explain a client 800 ms slower: it is more likely
    slowed by the client's own fault (more calls, retries) than the cause of it. `caller`: the
    client's inbound totals (`inbound`), None when nothing calls it."""
    if failing(e["fail_ratio"], e["baseline_fail_ratio"]):
        return True
    if caller is None or not caller["lat_n"] or not caller["base_lat_n"]:
        return True
    lost = caller["lat"] / caller["lat_n"] - caller["base_lat"] / caller["base_lat_n"]
    added = (e["latency_ms"] or 0.0) - (e["baseline_latency_ms"] or 0.0)
    return lost <= 0 or added >= share * lost


def suspects(
    edges: list[dict[str, Any]], services: list[dict[str, Any]], peers: list[dict[str, Any]]
) -> list[str]:
    """Components the evidence may blame (servers of degraded edges, services whose spans
    fail, peers named by alerts): those whose mutual reach `weigh` needs."""
    found = {e["server"] for e in edges if e["known"] and edge_degraded(e)}
    found |= {r["component"] for r in services
              if failing(r["error_ratio"], r["baseline_error_ratio"])}  # fmt: skip
    found |= {p["peer"] for p in peers}
    return sorted(found)


def _rise(ratio: float, base: float | None) -> float:
    """Magnitude of a fail ratio: its rise over the baseline, or half the ratio when the
    baseline was spoiled (`HIGH_FAIL_RATIO`)."""
    rise = ratio - (base or 0.0)
    return rise if rise >= FAIL_RATIO else ratio / 2


def magnitude(sigs: list[Signal]) -> float:
    """A component's strength of evidence: its strongest signal."""
    return max((g.magnitude for g in sigs), default=0.0)


#: Signal sources -> (measurement source, the selector read).
_SIGNAL_SOURCES = {
    "calls": ("service graph", SERVICE_GRAPH_QUERY),
    "latency": ("service graph", 'traces_service_graph_request_server_seconds{{server="{name}"}}'),
    "spans": ("span metrics", SPAN_QUERY),
    "down": ("up", UP_QUERY),
    "alert": ("alerts", "alert_peers"),
}


def signal_measurement(g: Signal, win: str | None) -> dict[str, Any]:
    """The measurement (`agents.investigate.measure`) a signal rests on."""
    source, query = _SIGNAL_SOURCES.get(g.source, (g.source, ""))
    when = f" ({span(win)})" if win and source != "alerts" else ""
    return measurement(
        source, query.format(name=g.component), g.value, g.text + when,
        "" if source == "alerts" else win or "",
    )  # fmt: skip


#: A client whose calls fail into at least this many servers that answer others normally is
#: the cause (its own network, configuration or saturation), not those servers.
CLIENT_FAULT_SERVERS = 2


def _client_calls(client: str, edges: list[dict[str, Any]], win: str) -> list[dict[str, Any]]:
    """The evidence rows of a client-side fault: one per failing edge out of `client`
    (`edge_health` rows), its fail ratio against the hour before, in window `win`."""
    return [
        {"component": client, "source": "calls", "magnitude": _rise(e["fail_ratio"],
         e["baseline_fail_ratio"]), "text": f"calls from {client} into {e['server']} fail "
         f"{pct(e['fail_ratio'])} (the hour before: {pct(e['baseline_fail_ratio'])})",
         "value": e["fail_ratio"], "window": win}
        for e in edges
    ]  # fmt: skip


def _served_others(
    pairs: list[tuple[dict[str, Any], dict[str, Any]]],
    good: Callable[[dict[str, Any]], str],
    win: str,
) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
    """Servers ruled out because they answer another client normally: per (edge from the
    faulty client, edge from another client) pair, the reason and its service-graph
    measurement (`good` words the other client's edge)."""
    ruled = {e["server"]: f"answers other clients normally: {good(o)}" for e, o in pairs}
    measured = {
        e["server"]: measurement(
            "service graph", SERVICE_GRAPH_QUERY.format(name=e["server"]), o["fail_ratio"],
            good(o), win,
        )
        for e, o in pairs
    }  # fmt: skip
    return ruled, measured


def client_fault(edges: list[dict[str, Any]], near: set[str], win: str) -> Decision | None:
    """One client's calls into several servers fail (`CLIENT_FAULT_SERVERS` or more, each with
    `EDGE_MIN_CALLS` calls) while every other client's calls into the same servers are measured
    and healthy (a server failing for several clients is failing itself): the failures follow
    the client (packet loss on its host, a bad client setting, a saturated caller), not the
    servers. Summing failures per server would blame the servers;
    comparing a server's clients tells them apart. A server whose own calls into a dependency
    fail or slowed does not count: only some of its operations reach that dependency (reads, not
    writes), so one client failing there while another is served is that dependency's doing.
    None when no client fits (or several do)."""
    by_server: dict[str, list[dict[str, Any]]] = {}
    for e in edges:
        if e["known"] and e["calls"] >= EDGE_MIN_CALLS:
            by_server.setdefault(e["server"], []).append(e)
    troubled = {e["client"] for rows in by_server.values() for e in rows if edge_degraded(e)}
    found: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for server, rows in by_server.items():
        if server in troubled:
            continue
        fine = [e for e in rows if not edge_degraded(e)]
        worse = [e for e in rows if failing(e["fail_ratio"], e["baseline_fail_ratio"])]
        if len(worse) == 1 and fine:  # one client fails here, every other one is healthy
            other = max(fine, key=lambda f: f["calls"])
            found.setdefault(worse[0]["client"], []).append((worse[0], other))
    culprits = [
        c for c, pairs in found.items()
        if len(pairs) >= CLIENT_FAULT_SERVERS
        and (c in near or {p[0]["server"] for p in pairs} & near)
    ]  # fmt: skip
    if len(culprits) != 1:
        return None
    (client,) = culprits
    pairs = sorted(found[client], key=lambda p: p[0]["server"])
    when = f" ({span(win)})" if win else ""

    def bad(e: dict[str, Any]) -> str:
        return f"{e['server']} {pct(e['fail_ratio'])} of {e['calls']:,.0f}"

    def good(e: dict[str, Any]) -> str:
        return (
            f"{e['client']}'s calls into {e['server']} fail {pct(e['fail_ratio'])} of "
            f"{e['calls']:,.0f}{when}"
        )

    line = f"calls from {client} fail into {', '.join(bad(e) for e, _ in pairs)}"
    ruled, measured = _served_others(pairs, good, win)
    evidence = _client_calls(client, [e for e, _ in pairs], win)
    separated = "; ".join(good(o) for _, o in pairs)
    return Decision(
        client, [client], 0.85,
        f"{client}: {line}{when}, while the same servers answer other clients normally "
        f"({separated}). The failures follow the client (its network, its settings or its "
        "load), not the servers.", ruled, separated_by=separated, evidence=evidence,
        measured=measured,
    )  # fmt: skip


#: Confidence of a client named because every server it calls fails for it while working for
#: itself: a coincidence argued against, below `client_fault`'s comparison with another client.
LONE_CLIENT_CONFIDENCE = 0.6


def lone_client(
    edges: list[dict[str, Any]], near: set[str], win: str, reach: dict[str, set[str]]
) -> Decision | None:
    """One client's calls into every server it calls (`CLIENT_FAULT_SERVERS` or more, each
    with `EDGE_MIN_CALLS` calls) fail, where `client_fault` has no other client to compare:
    each server is called by nobody else (or by others measured healthy), its own calls into
    its dependencies are measured healthy at their usual rate (it is up and doing its work),
    and no two of the servers share a dependency or depend on each other (measured edges and
    `reach`, the world's). One fault on the client's side (packet loss on its host, a bad
    client setting) then explains every failure, where the servers would need as many
    independent faults at once: the client is named, at `LONE_CLIENT_CONFIDENCE`. A server
    with no measured calls of its own (a leaf) could be failing by itself: it neither makes
    nor breaks the case. At least `CLIENT_FAULT_SERVERS` servers must be shown working for
    themselves; a leaf among the failing ones is then explained by the same client fault
    (the alternative is an independent fault in the leaf at the same moment). None when no
    client fits (or several do)."""
    known = [e for e in edges if e["known"] and e["calls"] >= EDGE_MIN_CALLS]
    found: dict[str, tuple[list[tuple[dict[str, Any], list[dict[str, Any]]]],
                           list[dict[str, Any]]]] = {}  # fmt: skip
    for client in sorted({e["client"] for e in known}):
        out = [e for e in known if e["client"] == client]
        servers = {e["server"] for e in out}
        if len(out) < CLIENT_FAULT_SERVERS or not (({client} | servers) & near):
            continue
        if not all(failing(e["fail_ratio"], e["baseline_fail_ratio"]) for e in out):
            continue
        rows, leaves, deps = [], [], []
        for e in out:
            own = [o for o in known if o["client"] == e["server"]]
            others = [o for o in known if o["server"] == e["server"] and o["client"] != client]
            if not all(as_usual(o) for o in own) or any(map(edge_degraded, others)):
                break
            if own:
                rows.append((e, own))
            else:
                leaves.append(e)
            deps.append({o["server"] for o in own} | reach.get(e["server"], set()))
        else:
            pairs = [(a, b) for i, a in enumerate(deps) for b in deps[i + 1 :]]
            if (
                len(rows) >= CLIENT_FAULT_SERVERS
                and not any(a & b for a, b in pairs)
                and not any(servers & d for d in deps)
            ):  # fmt: skip
                found[client] = (rows, leaves)
    if len(found) != 1:
        return None
    ((client, (rows, leaves)),) = found.items()
    rows.sort(key=lambda r: r[0]["server"])
    when = f" ({span(win)})" if span(win) else ""

    def works(server: str, own: list[dict[str, Any]]) -> str:
        calls = ", ".join(f"{o['server']} fail {pct(o['fail_ratio'])} of {o['calls']:,.0f}"
                          for o in own)  # fmt: skip
        return f"{server}'s own calls into {calls}{when}"

    line = ", ".join(f"{e['server']} {pct(e['fail_ratio'])} of {e['calls']:,.0f}" for e, _ in rows)
    ruled = {
        e["server"]: f"fails only for {client}, while it works for itself: {works(e['server'], o)}"
        for e, o in rows
    }
    measured = {
        e["server"]: measurement(
            "service graph",
            f'traces_service_graph_request_failed_total{{client="{e["server"]}"}} / _total',
            max(x["fail_ratio"] for x in o), works(e["server"], o), win,
        )
        for e, o in rows
    }  # fmt: skip
    leaves.sort(key=lambda e: e["server"])
    for e in leaves:
        text = (
            f"calls from {client} into {e['server']} fail {pct(e['fail_ratio'])} of "
            f"{e['calls']:,.0f}{when}"
        )
        ruled[e["server"]] = (
            f"fails only for {client}, as the servers that work for themselves do; it makes no "
            f"measured call of its own, so nothing shows it working: {text}"
        )
        measured[e["server"]] = measurement(
            "service graph",
            f'traces_service_graph_request_failed_total{{client="{client}", '
            f'server="{e["server"]}"}} / _total', e["fail_ratio"], text, win,
        )  # fmt: skip
    evidence = _client_calls(client, [e for e, _ in rows] + leaves, win)
    separated = "; ".join(works(e["server"], o) for e, o in rows)
    also = (
        f" Its calls into {', '.join(e['server'] for e in leaves)}, which make no measured call "
        "of their own, fail too: the same fault explains them."
        if leaves
        else ""
    )
    return Decision(
        client, [client], LONE_CLIENT_CONFIDENCE,
        f"{client}: its calls into every server it uses fail{when}: {line}; no other client's "
        f"calls into them fail, each works for itself ({separated}) and they share no "
        f"dependency. One fault on {client}'s side (its network, its settings) explains all of "
        f"them; the servers would need as many independent faults at once.{also}", ruled,
        separated_by=separated,
        evidence=evidence, measured=measured,
    )  # fmt: skip


#: A call rate at most this share of its baseline counts as stopped: the incident window opens
#: before the onset, so calls that stopped at the onset still show part of the window's rate.
STOPPED = 0.5


def stopped_client(
    edges: list[dict[str, Any]], near: set[str], win: str, backlog: Iterable[str] = ()
) -> Decision | None:
    """Nothing near the incident fails or slowed, but one client's calls into every server it
    called in the baseline (`CLIENT_FAULT_SERVERS` or more) stopped or fell (to at most
    `STOPPED` of the baseline rate), while each of those servers still answers another client
    at its usual rate, and nothing that calls the client stopped (then its traffic stopped
    arriving, and the cause is in front of it; with a backlog piling, a messaging edge into it
    fell because it stopped reading): the client stopped working (crashed, hung, a
    consumer that no longer reads), not the servers. Calls that stop raise no error for a fail
    ratio to show. One server is enough when it alerts only about a backlog (`backlog`:
    `backlog_only`): a queue still taking another client's calls as usual, whose messages pile
    up while this reader's calls stopped, says the reader stopped reading. None when no client
    fits (or several do)."""
    backlog = set(backlog)
    known = [e for e in edges if e["known"]]

    def served(e: dict[str, Any]) -> bool:
        return e["calls"] >= EDGE_MIN_CALLS and as_usual(e)

    found: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for client in sorted({e["client"] for e in known} & near):
        out = [e for e in known if e["client"] == client and e["baseline_calls"] >= EDGE_MIN_CALLS]
        if not out or not all(stopped(e) for e in out):
            continue
        # its traffic stopped arriving: the cause is in front of it; but with a backlog
        # piling, messages into a consumer fell because it stopped reading them
        if any(stopped(e) for e in known if e["server"] == client
               and not (backlog and e.get("connection_type") == MESSAGING)):  # fmt: skip
            continue
        pairs = []
        for e in out:
            others = [o for o in known if o["server"] == e["server"] and o["client"] != client]
            fine = [o for o in others if served(o)]
            if not fine:
                break
            pairs.append((e, max(fine, key=lambda o: o["calls"])))
        else:
            piled = bool(pairs) and all(e["server"] in backlog for e, _ in pairs)
            if len(pairs) >= CLIENT_FAULT_SERVERS or piled:
                found[client] = pairs
    if len(found) != 1:
        return None
    ((client, pairs),) = found.items()
    when = f" ({span(win)})" if win else ""
    queues = sorted(e["server"] for e, _ in pairs if e["server"] in backlog)
    piles = (
        f" {', '.join(queues)} alert{'s' if len(queues) == 1 else ''} only about a backlog, "
        "which a reader that stopped leaves."
        if queues
        else ""
    )

    def good(o: dict[str, Any]) -> str:
        return (
            f"{o['client']}'s calls into {o['server']}: {o['rate_per_s']:.2f}/s, "
            f"{pct(o['fail_ratio'])} failing{when}"
        )

    line = ", ".join(
        f"{e['server']} ({e['baseline_rate_per_s']:.2f}/s -> {e['rate_per_s']:.2f}/s)"
        for e, _ in pairs
    )
    separated = "; ".join(good(o) for _, o in pairs)
    ruled, measured = _served_others(pairs, good, win)
    evidence = [
        {"component": client, "source": "calls", "magnitude": 1.0 - (e["rate_change"] or 0.0),
         "text": f"calls from {client} into {e['server']} fell: {e['baseline_rate_per_s']:.2f}"
         f"/s the hour before, {e['rate_per_s']:.2f}/s now", "value": e["rate_change"],
         "window": win}
        for e, _ in pairs
    ]  # fmt: skip
    return Decision(
        client, [client], 0.85,
        f"{client}: its calls into every server it uses stopped or fell{when}: {line}, while the "
        "same "
        f"servers answer other clients normally ({separated}).{piles} The client stopped "
        "working (crashed, hung, no longer reading), not the servers.", ruled,
        separated_by=separated,
        evidence=evidence, measured=measured,
    )  # fmt: skip


def near_of(
    candidates: list[Candidate], alerting: list[str], edges: list[dict[str, Any]]
) -> set[str]:
    """The components near the incident `weigh` weighs: the walk's, the alerting ones, and the
    servers they call, even over edges the walk skips (config: flagd)."""
    near = {c.name for c in candidates} | set(alerting)
    near |= {e["server"] for e in edges if e["client"] in near and e["known"]}
    return near


def stopped_callers(edges: list[dict[str, Any]], near: set[str]) -> set[str]:
    """The clients whose calls into a component in `near` stopped (`stopped`): the readers a
    backlog may have lost (`stopped_reader`)."""
    return {e["client"] for e in edges if e["known"] and e["server"] in near and stopped(e)}


def stopped_reader(
    edges: list[dict[str, Any]], near: set[str], win: str, backlog: Iterable[str] = ()
) -> Decision | None:
    """`stopped_client` over the components near the incident and the readers of its backlog
    (`backlog`: the alerting components that alert only about a backlog, `backlog_only`): the
    clients whose calls go into a piled queue, and, with a backlog piling, every client whose
    calls into a component near the incident stopped. A consumer over a broker reads through
    no call into the broker (its intake is a messaging edge from each producer, which names
    neither the broker nor the topic), and the walk goes only to dependencies, so a consumer
    that stopped reading (its downstream calls stopped, the broker's queue piling) is found
    through the calls it stopped making. None as `stopped_client`."""
    piled = set(backlog)
    readers = {e["client"] for e in edges if e["known"] and e["server"] in piled}
    if piled:
        readers |= stopped_callers(edges, near)
    found = stopped_client(edges, near | readers, win, piled)
    if found is None or any(e["client"] == found.root_cause for e in edges if e["server"] in piled):
        return found  # a reader through its calls into the queue: the summary says so
    queues = ", ".join(sorted(piled))
    return replace(found, summary=(
        f"{found.summary} {queues} alert{'s' if len(piled) == 1 else ''} only about a backlog, "
        "which a consumer that stopped reading leaves."
    ))  # fmt: skip


#: A stalled topic's confidence when two producers or more stopped getting messages through
#: (neither one's own writes explain it); with one producer, which may have stopped
#: publishing itself, it stays under 0.5.
STALLED_CONFIDENCE = 0.8
ONE_PRODUCER_CONFIDENCE = 0.45


def stalled_topic(
    edges: list[dict[str, Any]],
    topic: str,
    producers: set[str],
    consumers: set[str],
    host: str | None,
    covered: int,
    alerting: int,
    win: str,
) -> Decision | None:
    """Nothing near the incident fails or slowed, but the messages over `topic` stopped or fell
    (to at most `STOPPED` of the baseline) on every producer -> consumer edge measured
    (messaging edges of the service graph with `EDGE_MIN_CALLS` in the baseline), to two
    consumers or more, while every one of those producers is alive (its other measured calls,
    in or out, are served as usual): not one consumer that stopped reading (`stopped_client`)
    nor a producer that crashed. The topic's host (the broker) is the cause, or the topic when
    it has none. `covered`: how many of the `alerting` components reach it. Confidence
    `STALLED_CONFIDENCE` x coverage with two producers or more, else at most
    `ONE_PRODUCER_CONFIDENCE` (one producer may have stopped publishing itself). None when the
    flow does not fit."""
    known = [e for e in edges if e["known"]]
    flow = [
        e for e in known
        if e.get("connection_type") == MESSAGING and e["client"] in producers
        and e["server"] in consumers and e["baseline_calls"] >= EDGE_MIN_CALLS
    ]  # fmt: skip
    if not flow or not all(map(stopped, flow)):
        return None
    writers = sorted({e["client"] for e in flow})
    readers = sorted({e["server"] for e in flow})
    if len(readers) < 2:
        return None
    alive: dict[str, dict[str, Any]] = {}
    for p in writers:
        other = [
            e for e in known
            if p in (e["client"], e["server"]) and e not in flow
            and e.get("connection_type") != MESSAGING
            and e["baseline_calls"] >= EDGE_MIN_CALLS
        ]  # fmt: skip
        served = [e for e in other if not edge_degraded(e) and (e["rate_change"] or 0) > STOPPED]
        if not other or len(served) < len(other):
            return None
        alive[p] = max(served, key=lambda e: e["calls"])
    cause = host or topic
    when = f" ({span(win)})" if win else ""
    line = ", ".join(
        f"{e['client']} -> {e['server']} {e['baseline_rate_per_s']:.2f}/s -> "
        f"{e['rate_per_s']:.2f}/s" for e in flow
    )  # fmt: skip
    separated = "; ".join(
        f"{p} is alive: {e['client']} -> {e['server']} {e['rate_per_s']:.2f}/s, "
        f"{pct(e['fail_ratio'])} failing{when}" for p, e in alive.items()
    )  # fmt: skip
    evidence = [
        {"component": cause, "source": "messages", "magnitude": 1.0 - (e["rate_change"] or 0.0),
         "text": f"messages from {e['client']} to {e['server']} over {topic} fell: "
         f"{e['baseline_rate_per_s']:.2f}/s the hour before, {e['rate_per_s']:.2f}/s now",
         "value": e["rate_change"], "window": win}
        for e in flow
    ]  # fmt: skip
    ruled = {
        r: f"one of {len(readers)} consumers of {topic} whose messages all fell" for r in readers
    }
    ruled |= {p: f"alive and its messages to {topic} fell with every other producer's"
              for p in writers if len(writers) > 1}  # fmt: skip
    share = covered / max(1, alerting)
    confidence = STALLED_CONFIDENCE * share if len(writers) > 1 else ONE_PRODUCER_CONFIDENCE
    on = f"{topic} on {host}" if host else topic
    return Decision(
        cause, [cause] + (writers if len(writers) == 1 else []), round(min(confidence, share), 2),
        f"{cause}: the messages over {on} stopped or fell on every measured edge{when}: {line}, "
        f"while {'its producers are' if len(writers) > 1 else 'its producer is'} alive "
        f"({separated}). {covered} of {alerting} alerting components reach it."
        + ("" if len(writers) > 1 else f" {writers[0]} may have stopped publishing itself."),
        ruled, separated_by=separated, evidence=evidence,
    )  # fmt: skip


#: Confidence at most of a cause left once a slowed sibling is set aside as loaded by it.
FALLBACK_CONFIDENCE = 0.75


def fallbacks(
    edges: list[dict[str, Any]],
    sigs: dict[str, list[Signal]],
    spoken: set[tuple[str, str]],
    reach: dict[str, set[str]],
) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """Slowed dependencies that a failing sibling explains: slowed sibling -> (the failing
    edge, the slowed edge) of one client. Between two dependencies of the same client, neither
    calling nor reaching the other, the one whose calls fail explains the other's slowness (a
    cache whose calls fail sends every read to the database beside it; failed calls are
    retried and fall back onto the other dependencies), while a slowdown fails no other
    dependency's calls: the slowed one is set aside when its only signals are latency (a
    dependency that fails too is a suspect of its own). The rule is the usual cache-aside
    reading of a failing cache in front of a slower database (a miss goes to the database)."""
    out: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    by_client: dict[str, list[dict[str, Any]]] = {}
    for e in edges:
        if e["known"] and e["calls"] >= EDGE_MIN_CALLS and e["server"] in sigs:
            by_client.setdefault(e["client"], []).append(e)
    for rows in by_client.values():
        bad = [e for e in rows if failing(e["fail_ratio"], e["baseline_fail_ratio"])]
        for slow in rows:
            s = slow["server"]
            if (
                failing(slow["fail_ratio"], slow["baseline_fail_ratio"])
                or not slowed(slow["latency_ms"], slow["baseline_latency_ms"])
                or any(g.source != "latency" for g in sigs[s])
            ):  # fmt: skip
                continue
            for f in sorted(bad, key=lambda e: -e["fail_ratio"]):
                other = f["server"]
                apart = (s, other) not in spoken and (other, s) not in spoken
                if apart and other not in reach.get(s, ()) and s not in reach.get(other, ()):
                    out.setdefault(s, (f, slow))
    return out


def _loaded_sibling(
    bad: dict[str, Any], slow: dict[str, Any], win: str | None
) -> tuple[str, dict[str, Any]]:
    """The ruled-out reason of a slowed sibling (`fallbacks`) and the measurement it rests on:
    the client's failing calls into the other dependency, beside its own slowdown."""
    text = (
        f"{bad['client']}'s calls into {bad['server']} fail {pct(bad['fail_ratio'])} of "
        f"{bad['calls']:,.0f}, while its calls into {slow['server']} only slowed "
        f"({slow['latency_ms']:.0f} ms, {_hour_before(slow)}){_when(win)}"
    )
    reason = (
        f"slowed, not failing: {text}; a failing dependency's misses, retries and fallbacks "
        f"load its sibling, and a slowdown fails no other dependency's calls"
    )
    return reason, _calls_measured(bad, text, win)


def _when(win: str | None) -> str:
    """` (<the window>)` after a measured figure, or "" when no window was read."""
    window = span(win or "")
    return f" ({window})" if window else ""


def _hour_before(e: dict[str, Any]) -> str:
    """`the hour before: 21 ms` for an edge's baseline latency, or `… no data`."""
    before = e["baseline_latency_ms"]
    return f"the hour before: {f'{before:.0f} ms' if before else 'no data'}"


def _calls_measured(e: dict[str, Any], text: str, win: str | None) -> dict[str, Any]:
    """The service-graph measurement of the calls into edge `e`'s server that `text` reads."""
    return measurement(
        "service graph", SERVICE_GRAPH_QUERY.format(name=e["server"]), e["fail_ratio"], text,
        win or "",
    )  # fmt: skip


def degraded_into(name: str, edges: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The known call edges into `name` that fail or slowed (`edge_degraded`)."""
    return [e for e in edges if e["server"] == name and e["known"] and edge_degraded(e)]


def absorbed(
    name: str, edges: list[dict[str, Any]], sigs: dict[str, list[Signal]], alerting: list[str]
) -> dict[str, Any] | None:
    """A silent component degraded only in its calls (latency or failures on edges into it)
    whose every client with such a call is neither alerting nor degraded, and serves its own
    callers as usual (each of their edges measured, `EDGE_MIN_CALLS` calls or more, none
    failing or slowed): the degradation stops there and reaches no alerting component, so it
    is not the incident's cause (a payments database 21 to 80 ms slower while the payments
    service still answers in its usual time). Returns the measured edge of one such caller,
    None when the degradation is passed on or not measured far enough to tell."""
    if name in alerting or any(g.source not in ("calls", "latency") for g in sigs[name]):
        return None
    into = degraded_into(name, edges)
    if not into:
        return None
    shown: dict[str, Any] | None = None
    for e in into:
        client = e["client"]
        if client in alerting or client in sigs:
            return None
        callers = [c for c in edges if c["server"] == client and c["known"]]
        if not callers or any(
            c["calls"] < EDGE_MIN_CALLS or not as_usual(c) for c in callers
        ):  # fmt: skip
            return None
        shown = shown or callers[0]
    return shown


def surged_into(name: str, edges: list[dict[str, Any]], sigs: dict[str, list[Signal]]) -> str:
    """Why `name` is loaded, not the origin, or "": it only slowed (latency is its every
    signal), and a slowed call edge into it carries at least `RATE_JUMP` x its usual rate
    (`EDGE_MIN_CALLS` calls or more). Something sent it more work: a cache in front of it
    missing, a caller retrying, a surge (a slow cause holds its callers back; it does not
    multiply their calls), and its other clients, their rates as usual, slowed with it (a
    noisy neighbour: a reader that lost its cache slows a database for every reader). The
    text names the calls that rose."""
    if any(g.source != "latency" for g in sigs[name]):
        return ""
    into = [
        e for e in degraded_into(name, edges)
        if e["calls"] >= EDGE_MIN_CALLS and (e["rate_change"] or 0.0) >= RATE_JUMP
    ]  # fmt: skip
    if not into:
        return ""
    rose = ", ".join(f"{e['client']}'s {e['rate_change']:.1f}x" for e in into)
    return f"slowed under more calls than usual ({rose}): loaded, not the origin"


def surge_origins(edges: list[dict[str, Any]]) -> set[str]:
    """Callers that start a surge themselves: one whose calls into a server rose at least
    `RATE_JUMP` x (`EDGE_MIN_CALLS` calls or more) while another client's calls into that
    server slowed (the extra work hurt the rest) and none fail there (failures make callers
    retry: a storm of retries follows the fault, it does not cause it; `surged_into`), nothing
    calling it sends it more than usual (every measured edge into it under `RATE_JUMP` x: no
    surge passes through it), and its other calls are as usual (no cache failing in front of
    it, whose misses it would pass on). A nightly batch or a planner releasing a wave of work
    floods a shared service; it is no traffic source in the world file, since it has callers
    or consumes a topic, but the load starts there. Pure."""
    found = set()
    for name in {e["client"] for e in edges if _surging(e)}:
        mine = [e for e in edges if e["client"] == name and e["known"]]
        into = [
            [e for e in edges if e["server"] == s["server"] and e["known"]]
            for s in mine if _surging(s)
        ]  # fmt: skip
        hurt = any(
            any(e["client"] != name and edge_degraded(e) for e in server) for server in into
        ) and not any(
            failing(e["fail_ratio"], e["baseline_fail_ratio"]) for server in into for e in server
        )  # fmt: skip
        fed = any(e["server"] == name and (e["rate_change"] or 0.0) >= RATE_JUMP for e in edges)
        if hurt and not fed and all(as_usual(e) for e in mine if not _surging(e)):
            found.add(name)
    return found


def _surging(e: dict[str, Any]) -> bool:
    return bool(
        e["known"] and e["calls"] >= EDGE_MIN_CALLS and (e["rate_change"] or 0.0) >= RATE_JUMP
    )


#: The most a cause measured only on one client's calls earns while another client's calls into
#: it are served as usual (`asked_by_one`): a lead a playbook's held checks may outweigh.
ONE_CLIENT_CONFIDENCE = 0.6
#: The most a cause earns when the one client its calls are degraded for neither alerts nor is
#: degraded itself (`bystander`): a lead; the walk alone links it to the alerts.
BYSTANDER_CONFIDENCE = 0.45


def asked_by_one(
    name: str, edges: list[dict[str, Any]]
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """`(the one degraded edge into name, the busiest edge into it served as usual)`, or None:
    every measured call edge into `name` (`EDGE_MIN_CALLS` or more) is as usual but one.

    The server answers its other clients, so the failures follow what that one client asks as
    much as the server: a shard or key range only it reads (a cache node behind one planner)
    fails the same way on the service graph as keys that do not exist (a client that
    double-encodes file names and reads 404s from an object store). The service graph cannot
    tell them apart; the client is left a candidate, not a victim."""
    into = [e for e in edges if e["server"] == name and e["known"] and e["calls"] >= EDGE_MIN_CALLS]
    bad = [e for e in into if edge_degraded(e)]
    fine = [e for e in into if as_usual(e)]
    if len(bad) != 1 or len(fine) != len(into) - 1 or not fine:
        return None
    return bad[0], max(fine, key=lambda e: (e["calls"], e["client"]))


#: The least share of what a degraded client lost itself that a slowdown of its calls into a
#: server must add for the server to carry its trouble (`confined`): a search cluster 36 ms
#: slower for a directory that lost 22 s a call carries none of it; a database 1,180 ms slower
#: for a registry that lost 3,080 ms (several queries a request) may carry all of it.
CARRIES = 0.1


def confined(
    name: str,
    cover: dict[str, set[str]],
    edges: list[dict[str, Any]],
    alerting: list[str],
    sigs: dict[str, list[Signal]],
    victim_of: dict[str, str],
    totals: dict[str, dict[str, float]],
) -> tuple[set[str], str] | None:
    """`(the alerting components name's measured degradation reaches, why the others are
    left out)`, or None when that is all the walk says it covers (`cover`: `coverage`).

    Name's trouble reaches an alerting component only through the clients that carry it: a
    client whose calls into name are degraded and that is name's victim, or degraded in no
    other way, or that only slowed (a backlog multiplies a slower dependency's time), or whose
    calls into name slowed by `CARRIES` or more of what it lost itself. An alerting component
    that reaches name only through clients it serves as usual, or through a client degraded in
    its own right (its own calls fail, while its calls into name neither fail nor slowed by that
    much: a dependency a few ms slower fails nobody's calls), is not explained by what was
    measured on name.
    Kept: name itself, the carriers and what reaches name through them.

    A database slowed for a batch job's queries alone (20 -> 49 ms for that job, its other
    callers served in 20 ms) had "explained" the pickers and the robot fleet that read it as
    usual, over the slowed path planner they called; a search cluster 36 ms slower for the
    provider directory, which lost 22 s a call and failed 25 % by itself, had "explained" the
    directory's callers over the directory."""
    into = [
        e for e in edges if e["server"] == name and e["known"] and e["calls"] >= EDGE_MIN_CALLS
    ]  # fmt: skip
    bad = [e for e in into if edge_degraded(e)]
    carriers = {
        e["client"] for e in bad
        if e["client"] not in sigs or victim_of.get(e["client"]) == name
        or not _fails(totals.get(e["client"])) or accounts_for(e, totals.get(e["client"]), CARRIES)
    }  # fmt: skip
    own = sorted({e["client"] for e in bad} - carriers)
    served = sorted({e["client"] for e in into if as_usual(e)})
    if not bad or not (own or served):
        return None
    mine = cover.get(name, set())
    # cover holds alerting components only; a carrier or name itself counts when it alerts
    through = set().union({name}, carriers, *(cover.get(c, set()) for c in carriers)) & set(
        alerting
    )
    reached = set().union(*(cover.get(c, set()) | ({c} & set(alerting)) for c in [*own, *served]))
    left = (mine & reached) - through
    if not left:
        return None
    why = []
    if carriers:
        why.append(f"degraded only for {', '.join(sorted(carriers))}")
    if served:
        busiest = max(
            (e for e in into if e["client"] in served), key=lambda e: (e["calls"], e["client"])
        )
        why.append(f"{busiest['client']}'s calls into it are served as usual")
    for client in own:
        why.append(f"{client} is degraded in its own right, far more than its calls into it")
    head, *rest = why
    more = f" ({'; '.join(rest)})" if rest else ""
    return mine - left, f"{head}{more}, so it does not explain {', '.join(sorted(left))}"


def carried(
    name: str,
    component: str,
    edges: list[dict[str, Any]],
    ways: dict[str, set[str]],
    seen: frozenset[str] = frozenset(),
) -> bool:
    """Whether `component`'s slowness may come from `name` by what the calls measured:
    `component` is `name`; or its measured calls (`EDGE_MIN_CALLS` or more) on its way to
    `name` (into `name`, or into a server that depends on it, `ways`; calls, not messages:
    a producer waits on no consumer) include one that is not as usual and whose server's
    slowness may come from `name` in turn; or none of its calls on its way was measured (the
    walk decides then). Pure.

    Latency adds up along the calls: an alerting component slow while every call it makes
    toward `name` takes its usual time was not slowed by it (`weigh` asks this only of the
    components whose every alert says slow: wrong content travels through calls served as
    usual, as stale quotes behind a failing market-data feed did). An unseen CI service's
    runner API reached a cloud client 650 ms slower through a scheduler it called as usual,
    and a red herring's alert beside it made the cloud client "explain 3 alerting
    components" over the secrets service its calls waited 42 s on."""
    if component == name:
        return True
    toward = [
        e for e in edges
        if e["client"] == component and e["known"] and e["calls"] >= EDGE_MIN_CALLS
        and e.get("connection_type") != MESSAGING  # a producer waits on no consumer
        and (e["server"] == name or name in ways.get(e["server"], set()))
    ]  # fmt: skip
    if not toward:
        return True
    return any(
        not as_usual(e) and e["server"] not in seen
        and carried(name, e["server"], edges, ways, seen | {component})
        for e in toward
    )  # fmt: skip


def _fails(calls: dict[str, float] | None) -> bool:
    """Whether the calls into a component (`inbound` totals) fail (`failing`)."""
    return calls is not None and failing(*fail_ratios(calls))


def bystander(
    name: str, edges: list[dict[str, Any]], sigs: dict[str, list[Signal]], alerting: list[str]
) -> str:
    """Why `name`'s degradation does not reach the incident, or "": it is degraded only in
    one client's calls (`asked_by_one`: its other clients are served as usual), and that
    client neither alerts nor is degraded itself. Nothing measured carries the trouble to
    the alerting components; only the walk links them (a tenant service 20 -> 57 ms for a
    report service that raises no alert, while eleven other callers are served in 20 ms, had
    tied with a payment provider's client failing 99 % for the alerting payments path)."""
    if name in alerting or any(g.source not in ("calls", "latency") for g in sigs[name]):
        return ""
    one = asked_by_one(name, edges)
    if one is None or one[0]["client"] in alerting or one[0]["client"] in sigs:
        return ""
    bad, fine = one
    return (
        f"degraded only for {bad['client']}, which raises no alert and is not degraded itself "
        f"({fine['client']}'s calls into it are served as usual): nothing measured carries it "
        "to the alerting components"
    )


def _absorbed_reason(
    name: str, signal: Signal, usual: dict[str, Any], win: str | None
) -> tuple[str, dict[str, Any]]:
    """The ruled-out reason of an absorbed slowdown or failure (`absorbed`) and the measurement
    it rests on: the caller's own callers served as usual."""
    text = (
        f"{usual['client']}'s calls into {usual['server']}: {pct(usual['fail_ratio'])} of "
        f"{usual['calls']:,.0f} failed, {usual['latency_ms'] or 0:.0f} ms "
        f"({_hour_before(usual)}){_when(win)}"
    )
    reason = (
        f"degraded ({signal.text}), but {usual['server']}, which calls it, answers its own "
        f"callers as usual: {text}; it reaches no alerting component"
    )
    return reason, _calls_measured(usual, text, win)


def weigh(
    alerting: list[str],
    candidates: list[Candidate],
    edges: list[dict[str, Any]],
    services: list[dict[str, Any]],
    down: list[dict[str, Any]],
    peers: list[dict[str, Any]],
    clients: Iterable[str],
    changed: set[str],
    reach: dict[str, set[str]] | None = None,
    win: str | None = "",
    backlog: Iterable[str] = (),
    ways: dict[str, set[str]] | None = None,
    slow: Iterable[str] = (),
) -> Decision | None:
    """Apply rules 2-4 (module docstring). None when the evidence blames nothing (no degraded
    component near the incident and no traffic jump): the caller falls back to the walk.

    `win`: the incident window the evidence covers (`measure.window`), None when no evidence
    source was asked (alerts only: peer labels stand in for edges), so nothing reads "healthy".

    `backlog`: the alerting components whose every alert is a backlog (`backlog_only`), for
    `stopped_client`.

    `reach`: component -> the components it depends on (business walk), for the components
    the evidence may blame (`suspects`); a degraded component that depends on another degraded
    one is its victim (a topic on a failing broker, a caller of a failing service).

    `ways`: the same for the servers of the measured calls too (component -> which of the
    suspects and those servers it depends on), for `carried`, asked of the alerting
    components in `slow` (their every alert says slow, `slow_only`); None: no call is
    followed.
    """
    walk = {c.name: c for c in candidates}
    near = near_of(candidates, alerting, edges)
    clients = set(clients)
    traffic = traffic_sources(edges, clients, near)
    if traffic:
        missed = load_missed(edges, near)
        if not missed:
            return traffic
        # the surge is real but did not reach what degraded: the rest of the rules decide
        rest = weigh(
            alerting, candidates, edges, services, down, peers, (), changed, reach, win, backlog,
            ways, slow,
        )  # fmt: skip
        if rest is None:
            return traffic
        surge = traffic.evidence[0]["text"] if traffic.evidence else "a traffic surge"
        return replace(rest, summary=f"{rest.summary} Not the surge ({surge}): {missed}.")
    own = client_fault(edges, near, win or "") or lone_client(edges, near, win or "", reach or {})
    if own:
        return own
    sigs = {name: found for name, found in signals(edges, services, down, peers).items()
            if name in near}  # fmt: skip
    if not sigs:
        return stopped_reader(edges, near, win or "", backlog)
    cover = coverage(alerting, walk, edges)
    if ways is not None:
        # only a slowdown is followed along the calls: wrong content (stale quotes, a bad
        # config answered 200) reaches a caller through calls served as usual
        slowed_only = set(slow)
        for name in sigs:
            if name in cover:
                cover[name] = {
                    a for a in cover[name]
                    if a not in slowed_only or carried(name, a, edges, ways)
                }  # fmt: skip
    victim_of: dict[str, str] = {}
    totals = inbound(edges)
    loaded_by_calls = {n: why for n in sigs if (why := surged_into(n, edges, sigs))}
    for e in edges:
        if (
            e["client"] in sigs and e["server"] in sigs and edge_degraded(e)
            and accounts_for(e, totals.get(e["client"]))
            # a client that sent a loaded server its extra calls loaded it: not its victim
            and not (e["server"] in loaded_by_calls and (e["rate_change"] or 0.0) >= RATE_JUMP)
        ):  # fmt: skip
            victim_of.setdefault(e["client"], e["server"])
    for p in peers:
        if p["component"] in sigs and p["peer"] in sigs:
            victim_of.setdefault(p["component"], p["peer"])
    # A measured call edge between two degraded components has spoken (above); the walk's
    # reach decides only between components with no such edge (indirect, or unmeasured).
    spoken = {(e["client"], e["server"]) for e in edges if e["calls"] >= EDGE_MIN_CALLS}
    for name in sigs:
        for other in sorted(sigs):
            if other == name or (name, other) in spoken:
                continue
            walked = name in alerting and other in walk and name in walk[other].covers
            if walked or other in (reach or {}).get(name, set()):
                victim_of.setdefault(name, other)
    narrowed = {
        n: found for n in sigs
        if (found := confined(n, cover, edges, alerting, sigs, victim_of, totals))
    }  # fmt: skip
    for name, (kept, _) in narrowed.items():
        cover[name] = kept
    loaded = {s: f for s, f in fallbacks(edges, sigs, spoken, reach or {}).items()
              if s not in victim_of}  # fmt: skip
    stopped_at = {n: seen for n in sigs if n not in victim_of
                  and (seen := absorbed(n, edges, sigs, alerting)) is not None}  # fmt: skip
    surged = {n: why for n, why in loaded_by_calls.items() if n not in victim_of}
    aside = {
        n: why for n in sigs if n not in victim_of and (why := bystander(n, edges, sigs, alerting))
    }
    set_aside = victim_of.keys() | loaded.keys() | stopped_at.keys() | surged.keys() | aside.keys()
    roots = [n for n in sigs if n not in set_aside]
    if not roots and stopped_at and len(stopped_at) == len(sigs):
        # nothing degraded reaches the alerting components: a reader that stopped may still
        # explain them (`stopped_reader`), else the walk decides
        return stopped_reader(edges, near, win or "", backlog)
    roots = roots or list(sigs)  # a cycle: keep them all
    roots.sort(key=lambda n: (-len(cover.get(n, ())), -magnitude(sigs[n]), n))
    ruled: dict[str, str] = {}
    measured: dict[str, dict[str, Any]] = {}
    for name, dep in sorted(victim_of.items()):
        if name not in roots:
            ruled[name] = f"{VICTIM_OF}{dep}, which it depends on: {sigs[dep][0].text}"
            measured[name] = signal_measurement(sigs[dep][0], win)
    for name, (bad, slow) in sorted(loaded.items()):
        if name not in roots:
            ruled[name], measured[name] = _loaded_sibling(bad, slow, win)
    for name, why in sorted(aside.items()):
        if name not in roots and name not in ruled:
            ruled[name], measured[name] = why, signal_measurement(sigs[name][0], win)
    for name, why in sorted(surged.items()):
        if name not in roots and name not in ruled:
            ruled[name], measured[name] = why, signal_measurement(sigs[name][0], win)
    for name, usual in sorted(stopped_at.items()):
        if name not in roots and name not in ruled:
            ruled[name], measured[name] = _absorbed_reason(name, sigs[name][0], usual, win)
    # Setting a slowed sibling aside is an inference from the kind of degradation, not a
    # measured call between them: the winner it leaves is held below the top band.
    cap = FALLBACK_CONFIDENCE if any(n not in roots for n in loaded) else 1.0
    best = max((len(x.covers) for x in candidates), default=0)
    for c in candidates:
        if c.name in sigs or c.name in ruled or len(c.covers) != best:
            continue
        m = calls_into(c.name, edges, services, down, win)
        measured[c.name] = m
        ruled[c.name] = (
            f"healthy: {m['text']}" if healthy(m)
            else f"{m['text']}; set aside because the measured evidence blames {roots[0]}"
        )  # fmt: skip
    evidence = [
        {"component": n, "source": g.source, "magnitude": g.magnitude, "text": g.text,
         "value": g.value, "window": win or ""}
        for n in roots for g in sigs[n]
    ]  # fmt: skip
    top = roots[0]
    n_alerting = max(1, len(alerting))
    top_cover = len(cover.get(top, ()))
    explains = f"{top_cover} of {len(alerting)} alerting components reach it"
    # one client's calls alone degraded, the server's others served as usual: that client
    # stays a candidate (`asked_by_one`), not a victim
    one = (
        asked_by_one(top, edges)
        if len(roots) == 1 and all(g.source in ("calls", "latency") for g in sigs[top])
        else None
    )
    asking = one[0]["client"] if one is not None and victim_of.get(one[0]["client"]) == top else ""
    victims = sorted(n for n, dep in victim_of.items() if dep == top and n != asking)
    why_victims = (
        f" {', '.join(victims)} {'is a victim' if len(victims) == 1 else 'are victims'}: "
        f"{'its' if len(victims) == 1 else 'their'} calls into {top} fail or slowed."
        if victims
        else ""
    )
    silent = "" if top in alerting else " It raises no alert of its own."
    why_victims += "".join(
        f" {n} is set aside as {ruled[n]}." for n in sorted(loaded) if n in ruled
    )
    why_victims += "".join(f" {n} {ruled[n]}." for n in sorted(surged) if n in ruled)
    if len(roots) == 1:
        strong = any(g.source != "alert" for g in sigs[top])
        separated = f"the only degraded component whose own calls are healthy: {sigs[top][0].text}"
        separated += "".join(f"; {n} {ruled[n]}" for n in sorted(loaded) if n in ruled)
        named, why_one = [top], ""
        alone = bystander(top, edges, sigs, alerting)
        if alone:  # nothing else degraded: the walk alone links it to the alerts
            cap = min(cap, BYSTANDER_CONFIDENCE)
            why_one = f" {alone[0].upper()}{alone[1:]}."
        if asking and one is not None:
            fine = one[1]
            cap = min(cap, ONE_CLIENT_CONFIDENCE)
            named = [top, asking]
            ruled.pop(asking, None)
            measured.pop(asking, None)
            why_one = (
                f" Only {asking}'s calls into {top} are degraded; {fine['client']}'s are served "
                f"as usual ({fine['calls']:,.0f} calls, {pct(fine['fail_ratio'])} failing): "
                f"the fault may be in what {asking} asks of {top}, so {asking} stays a candidate."
            )
        return Decision(
            top, named, round(min(cap, top_cover / n_alerting * (0.95 if strong else 0.7)), 2),
            f"{top}: {sigs[top][0].text}; {explains}.{silent}{why_victims}{why_one}",
            ruled, separated_by=separated, evidence=evidence, measured=measured,
        )  # fmt: skip
    second = roots[1]
    second_cover = len(cover.get(second, ()))
    top_m, second_m = magnitude(sigs[top]), magnitude(sigs[second])
    versus = f"{sigs[top][0].text}; {sigs[second][0].text}"
    separated = ""
    if top_cover > second_cover:
        separated = f"{top} explains {top_cover} alerting components, {second} {second_cover}"
    elif top_m >= SEPARATION * second_m:
        separated = versus
    elif len(changed & set(roots)) == 1:
        (only,) = changed & set(roots)
        top, separated = only, f"{only} changed shortly before the incident; the others did not"
        roots.remove(only)
        roots.insert(0, only)
    if separated:
        for other in roots[1:]:
            if other not in ruled:
                ruled[other] = f"degraded too, but less: {sigs[other][0].text}" + (
                    f"; {narrowed[other][1]}" if other in narrowed else ""
                )
                measured[other] = signal_measurement(sigs[other][0], win)
        top_cover = len(cover.get(top, ()))
        silent = "" if top in alerting else " It raises no alert of its own."
        return Decision(
            top, [top], round(min(cap, top_cover / n_alerting * 0.8), 2),
            f"{top}: {sigs[top][0].text}; {top_cover} of {len(alerting)} alerting components "
            f"reach it. Separated from {roots[1]} by: {separated}.{silent}",
            ruled, separated_by=separated, evidence=evidence, measured=measured,
        )  # fmt: skip
    named = roots[:5]
    return Decision(
        None, named, round(0.5 / len(named), 2),
        f"Inconclusive: the evidence blames {', '.join(named)} about equally ({versus}); "
        "nothing separates them.", ruled, evidence=evidence, measured=measured,
    )  # fmt: skip


def coverage(
    alerting: list[str], walk: dict[str, Candidate], edges: list[dict[str, Any]]
) -> dict[str, set[str]]:
    """Alerting components that reach each component: the walk's `covers`, and for a server
    the walk skipped (a config service) the union over its callers."""
    cover = {name: set(c.covers) for name, c in walk.items()}
    for name in alerting:
        cover.setdefault(name, set()).add(name)
    for e in edges:
        if e["server"] not in walk and e["client"] in cover:
            cover.setdefault(e["server"], set()).update(cover[e["client"]])
    return cover


#: The most an edge's call rate may rise over its usual and still count as the usual load
#: (`load_missed`): a surge's extra calls that arrive, even thinned by caches, show above it.
LOAD_ARRIVED = 1.5


def load_missed(edges: list[dict[str, Any]], near: set[str]) -> str:
    """Why a traffic surge does not explain the incident, or "": a component near it whose calls
    are degraded for two clients or more (`EDGE_MIN_CALLS` each), none of its measured clients
    sending it over `LOAD_ARRIVED` x its usual rate, and its own measured calls as usual. The
    surge's extra calls never reached it, and what slowed or fails for callers on and off the
    surge's path is its own doing (a CPU limit halved that shows at the daily peak, when the
    front door's traffic rises too). The text names it and its callers."""
    for name in sorted(near):
        into = [
            e for e in edges if e["server"] == name and e["known"] and e["calls"] >= EDGE_MIN_CALLS
        ]  # fmt: skip
        bad = [e for e in into if edge_degraded(e)]
        own = [
            e for e in edges if e["client"] == name and e["known"] and e["calls"] >= EDGE_MIN_CALLS
        ]
        if (
            len(bad) >= 2
            and all((e["rate_change"] or 1.0) <= LOAD_ARRIVED for e in into)
            and all(as_usual(o) for o in own)
        ):
            callers = ", ".join(sorted(e["client"] for e in bad))
            return (
                f"calls from {callers} into {name} are degraded at their usual rate, and its own "
                "calls are as usual: the extra load did not reach it"
            )
    return ""


def traffic_sources(
    edges: list[dict[str, Any]], clients: set[str], near: set[str]
) -> Decision | None:
    """Rule 3: a client whose request rate into the incident's components jumped."""
    jumps: dict[str, dict[str, Any]] = {}
    for e in edges:
        change = e["rate_change"]
        if not (e["client"] in clients and e["server"] in near and change):
            continue
        if change >= RATE_JUMP and change > jumps.get(e["client"], {}).get("rate_change", 0):
            jumps[e["client"]] = e
    if not jumps:
        return None
    order = sorted(jumps, key=lambda n: (-jumps[n]["rate_change"], n))

    def line(name: str) -> str:
        e = jumps[name]
        return (
            f"{name}'s requests to {e['server']} rose {e['rate_change']:.1f}x "
            f"({e['baseline_rate_per_s']:.2f}/s -> {e['rate_per_s']:.2f}/s)"
        )

    evidence = [{"component": n, "source": "traffic", "magnitude": jumps[n]["rate_change"],
                 "text": line(n), "value": jumps[n]["rate_change"]} for n in order]  # fmt: skip
    top = order[0]
    if len(order) == 1 or jumps[top]["rate_change"] >= SEPARATION * jumps[order[1]]["rate_change"]:
        separated = line(top) + (f"; {line(order[1])}" if len(order) > 1 else "")
        return Decision(
            top, [top], 0.9 if len(order) == 1 else 0.75,
            f"Traffic surge from {top}: {line(top)}. The load comes from there; the components "
            "that alert are its victims.", {n: "its traffic rose less" for n in order[1:]},
            [[top, jumps[top]["server"]]], separated_by=separated, evidence=evidence,
        )  # fmt: skip
    return Decision(
        None, order, round(0.5 / len(order), 2),
        f"Inconclusive: traffic rose from several sources ({'; '.join(line(n) for n in order)}).",
        evidence=evidence,
    )  # fmt: skip


def surge_upstream(decision: Decision, edges: list[dict[str, Any]]) -> Decision | None:
    """Rule 3 followed upstream: the traffic source `decision` names (`traffic_sources`) is
    itself called by clients whose request rate into it jumped at least `RATE_JUMP` x. One
    whose jump is `SEPARATION` x any other's is the source, and the one named passes its load
    on (a gateway in front of the services, between them and the game clients or the app whose
    users surged); several alike make the finding inconclusive between them (never the gateway
    at the confidence of a source). `edges`: `edge_health` rows into the named source. None
    when no caller's rate jumped: the named one stays the source.

    Why: `edge_health` is asked about the incident's components, so the first answer stops at
    the callers of the alerting ones; a caller nothing measured calls counts as a source until
    its own callers are read (`traffic_clients`)."""
    top = decision.root_cause
    jumps = sorted(
        (e for e in edges
         if e["server"] == top and e["known"] and (e["rate_change"] or 0) >= RATE_JUMP),
        key=lambda e: (-e["rate_change"], e["client"]),
    )  # fmt: skip
    if top is None or not jumps:
        return None

    def line(e: dict[str, Any]) -> str:
        return (
            f"{e['client']}'s requests to {top} rose {e['rate_change']:.1f}x "
            f"({e['baseline_rate_per_s']:.2f}/s -> {e['rate_per_s']:.2f}/s)"
        )

    found = [{"component": e["client"], "source": "traffic", "magnitude": e["rate_change"],
              "text": line(e), "value": e["rate_change"]} for e in jumps]  # fmt: skip
    evidence = [*found, *decision.evidence]
    if len(jumps) > 1 and jumps[0]["rate_change"] < SEPARATION * jumps[1]["rate_change"]:
        names = [e["client"] for e in jumps]
        return Decision(
            None, names, round(0.5 / len(names), 2),
            f"Inconclusive: traffic surge through {top} ({decision.evidence[0]['text']}), which "
            f"passes on the load of several sources whose requests rose alike: "
            f"{'; '.join(line(e) for e in jumps)}.",
            decision.ruled_out | {top: f"passes on the load from {', '.join(names)}"},
            [[e["client"], *path] for e in jumps for path in decision.surge_paths],
            evidence=evidence,
        )  # fmt: skip
    e = jumps[0]
    return Decision(
        e["client"], [e["client"]], decision.confidence,
        f"Traffic surge from {e['client']}: {line(e)}; {top} passes it on: "
        f"{decision.evidence[0]['text']}. The load comes from {e['client']}; the components "
        "that alert are its victims.",
        decision.ruled_out | {top: f"passes on the load from {e['client']}"},
        [[e["client"], *path] for path in decision.surge_paths] or [[e["client"], top]],
        separated_by=line(e), evidence=evidence,
    )  # fmt: skip


def self_inflicted(alerts: list[dict[str, Any]], component: str) -> str | None:
    """An alert on `component` that points at its own process (memory, OOM kills, CPU, disk,
    GC), as `alertname`, or None."""
    for a in alerts:
        if a["component"] != component:
            continue
        name, summary = a["alertname"], a.get("summary", "")
        if classify(name, summary) in SELF_KINDS or SELF_WORDS.search(
            words(kind_text(name, summary))
        ):
            return str(a["alertname"])
    return None


#: An alert about CPU whatever kind its first keyword gave it (`PostgresCpuSaturated` reads
#: as saturation): CPU is what load arriving raises too.
CPU_WORDS = re.compile(r"\bcpu\b", re.IGNORECASE)


def cpu_only(alerts: list[dict[str, Any]], component: str) -> str | None:
    """The CPU alert on `component` when CPU is its only alert about its own process, else None.
    CPU is the one process signal that load arriving from upstream raises too, so `doubt` keeps
    the traffic sources in front in doubt (and the investigator looks them up) only then."""
    if self_inflicted(_not_cpu(alerts), component):
        return None
    return next(
        (str(a["alertname"]) for a in alerts if a["component"] == component and _cpu(a)), None
    )


def _cpu(alert: dict[str, Any]) -> bool:
    """An alert about CPU: its kind (`cpu`), or CPU named in its name or summary."""
    name, summary = alert["alertname"], alert.get("summary", "")
    return classify(name, summary) == "cpu" or bool(
        CPU_WORDS.search(words(kind_text(name, summary)))
    )


def _not_cpu(alerts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The alerts not about CPU (`_cpu`)."""
    return [a for a in alerts if not _cpu(a)]


def doubt(
    first: Decision,
    alerting: list[str],
    alerts: list[dict[str, Any]],
    candidates: list[Candidate],
    hard_deps: list[str],
    peers: list[dict[str, Any]],
    dependents: dict[str, list[str]],
    sources: list[dict[str, Any]] | None = None,
    config: list[str] | None = None,
    store_readers: list[str] | None = None,
) -> Decision:
    """Alerts only: keep a conclusive alerting cause X only as far as the alerts separate it
    from what could fail behind it or push load into it (an honest "inconclusive, it
    is one of these" beats a confident guess; docs/architecture.md, evidence).

    - Behind X (`suspects_behind`, limited to `hard_deps`: X's direct dependencies whose failure
      fails X's requests, hard or partial propagation): a datastore, topic or service that
      raises no alert of its own fails X's requests exactly as X's own fault would; the alerts
      of X's callers, peer labels naming X included, look the same either way. Only an alert
      about X's own process (memory, GC, disk: `self_inflicted`) rules them out.
      Otherwise the finding is inconclusive, naming X first, then what is behind it, nearest
      first; a datastore whose other dependents (`dependents[D]`) are all quiet is named after
      the rest, and the summary says so. The configuration services X reads (`config`; their
      failure is soft, so they alone never put X in doubt) are named last: a bad flag fails
      its readers like their own fault.
    - In front of X: a CPU alert on X is its own process or load arriving; the traffic sources
      upstream through alerting components (`sources`: rows of `traffic_sources.cypher` for X)
      stay candidates after X, and so do, for a datastore X, the services that read it on the
      alerting components' paths to it (`store_readers`, silent ones included: a service that lost
      its cache sends a database many times its usual queries and may raise no alert).

    A silent topic chosen as the cause is doubted against its producers
    (`_producers_in_doubt`), an alerting cause whose only alerts are a backlog against its
    alerting readers (`_readers_in_doubt`). Returns `first` unchanged when nothing is in doubt.
    """
    x = first.root_cause
    if x is not None and x not in alerting:
        return _producers_in_doubt(first, candidates, peers)
    if x is None or first.surge_paths:
        return first
    backlog = _readers_in_doubt(first, alerts, candidates)
    if backlog is not None:
        return backlog
    behind = [c for c in suspects_behind(x, candidates, alerting) if c.name in hard_deps]
    cpu = cpu_only(alerts, x)
    own = cpu or self_inflicted(_not_cpu(alerts), x)
    upstream = list(dict.fromkeys([
        *(r["source"] for r in sources or [] if all(n in alerting for n in r["path"][1:])),
        *(store_readers or []),
    ])) if cpu else []  # fmt: skip
    if not behind and not upstream:
        return first
    ruled = dict(first.ruled_out)
    if own is not None:
        for d in behind:
            ruled[d.name] = f"{x} alerts about its own process ({own})"
        if not upstream:
            return Decision(
                x, [x], first.confidence, first.summary, ruled, first.surge_paths,
                separated_by="; ".join(ruled[d.name] for d in behind), evidence=first.evidence,
                measured=first.measured,
            )  # fmt: skip
        names = [x, *upstream]
        return Decision(
            None, names, round(0.5 / len(names), 2),
            f"Inconclusive (alerts only): {x} alerts about CPU ({own}), which is its own process "
            f"or load arriving from {', '.join(upstream)}; the alerts do not separate them "
            "(request rates in service-graph metrics would).",
            ruled,
        )  # fmt: skip
    quiet = {
        d.name: others for d in behind
        if d.kind == "datastore"
        and (others := [n for n in dependents.get(d.name, []) if n != x])
        and not set(others) & set(alerting)
    }  # fmt: skip
    order = sorted(behind, key=lambda d: (d.name in quiet, d.distance, d.name))
    names = [x, *(d.name for d in order)]
    flags = [c for c in config or [] if c not in names]
    names += flags
    for name in names:
        ruled.pop(name, None)
    kinds = {d.kind or "service" for d in behind}
    what = "which raises" if len(behind) == 1 else "which raise"
    note = "".join(
        f" {d}'s other dependents ({', '.join(others)}) raise none of this incident's "
        "alerts, so it is named later."
        for d, others in quiet.items()
    ) + (
        f" A configuration {x} reads ({', '.join(flags)}) could fail it the same way too; check "
        "it last."
        if flags
        else ""
    )
    return Decision(
        None, names, round(0.5 / len(names), 2),
        f"Inconclusive (alerts only): {x} alerts, but it depends on "
        f"{', '.join(d.name for d in order)} ({', '.join(sorted(kinds))}), {what} no alert of "
        f"{'its' if len(behind) == 1 else 'their'} own and would fail {x}'s requests the same "
        f"way; the alerts do not separate them (service-graph metrics would).{note}",
        ruled,
    )  # fmt: skip


def unmeasured(
    first: Decision,
    alerting: list[str],
    alerts: list[dict[str, Any]],
    candidates: list[Candidate],
    hard_deps: list[str],
    edges: list[dict[str, Any]],
    services: list[dict[str, Any]],
    down: list[dict[str, Any]],
) -> Decision:
    """With evidence: the cause X the evidence blames keeps its place only if what sits behind
    it was measured too. A hard dependency D of X (`hard_deps`, in the walk behind X:
    `suspects_behind`) with no call edge into it, no span metrics and no scrape target that
    says anything (a cache under span metrics only, an uninstrumented database) could be
    failing X's requests unseen: evidence that does not discriminate leaves the finding
    inconclusive, naming X first. An alert about X's own process rules D out, as
    with alerts only. Returns `first` unchanged when everything behind X was measured."""
    x = first.root_cause
    if x is None or first.surge_paths:
        return first
    seen = {e["server"] for e in edges if e["calls"] > 0}
    seen |= {r["component"] for r in services if r["calls"]} | {r["component"] for r in down}
    behind = [
        c.name for c in suspects_behind(x, candidates, alerting)
        if c.name in hard_deps and c.name not in seen
    ]  # fmt: skip
    if not behind:
        return first
    own = self_inflicted(alerts, x)
    if own is not None:
        ruled = dict(first.ruled_out) | {d: f"{x} alerts about its own process ({own})"
                                         for d in behind}  # fmt: skip
        return Decision(
            x, first.candidates, first.confidence, first.summary, ruled, first.surge_paths,
            first.separated_by, first.evidence, first.measured,
        )  # fmt: skip
    return first.in_doubt(
        [x, *behind],
        f"Inconclusive: the evidence blames {x} ({first.summary}), but nothing measures "
        f"{', '.join(behind)} behind it (no call edge into {'it' if len(behind) == 1 else 'them'}, "
        "no span metrics, no scrape target), and "
        f"{'its' if len(behind) == 1 else 'their'} failure would look the same.",
        keep_evidence=True,
    )


def slow_only(alerts: list[dict[str, Any]], component: str) -> bool:
    """Every alert on `component` says it is slow (failure kind `latency`: p95, timeouts,
    slow requests), and there is at least one: what `carried` may follow along the calls."""
    kinds = {classify(a["alertname"], a.get("summary", "")) for a in alerts
             if a["component"] == component}  # fmt: skip
    return kinds == {"latency"}


def backlog_only(alerts: list[dict[str, Any]], component: str) -> bool:
    """Every alert on `component` is a backlog (failure kind `lag`: queue depth, ready
    messages, consumer lag), and there is at least one: it says the readers fall behind."""
    kinds = {classify(a["alertname"], a.get("summary", "")) for a in alerts
             if a["component"] == component}  # fmt: skip
    return kinds == {"lag"}


def _readers_in_doubt(
    first: Decision, alerts: list[dict[str, Any]], candidates: list[Candidate]
) -> Decision | None:
    """An alerting cause X whose every alert is a backlog (failure kind `lag`: queue depth,
    ready messages, consumer lag) with alerting components that depend on it: a backlog says
    X's readers fall behind, which a reader that stopped or slowed causes as well as X, so X's
    alerting dependents are not its victims but suspects, named first (a stalled reader is
    the usual cause of a growing queue). None when X raises any other kind of alert."""
    x = first.root_cause
    mine = next((c for c in candidates if c.name == x), None)
    if mine is None or x is None or not backlog_only(alerts, x):
        return None
    readers = sorted(set(mine.covers) - {x})
    if not readers:
        return None
    return first.in_doubt(
        [*readers, mine.name],
        f"Inconclusive (alerts only): {x} alerts only about a backlog, which its readers "
        f"{', '.join(readers)} falling behind cause as well as {x} itself; "
        f"{'it alerts' if len(readers) == 1 else 'they alert'} too, and the alerts do not "
        "separate them (the readers' call rates in service-graph metrics would). Check "
        f"{'it' if len(readers) == 1 else 'them'} first.",
    )


def _producers_in_doubt(
    first: Decision, candidates: list[Candidate], peers: list[dict[str, Any]]
) -> Decision:
    """A silent topic chosen as the cause: the producers that write to it explain the same
    consumers (one hop further), and with alerts only nothing separates a broken topic from a
    producer that stopped writing: inconclusive, naming the topic first. A producer whose own
    alert names the topic, or another silent component that explains the same consumers (the
    broker), as the peer that fails is its victim, not a suspect."""
    topic = next((c for c in candidates if c.name == first.root_cause), None)
    if topic is None or topic.kind != "topic":
        return first
    behind = {c.name for c in candidates if set(topic.covers) <= set(c.covers)}
    ruled = dict(first.ruled_out)
    producers = []
    for c in candidates:
        if not (
            c.via_topic == topic.name and set(topic.covers) <= set(c.covers)
            and c.distance <= topic.distance + len(topic.covers)
        ):  # fmt: skip
            continue
        blamed = sorted(
            p["peer"] for p in peers if p["component"] == c.name and p["peer"] in behind
        )  # fmt: skip
        if blamed:
            ruled[c.name] = f"its own alerts name {', '.join(blamed)} as the peer that fails"
        else:
            producers.append(c.name)
    if not producers:
        return Decision(
            first.root_cause, first.candidates, first.confidence, first.summary, ruled,
            first.surge_paths, separated_by=first.separated_by, evidence=first.evidence,
            measured=first.measured,
        )  # fmt: skip
    names = [topic.name, *producers]
    return Decision(
        None, names, round(0.5 / len(names), 2),
        f"Inconclusive (alerts only): the consumers of {topic.name} alert; the topic itself or "
        f"its producer{'s' if len(producers) > 1 else ''} {', '.join(producers)} could have "
        "stopped the flow, and the alerts do not separate them.", ruled,
    )  # fmt: skip


def suspects_behind(x: str, candidates: list[Candidate], alerting: list[str]) -> list[Candidate]:
    """Silent candidates other than `x` that explain as many alerting components as `x` and
    sit one hop deeper than it for each of them (its direct dependencies in the walk)."""
    mine = next((c for c in candidates if c.name == x), None)
    if mine is None:
        return []
    return [
        c for c in candidates
        if c.name != x and c.name not in alerting and set(mine.covers) <= set(c.covers)
        and c.distance <= mine.distance + len(mine.covers)
    ]  # fmt: skip


def victim_of(decision: Decision, name: str) -> str | None:
    """Why the evidence of `decision` set `name` aside as a victim (its calls into a degraded
    dependency fail or slowed: its trouble measured to come from there), or None."""
    why = decision.ruled_out.get(name)
    return why if why is not None and why.startswith(VICTIM_OF) else None
