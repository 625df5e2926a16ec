"""The one writer: applies a world model to a tenant graph, validated first, idempotent (MERGE),
with provenance, and says what it did.

Provenance (issue #13 item 3): every component and edge keeps the sources that reported it
(`sources`, e.g. `world:/etc/world.yaml`, `compose:/src/compose.yaml`) and `last_seen` (ms).
An edge a source reported before and does not report now loses that source; with no source
left it is retired (`retired_at`, kept, not walked), never deleted. A component or edge an
explicit world file declared keeps the world file's attributes when another source disagrees;
the report lists each such disagreement.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from adapters.falkordb import TenantGraph
from gateway.world.codeowners import Rule, ownership
from gateway.world.model import ComponentSpec, TopologyError, WorldSpec
from gateway.world.oncall import Refresh, definition_json, ms, refresh_oncall
from gateway.world.validate import check_world, dotted


@dataclass
class ImportReport:
    """What an import did: `counts` per kind written, `new` / `changed` / `retired` items
    (`component x`, `edge a -CALLS-> b`), `world_wins` (a source disagreed with the world file),
    `unmapped` names no importer could map (never guessed) and `notes`."""

    counts: dict[str, int] = field(default_factory=dict)
    new: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)
    world_wins: list[str] = field(default_factory=list)
    unmapped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """Human-readable report lines (counts first, then each list that is not empty)."""
        out = []
        for title, items in (
            ("new", self.new), ("changed", self.changed), ("retired", self.retired),
            ("the world file wins", self.world_wins), ("not mapped (never guessed)", self.unmapped),
            ("note", self.notes),
        ):  # fmt: skip
            if items:
                out.append(f"{title} ({len(items)}):")
                out += [f"  {item}" for item in items]
        return out


def declared(source: str) -> bool:
    """Whether a source is an explicit world file (its attributes win over other sources')."""
    return source.startswith("world:")


def known_names(
    world: WorldSpec, existing: dict[str, dict[str, Any]]
) -> tuple[WorldSpec, list[str]]:
    """The model with each component named by an alias the graph knows (a world file's
    `hostnames`, e.g. compose's `postgresql` for `postgres`) renamed to that component, in
    components, edges, `hosted_on` and `owns`; and one note per renamed id. World-file
    components are never renamed; an alias of several components is left alone."""
    owners: dict[str, list[str]] = {}
    for name, row in existing.items():
        for alias in row.get("aliases") or []:
            owners.setdefault(alias, []).append(name)
    rename = {
        c.id: owners[c.id][0]
        for c in world.components
        if c.id not in existing and len(owners.get(c.id, [])) == 1
        and not declared(c.source or "")
    }  # fmt: skip
    if not rename:
        return world, []
    model = world.model_copy(deep=True)
    kept: dict[str, ComponentSpec] = {}
    for comp in model.components:
        comp.id = rename.get(comp.id, comp.id)
        comp.hosted_on = rename.get(comp.hosted_on or "", comp.hosted_on)
        kept.setdefault(comp.id, comp)
    model.components = list(kept.values())
    for edge in model.edges:
        edge.source, edge.target = (
            rename.get(edge.source, edge.source),
            rename.get(edge.target, edge.target),
        )
    for team in model.teams:
        team.owns = list(dict.fromkeys(rename.get(c, c) for c in team.owns))
    notes = [
        f"{old} is an alias of {new}: imported as {new}" for old, new in sorted(rename.items())
    ]
    return model, notes


def edge_label(source: str, kind: str, target: str) -> str:
    """`a -CALLS-> b`."""
    return f"{source} -{kind}-> {target}"


def apply_world(
    graph: TenantGraph,
    world: WorldSpec,
    sources: list[str],
    now: datetime | None = None,
    *,
    explicit: bool = False,
    codeowners: tuple[list[Rule], str] | None = None,
) -> ImportReport:
    """Validate `world` against itself and the graph, then write it.

    `sources`: every source this import read (`importer:location`); edges one of them reported
    before and not now are retired. `explicit`: a world file is among the sources, so the
    model must name a default team (components and edges from `world:` sources win over
    other sources' wherever they disagree). `codeowners`:
    rules and their file name; each component with `paths` is owned by the team the last
    matching rule names, unless a team already owns it (that owner is kept and reported).
    Raises `TopologyError` listing every problem; nothing is written then.
    Returns the `ImportReport`; `counts` has components, edges, teams, people, shifts.
    """
    now = now or datetime.now(UTC)
    stamp = ms(now)
    existing = {row["name"]: row for row in graph.rows("world_components")}
    world, renamed = known_names(world, existing)
    problems = check_world(world, dotted, require_default_team=explicit, also_known=list(existing))
    if problems:
        raise TopologyError(problems)
    report = ImportReport(notes=renamed)
    for comp in world.components:
        for alias in comp.aliases():
            if alias in existing and alias != comp.id and not existing[alias]["declared"]:
                report.notes.append(
                    f"component {alias} (imported before) is an alias of {comp.id}: both are "
                    "kept; import the world file first and the other sources after it"
                )
    owned: dict[str, list[str]] = {}
    if codeowners is not None:
        owned = _codeowners(graph, world, *codeowners, report)
    for comp in world.components:
        old = existing.get(comp.id)
        if old is None:
            report.new.append(f"component {comp.id} ({comp.kind}, from {comp.source})")
        elif (
            old["declared"]
            and not declared(comp.source or sources[0])
            and (old["kind"] != comp.kind or (comp.tech and old["tech"] != comp.tech))
        ):
            report.world_wins.append(
                f"component {comp.id}: {comp.source} says {comp.kind}/{comp.tech}, the world "
                f"file says {old['kind']}/{old['tech']}"
            )
        elif old["kind"] != comp.kind or (comp.tech and old["tech"] != comp.tech):
            report.changed.append(
                f"component {comp.id}: {old['kind']}/{old['tech']} -> {comp.kind}/{comp.tech}"
            )
    components = [
        {"name": c.id, "kind": c.kind, "tech": c.tech, "client": c.client,
         "aliases": c.aliases(), "criticality": c.criticality, "paths": c.paths,
         "annotations_json": json.dumps(c.annotations, sort_keys=True) if c.annotations else None,
         "source": c.source or sources[0], "declared": declared(c.source or sources[0])}
        for c in world.components
    ]  # fmt: skip
    edges: list[dict[str, Any]] = [
        {"from": e.source, "to": e.target, "type": e.type, "protocol": e.protocol,
         "purpose": e.purpose, "propagation": e.propagation, "rate": e.rate,
         "origin": e.origin or sources[0], "declared": declared(e.origin or sources[0])}
        for e in world.edges
    ]  # fmt: skip
    edges += [
        {"from": c.id, "to": c.hosted_on, "type": "HOSTED_ON", "protocol": None,
         "purpose": "business", "propagation": "hard", "rate": None,
         "origin": c.source or sources[0], "declared": declared(c.source or sources[0])}
        for c in world.components
        if c.hosted_on
    ]  # fmt: skip
    before = {(r["from"], r["type"], r["to"]): r["retired_at"] for r in graph.rows("world_edges")}
    for e in edges:
        key = (e["from"], e["type"], e["to"])
        if key not in before:
            report.new.append(f"edge {edge_label(*key)} (from {e['origin']})")
        elif before[key] is not None:
            report.changed.append(f"edge {edge_label(*key)}: seen again, no longer retired")
    graph.rows("import_components", {"components": components, "now": stamp})
    graph.rows("import_edges", {"edges": edges, "now": stamp})
    for source in sources:
        keep = [f"{e['from']}|{e['type']}|{e['to']}" for e in edges if e["origin"] == source]
        for row in graph.rows("retire_edges", {"source": source, "keep": keep, "now": stamp}):
            if row["retired"]:
                report.retired.append(
                    f"edge {edge_label(row['from'], row['type'], row['to'])}: no longer "
                    f"reported by {source}"
                )
    teams = [
        {"name": t.name, "slack_channel": t.slack_channel, "escalation": t.escalation,
         "owns": t.owns, "oncall_json": definition_json(t),
         "is_default": (t.name == world.default_team) if world.default_team else None}
        for t in world.teams
    ]  # fmt: skip
    people = [
        {"name": m.name, "email": m.email, "slack_user_id": m.slack_user_id, "team": t.name}
        for t in world.teams
        for m in t.members
    ]
    graph.rows("import_teams", {"teams": teams})
    graph.rows("import_people", {"people": people})
    for owner, names_owned in owned.items():
        graph.rows("import_owners", {"team": owner, "components": names_owned})
    if world.default_team:
        graph.rows("set_default_team", {"team": world.default_team})
    refreshed: Refresh = refresh_oncall(graph, now)
    for team, names in refreshed.unmatched.items():
        report.unmapped += [f"on-call of {team}: {name!r} matches no member" for name in names]
    for team, error in refreshed.errors.items():
        report.notes.append(f"on-call of {team} not expanded: {error}")
    report.counts = {
        "components": len(components),
        "edges": len(edges),
        "teams": len(teams),
        "people": len(people),
        "shifts": sum(n for t, n in refreshed.shifts.items() if t in {x.name for x in world.teams}),
    }
    return report


def _codeowners(
    graph: TenantGraph, world: WorldSpec, rules: list[Rule], name: str, report: ImportReport
) -> dict[str, list[str]]:
    """Team -> components to own by CODEOWNERS, where no team owns them yet."""
    current: dict[str, set[str]] = {}
    for row in graph.rows("component_owners"):
        current.setdefault(row["component"], set()).add(row["team"])
    for spec in world.teams:
        for comp in spec.owns:
            current.setdefault(comp, set()).add(spec.name)
    teams = {t.name for t in world.teams} | {r["team"] for r in graph.rows("component_owners")}
    teams |= {row["name"] for row in graph.rows("team_names")}
    owned, unmapped = ownership(world, rules, teams, name)
    report.unmapped += unmapped
    kept: dict[str, list[str]] = {}
    for team, components in owned.items():
        for comp in components:
            others = current.get(comp, set()) - {team}
            if others:
                report.world_wins.append(
                    f"component {comp}: {name} names {team}, already owned by "
                    f"{', '.join(sorted(others))} (kept)"
                )
            elif team not in current.get(comp, set()):
                kept.setdefault(team, []).append(comp)
                report.new.append(f"owner {team} of {comp} (from {name})")
    return kept


def world_counts(graph: TenantGraph) -> dict[str, int]:
    """What the graph holds now: components, edges (between components), teams, people, shifts."""
    row = graph.one("world_counts") or {}
    return {
        key: int(row.get(key) or 0) for key in ("components", "edges", "teams", "people", "shifts")
    }
