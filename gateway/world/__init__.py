"""The world: components, dependencies, teams, people and on-call, imported from the sources
teams already have (docs/architecture.md, layers): one importer per source, each a pure function
from
files to the
internal model (`gateway.world.model`), and one validating writer (`gateway.world.writer`).

`import_world` and `load_world` are the world-file path used by the demo, the tests and
`topology import FILE`.
"""

from __future__ import annotations

from datetime import datetime

from adapters.falkordb import TenantGraph
from gateway.world.model import TopologyError, WorldSpec, demo_world_path
from gateway.world.worldfile import load_world
from gateway.world.writer import ImportReport, apply_world, world_counts

__all__ = [
    "ImportReport",
    "TopologyError",
    "WorldSpec",
    "apply_world",
    "demo_world_path",
    "import_world",
    "load_world",
    "world_counts",
]


def import_world(
    graph: TenantGraph, world: WorldSpec, now: datetime | None = None
) -> dict[str, int]:
    """Write a world-file model into a tenant graph (idempotent; the explicit world wins).

    Returns counts: components, edges, teams, people, shifts. Raises `TopologyError`.
    """
    sources = sorted({c.source for c in world.components if c.source}) or ["world:(model)"]
    return apply_world(graph, world, sources, now, explicit=True).counts
