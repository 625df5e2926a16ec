"""One incident with many alerts, read the three ways a person reads it:
`python -m bench.big_incident [--alerts 20000] [--runs 5]`.

Starts the gateway (`Runtime`, real uvicorn on a free loopback port, open mode: no sign-in) on
an embedded FalkorDB in a temporary data folder with the OpenTelemetry Demo world, posts one
Alertmanager notification of `--alerts` firing alerts on `quote` (each its own instance, so
its own fingerprint; the storm of a new user's trial), lets a burst worker investigate and
page the incident they open, then times `--runs` reads of each, and prints their size and
median time:

- `web`: `GET /ui/incidents/<id>`, the incident page;
- `api`: `GET /api/v1/incidents/<id>`, the incident as JSON;
- `steps`: `GET /api/v1/incidents/<id>/steps`, what the agents did on it, as JSON (its default
  answer: the first step of the investigation read every alert);
- `cli`: `blast-radius incident <id>` (a separate process, as a user runs it), and
  `cli start`: `blast-radius --version`, the same process start-up (Python imports) with
  nothing read: what `cli` costs beyond it is the incident.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from adapters.falkordb import graph_name
from gateway.cli.demo import rfc3339
from gateway.ops.runtime import Runtime
from gateway.settings import Settings
from gateway.world import demo_world_path, import_world, load_world

TENANT = "big"
START = datetime(2026, 11, 1, tzinfo=UTC)
ROOT = Path(__file__).resolve().parents[1]


def options() -> argparse.Namespace:
    """Command-line options (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--alerts", type=int, default=20_000, help="alerts in the one incident")
    p.add_argument("--runs", type=int, default=5, help="reads of each, timed")
    return p.parse_args()


def alert(n: int) -> dict[str, Any]:
    """One firing alert on quote, instance `n` (its own fingerprint)."""
    return {
        "status": "firing",
        "labels": {"alertname": "HighErrorRate", "service": "quote", "severity": "critical",
                   "instance": f"quote-{n}"},
        "annotations": {"summary": f"errors on quote instance {n}"},
        "startsAt": rfc3339(START + timedelta(milliseconds=n)),
        "endsAt": "0001-01-01T00:00:00Z",
        "generatorURL": "http://prometheus:9090/graph",
        "fingerprint": f"{n:016x}",
    }  # fmt: skip


def timed(read: Any, runs: int) -> tuple[int, float]:
    """`read()` (returning the bytes read) `runs` times: its size in bytes and median ms."""
    sizes, times = [], []
    for _ in range(runs):
        began = time.perf_counter()
        sizes.append(read())
        times.append((time.perf_counter() - began) * 1000)
    return max(sizes), statistics.median(times)


def main() -> int:
    """Run the benchmark and print one line per reader."""
    args = options()
    with tempfile.TemporaryDirectory(prefix="big-incident-") as tmp:
        settings = Settings.model_validate(
            {"data_dir": Path(tmp), "default_tenant": TENANT, "port": 0, "workers": 0}
        )
        runtime = Runtime(settings)
        store = runtime.open()
        import_world(store.graph(graph_name(TENANT)), load_world(demo_world_path()))
        port = runtime.serve_http("127.0.0.1", 0)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=300) as http:
                body = {
                    "version": "4", "groupKey": '{}:{alertname="HighErrorRate"}',
                    "status": "firing", "receiver": "blast-radius", "groupLabels": {},
                    "commonLabels": {}, "commonAnnotations": {},
                    "externalURL": "http://alertmanager:9093",
                    "alerts": [alert(n) for n in range(args.alerts)],
                }  # fmt: skip
                answer = http.post("/api/v1/alerts", json=body)
                answer.raise_for_status()
                (incident_id,) = answer.json()["incidents"]
                runtime.make_worker().run(threading.Event(), burst=True)
                web = timed(lambda: len(http.get(f"/ui/incidents/{incident_id}").content),
                            args.runs)  # fmt: skip
                api = timed(lambda: len(http.get(f"/api/v1/incidents/{incident_id}").content),
                            args.runs)  # fmt: skip
                steps = timed(
                    lambda: len(http.get(f"/api/v1/incidents/{incident_id}/steps").content),
                    args.runs,
                )
                shown = json.loads(http.get(f"/api/v1/incidents/{incident_id}").content)
            env = {k: v for k, v in os.environ.items() if not k.startswith(("BLAST_", "FALKORDB"))}
            env |= {"FALKORDB_URL": str(runtime.url), "BLAST_DATA_DIR": tmp,
                    "BLAST_DEFAULT_TENANT": TENANT}  # fmt: skip

            def cli(*words: str) -> int:
                done = subprocess.run(
                    [sys.executable, "-m", "gateway.cli", *words], cwd=ROOT, env=env,
                    capture_output=True, check=True,
                )  # fmt: skip
                return len(done.stdout)

            text = timed(lambda: cli("incident", incident_id), args.runs)
            start = timed(lambda: cli("--version"), args.runs)
        finally:
            runtime.close()
    print(f"incident {incident_id}: {args.alerts:,} alerts, {len(shown['alerts']):,} in the "
          "API's answer")  # fmt: skip
    print(f"{'reader':<9} {'bytes':>11} {'median ms':>10}")
    for name, (size, ms) in (
        ("web", web),
        ("api", api),
        ("steps", steps),
        ("cli", text),
        ("cli start", start),
    ):
        print(f"{name:<9} {size:>11,} {ms:>10.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
