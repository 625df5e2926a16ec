"""Alert storms: `python -m bench.storm [--big 5000] [--small 300] [--per-small 10] …`.

Starts the gateway (`Runtime`, real uvicorn on a free loopback port, no workers: triage is what
is measured) on an embedded FalkorDB in a temporary data folder with the OpenTelemetry Demo
world, then posts Alertmanager v4 notifications and prints one table:

- `big`: one notification of `--big` firing alerts spread over the demo components (one
  groupKey, start times within the correlation window), `big resend`: the same body again
  (Alertmanager resends a notification it thinks failed, and repeats every `repeat_interval`),
  and `big resolve`: all of them resolved (the storm ends);
- `big floor`: the least work that stores the same notification (`floor_write`, in this
  process, on the same FalkorDB and client, a graph of its own with the same world and indexes):
  `orjson.loads` of the same bytes, then `cypher/floor_storm.cypher` per 1,000 alerts, sent as
  lists (each alert MERGEd on its fingerprint onto its component, looked up once per component,
  into one incident with its task). No HTTP, no validation, no correlation: what the product
  does beyond this is what `big / floor` prices;
- `--rounds` (5) pairs of `big floor` then `big` (the first is the table's), each on alerts
  of its own day and a floor graph of its own: `big / floor` by round and its median, the
  figure to quote (a single round moves by a third from one to the next on a quiet machine);
- `small`: `--small` notifications of `--per-small` alerts each, `--concurrency` at a time,
  each on its own group of components and its own hour (so each opens its own incidents).

Columns: alerts/s (accepted alerts over wall time), webhook p50/p99 (the sender's round trip),
and `queries/alert`: GRAPH.QUERY calls the server counted (`INFO commandstats`) per alert.
Exits 1 when an accepted alert is missing from the graph, or a resolved one has no
`notify_cleared` task.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import orjson
import redis

from adapters.falkordb import TenantGraph, graph_name
from gateway.cli.demo import rfc3339
from gateway.ops.runtime import Runtime
from gateway.settings import Settings
from gateway.world import demo_world_path, import_world, load_world

TENANT = "storm"
#: Alerts per write of the storm's floor (`floor_write`).
FLOOR_CHUNK = 1000
START = datetime(2026, 11, 1, tzinfo=UTC)


def options() -> argparse.Namespace:
    """Command-line options (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--big", type=int, default=5000, help="alerts in the one big notification")
    p.add_argument("--small", type=int, default=300, help="small notifications")
    p.add_argument("--per-small", type=int, default=10, help="alerts per small notification")
    p.add_argument("--concurrency", type=int, default=4, help="small posts in flight")
    p.add_argument("--rounds", type=int, default=5,
                   help="big floor, then big: each pair on new alerts, a new floor")  # fmt: skip
    return p.parse_args()


def body(alerts: list[dict[str, Any]], group: str) -> dict[str, Any]:
    """An Alertmanager v4 notification of `alerts` for the group `group`."""
    return {
        "version": "4", "groupKey": group, "truncatedAlerts": 0, "status": "firing",
        "receiver": "blast-radius", "groupLabels": {}, "commonLabels": {},
        "commonAnnotations": {}, "externalURL": "http://alertmanager:9093", "alerts": alerts,
    }  # fmt: skip


def alert(service: str, n: int, starts: datetime) -> dict[str, Any]:
    """One firing alert on `service`, instance `n` (its own fingerprint)."""
    return {
        "status": "firing",
        "labels": {
            "alertname": "HighErrorRate",
            "service": service,
            "severity": "critical",
            "instance": f"{service}-{n}",
        },
        "annotations": {"summary": f"errors on {service} instance {n}"},
        "startsAt": rfc3339(starts + timedelta(milliseconds=n)),
        "endsAt": "0001-01-01T00:00:00Z",
        "generatorURL": "http://prometheus:9090/graph",
        "fingerprint": f"{abs(hash((service, n))):016x}"[:16],
    }


def queries(url: str) -> int:
    """GRAPH.QUERY calls the server at `url` has answered since it started (`INFO commandstats`)."""
    with redis.Redis.from_url(url, socket_timeout=5, decode_responses=True) as client:
        stats: dict[str, Any] = client.info("commandstats")  # type: ignore[assignment]
    return int(stats.get("cmdstat_graph.QUERY", {}).get("calls", 0))


def quantile(values: list[float], q: float) -> float:
    """The q-quantile (nearest rank) of `values`, 0 when empty."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def timed_post(http: httpx.Client, payload: bytes) -> tuple[float, int]:
    """Post one notification; its round trip in ms and the alerts accepted. Raises on non-200."""
    began = time.perf_counter()
    answer = http.post("/api/v1/alerts", content=payload,
                       headers={"Content-Type": "application/json"})  # fmt: skip
    answer.raise_for_status()
    return (time.perf_counter() - began) * 1000, int(answer.json()["accepted"])


def floor_write(graph: TenantGraph, payload: bytes) -> tuple[float, int]:
    """The storm's floor: the same notification's alerts written with the least work (module
    docstring), in this process; `(ms from the body's bytes to the last write, alerts)`."""
    began = time.perf_counter()
    alerts = orjson.loads(payload)["alerts"]
    rows = [
        [a["fingerprint"], a["labels"]["service"], a["fingerprint"], a["status"],
         a["labels"]["alertname"], a["startsAt"],
         orjson.dumps(a["labels"], option=orjson.OPT_SORT_KEYS).decode(),
         orjson.dumps(a["annotations"], option=orjson.OPT_SORT_KEYS).decode()]
        for a in alerts
    ]  # fmt: skip
    ids = {"incident_id": f"inc-{uuid.uuid4().hex[:12]}", "task_id": f"task-{uuid.uuid4().hex}"}
    written = 0
    for i in range(0, len(rows), FLOOR_CHUNK):
        chunk = sorted(rows[i : i + FLOOR_CHUNK], key=lambda r: r[1])  # by component
        runs: list[list[Any]] = []
        for n, r in enumerate(chunk):
            if runs and runs[-1][0] == r[1]:
                runs[-1][2] = n + 1
            else:
                runs.append([r[1], n, n + 1])
        row = graph.one("floor_storm", ids | {"alerts": chunk, "runs": runs})
        written += int(row["written"]) if row else 0
    return (time.perf_counter() - began) * 1000, written


def main() -> int:
    """Run the storm benchmark and print its table."""
    args = options()
    services = [c.id for c in load_world(demo_world_path()).components]
    rows: list[tuple[str, int, float, float, float, float]] = []
    with tempfile.TemporaryDirectory(prefix="storm-") as tmp:
        settings = Settings.model_validate(
            {
                "data_dir": Path(tmp),
                "default_tenant": TENANT,
                "port": 0,
                "workers": 0,
                "incident_window_s": 600,
            }
        )
        runtime = Runtime(settings)
        store = runtime.open()
        import_world(store.graph(graph_name(TENANT)), load_world(demo_world_path()))
        url = str(runtime.url)
        port = runtime.serve_http("127.0.0.1", 0)
        runtime.topology_remembered.wait(10)  # its reads are not the benchmark's
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as http:
                big = [alert(services[n % len(services)], n, START) for n in range(args.big)]
                group = '{}:{alertname="HighErrorRate"}'
                firing = json.dumps(body(big, group)).encode()
                ended = [a | {"status": "resolved", "endsAt": rfc3339(START + timedelta(hours=1))}
                         for a in big]  # fmt: skip
                resolve = json.dumps(body(ended, group)).encode()
                floor = store.graph(graph_name(f"{TENANT}-floor"))
                floor.ensure_schema()  # the product's indexes (Alert.key): a floor, not a scan
                import_world(floor, load_world(demo_world_path()))
                # the harness's own bodies live to the end: out of the collector's full passes,
                # which would otherwise walk them inside whichever of the two is measured
                gc.freeze()
                before = queries(url)
                ms, accepted = floor_write(floor, firing)
                floor_row = ("big floor", accepted, accepted / ms * 1000, ms, ms,
                             (queries(url) - before) / max(accepted, 1))  # fmt: skip
                for name, payload in (("big", firing), ("big resend", firing),
                                      ("big resolve", resolve)):  # fmt: skip
                    before = queries(url)
                    ms, accepted = timed_post(http, payload)
                    rows.append((name, accepted, accepted / ms * 1000, ms, ms,
                                 (queries(url) - before) / max(accepted, 1)))  # fmt: skip
                rows.insert(1, floor_row)
                ratios = [rows[0][3] / floor_row[3]]
                for r in range(1, args.rounds):  # a day apart: new keys, new incidents
                    more = [alert(services[n % len(services)], n + r * 1_000_000,
                                  START - timedelta(days=r)) for n in range(args.big)]  # fmt: skip
                    payload = json.dumps(body(more, group)).encode()
                    floor = store.graph(graph_name(f"{TENANT}-floor{r}"))
                    floor.ensure_schema()
                    import_world(floor, load_world(demo_world_path()))
                    gc.freeze()
                    floor_ms = floor_write(floor, payload)[0]
                    ratios.append(timed_post(http, payload)[0] / floor_ms)
                smalls = []
                for i in range(args.small):
                    starts = START + timedelta(hours=2 + i)
                    few = [alert(services[(i + k) % len(services)], 10_000 + i * 100 + k, starts)
                           for k in range(args.per_small)]  # fmt: skip
                    smalls.append(json.dumps(body(few, f'{{}}:{{storm="{i}"}}')).encode())
                before, began = queries(url), time.perf_counter()
                with ThreadPoolExecutor(args.concurrency) as pool:
                    done = list(pool.map(lambda p: timed_post(http, p), smalls))
                wall = time.perf_counter() - began
                accepted = sum(n for _, n in done)
                times = [ms for ms, _ in done]
                rows.append((f"small x{args.small}", accepted, accepted / wall,
                             quantile(times, 0.5), quantile(times, 0.99),
                             (queries(url) - before) / max(accepted, 1)))  # fmt: skip
            graph = store.graph(graph_name(TENANT))
            stored = sum(len(r["fingerprints"]) for r in graph.rows("bench_incident_groups"))
            cleared = (graph.one("bench_cleared_tasks") or {"n": 0})["n"]
        finally:
            runtime.close()
    print(f"{'delivery':<14} {'alerts':>7} {'alerts/s':>9} {'p50 ms':>8} {'p99 ms':>8} "
          f"{'queries/alert':>14}")  # fmt: skip
    for name, accepted, rate, p50, p99, per in rows:
        print(f"{name:<14} {accepted:>7} {rate:>9.0f} {p50:>8.0f} {p99:>8.0f} {per:>14.2f}")
    print(
        f"big / floor: {rows[0][3] / rows[1][3]:.1f}x (by round: "
        f"{', '.join(f'{x:.1f}' for x in ratios)}; median {statistics.median(ratios):.1f})"
    )
    lost = args.big * args.rounds + args.small * args.per_small - stored
    print(f"lost alerts: {lost}, resolved without a notify_cleared task: {args.big - cleared}")
    return 1 if lost or cleared != args.big else 0


if __name__ == "__main__":
    raise SystemExit(main())
