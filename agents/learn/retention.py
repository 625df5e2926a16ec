"""Retention: old incidents keep what memory needs and lose their bulky fields.

An incident resolved (or merged) more than `BLAST_RETENTION_DAYS` days ago is trimmed once
(`cypher/trim_incidents.cypher`): its alerts' labels, annotations, values and links become
empty, its finding loses its paths and ruled-out list, its finished tasks' steps (with their
stored results) are deleted except who was paged, and its finished investigations and cleared
notices are deleted. Its cause, finding summary and evidence, verdicts, actions and alerts
stay, so recall of past incidents and the learner still work, and the web and CLI views still
show it (with fewer details). `serve` runs it on a schedule from its start (gateway/ops/upkeep.py),
and later moves the incident out of the graph (gateway/ops/archive.py). Why: an untrimmed incident
takes about 20 KiB of FalkorDB's memory (docs/benchmarks.md "Memory").
"""

from __future__ import annotations

from adapters.falkordb import TenantGraph

#: Incidents trimmed per write: each write holds the graph's write lock, so keep it short.
TRIM_BATCH = 200
DAY_MS = 86_400_000


def trim_old_incidents(graph: TenantGraph, days: int, now_ms: int, batch: int = TRIM_BATCH) -> int:
    """Trim every incident resolved before `now_ms` (ms since the epoch, UTC) minus `days`
    days, `batch` per write; returns how many were trimmed. `days` 0 trims nothing (retention
    off). Raises `GraphUnavailable` when the database cannot answer (what was trimmed stays)."""
    if days <= 0:
        return 0
    before_ms = now_ms - days * DAY_MS
    trimmed = 0
    while True:
        rows = graph.rows("trim_incidents", {"before_ms": before_ms, "limit": batch})
        trimmed += len(rows)
        if len(rows) < batch:
            return trimmed
