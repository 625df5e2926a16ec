"""What the acting agent says in the page's thread and on the ticket: the proposal (with
Approve / Reject when actions are on, and the fix's record on earlier incidents: `runs` reads
it, `record` says it), the proposal edited once decided (`decided`: no buttons, who decided),
the run, and the verification's outcome.

Notices are data (`adapters.notices`): raw values, escaped by each adapter's renderer.
"""

from __future__ import annotations

from typing import Any

from adapters.falkordb import TenantGraph
from adapters.notices import FollowUp, Person, Span, TicketUpdate, fmt_ms
from adapters.notify import OutboundMessage
from adapters.slack import actions

#: Slack action ids of the proposal's buttons (button value = the remediation id).
APPROVE, REJECT = actions.APPROVE_REMEDIATION, actions.REJECT_REMEDIATION
#: Earlier runs of the same fix a proposal names, newest first.
RECORD_RUNS = 3
#: Failed verifications in a row, on the same component, after which a proposal warns.
FAILED_IN_A_ROW = 2
#: Characters of a verification's detail a proposal quotes.
DETAIL_CHARS = 200
#: How a verification's outcome reads in a fix's record.
OUTCOMES = {"verified": "verified", "failed": "failed verification",
            "unknown": "verification unknown"}  # fmt: skip


def intent(remediation: dict[str, Any], what: str) -> str:
    """An intent id of a message about a remediation, e.g.
    `incident:inc-1:remediation:pb-1:proposed`."""
    return f"incident:{remediation['incident_id']}:remediation:{remediation['playbook_id']}:{what}"


def _thread(
    intent_id: str, row: dict[str, Any], spans: list[Span], reply_to: str | None, **extra: Any
) -> OutboundMessage:
    notice = FollowUp(
        about="remediation", incident_id=row["incident_id"],
        title=row["title"] or row["incident_id"], severity=row["severity"] or "unknown",
        text=spans, **extra,
    )  # fmt: skip
    return OutboundMessage(
        intent_id=intent_id, incident_id=row["incident_id"], kind="followup",
        reply_to=reply_to, opened_at_ms=row["opened_at"], notice=notice,
    )  # fmt: skip


def runs(graph: TenantGraph, remediation: dict[str, Any]) -> list[dict[str, Any]]:
    """The earlier runs of `remediation`'s fix (its playbook's) on its component, newest first,
    at most `RECORD_RUNS`: rows of `cypher/remediation_history.cypher`. Raises
    `GraphUnavailable`."""
    return graph.rows("remediation_history", {
        "playbook_id": remediation["playbook_id"], "component": remediation["component"],
        "remediation_id": remediation["id"], "limit": RECORD_RUNS,
    })  # fmt: skip


def record(earlier: list[dict[str, Any]], component: str) -> str | None:
    """What a proposal says of the fix's record (`earlier`: `runs`, newest first): "Its record:
    last run on inc-1 at <time UTC>: failed verification (<detail>); before that on …", and,
    when its last `FAILED_IN_A_ROW` or more runs on `component` all failed verification, a
    warning that says so (it is proposed all the same: a person decides). None before any run."""
    if not earlier:
        return None
    said = []
    for n, run in enumerate(earlier):
        outcome = OUTCOMES.get(run["outcome"] or "", "not verified yet")
        detail = (run["detail"] or "")[:DETAIL_CHARS]
        said.append(
            f"{'last run' if n == 0 else 'before that'} on {run['incident_id']} at "
            f"{fmt_ms(run['ran_at'])}: {outcome}" + (f" ({detail})" if detail else "")
        )
    text = f"Its record: {'; '.join(said)}."
    failed = next((n for n, r in enumerate(earlier) if r["outcome"] != "failed"), len(earlier))
    if failed >= FAILED_IN_A_ROW:
        text += (
            f" It failed verification on its last {failed} runs on {component}: approve it "
            "only if something changed since."
        )
    return text


def proposed(
    row: dict[str, Any], what: str, enabled: bool, reply_to: str | None,
    earlier: list[dict[str, Any]] | None = None, cannot_run: str | None = None,
) -> OutboundMessage:  # fmt: skip
    """The proposal in the thread. `row`: a `remediation_get` row; `what`: `spec.describe`;
    `earlier`: the fix's earlier runs (`runs`), whose record it states (`record`). With
    actions off it says what would be proposed and has no button; so it does when it
    `cannot_run` (`run.missing_credential`: a setting it needs is not set), saying why,
    rather than ask for an approval that would fail."""
    rem = row["remediation"]
    teams = ", ".join(t["team"] for t in row["teams"]) or "the owning team"
    head = [Span(text="Playbook "), Span(text=row["playbook_title"] or rem["playbook_id"],
            strong=True), Span(text=": its checks held for "),
            Span(text=rem["component"], strong=True), Span(text=". ")]  # fmt: skip
    known = record(earlier or [], rem["component"])
    history = [Span(text=f" {known}")] if known else []
    if not enabled:
        tail = f"It would propose: {what}. Actions are off (BLAST_ACTIONS_ENABLED=false): " \
            "nothing will run."  # fmt: skip
        return _thread(intent(rem, "proposed"), row, [*head, Span(text=tail), *history],
                       reply_to)  # fmt: skip
    if cannot_run:
        tail = (
            f"Proposed remediation: {what}. It cannot run here: {cannot_run}. Once an operator "
            f"sets it and restarts blast-radius, a member or approver of {teams} can approve it "
            "on the incident's web page."
        )
        return _thread(intent(rem, "proposed"), row, [*head, Span(text=tail), *history],
                       reply_to)  # fmt: skip
    tail = (
        f"Proposed remediation: {what}. It runs once, after a member or approver of {teams} "
        "approves it, and is verified afterwards."
    )
    return _thread(intent(rem, "proposed"), row, [*head, Span(text=tail), *history], reply_to,
                   remediation_id=rem["id"])  # fmt: skip


def decided(row: dict[str, Any], what: str, proposal_ref: str) -> OutboundMessage:
    """The proposal (ref `proposal_ref`) restated once it is decided (kind `update`: Slack
    edits it in place, intent `…:decided`): what was proposed, then who decided it, how and
    when ("Approved by Cy Example (in Slack) at …: it runs once now, and is verified
    afterwards." / "Rejected by Cy Example (on the web) at …: it will not run."), with no
    Approve / Reject buttons. `row`: a `remediation_get` row with its approval or rejection."""
    rem = row["remediation"]
    approved = row["approval"] is not None
    decision = row["approval"] or row["rejection"] or {}
    how = {"slack": " (in Slack)", "web": " (on the web)"}.get(decision.get("source") or "", "")
    at = f" at {fmt_ms(decision['at'])}" if decision.get("at") else ""
    then = ("it runs once now, and is verified afterwards." if approved
            else "it will not run.")  # fmt: skip
    spans = [
        Span(text="Playbook "), Span(text=row["playbook_title"] or rem["playbook_id"], strong=True),
        Span(text=": its checks held for "), Span(text=rem["component"], strong=True),
        Span(text=f". Proposed remediation: {what}. "),
        Span(text=f"{'Approved' if approved else 'Rejected'} by {decision.get('by') or 'someone'}",
             strong=True),
        Span(text=f"{how}{at}: {then}"),
    ]  # fmt: skip
    message = _thread(intent(rem, "decided"), row, spans, proposal_ref)
    return message.model_copy(update={"kind": "update"})


def started(
    row: dict[str, Any], what: str, ref: str, outcome: str, reply_to: str | None,
    merge_within: str | None = None,
) -> OutboundMessage:  # fmt: skip
    """The run, in the thread: what ran, who approved it, and the outside reference. A fix
    that is a pull request (`merge_within`: its `verify_within` in words) has not run yet:
    it says so, and by when it must be merged and deployed to be verified."""
    rem, approval = row["remediation"], row["approval"] or {}
    how = "was already done by an earlier try" if outcome != "dispatched" else "ran"
    by = f"(approved by {approval.get('by') or 'unknown'} via {approval.get('source') or '?'})"
    text = f"Remediation {how}: {what} {by}. {ref}. Verifying it now."
    if merge_within is not None:
        opened = "was already opened by an earlier try" if outcome != "dispatched" else "opened"
        text = (
            f"Pull request {opened}: {what} {by}. {ref}. Nothing changes until it is merged "
            f"and deployed: it is verified within {merge_within} of now, and fails "
            "verification if the alerts still fire then."
        )
    return _thread(intent(rem, "started"), row, [Span(text=text)], reply_to)


#: What a person does once a remediation failed to run: said in the thread and on the page.
RUN_FAILED_NEXT = (
    "It is not tried again on this incident (an approval runs it once, and cannot be given "
    "again): run it by hand if it is still needed; a later incident proposes it again."
)


def run_failed(
    row: dict[str, Any], what: str, reason: str, reply_to: str | None, tries: int = 1
) -> OutboundMessage:
    """A run that a retry cannot help, or whose tries (`tries`, its Attempts) are used up, in
    the thread, with what to do next (`RUN_FAILED_NEXT`)."""
    after = f" after {tries} tries" if tries > 1 else ""
    text = f"Remediation failed to run{after}: {what}: {reason.rstrip('.')}. {RUN_FAILED_NEXT}"
    return _thread(intent(row["remediation"], "run-failed"), row, [Span(text=text)], reply_to)


def verification(
    row: dict[str, Any], outcome: str, detail: str, reply_to: str | None,
    paged: dict[str, Any] | None = None, escalates: bool = False,
) -> OutboundMessage:  # fmt: skip
    """The verifier's outcome in the thread; a failed one names the on-call again (`paged`:
    who the page named), so Slack mentions them in the thread, and, when `escalates`, says
    that its escalation policy runs again (any acknowledgement is cleared then: the page
    restated says it no longer is; an incident nobody acknowledged never was)."""
    words = {"verified": "Remediation verified", "failed": "Remediation did NOT work",
             "unknown": "Remediation outcome unknown"}  # fmt: skip
    text = f"{words[outcome]}: {detail.rstrip('.')}."
    extra: dict[str, Any] = {}
    if outcome == "failed":
        text += " Paging the on-call again"
        text += (": its escalation policy runs again from now until someone acknowledges it."
                 if escalates else ".")  # fmt: skip
        if paged:
            extra["person"] = Person(name=paged.get("person"), email=paged.get("email"),
                                     slack_user_id=paged.get("slack_user_id"))  # fmt: skip
    spans = [Span(text=text)]
    return _thread(intent(row["remediation"], f"verification:{outcome}"), row, spans, reply_to,
                   **extra)  # fmt: skip


def verification_ticket(
    row: dict[str, Any], what: str, outcome: str, detail: str, ticket: str | None
) -> OutboundMessage:
    """The verifier's outcome as a ticket comment (`ticket`: the issue's ref)."""
    approval = row["approval"] or {}
    note = (
        f"Remediation ({what}) approved by {approval.get('by') or 'unknown'}: "
        f"{OUTCOMES.get(outcome, outcome)}: {detail.rstrip('.')}."
    )
    notice = TicketUpdate(incident_id=row["incident_id"], title=row["title"] or
                          row["incident_id"], note=note, close=False)  # fmt: skip
    return OutboundMessage(
        intent_id=intent(row["remediation"], "verification-ticket"),
        incident_id=row["incident_id"], kind="ticket-update", reply_to=ticket, notice=notice,
    )  # fmt: skip
