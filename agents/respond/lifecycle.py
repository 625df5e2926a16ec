"""After the page: acknowledge and resolve an incident, from Slack, the API or the web page,
each recorded under a person's name (`slack_name`, `web_name`).

Both are one short graph write each (`acknowledge_incident.cypher`, `resolve_incident.cypher`)
on the database clock, so callers that must answer quickly (Slack wants an answer in 3 s) only
record; the responder's `notify_state` task edits the page afterwards (acknowledged: who and
when; resolved: one resolve notice in the thread, the ticket closed, the page restated). Each
takes effect once: a repeat, from any source, changes nothing and says so (`fresh` False).

An incident merged into another is acknowledged or resolved where its alerts went
(`merged_into`), so a click on an older page still counts.
"""

from __future__ import annotations

from typing import Any

from adapters.falkordb import TenantGraph

#: How far `merged_into` is followed (a chain of merges is short; a cycle must not loop).
MERGE_HOPS = 5


class NotOpen(ValueError):
    """The incident is resolved already (nothing to acknowledge)."""


def _target(graph: TenantGraph, incident_id: str) -> dict[str, Any] | None:
    """The incident, or the one it was merged into (followed up to `MERGE_HOPS`), or None."""
    row = graph.one("incident_get", {"incident_id": incident_id})
    for _ in range(MERGE_HOPS):
        if row is None or row["status"] != "merged" or not row["merged_into"]:
            return row
        row = graph.one("incident_get", {"incident_id": row["merged_into"]})
    return row


def acknowledge(graph: TenantGraph, incident_id: str, by: str) -> dict[str, Any]:
    """Acknowledge the incident as `by` (a person's name). Returns `{id, status,
    acknowledged_at (ms UTC), acknowledged_by, fresh}`: `fresh` False when someone had
    acknowledged it already (their name and time are returned). Raises `LookupError` when no
    such incident exists, `NotOpen` when it is resolved, `GraphUnavailable`."""
    found = _target(graph, incident_id)
    if found is None:
        raise LookupError(f"no incident {incident_id!r}")
    if found["status"] != "open":
        raise NotOpen(f"incident {found['id']} is {found['status']}: nothing to acknowledge")
    row = graph.one("acknowledge_incident", {"incident_id": found["id"], "by": by})
    if row is None:  # deleted meanwhile (retention)
        raise LookupError(f"no incident {incident_id!r}")
    return row


def resolve(graph: TenantGraph, incident_id: str, by: str) -> dict[str, Any]:
    """Resolve the incident as `by` (a person's name). Returns `{id, status, resolved_at (ms
    UTC), resolved_by, fresh}`: `fresh` False when it was resolved already. Raises
    `LookupError` when no such incident exists, `GraphUnavailable`."""
    found = _target(graph, incident_id)
    if found is None:
        raise LookupError(f"no incident {incident_id!r}")
    row = graph.one("resolve_incident", {"incident_id": found["id"], "by": by})
    if row is None:
        raise LookupError(f"no incident {incident_id!r}")
    return row


def slack_name(graph: TenantGraph, user_id: str | None, fallback: str | None) -> str:
    """A person's name for a Slack user: the world's person with that `slack_user_id`, else
    `fallback` (the name Slack sent), else the id."""
    if user_id:
        row = graph.one("person_by_slack_id", {"slack_user_id": user_id})
        if row is not None and row["name"]:
            return str(row["name"])
    return fallback or user_id or "someone"


def web_name(graph: TenantGraph, identity: str) -> str:
    """A person's name for the web's signed-in `identity` (an email the viewer token or the
    authenticating proxy gives, or a name): the world's person with that email (case aside),
    else `identity` itself, which stays their identity when no member matches."""
    if "@" in identity:
        row = graph.one("person_by_email", {"email": identity})
        if row is not None and row["name"]:
            return str(row["name"])
    return identity
