"""The world-file importer: a hand-written YAML world (`components`, `edges`, `teams`,
`default_team`) to the internal model, with every problem reported at once with its line.

Line numbers come from PyYAML's node marks (`yaml.compose`): each mapping value and sequence
item is mapped from its path (`("teams", 0, "owns", 1)`) to its 1-based line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from gateway.world.model import IcalSpec, TopologyError, WorldSpec
from gateway.world.validate import Loc, Locator, check_world, dotted, parse_items
from gateway.world.yamlfile import load_document, read_text


def line_map(text: str) -> dict[Loc, int]:
    """Path -> 1-based line of every node of a YAML document (empty if it does not parse)."""
    lines: dict[Loc, int] = {}

    def walk(node: yaml.Node, path: Loc) -> None:
        lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    lines[(*path, key.value)] = key.start_mark.line + 1
                    walk(value, (*path, key.value))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                walk(item, (*path, index))

    root = yaml.compose(text, Loader=yaml.SafeLoader)
    if root is not None:
        walk(root, ())
    return lines


def locator(path: Path, lines: dict[Loc, int]) -> Locator:
    """`file:line: dotted.path` for the deepest part of `loc` whose line is known."""

    def locate(loc: Loc) -> str:
        for cut in range(len(loc), -1, -1):
            if (line := lines.get(loc[:cut])) is not None:
                return f"{path}:{line}: {dotted(loc)}" if loc else f"{path}:{line}"
        return f"{path}: {dotted(loc)}" if loc else str(path)

    return locate


def read_yaml(path: Path) -> tuple[Any, Locator]:
    """Load one YAML document and a locator for its lines; `TopologyError` if unreadable."""
    text = read_text(path)
    data = load_document(path, text)  # one problem line (file:line:column) if it cannot be read
    return data, locator(path, line_map(text))


def load_world(path: Path, also_known: list[str] | None = None) -> WorldSpec:
    """Read and check a world file; every component, edge and team gets `world:<path>` as its
    source.

    `also_known`: component ids other sources of the same import define (a world file may
    own or connect them).
    An `oncall: {ical: FILE}` path is made absolute (relative to the world file).
    Raises `TopologyError` listing every problem (`file:line: field: reason`).
    """
    data, locate = read_yaml(path)
    world, problems, locate = parse_items(data, locate)  # `locate` now maps world to file
    if world is None:
        raise TopologyError(problems)
    raw = data.get("components") if isinstance(data, dict) else None
    raw_ids = [c["id"] for c in raw or [] if isinstance(c, dict) and isinstance(c.get("id"), str)]
    raw_teams = data.get("teams") if isinstance(data.get("teams"), list) else []
    team_names = [
        t["name"] for t in raw_teams if isinstance(t, dict) and isinstance(t.get("name"), str)
    ]
    problems += check_world(
        world, locate, also_known=raw_ids + list(also_known or []), also_teams=team_names
    )
    if "components" not in data and any("unknown component" in p for p in problems):
        problems.append(
            f"{path}: this file has no `components:` and no other source of this import defines "
            "the components above: add `components:`, or import it with the compose file, "
            "catalog or manifests that define them"
        )
    for index, team in enumerate(world.teams):
        if isinstance(team.oncall, IcalSpec) and "://" not in team.oncall.ical:
            calendar = (path.parent / team.oncall.ical).resolve()
            if not calendar.is_file():
                problems.append(
                    f"{locate(('teams', index, 'oncall', 'ical'))}: no calendar file {calendar}"
                )
            team.oncall.ical = str(calendar)
    if problems:
        raise TopologyError(problems)
    source = f"world:{path}"
    for comp in world.components:
        comp.source = source
    for edge in world.edges:
        edge.origin = source
    for team in world.teams:
        team.source = source
    for playbook in world.playbooks:
        playbook.source = source
    return world
