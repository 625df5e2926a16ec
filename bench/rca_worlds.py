"""Root-cause quality on worlds other than the bundled one, alerts only and with evidence.

`python -m bench.rca_worlds [--cases bench/rca_worlds.yaml] [--world NAME] [--only CASE] [-v]`.

Each world of the cases file is imported the way a user would import it (`world:` a compose
file or a world file, read by `gateway.world.sources.load_sources`, paths relative to the
repository), and each of its fault cases runs in two modes, scored as `bench/rca.py` scores
(every incident the case opens, re-investigations included; one wrong root cause makes the
case wrong):

- alerts only: the imported world and the case's alerts, no Prometheus;
- with evidence: a real Prometheus (Debian's 2.42) over service-graph series of the world's
  true call graph (`calls:`, healthy at 2 calls/s, clients 5/s, 20 ms) with the case's
  `evidence:` changes after the fault starts, and (`discover: true`) the service graph
  discovered into the graph first, as `topology discover` does.

`calls:` is the application's real call graph (from its source and documentation), used only
to write the series: the importer never reads it. Prints one row per case, the summary per
world and mode, the reliability table over everything run, and how many times the busiest
incident of a case was investigated.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from adapters.falkordb import EmbeddedFalkorDB, GraphStore
from adapters.prometheus import Prometheus
from bench.rca import (
    FAULT_AGO_S,
    Case,
    body,
    investigate,
    named,
    reliability,
    score,
    summary,
    verdict,
)  # fmt: skip
from gateway.cli.demo_evidence import Edge, PrometheusServer
from gateway.world.model import MemberSpec, TeamSpec
from gateway.world.sources import load_sources

CASES = Path(__file__).with_name("rca_worlds.yaml")
ROOT = Path(__file__).resolve().parent.parent


def true_graph(
    calls: list[str], clients: set[str], changes: dict[str, dict[str, Any]]
) -> list[Edge]:
    """The healthy series of `calls` (`client>server`, `client>server:database` for a
    datastore connection) with one fault's `changes` (`client>server` -> `fail_after`,
    `latency_after_ms`, `rate_after`) applied."""
    edges: dict[str, Edge] = {}
    for spec in calls:
        key, _, ctype = spec.partition(":")
        client, server = key.split(">")
        edges[key] = Edge(client, server, rate=5.0 if client in clients else 2.0,
                          connection_type=ctype)  # fmt: skip
    for key, change in changes.items():
        client, server = key.split(">")
        base = edges.setdefault(key, Edge(client, server))
        for field, value in change.items():
            setattr(base, field, value)
    return list(edges.values())


def main() -> None:
    """Run every world's cases in both modes; print rows, summaries and the reliability table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=CASES)
    parser.add_argument("--world", help="run only the world of this name")
    parser.add_argument("--only", help="run only the case of this name")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each summary")
    args = parser.parse_args()
    spec = yaml.safe_load(args.cases.read_text(encoding="utf-8"))["worlds"]
    now = time.time()
    starts = datetime.fromtimestamp(int(now) - FAULT_AGO_S + 120, UTC)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="blast-radius-rca-worlds-") as scratch:
        server = EmbeddedFalkorDB(Path(scratch) / "falkordb")
        store = GraphStore(server.start(), timeout_ms=5_000)
        try:
            for world_name, world_spec in spec.items():
                if args.world not in (None, world_name):
                    continue
                loaded = load_sources([ROOT / p for p in world_spec["world"]])
                world = loaded.world
                if world.default_team is None:  # a compose file names no team: page one
                    world.teams.append(TeamSpec(name="platform", members=[MemberSpec(name="Ada")]))
                    world.default_team = "platform"
                clients = set(world_spec.get("clients") or [])
                for index, c in enumerate(world_spec["cases"]):
                    if args.only not in (None, c["name"]):
                        continue
                    case = Case(c["name"], c["accept"], [body(c["alerts"], starts)],
                                c.get("evidence", {}), world_name)  # fmt: skip
                    prom = PrometheusServer(
                        Path(scratch) / f"{world_name}-{index}",
                        true_graph(world_spec["calls"], clients, case.evidence),
                        int(now) - FAULT_AGO_S,
                    )  # fmt: skip
                    client = Prometheus(prom.url)
                    found = prom.url if world_spec.get("discover") else None
                    try:
                        for mode, source in (("alerts only", None), ("with evidence", client)):
                            got = investigate(store, case, source, world, found)
                            row = score(case, got) | {"mode": mode}
                            rows.append(row)
                            print(f"{world_name:10} {case.name:36} {mode:13} "
                                  f"{verdict(row):12} {named(row)} "
                                  f"(incidents {row['incidents']}, busiest "
                                  f"investigated {row['investigations']}x)")  # fmt: skip
                            if args.verbose:
                                print(f"    {row['confidence']}: {row['summary']}")
                    finally:
                        client.close()
                        prom.stop()
        finally:
            store.close()
            server.stop()
    print()
    print(summary(rows))
    print()
    print(reliability(rows))
    most = max((r["investigations"] for r in rows), default=0)
    print(f"\nmost investigations of one incident in one delivery: {most}")


if __name__ == "__main__":
    main()
