"""One page per fault, whatever order its alerts arrive in: `python -m bench.arrival
[--cycles 40] [--gap-ms 400] [--hold-ms 0,5000]`.

Alertmanager sends each alert group on its own timer, so the alerts of one fault reach the
webhook as separate deliveries, in any order, a few milliseconds to seconds apart. When the
far end of a cascade (frontend-proxy) arrives before the alerts that link it to the cause
(frontend, checkout), it opens an incident of its own; if that incident is paged before the
linking alert comes, one fault gets two pages.

In one process: an embedded FalkorDB in a scratch folder, the gateway with the demo world and
two worker threads, for each `--hold-ms` value (`BLAST_PAGE_HOLD_MS`). Each cycle fires one
fault of the OpenTelemetry Demo (`faults.yaml`, its alerts of likelihood high or medium), the
faults in turn, each three hours after the previous in alert time so that no two share an
incident. Each alert is posted as its own delivery (its own group), in shuffled order, with a
random 0 to `--gap-ms` ms between posts. When no task is left it counts the cycle's pages (the
outbox's `notification` entries). Prints, per hold: cycles, faults paged once, more than once
and never, and how long a cycle took from its first post until every task was finished.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import yaml

from adapters.falkordb import graph_name
from gateway.cli.demo import SCENARIO_SPACING, demo_faults_path, scenario_bodies
from gateway.ops.runtime import Runtime
from gateway.settings import Settings
from gateway.world import demo_world_path, import_world, load_world

TENANT = "arrival"


@dataclass
class Tally:
    """Cycles of one hold setting: pages per cycle and seconds per cycle."""

    pages: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)

    def row(self, hold_ms: int) -> str:
        """One table row."""
        once = sum(1 for p in self.pages if p == 1)
        more = sum(1 for p in self.pages if p > 1)
        never = sum(1 for p in self.pages if p == 0)
        ordered = sorted(self.seconds)
        p50 = ordered[len(ordered) // 2]
        return (f"| {hold_ms} | {len(self.pages)} | {once} | {more} | {never} | {p50:.1f} "
                f"| {ordered[-1]:.1f} |")  # fmt: skip


def single_alert_deliveries(fault: dict[str, Any], starts: datetime) -> list[dict[str, Any]]:
    """The fault's firing alerts (`gateway.cli.demo.scenario_bodies`), one delivery each."""
    out = []
    for body in scenario_bodies(fault, starts, "firing"):
        for alert in body["alerts"]:
            labels = alert["labels"]
            key = f'{{}}:{{alertname="{labels["alertname"]}",service="{labels.get("service")}"}}'
            out.append(body | {"groupKey": key, "alerts": [alert], "commonLabels": labels})
    return out


def run(hold_ms: int, faults: list[dict[str, Any]], args: argparse.Namespace) -> Tally:
    """Every cycle against a fresh gateway with `BLAST_PAGE_HOLD_MS` = `hold_ms`."""
    rng = random.Random(args.seed)
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="blast-radius-arrival-") as scratch:
        settings = Settings.model_validate(
            {"data_dir": Path(scratch), "default_tenant": TENANT, "port": 0, "workers": 0,
             "webhook_tokens": {}, "page_hold_ms": hold_ms}
        )  # fmt: skip
        runtime = Runtime(settings)
        runtime.open()
        try:
            assert runtime.store is not None
            import_world(runtime.store.graph(graph_name(TENANT)), load_world(demo_world_path()))
            port = runtime.serve_http("127.0.0.1", 0)
            runtime.start_workers(2)
            base = datetime.now(UTC).replace(microsecond=0) - SCENARIO_SPACING * (args.cycles + 1)
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
                for cycle in range(args.cycles):
                    fault = faults[cycle % len(faults)]
                    bodies = single_alert_deliveries(fault, base + SCENARIO_SPACING * cycle)
                    rng.shuffle(bodies)
                    seen = {e["intent_id"] for e in runtime.outbox.entries()}
                    began = time.monotonic()
                    for body in bodies:
                        http.post("/api/v1/alerts", json=body).raise_for_status()
                        time.sleep(rng.uniform(0, args.gap_ms / 1000))
                    runtime.wait_idle(60)
                    tally.seconds.append(time.monotonic() - began)
                    new = [e for e in runtime.outbox.entries() if e["intent_id"] not in seen]
                    tally.pages.append(sum(1 for e in new if e["kind"] == "notification"))
                    print(f"hold {hold_ms} ms: cycle {cycle + 1}/{args.cycles} "
                          f"({fault['flag']}): {tally.pages[-1]} pages",
                          file=sys.stderr)  # fmt: skip
        finally:
            runtime.close()
    return tally


def main() -> int:
    """Print the table (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cycles", type=int, default=40)
    p.add_argument("--gap-ms", type=int, default=400, help="largest pause between two posts")
    p.add_argument("--hold-ms", default="0,5000", help="BLAST_PAGE_HOLD_MS values, comma-separated")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--fault", help="only this fault (its flag, e.g. paymentFailure)")
    args = p.parse_args()
    every = yaml.safe_load(demo_faults_path().read_text(encoding="utf-8"))["faults"]
    # the faults whose alerts span several services: the ones an arrival order can split
    faults = [f for f in every if len(single_alert_deliveries(f, datetime.now(UTC))) > 1
              and args.fault in (None, f["flag"])]  # fmt: skip
    rows = [run(int(h), faults, args).row(int(h)) for h in args.hold_ms.split(",")]
    print(f"{args.cycles} cycles over {len(faults)} faults, up to {args.gap_ms} ms between posts")
    print("| hold ms | cycles | paged once | paged more than once | never paged "
          "| cycle s p50 | cycle s max |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
