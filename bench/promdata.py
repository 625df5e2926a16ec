"""A real Prometheus (Debian's `prometheus` 2.42) for tests and `bench/rca.py`, its TSDB written
beforehand with `promtool tsdb create-blocks-from openmetrics`, so the caller controls exactly
which series exist, ending at "now".

`service_graph(...)` writes the service-graph metrics of the OpenTelemetry Collector's
servicegraph connector (`traces_service_graph_request_total`, `_failed_total`,
`_server_seconds` histogram; labels client, server, connection_type) and, optionally, span
metrics (`traces_span_metrics_calls_total{service_name, status_code}`) for edges whose rate,
failure ratio and latency change at a given moment.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from adapters.falkordb import free_port

#: Seconds between samples, as a 15 s scrape interval.
STEP_S = 15
#: History written before "now" (s): the incident window plus a full baseline hour.
HISTORY_S = 2 * 3600


@dataclass
class Edge:
    """One client -> server call edge: calls/s, fail ratio and mean server time (ms) before
    `PrometheusServer.fault_at`, and after it (None = unchanged)."""

    client: str
    server: str
    rate: float = 2.0
    fail: float = 0.0
    latency_ms: float = 20.0
    rate_after: float | None = None
    fail_after: float | None = None
    latency_after_ms: float | None = None
    connection_type: str = ""


def openmetrics(
    edges: list[Edge], now_s: int, fault_at_s: int, spans: bool, prefix: str = ""
) -> str:
    """The OpenMetrics text of every series of `edges` from `now - HISTORY_S` to now; every
    metric name starts with `prefix` (a namespace, as collectors often add)."""
    times = list(range(now_s - HISTORY_S, now_s + 1, STEP_S))
    families: dict[str, list[str]] = {}

    def cumulative(edge: Edge, what: str) -> list[float]:
        total, out = 0.0, []
        for t in times:
            after = t >= fault_at_s
            rate = edge.rate_after if after and edge.rate_after is not None else edge.rate
            fail = edge.fail_after if after and edge.fail_after is not None else edge.fail
            lat = (
                edge.latency_after_ms
                if after and edge.latency_after_ms is not None
                else edge.latency_ms
            )
            total += {"calls": rate, "failed": rate * fail, "seconds": rate * lat / 1000}[
                what
            ] * STEP_S
            out.append(total)
        return out

    def add(family: str, sample: str, labels: str, values: list[float]) -> None:
        family, sample = prefix + family, prefix + sample
        lines = families.setdefault(family, [])
        lines += [f"{sample}{{{labels}}} {v:.6f} {t}" for t, v in zip(times, values, strict=True)]

    for e in edges:
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
        servers = sorted({e.server for e in edges})
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


class PrometheusServer:
    """Prometheus on a free loopback port over a TSDB holding exactly `edges`' series."""

    def __init__(
        self,
        folder: Path,
        edges: list[Edge],
        fault_at_s: int,
        spans: bool = False,
        prefix: str = "",
    ) -> None:
        self.folder = folder
        self.now_s = int(time.time())
        self.fault_at_s = fault_at_s
        data = folder / "data"
        data.mkdir(parents=True)
        if edges:
            source = folder / "series.om"
            source.write_text(openmetrics(edges, self.now_s, fault_at_s, spans, prefix))
            subprocess.run(
                ["promtool", "tsdb", "create-blocks-from", "openmetrics", "-q", str(source),
                 str(data)],
                check=True, capture_output=True, timeout=120,
            )  # fmt: skip
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
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
