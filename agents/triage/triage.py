"""Triage (no model): accepted alerts become Alert nodes, incidents and `investigate` tasks.

Runs inside the webhook request, before it answers, so every accepted alert is in the graph
first. The rules are those of one atomic query per alert (`cypher/triage_alert.cypher`): a
repeated or concurrent delivery changes nothing, a refire (same fingerprint, new startsAt) is a
new episode, and an incident resolves when all its alerts have resolved. A resolve only closes
what fired (Alertmanager semantics): an alert that arrives resolved without a firing the
gateway received (`TriageReport.unfired`; e.g. it fired and resolved while the gateway was
down) is recorded in no incident and opens, joins, re-investigates and clears nothing. A storm
is written in far fewer queries that keep those outcomes (`Triage`).

Correlation rule: an alert joins an open incident opened within the window only along a
dependency path: its component reaches a component of the incident, or is reached by one,
within `correlation_hops` business edges (a shared neighbour is not enough: two callers of one
database are not linked). The joining path is stored on the alert's `HAS_ALERT` edge (`via`,
e.g. `checkout-api → orders-api`). Among several such incidents the alert joins the one whose
root cause its component reaches, then the nearest, then the oldest. An alert that matches no
component joins an open incident of the same Alertmanager groupKey (`via` says so) as context:
it is never one of the incident's components, so never a candidate; it counts among its
firing alerts. With no such incident it opens one of its own.
An alert that links two open incidents merges them (`merge_bridged`): the other into the one
it joined while nobody has been paged for the other, else the one it joined into the other
while nobody has been paged for that one; two paged incidents stay apart. So the grouping of
a cascade does not depend on the order its alerts arrive in, and a new incident with an open
incident just past the reach holds its page for `BLAST_PAGE_HOLD_MS`, for the alert between
them that Alertmanager may flush a moment later. Flapping: an alert that fires again (same
fingerprint, a new episode) within `BLAST_REOPEN_WINDOW` of its incident's resolve reopens that
incident first of all, with a `notify_reopened` task for its thread and no new page.
"""

from __future__ import annotations

import copy
import json
import re
import uuid
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field, fields, replace
from typing import Any

import orjson

from adapters.falkordb import SentQuery, TenantGraph, rendered
from agents.triage.alerts import NormalizedAlert, about_monitoring
from agents.triage.link_cache import LINKS, MAX_NAMES, Asked

#: Labels that name an alert's component outright (cAdvisor's
#: `container_label_com_docker_compose_service` is a compose deployment's service name).
NAMING_COMPONENT = (
    "service",
    "app",
    "app.kubernetes.io/name",
    "service.name",
    "service_name",
    "container_label_com_docker_compose_service",
)
#: Label names tried in order to find an alert's component (first known component wins).
COMPONENT_LABELS = (*NAMING_COMPONENT, "job", "container")
#: `instance`'s host (`orders:8080`, `http://orders:8080/health`: `orders`), tried last and
#: only when no `NAMING_COMPONENT` label nor a pod is set: an exporter's own address is often
#: the instance (`postgres-exporter:9187`), and a storm's alerts, each its own instance, would
#: otherwise each add a name to look up.
INSTANCE_HOST = re.compile(
    r"(?:[A-Za-z][A-Za-z0-9+.-]*://)?(?:[^@/]*@)?([A-Za-z0-9][A-Za-z0-9._-]*)(?::\d+)?(?:/.*)?"
)
#: Pod name suffixes: Deployment (`-<replicaset hash>-<5>`), DaemonSet (`-<5>`),
#: StatefulSet (`-<n>`).
POD_SUFFIXES = (
    re.compile(r"^(?P<base>.+)-[a-z0-9]{5,10}-[a-z0-9]{5}$"),
    re.compile(r"^(?P<base>.+)-[a-z0-9]{5}$"),
    re.compile(r"^(?P<base>.+)-\d+$"),
)
#: Longest Kubernetes pod name (a DNS subdomain, RFC 1123).
MAX_POD_CHARS = 253
SEVERITY_RANK = {
    "critical": 4,
    "page": 4,
    "error": 3,
    "high": 3,
    "warning": 2,
    "warn": 2,
    "info": 1,
}


def severity_rank(severity: str) -> int:
    """Order of severities (critical 4 > error/high 3 > warning 2 > info 1 > anything else 0)."""
    return SEVERITY_RANK.get(severity.lower(), 0)


def component_candidates(labels: dict[str, str]) -> list[str]:
    """Names an alert's labels may give its component, most specific label first."""
    names = [labels[key] for key in COMPONENT_LABELS if labels.get(key)]
    pod = labels.get("pod") or labels.get("pod_name")
    if pod and len(pod) <= MAX_POD_CHARS:  # longer is no pod name: no pattern runs on it
        names += [m.group("base") for rx in POD_SUFFIXES if (m := rx.match(pod))]
    host = instance_host(labels)
    if host:
        names.append(host)
    return list(dict.fromkeys(names))


def instance_host(labels: dict[str, str]) -> str | None:
    """The host of the `instance` label (`orders:8080` -> `orders`), when the alert has no
    `NAMING_COMPONENT` label and no pod (see `INSTANCE_HOST`); else None."""
    instance = labels.get("instance")
    if not instance or len(instance) > MAX_POD_CHARS or labels.get("pod") or labels.get("pod_name"):
        return None
    if any(labels.get(key) for key in NAMING_COMPONENT):
        return None
    match = INSTANCE_HOST.fullmatch(instance)
    return match.group(1) if match else None


@dataclass
class Links:
    """Where an alert's component is linked within the correlation reach, shortest path first.

    `names[i]` is reached by the path `paths[i]` (`a → b`, caller to callee) of `hops[i]`
    edges; `down`: the components it depends on (itself included), any of which as a root
    cause would explain an alert on it; `beyond`: the components past the reach but within
    twice it, either way (an open incident there holds a new incident's page, `hold_ms`).
    """

    names: list[str] = field(default_factory=list)
    hops: list[int] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    down: list[str] = field(default_factory=list)
    beyond: list[str] = field(default_factory=list)


def component_links(
    rows: list[dict[str, Any]], components: list[str], reach: int
) -> dict[str, Links]:
    """The `Links` of each of `components` from the `links` rows of `triage_context.cypher`
    (`{origin, name, path, hops, way}`; rows of other origins are left out): rows of at most
    `reach` hops are links, longer ones go to `beyond`. Pure."""
    found = {name: Links() for name in components}
    for row in sorted(rows, key=lambda r: (r["hops"], r["name"])):
        if row["origin"] not in found:
            continue
        links = found[row["origin"]]
        if int(row["hops"]) > reach:
            if row["name"] not in links.names and row["name"] not in links.beyond:
                links.beyond.append(row["name"])
            continue
        if row["way"] == "down" and row["name"] not in links.down:
            links.down.append(row["name"])
        if row["name"] not in links.names:
            links.names.append(row["name"])
            links.hops.append(int(row["hops"]))
            links.paths.append(" → ".join(row["path"]))
    return found


def shared_dependencies(linked: dict[str, Links]) -> dict[str, Links]:
    """Link the components of one delivery (one Alertmanager group) that depend on one
    component within the reach: the two consumers of a silent topic, the callers of one
    database. Alertmanager grouped their alerts, so they are one failure until the
    investigation says otherwise (it splits independent causes); a later delivery of the same
    group is linked to the components its open incidents hold (`triage`), and otherwise a
    shared neighbour links nothing. Each gets the other as a link, with the
    path through the shared dependency (`a → topic ← b`, hops summed), after its own links.
    `linked`: `component_links` of the delivery's components, in delivery order; changed in
    place and returned. Linear in links: each dependency links its dependents to the first."""
    first: dict[str, tuple[str, str, int]] = {}  # dependency -> (component, its path, hops)
    for name, links in linked.items():
        for dep, path, hops in zip(links.names, links.paths, links.hops, strict=True):
            if dep == name or dep not in links.down:
                continue
            other, other_path, other_hops = first.setdefault(dep, (name, path, hops))
            if other == name or other in links.names:
                continue
            back = " ← ".join(reversed(other_path.split(" → ")[:-1]))
            forth = " ← ".join(reversed(path.split(" → ")[:-1]))
            links.names.append(other)
            links.hops.append(hops + other_hops)
            links.paths.append(f"{path} ← {back}")
            mine = linked[other]
            mine.names.append(name)
            mine.hops.append(hops + other_hops)
            mine.paths.append(f"{other_path} ← {forth}")
    return linked


@dataclass
class TriageReport:
    """What one delivery did: alerts accepted, which matched no component, which arrived
    resolved without a firing the gateway received (`unfired`: recorded in no incident),
    incidents touched, and incidents merged into another (`merge_bridged`)."""

    accepted: int = 0
    unmatched: list[str] = field(default_factory=list)
    #: keys of alerts resolved that never fired here (Alertmanager semantics: a resolve only
    #: closes what fired): stored, but they join, open and clear nothing
    unfired: list[str] = field(default_factory=list)
    incidents: list[str] = field(default_factory=list)
    opened: list[str] = field(default_factory=list)
    reopened: list[str] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    #: incidents a new firing alert of the delivery joined, each with the key of the last such
    #: alert written: each one opened before the delivery is re-investigated
    #: (`settle_reinvestigations`), so its page shows the new alert and its severity, on a
    #: component it already had as on a new one
    joined: dict[str, str] = field(default_factory=dict)
    #: False while every write of the delivery opened a new incident: only a join, a merge, a
    #: stored alert or a batch can leave `reinvestigate` tasks for `settle_reinvestigations`.
    unsettled: bool = False


#: The labels `component_candidates` reads: alerts that agree on them have the same candidates.
#: The first `STRONG` name the component or a pod: without any, `instance` is read too.
NAMING_LABELS = (*NAMING_COMPONENT, "pod", "pod_name", "job", "container")
STRONG = len(NAMING_COMPONENT) + 2


def alert_candidates(alerts: list[NormalizedAlert]) -> tuple[dict[str, list[str]], list[str]]:
    """`component_candidates` of each alert, by key (the last alert of a key repeated within
    the delivery), and every name any alert's labels could give its component, sorted; worked
    out once per distinct set of the labels `component_candidates` reads (`NAMING_LABELS`): a
    storm's thousands of alerts name a few components."""
    return labelled_candidates([a.key for a in alerts], [a.labels for a in alerts])


def labelled_candidates(
    keys: list[str], labels: list[dict[str, str]]
) -> tuple[dict[str, list[str]], list[str]]:
    """`alert_candidates` of alerts whose keys are `keys` and labels `labels` (in turn)."""
    found: dict[str, list[str]] = {}
    seen: dict[tuple[str | None, ...], list[str]] = {}
    for key, each in zip(keys, labels, strict=True):
        values = tuple(map(each.get, NAMING_LABELS))
        if not any(values[:STRONG]):  # `instance` is read only then (`instance_host`)
            values += (each.get("instance"),)
        names = seen.get(values)
        if names is None:
            names = seen[values] = component_candidates(each)
        found[key] = names
    return found, sorted({name for names in seen.values() for name in names})


def resolve_components(
    candidates: dict[str, list[str]], matched: list[dict[str, Any]]
) -> dict[str, str | None]:
    """Map each alert key to its component name, or None when no label names a known component.
    `candidates`: `alert_candidates` of the alerts (by key); `matched`: the components they
    name, rows `{name, aliases}` (the `matched` of `triage_context.cypher`). Pure."""
    canonical: dict[str, str] = {}
    for row in matched:
        canonical[row["name"]] = row["name"]
        for alias in row["aliases"] or []:
            canonical.setdefault(alias, row["name"])
    # once per list of names: `alert_candidates` gives the alerts that name the same
    # components one list (a storm's thousands of alerts, a few lists)
    lists = {id(names): names for names in candidates.values()}
    first = {
        at: next((canonical[n] for n in names if n in canonical), None)
        for at, names in lists.items()
    }
    return {key: first[id(names)] for key, names in candidates.items()}


def dependency_order(
    alerts: list[NormalizedAlert], components: dict[str, str | None], linked: dict[str, Links]
) -> list[NormalizedAlert]:
    """The alerts of one delivery in the order triage takes them: components breadth first
    along their links, starting from the first listed, so an alert comes right after one it is
    linked to (e.g. two consumers of a topic after the topic's broker, which links them).
    Grouping then does not depend on the order the sender listed the alerts. An alert on no
    known component keeps the place of the alert before it. Stable otherwise."""
    rank: dict[str, int] = {}
    for name in linked:
        queue = deque([name])
        while queue:
            current = queue.popleft()
            if current in rank:
                continue
            rank[current] = len(rank)
            queue.extend(n for n in linked[current].names if n in linked and n not in rank)
    by_rank: dict[int, list[NormalizedAlert]] = {}  # each in delivery order: a stable sort
    last = -1
    for alert in alerts:
        component = components[alert.key]
        if component:
            last = rank[component]
        found = by_rank.get(last)
        if found is None:
            found = by_rank[last] = []
        found.append(alert)
    return [alert for at in sorted(by_rank) for alert in by_rank[at]]


#: Alerts per batched write (`triage_join`, `triage_known`): each write holds the graph's
#: write lock, so a few hundred keep every other writer's wait short (docs/architecture.md,
#: FalkorDB facts).
BATCH = 250
#: Alerts per `triage_batch` write: it holds the lock longer than `BATCH` joins would, but one
#: write per thousand alerts is what keeps a storm near its floor (docs/hot-path.md).
FAST_BATCH = 1000
#: Firing alerts a delivery needs before `Triage.fast` reads the open incidents to group them.
FAST_MIN = 2
#: Firing alerts a delivery needs for `read_ahead`, whose read holds a connection of its own
#: while the alerts are built: fewer are built in less time than the read takes (a storm's
#: 5,000 in about 10 ms).
AHEAD_MIN = FAST_BATCH


@dataclass(eq=False)
class OpenIncident:
    """An open incident as `Triage.fast` sees it: a row of `triage_context`'s `open`
    (`[id, opened_at ms, components, group_keys, root cause or '']`), then as its writes
    leave it. `firing`, `rank` and `severity`: what this delivery adds (alerts, and the highest
    severity among them, the first such); `new`: opened by this delivery and not written yet."""

    id: str
    opened_at: int
    components: list[str]
    group_keys: list[str]
    root_cause: str
    firing: int = 0
    rank: int = -1
    severity: str = ""
    #: the title of an incident opened by this delivery and not written yet, else None
    new: str | None = None
    held: bool = False
    #: `new` is a monitoring alert's title (`about_monitoring`): the first real alert of the
    #: delivery that joins takes the title over
    new_gap: bool = False

    def row(self) -> list[Any]:
        """As `triage_context` reads it (and `triage_batch` checks it)."""
        return [self.id, self.opened_at, self.components, self.group_keys, self.root_cause]


def runs(rows: list[list[Any]]) -> dict[str, list[list[Any]]]:
    """`triage_batch`'s `alert_rows` (`rows` grouped by incident and component, in delivery
    order within a group) and `runs`, `[incident_id, component, first, end]` per group: the
    write looks each incident and component up once per group, not once per alert."""
    ordered = sorted(rows, key=lambda row: (row[1], row[2] or ""))  # stable
    found: list[list[Any]] = []
    for n, row in enumerate(ordered):
        if found and (found[-1][0], found[-1][1]) == (row[1], row[2]):
            found[-1][3] = n + 1
        else:
            found.append([row[1], row[2], n, n + 1])
    return {"alert_rows": ordered, "runs": found}


#: How `triage_alert` orders the open incidents an alert may join, best first: explained by
#: its root cause (0) or not (1), hops to the nearest component it holds, opened at, id.
Rank = tuple[int, int, int, str]


class Index:
    """Open incidents by component and by Alertmanager group key, for `Triage.decide`: a storm
    of 5,000 alerts looks up the few incidents near each alert rather than all of them."""

    def __init__(self, incidents: Iterable[OpenIncident]) -> None:
        self.by_component: dict[str, list[OpenIncident]] = {}
        self.grouped: dict[str, list[OpenIncident]] = {}
        #: `holding`'s answers until the next `add`: a storm asks the same names thousands of
        #: times between two incidents' changes
        self.held: dict[tuple[str, ...], list[OpenIncident]] = {}
        #: `Triage.ranked`'s answers until the next `add`, by component (or group key)
        self.ranked: dict[tuple[str, bool], list[tuple[Rank, OpenIncident, str]]] = {}
        for incident in incidents:
            self.add(incident)

    def add(self, incident: OpenIncident) -> None:
        """Index `incident` under its components and group keys (again after they grew)."""
        self.held.clear()
        self.ranked.clear()
        for name in incident.components:
            found = self.by_component.setdefault(name, [])
            if incident not in found:  # by identity (eq=False)
                found.append(incident)
        for group in incident.group_keys:
            found = self.grouped.setdefault(group, [])
            if incident not in found:
                found.append(incident)

    def holding(self, names: list[str]) -> list[OpenIncident]:
        """The incidents holding any of `names`, each once (a list the caller must not change)."""
        asked = tuple(names)
        held = self.held.get(asked)
        if held is None:
            found: dict[str, OpenIncident] = {}
            for name in names:
                for incident in self.by_component.get(name, ()):
                    found.setdefault(incident.id, incident)
            held = self.held[asked] = list(found.values())
        return held


def sorted_json(values: dict[str, str]) -> str:
    """`values` as compact JSON, keys sorted, non-ASCII as is (orjson; `json` for a lone
    surrogate, which orjson refuses and the graph adapter stores as U+FFFD)."""
    try:
        return orjson.dumps(values, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        return json.dumps(values, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


#: The properties an Alert node is created with, in the order of `alert_values`.
ALERT_PROPS = (
    "fingerprint", "alertname", "severity", "status", "starts_at", "starts_at_ms", "ends_at_ms",
    "labels_json", "annotations_json", "values_json", "generator_url", "link", "group_key",
    "receiver", "source", "silence_url", "title",
)  # fmt: skip


def alert_values(alert: NormalizedAlert) -> list[object]:
    """The values of `ALERT_PROPS` for `alert`, in that order (`triage_batch` takes them by
    position: a list is cheaper to send than a map, `adapters.falkordb.params_header`)."""
    return [
        alert.fingerprint, alert.alertname, alert.severity, alert.status, alert.starts_at,
        alert.starts_at_ms, alert.ends_at_ms, sorted_json(alert.labels),
        sorted_json(alert.annotations),
        alert.values_json, alert.generator_url, alert.link, alert.group_key, alert.receiver,
        alert.source, alert.silence_url, alert.title(),
    ]  # fmt: skip


def alert_value_rows(alerts: list[NormalizedAlert]) -> dict[int, list[object]]:
    """`alert_values` of each of `alerts`, by `id` of the alert: `triage` works them out while
    its read's answer is on its way (3-4 ms for a storm's 5,000 alerts, which `Triage.decide`
    otherwise spends batch by batch, the first batch's before the first write). The alerts
    must outlive the answer (an `id` is an object's only while it lives)."""
    return {id(alert): alert_values(alert) for alert in alerts}


def alert_props(alert: NormalizedAlert, component: str | None) -> dict[str, object]:
    """The properties an Alert node is created with (`received_at` is the server's clock)."""
    return dict(zip(ALERT_PROPS, alert_values(alert), strict=True)) | {"component": component}


class Triage:
    """One delivery's triage: the alerts in dependency order, written in as few queries as the
    rules allow, with the outcome of `triage_alert` alert by alert:

    - first (`fast`), the new firing alerts up to the first that could merge two incidents,
      flap or resolve: where each goes is decided here from the open incidents read with the
      delivery's context, and they are written 1,000 per `triage_batch` write, which checks
      first that those incidents did not change meanwhile (else the rest go on as below);
    - alerts already stored go in one `triage_known` write per batch;
    - new firing alerts go in one `triage_join` write per batch (per component, or per
      Alertmanager group for alerts on no component: `triage_join_group`) once an earlier alert
      of that component (or group) in this delivery joined an open incident, and ran
      `merge_bridged` for it. A batch writes its longest first part in which every alert goes
      where `triage_alert` would have put it; such batches commute (each only adds alerts and
      firing counts to an incident that already holds the component and the group, which
      changes no other alert's choice);
    - every other alert, and the first alert a batch could not take, is one `triage_alert`
      write, after every pending batch of alerts before it; the alerts after it are batched
      again. A `triage_known` batch is a barrier too: a resolve may close an incident a later
      alert would have joined.
    """

    def __init__(
        self,
        graph: TenantGraph,
        components: dict[str, str | None],
        linked: dict[str, Links],
        window_ms: int,
        batch: bool = True,
        hold_ms: int = 0,
        reopen_ms: int = 0,
        values: dict[int, list[object]] | None = None,
    ) -> None:
        self.batch = batch
        #: `alert_value_rows` of the delivery's alerts, worked out ahead (else alert by alert)
        self.values = values or {}
        self.reopen_ms = reopen_ms
        self.graph = graph
        self.components = components
        self.linked = linked
        self.window_ms = window_ms
        self.hold_ms = hold_ms
        self.report = TriageReport()
        self.bridged: set[tuple[str | None, str]] = set()
        #: component (or `group:<groupKey>`) -> the open incident its latest alert went to
        self.anchor: dict[str, str] = {}
        self.known_keys: set[str] = set()
        #: pending batches by kind: ("known",), ("join", component, incident) or
        #: ("group", group key, incident), of (position in the delivery, alert)
        self.pending: dict[tuple[str, ...], list[tuple[int, NormalizedAlert]]] = {}

    def kind(self, alert: NormalizedAlert, first_sight: bool) -> tuple[str, ...]:
        """The batch `alert` can go in, or () when it needs `triage_alert` on its own."""
        if not self.batch or not first_sight:
            return ()  # a repeat within the delivery: its second copy sees the first
        if alert.key in self.known_keys:
            return ("known",)
        if alert.status != "firing":
            return ()
        component = self.components[alert.key]
        if component is None:
            incident = self.anchor.get(f"group:{alert.group_key}")
            return ("group", alert.group_key, incident) if incident and alert.group_key else ()
        incident = self.anchor.get(component)
        if incident is not None and (component, incident) in self.bridged:
            return ("join", component, incident)
        return ()

    def run(
        self,
        ordered: list[NormalizedAlert],
        known: set[str],
        open_rows: list[list[Any]] | None = None,
        refired: set[str] | None = None,
        span: tuple[int, int] = (1, 0),
    ) -> TriageReport:
        """Triage `ordered` (dependency order); `known`: keys stored before this delivery.
        `open_rows`, `refired`, `span`: `triage_context`'s `open` and `refired` and the range
        of `opened_at` (ms) it read them for; given, `fast` writes what it can first."""
        self.known_keys = known
        items, seen = [], set()
        for n, alert in enumerate(ordered):
            items.append((n, alert, alert.key not in seen))
            seen.add(alert.key)
        done = 0
        if open_rows is not None and self.batch:
            done = self.fast(items, open_rows, refired or set(), span)
        self.feed(items[done:])
        self.flush_all()
        report = self.report
        report.incidents = [i for i in report.incidents if i not in report.merged]
        report.opened = [i for i in report.opened if i not in report.merged]
        return report

    def feed(self, items: list[tuple[int, NormalizedAlert, bool]], alone: int = -1) -> None:
        """Queue or write `items` (position, alert, first sight of its key) in order; the item at
        position `alone` is written on its own."""
        for n, alert, first in items:
            kind = () if n == alone else self.kind(alert, first)
            if not kind:
                self.flush_all()
                self.one(alert)
                continue
            barrier = kind == ("known",)
            if any((k == ("known",)) != barrier for k in self.pending):
                self.flush_all()
            batch = self.pending.setdefault(kind, [])
            batch.append((n, alert))
            if len(batch) >= BATCH:
                self.flush(kind)

    def flush_all(self) -> None:
        """Write every pending batch (in the order they began)."""
        while self.pending:
            self.flush(next(iter(self.pending)))

    def flush(self, kind: tuple[str, ...]) -> None:
        """Write the pending batch of `kind`. When it stops short, the alerts it left and every
        other pending alert are fed again in delivery order, its first one written alone."""
        batch = self.pending.pop(kind)
        alerts = [a for _, a in batch]
        if kind[0] == "known":
            done = self.known(alerts)
            left = [(n, a) for n, a in batch if a.key not in done]
        else:
            if kind[0] == "join":
                written = self.join(alerts, kind[1], kind[2])
            else:
                written = self.join_group(alerts, kind[1], kind[2])
            left = batch[written:]
        if not left:
            return
        others = [item for items in self.pending.values() for item in items]
        self.pending = {}
        again = sorted(others + left, key=lambda item: item[0])
        self.feed([(n, a, True) for n, a in again], alone=left[0][0])

    def known(self, batch: list[NormalizedAlert]) -> set[str]:
        """`triage_known` on alerts already stored; the keys it wrote."""
        params = [
            {"key": a.key, "status": a.status, "ends_at_ms": a.ends_at_ms,
             "annotations_json": sorted_json(a.annotations)}
            for a in batch
        ]  # fmt: skip
        done: set[str] = set()
        self.report.unsettled = True
        for row in self.graph.rows("triage_known", {"alerts": params}):
            done.update(row["keys"])
            self.report.accepted += len(row["keys"])
            if row["incident_id"] is None:  # resolved without a firing: in no incident
                self.report.unfired += row["keys"]
                continue
            self.touched(row["incident_id"])
            if row["closing"]:
                self.report.resolved.append(row["incident_id"])
        self.report.unmatched += [a.key for a in batch if a.key in done
                                  and self.components[a.key] is None]  # fmt: skip
        return done

    def join(self, batch: list[NormalizedAlert], component: str, incident: str) -> int:
        """`triage_join`: new firing alerts on `component` into `incident`; how many of the
        first were written."""
        links = self.linked[component]
        if not links.names or links.names[0] != component:  # $via must be its own path
            return 0
        params = {
            "incident_id": incident, "component": component, "near": links.names,
            "down": links.down, "via": links.paths[0], "window_ms": self.window_ms,
            "alerts": [{"key": a.key, "rank": severity_rank(a.severity),
                        "props": alert_props(a, component)} for a in batch],
        }  # fmt: skip
        self.report.unsettled = True
        row = self.graph.one("triage_join", params)
        written = int(row["written"]) if row else 0
        if written:
            self.report.accepted += written
            self.report.joined[incident] = batch[written - 1].key
            self.touched(incident)
        return written

    def join_group(self, batch: list[NormalizedAlert], group: str, incident: str) -> int:
        """`triage_join_group`: new firing alerts on no component into their group's
        `incident`; how many of the first were written."""
        params = {
            "incident_id": incident, "group_key": group, "window_ms": self.window_ms,
            "alerts": [{"key": a.key, "rank": severity_rank(a.severity),
                        "props": alert_props(a, None)} for a in batch],
        }  # fmt: skip
        self.report.unsettled = True
        row = self.graph.one("triage_join_group", params)
        written = int(row["written"]) if row else 0
        self.report.unmatched += [a.key for a in batch[:written]]
        if written:
            self.report.accepted += written
            self.report.joined[incident] = batch[written - 1].key
            self.touched(incident)
        return written

    def fast(
        self,
        items: list[tuple[int, NormalizedAlert, bool]],
        open_rows: list[list[Any]],
        refired: set[str],
        span: tuple[int, int],
    ) -> int:
        """Write the longest first part of `items` that needs no merge, flapping or resolve,
        `FAST_BATCH` alerts per `triage_batch` write, each alert going where `triage_alert`
        would put it (decided here, from the open incidents `open_rows` of `span`, as the
        writes change them); how many items were written. A write that finds the graph changed
        since (a concurrent delivery, an investigation, a merge) writes nothing, and the rest
        go through `feed`. Each alert joined to an incident counts as bridged, as in `one`:
        there was no other open incident in its reach for `merge_bridged` to merge.
        The writes are sent in turn on one connection (`TenantGraph.in_turn`), each as soon
        as it is decided, while this thread decides the next: the server runs them back to
        back, and each writes only if the one before it wrote (`$after`), so everything
        decided after a refused write is dropped: the same writes in the same order, the
        database's time and this thread's overlapping, and no other thread to hand over to."""
        state = {row[0]: OpenIncident(*row) for row in open_rows}
        seen: set[str] = set()
        prepared = 0
        writes = self.graph.in_turn()
        decided: list[tuple[int, tuple[Any, ...], bool]] = []
        after: list[str] | None = None
        try:
            while prepared < len(items):
                batch = self.prepare(items[prepared : prepared + FAST_BATCH], state, seen,
                                     refired, span)  # fmt: skip
                if batch is None:
                    break
                params, count, saved, enqueued = batch
                write = uuid.uuid4().hex
                writes.send("triage_batch", rendered(params | {"write": write, "after": after}))
                after = [params["alert_rows"][0][0], write]
                decided.append((count, saved, enqueued))
                prepared += count
        except BaseException:
            writes.close()  # what was sent runs; what was decided after it is not sent
            raise
        answers = writes.answers()
        done = 0
        for (count, saved, enqueued), answer in zip(decided, answers, strict=True):
            if not answer or int(answer["written"]) != count:
                self.anchor, self.bridged, self.report = saved
                return done
            # the re-investigations this write left are settled with the delivery's (it
            # leaves none for an incident whose first investigation has not started)
            self.report.unsettled |= enqueued and int(answer["queued"]) > 0
            done += count
        return done

    def prepare(
        self,
        items: list[tuple[int, NormalizedAlert, bool]],
        state: dict[str, OpenIncident],
        seen: set[str],
        refired: set[str],
        span: tuple[int, int],
    ) -> tuple[dict[str, Any], int, tuple[Any, ...], bool] | None:
        """`fast`'s next write: where each of the first `items` goes (`decide`, changing
        `state`, `seen` and the report, then leaving `state` as the write will), up to the
        first that `triage_batch` cannot take. Returns its parameters (all but `write` and
        `after`), how many items it takes, what a refusal rolls back to and whether it
        enqueues re-investigations; None when the first item cannot go."""
        # what a refused write rolls back (`fast` writes nothing more, so `state` and `seen`
        # are not needed again): `decide` adds to the report's lists, so one level of copies
        # is enough
        saved = (
            dict(self.anchor), set(self.bridged),
            replace(self.report, **{f.name: copy.copy(getattr(self.report, f.name))
                                    for f in fields(self.report)}),
        )  # fmt: skip
        expected = [state[k].row() for k in sorted(state)]
        index = Index(state.values())
        rows: list[list[object]] = []
        reinvestigate: list[dict[str, str]] = []
        for _, alert, first in items:
            if not first or alert.key in self.known_keys or alert.status != "firing":
                break
            if self.reopen_ms and (alert.fingerprint in refired or alert.fingerprint in seen):
                break  # flapping: `triage_alert` reads the earlier episode
            row = self.decide(alert, state, index, reinvestigate)
            if row is None:
                break
            seen.add(alert.fingerprint)
            rows.append(row)
        if not rows:
            return None
        params = {
            "lo": span[0], "hi": span[1], "expected": expected, "hold_ms": self.hold_ms,
            "fingerprints": [a.fingerprint for _, a, _ in items[: len(rows)]]
            if self.reopen_ms else [],
            "opened": [
                {"id": i.id, "task_id": f"task-{uuid.uuid4().hex}", "held": i.held,
                 "props": {"status": "open", "title": i.new, "opened_at": i.opened_at,
                           "firing": i.firing, "components": i.components,
                           "group_keys": i.group_keys, "severity": i.severity,
                           "severity_rank": i.rank}}
                for i in state.values() if i.new is not None
            ],
            "updates": [
                {"id": i.id, "firing": i.firing, "components": i.components,
                 "group_keys": i.group_keys, "rank": i.rank, "severity": i.severity}
                for i in state.values() if i.new is None and i.firing
            ],
            "reinvestigate": reinvestigate, **runs(rows),
        }  # fmt: skip
        for incident in state.values():  # as the write leaves them
            incident.new, incident.firing, incident.rank, incident.severity = None, 0, -1, ""
        return params, len(rows), saved, bool(reinvestigate)

    def decide(
        self,
        alert: NormalizedAlert,
        state: dict[str, OpenIncident],
        index: Index,
        reinvestigate: list[dict[str, str]],
    ) -> list[object] | None:
        """Where `triage_alert` would put the new firing `alert` given the open incidents
        `state` (changed in place, with `index`: the alert joins or opens one), as a
        `triage_batch` alert row; None when it may merge two incidents (`merge_bridged`
        decides that in the graph)."""
        component = self.components[alert.key]
        links = self.linked[component] if component else Links()
        start, window = alert.starts_at_ms, self.window_ms
        group = alert.group_key
        best: tuple[Rank, OpenIncident, str] | None = None
        reached = 0  # candidates: another one in the reach may be merged with the chosen one
        for candidate in self.ranked(component, group, links, index):
            if start - window <= candidate[1].opened_at <= start + window:
                reached += 1
                if best is None:
                    best = candidate
                    if not component or (component, best[1].id) in self.bridged:
                        break  # no merge to look for: the rest need not be counted
                else:
                    break
        severity = severity_rank(alert.severity)
        via_: str | None = None
        if best is None:
            held = bool(self.hold_ms) and any(
                start - window <= i.opened_at <= start + window for i in index.holding(links.beyond)
            )
            incident = OpenIncident(
                f"inc-{uuid.uuid4().hex[:12]}", start, [component] if component else [],
                [group], "", 0, severity, alert.severity, alert.title(), held,
                about_monitoring(alert),
            )  # fmt: skip
            state[incident.id] = incident
            index.add(incident)
            self.report.opened.append(incident.id)
        else:
            _, incident, via_ = best
            self.report.joined[incident.id] = alert.key
            bridge = (component, incident.id)
            if component and bridge not in self.bridged:
                if reached > 1:
                    return None
                self.bridged.add(bridge)
            if component and component not in incident.components:
                # an incident this write opens is investigated after it, alerts and all:
                # `settle_reinvestigations` would drop the task
                if incident.new is None:
                    reinvestigate.append({"incident_id": incident.id, "component": component})
                incident.components = [*incident.components, component]
                index.add(incident)
            if group not in incident.group_keys:
                incident.group_keys = [*incident.group_keys, group]
                index.add(incident)
            if severity > incident.rank:
                incident.rank, incident.severity = severity, alert.severity
            if incident.new is not None and incident.new_gap and not about_monitoring(alert):
                # a no-data alert opened it, a real one is here: the page leads with the real
                incident.new, incident.new_gap = alert.title(), False
        incident.firing += 1
        self.anchor[component if component is not None else f"group:{group}"] = incident.id
        self.report.accepted += 1
        if component is None:
            self.report.unmatched.append(alert.key)
        self.touched(incident.id)
        values = self.values.get(id(alert))
        return [alert.key, incident.id, component, via_,
                *(alert_values(alert) if values is None else values)]  # fmt: skip

    def ranked(
        self, component: str | None, group: str, links: Links, index: Index
    ) -> list[tuple[Rank, OpenIncident, str]]:
        """The open incidents an alert on `component` (None: on no component, of Alertmanager
        group `group`) with `links` may join, whatever their time, best first (`Rank`), each
        with the alert's `via` to it: those holding a component it links to, else those of its
        group. Remembered in `index` until its next change (a storm asks thousands of times)."""
        asked = (component, True) if component else (group, False)
        found = index.ranked.get(asked)
        if found is None:
            near = links.names
            grouped = index.grouped.get(group, []) if group else []
            incidents = index.holding(near) if near else grouped
            found = []
            for incident in incidents:
                hits = [n for n, name in enumerate(near) if name in incident.components]
                unexplained = 0 if incident.root_cause and incident.root_cause in links.down else 1
                rank = (unexplained, links.hops[hits[0]] if hits else 0, incident.opened_at,
                        incident.id)  # fmt: skip
                via = links.paths[hits[0]] if hits else f"same Alertmanager group {group}"
                found.append((rank, incident, via))
            found.sort(key=lambda item: item[0])
            index.ranked[asked] = found
        return found

    def touched(self, incident: str) -> None:
        """Note an incident this delivery touched (once)."""
        if incident not in self.report.incidents:
            self.report.incidents.append(incident)

    def one(self, alert: NormalizedAlert) -> None:
        """`triage_alert` on one alert, then `merge_bridged` once per component and incident."""
        component = self.components[alert.key]
        report = self.report
        if component is None:
            report.unmatched.append(alert.key)
        links = self.linked[component] if component else Links()
        props = alert_props(alert, component)
        row = self.graph.one(
            "triage_alert",
            {
                "key": alert.key,
                **{k: v for k, v in props.items() if k != "component"},
                "severity_rank": severity_rank(alert.severity),
                "component": component,
                "near": links.names,
                "near_hops": links.hops,
                "near_paths": links.paths,
                "down": links.down,
                "beyond": links.beyond,
                "hold_ms": self.hold_ms,
                "reopen_ms": self.reopen_ms,
                "window_ms": self.window_ms,
                "new_incident_id": f"inc-{uuid.uuid4().hex[:12]}",
                "new_task_id": f"task-{uuid.uuid4().hex}",
            },
        )
        if row is None:  # every MATCH after the MERGE is optional: cannot happen
            raise RuntimeError(f"triage of alert {alert.key} returned no row")
        report.accepted += 1
        anchor = component if component is not None else f"group:{alert.group_key}"
        if row["incident_id"] is None:  # resolved without a firing: recorded, nothing else
            report.unfired.append(alert.key)
            self.anchor.pop(anchor, None)
            return
        report.unsettled |= not row["opened"]
        bridge = (component, row["incident_id"])
        if (component and row["prev"] is None and not row["opened"]
                and alert.status == "firing" and bridge not in self.bridged):  # fmt: skip
            self.bridged.add(bridge)  # once per component and incident per delivery (storms)
            for merged, into in merge_bridged(self.graph, alert, row["incident_id"], component,
                                              links, self.window_ms):  # fmt: skip
                report.merged.append(merged)
                if merged == row["incident_id"]:  # it went into the paged one: follow it
                    row["incident_id"] = into
        if row["status"] == "firing" and row["prev"] is None:
            self.anchor[anchor] = row["incident_id"]
        else:
            self.anchor.pop(anchor, None)
        self.touched(row["incident_id"])
        if row["status"] == "firing" and row["prev"] is None and not row["opened"]:
            report.joined[row["incident_id"]] = row["key"]  # a reopen is told by its own task
        if row["opened"]:
            report.opened.append(row["incident_id"])
        if row["reopened"] and row["incident_id"] not in report.reopened:
            report.reopened.append(row["incident_id"])
        if row["closing"]:
            report.resolved.append(row["incident_id"])


def triage(
    graph: TenantGraph,
    alerts: list[NormalizedAlert],
    window_ms: int,
    hops: int = 2,
    batch: bool = True,
    hold_ms: int = 0,
    reinvestigate_ms: int = 10_000,
    reopen_ms: int = 0,
    ahead: Ahead | None = None,
) -> TriageReport:
    """Write every alert of one delivery to the graph and attach it to an incident.

    `window_ms`: how far apart (by alert start time) an alert and an incident's opening may be to
    join; `hops`: correlation reach along dependency edges (0-6); `batch`: False writes alert by
    alert (`triage_alert` only: the reference the batched writes are tested against);
    `hold_ms`: how long a new incident's page waits when an open incident lies past the reach
    but within twice it (`BLAST_PAGE_HOLD_MS`: an alert between them may still merge them);
    `reinvestigate_ms`: at most one re-investigation per incident this often
    (`BLAST_REINVESTIGATE_S`; `settle_reinvestigations`). Components of the delivery that
    share a dependency within the reach are linked (`shared_dependencies`), and so are they
    with the components of open incidents of their Alertmanager group (a later delivery).
    `reopen_ms`: a new firing episode of an alert of an incident resolved at most this long
    before it started reopens that incident (`BLAST_REOPEN_WINDOW`; 0: never), no new page.
    `ahead`: this delivery's read sent by `read_ahead`, taken when it was sent for these
    alerts and settings (else closed, and `triage` reads again).
    Queries: one to resolve components, find their links, the stored alerts and the open
    incidents (`triage_context.cypher`), then `Triage`'s (a storm of new alerts: one
    `triage_batch` per 1,000; otherwise one write per batch of a few hundred, or per alert).
    A delivery of one firing alert (with `batch`) reads the same with `triage_lone.cypher`,
    which also writes the alert when it opens a new incident (no stored key, no flapping, no
    open incident in reach or of its group): one query in all, else `Triage`'s as above.
    Raises `GraphUnavailable` if the database cannot answer; alerts written before that stay
    written, and the sender's retry is harmless.
    """
    heads = Heads.of(alerts)
    # a lone alert is one `triage_alert` when `triage_lone` did not write it, which needs no more
    lone = batch and len(alerts) == 1 and alerts[0].status == "firing"
    opening = lone_params(alerts[0], hops, window_ms, hold_ms, reopen_ms) if lone else {}
    values: dict[int, list[object]] = {}
    if ahead is not None and batch and ahead.taken(heads, window_ms, hops, reopen_ms):
        candidates = ahead.candidates  # `read_ahead`: never lone
        # while the answer is on its way, the values `decide` would work out batch by batch
        # (an answer already in: they are worked out as the writes go, not before the first)
        for first in range(0, len(alerts), FAST_BATCH):
            if ahead.answer.answered():
                break
            values |= alert_value_rows(alerts[first : first + FAST_BATCH])
        context, asked, read = ahead.params, ahead.asked, ahead.answer.one()
    else:
        if ahead is not None:  # started for other alerts: its connection back, its answer unread
            ahead.answer.close()
        candidates, names = alert_candidates(alerts)
        context = heads.context(names, window_ms, hops, batch, reopen_ms)
        # a lone alert's query decides from the whole topology it reads: nothing remembered
        asked = Asked(None, {"topology": "", "fresh": names, "walked": []}) if lone else (
            LINKS.ask(graph.name, names, context["hops"])
        )  # fmt: skip
        read = graph.one("triage_lone" if lone else "triage_context",
                         context | asked.params | opening)  # fmt: skip
    assert read is not None  # every part collects: always one row
    if not lone:
        read = LINKS.answer(graph.name, asked, read, context["candidates"], context["hops"])
    fast = context["lo"] <= context["hi"]  # else (1, 0): no storm to group (`Heads.context`)
    components = resolve_components(candidates, read["matched"])
    if lone and read["written"]:  # what `Triage.one` reports for an alert that opened one
        key, incident = alerts[0].key, str(opening["new_incident_id"])
        unmatched = [key] if components[key] is None else []
        return TriageReport(accepted=1, unmatched=unmatched, incidents=[incident],
                            opened=[incident])  # fmt: skip
    named = [c for c in dict.fromkeys(components[a.key] for a in alerts) if c is not None]
    # the group's components from earlier deliveries come first: new ones link to them
    earlier = [c for c in sorted(read["grouped"]) if c not in named]
    linked = shared_dependencies(component_links(read["links"], earlier + named, hops))
    for name in earlier:  # they only lend their links; this delivery has no alert on them
        del linked[name]
    known = set(read["known"]) | (set(read["episodes"]) & {a.key for a in alerts})
    ordered = dependency_order(alerts, components, linked)
    report = Triage(graph, components, linked, window_ms, batch, hold_ms, reopen_ms, values).run(
        ordered,
        known,
        read["open"] if fast else None,
        set(read["refired"]),
        (context["lo"], context["hi"]),
    )
    settle_reinvestigations(graph, report, reinvestigate_ms)
    return report


@dataclass(frozen=True, slots=True)
class Heads:
    """What `triage` reads the graph for (`triage_context`), of one delivery's alerts, each
    list in the delivery's order: keys, fingerprints, statuses, start times (ms since the
    epoch), labels and Alertmanager group keys, as `NormalizedAlert` has them. The webhook has
    them before it builds the alerts (`read_ahead`)."""

    keys: list[str]
    fingerprints: list[str]
    statuses: list[str]
    starts: list[int]
    labels: list[dict[str, str]]
    group_keys: list[str]

    @classmethod
    def of(cls, alerts: list[NormalizedAlert]) -> Heads:
        """The heads of `alerts`."""
        return cls(
            [a.key for a in alerts], [a.fingerprint for a in alerts],
            [a.status for a in alerts], [a.starts_at_ms for a in alerts],
            [a.labels for a in alerts], [a.group_key for a in alerts],
        )  # fmt: skip

    def context(
        self, names: list[str], window_ms: int, hops: int, batch: bool, reopen_ms: int
    ) -> dict[str, Any]:
        """`triage_context`'s parameters for these alerts, `names` their `candidate_names`
        (`triage`'s arguments otherwise)."""
        starts = [ms for ms, status in zip(self.starts, self.statuses, strict=True)
                  if status == "firing"]  # fmt: skip
        # a storm's new alerts are grouped from the open incidents of their time (`fast`)
        fast = batch and len(starts) >= FAST_MIN
        span = (min(starts) - window_ms, max(starts) + window_ms) if fast else (1, 0)
        fingerprints = sorted(set(self.fingerprints)) if fast and reopen_ms else []
        return {
            "candidates": names, "keys": [] if fingerprints else sorted(set(self.keys)),
            "hops": read_reach(hops), "group_keys": sorted({g for g in self.group_keys if g}),
            "lo": span[0], "hi": span[1], "fingerprints": fingerprints,
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class Ahead:
    """A `triage_context` read started before the delivery's alerts were built (`read_ahead`):
    what it was started for (the alerts' heads and `triage`'s window, reach and reopen window,
    ms), its parameters, what it counts on of the topology remembered (`LINKS`: the read is
    sent with `asked.params` too), its answer to come, and the alerts' `alert_candidates` by
    key."""

    heads: Heads
    settings: tuple[int, int, int]
    params: dict[str, Any]
    asked: Asked
    answer: SentQuery
    candidates: dict[str, list[str]]

    def taken(self, heads: Heads, window_ms: int, hops: int, reopen_ms: int) -> bool:
        """Whether this read is `triage`'s for alerts of `heads` with these settings (it reads
        the same: its parameters are a function of them)."""
        return self.settings == (window_ms, hops, reopen_ms) and self.heads == heads


def read_ahead(
    graph: TenantGraph, heads: Heads, window_ms: int, hops: int = 2, reopen_ms: int = 0
) -> Ahead | None:
    """Send `triage`'s read of the graph for the alerts `heads` (`TenantGraph.send`), for a
    delivery of at least `AHEAD_MIN` firing alerts, so that the server runs it while the
    webhook builds the alerts; `triage` takes its answer when it was sent for the same alerts
    and settings (`triage`'s arguments otherwise), else it closes it and reads again. None
    when not sent. A read only: an answer nobody takes changes nothing, and whoever gets an
    `Ahead` closes or takes it (its connection is its own until then)."""
    if heads.statuses.count("firing") < AHEAD_MIN:
        return None
    candidates, names = labelled_candidates(heads.keys, heads.labels)
    params = heads.context(names, window_ms, hops, True, reopen_ms)
    asked = LINKS.ask(graph.name, names, params["hops"])
    answer = graph.send("triage_context", params | asked.params)
    return Ahead(heads, (window_ms, hops, reopen_ms), params, asked, answer, candidates)


def read_reach(hops: int) -> int:
    """How far `triage_context` walks for a reach of `hops` edges: twice as far (the farther
    links are `Links.beyond`), at most 6."""
    return min(6, 2 * hops)


#: Components whose paths `remember_topology` reads per query, and the paths it stops after:
#: a world of a few hundred services is remembered whole, a huge one in part (the rest is
#: walked by the deliveries that name it, as before).
REMEMBER_CHUNK = 64
REMEMBER_MAX_PATHS = 20_000


def remember_topology(graph: TenantGraph, hops: int) -> tuple[int, int]:
    """Read which components each component name and alias names, and the paths from each
    component, into the process's topology memory (`LINKS`), as the first storm's read would:
    so that the first storm after the gateway starts is read as fast as the next ones (its
    read walked every component it named, 11 of 19 ms on the demo world; docs/hot-path.md).
    Reads `REMEMBER_CHUNK` components a query until `REMEMBER_MAX_PATHS` paths are held, and at
    most `link_cache.MAX_NAMES` names. Returns (names, paths) remembered. Raises as
    `TenantGraph.rows` (`GraphUnavailable`)."""
    names = sorted({name for row in graph.rows("component_names", {})
                    for name in [row["name"], *row["aliases"]] if name})[:MAX_NAMES]  # fmt: skip
    reach, paths = read_reach(hops), 0
    for first in range(0, len(names), REMEMBER_CHUNK):
        chunk = names[first : first + REMEMBER_CHUNK]
        params = {"candidates": chunk, "keys": [], "hops": reach, "group_keys": [],
                  "lo": 1, "hi": 0, "fingerprints": []}  # fmt: skip
        asked = LINKS.ask(graph.name, chunk, reach)
        read = graph.one("triage_context", params | asked.params)
        if read is None:
            break
        paths += len(read["links"])
        LINKS.answer(graph.name, asked, read, chunk, reach)
        if paths >= REMEMBER_MAX_PATHS:
            return first + len(chunk), paths
    return len(names), paths


def lone_params(
    alert: NormalizedAlert, hops: int, window_ms: int, hold_ms: int, reopen_ms: int
) -> dict[str, object]:
    """What `triage_lone.cypher` takes beyond `triage_context`'s parameters: the alert's
    properties (as `triage_alert` takes them), the names its labels may give its component in
    order (`component_candidates`), the reach (`hops`), the rules' durations (ms), the window
    of open incidents it could join (`from_ms`..`to_ms`) and the ids of the incident and task
    it may open."""
    props = alert_props(alert, None)
    del props["component"]  # the query resolves it
    return props | {
        "key": alert.key, "order": component_candidates(alert.labels), "reach": hops,
        "severity_rank": severity_rank(alert.severity), "window_ms": window_ms,
        "hold_ms": hold_ms, "reopen_ms": reopen_ms,
        "from_ms": alert.starts_at_ms - window_ms, "to_ms": alert.starts_at_ms + window_ms,
        "new_incident_id": f"inc-{uuid.uuid4().hex[:12]}",
        "new_task_id": f"task-{uuid.uuid4().hex}",
    }  # fmt: skip


def settle_reinvestigations(
    graph: TenantGraph, report: TriageReport, reinvestigate_ms: int
) -> None:
    """One delivery, one investigation: the `reinvestigate` tasks its alerts enqueued (one per
    component new to an incident), and one for each incident opened before the delivery that
    new firing alerts joined on components it already had (`report.joined`, not reopened: a
    reopen restates the page itself), are dropped while the incident's first investigation has
    not started (it will read every alert), and otherwise collapse into one, which waits until
    `reinvestigate_ms` after the incident's last re-investigation
    (`settle_reinvestigations.cypher`). Without the second kind, a critical alert joining a
    warning incident on the same component left its page saying WARNING and one alert.
    No second kind for an incident whose re-investigation was created after the delivery's
    last alert joined it, even one a worker claimed (or finished) before this settles: it
    reads that alert (a new user's trial: a join on a new component was re-investigated twice
    and its page edited twice, the triage's task claimed within 13 ms).
    A storm of alerts joining one incident re-investigates it at most once per
    `reinvestigate_ms`, each time over every alert that arrived. A delivery that only opened
    incidents enqueued none: no query."""
    fresh = set(report.opened) | set(report.reopened) | set(report.merged)
    joined = [
        {"incident_id": i, "alert_key": key,
         "task_id": f"reinvestigate:{i}:joined:{uuid.uuid4().hex[:12]}"}
        for i, key in report.joined.items()
        if i not in fresh
    ]  # fmt: skip
    if report.incidents and (report.unsettled or joined):
        graph.rows(
            "settle_reinvestigations",
            {"incident_ids": report.incidents, "reinvestigate_ms": reinvestigate_ms,
             "joined": joined},
        )  # fmt: skip


def merge_bridged(
    graph: TenantGraph,
    alert: NormalizedAlert,
    incident_id: str,
    component: str,
    links: Links,
    window_ms: int,
) -> list[tuple[str, str]]:
    """Merge the open incidents the alert's component links to with `incident_id`, the one it
    joined (`cypher/merge_incident.cypher`): each unpaged one into it, or it, while unpaged,
    into a paged one (which ends the loop). A chain proxy → frontend → checkout → payment
    whose ends alerted first is one failure, whatever order the alerts came in; a component
    that only calls into both (a common caller: shop over orders and payments) merges nothing,
    since either fault explains its alert. Returns
    (merged, into) pairs (at most a few: each needs a component within the reach)."""
    merged: list[tuple[str, str]] = []
    params = {
        "incident_id": incident_id, "component": component, "near": links.names,
        "near_paths": links.paths, "down": links.down, "starts_at_ms": alert.starts_at_ms,
        "window_ms": window_ms,
    }  # fmt: skip
    while (row := graph.one("merge_incident", params)) is not None:
        merged.append((str(row["merged"]), str(row["into"])))
    return merged
