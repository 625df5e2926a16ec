"""Playbooks a world file carries (`playbooks:`), the runbooks a team keeps in version control.

Each item has the shape of `POST /api/v1/playbooks` (`gateway.http.playbooks.PlaybookIn`:
title, component, failure_kind, checks, remediation, author) and an `id`, which is required
here: it is what makes a re-import update the playbook in place instead of adding another.

Import semantics (`write`): a playbook is created active at trust 0.5; a re-import updates its
title, checks, failure kind and remediation and keeps what memory earned (trust, helped,
misled, remediation trust), re-pinning it when the component changed; a playbook the file
listed before and no longer lists is retired (kept, never recalled), with the reason; listed
again, it is active again. A playbook a person retired by hand, or that retired after it
misled twice (`apply_verdict.cypher`), stays retired: the import says so with the reason and
how to bring it back (`blast-radius playbook restore ID`). An id that
already names a playbook from the API or the learner is taken over by the file (the file is
the team's word). World-file playbooks are trusted configuration and do not count against
`BLAST_MAX_PLAYBOOKS`.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field

from adapters.falkordb import TenantGraph
from agents.act import spec
from gateway.http.limits import Key
from gateway.http.playbooks import PlaybookIn

#: Why a playbook the file no longer lists is retired (the retired reason starts with it, so a
#: later import can tell its own retirements from a person's).
DROPPED = "no longer in "


class WorldPlaybook(PlaybookIn):
    """One item of a world file's `playbooks:`; `source` is set by the import."""

    id: Key
    source: str | None = Field(None, exclude=True)


def rows(playbooks: list[WorldPlaybook], default_source: str) -> list[dict[str, Any]]:
    """The `import_playbooks.cypher` rows of `playbooks` (JSON checks and remediation, as the
    API stores them)."""
    return [
        {"id": p.id, "component": p.component, "title": p.title,
         "failure_kind": p.failure_kind, "author": p.author,
         "checks_json": json.dumps([c.model_dump() for c in p.checks]),
         "remediation_json": spec.dump(p.remediation) if p.remediation else None,
         "remediation_type": p.remediation.type if p.remediation else None,
         "source": p.source or default_source}
        for p in playbooks
    ]  # fmt: skip


def stays_retired(playbook_id: str, reason: str | None) -> str:
    """The import report's note for a playbook the file lists that stays retired."""
    why = f" ({reason})" if reason else ""
    return (
        f"playbook {playbook_id} stays retired{why}: the file lists it but a re-import does "
        f"not undo that; `blast-radius playbook restore {playbook_id}` brings it back"
    )


def write(
    graph: TenantGraph, playbooks: list[WorldPlaybook], sources: list[str], now_ms: int
) -> tuple[list[str], list[str], list[str], list[str]]:
    """Write the world's playbooks and retire those a world-file source no longer lists.
    Returns `(new, changed, retired, notes)` lines for the import report (`notes`: listed
    playbooks that stay retired, with why). Raises `GraphUnavailable`."""
    new: list[str] = []
    changed: list[str] = []
    notes: list[str] = []
    params = {"playbooks": rows(playbooks, sources[0]), "now": now_ms, "dropped": DROPPED}
    for row in graph.rows("import_playbooks", params):
        where = f"playbook {row['id']} on {row['component']}"
        if row["status"] == "retired":
            notes.append(stays_retired(row["id"], row["retired_reason"]))
        if row["created"]:
            new.append(f"{where} (from {row['source']})")
        elif row["revived"]:
            changed.append(f"{where}: in the file again, active again")
        elif not row["same"]:
            changed.append(f"{where}: updated from the file (trust kept)")
    retired: list[str] = []
    for source in (s for s in sources if s.startswith("world:")):
        keep = [p.id for p in playbooks if (p.source or sources[0]) == source]
        params = {"source": source, "keep": keep, "now": now_ms,
                  "reason": f"{DROPPED}{source.removeprefix('world:')}"}  # fmt: skip
        retired += [f"playbook {row['id']}: {params['reason']}"
                    for row in graph.rows("retire_world_playbooks", params)]  # fmt: skip
    return new, changed, retired, notes
