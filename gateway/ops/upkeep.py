"""What `serve` keeps doing in the background so the world does not go stale: on-call shifts
expanded ahead again from each team's stored definition (`BLAST_ONCALL_REFRESH_S`), coverage
gauges updated every minute, and, with `PROMETHEUS_URL` set, dependency edges discovered from
the service-graph metrics (`BLAST_DISCOVERY_INTERVAL_S`), and, with `BLAST_RETENTION_DAYS` set,
old incidents trimmed every `RETENTION_EVERY_S` (agents/learn/retention.py), and with
`BLAST_ARCHIVE_DAYS` set, older ones moved to the archive file (gateway/ops/archive.py); and every
graph kept with free node ids, so writes stay cheap as it grows (`keep_headroom`); and, with
`BLAST_HEARTBEAT_ALERTNAME` set, a heartbeat silent for `BLAST_HEARTBEAT_TIMEOUT` paged once
(`check_heartbeats`).

Each round covers every tenant graph; a failure in one round is logged and tried again at the
next, never fatal (the gateway keeps accepting alerts).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from adapters.falkordb import GraphStore, GraphUnavailable, TenantGraph, graph_name
from adapters.notices import fmt_ms
from adapters.notify import AdapterError
from agents.learn.retention import trim_old_incidents
from agents.metrics import Metrics
from agents.triage import heartbeat
from gateway.ops.archive import archive_old_incidents, archive_path
from gateway.settings import Settings
from gateway.world import TopologyError
from gateway.world.oncall import Refresh, coverage, refresh_oncall

log = logging.getLogger(__name__)

#: Seconds between coverage gauge updates (a cheap read; "nobody on call now" moves with time).
COVERAGE_EVERY_S = 60.0
#: Seconds between retention rounds (incidents age by days: once every 10 minutes is plenty).
RETENTION_EVERY_S = 600.0
#: Free node ids each graph is topped up to (`TenantGraph.free_node_ids`): an incident from
#: alert to page creates about 20 nodes, so this is about 1,000 incidents.
NODE_ID_HEADROOM = 20_000
#: The largest top-up: one query creating and deleting this many nodes takes about 0.4 s on a
#: graph of 10,000 stored incidents, and holds that graph's writes meanwhile.
NODE_ID_TOPUP_MAX = 3 * NODE_ID_HEADROOM
#: Seconds between headroom checks (a constant-time node count per tenant).
HEADROOM_EVERY_S = 10.0
#: Seconds between heartbeat silence checks (one small query per tenant): a silence is paged
#: at most this long after `BLAST_HEARTBEAT_TIMEOUT`.
HEARTBEAT_EVERY_S = 15.0


def short_heartbeat_timeout(settings: Settings) -> str | None:
    """Why `BLAST_HEARTBEAT_TIMEOUT` is shorter than `serve`'s silence check
    (`HEARTBEAT_EVERY_S`), or None. Allowed (a trial may want a fast page) but said at start
    and by doctor: the silence is seen only at the next check, up to 15 s after the timeout,
    and a timeout that short is also under any Alertmanager `repeat_interval`, so it would
    page between two heartbeats of a working pipeline."""
    if not settings.heartbeat_alertname:
        return None  # the check is off
    if settings.heartbeat_timeout_ms >= HEARTBEAT_EVERY_S * 1000:
        return None
    every = f"{HEARTBEAT_EVERY_S:g} s"
    return (
        f"BLAST_HEARTBEAT_TIMEOUT={settings.heartbeat_timeout} is shorter than serve's {every} "
        f"heartbeat check: a silence is paged up to {every} after it, and a timeout under "
        "Alertmanager's repeat_interval pages between two heartbeats of a working pipeline; "
        "use at least a few times the heartbeat route's repeat_interval (e.g. 10m)"
    )


class Upkeep:
    """The background rounds of one `serve` process over `settings.tenants`.

    `discover`: called with each tenant graph per discovery round (None: no discovery).
    """

    def __init__(
        self,
        store: GraphStore,
        settings: Settings,
        metrics: Metrics,
        discover: Callable[[TenantGraph], object] | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.metrics = metrics
        self.discover = discover
        self._thread: threading.Thread | None = None
        #: per tenant: (node count, ids freed) at the last top-up
        self._headroom: dict[str, tuple[int, int]] = {}

    def refresh(self, now: datetime | None = None) -> dict[str, Refresh]:
        """Expand on-call shifts ahead for every tenant, then update the coverage gauges."""
        now = now or datetime.now(UTC)
        done = {
            tenant: refresh_oncall(self.store.graph(graph_name(tenant)), now)
            for tenant in self.settings.tenants
        }
        self.update_coverage(now)
        return done

    def update_coverage(self, now: datetime | None = None) -> None:
        """Set `blast_oncall_uncovered{tenant, team, window}` for every team."""
        now = now or datetime.now(UTC)
        for tenant in self.settings.tenants:
            for team in coverage(self.store.graph(graph_name(tenant)), now):
                gauge = self.metrics.oncall_uncovered
                gauge.labels(tenant, team.team, "now").set(0 if team.on_call else 1)
                gauge.labels(tenant, team.team, "14d").set(1 if team.gap_at is not None else 0)

    def start(self, stop: threading.Event) -> threading.Thread:
        """Run the rounds in a daemon thread until `stop` is set; returns the thread."""
        self._thread = threading.Thread(target=self._run, args=(stop,), name="upkeep", daemon=True)
        self._thread.start()
        return self._thread

    def _run(self, stop: threading.Event) -> None:
        s = self.settings
        due = {"oncall": 0.0, "coverage": 0.0, "discovery": 0.0, "retention": 0.0,
               "headroom": 0.0, "heartbeat": 0.0}  # fmt: skip
        while not stop.is_set():
            now = time.monotonic()
            for job, every, run in (
                ("oncall", s.oncall_refresh_s, self.refresh),
                ("coverage", COVERAGE_EVERY_S, self.update_coverage),
                ("discovery", s.discovery_interval_s, self._discover_all),
                ("retention", RETENTION_EVERY_S, self.trim),
                ("headroom", HEADROOM_EVERY_S, self.keep_headroom),
                ("heartbeat", HEARTBEAT_EVERY_S, self.check_heartbeats),
            ):
                if now < due[job] or (job == "discovery" and self.discover is None):
                    continue
                if job == "retention" and s.retention_days == 0 and s.archive_days == 0:
                    continue
                if job == "heartbeat" and not s.heartbeat_alertname:
                    continue
                due[job] = now + every
                try:
                    run()
                except (GraphUnavailable, AdapterError, TopologyError, OSError) as exc:
                    log.warning("upkeep %s failed (tried again in %.0f s): %s", job, every, exc)
            stop.wait(1.0)

    def trim(self) -> int:
        """Trim every tenant's incidents older than `BLAST_RETENTION_DAYS`, archive those older
        than `BLAST_ARCHIVE_DAYS` (gateway/ops/archive.py), then release the memory that freed
        (`GraphStore.release_memory`); returns how many were trimmed or archived."""
        now_ms = int(time.time() * 1000)
        trimmed = 0
        for tenant in self.settings.tenants:
            graph = self.store.graph(graph_name(tenant))
            done = trim_old_incidents(graph, self.settings.retention_days, now_ms)
            path = archive_path(self.settings.data_dir, tenant)
            gone = archive_old_incidents(graph, path, self.settings.archive_days, now_ms)
            if done or gone:  # the freed pages back to the OS, or the database stays at its peak
                self.store.release_memory(graph.name)
            trimmed += done + gone
        if trimmed:
            log.info("retention: trimmed or archived %d incidents (after %d / %d days)", trimmed,
                     self.settings.retention_days, self.settings.archive_days)  # fmt: skip
        return trimmed

    def keep_headroom(self) -> dict[str, int]:
        """Give each tenant graph free node ids again (`TenantGraph.free_node_ids`, which says
        why) when it has none on record or has grown by more than half of its last top-up since:
        `NODE_ID_HEADROOM`, or twice the growth when that is more (a busy graph), at most
        `NODE_ID_TOPUP_MAX`. Returns the ids freed per tenant (0: enough left)."""
        freed: dict[str, int] = {}
        for tenant in self.settings.tenants:
            graph = self.store.graph(graph_name(tenant))
            nodes = graph.node_count()
            last = self._headroom.get(tenant)
            grown = 0 if last is None else nodes - last[0]
            if last is not None and grown <= last[1] // 2:
                freed[tenant] = 0
                continue
            size = min(max(NODE_ID_HEADROOM, 2 * grown), NODE_ID_TOPUP_MAX)
            freed[tenant] = graph.free_node_ids(size)
            self._headroom[tenant] = (nodes, size)
            log.debug("headroom: %d node ids freed in %s (%d nodes)", size, graph.name, nodes)
        return freed

    def check_heartbeats(self) -> list[dict[str, Any]]:
        """Page every tenant whose heartbeat has been silent for `BLAST_HEARTBEAT_TIMEOUT`
        (agents/triage/heartbeat.py: one incident per silence, paged once to the default
        team) and set `blast_heartbeat_last_seen_seconds` from the graph. Returns the rows of
        the incidents opened now (`{alertname, last_at, incident_id}`, plus `tenant`)."""
        opened: list[dict[str, Any]] = []
        for tenant in self.settings.tenants:
            graph = self.store.graph(graph_name(tenant))
            for row in heartbeat.overdue(graph, self.settings.heartbeat_timeout_ms):
                log.error("tenant %s: no %s heartbeat since %s: the alerting pipeline may be "
                          "down; paging the default team (incident %s)", tenant,
                          row["alertname"], fmt_ms(row["last_at"]), row["incident_id"])  # fmt: skip
                opened.append(row | {"tenant": tenant})
            for beat in heartbeat.heartbeats(graph):
                if beat["last_at"] is not None:
                    gauge = self.metrics.heartbeat_last_seen.labels(tenant, beat["alertname"])
                    gauge.set(beat["last_at"] / 1000)
        if opened:
            self.store.wake(len(opened))
        return opened

    def _discover_all(self) -> None:
        assert self.discover is not None
        for tenant in self.settings.tenants:
            self.discover(self.store.graph(graph_name(tenant)))
