"""Kept so code written against the old module keeps working while branches merge; new code
imports `gateway.world` (the world import moved there, DESIGN §2)."""

from gateway.world import (  # noqa: F401 (re-exports)
    TopologyError,
    WorldSpec,
    demo_world_path,
    import_world,
    load_world,
    world_counts,
)
from gateway.world.model import EDGE_TYPES, ComponentSpec, EdgeSpec, TeamSpec  # noqa: F401
