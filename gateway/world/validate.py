"""Checks of a world before anything is written: every problem at once, never the first only.

Shared by every importer and the writer: unknown components named by an
edge, a `hosted_on` or a team's `owns`; duplicate component or team ids; a team without
members; a person listed twice in a team, or with two emails or Slack ids across teams (one
Person node keeps one of each: the other would be lost silently); a rotation naming someone
who is not a member; no default team, or one that is not a team; an escalation policy that
names nobody known, or whose levels are not in order. Item-level problems (a bad
`kind`, a missing field) come from pydantic, per item, so one bad item does not hide the
problems of the others; a team or edge with a bad field is still checked for references with
that field left out, and a team's members and escalation levels one by one (a level's bad
`after` hides neither its people nor the order of the others): one pass lists everything. An
unknown person or team is named with the closest known one.
"""

from __future__ import annotations

import difflib
import functools
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from gateway.world.model import (
    CHANNEL_TARGET,
    ComponentSpec,
    EdgeSpec,
    EscalationLevelSpec,
    MemberSpec,
    RotationSpec,
    TeamSpec,
    TeamTarget,
    WorldSpec,
)
from gateway.world.playbooks import WorldPlaybook

#: Fields importers set, never a file: where a component was found, and an edge's origin.
_SET_BY: list[tuple[type[BaseModel], str]] = [
    (ComponentSpec, "source"),
    (EdgeSpec, "origin"),
    (EdgeSpec, "basis"),
]
_SET_BY += [(TeamSpec, name) for name in ("source", "sources", "owns_from", "members_from")]
_SET_BY.append((WorldPlaybook, "source"))
SET_BY = frozenset(_SET_BY)
#: A path into the source document, as pydantic reports it: ("teams", 0, "owns", 1).
Loc = tuple[str | int, ...]
#: Turns a path into the prefix of a problem line, e.g. `world.yaml:12: teams.0.owns.1`.
Locator = Callable[[Loc], str]


def dotted(loc: Loc) -> str:
    """`("teams", 0, "owns")` -> `teams.0.owns`."""
    return ".".join(str(part) for part in loc)


def parse_items(data: Any, locate: Locator) -> tuple[WorldSpec | None, list[str], Locator]:
    """Build a `WorldSpec` from loaded YAML/JSON data, item by item.

    Returns the model of every valid item (None when the document is not a mapping; no
    `components:` is an empty list), one problem line per invalid field, and `locate` for paths
    into the returned world: the world leaves invalid items out, so its `edges.1` may be the file's
    `edges.2`, and that locator names the file's item and line.
    """
    if not isinstance(data, dict):
        return None, [f"{locate(())}: the file must be a mapping (`components:`, …)"], locate
    problems: list[str] = unknown_keys(data, WorldSpec, (), locate)
    parts: dict[str, list[Any]] = {}
    kept: dict[str, list[int]] = {}  # per list: the file's index of each valid item
    models: dict[str, type[BaseModel]] = {
        "components": ComponentSpec, "edges": EdgeSpec, "teams": TeamSpec,
        "playbooks": WorldPlaybook,
    }  # fmt: skip
    for key, model in models.items():
        # `components:` may be left out: a teams-only file beside a compose file or a catalog
        # adds owners and on-call to their components (a misspelt key is an unknown key)
        items = data.get(key, [])
        if not isinstance(items, list):
            problems.append(f"{locate((key,))}: must be a list")
            continue
        adapter = TypeAdapter(model)
        parts[key], kept[key] = [], []
        for index, item in enumerate(items):
            if key != "playbooks":  # a playbook forbids unknown keys: pydantic names them
                problems += unknown_keys(item, model, (key, index), locate)
            if key == "teams" and isinstance(item, dict) and isinstance(item.get("members"), list):
                for pos, member in enumerate(item["members"]):
                    problems += unknown_keys(
                        member, MemberSpec, (key, index, "members", pos), locate
                    )
            try:
                parts[key].append(adapter.validate_python(item))
                kept[key].append(index)
            except ValidationError as exc:
                for err in exc.errors():
                    loc: Loc = (key, index, *_fields_only(err["loc"]))
                    got = f" (got {err['input']!r})" if err["type"] == "literal_error" else ""
                    problems.append(f"{locate(loc)}: {err['msg']}{got}")
                salvaged = _salvage(item, key, exc, adapter)
                if salvaged is not None:
                    parts[key].append(salvaged)
                    kept[key].append(index)
    default = data.get("default_team")
    if default is not None and not isinstance(default, str):
        problems.append(f"{locate(('default_team',))}: must be a team name")
        default = None

    def in_file(loc: Loc) -> str:
        if len(loc) > 1 and isinstance(loc[1], int) and loc[1] < len(kept.get(str(loc[0]), [])):
            loc = (loc[0], kept[str(loc[0])][loc[1]], *loc[2:])
        return locate(loc)

    if "components" not in parts:
        return None, problems, in_file
    world = WorldSpec(
        components=parts["components"], edges=parts.get("edges", []),
        teams=parts.get("teams", []), default_team=default,
        playbooks=parts.get("playbooks", []),
    )  # fmt: skip
    return world, problems, in_file


#: Per list: the fields without which an item's references cannot be checked.
_VITAL = {"teams": {"name", "members"}, "edges": {"from", "to"}}
#: Fields checked against another one: left out with it (`repeat` without its policy would be
#: a problem of its own).
_WITH = {"escalation_policy": {"repeat"}}
#: An escalation level's `notify`, validated apart from its `after` (`_level`).
_NOTIFY: TypeAdapter[list[str | TeamTarget]] = TypeAdapter(list[str | TeamTarget])


def _salvage(item: Any, key: str, exc: ValidationError, adapter: TypeAdapter[Any]) -> Any:
    """A team or edge with its invalid fields left out, so its references (rotation,
    escalation people and teams, level order, edge ends) are checked in the same pass as its
    item problems, not after they are fixed; None when a vital field (`_VITAL`) is invalid or
    the rest does not validate either. A team's members and escalation levels are kept one by
    one (`_member`, `_level`): one bad member or level hides neither the others nor the
    team's other problems. The world it joins is never written: its item problems refuse it."""
    if key not in _VITAL or not isinstance(item, dict):
        return None
    bad = {err["loc"][0] for err in exc.errors() if err["loc"]}
    if not bad:
        return None
    kept: dict[str, Any] = {}
    for field, each in (("members", _member), ("escalation_policy", _level)):
        if key == "teams" and field in bad and isinstance(item.get(field), list):
            bad.discard(field)
            kept[field] = [m for m in map(each, item[field]) if m is not None]
    bad |= {field for key_ in list(bad) for field in _WITH.get(str(key_), set())}
    if bad & _VITAL[key]:
        return None
    try:
        return adapter.validate_python({k: v for k, v in item.items() if k not in bad} | kept)
    except ValidationError:
        return None


def _member(raw: Any) -> MemberSpec | None:
    """A team member as far as it is valid: itself, else its name alone (a bad email still
    leaves a person the rotation and the escalation policy may name), else None."""
    for given in (raw, {"name": raw.get("name")} if isinstance(raw, dict) else None):
        try:
            return MemberSpec.model_validate(given)
        except ValidationError:
            continue
    return None


def _level(raw: Any) -> EscalationLevelSpec:
    """An escalation level as far as it is valid, at its place in the policy: itself, else
    its `after` as given (a bad one is no duration to `_after_ms`: the order is checked among
    the others) and its `notify` when that validates (else none), so the people, teams and
    order of a policy are checked in the same pass as a level's bad field. Built without
    validation (`model_construct`): only `check_world` reads it, and pydantic reported the
    level's own problems."""
    try:
        return EscalationLevelSpec.model_validate(raw)
    except ValidationError:
        pass
    fields = raw if isinstance(raw, dict) else {}
    after = fields.get("after")
    try:
        notify = _NOTIFY.validate_python(fields.get("notify"))
    except ValidationError:
        notify = []
    return EscalationLevelSpec.model_construct(
        after=after if isinstance(after, str) else "", notify=notify
    )


def _after_ms(level: EscalationLevelSpec) -> int | None:
    """A level's `after` in ms, or None when it is no duration (a salvaged level, `_level`)."""
    try:
        return level.after_ms
    except ValueError:
        return None


#: How close a name must be to be suggested (difflib ratio): `Bobby` to `Bo` is 0.57, a name
#: with nothing in common (`Nobody Known`, `Cy Park`) under 0.3.
CLOSE_ENOUGH = 0.5


def closest(name: str, names: Sequence[str]) -> str | None:
    """The name of `names` closest to `name` (difflib ratio, on the whole name or on the
    first words, so `Bobby` finds `Bo Chen`); None when none reaches `CLOSE_ENOUGH`."""

    def score(other: str) -> float:
        whole = difflib.SequenceMatcher(None, name.casefold(), other.casefold()).ratio()
        first = difflib.SequenceMatcher(
            None, name.split()[0].casefold(), other.split()[0].casefold()
        ).ratio()
        return max(whole, first)

    best = max(sorted(n for n in names if n.strip()), key=score, default=None)
    return best if best is not None and name.strip() and score(best) >= CLOSE_ENOUGH else None


def _hint(name: str, names: Sequence[str]) -> str:
    """` (did you mean 'X'?)` with the closest name, or nothing when none is close enough."""
    near = closest(name, names)
    return f" (did you mean {near!r}?)" if near else ""


#: Tagged unions whose tag pydantic puts in an error's path: on-call kinds by tag name, and a
#: playbook's checks and remediation by their `type` (the part after `checks.<n>` or
#: `remediation`).
_UNION_TAGS = ("RotationSpec", "IcalSpec")


def _fields_only(loc: Loc) -> Loc:
    """An error path with union tags left out, so it is a path in the file:
    `remediation.github_workflow.workflw` -> `remediation.workflw`."""
    kept: list[str | int] = []
    for pos, part in enumerate(loc):
        after = loc[pos - 1] if pos else None
        tag = part in _UNION_TAGS or (
            isinstance(part, str) and (after == "remediation" or (
                isinstance(after, int) and pos >= 2 and loc[pos - 2] == "checks"))
        )  # fmt: skip
        if not tag:
            kept.append(part)
    return tuple(kept)


@functools.cache
def _file_fields(model: type[BaseModel]) -> list[str]:
    """The keys a file may give for `model`: its fields (by alias) less the importers' own."""
    return sorted(
        {f.alias or name for name, f in model.model_fields.items() if (model, name) not in SET_BY}
    )


def unknown_keys(item: Any, model: type[BaseModel], where: Loc, locate: Locator) -> list[str]:
    """One problem per key of the mapping `item` that is no field of `model` but close to one
    (difflib ratio 0.75: `own` for `owns`, `hosted-on`, `slack_chanel`, `emial`): a misspelt
    key would otherwise vanish without a word, and the team own nothing. Keys close to no field
    are notes a file may carry (the bundled world has `language`, `image`, `notes`)."""
    if not isinstance(item, dict):
        return []
    fields = _file_fields(model)
    lines = []
    for key in map(str, item):
        if (model, key) in SET_BY:  # provenance comes from where the file is, not its text
            lines.append(f"{locate((*where, key))}: {key!r} is set by the import, not a file")
            continue
        close = difflib.get_close_matches(key, fields, n=1, cutoff=0.75)
        if key not in fields and close:
            lines.append(
                f"{locate((*where, key))}: unknown key {key!r}: did you mean {close[0]!r}?"
            )
    return lines


def check_world(
    world: WorldSpec,
    locate: Locator,
    *,
    require_default_team: bool = True,
    also_known: Sequence[str] = (),
    also_teams: Sequence[str] = (),
) -> list[str]:
    """Every cross-reference problem of `world`, one line each (empty when it is sound).

    `also_known`: component ids that exist elsewhere (items that failed item-level checks, or
    components already in the graph), so a reference to them is not reported as unknown;
    `also_teams` likewise for team names (a team item with one bad field is reported once,
    not again as "the default team is not a team").
    Two component ids that differ only in case are a problem: alert labels match exactly, so
    one of them would never see its alerts.
    `require_default_team`: a world file must name its root route; other sources may not.
    """
    problems: list[str] = []
    ids = Counter(c.id for c in world.components)
    known = set(ids) | set(also_known)
    spelt = sorted(known)
    folded: dict[str, int] = {}
    for index, comp in enumerate(world.components):
        if ids[comp.id] > 1 and index != _first(world.components, comp.id):
            problems.append(f"{locate(('components', index, 'id'))}: duplicate id {comp.id!r}")
        first = folded.setdefault(comp.id.casefold(), index)
        if world.components[first].id != comp.id:
            other = world.components[first].id
            problems.append(
                f"{locate(('components', index, 'id'))}: id {comp.id!r} differs from {other!r} "
                f"({locate(('components', first, 'id'))}) only in case: alert labels match "
                "exactly, so use one spelling"
            )
        if comp.hosted_on and comp.hosted_on not in known:
            problems.append(
                f"{locate(('components', index, 'hosted_on'))}: unknown component "
                f"{comp.hosted_on!r}{_hint(comp.hosted_on, spelt)}"
            )
    for index, edge in enumerate(world.edges):
        for end, field in ((edge.source, "from"), (edge.target, "to")):
            if end not in known:
                problems.append(
                    f"{locate(('edges', index, field))}: edge {edge.source} -> {edge.target}: "
                    f"unknown component {end!r}{_hint(end, spelt)}"
                )
    names = Counter(t.name for t in world.teams)
    everyone = {m.name for t in world.teams for m in t.members}
    listed: dict[tuple[str, Loc], Loc] = {}  # (person, team) -> first listing
    details: dict[tuple[str, str], tuple[str, Loc]] = {}  # (person, field) -> first value
    for index, team in enumerate(world.teams):
        where: Loc = ("teams", index)
        if names[team.name] > 1 and index != _first_team(world.teams, team.name):
            problems.append(f"{locate((*where, 'name'))}: duplicate team {team.name!r}")
        for pos, owned in enumerate(team.owns):
            if owned not in known:
                problems.append(
                    f"{locate((*where, 'owns', pos))}: team {team.name!r} owns unknown "
                    f"component {owned!r}{_hint(owned, spelt)}"
                )
        if not team.members:
            problems.append(f"{locate((*where, 'members'))}: team {team.name!r} has no members")
        members = {m.name for m in team.members}
        for pos, member in enumerate(team.members):
            problems += _member_problems(member, (*where, "members", pos), listed, details, locate)
        if isinstance(team.oncall, RotationSpec):
            for pos, person in enumerate(team.oncall.rotation):
                if person not in members:
                    problems.append(
                        f"{locate((*where, 'oncall', 'rotation', pos))}: rotation of "
                        f"{team.name!r} names {person!r}, who is not a member"
                        f"{_hint(person, sorted(members))} "
                        f"(members: {', '.join(sorted(members)) or 'none'})"
                    )
        problems += _policy_problems(team, where, everyone, set(names) | set(also_teams), locate)
    people = {m.name for t in world.teams for m in t.members}
    for index, team in enumerate(world.teams):
        for pos, person in enumerate(team.approvers or []):
            if person not in people:  # an approver is checked against a Person node
                problems.append(
                    f"{locate(('teams', index, 'approvers', pos))}: approver {person!r} of "
                    f"{team.name!r} is not a member of any team{_hint(person, sorted(people))} "
                    "(approvers are people by name)"
                )
    playbook_ids = Counter(p.id for p in world.playbooks)
    for index, playbook in enumerate(world.playbooks):
        where = ("playbooks", index)
        if playbook_ids[playbook.id] > 1 and index != next(
            n for n, p in enumerate(world.playbooks) if p.id == playbook.id
        ):
            problems.append(f"{locate((*where, 'id'))}: duplicate playbook id {playbook.id!r}")
        if playbook.component not in known:
            problems.append(
                f"{locate((*where, 'component'))}: playbook {playbook.id!r} is pinned to "
                f"unknown component {playbook.component!r}{_hint(playbook.component, spelt)}"
            )
    if world.default_team is None:
        if require_default_team:
            problems.append(
                f"{locate(('default_team',))}: Field required (the team paged "
                "when no team owns an incident's components)"
            )
    elif world.default_team not in names and world.default_team not in also_teams:
        problems.append(
            f"{locate(('default_team',))}: {world.default_team!r} is not a team in `teams`"
            f"{_hint(world.default_team, sorted(set(names) | set(also_teams)))}"
        )
    return problems


def _policy_problems(
    team: TeamSpec, where: Loc, people: set[str], teams: set[str], locate: Locator
) -> list[str]:
    """An escalation policy's problems: a person who is no member of any team (nobody to
    reach), a team that is not one, levels whose `after` does not grow (a level due before or
    with the one above it would run out of order), and `repeat` without a policy."""
    problems: list[str] = []
    if not team.escalation_policy:
        if team.repeat:
            problems.append(
                f"{locate((*where, 'repeat'))}: team {team.name!r} has `repeat` but no "
                "`escalation_policy` to repeat"
            )
        return problems
    previous: tuple[int, str, int] | None = None  # the last level with a duration: ms, as given, n
    for pos, level in enumerate(team.escalation_policy):
        at: Loc = (*where, "escalation_policy", pos)
        due = _after_ms(level)
        if due is not None and previous is not None and due <= previous[0]:
            problems.append(
                f"{locate((*at, 'after'))}: level {pos + 1} of {team.name!r} is due after "
                f"{level.after}, not later than level {previous[2]} ({previous[1]}): list "
                "levels in the order they run, each `after` larger than the one before"
            )
        if due is not None:
            previous = (due, level.after, pos + 1)
        for index, target in enumerate(level.notify):
            spot = locate((*at, "notify", index))
            if isinstance(target, TeamTarget):
                if target.team not in teams:
                    problems.append(
                        f"{spot}: {target.team!r} is not a team in `teams`"
                        f"{_hint(target.team, sorted(teams))}"
                    )
            elif target != CHANNEL_TARGET and target not in people:
                problems.append(
                    f"{spot}: {target!r} is no member of any team{_hint(target, sorted(people))}"
                    f"; give a person's name, {{team: NAME}} or {CHANNEL_TARGET!r}"
                )
    return problems


def _member_problems(
    member: MemberSpec,
    where: Loc,
    listed: dict[tuple[str, Loc], Loc],
    details: dict[tuple[str, str], tuple[str, Loc]],
    locate: Locator,
) -> list[str]:
    """A person listed twice in one team, or with an email or Slack id that differs from one
    another listing gave: one Person node holds one of each, so the import would keep one and
    drop the other silently. A listing that leaves a detail out is no conflict (the writer
    takes the one given). Records the first listing per team (`listed`) and the first value
    of each detail (`details`) of each person."""
    problems = []
    first = listed.setdefault((member.name, where[:2]), where)
    if first != where:
        problems.append(
            f"{locate(where)}: {member.name!r} is listed twice (first at {locate(first)})"
        )
    for key in ("email", "slack_user_id"):
        mine = getattr(member, key)
        if not mine:
            continue
        theirs, at = details.setdefault((member.name, key), (mine, where))
        if theirs != mine:
            problems.append(
                f"{locate((*where, key))}: {member.name!r} has {key} {mine!r} here and "
                f"{theirs!r} at {locate((*at, key))} (one person, one {key}: use one spelling "
                "or two names)"
            )
    return problems


def _first(components: list[ComponentSpec], ident: str) -> int:
    return next(i for i, c in enumerate(components) if c.id == ident)


def _first_team(teams: list[TeamSpec], name: str) -> int:
    return next(i for i, t in enumerate(teams) if t.name == name)
