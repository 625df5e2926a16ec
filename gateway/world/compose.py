"""The docker compose importer: compose files to the world model (a pure function of files).

What it reads (the compose specification):
- several files layered as `docker compose -f a -f b` would: services merged key by key,
  `environment` merged by variable, lists (`depends_on` list form, `ports`) appended;
- interpolation `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `$VAR`, `$$` from the `.env`
  file beside the first file (or `env_file` given), itself interpolated top to bottom; a bare
  `- VAR` in `environment` takes its value from there too; each service's `env_file`s add
  variables to that service;
- `depends_on` in list and map forms (start order, not calls: such edges get basis
  `depends_on`, weaker than a hostname in the environment, basis `environment`); hostnames
  named in the container's environment (`env_file`s, then `environment`) where a host is
  written (a URL's host, `host:port`, `Host=db;...`, a bare name in a `*_HOST`/`*_ADDR`/...
  variable; never a `*_DB`/`*_USER`/`*_NAME` value or a URL's path: `gateway.world.hosts`)
  matched against service names, `container_name`, `hostname` and network `aliases`.

What it makes: a component per service (kind and `tech` from the image: postgres, redis,
valkey, kafka, ... are datastores), and an edge per dependency: READS_WRITES to a datastore,
CALLS otherwise; `purpose` telemetry when either end is telemetry plumbing (collector, Jaeger,
Prometheus, Grafana, OpenSearch) or the variable is an OTEL_ one, config for flagd. A host
that matches no service is reported as unmapped, never guessed. Build contexts (or the
Dockerfile's folder) become the component's `paths` for CODEOWNERS.
"""

from __future__ import annotations

import io
import re
from pathlib import Path, PurePosixPath
from typing import Any

from dotenv.parser import parse_stream

from gateway.world.hosts import hosts_in, is_external
from gateway.world.model import ComponentSpec, EdgeSpec, TopologyError, WorldSpec
from gateway.world.yamlfile import load_document

#: Image name tokens -> (kind, tech). A token is a part of the image's last path segment and
#: tag split on `/ : - _ .` (`ghcr.io/open-telemetry/demo:latest-kafka` has `kafka`).
IMAGE_TECH: dict[str, tuple[str, str | None]] = {
    "postgres": ("datastore", "PostgreSQL"), "postgresql": ("datastore", "PostgreSQL"),
    "mysql": ("datastore", "MySQL"), "mariadb": ("datastore", "MariaDB"),
    "mongo": ("datastore", "MongoDB"), "mongodb": ("datastore", "MongoDB"),
    "redis": ("datastore", "Redis"), "valkey": ("datastore", "Valkey"),
    "memcached": ("datastore", "Memcached"), "kafka": ("datastore", "Kafka"),
    "rabbitmq": ("datastore", "RabbitMQ"), "nats": ("datastore", "NATS"),
    "elasticsearch": ("datastore", "Elasticsearch"), "opensearch": ("datastore", "OpenSearch"),
    "cassandra": ("datastore", "Cassandra"), "clickhouse": ("datastore", "ClickHouse"),
    "prometheus": ("datastore", "Prometheus"), "envoy": ("proxy", "Envoy"),
    "nginx": ("proxy", "nginx"), "haproxy": ("proxy", "HAProxy"), "traefik": ("proxy", "Traefik"),
    "proxy": ("proxy", None),
}  # fmt: skip
#: Callees whose failure loses telemetry, not requests (edges to them are `telemetry`).
TELEMETRY = {"collector", "jaeger", "prometheus", "grafana", "opensearch", "tempo", "loki"}
#: Feature-flag services (edges to them are `config`).
CONFIG = {"flagd"}
#: Protocols by datastore tech (an edge's protocol when the URL gives none).
PROTOCOL = {"PostgreSQL": "postgres", "Redis": "redis", "Valkey": "redis", "Kafka": "kafka"}
_VAR = re.compile(
    r"\$(?:\$|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])((?:[^{}]|\{[^{}]*\})*))?\}"
    r"|([A-Za-z_][A-Za-z0-9_]*))"  # a default may hold one nested ${...}
)


def interpolate(text: str, env: dict[str, str], missing: set[str] | None = None) -> str:
    """Expand `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `$VAR` and `$$` as compose does;
    an unset variable without a default is empty (and its name added to `missing`)."""

    def one(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name = match.group(1) or match.group(4)
        op, default = match.group(2), match.group(3) or ""
        value = env.get(name)
        if op == ":-" and not value:
            return interpolate(default, env, missing)
        if op == "-" and value is None:
            return interpolate(default, env, missing)
        if value is None and missing is not None:
            missing.add(name)
        return value or ""

    return _VAR.sub(one, text)


def read_env_file(path: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """`KEY=value` statements, parsed as compose reads an env file (python-dotenv's parser:
    comments, blanks, `export `, quotes, escapes in double quotes and an unquoted value's
    ` # comment` dropped), each interpolated with the variables before it unless single-quoted
    (compose takes those literally). Raises `TopologyError` if unreadable."""
    known = dict(env or {})
    found: dict[str, str] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TopologyError(f"{path}: {exc}") from exc
    for binding in parse_stream(io.StringIO(text)):
        if binding.key is None or binding.value is None:
            continue  # not `KEY=value`: compose would refuse the file; nothing to read
        literal = binding.original.string.partition("=")[2].lstrip().startswith("'")
        value = binding.value if literal else interpolate(binding.value, known)
        found[binding.key] = known[binding.key] = value
    return found


def _environment(value: Any) -> dict[str, str | None]:
    if isinstance(value, dict):
        return {str(k): None if v is None else str(v) for k, v in value.items()}
    pairs: dict[str, str | None] = {}
    for item in value or []:
        key, sep, val = str(item).partition("=")
        pairs[key] = val if sep else None
    return pairs


def _merge(base: Any, over: Any, key: str = "") -> Any:
    if key == "environment":
        return _environment(base) | _environment(over)
    if key == "depends_on":
        as_map = [b if isinstance(b, dict) else {n: {} for n in b or []} for b in (base, over)]
        return as_map[0] | as_map[1]
    if isinstance(base, dict) and isinstance(over, dict):
        merged = dict(base)
        for k, v in over.items():
            merged[k] = _merge(base[k], v, k) if k in base else v
        return merged
    if isinstance(base, list) and isinstance(over, list):
        return base + [v for v in over if v not in base]
    return over


def _tokens(image: str) -> set[str]:
    last = image.rsplit("/", 1)[-1]
    return {t.lower() for t in re.split(r"[:\-_./@]", last) if t}


def classify(name: str, image: str) -> tuple[str, str | None]:
    """(kind, tech) of a service from its image (and name, for images named by variables)."""
    for token in sorted(_tokens(image) | _tokens(name)):
        if token in IMAGE_TECH:
            return IMAGE_TECH[token]
    return "service", None


def load_compose(files: list[Path], env_file: Path | None = None) -> tuple[WorldSpec, list[str]]:
    """Compose files (layered in order) to a world model, and the hosts that matched no
    service. Components get `source = compose:<first file>`. Raises `TopologyError`."""
    if not files:
        raise TopologyError("no compose file given")
    if env_file is not None and not env_file.is_file():  # a typo would silently retire edges
        raise TopologyError(f"--env-file {env_file}: no such file")
    env_path = env_file or files[0].parent / ".env"
    env = read_env_file(env_path) if env_path.is_file() else {}
    missing: set[str] = set()  # variables used with no value and no default
    services: dict[str, Any] = {}
    for path in files:
        doc = load_document(path) or {}
        if not isinstance(doc.get("services"), dict):
            raise TopologyError(f"{path}: services: a compose file needs a `services:` mapping")
        for name, spec in doc["services"].items():
            spec = spec or {}
            if not isinstance(spec, dict):
                raise TopologyError(f"{path}: services.{name}: must be a mapping (image, …), "
                                    f"not {type(spec).__name__}")  # fmt: skip
            spec.setdefault("_dir", str(path.parent))
            services[name] = _merge(services[name], spec) if name in services else spec
    source = f"compose:{files[0]}"
    hosts: dict[str, str] = {}
    components: dict[str, ComponentSpec] = {}
    for name, spec in services.items():
        image = interpolate(str(spec.get("image") or ""), env)
        kind, tech = classify(name, image)
        names = {name, spec.get("container_name"), spec.get("hostname")}
        for net in (
            (spec.get("networks") or {}).values() if isinstance(spec.get("networks"), dict) else []
        ):
            names |= set((net or {}).get("aliases") or [])
        aliases = sorted(str(n) for n in names if n and n != name)
        for host in [name, *aliases]:
            hosts[interpolate(str(host), env)] = name
        components[name] = ComponentSpec(
            id=name, kind=kind, tech=tech, hostnames=aliases[0] if len(aliases) == 1 else None,
            paths=_build_paths(spec, env), source=source,
        )  # fmt: skip
        if len(aliases) > 1:
            components[name].hostnames = {f"alias{i}": a for i, a in enumerate(aliases)}
    edges: dict[tuple[str, str, str], EdgeSpec] = {}
    unmapped: set[str] = set()
    for name, spec in services.items():
        found: dict[str, str] = {}  # callee -> variable that named it
        for var, value in _container_env(name, spec, env, missing, unmapped).items():
            for host in hosts_in(var, value):
                callee = hosts.get(host)
                if callee and callee != name:
                    found.setdefault(callee, var)
                elif callee is None and is_external(host):
                    unmapped.add(f"{name}: {var} names host {host!r}, which is no service")
        depends = spec.get("depends_on") or []
        for callee in depends if isinstance(depends, list) else list(depends):
            if callee in services and callee != name:
                found.setdefault(callee, "depends_on")
        for callee, var in found.items():
            edge = _edge(name, components[callee], var, services[callee], env, source)
            edges.setdefault(edge.key(), edge)
    world = WorldSpec(components=list(components.values()), edges=list(edges.values()))
    if missing:
        where = f"{env_path} has no value" if env_path.is_file() else f"no {env_path}"
        unmapped.add(
            f"{files[0]}: {len(missing)} variable(s) used in `environment` are not set and have "
            f"no default, so their values were empty and may hide edges ({where}; "
            f"--env-file names another): {', '.join(sorted(missing))}"
        )
    return world, sorted(unmapped)


def _container_env(
    name: str, spec: dict[str, Any], env: dict[str, str], missing: set[str], notes: set[str]
) -> dict[str, str]:  # fmt: skip
    """The container's environment as compose gives it: each `env_file`'s variables (read
    relative to the compose file that names it, in order), then `environment`'s, which win.
    `environment` values are interpolated with `env` and the env files' variables (a bare
    `- VAR` takes its value from them too; unset names go to `missing`); a missing env file is
    a note in `notes` (compose refuses to start without it unless `required: false`)."""
    own_env = dict(env)
    container: dict[str, str] = {}
    for extra in _list(spec.get("env_file")):
        extra_path = Path(spec["_dir"]) / interpolate(str(_env_file_path(extra)), env)
        if extra_path.is_file():
            found = read_env_file(extra_path, own_env)
            own_env |= found
            container |= found
        elif not (isinstance(extra, dict) and extra.get("required") is False):
            notes.add(f"{name}: env_file {extra_path} not found, so its variables were not "
                      "read for hostnames")  # fmt: skip
    for var, raw in _environment(spec.get("environment")).items():
        container[var] = own_env.get(var, "") if raw is None else interpolate(raw, own_env, missing)
    return container


def _list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _env_file_path(entry: Any) -> str:
    return str(entry.get("path")) if isinstance(entry, dict) else str(entry)


def _build_paths(spec: dict[str, Any], env: dict[str, str]) -> list[str]:
    build = spec.get("build")
    if build is None:
        return []
    if isinstance(build, str):
        build = {"context": build}
    context = PurePosixPath(interpolate(str(build.get("context") or "."), env))
    dockerfile = interpolate(str(build.get("dockerfile") or ""), env)
    if dockerfile and str(context) in (".", "./", ""):
        folder = PurePosixPath(dockerfile).parent  # one repository, a folder per service
        return (
            [f"/{folder.as_posix().removeprefix('./').strip('/')}/"] if str(folder) != "." else []
        )
    text = context.as_posix().removeprefix("./").strip("/")
    return [f"/{text}/"] if text and text != "." else []


def _edge(
    caller: str, callee: ComponentSpec, var: str, spec: dict[str, Any], env: dict[str, str],
    source: str,
) -> EdgeSpec:  # fmt: skip
    image_tokens = _tokens(interpolate(str(spec.get("image") or ""), env)) | _tokens(callee.id)
    if var.startswith("OTEL_") or image_tokens & TELEMETRY or _tokens(caller) & TELEMETRY:
        purpose = "telemetry"
    elif image_tokens & CONFIG and "ui" not in image_tokens:
        purpose = "config"
    else:
        purpose = "business"
    kind = "READS_WRITES" if callee.kind == "datastore" else "CALLS"
    return EdgeSpec.model_validate(
        {"from": caller, "to": callee.id, "type": kind, "purpose": purpose,
         "protocol": PROTOCOL.get(callee.tech or ""), "origin": source,
         "basis": "depends_on" if var == "depends_on" else "environment"}
    )  # fmt: skip
