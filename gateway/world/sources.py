"""Pick the importer for each path (by `--format`, or by content with `auto`) and merge what
the importers return into one world model.

Formats: `world` (the hand-written world file), `compose` (docker compose files; several are
layered as `docker compose -f a -f b` would), `backstage` (catalog-info.yaml), `kubernetes`
(manifests). A folder stands for the files in it that a format recognises.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gateway.world.backstage import load_backstage
from gateway.world.compose import load_compose
from gateway.world.kubernetes import load_kubernetes
from gateway.world.model import ComponentSpec, EdgeSpec, TeamSpec, TopologyError, WorldSpec
from gateway.world.playbooks import WorldPlaybook
from gateway.world.worldfile import load_world
from gateway.world.yamlfile import load_documents


@dataclass
class Loaded:
    """The merged model of one import, the sources it read (`importer:path`), whether a world
    file was among them, and names an importer could not map (reported, never guessed)."""

    world: WorldSpec
    sources: list[str]
    explicit: bool
    unmapped: list[str] = field(default_factory=list)


def _documents(path: Path) -> list[Any]:
    return [d for d in load_documents(path) if d is not None]


#: What an importer returns: the worlds it read, each with its source ids (`importer:path`),
#: and the names it could not map to a component (reported, never guessed).
Imported = tuple[list[tuple[WorldSpec, list[str]]], list[str]]


@dataclass(frozen=True)
class Importer:
    """One source format: `name` (`--format`), `recognises(first YAML document)` for
    detection, and `load(files, env_file, known component ids)`. A new format is one entry
    in `IMPORTERS`; detection tries them in order."""

    name: str
    recognises: Callable[[dict[str, Any]], bool]
    load: Callable[[list[Path], Path | None, list[str]], Imported]


def _world(files: list[Path], env_file: Path | None, known: list[str]) -> Imported:
    return [(load_world(f, known), [f"world:{f}"]) for f in files], []


def _backstage(files: list[Path], env_file: Path | None, known: list[str]) -> Imported:
    world, refs = load_backstage(files)
    return [(world, [f"backstage:{f}" for f in _files(files)])], refs


def _kubernetes(files: list[Path], env_file: Path | None, known: list[str]) -> Imported:
    world, hosts = load_kubernetes(files)
    return [(world, [f"kubernetes:{f}" for f in _files(files)])], hosts


def _compose(files: list[Path], env_file: Path | None, known: list[str]) -> Imported:
    world, hosts = load_compose(files, env_file)  # layered, as `docker compose -f a -f b`
    return [(world, [f"compose:{files[0]}"])], hosts


IMPORTERS: tuple[Importer, ...] = (
    # a world file may lack its components and is still reported as one
    Importer("world", lambda d: bool({"components", "edges", "teams", "default_team"} & set(d)),
             _world),
    Importer("compose", lambda d: isinstance(d.get("services"), dict), _compose),
    Importer("backstage", lambda d: str(d.get("apiVersion", "")).startswith("backstage.io/"),
             _backstage),
    Importer("kubernetes", lambda d: bool(d.get("apiVersion")) and "kind" in d, _kubernetes),
)  # fmt: skip
BY_NAME: dict[str, Importer] = {importer.name: importer for importer in IMPORTERS}
#: What `--format` accepts.
FORMATS: tuple[str, ...] = ("auto", *BY_NAME)


def detect(path: Path) -> str:
    """The format of a file by its content: a world file has `components:` (or `teams:`,
    `edges:`, `default_team:`, so a world missing its components is reported as such); compose has
    `services:`; Backstage documents have `apiVersion: backstage.io/...`; Kubernetes ones an
    `apiVersion` and `kind`. Raises `TopologyError` when none fits."""
    if path.is_dir():
        inside = sorted(path.rglob("*.y*ml"))
        kinds = {detect(p) for p in inside[:50]} if inside else set()
        if len(kinds) == 1:
            return kinds.pop()
        raise TopologyError(f"{path}: a folder of {', '.join(sorted(kinds)) or 'no YAML'} files")
    docs = _documents(path)
    first = docs[0] if docs and isinstance(docs[0], dict) else {}
    for importer in IMPORTERS:
        if importer.recognises(first):
            return importer.name
    raise TopologyError(
        f"{path}: not a world file (no `components:`), compose file, Backstage catalog or "
        "Kubernetes manifest (use --format to say which)"
    )


def load_sources(paths: list[Path], fmt: str = "auto", env_file: Path | None = None) -> Loaded:
    """Read every path with its importer and merge the models (later sources add to earlier
    ones; the first to name a component or team gives its attributes). Compose files are
    layered together in the order given; `env_file` replaces the `.env` beside the first.

    Raises `TopologyError` listing every problem of every path; nothing is returned then.
    """
    by_format: dict[str, list[Path]] = {}
    problems: list[str] = []
    # absolute: a source's id (`world:<path>`) must not depend on how the path was typed,
    # else a re-import by another path never retires what the file no longer says
    for path in (p.resolve() for p in paths):
        try:
            kind = fmt if fmt != "auto" else detect(path)
        except TopologyError as exc:
            problems += exc.problems
            continue
        by_format.setdefault(kind, []).append(path)
    parts: list[tuple[WorldSpec, list[str]]] = []
    unmapped: list[str] = []
    # world files last: they may own or connect components the other sources define
    for kind, files in sorted(by_format.items(), key=lambda item: item[0] == "world"):
        try:
            importer = BY_NAME.get(kind)
            if importer is None:
                raise TopologyError(f"{', '.join(map(str, files))}: format {kind} is not known")
            known = [c.id for world, _ in parts for c in world.components]
            made, found = importer.load(files, env_file, known)
            parts += made
            unmapped += found
        except TopologyError as exc:
            problems += exc.problems
    if problems:
        raise TopologyError(problems)
    # the world files' definitions come first, so they win where sources disagree
    parts.sort(key=lambda part: not part[1][0].startswith("world:"))
    merged = merge([world for world, _ in parts])
    sources = [s for _, names in parts for s in names]
    return Loaded(merged, sources, explicit="world" in by_format, unmapped=unmapped)


def _files(paths: list[Path]) -> list[Path]:
    """The files a list of paths stands for (a folder: its YAML files, sorted)."""
    found: list[Path] = []
    for path in paths:
        found += sorted(path.rglob("*.y*ml")) if path.is_dir() else [path]
    return found


def merge(worlds: list[WorldSpec]) -> WorldSpec:
    """One model from several: components, edges and teams by identity, first one wins;
    teams' `owns` and members are unioned, with the sources that said each (`TeamSpec.said_by`);
    the first default team named wins, and the first playbook of each id (world files only
    carry playbooks)."""
    components: dict[str, ComponentSpec] = {}
    edges: dict[tuple[str, str, str], EdgeSpec] = {}
    teams: dict[str, TeamSpec] = {}
    playbooks: dict[str, WorldPlaybook] = {}
    default = None
    for world in worlds:
        for playbook in world.playbooks:
            playbooks.setdefault(playbook.id, playbook)
        for comp in world.components:
            first = components.setdefault(comp.id, comp)
            first.paths = first.paths or comp.paths  # e.g. a compose build context
            first.annotations = comp.annotations | first.annotations  # e.g. Backstage's
        for edge in world.edges:
            edges.setdefault(edge.key(), edge)
        for team in world.teams:
            said, owns, members = team.said_by("")
            if said == [""]:  # a model built in code says no source: the writer's default
                said, owns, members = [], {}, {}
            if team.name not in teams:
                teams[team.name] = team.model_copy(deep=True)
                new = teams[team.name]
                new.sources, new.owns_from, new.members_from = said, owns, members
                continue
            into = teams[team.name]
            into.owns += [c for c in team.owns if c not in into.owns]
            listed = {m.name: m for m in into.members}
            into.members += [m for m in team.members if m.name not in listed]
            for m in team.members:  # a detail only the later source gives is kept
                if (known := listed.get(m.name)) is not None:
                    known.email = known.email or m.email
                    known.slack_user_id = known.slack_user_id or m.slack_user_id
            into.oncall = into.oncall or team.oncall
            if team.approvers is not None:
                into.approvers = (into.approvers or []) + [
                    a for a in team.approvers if a not in (into.approvers or [])
                ]
            # provenance: each source that said the team, an ownership or a membership
            into.sources += [s for s in said if s not in into.sources]
            for key, got in (*owns.items(), *members.items()):
                into_from = into.owns_from if key in owns else into.members_from
                into_from[key] = into_from.get(key, []) + [
                    s for s in got if s not in into_from.get(key, [])
                ]
        default = default or world.default_team
    return WorldSpec(
        components=list(components.values()), edges=list(edges.values()),
        teams=list(teams.values()), default_team=default, playbooks=list(playbooks.values()),
    )  # fmt: skip
