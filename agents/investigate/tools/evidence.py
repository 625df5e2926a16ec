"""Evidence tools: the call graph's own health from Prometheus.

Sources (docs/architecture.md, evidence):
- Service-graph metrics written by the OpenTelemetry Collector's servicegraph connector and
  Tempo's metrics-generator: `traces_service_graph_request_total`,
  `traces_service_graph_request_failed_total` (counters) and
  `traces_service_graph_request_server_seconds` (histogram), labels `client`, `server`,
  `connection_type`; matched by name suffix because a namespace prefix is common.
- Span metrics (spanmetrics connector): `traces_span_metrics_calls_total` or `calls_total`
  with `service_name` and `status_code` (`STATUS_CODE_ERROR`).
- `up` of scrape targets, and any PromQL a playbook check names.

Windows (alert time, so a replay answers the same): the incident window runs from
`WINDOW_BEFORE_MS` before the incident's start to `WINDOW_AFTER_MS` after it (never past now);
the baseline is the hour before the incident window. Label values map to components like
alert labels do: by name or alias, also without a `:port` suffix, a `namespace/` prefix or a
domain (`cart.shop.svc` -> `cart`).
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import Field

from adapters.promql import BoundedPromQL
from agents.investigate.tools.base import (
    Tool,
    ToolContext,
    ToolInput,
    ToolResult,
    component_names,
    rows_result,
)

#: The incident window starts this long before the incident opened (alerts fire after the
#: fault begins: `for:` clauses and rate windows) and ends this long after (ms).
WINDOW_BEFORE_MS = 5 * 60 * 1000
WINDOW_AFTER_MS = 5 * 60 * 1000
#: The baseline is this long, ending where the incident window starts (ms).
BASELINE_MS = 60 * 60 * 1000
#: Fewer calls than this in a window say nothing about a ratio.
MIN_CALLS = 5
#: At most this many edges reach a planner (worst first).
EDGE_ROWS = 200

SERVICE_GRAPH = r'{{__name__=~"(.+_)?traces_service_graph_request_{what}"}}'
SPAN_CALLS = r'{__name__=~"(.+_)?(traces_span_metrics_calls_total|calls_total)"}'


def windows(ctx: ToolContext) -> dict[str, float]:
    """The incident window and the baseline as Prometheus instant-query times and ranges
    (seconds): `{at, range, base_at, base_range}`."""
    now_ms = time.time() * 1000
    end = min(ctx.opened_ms + WINDOW_AFTER_MS, now_ms)
    start = ctx.opened_ms - WINDOW_BEFORE_MS
    return {
        "at": end / 1000,
        "range": max(60, round((end - start) / 1000)),
        "base_at": start / 1000,
        "base_range": BASELINE_MS // 1000,
    }


def _sum_by(ctx: ToolContext, expr: str, by: str, at: float, rng: float) -> list[dict[str, Any]]:
    """`sum by (<by>) (increase(<expr>[<rng>s]))` at `at`; raises `AdapterError`."""
    assert ctx.prometheus is not None
    query = f"sum by ({by}) (increase({expr}[{int(rng)}s]))"
    return ctx.prometheus.instant(query, at)


def _no_source() -> ToolResult:
    return ToolResult(status="error", detail="PROMETHEUS_URL is not set: no live evidence")


class EdgeInput(ToolInput):
    """Which calls to report: those from or to these components (omit for every edge)."""

    components: list[str] | None = Field(
        None, description="component names; omit for every edge of the service graph"
    )


def edge_health(ctx: ToolContext, args: EdgeInput) -> ToolResult:
    """Health of each call edge (client -> server) of the service graph, incident window
    against the hour before.

    `data`: rows `{client, server (component names, or the raw label value when unknown),
    connection_type, known (both ends are components), client_is_source (the world marks the
    client as a traffic source), calls, failed, fail_ratio,
    baseline_calls, baseline_fail_ratio, rate_per_s, baseline_rate_per_s, rate_change (window
    rate / baseline rate, None without a baseline), latency_ms, baseline_latency_ms (mean server
    time)}`, worst failure first. `no_data` when no service-graph series exists.
    """
    if ctx.prometheus is None:
        return _no_source()
    w = windows(ctx)
    by = "client, server, connection_type"
    series: dict[str, list[dict[str, Any]]] = {}
    for key, what, at, rng in (
        ("calls", "total", w["at"], w["range"]),
        ("failed", "failed_total", w["at"], w["range"]),
        ("base_calls", "total", w["base_at"], w["base_range"]),
        ("base_failed", "failed_total", w["base_at"], w["base_range"]),
        ("seconds", "server_seconds_sum", w["at"], w["range"]),
        ("count", "server_seconds_count", w["at"], w["range"]),
        ("base_seconds", "server_seconds_sum", w["base_at"], w["base_range"]),
        ("base_count", "server_seconds_count", w["base_at"], w["base_range"]),
    ):
        series[key] = _sum_by(ctx, SERVICE_GRAPH.format(what=what), by, at, rng)
    edges: dict[tuple[str, str, str], dict[str, float]] = {}
    for key, rows in series.items():
        for row in rows:
            m = row["metric"]
            ident = (m.get("client", ""), m.get("server", ""), m.get("connection_type", ""))
            edges.setdefault(ident, {})[key] = row["value"]
    if not edges:
        return ToolResult(status="no_data", data=[], raw=w, detail="no service-graph series")
    names = component_names(ctx, sorted({v for e in edges for v in e[:2] if v}))
    wanted = set(args.components) if args.components is not None else None
    out = []
    for (client, server, ctype), v in edges.items():
        row = _edge_row(names.get(client) or client, names.get(server) or server, ctype, v, w)
        row["known"] = bool(names.get(client)) and bool(names.get(server))
        row["client_is_source"] = row["client"] in ctx.clients
        if wanted is None or {row["client"], row["server"]} & wanted:
            out.append(row)
    out.sort(key=_edge_order)
    return rows_result(out, "call edges", raw=w, limit=EDGE_ROWS)


def _edge_order(row: dict[str, Any]) -> tuple[float, float, str, str]:
    """Worst first: failure rise, then slowdown or traffic jump, so a bounded answer keeps
    the edges that matter."""
    rise = (row["fail_ratio"] or 0.0) - (row["baseline_fail_ratio"] or 0.0)
    slow = (row["latency_ms"] or 0.0) / (row["baseline_latency_ms"] or row["latency_ms"] or 1.0)
    return (-rise, -max(slow, row["rate_change"] or 0.0), row["client"], row["server"])


def _edge_row(
    client: str, server: str, ctype: str, v: dict[str, float], w: dict[str, float]
) -> dict[str, Any]:
    """One edge's figures from its summed series (see `edge_health`)."""
    calls, base = v.get("calls", 0.0), v.get("base_calls", 0.0)
    rate, base_rate = calls / w["range"], base / w["base_range"]
    return {
        "client": client, "server": server, "connection_type": ctype,
        "calls": round(calls, 1), "failed": round(v.get("failed", 0.0), 1),
        "fail_ratio": _ratio(v.get("failed", 0.0), calls),
        "baseline_calls": round(base, 1),
        "baseline_fail_ratio": _ratio(v.get("base_failed", 0.0), base),
        "rate_per_s": round(rate, 4), "baseline_rate_per_s": round(base_rate, 4),
        "rate_change": round(rate / base_rate, 2) if base >= MIN_CALLS else None,
        "latency_ms": _mean_ms(v.get("seconds"), v.get("count")),
        "baseline_latency_ms": _mean_ms(v.get("base_seconds"), v.get("base_count")),
    }  # fmt: skip


def _ratio(part: float, whole: float) -> float | None:
    """part / whole rounded to 4 places, None below `MIN_CALLS` calls."""
    return round(min(1.0, part / whole), 4) if whole >= MIN_CALLS else None


def _mean_ms(seconds: float | None, count: float | None) -> float | None:
    """Mean of a histogram in ms (sum / count), None without observations."""
    if seconds is None or not count:
        return None
    return round(1000 * seconds / count, 1)


class ServicesInput(ToolInput):
    """Which services to report (omit for all)."""

    components: list[str] | None = Field(None, description="component names; omit for all")


def service_errors(ctx: ToolContext, args: ServicesInput) -> ToolResult:
    """Error ratio of each service's spans from span metrics (`status_code` =
    `STATUS_CODE_ERROR`), incident window against the hour before.

    `data`: rows `{component, calls, error_ratio, baseline_error_ratio}`, worst first.
    """
    if ctx.prometheus is None:
        return _no_source()
    w = windows(ctx)
    by = "service_name, status_code"
    now = _sum_by(ctx, SPAN_CALLS, by, w["at"], w["range"])
    base = _sum_by(ctx, SPAN_CALLS, by, w["base_at"], w["base_range"])
    totals: dict[str, dict[str, float]] = {}
    for key, rows in (("", now), ("base_", base)):
        for row in rows:
            m, value = row["metric"], row["value"]
            t = totals.setdefault(m.get("service_name", ""), {})
            t[key + "calls"] = t.get(key + "calls", 0.0) + value
            if m.get("status_code") == "STATUS_CODE_ERROR":
                t[key + "errors"] = t.get(key + "errors", 0.0) + value
    totals.pop("", None)
    names = component_names(ctx, sorted(totals))
    wanted = set(args.components) if args.components is not None else None
    out: list[dict[str, Any]] = []
    for service, t in totals.items():
        name = names.get(service) or service
        if wanted is None or name in wanted:
            out.append({
                "component": name, "known": bool(names.get(service)),
                "calls": round(t.get("calls", 0.0), 1),
                "error_ratio": _ratio(t.get("errors", 0.0), t.get("calls", 0.0)),
                "baseline_error_ratio": _ratio(t.get("base_errors", 0.0), t.get("base_calls", 0.0)),
            })  # fmt: skip
    out.sort(key=lambda r: (-(r["error_ratio"] or 0), r["component"]))
    return rows_result(out, "services with span metrics", raw=w)


def targets_down(ctx: ToolContext, args: ServicesInput) -> ToolResult:
    """Scrape targets whose `up` is 0 at the incident's window end, mapped to components by
    their `service`, `job` or `instance` label.

    `data`: rows `{component (or the raw label), job, instance}`; `no_data` when every target
    is up (or no `up` series exists).
    """
    if ctx.prometheus is None:
        return _no_source()
    w = windows(ctx)
    rows = ctx.prometheus.instant("up == 0", w["at"])
    labels = [
        next((r["metric"][k] for k in ("service", "job", "instance") if r["metric"].get(k)), "")
        for r in rows
    ]
    names = component_names(ctx, sorted(set(filter(None, labels))))
    out = [
        {"component": names.get(label) or label, "job": r["metric"].get("job"),
         "instance": r["metric"].get("instance")}
        for r, label in zip(rows, labels, strict=True)
    ]  # fmt: skip
    if args.components is not None:
        out = [r for r in out if r["component"] in set(args.components)]
    return rows_result(out, "targets down", raw={"query": "up == 0", "at": w["at"]})


class PromQLInput(ToolInput):
    """One PromQL expression, evaluated at the end of the incident window."""

    query: BoundedPromQL = Field(
        min_length=1, max_length=4000,
        description="a PromQL expression (no subqueries; range selectors of at most 1d)",
    )  # fmt: skip


def promql(ctx: ToolContext, args: PromQLInput) -> ToolResult:
    """Any instant PromQL query, evaluated at the end of the incident window.

    `data`: rows `{metric: {labels}, value}`. A bad query is an `error` result with the reason;
    so is any query to a Prometheus shared with other tenants (its series are theirs too).
    """
    if ctx.prometheus is None:
        return _no_source()
    if not ctx.prometheus.own:  # a shared Prometheus holds other tenants' series too
        return ToolResult(status="error", detail="free PromQL needs this tenant's own "
                          "Prometheus (BLAST_PROMETHEUS_URLS)")  # fmt: skip
    at = windows(ctx)["at"]
    rows = ctx.prometheus.instant(args.query, at)
    return rows_result(rows, "samples", raw={"query": args.query, "at": at})


def _touch_components(ctx: ToolContext, args: Any) -> list[str]:
    """TOUCHED: the components asked about, else the alerting ones."""
    return list(args.components if args.components is not None else ctx.alerting)


#: What every tool of this family needs: a Prometheus to ask.
PROMETHEUS = frozenset({"prometheus"})

TOOLS = (
    Tool(
        "edge_health",
        "Calls between services from service-graph metrics: for each client -> server edge, "
        "how many calls failed and how slow they were in the incident window, against the hour "
        "before, and how the request rate changed. The component whose incoming calls fail "
        "(or slowed) while its own calls are healthy is where the failure starts; a client "
        "whose request rate jumped is a traffic source.",
        EdgeInput,
        edge_health,
        _touch_components,
        outside=True,
        needs=PROMETHEUS,
    ),
    Tool(
        "service_errors",
        "Per-service error ratio of spans (span metrics) in the incident window against the "
        "hour before.",
        ServicesInput,
        service_errors,
        _touch_components,
        outside=True,
        needs=PROMETHEUS,
    ),
    Tool(
        "targets_down",
        "Scrape targets that are down (`up == 0`), mapped to components.",
        ServicesInput,
        targets_down,
        _touch_components,
        outside=True,
        needs=PROMETHEUS,
    ),
    Tool(
        "promql",
        "Run one PromQL instant query at the end of the incident window (for a saturation or "
        "resource question the other tools do not answer).",
        PromQLInput,
        promql,
        outside=True,
        needs=PROMETHEUS,
    ),
)
