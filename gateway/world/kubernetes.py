"""The Kubernetes importer: manifests (multi-document YAML) to the world model.

- A component per workload (Deployment, StatefulSet, DaemonSet), named by its
  `app.kubernetes.io/name` label, else its `metadata.name`. Kind and tech from the container
  image (as for compose: postgres, redis, kafka, ... are datastores) or from
  `app.kubernetes.io/component` (`database`, `cache`, `queue`, ...); `component` and
  `part-of` are kept as annotations.
- A Service belongs to the workload whose pod template labels match its selector; its name
  (and `name.namespace`, `name.namespace.svc[.cluster.local]`) is a hostname of that component.
- A container environment value naming a Service where a host is written (`cartservice:7070`,
  a URL's host, a connection string's `Host=`, a bare name in a `*_HOST`/`*_ADDR`/... variable:
  the rule of `gateway.world.hosts`) is an edge from the workload to the Service's component:
  READS_WRITES to a datastore, CALLS otherwise. A host naming no Service is reported, never
  guessed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gateway.world.compose import classify
from gateway.world.hosts import hosts_in, is_external
from gateway.world.model import ComponentSpec, EdgeSpec, TopologyError, WorldSpec
from gateway.world.yamlfile import load_documents

WORKLOADS = ("Deployment", "StatefulSet", "DaemonSet")
#: `app.kubernetes.io/component` values that mean a datastore.
DATASTORE_ROLES = {"database", "db", "cache", "queue", "broker", "storage", "datastore"}


def read_manifests(paths: list[Path]) -> list[tuple[Path, dict[str, Any]]]:
    """Every Kubernetes object (with `apiVersion` and `kind`) in the files; a folder stands for
    its `*.yaml`/`*.yml` files; a `List` is unpacked. Raises `TopologyError`."""
    files: list[Path] = []
    for path in paths:
        files += sorted(path.rglob("*.y*ml")) if path.is_dir() else [path]
    found = []
    for file in files:
        docs = load_documents(file)
        for doc in docs:
            items = (
                doc.get("items", [])
                if isinstance(doc, dict) and doc.get("kind") == "List"
                else [doc]
            )
            found += [(file, d) for d in items if isinstance(d, dict) and "kind" in d]
    return found


def load_kubernetes(paths: list[Path]) -> tuple[WorldSpec, list[str]]:
    """Manifests to a world model, and the hosts that name no Service."""
    objects = read_manifests(paths)
    components: dict[str, ComponentSpec] = {}
    workloads: list[tuple[str, dict[str, Any], dict[str, str], str]] = []
    problems: list[str] = []
    namespaces: dict[str, str] = {}  # component -> the namespace it was first found in
    notes: set[str] = set()
    for file, obj in objects:
        if obj["kind"] not in WORKLOADS:
            continue
        meta = obj.get("metadata") or {}
        template = (obj.get("spec") or {}).get("template") or {}
        pod_labels = {
            **(meta.get("labels") or {}),
            **((template.get("metadata") or {}).get("labels") or {}),
        }
        named = pod_labels.get("app.kubernetes.io/name") or meta.get("name")
        if not named:  # `generateName` alone names no stable component (it was "None")
            problems.append(f"{file}: a {obj['kind']} has no metadata.name or "
                            "app.kubernetes.io/name label")  # fmt: skip
            continue
        name = str(named)
        containers = (template.get("spec") or {}).get("containers") or []
        images = " ".join(str(c.get("image", "")) for c in containers)
        kind, tech = "service", None
        for image in images.split():
            kind, tech = classify(name, image)
            if kind != "service":
                break
        role = str(pod_labels.get("app.kubernetes.io/component", ""))
        if kind == "service" and role.lower() in DATASTORE_ROLES:
            kind = "datastore"
        annotations = {
            key: str(pod_labels[key])
            for key in ("app.kubernetes.io/component", "app.kubernetes.io/part-of")
            if key in pod_labels
        }
        namespace = str(meta.get("namespace") or "default")
        if namespaces.setdefault(name, namespace) != namespace:
            notes.add(f"{name}: workloads of that name in namespaces {namespaces[name]} and "
                      f"{namespace} are one component (set app.kubernetes.io/name to tell "
                      "them apart)")  # fmt: skip
        try:
            components[name] = ComponentSpec(
                id=name, kind=kind, tech=tech, annotations=annotations,
                source=f"kubernetes:{file}",
            )  # fmt: skip
        except ValidationError as exc:
            problems.append(f"{file}: {obj['kind']} {name[:80]!r}: {exc.errors()[0]['msg']}")
            continue
        workloads.append((name, template, pod_labels, namespace))
    if problems:
        raise TopologyError(problems)
    hosts: dict[str, str] = {}
    for _, obj in objects:
        if obj["kind"] != "Service":
            continue
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        selector = spec.get("selector") or {}
        owner = next(
            (w for w, _, labels, _ in workloads
             if selector and all(labels.get(k) == v for k, v in selector.items())),
            None,
        )  # fmt: skip
        if owner is None:
            continue
        svc, ns = str(meta.get("name")), str(meta.get("namespace") or "default")
        for host in (svc, f"{svc}.{ns}", f"{svc}.{ns}.svc", f"{svc}.{ns}.svc.cluster.local"):
            hosts[host] = owner
        if svc != owner:
            names = components[owner].aliases()
            components[owner].hostnames = {n: n for n in sorted({*names, svc})}
    edges: dict[tuple[str, str, str], EdgeSpec] = {}
    unmapped: set[str] = set()
    for name, template, _, _ in workloads:
        for container in (template.get("spec") or {}).get("containers") or []:
            for var in container.get("env") or []:
                name_of = str(var.get("name") or "")
                for host in hosts_in(name_of, str(var.get("value") or "")):
                    callee = hosts.get(host)
                    if callee and callee != name:
                        edge = EdgeSpec.model_validate(
                            {"from": name, "to": callee, "origin": components[name].source,
                             "basis": "environment",
                             "type": "READS_WRITES" if components[callee].kind == "datastore"
                             else "CALLS"}
                        )  # fmt: skip
                        edges.setdefault(edge.key(), edge)
                    elif callee is None and is_external(host):
                        unmapped.add(f"{name}: {name_of} names host {host!r}, no Service")
    world = WorldSpec(components=list(components.values()), edges=list(edges.values()))
    return world, sorted(unmapped | notes)
