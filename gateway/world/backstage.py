"""The Backstage catalog importer: `catalog-info.yaml` files (multi-document) to the world model.

Source: the Backstage descriptor format (backstage.io/docs/features/software-catalog/
descriptor-format). Kinds used:
- `Component` (any `spec.type` but `library`) -> a service component; `Resource` -> a
  datastore, or a topic when its type is `topic`/`queue`; metadata annotations are kept
  (`pagerduty.com/service-id`, ...).
- `spec.dependsOn` -> CALLS (to a Component) or READS_WRITES (to a Resource);
  `spec.consumesApis` -> CALLS to each Component that `providesApis` that API (or to the
  Component a `component:` reference names).
- `spec.owner` (a Group) -> that team OWNS the component; `Group` -> a team; `User` with
  `spec.memberOf` -> a member (`profile.displayName`, else the entity name; `profile.email`).
- `System` and `API` are read for references only.

Entity references are `[kind:][namespace/]name`, the kind defaulting by field (dependsOn:
Component, owner and memberOf: Group, APIs: API), the namespace to `default`; a component's id
is its name. A reference to something not in the files is reported, never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gateway.world.model import (
    ComponentSpec,
    EdgeSpec,
    MemberSpec,
    TeamSpec,
    TopologyError,
    WorldSpec,
)
from gateway.world.yamlfile import load_documents


@dataclass(frozen=True)
class Ref:
    """A parsed entity reference, kind and namespace lower-cased as Backstage compares them."""

    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.namespace}/{self.name}"


def parse_ref(text: str, default_kind: str, default_namespace: str = "default") -> Ref:
    """`[kind:][namespace/]name` -> `Ref` (kind from `default_kind` when absent)."""
    kind, sep, rest = str(text).partition(":")
    if not sep:
        kind, rest = default_kind, kind
    namespace, sep, name = rest.partition("/")
    if not sep:
        namespace, name = default_namespace, namespace
    return Ref(kind.lower(), namespace.lower(), name)


def read_entities(paths: list[Path]) -> list[tuple[Path, dict[str, Any]]]:
    """Every Backstage entity document in the files (a folder: its `*.yaml`/`*.yml` files)."""
    files: list[Path] = []
    for path in paths:
        files += sorted(p for p in path.rglob("*.y*ml")) if path.is_dir() else [path]
    entities = []
    for file in files:
        docs = load_documents(file)
        for doc in docs:
            if isinstance(doc, dict) and str(doc.get("apiVersion", "")).startswith("backstage.io/"):
                entities.append((file, doc))
    return entities


def reasons(exc: ValidationError) -> str:
    """pydantic's messages for one model, `field: message; …`, without its URLs."""
    return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())


def load_backstage(paths: list[Path]) -> tuple[WorldSpec, list[str]]:
    """Catalog files to a world model, and every reference that names nothing in them.

    Raises `TopologyError` when a file is unreadable or an entity has no `metadata.name`.
    """
    entities = read_entities(paths)
    problems, unmapped = [], []
    by_ref: dict[Ref, dict[str, Any]] = {}
    for file, doc in entities:
        meta = doc.get("metadata") or {}
        if not meta.get("name"):
            problems.append(f"{file}: a {doc.get('kind')} entity has no metadata.name")
            continue
        namespace = str(meta.get("namespace", "default")).lower()
        ref = Ref(str(doc.get("kind", "")).lower(), namespace, str(meta["name"]))
        by_ref[ref] = doc | {"_file": str(file)}
    if problems:
        raise TopologyError(problems)
    components: dict[str, ComponentSpec] = {}
    providers: dict[Ref, list[str]] = {}
    for ref, doc in by_ref.items():
        spec, meta = doc.get("spec") or {}, doc.get("metadata") or {}
        if ref.kind not in ("component", "resource") or spec.get("type") == "library":
            continue
        kind = "service"
        if ref.kind == "resource":
            kind = "topic" if spec.get("type") in ("topic", "queue") else "datastore"
        annotations = {str(k): str(v) for k, v in (meta.get("annotations") or {}).items()}
        try:
            components[ref.name] = ComponentSpec(
                id=ref.name, kind=kind, tech=None, annotations=annotations,
                source=f"backstage:{doc['_file']}",
            )  # fmt: skip
        except ValidationError as exc:
            problems.append(f"{doc['_file']}: {ref.kind} {ref.name[:80]!r}: {reasons(exc)}")
            continue
        for api in spec.get("providesApis") or []:
            providers.setdefault(parse_ref(api, "api", ref.namespace), []).append(ref.name)
    edges: dict[tuple[str, str, str], EdgeSpec] = {}
    owners: dict[str, list[str]] = {}

    def add_edge(caller: str, callee: str, origin: str) -> None:
        kind = "CALLS" if components[callee].kind == "service" else "READS_WRITES"
        if components[callee].kind == "topic":
            kind = "PUBLISHES"
        edge = EdgeSpec.model_validate(
            {
                "from": caller,
                "to": callee,
                "type": kind,
                "origin": origin,
                "protocol": None,
                "basis": "catalog",
            }
        )
        edges.setdefault(edge.key(), edge)

    for ref, doc in by_ref.items():
        if ref.name not in components or ref.kind not in ("component", "resource"):
            continue
        spec, origin = doc.get("spec") or {}, f"backstage:{doc['_file']}"
        for field in ("dependsOn", "consumesApis", "providesApis"):
            if not isinstance(spec.get(field) or [], list):  # a string would be read per letter
                problems.append(f"{doc['_file']}: {ref.name}: spec.{field} must be a list of "
                                "entity references")  # fmt: skip
                spec = {**spec, field: []}
        for text in spec.get("dependsOn") or []:
            target = parse_ref(text, "component", ref.namespace)
            if target in by_ref and target.name in components:
                add_edge(ref.name, target.name, origin)
            else:
                unmapped.append(f"{ref.name}: dependsOn {text!r} names no component or resource")
        for text in spec.get("consumesApis") or []:
            target = parse_ref(text, "api", ref.namespace)
            callees = providers.get(target, [])
            if target.kind == "component" and target.name in components:
                callees = [target.name]
            for callee in callees:
                add_edge(ref.name, callee, origin)
            if not callees:
                unmapped.append(f"{ref.name}: consumesApis {text!r}: no component provides it")
        if spec.get("owner"):
            owner = parse_ref(spec["owner"], "group", ref.namespace)
            if owner.kind == "group" and owner in by_ref:
                owners.setdefault(owner.name, []).append(ref.name)
            else:
                unmapped.append(f"{ref.name}: owner {spec['owner']!r} is no Group in the catalog")
    members: dict[str, dict[str, MemberSpec]] = {}
    for ref, doc in by_ref.items():
        if ref.kind != "user":
            continue
        spec = doc.get("spec") or {}
        profile = spec.get("profile") or {}
        try:
            person = MemberSpec(
                name=str(profile.get("displayName") or ref.name).strip(),
                email=profile.get("email"),
            )
        except ValidationError as exc:
            problems.append(f"{doc['_file']}: user {ref.name[:80]!r}: {reasons(exc)}")
            continue
        for text in spec.get("memberOf") or []:
            group = parse_ref(text, "group", ref.namespace)
            if group in by_ref:
                members.setdefault(group.name, {})[person.name] = person
            else:
                unmapped.append(f"user {ref.name}: memberOf {text!r} is no Group in the catalog")
    teams = []
    for ref, doc in by_ref.items():
        if ref.kind != "group" or not (members.get(ref.name) or owners.get(ref.name)):
            continue
        try:
            teams.append(TeamSpec(
                name=ref.name, owns=owners.get(ref.name, []),
                members=list(members.get(ref.name, {}).values()),
                source=f"backstage:{doc['_file']}",  # the Group's file says its owns and members
            ))  # fmt: skip
        except ValidationError as exc:
            problems.append(f"{doc['_file']}: group {ref.name[:80]!r}: {reasons(exc)}")
    if problems:  # every problem of the catalog at once, nothing written
        raise TopologyError(problems)
    world = WorldSpec(components=list(components.values()), edges=list(edges.values()), teams=teams)
    return world, unmapped
