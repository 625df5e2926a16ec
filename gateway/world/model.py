"""The internal world model every importer returns: components, typed dependency edges, teams,
people and on-call, each component and edge with the source that reported it.

The world file (`gateway/world/worldfile.py`) is this model written by hand, in the format of
the OpenTelemetry Demo's hand-derived dependency graph (`gateway/data/otel-demo/topology.yaml`)
plus `teams:` and `default_team:` (see the bundled
demo world, `gateway/data/otel-demo/topology.yaml`). Edges point caller -> callee (dependent ->
dependency). A topic's `hosted_on` becomes a HOSTED_ON edge. An edge's `purpose` is business
(default), config or telemetry; walks use business only.
"""

from __future__ import annotations

import json
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator

from adapters.promql import duration_ms
from gateway.world.playbooks import WorldPlaybook

EDGE_TYPES = ("CALLS", "READS_WRITES", "PUBLISHES", "CONSUMES", "HOSTED_ON")
EdgeType = Literal["CALLS", "READS_WRITES", "PUBLISHES", "CONSUMES", "HOSTED_ON"]


class TopologyError(ValueError):
    """A source cannot be read or is not a valid world. `problems` lists every problem found
    (each `<file>:<line>: <where>: <reason>` when the line is known); the message joins them."""

    def __init__(self, problems: list[str] | str) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


def plain_name(value: str) -> str:
    """Check a name that becomes a unique property (Component.name, Team.name, Person.name).

    FalkorDB 4.16.3 crashes on a unique value that is empty, has surrounding whitespace,
    contains \\x01 or is over 4096 bytes (docs/architecture.md, FalkorDB facts). Raises
    `ValueError` with the
    rule.
    """
    if not value or len(value) > 256 or not value.isprintable() or value != value.strip():
        raise ValueError("must be 1-256 printable characters without leading or trailing spaces")
    return value


class ComponentSpec(BaseModel):
    """One component: `id` is its name in the graph and in alert labels.

    `paths`: repository paths (CODEOWNERS syntax) whose owner owns it and whose changes modify
    it. `source`: where it was found (`world:<file>`, `compose:<file>`, ...), set by importers.
    """

    model_config = ConfigDict(extra="ignore")
    id: str
    kind: Literal["service", "datastore", "topic", "proxy"]
    tech: str | None = None
    client: bool = False
    criticality: str | None = None
    hostnames: dict[str, str] | str | None = None
    hosted_on: str | None = None
    present_in: list[str] | None = None
    paths: list[str] = Field(default_factory=list)
    annotations: dict[str, str] = Field(default_factory=dict)
    source: str | None = None

    @field_validator("id")
    @classmethod
    def _plain_id(cls, value: str) -> str:
        return plain_name(value)

    def aliases(self) -> list[str]:
        """Other names alerts may use for it (e.g. the v2/v3 hostnames of postgres)."""
        if isinstance(self.hostnames, str):
            return [self.hostnames]
        return sorted(set((self.hostnames or {}).values()) - {self.id})


#: What a source saw of an edge, strongest first: a person declared it (world file), a
#: hostname in the caller's environment or manifest names the callee, a catalog says so
#: (Backstage), traces measured the calls (discovery), or compose `depends_on` orders start-up
#: (start order, not calls: the weakest; a component with only such edges has no known
#: dependency for the investigator).
EdgeBasis = Literal["declared", "environment", "catalog", "traced", "depends_on"]


class EdgeSpec(BaseModel):
    """One dependency edge, caller -> callee; `rate` is calls per second when discovered;
    `origin` (the source) and `basis` (`EdgeBasis`) are set by importers, never by a file."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)
    source: str = Field(alias="from")
    target: str = Field(alias="to")
    type: EdgeType
    protocol: str | None = None
    purpose: Literal["business", "config", "telemetry"] = "business"
    propagation: str | None = None
    present_in: list[str] | None = None
    rate: float | None = None
    origin: str | None = None
    basis: EdgeBasis | None = None

    def key(self) -> tuple[str, str, str]:
        """(caller, type, callee): an edge's identity across sources."""
        return (self.source, self.type, self.target)


class MemberSpec(BaseModel):
    """A person in a team."""

    model_config = ConfigDict(extra="ignore")
    name: str
    email: str | None = None
    slack_user_id: str | None = None

    @field_validator("name")
    @classmethod
    def _plain_name(cls, value: str) -> str:
        return plain_name(value)


class RotationSpec(BaseModel):
    """A round-robin on-call rotation: each person in turn for `shift_hours`, from `start`."""

    model_config = ConfigDict(extra="forbid")
    rotation: list[str] = Field(min_length=1)
    shift_hours: float = Field(168, gt=0)
    start: datetime


class IcalSpec(BaseModel):
    """On-call from an iCalendar export (Grafana OnCall, PagerDuty, Opsgenie): a file path
    (relative to the world file) or an http(s) URL. Each event's person is matched to a member
    by email, then by name."""

    model_config = ConfigDict(extra="forbid")
    ical: str = Field(min_length=1)


def _oncall_kind(value: object) -> str:
    has_ical = isinstance(value, dict) and "ical" in value
    return "IcalSpec" if has_ical or isinstance(value, IcalSpec) else "RotationSpec"


#: A rotation, or a calendar when the mapping has `ical:` (tags are dropped from error paths).
OnCallSpec = Annotated[
    Annotated[RotationSpec, Tag("RotationSpec")] | Annotated[IcalSpec, Tag("IcalSpec")],
    Discriminator(_oncall_kind),
]


#: The channel-wide mention an escalation level may notify (everyone in the paged channel).
CHANNEL_TARGET = "@channel"


class TeamTarget(BaseModel):
    """`{team: NAME}` in an escalation level: that team's on-call at the time of the level."""

    model_config = ConfigDict(extra="forbid")
    team: str

    @field_validator("team")
    @classmethod
    def _plain_team(cls, value: str) -> str:
        return plain_name(value)


class EscalationLevelSpec(BaseModel):
    """One level of a team's escalation policy: who is notified (`notify`: people by name,
    `{team: X}` for X's on-call then, `"@channel"` for everyone in the paged channel) when
    nobody acknowledged the page `after` (a Prometheus duration) since the first page."""

    model_config = ConfigDict(extra="forbid")
    after: str
    notify: list[str | TeamTarget] = Field(min_length=1)

    @field_validator("after", mode="before")
    @classmethod
    def _duration(cls, value: object) -> object:
        if isinstance(value, str):
            duration_ms(value)  # raises ValueError with the reason
        return value

    @property
    def after_ms(self) -> int:
        """`after` in ms."""
        return duration_ms(self.after)


class TeamSpec(BaseModel):
    """A team, its paging channel, what it owns, its members, its on-call and who else may
    approve a remediation of what it owns (`approvers`).

    Provenance, set by importers and `gateway.world.sources.merge`, never read from a file:
    `source` is where the team was found (`world:<file>`, `backstage:<file>`); `sources`,
    `owns_from` (component -> sources) and `members_from` (person -> sources) say which
    sources of a merged model said the team, each ownership and each membership. Empty
    means "the team's `source`" (the writer's default: the import's first source).
    """

    model_config = ConfigDict(extra="ignore")
    name: str
    slack_channel: str | None = None
    escalation: str | None = None
    owns: list[str] = Field(default_factory=list)
    members: list[MemberSpec] = Field(default_factory=list)
    oncall: OnCallSpec | None = None
    #: Who is notified, level by level, while nobody acknowledged a page of this team;
    #: `repeat`: how many more times the levels run after the last one.
    escalation_policy: list[EscalationLevelSpec] | None = None
    repeat: int = Field(0, ge=0, le=10)
    #: People (by name, as in some team's `members`) who may approve a remediation of this
    #: team's components besides its members; None: the source says nothing (keep the stored).
    approvers: list[str] | None = None
    source: str | None = Field(None, exclude=True)
    sources: list[str] = Field(default_factory=list, exclude=True)
    owns_from: dict[str, list[str]] = Field(default_factory=dict, exclude=True)
    members_from: dict[str, list[str]] = Field(default_factory=dict, exclude=True)

    def said_by(self, default: str) -> tuple[list[str], dict[str, list[str]], dict[str, list[str]]]:
        """(sources of the team, component -> sources of its ownership, person -> sources of
        the membership); each falls back to the team's `source`, else `default`."""
        team = list(self.sources or [self.source or default])  # copies: merge extends them
        owns = {c: list(self.owns_from.get(c) or team) for c in self.owns}
        members = {m.name: list(self.members_from.get(m.name) or team) for m in self.members}
        return team, owns, members

    @field_validator("name")
    @classmethod
    def _plain_name(cls, value: str) -> str:
        return plain_name(value)

    def policy_json(self) -> str | None:
        """The escalation policy as stored on `Team.escalation_policy_json`, None when the team
        has none: `{"levels": [{"after_ms", "notify": [{"person"} | {"team"} | {"channel":
        true}]}], "repeat"}` (what the escalation agent reads; ms, counted from the first page)."""
        if not self.escalation_policy:
            return None
        levels = [
            {
                "after_ms": level.after_ms,
                "notify": [
                    {"team": n.team} if isinstance(n, TeamTarget)
                    else {"channel": True} if n == CHANNEL_TARGET
                    else {"person": n}
                    for n in level.notify
                ],
            }
            for level in self.escalation_policy
        ]  # fmt: skip
        return json.dumps({"levels": levels, "repeat": self.repeat}, sort_keys=True)


class WorldSpec(BaseModel):
    """A whole world, from one source or several merged.

    `default_team` is the root route: the team paged when no team owns an incident's
    components, or the owner has nobody on call (docs/architecture.md, evidence). A world file must
    name
    it
    (checked by `gateway.world.validate`); other sources may not know it.
    """

    model_config = ConfigDict(extra="ignore")
    #: May be left out of a world file: a teams-only file adds to another source's components.
    components: list[ComponentSpec] = Field(default_factory=list)
    edges: list[EdgeSpec] = Field(default_factory=list)
    teams: list[TeamSpec] = Field(default_factory=list)
    default_team: str | None = None
    #: Runbooks the team keeps with its world (`gateway.world.playbooks`).
    playbooks: list[WorldPlaybook] = Field(default_factory=list)


def demo_world_path() -> Path:
    """The bundled OpenTelemetry Demo world (with a made-up ownership section)."""
    return Path(str(resources.files("gateway").joinpath("data/otel-demo/topology.yaml")))
