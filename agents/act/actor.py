"""The acting agent: runs `propose_remediation`, `edit_proposal`, `remediate` and
`verify_remediation` tasks (see `agents.act`). Messages go through `messenger` (the page's
thread) and `tickets` (a comment on the incident's ticket), each once per intent through
`TaskRun.act`.

A thread message Slack refuses for good (the page's channel archived or without the bot since
the page) never stops what follows it: it goes along the root route as a message of its own,
else a copy goes to the outbox (`agents.respond.fallback`), and the task goes on, so a fix
that ran is still verified and a failed verification still retriggers the incident.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from adapters.notify import AdapterError, Notifier, OutboundMessage
from adapters.prometheus import Prometheus
from agents.act import notices, run, spec, verify
from agents.respond import escalation
from agents.respond.fallback import no_route, paged_route, root_route, tell
from agents.tasks.coordination import TaskRun
from agents.tasks.kinds import handled_by

log = logging.getLogger(__name__)

#: The longest wait between two looks for a proposal not said yet (`Actor._edit_proposal`).
PROPOSAL_WAIT_MAX_MS = 60_000


def page_refs(task: TaskRun, incident_id: str) -> tuple[str | None, str | None]:
    """(the page's ref: the thread to reply in, the ticket's ref), None where none went out."""
    task.flush_records()
    refs = {r["intent_id"]: r["external_ref"]
            for r in task.graph.rows("incident_actions", {"incident_id": incident_id})}  # fmt: skip
    return (refs.get(f"incident:{incident_id}:initial-notification"),
            refs.get(f"incident:{incident_id}:ticket"))  # fmt: skip


class Actor:
    """Proposes, runs and verifies remediations. `enabled`: `BLAST_ACTIONS_ENABLED` (off:
    proposals only say what would run; nothing runs); `creds`: what the remediation adapters
    need; `prometheus`: the verifier's evidence, one for all tenants or one per graph name
    (None: only alerts can verify); `fallback`: where a message Slack refuses for good is
    copied when no channel of the root route takes it (the outbox); `default_channel`:
    `SLACK_DEFAULT_CHANNEL`, the root route's last channel."""

    kinds = handled_by("act")

    def __init__(
        self, messenger: Notifier, tickets: Notifier, enabled: bool, creds: run.Credentials,
        prometheus: Prometheus | dict[str, Prometheus] | None = None,
        fallback: Notifier | None = None, default_channel: str | None = None,
    ) -> None:  # fmt: skip
        self.messenger = messenger
        self.fallback = fallback
        self.default_channel = default_channel
        self.tickets = tickets
        self.enabled = enabled
        self.creds = creds
        self.prometheus = prometheus

    def run(self, task: TaskRun) -> None:
        """Handle one claimed task. Raises `LeaseLost`, `GraphUnavailable` or a retryable
        `AdapterError` (the worker retries after reconciling)."""
        kind = task.claim.kind
        remediation_id = task.claim.task_id.partition(":")[2]
        row = task.graph.one("remediation_get", {"remediation_id": remediation_id})
        if row is None:
            task.complete("remediation missing")
            return
        if kind == "propose_remediation":
            self._propose(task, row)
        elif kind == "edit_proposal":
            self._edit_proposal(task, row)
        elif kind == "remediate":
            self._remediate(task, row)
        else:
            self._verify(task, row)

    def _propose(self, task: TaskRun, row: dict[str, Any]) -> None:
        """Say in the page's thread what is proposed (Approve / Reject when actions are on),
        with the fix's record on earlier incidents (`notices.record`)."""
        page, _ = page_refs(task, row["incident_id"])
        if page is None:  # nobody was paged (a preference): the web page still shows it
            task.complete("no thread to propose in")
            return
        remediation = run.stored_spec(row)
        what = spec.describe(remediation)
        earlier = notices.runs(task.graph, row["remediation"])
        # a setting it needs is missing: said now, not after a person approved it
        cannot = run.missing_credential(remediation.type, self.creds) if self.enabled else None
        self._say(task, notices.proposed(row, what, self.enabled, page, earlier, cannot))
        task.complete(run.proposal_outcome(self.enabled, cannot))

    def _edit_proposal(self, task: TaskRun, row: dict[str, Any]) -> None:
        """Once decided, edit the proposal's message once (intent `…:decided`, kind `update`:
        Slack's `chat.update`) to say who approved or rejected it, with no Approve / Reject
        buttons left to click. While the proposal is still to be said (its `propose_remediation`
        task not done: a decision on the web can come first), wait for it, paused, 1 s at first
        and at most `PROPOSAL_WAIT_MAX_MS` between looks. Nothing to edit when no proposal went
        out as a message of its own (nobody paged, or only its outbox copy). An edit Slack
        refuses for good (the channel archived since) is copied to the outbox
        (`…:decided:fallback`) and the task completes: the decision itself is in the graph."""
        rem = row["remediation"]
        if row["approval"] is None and row["rejection"] is None:
            task.complete(f"remediation is {rem['status']}: nothing decided")
            return
        tasks = task.graph.rows("incident_tasks", {"incident_id": row["incident_id"]})
        proposing = [t for t in tasks if t["id"] == f"propose:{rem['id']}"]
        if proposing and proposing[0]["status"] in ("open", "claimed", "paused"):
            wait_ms = min(PROPOSAL_WAIT_MAX_MS, 1000 * 2 ** min(task.pauses, 10))
            task.pause(int(time.time() * 1000) + wait_ms, "waiting for the proposal to be said")
            return
        task.flush_records()
        said = {a["intent_id"]: a for a in task.graph.rows(
            "incident_actions", {"incident_id": row["incident_id"]})}  # fmt: skip
        proposal = said.get(notices.intent(rem, "proposed"))
        if proposal is None or proposal["status"] != "sent" or not proposal["external_ref"]:
            task.complete("no proposal message to edit")
            return
        what = spec.describe(run.stored_spec(row))
        edit = notices.decided(row, what, str(proposal["external_ref"]))
        ref = tell(task, self.messenger, edit, self.fallback, no_route, "proposal edit",
                   self.default_channel)  # fmt: skip
        # Slack's edit answers with the proposal's own ref; any other is the fallback's copy
        copied = self.fallback is not None and self.fallback is not self.messenger
        task.complete(
            "proposal edit not delivered" if ref is None
            else f"proposal edit copied to {self.fallback.name}"
            if copied and ref != edit.reply_to and self.fallback is not None
            else "proposal edited"
        )  # fmt: skip

    def _remediate(self, task: TaskRun, row: dict[str, Any]) -> None:
        """Run the approved remediation once (`agents.act.run`), then enqueue its check."""
        rem = row["remediation"]
        if not self.enabled:
            log.warning("remediation %s approved but actions are off; not running it", rem["id"])
            task.complete("actions are off")
            return
        if rem["status"] not in ("approved", "running"):
            task.complete(f"remediation is {rem['status']}")
            return
        remediation = run.stored_spec(row)
        what = spec.describe(remediation)
        tried = task.fenced(
            "begin_attempt",
            {"remediation_id": rem["id"], "task_attempt": task.claim.attempts},
        )
        ends = {"remediation_id": rem["id"], "n": tried["n"]}
        page, _ = page_refs(task, row["incident_id"])
        try:
            adapter = run.Tracked(run.adapter_for(remediation, self.creds))
            ref = task.act(adapter, run.message(row, what))
        except AdapterError as exc:
            gives_up = not exc.retryable or task.last_attempt
            # a runner restarting is waited for minutes, not seconds (`run.retry_wait_s`),
            # through the worker's retry-after; an outside system's own Retry-After wins
            wait_s = exc.retry_after_s or run.retry_wait_s(task.claim.attempts)
            then = "" if gives_up else (
                f" (tried again in {escalation.fmt_after(int(wait_s * 1000))})" if wait_s
                else " (tried again at once)"
            )  # fmt: skip
            task.flush_records()
            task.graph.one("end_attempt", ends | {
                "outcome": f"error: {str(exc)[:450]}{then}", "external_ref": None,
                "status": "failed" if gives_up else "running",
            })  # fmt: skip
            if not gives_up:
                exc.retry_after_s = wait_s or None
                raise
            if page is not None:
                said = notices.run_failed(row, what, str(exc)[:300], page, int(tried["n"]))
                self._say(task, said)
            task.complete("failed")
            return
        # the run's checkpoint (its ref in the task's steps); this try's own outcome is the
        # Attempt's: a resumed try reconciles, whatever the first one did
        task.step("ran", {"intent_id": rem["intent_id"]},
                  lambda: {"ref": ref, "outcome": adapter.outcome})  # fmt: skip
        task.flush_records()
        task.graph.one("end_attempt", ends | {
            "outcome": adapter.outcome, "external_ref": ref, "status": "running",
        })  # fmt: skip
        log.info("remediation %s: %s (%s)", rem["id"], adapter.outcome, ref)
        if page is not None:
            # a pull request changes nothing until a person merges it: the thread says so
            within = (
                escalation.fmt_after(int(remediation.verify_within.total_seconds() * 1000))
                if isinstance(remediation, spec.FlagdFlag) else None
            )  # fmt: skip
            # refused for good: along the root route or to the outbox; verified all the same
            self._say(task, notices.started(
                row, what, ref, adapter.outcome, page, merge_within=within))  # fmt: skip
        task.complete("ran", next_kind="verify_remediation", next_id=f"verify:{rem['id']}")

    def _verify(self, task: TaskRun, row: dict[str, Any]) -> None:
        """Look at the evidence until it verifies or `verify_within` is over (pausing in
        between), then record the outcome, say it, and move the remediation's trust."""
        rem = row["remediation"]
        if row["verification"] is not None:  # a retry after the outcome was written
            outcome, detail = row["verification"]["outcome"], row["verification"]["detail"]
        else:
            within_s = run.stored_spec(row).verify_within.total_seconds()
            deadline_ms = int(rem["ran_at"]) + int(within_s * 1000)
            seen: dict[str, Any] = {}
            n = 0
            source = (self.prometheus.get(task.graph.name) if isinstance(self.prometheus, dict)
                      else self.prometheus)  # fmt: skip
            while True:  # stored looks are replayed; the first new one is taken now
                stored = task.next_stored() is not None
                seen = task.step("verify_look", {"look": n},
                                 lambda: verify.look(task.graph, source, row))  # fmt: skip
                n += 1
                if seen["verdict"] is not None or not stored:
                    break
            now_ms = int(time.time() * 1000)
            if seen["verdict"] is None and now_ms < deadline_ms:
                wait_ms = int(verify.poll_s(within_s) * 1000)
                task.pause(min(now_ms + wait_ms, deadline_ms), f"verifying: {seen['detail']}")
                return
            outcome = seen["verdict"] or verify.final(seen)
            detail = seen["detail"]
            task.fenced("record_verification", {"remediation_id": rem["id"], "outcome": outcome,
                                                "detail": detail[:1000]})  # fmt: skip
        log.info("remediation %s verification: %s (%s)", rem["id"], outcome, detail)
        page, ticket = page_refs(task, row["incident_id"])
        paged = task.graph.one("incident_paged", {"incident_id": row["incident_id"]})
        who = json.loads(paged["result"]) if paged else None
        again, escalates = (self._retriggered(task, row["incident_id"], who)
                            if outcome == "failed" else ({}, False))  # fmt: skip
        if page is not None:
            said = notices.verification(row, outcome, detail, page, who, escalates)
            self._say(task, said, who)
        if ticket is not None:
            what = spec.describe(run.stored_spec(row))
            comment = notices.verification_ticket(row, what, outcome, detail, ticket)
            # a ticket has no root route: refused for good, it is copied to the outbox
            tell(task, self.tickets, comment, self.fallback, no_route, "verification comment")
        task.complete(f"verification {outcome}", **again)

    def _say(
        self, task: TaskRun, message: OutboundMessage, who: dict[str, Any] | None = None
    ) -> str | None:
        """Say `message` in the page's thread; when Slack refuses it for good, along the root
        route from the channel of the team the page went to (`who`, a route; else read from
        `incident_paged.cypher`, only then), else a copy to `fallback` (`<intent>:fallback`).
        Returns the ref that went out, or None when nothing could take it (logged: the task
        goes on). Raises `AdapterError` when a retry may still help, `LeaseLost`,
        `GraphUnavailable`."""

        def route() -> list[str]:
            if who is None:
                return paged_route(task.graph, message.incident_id, self.default_channel)
            return root_route(task.graph, who.get("channel"), self.default_channel)

        return tell(task, self.messenger, message, self.fallback, route, "remediation notice",
                    self.default_channel)  # fmt: skip

    @staticmethod
    def _retriggered(
        task: TaskRun, incident_id: str, who: dict[str, Any] | None
    ) -> tuple[dict[str, Any], bool]:
        """After a failed verification retriggered the incident (`record_verification.cypher`
        clears its acknowledgement): `(the TaskRun.complete arguments, whether the paged team's
        escalation policy runs again)`. The follow-up is `notify_state:retrigger:<k>:<id>`: the
        responder restates the page (no longer "acknowledged by …") and then enqueues the
        policy's round `retrigger:<k>`. None when the incident is not open or was not
        retriggered."""
        state = task.graph.one("escalation_state", {"incident_id": incident_id})
        if state is None or state["status"] != "open" or not state["retriggers"]:
            return {}, False
        round_ = f"retrigger:{state['retriggers']}"
        escalates = bool(escalation.follow_up(task.graph, incident_id, who, round_))
        return {"next_kind": "notify_state", "next_id": f"notify_state:{round_}:{incident_id}"}, (
            escalates
        )
