"""Service-graph evidence replayed by a real Prometheus, for `blast-radius demo`, `bench/rca.py`
and the tests: Debian's `prometheus` (2.42) over a TSDB written beforehand with `promtool tsdb
create-blocks-from openmetrics`, so the caller controls exactly which series exist.

The series are those of the OpenTelemetry Collector's servicegraph connector
(`traces_service_graph_request_total`, `_failed_total`, `_server_seconds` histogram; labels
client, server, connection_type) and, optionally, span metrics
(`traces_span_metrics_calls_total{service_name, status_code}`): per call edge a rate, a failure
ratio and a mean server time that change while a fault lasts (`Window`).

The demo's faults leave the evidence of `gateway/data/otel-demo/evidence.yaml` (written from
each fault's mechanism; the ground truth stays in faults.yaml and is never read here).
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

import httpx
import yaml

from adapters.falkordb import free_port
from adapters.processes import stop_process
from gateway.world import demo_world_path

#: Seconds between samples, as a 15 s scrape interval.
STEP_S = 15
#: History written before "now" (s) by default: the incident window plus a full baseline hour.
HISTORY_S = 2 * 3600
#: Around a demo scenario, series cover this long before its alerts (the baseline hour and the
#: window before the incident) and after them (the window after it), sampled this often (s).
SCENARIO_BEFORE_S = 75 * 60
SCENARIO_AFTER_S = 15 * 60
DEMO_STEP_S = 30
#: A demo fault starts this long before its first alert and lasts this long (s).
FAULT_LEAD_S = 2 * 60
FAULT_LASTS_S = 30 * 60


@dataclass
class Window:
    """What one edge does from `start_s` until `end_s` (epoch s; None = until now): calls/s,
    fail ratio 0-1, mean server time (ms); None keeps the edge's usual value."""

    start_s: int
    end_s: int | None = None
    rate: float | None = None
    fail: float | None = None
    latency_ms: float | None = None


@dataclass
class Edge:
    """One client -> server call edge: calls/s, fail ratio and mean server time (ms) as usual,
    and after `PrometheusServer`'s `fault_at_s` (`*_after`, None = unchanged) or during its own
    `windows` (several faults on one timeline, as the demo's)."""

    client: str
    server: str
    rate: float = 2.0
    fail: float = 0.0
    latency_ms: float = 20.0
    rate_after: float | None = None
    fail_after: float | None = None
    latency_after_ms: float | None = None
    connection_type: str = ""
    windows: list[Window] = field(default_factory=list)

    def at(self, t: int, fault_at_s: int | None) -> tuple[float, float, float]:
        """(calls/s, fail ratio, mean server time ms) at epoch second `t`."""
        rate, fail, lat = self.rate, self.fail, self.latency_ms
        if fault_at_s is not None and t >= fault_at_s:
            rate = self.rate_after if self.rate_after is not None else rate
            fail = self.fail_after if self.fail_after is not None else fail
            lat = self.latency_after_ms if self.latency_after_ms is not None else lat
        for w in self.windows:
            if w.start_s <= t and (w.end_s is None or t < w.end_s):
                rate = w.rate if w.rate is not None else rate
                fail = w.fail if w.fail is not None else fail
                lat = w.latency_ms if w.latency_ms is not None else lat
        return rate, fail, lat


def openmetrics(
    edges: list[Edge],
    times: list[int],
    fault_at_s: int | None,
    spans: bool,
    prefix: str = "",
    step_s: int = STEP_S,
    service_graph: bool = True,
) -> str:
    """The OpenMetrics text of every series of `edges`, sampled at `times` (epoch s, ascending;
    counters grow by value x `step_s` per sample); every metric name starts with `prefix` (a
    namespace, as collectors often add). `service_graph=False` writes span metrics only (a
    datastore, which has no spans of its own, then leaves no trace)."""
    families: dict[str, list[str]] = {}

    def cumulative(edge: Edge, what: str) -> list[float]:
        total, out = 0.0, []
        for t in times:
            rate, fail, lat = edge.at(t, fault_at_s)
            total += {"calls": rate, "failed": rate * fail, "seconds": rate * lat / 1000}[
                what
            ] * step_s
            out.append(total)
        return out

    def add(family: str, sample: str, labels: str, values: list[float]) -> None:
        family, sample = prefix + family, prefix + sample
        lines = families.setdefault(family, [])
        lines += [f"{sample}{{{labels}}} {v:.6f} {t}" for t, v in zip(times, values, strict=True)]

    for e in edges if service_graph else []:
        labels = f'client="{e.client}",server="{e.server}",connection_type="{e.connection_type}"'
        calls = cumulative(e, "calls")
        add("traces_service_graph_request counter", "traces_service_graph_request_total",
            labels, calls)  # fmt: skip
        add("traces_service_graph_request_failed counter",
            "traces_service_graph_request_failed_total", labels,
            cumulative(e, "failed"))  # fmt: skip
        hist = "traces_service_graph_request_server_seconds"
        add(f"{hist} histogram", f"{hist}_bucket", labels + ',le="+Inf"', calls)
        add(f"{hist} histogram", f"{hist}_sum", labels, cumulative(e, "seconds"))
        add(f"{hist} histogram", f"{hist}_count", labels, calls)
    if spans:
        # Span metrics come from instrumented services: not from a datastore's or broker's side.
        servers = sorted({e.server for e in edges if e.connection_type == ""})
        for server in servers:
            mine = [e for e in edges if e.server == server]
            ok = [sum(v) for v in zip(*(cumulative(e, "calls") for e in mine), strict=True)]
            bad = [sum(v) for v in zip(*(cumulative(e, "failed") for e in mine), strict=True)]
            good = [o - b for o, b in zip(ok, bad, strict=True)]
            for code, values in (("STATUS_CODE_UNSET", good), ("STATUS_CODE_ERROR", bad)):
                add("traces_span_metrics_calls counter", "traces_span_metrics_calls_total",
                    f'service_name="{server}",status_code="{code}"', values)  # fmt: skip
    text = []
    for family, lines in families.items():
        name, kind = family.split()
        text.append(f"# TYPE {name} {kind}")
        text += lines
    return "\n".join(text) + "\n# EOF\n"


def available() -> bool:
    """Whether `prometheus` and `promtool` are on PATH (Debian package `prometheus`)."""
    return bool(shutil.which("prometheus") and shutil.which("promtool"))


class PrometheusServer:
    """Prometheus on a free loopback port over a TSDB holding exactly `edges`' series, sampled
    every `STEP_S` over the last `HISTORY_S` (or at `times`, `step_s` apart). Raises
    RuntimeError when it does not start within 60 s, `subprocess.CalledProcessError` when
    promtool refuses the data."""

    def __init__(
        self,
        folder: Path,
        edges: list[Edge],
        fault_at_s: int | None,
        spans: bool = False,
        prefix: str = "",
        times: list[int] | None = None,
        step_s: int = STEP_S,
        service_graph: bool = True,
    ) -> None:
        self.folder = folder
        self.now_s = int(time.time())
        self.fault_at_s = fault_at_s
        data = folder / "data"
        data.mkdir(parents=True)
        if edges:
            times = times or list(range(self.now_s - HISTORY_S, self.now_s + 1, STEP_S))
            source = folder / "series.om"
            source.write_text(
                openmetrics(edges, times, fault_at_s, spans, prefix, step_s, service_graph)
            )
            subprocess.run(
                ["promtool", "tsdb", "create-blocks-from", "openmetrics", "-q", str(source),
                 str(data)],
                check=True, capture_output=True, timeout=300,
            )  # fmt: skip
            source.unlink()
        config = folder / "prometheus.yml"
        config.write_text("global:\n  scrape_interval: 1h\n")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = (folder / "prometheus.log").open("wb")
        self.process = subprocess.Popen(
            [shutil.which("prometheus") or "prometheus", f"--config.file={config}",
             f"--storage.tsdb.path={data}", f"--web.listen-address=127.0.0.1:{self.port}",
             "--storage.tsdb.retention.time=30d"],
            stdout=self._log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/-/ready", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.process.poll() is not None:
                break
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"prometheus did not start: {(folder / 'prometheus.log').read_text()}")

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 10 s)."""
        stop_process(self.process, 10)
        self._log.close()


def background() -> list[Edge]:
    """The healthy service graph of the demo world: every business and config call
    (CALLS, READS_WRITES) at 2 calls/s (clients 5/s), and a producer -> consumer messaging edge
    per topic at 1/s, all without failures at 20 ms."""
    world = yaml.safe_load(demo_world_path().read_text(encoding="utf-8"))
    clients = {c["id"] for c in world["components"] if c.get("client")}
    edges: list[Edge] = []
    for e in world["edges"]:
        if e.get("purpose", "business") == "telemetry":
            continue
        if e["type"] in ("CALLS", "READS_WRITES"):
            kind = "database" if e["type"] == "READS_WRITES" else ""
            rate = 5.0 if e["from"] in clients else 2.0
            edges.append(Edge(e["from"], e["to"], rate=rate, connection_type=kind))
    producers = [(e["from"], e["to"]) for e in world["edges"] if e["type"] == "PUBLISHES"]
    consumers = [(e["from"], e["to"]) for e in world["edges"] if e["type"] == "CONSUMES"]
    for producer, topic in producers:
        for consumer, read in consumers:
            if read == topic:
                edges.append(Edge(producer, consumer, rate=1.0, connection_type="messaging_system"))
    return edges


def with_evidence(changes: dict[str, dict[str, Any]]) -> list[Edge]:
    """The background with one fault's changes applied after the server's `fault_at_s`
    (`"client>server" -> {fail_after, latency_after_ms, rate_after}`; new edges added;
    `server_label` renames the server as the metrics spell it, e.g. `valkey-cart:6379`)."""
    edges = _by_key(background())
    for key, change in changes.items():
        change = dict(change)
        label = change.pop("server_label", None)
        edges[key] = replace(_edge(edges, key), **change, **({"server": label} if label else {}))
    return list(edges.values())


def _by_key(edges: list[Edge]) -> dict[str, Edge]:
    """Edges by their `client>server` key, the form the evidence files use."""
    return {f"{e.client}>{e.server}": e for e in edges}


def _edge(edges: dict[str, Edge], key: str) -> Edge:
    """The edge of `key` (`client>server`), or a new healthy one when the background has none."""
    client, server = key.split(">")
    return edges.get(key, Edge(client, server))


def demo_evidence() -> dict[str, dict[str, dict[str, Any]]]:
    """`gateway/data/otel-demo/evidence.yaml`: fault flag -> its evidence changes."""
    path = Path(str(resources.files("gateway").joinpath("data/otel-demo/evidence.yaml")))
    faults = yaml.safe_load(path.read_text(encoding="utf-8"))["faults"]
    return {flag: spec.get("evidence", {}) for flag, spec in faults.items()}


def demo_timeline(starts: dict[str, int]) -> tuple[list[Edge], list[int]]:
    """The edges and sample times of the demo's faults on one timeline: fault flag -> the
    epoch second its first alert starts. Each fault's changes hold from `FAULT_LEAD_S` before
    it for `FAULT_LASTS_S`; samples (every `DEMO_STEP_S`, for `PrometheusServer`'s `step_s`)
    cover each scenario's baseline hour and window only (the scenarios are hours apart, and
    Prometheus needs nothing in between)."""
    evidence = demo_evidence()
    edges = _by_key(background())
    for flag, start in starts.items():
        for key, change in evidence.get(flag, {}).items():
            base = _edge(edges, key)
            window = Window(
                start - FAULT_LEAD_S, start + FAULT_LASTS_S, change.get("rate_after"),
                change.get("fail_after"), change.get("latency_after_ms"),
            )  # fmt: skip
            edges[key] = replace(base, windows=[*base.windows, window])
    times: set[int] = set()
    for start in starts.values():
        first = (start - SCENARIO_BEFORE_S) // DEMO_STEP_S * DEMO_STEP_S
        times.update(range(first, start + SCENARIO_AFTER_S, DEMO_STEP_S))
    return list(edges.values()), sorted(times)
