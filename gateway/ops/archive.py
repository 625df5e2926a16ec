"""Archive: incidents resolved more than `BLAST_ARCHIVE_DAYS` ago leave the graph for a file.

Retention has two tiers (docs/benchmarks.md "Memory"). After `BLAST_RETENTION_DAYS` an incident
is trimmed in place (agents/learn/retention.py): it keeps its cause, finding summary, alerts and
actions, so recall and the learner still see it. After `BLAST_ARCHIVE_DAYS` it is written whole
(incident, finding, alerts, actions, tasks with their steps, as property maps) as one JSON line
to `<data>/archive/<tenant>.jsonl.gz` and then deleted from the graph. Why: every node costs
FalkorDB its index entries (about 150-330 bytes each, measured), so even a trimmed incident
takes about 10 KiB of the database's memory, and a year of incidents does not fit a small
server; on disk a gzipped record takes about 1 KiB.

The file is written (flushed and fsynced) before the delete, so a crash in between archives the
same incident twice, never loses one: readers take the last record of an id. An incident a
person or the learner still needs stays in the graph: one with a verdict or a playbook learned
from it, or with a task not finished (`cypher/archive_incidents.cypher`). What leaves with the
archive: recall of past incidents and "seen before" look back `BLAST_ARCHIVE_DAYS` at most, and
the API and web pages no longer show archived incidents (`blast-radius incident ID` reads the
archive when the graph has no such incident).
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

from adapters.falkordb import TenantGraph
from agents.learn.retention import DAY_MS

#: Incidents archived per read and per delete: a long read or write blocks the graph's writers
#: (measured: 200 per batch took 315 ms to read on a 10,000-component graph, 50 about 80).
ARCHIVE_BATCH = 50


def archive_path(data_dir: Path, tenant: str) -> Path:
    """The archive file of one tenant: `<data>/archive/<tenant>.jsonl.gz` (tenant from config)."""
    return data_dir / "archive" / f"{tenant}.jsonl.gz"


def append_records(path: Path, records: list[dict[str, Any]]) -> None:
    """Append `records` as JSON lines to the gzip file `path` (one gzip member per call, which
    gzip readers join), flushed and fsynced before returning. Raises `OSError`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n" for r in records)
    with path.open("ab") as raw:
        raw.write(gzip.compress(data.encode("utf-8"), compresslevel=6))
        raw.flush()
        os.fsync(raw.fileno())


def find_archived(path: Path, incident_id: str) -> dict[str, Any] | None:
    """The last archived record of `incident_id` in `path` (shape: {incident, finding, alerts,
    actions, tasks: [[task, [steps]]], archived_at}), or None (also when there is no archive).
    Reads the whole file (an archive is read by a person, rarely). Raises `OSError`."""
    if not path.exists():
        return None
    needle = json.dumps(incident_id)
    found = None
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            if needle in line:  # cheap filter before parsing
                record = json.loads(line)
                if record.get("incident", {}).get("id") == incident_id:
                    found = record
    return found


def archive_old_incidents(
    graph: TenantGraph, path: Path, days: int, now_ms: int, batch: int = ARCHIVE_BATCH
) -> int:
    """Archive to `path` and delete from `graph` every incident resolved before `now_ms` (ms
    since the epoch, UTC) minus `days` days that nothing still needs, `batch` at a time; returns
    how many left the graph. `days` 0 archives nothing. Raises `GraphUnavailable` when the
    database cannot answer and `OSError` when the file cannot be written (nothing is deleted
    then: the file is written first)."""
    if days <= 0:
        return 0
    before_ms = now_ms - days * DAY_MS
    deleted = 0
    while True:
        rows = graph.rows("archive_incidents", {"before_ms": before_ms, "limit": batch})
        if not rows:
            return deleted
        append_records(path, [row | {"archived_at": now_ms} for row in rows])
        ids = [row["incident"]["id"] for row in rows]
        gone = graph.rows("delete_incidents", {"ids": ids})
        deleted += len(gone)
        if len(rows) < batch or not gone:  # done, or changed in between: the next pass retries
            return deleted
