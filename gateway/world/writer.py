"""The one writer: applies a world model to a tenant graph, validated first, idempotent (MERGE),
with provenance, and says what it did.

Provenance: every component and edge keeps the sources that reported it
(`sources`, e.g. `world:/etc/world.yaml`, `compose:/src/compose.yaml`) and `last_seen` (ms).
An edge a source reported before and does not report now loses that source; with no source
left it is retired (`retired_at`, kept, not walked), never deleted. Ownership (OWNS),
membership (MEMBER_OF) and teams keep their `sources` too (a world file, a catalog, a
CODEOWNERS file); one a source no longer says loses that source and, with none left, is
deleted (a team with its shifts), so routing never sees a stale owner; the report lists each.
A component or edge an explicit world file declared keeps the world file's attributes when
another source disagrees; the report lists each such disagreement.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from adapters.falkordb import TenantGraph
from agents.respond.escalation import policy_lines
from gateway.world import playbooks
from gateway.world.codeowners import Rule, ownership
from gateway.world.model import ComponentSpec, EdgeSpec, TopologyError, WorldSpec
from gateway.world.oncall import Refresh, definition_json, ms, refresh_oncall
from gateway.world.validate import check_world, dotted


@dataclass
class ImportReport:
    """What an import did: `counts` per kind written, `new` / `changed` / `retired` items
    (`component x`, `edge a -CALLS-> b`, `escalation policy of team t: after 5 min: Di
    Example; …` or `…: removed`), `removed` ownership, memberships and teams a source
    said before and no longer says (`owner payments of billing: no longer reported by ...`),
    `world_wins` (a source disagreed with the world file),
    `unmapped` names no importer could map (never guessed), `notes`, and `merged`: components
    this import reported that the graph already held from other apps' sources only (two
    worlds' `cart` become one component: `topology import` warns). A source that describes the
    same app (`same_app`: an edited copy of the world file at another path, the app's compose
    file) is no other app: a note says its components were merged."""

    counts: dict[str, int] = field(default_factory=dict)
    new: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    world_wins: list[str] = field(default_factory=list)
    unmapped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)

    def sections(self) -> list[tuple[str, list[str]]]:
        """Each list with its title, in the order the report says them."""
        return [
            ("new", self.new), ("changed", self.changed), ("retired", self.retired),
            ("removed", self.removed), ("the world file wins", self.world_wins),
            ("not mapped (never guessed)", self.unmapped), ("note", self.notes),
        ]  # fmt: skip

    def lines(self, limit: int | None = None, hint: str = "") -> list[str]:
        """Human-readable report lines: each list that is not empty, under its title with its
        length, one line per item. A list longer than `limit` (None: no limit) is said in one
        line, its items counted by kind when each names one (`new (111): 37 components, 74
        edges`), else its first `limit` items and how many more; `hint` (how to see every
        item) follows what was left out."""
        out = []
        for title, items in self.sections():
            if not items:
                continue
            if limit is None or len(items) <= limit:
                out.append(f"{title} ({len(items)}):")
                out += [f"  {item}" for item in items]
                continue
            kinds = [k for k in map(_kind, items) if k]
            if len(kinds) == len(items):
                counts = {k: kinds.count(k) for k in dict.fromkeys(kinds)}
                said = ", ".join(f"{n} {k if n == 1 else _PLURAL[k]}" for k, n in counts.items())
                out.append(f"{title} ({len(items)}): {said}{hint}")
            else:
                out.append(f"{title} ({len(items)}):")
                out += [f"  {item}" for item in items[:limit]]
                out.append(f"  … and {len(items) - limit} more{hint}")
        return out


#: What a report item is about, by its first words (`component cart (service, …)`, `edge a
#: -CALLS-> b …`, `escalation policy of team t: …`), and how several are said.
_PLURAL = {
    "escalation policy": "escalation policies", "component": "components", "edge": "edges",
    "owner": "owners", "member": "members", "team": "teams", "playbook": "playbooks",
}  # fmt: skip


def _kind(item: str) -> str | None:
    """The kind `item` is about (a key of `_PLURAL`), or None when it names none."""
    return next((k for k in _PLURAL if item.startswith(f"{k} ")), None)


#: An earlier source is the same app as an import when the components they share are at
#: least this share of the larger of the two sets (`same_app`): an edited copy of a world file
#: shares nearly all; another app whose names collide (robot-shop's cart, payment and shipping
#: in the otel demo's world) a few.
SAME_APP = 0.5


def same_app(
    world: WorldSpec, existing: dict[str, dict[str, Any]], sources: list[str]
) -> dict[str, tuple[int, int]]:
    """The earlier sources (not among this import's `sources`) that describe the same app as
    `world`, by content (the components they share, `SAME_APP`), never by path: source ->
    (components shared, components it gave). `existing`: `world_components` rows by name."""
    mine = {c.id for c in world.components}
    theirs: dict[str, set[str]] = {}
    for name, row in existing.items():
        for source in row["sources"]:
            if source not in sources:
                theirs.setdefault(source, set()).add(name)
    found = {s: (len(names & mine), len(names)) for s, names in theirs.items()}
    return {s: n for s, n in found.items() if n[0] >= SAME_APP * max(n[1], len(mine))}


def declared(source: str) -> bool:
    """Whether a source is an explicit world file (its attributes win over other sources')."""
    return source.startswith("world:")


def known_names(
    world: WorldSpec, existing: dict[str, dict[str, Any]]
) -> tuple[WorldSpec, list[str]]:
    """The model with each component named by an alias (a world file's `hostnames`, e.g.
    compose's `postgresql` for `postgres`) renamed to that component, in components, edges,
    `hosted_on` and `owns`; and one note per renamed id. Aliases come from the graph and from
    the model itself, so a world file imported in the same run renames whatever the order of
    the files. World-file components, and names the graph already holds as components, are
    never renamed (the caller notes the latter); an alias of several components is left alone.
    """
    owners: dict[str, set[str]] = {}
    for name, row in existing.items():
        for alias in row.get("aliases") or []:
            owners.setdefault(alias, set()).add(name)
    for comp in world.components:
        for alias in comp.aliases():
            owners.setdefault(alias, set()).add(comp.id)
    rename: dict[str, str] = {}
    for comp in world.components:
        targets = owners.get(comp.id, set()) - {comp.id}
        if comp.id not in existing and len(targets) == 1 and not declared(comp.source or ""):
            rename[comp.id] = targets.pop()
    if not rename:
        return world, []
    model = world.model_copy(deep=True)
    here: dict[str, ComponentSpec] = {}
    for comp in model.components:
        if comp.id not in rename:
            here.setdefault(comp.id, comp)
    kept: list[ComponentSpec] = []
    for comp in model.components:
        if comp.id in rename:
            comp.id = rename[comp.id]
            into = here.setdefault(comp.id, comp)  # the target, else the first alias of it
            if into is not comp:
                into.paths = into.paths or comp.paths  # e.g. the alias's compose build context
                into.annotations = comp.annotations | into.annotations
                continue
        kept.append(comp)
    model.components = kept
    for comp in model.components:
        comp.hosted_on = rename.get(comp.hosted_on or "", comp.hosted_on)
    edges: dict[tuple[str, str, str, str | None], EdgeSpec] = {}
    for edge in model.edges:
        edge.source = rename.get(edge.source, edge.source)
        edge.target = rename.get(edge.target, edge.target)
        edges.setdefault((*edge.key(), edge.origin), edge)  # one row per edge and source
    model.edges = list(edges.values())
    for team in model.teams:
        team.owns = list(dict.fromkeys(rename.get(c, c) for c in team.owns))
        renamed_from: dict[str, list[str]] = {}
        for owned, said in team.owns_from.items():
            got = renamed_from.setdefault(rename.get(owned, owned), [])
            got += [s for s in said if s not in got]
        team.owns_from = renamed_from
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
    oncall: bool = True,
) -> ImportReport:
    """Validate `world` against itself and the graph, then write it.

    `sources`: every source this import read (`importer:location`); edges one of them reported
    before and not now are retired; ownership, memberships and teams one of them said before
    and not now are removed (`report.removed`), what other sources said is kept. `explicit`:
    a world file is among the sources, so the model must name a default team (components and
    edges from `world:` sources win over other sources' wherever they disagree). `codeowners`:
    rules and their file name (source `codeowners:<name>`); each component with `paths` is
    owned by the team the last matching rule names, unless another source gives it another
    owner (that owner is kept and reported); what the file gave before and no longer gives is
    removed like any source's. `oncall`: expand every team's shifts around `now` afterwards;
    False for a source that says nothing of teams (discovery, whose `now` may be a backfill's
    past time: shifts expanded around it would replace today's).
    `now` (default: the current time) stamps `last_seen`; an edge seen after `now` keeps its
    newer rate and is never retired by this import (a backfill cannot undo newer evidence).
    Raises `TopologyError` listing every problem; nothing is written then.
    Returns the `ImportReport`; `counts` has components and edges, then (with `oncall`) teams,
    people, playbooks and shifts.
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
    owners = _owner_rows(world, sources[0])
    said_here = set(sources)
    if codeowners is not None:
        owners += _codeowners(graph, world, *codeowners, said_here, report)
    ours = same_app(world, existing, sources)
    for source, (shared, given) in sorted(ours.items()):
        report.notes.append(
            f"{shared} of the {given} components of {source} (imported before) are this "
            f"import's: the same app, merged; what only {source} says (owners, members, edges) "
            "stays until it is imported again"
        )
    for comp in world.components:
        old = existing.get(comp.id)
        if old is not None and old["sources"] and not set(old["sources"]) & (said_here | set(ours)):
            report.merged.append(comp.id)
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
         "origin": e.origin or sources[0], "declared": declared(e.origin or sources[0]),
         "basis": e.basis or ("declared" if declared(e.origin or sources[0]) else None)}
        for e in world.edges
    ]  # fmt: skip
    edges += [
        {"from": c.id, "to": c.hosted_on, "type": "HOSTED_ON", "protocol": None,
         "purpose": "business", "propagation": "hard", "rate": None,
         "origin": c.source or sources[0], "declared": declared(c.source or sources[0]),
         "basis": "declared"}
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
         "approvers": t.approvers,
         "oncall_json": definition_json(t), "sources": t.said_by(sources[0])[0],
         # a world file without a policy clears the stored one; other sources never say one
         "escalation_policy_json": t.policy_json()
         or ("" if declared(t.source or sources[0]) else None),
         "is_default": (t.name == world.default_team) if world.default_team else None}
        for t in world.teams
    ]  # fmt: skip
    people = _people_rows(world, sources[0])
    for row in graph.rows("import_teams", {"teams": teams}):
        was, after = row["policy_before"] or "", row["policy"] or ""
        if after and not was:
            report.new.append(f"escalation policy of team {row['team']}: "
                              + "; ".join(policy_lines(after)))  # fmt: skip
        elif after != was:
            report.changed.append(f"escalation policy of team {row['team']}: "
                                  + ("; ".join(policy_lines(after)) or "removed"))  # fmt: skip
    graph.rows("import_people", {"people": people})
    graph.rows("import_owners", {"owners": owners})
    if codeowners is not None:
        said_here.add(f"codeowners:{codeowners[1]}")
    for source in sorted(said_here):
        _drop_unsaid(graph, source, teams, owners, people, report)
    if world.default_team:
        graph.rows("set_default_team", {"team": world.default_team})
    if explicit:  # only world files carry playbooks; an import of other sources leaves them
        new, changed, retired, notes = playbooks.write(graph, world.playbooks, sources, stamp)
        report.new += new
        report.changed += changed
        report.retired += retired
        report.notes += notes
    report.counts = {"components": len(components), "edges": len(edges)}
    if not oncall:
        return report
    refreshed: Refresh = refresh_oncall(graph, now)
    for team, names in refreshed.unmatched.items():
        report.unmapped += [f"on-call of {team}: {name!r} matches no member" for name in names]
    for team, error in refreshed.errors.items():
        report.notes.append(f"on-call of {team} not expanded: {error}")
    report.counts |= {
        "teams": len(teams),
        "people": len(people),
        "playbooks": len(world.playbooks),
        "shifts": sum(n for t, n in refreshed.shifts.items() if t in {x.name for x in world.teams}),
    }
    return report


def _owner_rows(world: WorldSpec, default: str) -> list[dict[str, Any]]:
    """`{team, component, sources}` for each team's `owns`, with the sources that said it."""
    return [
        {"team": t.name, "component": comp, "sources": said}
        for t in world.teams
        for comp, said in t.said_by(default)[1].items()
    ]


def _people_rows(world: WorldSpec, default: str) -> list[dict[str, Any]]:
    """`{name, email, slack_user_id, team, sources}` per membership. A person's details are
    the ones any membership gives (validation refuses two that differ), so every row of a
    person writes the same details whatever the order of the teams."""
    details: dict[str, dict[str, str | None]] = {}
    for team in world.teams:
        for m in team.members:
            known = details.setdefault(m.name, {"email": None, "slack_user_id": None})
            known["email"] = known["email"] or m.email
            known["slack_user_id"] = known["slack_user_id"] or m.slack_user_id
    return [
        {"name": m.name, **details[m.name], "team": t.name, "sources": said[m.name]}
        for t in world.teams
        for said in [t.said_by(default)[2]]
        for m in t.members
    ]


def _drop_unsaid(
    graph: TenantGraph,
    source: str,
    teams: list[dict[str, Any]],
    owners: list[dict[str, Any]],
    people: list[dict[str, Any]],
    report: ImportReport,
) -> None:
    """Remove the ownership, memberships and teams `source` said before and does not say in
    this import (what other sources say is kept), and list each removal in `report.removed`.
    Ownership and memberships recorded before sources were kept, of a team `source` says,
    count as said by it."""
    adopt = [t["name"] for t in teams if source in t["sources"]]
    keep = [f"{o['team']}|{o['component']}" for o in owners if source in o["sources"]]
    params = {"source": source, "keep": keep, "adopt": adopt}
    for row in graph.rows("drop_owners", params):
        if row["gone"]:  # else another source still says it
            report.removed.append(
                f"owner {row['team']} of {row['component']}: no longer reported by {source}"
            )
    keep = [f"{p['name']}|{p['team']}" for p in people if source in p["sources"]]
    for row in graph.rows("drop_members", params | {"keep": keep}):
        if row["gone"]:
            report.removed.append(
                f"member {row['person']} of {row['team']}: no longer reported by {source}"
            )
    for row in graph.rows("drop_teams", {"source": source, "keep": adopt}):
        if not row["gone"]:
            continue
        # its own ownership and memberships are listed above; what is left came from sources
        # not in this import (e.g. a CODEOWNERS file) and goes with the team
        owned = f" and its ownership of {', '.join(sorted(row['owned']))}" if row["owned"] else ""
        report.removed.append(
            f"team {row['team']}: no longer reported by {source} (deleted with its "
            f"{row['shift_count']} on-call shifts{owned})"
        )


def _codeowners(
    graph: TenantGraph,
    world: WorldSpec,
    rules: list[Rule],
    name: str,
    said_here: set[str],
    report: ImportReport,
) -> list[dict[str, Any]]:
    """`{team, component, sources: ["codeowners:<name>"]}` for each component CODEOWNERS
    gives a team, unless another team owns it by another source (a world file, a catalog):
    that owner is kept and reported. What this CODEOWNERS file gave before is no obstacle (it
    is said again, or removed), nor is what a source of this import (`said_here`) said before
    and does not say now (the model replaces it)."""
    source = f"codeowners:{name}"
    model_teams = {t.name for t in world.teams}
    current: dict[str, set[str]] = {}
    before: set[tuple[str, str]] = set()
    for row in graph.rows("component_owners"):
        before.add((row["component"], row["team"]))
        if row["sources"] is None:  # imported before sources were kept
            other = row["team"] not in model_teams  # else dropped unless the model says it
        else:
            other = bool(set(row["sources"]) - said_here - {source})
        if other:
            current.setdefault(row["component"], set()).add(row["team"])
    for spec in world.teams:
        for comp in spec.owns:
            current.setdefault(comp, set()).add(spec.name)
    teams = model_teams | {row["name"] for row in graph.rows("team_names")}
    owned, unmapped = ownership(world, rules, teams, name)
    report.unmapped += unmapped
    rows: list[dict[str, Any]] = []
    for team, components in owned.items():
        for comp in components:
            others = current.get(comp, set()) - {team}
            if others:
                report.world_wins.append(
                    f"component {comp}: {name} names {team}, already owned by "
                    f"{', '.join(sorted(others))} (kept)"
                )
                continue
            rows.append({"team": team, "component": comp, "sources": [source]})
            if (comp, team) not in before:
                report.new.append(f"owner {team} of {comp} (from {name})")
    return rows


def world_counts(graph: TenantGraph) -> dict[str, int]:
    """What the graph holds now: components, edges (between components), teams, people, shifts."""
    row = graph.one("world_counts") or {}
    return {
        key: int(row.get(key) or 0) for key in ("components", "edges", "teams", "people", "shifts")
    }
