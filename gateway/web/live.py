"""Live updates: graph events as Server-Sent Events (`GET /ui/events`).

Nothing here is invented: once per `BLAST_LIVE_POLL_MS` the tenant's counters are read from
the graph (`cypher/web_changes.cypher`, one cheap query shared by every open page of that
tenant), and each counter that moved since the last read becomes one event — `alert`,
`incident`, `claim`, `step`, `finding`, `action`, `delivery`, `ack`, `verdict`,
`remediation` or `trust` — whose data is one line
of HTML saying what the graph now holds (the page's activity feed shows it; the page reloads
its sections on it). A page animates only what this stream reports, so every animation follows
an event that is in the graph.

A claim is seen as the set of tasks held at a reading: a task claimed and finished between two
readings shows up by its steps, finding and actions, not as a claim (counting every claim would
mean scanning every task on each poll).

The stream ends when the client goes or after `STREAM_S` seconds (the browser's EventSource
reconnects by itself, and the session cookie is checked again).
"""

from __future__ import annotations

import asyncio
import html
import threading
import time
import urllib.parse
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from starlette.concurrency import run_in_threadpool

from adapters.falkordb import GraphStore, GraphUnavailable, TenantGraph, graph_name
from gateway.web.timeline import LOW_CONFIDENCE

#: Longest life of one stream (s); the browser reconnects, re-reading its session cookie.
STREAM_S = 300.0
#: A comment line this often (s) when nothing happened, so proxies keep the stream open.
KEEPALIVE_S = 15.0
#: Event names, in the order they are sent when several counters moved in one poll.
EVENTS = (
    "alert",
    "incident",
    "claim",
    "step",
    "finding",
    "action",
    "delivery",
    "ack",
    "verdict",
    "remediation",
    "trust",
)
#: The events `recent` can say in words (web_recent.cypher's event names).
WORDED = frozenset({"incident", "finding", "action", "ack", "verdict"})
#: How far back the feed's first lines reach (ms), and how many of each kind it shows.
RECENT_MS = 24 * 3600 * 1000
RECENT_EACH = 8


@dataclass
class Snapshot:
    """One reading of a tenant's counters (`web_changes` row) and when it was taken."""

    counters: dict[str, Any]
    taken: float


def changes(before: dict[str, Any], after: dict[str, Any]) -> list[tuple[str, str]]:
    """The events between two readings, as (event name, plain-text description).

    Totals only grow in normal operation (firing alerts and open incidents fall as they
    resolve); a total that drops (data deleted by hand) still yields an event, never hidden.
    """

    def moved(key: str) -> int:
        return int(after.get(key) or 0) - int(before.get(key) or 0)

    found: list[tuple[str, str]] = []
    if n := moved("alerts"):
        found.append(("alert", f"{n} new alert(s) received"))
    # a new alert raises firing_alerts unless it arrived resolved; a resolved one lowers it
    if n := moved("alerts") - moved("firing_alerts"):
        found.append(("alert", f"{n} alert(s) resolved"))
    if n := moved("incidents"):
        found.append(("incident", f"{n} new incident(s) opened"))
    if n := moved("incidents") - moved("open_incidents"):
        found.append(("incident", f"{n} incident(s) resolved"))
    for claim in sorted(set(after["claims"]) - set(before["claims"])):
        task_id, epoch, kind, owner = [*claim.split(" ", 3), "", "", ""][:4]
        found.append(("claim", f"{owner} claimed {kind} task {task_id} (claim {epoch})"))
    if n := moved("steps"):
        found.append(("step", f"{n} step(s) checkpointed"))
    if moved("findings") or after["finding_at"] != before["finding_at"]:
        found.append(("finding", "a finding was written"))
    if moved("actions") or after["action_at"] != before["action_at"]:
        found.append(("action", "an action was reserved or its outcome recorded"))
    if n := moved("deliveries"):
        found.append(("delivery", f"{n} delivery attempt(s) recorded"))
    if after.get("ack_at") != before.get("ack_at") and after.get("ack_at") is not None:
        found.append(("ack", "an incident was acknowledged"))
    if n := moved("verdicts"):
        found.append(("verdict", f"{n} verdict(s) given"))
    if moved("remediation"):
        found.append(("remediation", "a remediation was proposed, approved, run or verified"))
    if moved("trust_moves") or moved("playbooks"):
        found.append(("trust", "playbook memory changed (trust or a new playbook)"))
    return sorted(found, key=lambda e: EVENTS.index(e[0]))


def recent(graph: TenantGraph, now_ms: int) -> list[dict[str, Any]]:
    """The feed's first lines: the tenant's latest events (`web_recent.cypher`: incidents
    opened in the last `RECENT_MS`, and what happened to them), newest first, at most
    `RECENT_EACH` of each kind. Row: `{at (ms UTC), event, incident_id, text, also}`. One act
    that two events record in the same words is one line (a `resolved` verdict and its
    incident's resolution: "resolved by Hal Example"), the newer, whose `also` names the
    other events that said it (`stream` then says nothing for them)."""
    rows = graph.rows(
        "web_recent",
        {"since": now_ms - RECENT_MS, "limit": RECENT_EACH, "low_confidence": LOW_CONFIDENCE},
    )
    rows = [r for r in rows if r["at"] is not None]
    rows.sort(key=lambda r: r["at"], reverse=True)
    lines: list[dict[str, Any]] = []
    said: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        key = (row["incident_id"], row["text"])
        first = said.get(key)
        if first is not None and row["event"] != first["event"]:
            first["also"].append(row["event"])
            continue
        lines.append(row | {"also": []})
        said.setdefault(key, lines[-1])
    return lines[: RECENT_EACH * 2]


def sse(event: str, data: str) -> str:
    """One Server-Sent Event: `event:` line, one `data:` line per line of `data`, blank line."""
    lines = "".join(f"data: {line}\n" for line in data.splitlines() or [""])
    return f"event: {event}\n{lines}\n"


def feed_line(event: str, text: str, at_ms: int, incident_id: str | None = None) -> str:
    """The activity feed's HTML line for an event (text escaped; time in UTC, the page's
    script shows it in the viewer's zone), with a link to its incident when it has one."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at_ms / 1000))
    link = ""
    if incident_id:
        target = "/ui/incidents/" + urllib.parse.quote(incident_id, safe="")
        link = (f'<a href="{html.escape(target)}" class="mono">'
                f"{html.escape(incident_id)}</a> ")  # fmt: skip
    return (
        f'<li class="ev ev-{event}"><time datetime="{stamp}" title="{stamp}">{stamp}</time> '
        f"<strong>{event}</strong> {link}{html.escape(text)}</li>"
    )


class LiveFeed:
    """Per-tenant readings shared by every stream of one app, at most one query per tenant per
    poll interval whatever the number of open pages."""

    def __init__(self, store: GraphStore, poll_ms: int) -> None:
        self.store = store
        self.poll_s = poll_ms / 1000
        self._lock = threading.Lock()
        self._latest: dict[str, Snapshot] = {}
        self._said: dict[str, Snapshot] = {}

    def reading(self, tenant: str) -> dict[str, Any] | None:
        """The tenant's counters, no older than one poll interval; None when the graph cannot
        answer now (the stream then waits and tries again)."""
        with self._lock:
            found = self._latest.get(tenant)
            if found is not None and time.monotonic() - found.taken < self.poll_s:
                return found.counters
            try:
                row = self.store.graph(graph_name(tenant)).one("web_changes")
            except GraphUnavailable:
                return None
            assert row is not None, "web_changes aggregates, so it always returns a row"
            self._latest[tenant] = Snapshot(row, time.monotonic())
            return row

    def said(self, tenant: str) -> list[dict[str, Any]]:
        """The tenant's latest events in words (`recent`), shared by every stream of the tenant
        for one poll interval, like `reading`; empty when the graph cannot answer now."""
        with self._lock:
            found = self._said.get(tenant)
            if found is not None and time.monotonic() - found.taken < self.poll_s:
                return list(found.counters["rows"])
            try:
                rows = recent(self.store.graph(graph_name(tenant)), int(time.time() * 1000))
            except GraphUnavailable:
                return []
            self._said[tenant] = Snapshot({"rows": rows}, time.monotonic())
            return rows

    async def stream(self, tenant: str, gone: Any) -> AsyncIterator[str]:
        """The event stream of one page: a `retry` hint, then events as the graph changes.

        An event whose kind the graph can say in words (an incident opened or resolved, a cause
        found, a message or ticket sent, an acknowledgement, a verdict: `recent`) carries those
        words, one feed line per record newer than what this stream has seen; the others carry
        the counter's text (`changes`). `gone`: an async callable that is true once the client
        disconnected.
        """
        yield f"retry: {int(self.poll_s * 1000) * 2}\n\n"
        before = await run_in_threadpool(self.reading, tenant)
        seen = max((r["at"] for r in await run_in_threadpool(self.said, tenant)), default=0)
        ends = time.monotonic() + STREAM_S
        quiet_since = time.monotonic()
        while time.monotonic() < ends:
            await asyncio.sleep(self.poll_s)
            if await gone():
                return
            after = await run_in_threadpool(self.reading, tenant)
            if after is None:
                continue
            if before is not None:
                now_ms = int(time.time() * 1000)
                moved = changes(before, after)
                words: dict[str, list[dict[str, Any]]] = {}
                covered: set[str] = set()  # events another event's line said (`recent`)
                if any(event in WORDED for event, _ in moved):
                    for row in await run_in_threadpool(self.said, tenant):
                        if row["at"] > seen:
                            words.setdefault(row["event"], []).append(row)
                            covered.update(row["also"])
                    seen = max([seen, *(r["at"] for rows in words.values() for r in rows)])
                for event, text in moved:
                    quiet_since = time.monotonic()
                    told = words.pop(event, [])
                    if not told and event in covered:
                        continue  # said once, by the other event's line: one act, one line
                    if told:
                        told.sort(key=lambda r: r["at"], reverse=True)
                        lines = [
                            feed_line(event, r["text"], r["at"], r["incident_id"]) for r in told
                        ]
                        yield sse(event, "\n".join(lines))
                    else:
                        yield sse(event, feed_line(event, text, now_ms))
            before = after
            if time.monotonic() - quiet_since > KEEPALIVE_S:
                quiet_since = time.monotonic()
                yield ": keepalive\n\n"
