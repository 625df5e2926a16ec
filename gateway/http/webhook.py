"""`POST /api/v1/alerts`: Alertmanager v4 and Grafana unified alerting bodies on one URL.

Answers 200 only after every accepted alert is in the graph.
The heartbeat alert (`BLAST_HEARTBEAT_ALERTNAME`) is taken out before triage: it only stamps
the tenant's heartbeat (agents/triage/heartbeat.py) and is counted in `heartbeats` when firing,
in `heartbeats_resolved` when resolved (no proof of life: it stamps nothing).
Grafana's contact-point test notification (`agents.triage.alerts.is_contact_point_test`) is
logged and counted in `tests`, and triaged as any alert: its incident pages and stays open
until someone resolves it (Grafana never resolves a test).
Status codes a sender sees: 400 not JSON, 401 bad credential, 413 body over
`BLAST_MAX_BODY_BYTES`, 415 a media type other than JSON
(`gateway.http.limits.json_media_problem`: no Content-Type is JSON) or a compressed body, 422
wrong shape (including legacy Grafana bodies), 503 graph unavailable (Alertmanager retries).
Nothing a sender can put in a body leads to a 500.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from starlette.concurrency import run_in_threadpool

from adapters.falkordb import GraphStore, graph_name
from agents.metrics import Metrics
from agents.triage import heartbeat
from agents.triage.alerts import NormalizedAlert, is_contact_point_test
from agents.triage.triage import Ahead, Heads, TriageReport, read_ahead, triage
from gateway.http.auth import tenant_for
from gateway.http.payloads import Notification, PayloadError, read_notification_bytes
from gateway.settings import Settings

log = logging.getLogger(__name__)
router = APIRouter()


def summary(
    tenant: str, report: TriageReport, heartbeats: int = 0, alertname: str = "", stopped: int = 0
) -> str:
    """The operator's line for one delivery, e.g. `webhook: 3 alerts for acme, 1 new incident`
    (then reopened and resolved incidents, alerts that matched no component and alerts
    resolved without a firing, when there are any); `heartbeats` firing alerts of the
    `alertname` heartbeat are counted apart: `webhook: 1 Watchdog heartbeat for acme (proof of
    life: no incident)` when the delivery held nothing else (a trial read "0 alerts, 0 new
    incidents" once a minute). `stopped` resolved ones are no proof of life (Prometheus
    stopped firing the rule) and say so: `webhook: 1 Watchdog resolved for acme (not proof of
    life: the heartbeat's rule stopped firing; no incident)`."""

    def count(n: int, what: str) -> str:
        return f"{n} {what}{'' if n == 1 else 's'}"

    name = alertname or "heartbeat"
    beats = count(heartbeats, f"{alertname} heartbeat".strip())
    ended = f"{stopped} {name} resolved (not proof of life: the heartbeat's rule stopped firing)"
    if (heartbeats or stopped) and not report.accepted:
        if not stopped:
            return f"webhook: {beats} for {tenant} (proof of life: no incident)"
        if not heartbeats:
            return (
                f"webhook: {stopped} {name} resolved for {tenant} (not proof of life: the "
                "heartbeat's rule stopped firing; no incident)"
            )
        return f"webhook: {beats} for {tenant} (proof of life: no incident), {ended}"
    parts = [f"webhook: {count(report.accepted, 'alert')} for {tenant}"]
    parts.append(f"{count(len(report.opened), 'new incident')}")
    if heartbeats:
        parts.append(beats)
    if stopped:
        parts.append(ended)
    if report.reopened:
        parts.append(f"{count(len(report.reopened), 'incident')} reopened (flapping)")
    if report.resolved:
        parts.append(f"{count(len(report.resolved), 'incident')} resolved")
    if report.unmatched:
        parts.append(f"{len(report.unmatched)} matched no component")
    if report.unfired:
        parts.append(f"{len(report.unfired)} resolved without a firing (recorded, no incident)")
    return ", ".join(parts)


def replicas_needed(store: GraphStore, settings: Settings) -> int:
    """How many replicas must hold a delivery's writes before the 200 (`BLAST_WRITE_REPLICAS`;
    unset: 1 in a cluster, else 0)."""
    needed = settings.write_replicas
    if needed is None:
        needed = 1 if store.cluster else 0
    return needed


async def _replicated(store: GraphStore, name: str, settings: Settings) -> None:
    """Answer 503 unless the writes to graph `name` are on `replicas_needed` replicas:
    replication is asynchronous, so a primary that dies after a 200 could otherwise take
    acknowledged alerts with it."""
    needed = replicas_needed(store, settings)
    if not needed:
        return
    acked = await run_in_threadpool(
        store.replicate, name, needed, settings.write_replicas_timeout_ms
    )
    if acked < needed:
        raise HTTPException(
            503,
            f"alerts written, but {acked} of {needed} replicas acknowledged them within "
            f"{settings.write_replicas_timeout_ms} ms; retry later",
        )


@router.post("/api/v1/alerts")
async def receive_alerts(request: Request) -> dict[str, Any]:
    """Accept one webhook delivery; see the module docstring for the answers."""
    metrics: Metrics = request.app.state.metrics
    with metrics.webhook_seconds.time():
        return await _receive(request, metrics)


@dataclass
class Accepted:
    """What `accept` did with one delivery: the notification read, its heartbeat alerts, the
    others (`alerts`), their triage, and the silence's incident the heartbeat resolved
    (`recovered`, None: none), whose resolve notice is a new task."""

    notification: Notification
    beats: list[NormalizedAlert]
    alerts: list[NormalizedAlert]
    report: TriageReport
    recovered: str | None = None
    #: Grafana contact-point test notifications among `alerts`: logged, and triaged as any
    #: alert (their page says they are the test).
    tests: int = 0

    def tasks(self) -> int:
        """How many new tasks the delivery made that idle workers should hear of: one per
        incident opened or reopened, and the resolve notice of a silence that ended."""
        return len(self.report.opened) + len(self.report.reopened) + bool(self.recovered)


#: A body this large (about 700 alerts) is read and triaged with the collector paused
#: (`collector_paused`).
PAUSE_MIN_BYTES = 256 * 1024
#: The longest the collector stays paused while large deliveries overlap: the delivery that
#: finds it paused longer collects first (`collector_paused`).
MAX_PAUSE_S = 1.0
_PAUSE_LOCK = threading.Lock()
#: deliveries under way with the collector paused, when the pause began (monotonic s), and
#: whether the collector was on before it
_pause: dict[str, Any] = {"holders": 0, "since": 0.0, "was": True}


@contextmanager
def collector_paused(size: int) -> Iterator[None]:
    """The cyclic garbage collector paused while a body of `size` bytes (at least
    `PAUSE_MIN_BYTES`) is read and triaged, and back as it was once no such delivery is under
    way. A 5,000-alert storm allocates some 40,000 objects that live to its end: the collector
    passed over them 34-46 times per storm (6-12 ms of CPU, `gc.callbacks`), and a storm
    makes no cyclic garbage worth it (reference counting frees the rest as before). The pause
    is the whole process's: overlapping deliveries share one, and one that finds it older than
    `MAX_PAUSE_S` collects first (`gc.collect`), so a stream of them cannot leave cycles
    uncollected for long."""
    if size < PAUSE_MIN_BYTES:
        yield
        return
    with _PAUSE_LOCK:
        now = time.monotonic()
        if not _pause["holders"]:
            _pause.update(was=gc.isenabled(), since=now)
            gc.disable()
        elif now - _pause["since"] > MAX_PAUSE_S:
            gc.collect()
            _pause["since"] = time.monotonic()
        _pause["holders"] += 1
    try:
        yield
    finally:
        with _PAUSE_LOCK:
            _pause["holders"] -= 1
            if not _pause["holders"] and _pause["was"]:
                gc.enable()


def accept(
    store: GraphStore, tenant: str, raw: bytes, settings: Settings, metrics: Metrics, wake: bool
) -> Accepted:
    """The blocking part of one delivery, in one call off the event loop (each hand-off to a
    thread and back costs both threads a wake-up, about 50 µs of CPU here): the body's bytes
    `raw` read (`read_notification_bytes`; `RequestGuard` leaves the webhook's body to it), the
    heartbeat stamped, the other alerts triaged and, with `wake` (no replica to wait for
    first), the idle workers told; a large body with the collector paused (`collector_paused`).
    Raises `HTTPException` for a body refused (`PayloadError`, logged), and `GraphUnavailable`
    as `triage`."""
    with collector_paused(len(raw)):
        return _accept(store, tenant, raw, settings, metrics, wake)


def _accept(
    store: GraphStore, tenant: str, raw: bytes, settings: Settings, metrics: Metrics, wake: bool
) -> Accepted:
    """`accept`, the collector paused or not: `_triaged`, and triage's read sent ahead given
    back whatever happened (`SentQuery.close`: nothing once it was read)."""
    reads: list[Ahead | None] = []  # triage's read, sent while the alerts are built
    try:
        return _triaged(store, tenant, raw, settings, metrics, wake, reads)
    finally:
        for read in reads:
            if read is not None:
                read.answer.close()


def _triaged(
    store: GraphStore, tenant: str, raw: bytes, settings: Settings, metrics: Metrics, wake: bool,
    reads: list[Ahead | None],
) -> Accepted:  # fmt: skip
    """`_accept`'s work; `reads` gets the read sent ahead."""
    now_ms = int(time.time() * 1000)
    graph = store.graph(graph_name(tenant))

    def ahead(heads: Heads) -> None:
        reads.append(
            read_ahead(graph, heads, settings.incident_window_s * 1000, settings.correlation_hops,
                       settings.reopen_window_ms)
        )  # fmt: skip

    try:
        notification = read_notification_bytes(raw, settings.default_severity, now_ms, ahead)
    except PayloadError as exc:
        log.warning("tenant %s: rejected webhook body (%s): %s", tenant, exc.status, exc)
        raise HTTPException(exc.status, str(exc)) from exc
    if notification.truncated:
        log.warning(
            "tenant %s: Alertmanager left %d alerts of group %s out of this notification "
            "(max_alerts); they are not in the graph until a notification carries them",
            tenant, notification.truncated, notification.group_key,
        )  # fmt: skip
    beats, alerts = heartbeat.split(notification.alerts, settings.heartbeat_alertname)
    tests = [a for a in alerts if is_contact_point_test(a)]
    if tests:  # a person pressed "Test" on a Grafana contact point: the webhook works
        # triaged as any alert, so the test shows the whole path (incident, page, link); the
        # bug-report cases expect its alert kept with its link (keep #6506)
        log.warning(
            "tenant %s: Grafana contact-point test notification received (receiver %r): the "
            "webhook works; its incident pages as any alert does and stays open until resolved "
            "by hand (Grafana never resolves a test)", tenant, tests[0].receiver,
        )  # fmt: skip
    recovered = None
    if beats:  # never an incident; only a firing one is proof of life (`seen`)
        beat = heartbeat.seen(graph, settings.heartbeat_alertname, beats)
        if beat is not None:
            metrics.heartbeat_last_seen.labels(tenant, settings.heartbeat_alertname).set(
                beat["last_at"] / 1000
            )
            recovered = beat["recovered"]
            if recovered:
                log.warning("tenant %s: %s is back; incident %s resolved", tenant,
                            settings.heartbeat_alertname, recovered)  # fmt: skip
    report = triage(
        graph, alerts, settings.incident_window_s * 1000, settings.correlation_hops,
        hold_ms=settings.page_hold_ms, reinvestigate_ms=settings.reinvestigate_s * 1000,
        reopen_ms=settings.reopen_window_ms, ahead=reads[0] if reads else None,
    )  # fmt: skip
    done = Accepted(notification, beats, alerts, report, recovered, len(tests))
    if wake and (report.accepted or recovered):  # new tasks wake the idle workers
        store.wake(done.tasks())
    return done


async def _receive(request: Request, metrics: Metrics) -> dict[str, Any]:
    settings: Settings = request.app.state.settings
    store: GraphStore = request.app.state.store
    tenant = tenant_for(request, settings)
    # read and bounded by RequestGuard, which refused a media type other than JSON (415);
    # parsed in `accept`, off the event loop
    raw = await request.body()
    waits = replicas_needed(store, settings) > 0  # then the workers are told after the replicas
    done = await run_in_threadpool(accept, store, tenant, raw, settings, metrics, not waits)
    notification, beats, alerts, report = done.notification, done.beats, done.alerts, done.report
    if waits:
        await _replicated(store, graph_name(tenant), settings)
        if report.accepted or done.recovered:
            await run_in_threadpool(store.wake, done.tasks())
    firing = sum(1 for beat in beats if beat.status == "firing")
    log.info(
        "%s", summary(tenant, report, firing, settings.heartbeat_alertname, len(beats) - firing)
    )
    if report.unfired:  # by key, so an operator can find them (Alert nodes in no incident)
        more = f" and {len(report.unfired) - 10} more" if len(report.unfired) > 10 else ""
        log.info("tenant %s: resolved without a firing, recorded in no incident: %s%s",
                 tenant, ", ".join(report.unfired[:10]), more)  # fmt: skip
    for status, n in Counter(alert.status for alert in alerts).items():
        metrics.alerts_received.labels(tenant=tenant, status=status).inc(n)
    metrics.alerts_unmatched.labels(tenant=tenant).inc(len(report.unmatched))
    metrics.incidents_opened.labels(tenant=tenant).inc(len(report.opened))
    metrics.incidents_resolved.labels(tenant=tenant).inc(len(report.resolved))
    return {
        "status": "accepted",
        "tenant": tenant,
        "accepted": report.accepted,
        "incidents": report.incidents,
        "opened": report.opened,
        "reopened": report.reopened,
        "resolved": report.resolved,
        "unmatched": report.unmatched,
        "unfired": report.unfired,
        "truncated": notification.truncated,
        "heartbeats": firing,
        "heartbeats_resolved": len(beats) - firing,
        "tests": done.tests,
    }
