"""What a claim in a finding rests on: one measurement per ruled-out or healthy claim.

An engineer who reads "ruled out: calls into it are healthy" stops looking there, so the claim
must say who looked, at what, and when; where nobody looked it says "not measured". A missing
series is `no_data`, never a healthy value (docs/architecture.md §4b).

A measurement is a dict (JSON in the finding, `finding.ruled_out[].evidence` in the API):

- `source`: `service graph` (the OpenTelemetry servicegraph connector's
  `traces_service_graph_request_total` / `_failed_total` / `_server_seconds`), `span metrics`
  (`traces_span_metrics_calls_total` or `calls_total`), `up` (scrape targets), `changes`
  (deploys and merged pull requests in the graph), `alerts` (the incident's alerts and the world's
  dependency graph);
- `query`: the series or query read (PromQL selector, or the graph query's name);
- `value`: the number measured (a fail ratio 0-1, a count, a share), None when nothing was;
- `window`: `<start>/<end>` in ISO 8601 UTC (the incident window the value covers);
- `status`: `ok` (measured), `no_data` (the source answered, no series matched), `not_measured`
  (no source was asked: no `PROMETHEUS_URL`, or the claim is about something no source covers),
  `changed` (measured, but the calls answer markedly faster than usual: `FASTER`; a value, not
  a healthy one);
- `text`: the line the page, the ticket and the web page print.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

#: PromQL selectors the evidence tools read (`agents/investigate/tools/evidence.py`), as the
#: measurements name them.
SERVICE_GRAPH_QUERY = 'traces_service_graph_request_failed_total{{server="{name}"}} / _total'
SPAN_QUERY = 'traces_span_metrics_calls_total{{service_name="{name}"}}'
UP_QUERY = "up == 0"
#: Calls into a component answered in at most this share of their usual time (the hour
#: before, `FASTER_MIN_MS` or more) are not counted healthy: a dependency that suddenly answers
#: much faster at its usual rate is often answering empty (a parser that drops every ad, a
#: client short-circuiting to a default), and its failures do not show as errors.
FASTER = 0.7
FASTER_MIN_MS = 10.0


def window(raw: Any) -> str:
    """The incident window of an evidence tool's `raw` (`{at, range}` in s) as
    `<start>/<end>` ISO 8601 UTC; empty when unknown."""
    if not isinstance(raw, dict) or "at" not in raw or "range" not in raw:
        return ""
    end = float(raw["at"])
    return f"{_iso(end - float(raw['range']))}/{_iso(end)}"


def _iso(epoch_s: float) -> str:
    return datetime.fromtimestamp(epoch_s, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def span(win: str) -> str:
    """`2026-12-01T23:05:00Z/2026-12-01T23:15:00Z` -> `23:05-23:15 UTC`; empty stays empty."""
    if "/" not in win:
        return ""
    start, end = win.split("/")
    return f"{start[11:16]}-{end[11:16]} UTC"


def measurement(
    source: str,
    query: str,
    value: float | None,
    text: str,
    win: str = "",
    status: str = "ok",
) -> dict[str, Any]:
    """One measurement (module docstring)."""
    return {"source": source, "query": query, "value": value, "window": win,
            "status": status, "text": text}  # fmt: skip


def calls_into(
    name: str,
    edges: list[dict[str, Any]],
    services: list[dict[str, Any]],
    down: list[dict[str, Any]],
    win: str | None,
    min_calls: float = 5,
) -> dict[str, Any]:
    """What the evidence measured about `name`: the calls into it (service graph), else its
    spans (span metrics), else its scrape target (`up`), else `no_data` saying which sources
    had no series for it in the window. `win` None: no evidence source was asked at all
    (`not_measured`)."""
    if win is None:
        return measurement(
            "service graph", "", None,
            f"not measured: no live evidence source was asked about {name} (alerts only)",
            "", "not_measured",
        )  # fmt: skip
    when = f" ({span(win)})" if win else ""
    calls = sum(e["calls"] for e in edges if e["server"] == name)
    failed = sum(e["failed"] for e in edges if e["server"] == name)
    if calls >= min_calls:
        ratio = round(failed / calls, 4)
        quick = faster(name, edges)
        if quick is not None:
            now, before = quick
            return measurement(
                "service graph", SERVICE_GRAPH_QUERY.format(name=name), ratio,
                f"{_share(ratio)} of {calls:,.0f} calls into {name} failed{when}, but they were "
                f"answered in {now:.0f} ms against {before:.0f} ms the hour before: faster than "
                "usual, as a dependency answering empty is; not counted healthy", win, "changed",
            )  # fmt: skip
        return measurement(
            "service graph", SERVICE_GRAPH_QUERY.format(name=name), ratio,
            f"{_share(ratio)} of {calls:,.0f} calls into {name} failed{when}, service graph",
            win,
        )  # fmt: skip
    row = next((r for r in services if r["component"] == name and r["calls"]), None)
    if row is not None and row["error_ratio"] is not None:
        return measurement(
            "span metrics", SPAN_QUERY.format(name=name), row["error_ratio"],
            f"{_share(row['error_ratio'])} of {row['calls']:,.0f} spans of {name} failed{when}, "
            "span metrics", win,
        )  # fmt: skip
    if any(r["component"] == name for r in down):
        return measurement("up", UP_QUERY, 0.0, f"{name}'s scrape target is down{when}", win)
    return measurement(
        "service graph", SERVICE_GRAPH_QUERY.format(name=name), None,
        f"not measured: no service-graph, span-metric or `up` series for {name}{when}",
        win, "no_data",
    )  # fmt: skip


def faster(name: str, edges: list[dict[str, Any]]) -> tuple[float, float] | None:
    """`(ms now, ms the hour before)` of the calls into `name` (means weighted by calls) when
    they are answered in at most `FASTER` x their usual time, the usual being `FASTER_MIN_MS`
    or more; else None (`edges`: `edge_health` rows)."""
    timed = [e for e in edges if e["server"] == name and e.get("latency_ms") is not None
             and e.get("baseline_latency_ms") is not None and e["calls"]]  # fmt: skip
    if not timed:
        return None
    calls = sum(e["calls"] for e in timed)
    now = sum(e["latency_ms"] * e["calls"] for e in timed) / calls
    before = sum(e["baseline_latency_ms"] * e["calls"] for e in timed) / calls
    return (now, before) if before >= FASTER_MIN_MS and now <= FASTER * before else None


def healthy(m: dict[str, Any]) -> bool:
    """Whether a measurement (`calls_into`) measured a value at all (a healthy claim needs one)."""
    return m["status"] == "ok" and m["value"] is not None


def from_alerts(text: str, value: float | None = None) -> dict[str, Any]:
    """A claim the incident's alerts and the world's dependency graph make (who alerts, who
    depends on whom): the window is the incident's alerts themselves."""
    return measurement("alerts", "incident_alerts, coverage_walk", value, text)


def from_changes(text: str, lookback_ms: int, count: int) -> dict[str, Any]:
    """A claim about recent changes (deploys, merged pull requests) in the graph over
    `lookback_ms` before the incident opened."""
    hours = lookback_ms / 3_600_000
    return measurement(
        "changes", "recent_changes", float(count), f"{text} ({count} in the {hours:g} h before)"
    )


def _share(ratio: float) -> str:
    value = 100 * ratio
    return f"{value:.0f} %" if value >= 10 or value == 0 else f"{value:.1f} %"
