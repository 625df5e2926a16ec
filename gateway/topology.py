"""The world file: components, typed dependency edges, teams, people and on-call rotations.

The format is the one of `../shared/fixtures/otel-demo/topology.yaml` (the reference), plus a
`teams:` section (see the bundled demo world, `gateway/data/otel-demo/topology.yaml`). Edges
point caller -> callee (dependent -> dependency). A topic's `hosted_on` becomes a HOSTED_ON
edge. An edge's `purpose` is business (default), config or telemetry; walks use business only.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from adapters.falkordb import TenantGraph

EDGE_TYPES = ("CALLS", "READS_WRITES", "PUBLISHES", "CONSUMES", "HOSTED_ON")
#: On-call shifts are expanded from each rotation over this window around the import time.
SHIFTS_BACK = timedelta(days=7)
SHIFTS_AHEAD = timedelta(days=90)


class TopologyError(ValueError):
    """The world file cannot be read or is not valid; the message names the file and field."""


class ComponentSpec(BaseModel):
    """One component: `id` is its name in the graph and in alert labels."""

    model_config = ConfigDict(extra="ignore")
    id: str
    kind: Literal["service", "datastore", "topic", "proxy"]
    tech: str | None = None
    client: bool = False
    criticality: str | None = None
    hostnames: dict[str, str] | str | None = None
    hosted_on: str | None = None
    present_in: list[str] | None = None

    @field_validator("id")
    @classmethod
    def _plain_id(cls, value: str) -> str:
        # Component.name is a unique property: FalkorDB 4.16.3 crashes on a unique value that
        # is empty, has surrounding whitespace, contains \x01 or is over 4096 bytes.
        if not value or len(value) > 256 or not value.isprintable() or value != value.strip():
            raise ValueError(
                "must be 1-256 printable characters without leading or trailing spaces"
            )
        return value

    def aliases(self) -> list[str]:
        """Other names alerts may use for it (e.g. the v2/v3 hostnames of postgres)."""
        if isinstance(self.hostnames, str):
            return [self.hostnames]
        return sorted(set((self.hostnames or {}).values()) - {self.id})


class EdgeSpec(BaseModel):
    """One dependency edge, caller -> callee."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)
    source: str = Field(alias="from")
    target: str = Field(alias="to")
    type: Literal["CALLS", "READS_WRITES", "PUBLISHES", "CONSUMES", "HOSTED_ON"]
    protocol: str | None = None
    purpose: Literal["business", "config", "telemetry"] = "business"
    propagation: str | None = None
    present_in: list[str] | None = None


class MemberSpec(BaseModel):
    """A person in a team."""

    model_config = ConfigDict(extra="ignore")
    name: str
    email: str | None = None
    slack_user_id: str | None = None


class RotationSpec(BaseModel):
    """A round-robin on-call rotation: each person in turn for `shift_hours`, from `start` (UTC)."""

    model_config = ConfigDict(extra="ignore")
    rotation: list[str] = Field(min_length=1)
    shift_hours: float = Field(168, gt=0)
    start: datetime


class TeamSpec(BaseModel):
    """A team, its paging channel, what it owns, its members and its on-call rotation."""

    model_config = ConfigDict(extra="ignore")
    name: str
    slack_channel: str | None = None
    escalation: str | None = None
    owns: list[str] = Field(default_factory=list)
    members: list[MemberSpec] = Field(default_factory=list)
    oncall: RotationSpec | None = None


class WorldSpec(BaseModel):
    """The whole world file."""

    model_config = ConfigDict(extra="ignore")
    components: list[ComponentSpec]
    edges: list[EdgeSpec] = Field(default_factory=list)
    teams: list[TeamSpec] = Field(default_factory=list)
    #: The root route: the team paged when no team owns an incident's components, or the owner
    #: has nobody on call. Required (DESIGN §4b: routing never ends at nobody).
    default_team: str


def demo_world_path() -> Path:
    """The bundled OpenTelemetry Demo world (with a made-up ownership section)."""
    return Path(str(resources.files("gateway").joinpath("data/otel-demo/topology.yaml")))


def load_world(path: Path) -> WorldSpec:
    """Read and validate a world file. Raises `TopologyError` with the file and the reason."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise TopologyError(f"{path}: {exc}") from exc
    try:
        world = WorldSpec.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise TopologyError(f"{path}: {where}: {first['msg']}") from exc
    if world.default_team not in {t.name for t in world.teams}:
        raise TopologyError(
            f"{path}: default_team: {world.default_team!r} is not a team in `teams`"
        )
    known = {c.id for c in world.components}
    for edge in world.edges:
        for end in (edge.source, edge.target):
            if end not in known:
                raise TopologyError(f"{path}: edge {edge.source} -> {edge.target}: unknown {end!r}")
    return world


def expand_shifts(rotation: RotationSpec, now: datetime) -> list[dict[str, Any]]:
    """On-call shifts (ms since the epoch, UTC) of a rotation from now - 7 days to now + 90 days."""
    start = rotation.start if rotation.start.tzinfo else rotation.start.replace(tzinfo=UTC)
    length = timedelta(hours=rotation.shift_hours)
    first = max(0, int((now - SHIFTS_BACK - start) / length))
    shifts = []
    index = first
    while (begin := start + index * length) < now + SHIFTS_AHEAD:
        shifts.append(
            {
                "person": rotation.rotation[index % len(rotation.rotation)],
                "starts_at": int(begin.timestamp() * 1000),
                "ends_at": int((begin + length).timestamp() * 1000),
            }
        )
        index += 1
    return shifts


def import_world(
    graph: TenantGraph, world: WorldSpec, now: datetime | None = None
) -> dict[str, int]:
    """Write the world into a tenant graph (idempotent: MERGE, shifts replaced per team).

    Returns counts: components, edges, teams, people, shifts.
    """
    now = now or datetime.now(UTC)
    components = [
        {"name": c.id, "kind": c.kind, "tech": c.tech, "client": c.client,
         "aliases": c.aliases(), "criticality": c.criticality}
        for c in world.components
    ]  # fmt: skip
    edges = [
        {"from": e.source, "to": e.target, "type": e.type, "protocol": e.protocol,
         "purpose": e.purpose, "propagation": e.propagation}
        for e in world.edges
    ]  # fmt: skip
    edges += [
        {"from": c.id, "to": c.hosted_on, "type": "HOSTED_ON", "protocol": None,
         "purpose": "business", "propagation": "hard"}
        for c in world.components
        if c.hosted_on
    ]  # fmt: skip
    graph.rows("import_components", {"components": components})
    graph.rows("import_edges", {"edges": edges})
    teams = [
        {"name": t.name, "slack_channel": t.slack_channel, "escalation": t.escalation,
         "owns": t.owns, "is_default": t.name == world.default_team}
        for t in world.teams
    ]  # fmt: skip
    people = [
        {"name": m.name, "email": m.email, "slack_user_id": m.slack_user_id, "team": t.name}
        for t in world.teams
        for m in t.members
    ]
    graph.rows("import_teams", {"teams": teams})
    graph.rows("import_people", {"people": people})
    shift_count = 0
    for team in world.teams:
        shifts = expand_shifts(team.oncall, now) if team.oncall else []
        graph.rows("replace_shifts", {"team": team.name, "shifts": shifts})
        shift_count += len(shifts)
    return {
        "components": len(components),
        "edges": len(edges),
        "teams": len(teams),
        "people": len(people),
        "shifts": shift_count,
    }


def world_counts(graph: TenantGraph) -> dict[str, int]:
    """What the graph holds now: components, edges (between components), teams, people, shifts."""
    row = graph.one("world_counts") or {}
    return {
        key: int(row.get(key) or 0) for key in ("components", "edges", "teams", "people", "shifts")
    }
