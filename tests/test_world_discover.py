"""The live call graph from a real Prometheus (Debian's 2.42) whose service-graph series were
backfilled with `promtool tsdb create-blocks-from openmetrics`: discovery adds edges with their
rates, maps names through aliases, reports messaging pairs, retires an edge whose calls stopped,
and `serve`'s upkeep runs it on its schedule."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from adapters.falkordb import EmbeddedFalkorDB, TenantGraph, free_port
from adapters.prometheus import Prometheus
from agents.metrics import Metrics
from gateway.ops.runtime import Runtime
from gateway.world import world_counts
from gateway.world.discover import discover
from tests.conftest import make_settings
from tests.test_cli import cli as cli_env
from tests.test_topology import cli

#: (client, server, connection_type, calls per second, minutes before the end it stopped)
SERIES = [
    ("frontend", "cart", "", 5.0, 0),
    ("cart", "valkey-cart", "database", 10.0, 0),
    ("product-catalog", "postgresql", "database", 2.0, 0),  # an alias of postgres (v2 host)
    ("checkout", "accounting", "messaging_system", 1.0, 0),
    ("mystery-svc", "frontend", "", 0.5, 50),  # stopped calling 50 minutes ago
]


@dataclass
class PromServer:
    url: str
    end: datetime  # time of the last backfilled sample


def openmetrics(end: datetime) -> str:
    """Two hours of counters, one sample a minute, ending at `end`."""
    lines = ["# TYPE traces_service_graph_request counter"]
    start = end - timedelta(hours=2)
    for client, server, kind, rate, stopped in SERIES:
        labels = f'client="{client}",server="{server}",connection_type="{kind}"'
        for minute in range(121):
            at = start + timedelta(minutes=minute)
            active = min(at, end - timedelta(minutes=stopped))
            value = rate * (active - start).total_seconds()
            lines.append(
                f"traces_service_graph_request_total{{{labels}}} {value} {at.timestamp():.0f}"
            )
    return "\n".join(lines) + "\n# EOF\n"


@pytest.fixture(scope="module")
def prometheus_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PromServer]:
    folder = tmp_path_factory.mktemp("prometheus")
    end = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=1)
    (folder / "series.om").write_text(openmetrics(end), encoding="utf-8")
    data = folder / "data"
    subprocess.run(
        ["promtool", "tsdb", "create-blocks-from", "openmetrics", str(folder / "series.om"),
         str(data)], check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    (folder / "prometheus.yml").write_text("global: {scrape_interval: 1m}\n", encoding="utf-8")
    port = free_port()
    process = subprocess.Popen(
        ["prometheus", f"--config.file={folder / 'prometheus.yml'}",
         f"--storage.tsdb.path={data}", f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=(folder / "prometheus.log").open("w"),
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{url}/-/ready", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, (folder / "prometheus.log").read_text()
        time.sleep(0.2)
    yield PromServer(url, end)
    process.terminate()
    process.wait(timeout=30)


def rates(graph: TenantGraph) -> dict[tuple[str, str], tuple[int | None, list[str], float]]:
    """(caller, callee) -> (retired_at, sources, rate) of every edge."""
    rows = graph.rows("world_edges")
    return {(r["from"], r["to"]): (r["retired_at"], r["sources"], r["rate"]) for r in rows}


def test_discovery_adds_edges_and_retires_one_whose_calls_stopped(
    graph: TenantGraph, prometheus_server: PromServer
) -> None:
    client = Prometheus(prometheus_server.url)
    source = f"prometheus:{prometheus_server.url}"
    earlier = prometheus_server.end - timedelta(minutes=60)
    report = discover(graph, client, prometheus_server.url, "30m", earlier)
    assert report.new == [
        f"component mystery-svc (service, from {source})",
        f"edge mystery-svc -CALLS-> frontend (from {source})",
    ]
    assert report.notes == ["checkout -> accounting: messaging (producer -> consumer), not added"]
    found = rates(graph)
    # postgresql is postgres's alias: the world's edge gains the discovery source
    assert source in found[("product-catalog", "postgres")][1]
    assert found[("cart", "valkey-cart")][1] == [
        next(s for s in found[("cart", "valkey-cart")][1] if s.startswith("world:")),
        source,
    ]
    assert found[("frontend", "cart")][2] == pytest.approx(5.0)
    assert found[("cart", "valkey-cart")][2] == pytest.approx(10.0)
    later = discover(graph, client, prometheus_server.url, "30m", prometheus_server.end)
    assert later.retired == [f"edge mystery-svc -CALLS-> frontend: no longer reported by {source}"]
    assert found[("frontend", "cart")][0] is None
    assert rates(graph)[("mystery-svc", "frontend")][0] is not None
    client.close()


def test_a_discovery_at_a_past_time_keeps_shifts_and_newer_edges(
    graph: TenantGraph, prometheus_server: PromServer
) -> None:
    """A backfill (`--at` long ago, no calls then) leaves on-call shifts alone, retires no
    edge seen since, and keeps the newer rates (the trial's "15 shifts" became "0 shifts")."""
    client = Prometheus(prometheus_server.url)
    source = f"prometheus:{prometheus_server.url}"
    discover(
        graph, client, prometheus_server.url, "30m", prometheus_server.end - timedelta(hours=1)
    )
    shifts = world_counts(graph)["shifts"]
    assert shifts > 0
    before = rates(graph)
    past = discover(graph, client, prometheus_server.url, "20m", datetime(2020, 1, 1, tzinfo=UTC))
    client.close()
    assert world_counts(graph)["shifts"] == shifts
    assert past.retired == []
    assert "shifts" not in past.counts
    after = rates(graph)
    assert after[("mystery-svc", "frontend")] == before[("mystery-svc", "frontend")]
    assert source in after[("frontend", "cart")][1]
    assert after[("frontend", "cart")][2] == pytest.approx(5.0)


def test_topology_discover_on_the_command_line(
    prometheus_server: PromServer, tmp_path: Path
) -> None:
    done = cli("topology", "discover", "--prometheus", prometheus_server.url, "--window", "30m",
               "--at", prometheus_server.end.isoformat(), "--tenant", "acme",
               "--data-dir", str(tmp_path / "data"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "discovered into org_acme: 5 components, 3 edges" in done.stdout
    assert "component postgresql (datastore" in done.stdout  # no world: the traced name


def test_serve_runs_discovery_on_its_schedule(
    falkordb: EmbeddedFalkorDB, store, tenant: str, tmp_path: Path,
    prometheus_server: PromServer,
) -> None:  # fmt: skip
    settings = make_settings(
        falkordb, tmp_path, tenant, prometheus_url=prometheus_server.url,
        discovery_window="30m", discovery_interval_s=3600,
    )  # fmt: skip
    graph = store.graph(f"org_{tenant}")
    with Runtime(settings) as runtime:
        runtime.metrics = Metrics()
        runtime.start_upkeep()  # the first round runs at once
        deadline = time.monotonic() + 30
        while world_counts(graph)["edges"] < 3:
            assert time.monotonic() < deadline, "discovery did not run"
            time.sleep(0.2)
    assert {(r["from"], r["to"]) for r in graph.rows("world_edges")} == {
        ("frontend", "cart"), ("cart", "valkey-cart"), ("product-catalog", "postgresql"),
    }  # fmt: skip


def test_an_unreachable_prometheus_is_named_without_its_password(
    falkordb: EmbeddedFalkorDB, tmp_path: Path
) -> None:
    """`topology discover` says which URL it could not reach, never the password in it."""
    port = free_port()
    done = cli_env("topology", "discover", "--prometheus",
                   f"http://admin:Sup3rS3cretPw@127.0.0.1:{port}/prom?token=hidden",
                   "--tenant", "acme", "--data-dir", str(tmp_path / "data"),
                   FALKORDB_URL=falkordb.url)  # fmt: skip
    assert done.returncode == 1, done
    assert done.stderr.strip().splitlines()[-1] == (
        "topology discover: prometheus unreachable: ConnectError "
        f"(Prometheus at http://127.0.0.1:{port}/prom)"
    )
    assert "Sup3rS3cretPw" not in done.stderr and "hidden" not in done.stderr
