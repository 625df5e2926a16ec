"""Preferences: what an engineer asks of the responder, stated in plain words in Slack.

"for database saturation, don't ping me on Slack, open a ticket with the raw slow-query lines"
becomes a proposed Fact {failure_kind: saturation, no_page: true, ticket: true, detail: "the raw
slow-query lines"}; the bot reads back what it understood and saves it only when the person
approves (the approved Fact SUPERSEDES the reading; both stay). Parsing is a few patterns, no
model: a reply that matches none of them is not a preference.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from adapters.falkordb import TenantGraph
from agents.failure_kinds import kind_in

NO_PAGE = re.compile(
    r"\b(?:don'?t|do not|never|no need to|stop)\s+(?:ping|page|notify|message|wake|mention)\w*\s+me"
    r"|\bno slack\b|\bnot on slack\b",
    re.IGNORECASE,
)
TICKET = re.compile(
    r"\b(?:open|file|create|raise|just)\s+(?:a\s+|an\s+)?(?:ticket|issue)", re.IGNORECASE
)
DETAIL = re.compile(r"\b(?:ticket|issue)\s+with\s+(?P<detail>[^,.;!]+)", re.IGNORECASE)


@dataclass(frozen=True)
class Preference:
    """A parsed preference: for which failure kind ('*' = all), page or not, ticket, detail."""

    failure_kind: str
    no_page: bool
    ticket: bool
    detail: str | None

    def readback(self) -> str:
        """The sentence the bot reads back for approval."""
        scope = "every incident" if self.failure_kind == "*" else f"{self.failure_kind} incidents"
        parts = []
        if self.no_page:
            parts.append("don't page you on Slack")
        if self.ticket:
            parts.append("open a ticket" + (f" with {self.detail}" if self.detail else ""))
        return f"For {scope}: " + "; ".join(parts) + "."


def parse_preference(text: str) -> Preference | None:
    """The preference stated in `text`, or None when it states none (no page/ticket wish)."""
    no_page, ticket = bool(NO_PAGE.search(text)), bool(TICKET.search(text))
    if not (no_page or ticket):
        return None
    detail = DETAIL.search(text)
    return Preference(
        failure_kind=kind_in(text) or "*",
        no_page=no_page,
        ticket=ticket,
        detail=detail.group("detail").strip() if detail else None,
    )


def propose(
    graph: TenantGraph,
    incident_id: str,
    fact_id: str,
    person: str,
    person_name: str | None,
    text: str,
    preference: Preference,
) -> dict[str, Any] | None:
    """Store the proposed Fact and enqueue its read-back. None when the incident is unknown."""
    return graph.one(
        "propose_fact",
        {
            "incident_id": incident_id, "id": fact_id, "person": person,
            "person_name": person_name, "failure_kind": preference.failure_kind,
            "no_page": preference.no_page, "ticket": preference.ticket,
            "detail": preference.detail, "text": text,
        },
    )  # fmt: skip


def approve(graph: TenantGraph, proposed_id: str, person: str) -> dict[str, Any] | None:
    """Approve a proposed preference (only its author may). None: nothing to approve."""
    return graph.one("approve_fact", {"proposed_id": proposed_id, "person": person})


def discard(graph: TenantGraph, proposed_id: str, person: str) -> dict[str, Any] | None:
    """Discard a proposed preference (only its author may). None: nothing to discard."""
    return graph.one("discard_fact", {"proposed_id": proposed_id, "person": person})


def current(
    graph: TenantGraph, people: list[str], failure_kind: str | None
) -> dict[str, Any] | None:
    """The newest approved, current preference of any of `people` for this failure kind."""
    rows = graph.rows("preferences_for", {"people": people, "failure_kind": failure_kind or "*"})
    return rows[0] if rows else None


def current_of(
    rows: list[dict[str, Any]], people: list[str], failure_kind: str | None
) -> dict[str, Any] | None:
    """`current` over approved, current preference rows already read (of any people and failure
    kinds, e.g. `respond_context.cypher`'s `preferences`): the newest approval among those of
    `people` for `failure_kind` or for all ('*'), as `preferences_for.cypher` orders them."""
    kinds = {failure_kind or "*", "*"}
    mine = [r for r in rows if r["person"] in people and r["failure_kind"] in kinds]
    mine.sort(key=lambda r: r["approved_at"] or 0, reverse=True)
    return mine[0] if mine else None
