"""Who may approve a remediation, and the decision node.

The approver is a verified identity, never a field of a request body or anything a model
wrote: the Slack user of a click whose signature checked out (`source='slack'`, identity =
the Slack user id; for a person the world file gives an email and no Slack id, the email Slack
holds for that user), or the web's signed-in person (`source='web'`, identity = the email or
name the authenticating proxy vouched for). They must be a member of a team owning the
remediation's component (the default team when none owns it: the root route), or on one of
those teams' `approvers:` list in the world file. Anyone else is refused with the reason, and
nothing changes.

An approval is a node, `(:Remediation)-[:APPROVED_BY]->(:Approval {by, identity, source, at})`,
a rejection `(:Remediation)-[:REJECTED_BY]->(:Rejection {…})`; only a remediation still
`proposed` can be decided, in one query, so a double click or two people at once decide once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from adapters.falkordb import TenantGraph
from agents.act.run import Credentials, missing_credential

Source = Literal["slack", "web"]


@dataclass(frozen=True)
class Approver:
    """A verified identity: a Slack user id (`slack`), or an email or name (`web`). `email`:
    for a Slack user, the email Slack holds for them (`users.info`), when asked: it matches a
    person the world file gives an email and no `slack_user_id`. `name`: the name the world
    knows them by, when known: a refusal names them by it rather than by a Slack id."""

    identity: str
    source: Source
    email: str | None = None
    name: str | None = None


class Refused(Exception):
    """The decision was refused; `status` is the HTTP status that says why (403: not allowed,
    404: no such remediation, 409: not decidable now); the message says why in words."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def _matches(person: dict[str, Any], who: Approver) -> bool:
    if who.source == "slack":
        if person.get("slack_user_id"):
            return bool(person["slack_user_id"] == who.identity)
        email = (person.get("email") or "").casefold()
        return bool(who.email) and bool(email) and email == (who.email or "").casefold()
    wanted = who.identity.strip().casefold()
    email = (person.get("email") or "").casefold()
    return wanted in (email, str(person.get("name") or "").casefold()) and bool(wanted)


def authorised(row: dict[str, Any], who: Approver) -> str:
    """The person's name when `who` may decide the remediation of `row` (a `remediation_get`
    row). Raises `Refused` (403) naming `who` (by `name` when known, else "Slack user 'U…'" or
    "signed-in person '…'"), the teams and why not."""
    teams = row["teams"]
    for team in teams:
        for person in (*team["members"], *team["approvers"]):
            if _matches(person, who):
                return str(person["name"])
    names = ", ".join(t["team"] for t in teams) or "no team (the world names no default team)"
    how = "Slack user" if who.source == "slack" else "signed-in person"
    named = who.name or f"{how} {who.identity!r}"
    raise Refused(
        403,
        f"{named} may not decide this remediation: only members of {names} "
        f"(owning {row['remediation']['component']}) or people on their `approvers:` list in "
        "the world file may",
    )


def decide(
    graph: TenantGraph, remediation_id: str, who: Approver, approve: bool, enabled: bool,
    incident_id: str | None = None, creds: Credentials | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Approve (enqueue its one `remediate` task) or reject a proposed remediation as `who`.
    `creds`: what this process's remediations may use; given, an approval of one that could
    not run (`run.missing_credential`) is refused.

    Returns `{id, status, fresh, by, at, source}` (`fresh` false: it was decided already, by
    this same decision: a double click). Raises `Refused`: 404 unknown remediation (or one of
    another incident than `incident_id`), 409 actions off or a setting it needs not set
    (approval only), incident no longer open, or decided the other way already; 403 a person
    who may not decide it.
    """
    row = graph.one("remediation_get", {"remediation_id": remediation_id})
    if row is None or (incident_id is not None and row["incident_id"] != incident_id):
        raise Refused(404, f"no remediation {remediation_id!r} on this incident")
    if approve and not enabled:
        raise Refused(
            409, "actions are off (BLAST_ACTIONS_ENABLED=false): a remediation is only shown, "
            "never run",
        )  # fmt: skip
    missing = missing_credential(row["remediation"].get("type"), creds) if creds else None
    if approve and missing and row["remediation"].get("status") == "proposed":
        raise Refused(409, f"it cannot run here: {missing}: ask an operator to set it first")
    by = authorised(row, who)
    status = row["remediation"]["status"]
    if status == "proposed" and row["incident_status"] != "open":
        raise Refused(409, f"the incident is {row['incident_status']}: nothing to remediate")
    decision = "approved" if approve else "rejected"
    result = graph.one(
        "decide_remediation",
        {"remediation_id": remediation_id, "decision": decision, "by": by,
         "identity": who.identity, "source": who.source},
    )  # fmt: skip
    assert result is not None  # remediation_get found it; remediations are never deleted
    node = result["approval"] if approve else result["rejection"]
    if node is None:  # decided the other way (or already past approval)
        other = result["approval"] or result["rejection"] or {}
        raise Refused(
            409, f"the remediation is already {result['status']}"
            + (f" (by {other.get('by')})" if other.get("by") else ""),
        )  # fmt: skip
    return {"id": result["id"], "status": result["status"], "fresh": result["fresh"],
            "by": node["by"], "at": node["at"], "source": node["source"]}  # fmt: skip
