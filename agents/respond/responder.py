"""Responder: finds the owner and who is on call now, and sends the page and the ticket.

Every external action carries an intent id and goes through `TaskRun.act`, so a crashed or
resumed run never pages twice. An approved preference of the on-call person for the incident's
failure kind is obeyed (e.g. no Slack page, a ticket only), and the ticket says why.
- `incident:<id>:initial-notification` and `incident:<id>:ticket` (task `respond`);
- `incident:<id>:update:<reinvestigate task id>` when a re-investigation changed the finding
  after the page: its root cause, or an inconclusive one's candidates (task `notify_update`,
  whose id is `update:<reinvestigate task id>`; `update_intent`);
- `incident:<id>:readback:<fact id>`: a stated preference read back for approval, and
  `…:readback-answer:<fact id>` once it is approved or discarded (`readback`);
- `incident:<id>:cleared:<alert key>` per alert that clears, and `incident:<id>:ticket-resolved`
  when the last one clears (task `notify_cleared`, claimable only after the first page is out).

The page itself is restated with the incident's current state (kind `update`; Slack edits it
in place) when the ticket link is known (`…:ticket-link`), the incident resolves
(`…:resolved`), a re-investigation changes what the page says (the cause, an inconclusive
finding's candidates, the alerts on it: `…:page:<task id>`), and an engineer gives
a verdict (`…:page:notify_verdict:<verdict id>`, task `notify_verdict`).

Pages first: when an incident's investigation is not done `BLAST_PAGE_WITHIN_MS` after it was
created, the claim query creates its `page` task, which sends the page under the same intent
`…:initial-notification` with what triage knows (the alerting components' owners' on-call,
the alerts, "cause: under investigation"). The investigation's `respond` then finds the page
out: it pages the cause's on-call in their own channel when that is someone else (`…:repage:<task
id>`, a root message; `…:repage-note:<task id>` says so in the page's thread), tells the other
alerting teams, opens the ticket and edits the cause into the page (`…:diagnosis`). It waits
while the `page` task is unfinished, so the two never run at once.

After the page, a follow-up in its thread (cleared, resolved, diagnosis update, read-back), a
page edit or the ticket's closing comment that Slack or the tracker refuses for good (the
page's channel archived or without the bot since the page) never fails the task: a follow-up
goes along the root route as a message of its own, else a copy goes to the outbox; an edit or
a comment has nowhere else to go and is copied to the outbox (`agents.respond.fallback`).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Collection
from typing import Any, TypeVar

import redis

from adapters.falkordb import TenantGraph
from adapters.notices import FollowUp, Refusal
from adapters.notify import AdapterError, Notifier, OutboundMessage
from adapters.slack.refs import parse_ref
from agents.failure_kinds import dominant
from agents.investigate.checks import CHANGE_LOOKBACK_MS
from agents.investigate.decision import LEAD_BELOW
from agents.respond import escalation, flapping, maintenance, messages, preferences, routing
from agents.respond.fallback import fallback_copy, no_route, paged_route, tell
from agents.tasks.coordination import Claim, Intended, TaskRun
from agents.tasks.kinds import PAGE_KIND, handled_by

log = logging.getLogger(__name__)

T = TypeVar("T")

#: The kinds that send an incident's first page: the one after its diagnosis, and the one
#: before it when the diagnosis is late (`PAGE_KIND`).
FIRST_PAGE = ("respond", PAGE_KIND)
#: How long the `respond` task waits, paused, for an unfinished `page` task of its incident
#: before it looks again (ms): that page is claimed ahead of everything and takes tens of ms.
EARLY_PAGE_WAIT_MS = 250


def intent(incident_id: str, what: str) -> str:
    """The intent id of an action on an incident, e.g. `incident:inc-1:initial-notification`."""
    return f"incident:{incident_id}:{what}"


def update_intent(incident_id: str, task_id: str, taken: Collection[str]) -> str:
    """The intent id of the diagnosis update of `notify_update` task `task_id` (itself
    `update:<reinvestigate task id>`): `incident:<id>:update:<reinvestigate task id>`.

    Versions before this one said `update:` twice (`…:update:update:reinvestigate:…`). An
    update such a version reserved (`taken`: the incident's action intent ids, reserved or
    sent) and did not finish, its task retried after an upgrade, keeps that id: under the new
    one it would be a new action, and one already sent before a crash, whose outcome only the
    notifier knows (`TaskRun.act` asks `find` for the reserved id), would be sent again."""
    before = intent(incident_id, f"update:{task_id}")
    if before in taken:
        return before
    return intent(incident_id, task_id if task_id.startswith("update:") else f"update:{task_id}")


def link(ref: str | None) -> str | None:
    """A ticket reference that is a web link (`http(s)://…`), else None (e.g. `outbox:…`)."""
    return ref if ref and ref.startswith(("https://", "http://")) else None


def said(message: OutboundMessage, via: str, ref: str) -> None:
    """The operator's INFO line for a page or a ticket that went out: `paged Priya via slack`,
    `ticket acme/ops#12 opened` (GitHub) or `ticket outbox:… opened`."""
    if message.kind == "notification":
        person = getattr(message.notice, "person", None)
        name = person.name if person is not None else None
        log.info("paged %s via %s", name or "nobody by name (see the page)", via)
    elif message.kind == "ticket":
        log.info("ticket %s opened", ref.removeprefix("github:"))


def addressed(who: dict[str, Any] | None, channel: str | None) -> bool:
    """Whether a page to route `who` in `channel` (the first of its chain; None: no channel
    is known at all, the notifier's own default) reaches someone: the route names a person on
    call, or the page goes to a channel. False is "nobody paged" (no team on call, no channel:
    e.g. a world with no teams and no `SLACK_DEFAULT_CHANNEL`)."""
    return bool((who or {}).get("person")) or channel is not None


def attempt(page: OutboundMessage, channel: str | None, refused: list[Refusal]) -> OutboundMessage:
    """The page as sent to `channel` of its chain, saying which channels `refused` it before
    (`Responder._page`)."""
    notice = page.notice.model_copy(update={"refused": list(refused)})
    return page.model_copy(update={"channel": channel, "notice": notice})


def delivery(
    intent_id: str, channel: str, exc: AdapterError, refused: list[Refusal]
) -> dict[str, Any]:
    """A failed delivery attempt as a `TaskRun.deliveries` row: `refused` when the
    destination refused it, else `error`, with the system's reason."""
    return {
        "intent_id": intent_id, "channel": channel,
        "outcome": "refused" if exc.refused else "error",
        "reason": exc.reason or str(exc)[:200],
        "fallback_from": refused[-1].channel if refused else None,
    }  # fmt: skip


def respond_contexts(
    graph: TenantGraph, incident_ids: list[str], kind: str = "respond"
) -> dict[str, dict[str, Any]]:
    """`cypher/respond_context.cypher` rows by incident id (an incident that is gone has none);
    for a `page` task (`kind`), the lighter `cypher/page_context.cypher` rows."""
    if kind == PAGE_KIND:
        rows = graph.rows("page_context", {"incident_ids": incident_ids})
    else:
        rows = graph.rows(
            "respond_context", {"incident_ids": incident_ids, "lookback_ms": CHANGE_LOOKBACK_MS}
        )
    return {str(row["id"]): row for row in rows}


def _without_policy(row: dict[str, Any]) -> dict[str, Any]:
    """A `respond_context` owner or fallback row without the team's `escalation_policy_json`:
    the row `response_context.cypher` (or `default_route.cypher`) gives."""
    return {k: v for k, v in row.items() if k != "escalation_policy_json"}


class Responder:
    """Sends notifications through `messenger` and tickets through `tickets` (both `Notifier`s).

    `records`: where a copy of each "team told" follow-up goes when `messenger` keeps no record
    of its own (Slack alone: the outbox), so the people told can be listed afterwards.
    `fallback`: where a page or ticket its own adapter cannot take goes, and a follow-up, page
    edit or ticket comment refused for good (`_say`, `_restate`); `default_channel`:
    `SLACK_DEFAULT_CHANNEL`, the root route's last channel.
    """

    #: The responder role's kinds but those with an agent of their own (`escalation.Escalator`,
    #: `flapping.Reopener`, `agents.act.actor.Actor`).
    kinds = tuple(k for k in handled_by("respond") if k not in (escalation.KIND, flapping.KIND))

    def __init__(
        self,
        messenger: Notifier,
        tickets: Notifier,
        records: Notifier | None = None,
        fallback: Notifier | None = None,
        default_channel: str | None = None,
        public_url: str | None = None,
    ) -> None:
        self.messenger = messenger
        self.tickets = tickets
        self.records = records
        #: Where a page or ticket goes when its own adapter cannot take it (the outbox).
        self.fallback = fallback
        #: The last channel of the root route (`SLACK_DEFAULT_CHANNEL`).
        self.default_channel = default_channel
        #: `BLAST_PUBLIC_URL`: pages and tickets link to the incident's web page under it.
        self.public_url = public_url

    def read_ahead(self, graph: TenantGraph, claims: list[Claim]) -> dict[str, dict[str, Any]]:
        """The `respond_context` (or `page_context`) rows of a batch of claimed `respond` (or
        `page`) tasks, one query, by task id; other kinds read their own."""
        pages = {c.incident_id: c.task_id for c in claims if c.kind in FIRST_PAGE}
        if not pages:
            return {}
        read = respond_contexts(graph, list(pages), claims[0].kind)
        return {pages[k]: row for k, row in read.items()}

    def run(self, task: TaskRun) -> None:
        """Handle one claimed `respond`, `page`, `notify_cleared`, `notify_update`,
        `notify_verdict`, `notify_state` or `readback` task. Raises `LeaseLost`,
        `GraphUnavailable` or `AdapterError` (the worker releases the task for a retry).

        An incident merged into another meanwhile (triage moves its alerts while this task
        waits or runs) ends the task cleanly, even when a query of this run failed on it."""
        intended = self.plan(task)
        if intended is not None:
            intended.then()

    #: Kinds a worker's batch runs in phases (`plan`, `Worker.run_planned`): the first pages.
    planned = FIRST_PAGE

    def plan(self, task: TaskRun) -> Intended | None:
        """`run` up to the task's first message (a `page` task's page, `_page_early`; a
        `respond` task's page, `_respond`, or after an early page its first message in the
        thread or its ticket, `_cause_found`): its steps are taken (deferred) and that message
        is returned, with what sends it and the rest and completes the task (`Intended.then`),
        so a batch's first messages are reserved in one query, with what each reserves ahead,
        and those the outbox takes are sent together (`Worker.run_planned`). None: the task is
        done (or paused) without a message left to send, as every other kind is here."""
        return self._settled(task, lambda: self._run(task))

    def _settled(self, task: TaskRun, work: Callable[[], T]) -> T | None:
        """`work()`, or None when a query of it failed because the incident was merged into
        another meanwhile: the task is completed so (`run`)."""
        try:
            return work()
        except redis.ResponseError:
            row = task.graph.one("incident_get", {"incident_id": task.claim.incident_id})
            if row is None or row["status"] != "merged":
                raise
            log.info("incident %s was merged into %s while its %s task ran", row["id"],
                     row["merged_into"], task.claim.kind)  # fmt: skip
            task.complete(f"merged into {row['merged_into']}")
            return None

    def _run(self, task: TaskRun) -> Intended | None:
        """`plan`'s work: the first message's `Intended` (`page`, `respond`), else None (the
        task is done or paused)."""
        graph, incident_id = task.graph, task.claim.incident_id
        first = task.claim.kind in FIRST_PAGE
        if first:  # the page: everything it needs in one round trip
            incident = task.ahead or respond_contexts(graph, [incident_id], task.claim.kind).get(
                incident_id
            )
        else:
            incident = graph.one("response_incident", {"incident_id": incident_id})
        if incident is None:
            task.complete("incident missing")
            return None
        if incident["status"] == "merged":  # its alerts moved to another incident (triage)
            task.complete(f"merged into {incident['merged_into']}")
            return None
        alerts = sorted(incident.pop("alerts"), key=lambda a: (a["starts_at_ms"], a["key"]))
        if first and incident["hold_ms"] > 0:
            # an open incident just past the reach: the alert that links them may be on its
            # way (triage_alert's hold); waiting lets it merge them before anyone is paged
            held = int(incident["hold_ms"])
            task.pause(int(time.time() * 1000) + held, f"page held {held} ms for a linking alert")
            return None
        if first and maintenance.hold(task, incident, alerts):
            return None  # a quiet window: paged when it ends, if still open
        if task.claim.kind == PAGE_KIND:
            return self._page_early(task, incident, alerts)
        if task.claim.kind == "respond":
            early = incident["early_page"]
            if early in ("open", "claimed", "paused"):  # never both at once: one sends the page
                task.pause(int(time.time() * 1000) + EARLY_PAGE_WAIT_MS,
                           "waiting for the page sent before the diagnosis")  # fmt: skip
            elif early is not None and (root := self._paged(incident)) is not None:
                return self._cause_found(task, incident, alerts, root)
            else:
                return self._respond(task, incident, alerts)
        elif task.claim.kind == "notify_update":
            self._update(task, incident, alerts)
        elif task.claim.kind == "readback":
            self._readback(task, incident)
        elif task.claim.kind == "notify_verdict":
            self._restate(task, incident, alerts, f"page:{task.claim.task_id}")
            task.complete("page updated")
        elif task.claim.kind == "notify_state":
            self._state(task, incident, alerts)
        else:
            self._cleared(task, incident, alerts)
        return None

    def _respond(
        self, task: TaskRun, incident: dict[str, Any], alerts: list[dict[str, Any]]
    ) -> Intended | None:
        """Page and open the ticket. `incident` is the row of `respond_context.cypher`: every
        read below comes from it, so the page costs no further read. Returns the page to its
        first channel, whose `then` sends it (`_page`), tells the teams, opens the ticket and
        completes the task (`plan`: a batch's pages are reserved in one query); None when a
        preference says not to page: all of that but the page is done now."""
        components = [incident["root_cause"]] if incident["root_cause"] else []
        components += [c for c in (incident.get("candidates") or []) if c not in components]
        components += [
            a["component"] for a in alerts if a["component"] and a["component"] not in components
        ]
        owners = incident["owners"]
        who, pref = self._route(task, incident, components, alerts, incident["root_cause"])
        # before the page, so all three steps are written with its reservation (one round trip)
        teams = self._teams_to_tell(task, alerts, who, owners)
        note = None
        changes = sorted(incident["cited"], key=lambda c: c["at"], reverse=True)
        refs = {a["intent_id"]: a["external_ref"] for a in incident["actions"]}
        page_intent = intent(incident["id"], "initial-notification")
        page: OutboundMessage | None = None
        chain: list[str | None] = []
        if pref and pref["no_page"]:
            when = messages.fmt_ms(pref["approved_at"] or pref["stated_at"])[:10]
            note = f"Not paged on Slack, as {(who or {}).get('person')} asked on {when}"
            note += f" ({pref['detail']} below)." if pref["detail"] else "."
        else:
            page = messages.notification(
                page_intent, incident, alerts, who, changes, public_url=self.public_url
            )
            fallback = incident["fallback"][0] if incident["fallback"] else None
            chain = messages.page_channels(who, fallback, self.default_channel)
            # the ticket comes next: reserved with the page, one write fewer
            task.reserve_ahead(self.tickets, intent(incident["id"], "ticket"), "ticket")
        issue = self._ticket(incident, alerts, who, note)

        def rest() -> None:
            if page is not None:
                self._page(task, page, chain, refs, who)
            self._tell_teams(task, incident, alerts, who, refs, teams)
            if link(self._deliver(task, self.tickets, issue)):
                self._restate(task, incident, alerts, "ticket-link")
            task.complete(
                "notified", mark_notified=True, root_cause=incident["root_cause"],
                shows=messages.page_shows(incident, alerts),
                reached=addressed(who, chain[0]) if page is not None else None,
                **escalation.follow_up(task.graph, incident["id"], who if note is None else None),
            )  # fmt: skip

        if page is None:
            rest()
            return None
        return Intended(
            self.messenger, attempt(page, chain[0], []), lambda: self._settled(task, rest)
        )

    def _route(
        self,
        task: TaskRun,
        incident: dict[str, Any],
        components: list[str],
        alerts: list[dict[str, Any]],
        cause: str | None,
    ) -> tuple[Any, Any]:
        """Whom the page goes to (the owners of `components`, first owned first; the default
        route else) and that person's preference for the incident's dominant failure kind
        (`cause`'s, else the alerts'): `(who, preference)`, each a deferred step
        (`response_context`, `preferences`: `incident_paged.cypher` finds whom a page went to by
        these names), written with the page's reservation. `incident`: a `respond_context`
        row, so nothing more is read."""
        owners, default = incident["owners"], incident["fallback"]
        who = task.step(
            "response_context", {"components": components},
            lambda: routing.route_from(owners, components,
                                       lambda: default[0] if default else None,
                                       self.default_channel, incident.get("heartbeat")),
            touched=components, deferred=True,
        )  # fmt: skip
        kind = dominant(alerts, cause)
        people = [p for p in ((who or {}).get("slack_user_id"), (who or {}).get("person")) if p]
        pref = task.step(
            "preferences", {"people": people, "failure_kind": kind},
            lambda: preferences.current_of(incident["preferences"], people, kind)
            if people else None,
            deferred=True,
        )  # fmt: skip
        return who, pref

    def _paged(self, incident: dict[str, Any]) -> str | None:
        """The ref of the incident's page if it went out (its `initial-notification` Action
        sent, in a `respond_context` row's `actions`), else None."""
        page = intent(incident["id"], "initial-notification")
        sent = [a for a in incident["actions"] if a["intent_id"] == page and a["status"] == "sent"]
        return str(sent[0]["external_ref"]) if sent else None

    def _page_early(
        self, task: TaskRun, incident: dict[str, Any], alerts: list[dict[str, Any]]
    ) -> Intended | None:
        """The page deadline passed before the diagnosis (task `page`, which the claim query
        created): page now with what triage knows, under the page's own intent, "cause: under
        investigation". The route is the alerting components' owners' (steps named as in
        `_respond`, so `incident_paged.cypher` finds whom it paged); no team is told and no
        ticket opened yet: the investigation's `respond` does that with the cause
        (`_cause_found`). Nothing is sent when the finding is written by now (that `respond`
        pages with it) or a preference of the on-call says not to page on Slack (that
        `respond` follows it, as always). Returns the page to its first channel, whose `then`
        sends it (`_page`) and completes the task: a worker's batch of pages reserves them in
        one query and appends them to the outbox together first (`Worker.run_planned`); None
        when nothing is to be sent."""
        if incident["planner"] is not None:
            task.complete("diagnosis in before the deadline page: respond pages with it")
            return None
        alerting = list(dict.fromkeys(a["component"] for a in alerts if a["component"]))
        who, pref = self._route(task, incident, alerting, alerts, None)
        if pref and pref["no_page"]:
            task.complete("not paged before the diagnosis: a preference of the on-call")
            return None
        page = messages.notification(
            intent(incident["id"], "initial-notification"), incident, alerts, who,
            public_url=self.public_url, investigating=True,
        )  # fmt: skip
        fallback = incident["fallback"][0] if incident["fallback"] else None
        chain = messages.page_channels(who, fallback, self.default_channel)

        def send() -> None:
            self._page(task, page, chain, {}, who)
            task.complete(
                "paged before the diagnosis", mark_notified=True, root_cause=None,
                shows=messages.page_shows(incident, alerts), reached=addressed(who, chain[0]),
                **escalation.follow_up(task.graph, incident["id"], who),
            )  # fmt: skip

        return Intended(
            self.messenger, attempt(page, chain[0], []), lambda: self._settled(task, send)
        )

    def _cause_found(
        self, task: TaskRun, incident: dict[str, Any], alerts: list[dict[str, Any]], root: str
    ) -> Intended:
        """The diagnosis is in, and the page (ref `root`) went out before it (`_page_early`):
        page the cause's on-call in their own channel when the page named someone else, with a
        note in the thread (`_page_cause`), and tell the
        other alerting teams (as `_page_new_cause` does after a re-investigation), open the
        ticket, and edit the cause into the page (intent `…:diagnosis`). Nothing is paged twice.

        Everything comes from `incident`, the `respond_context` row: whom the page named
        (`paged`), the cause's route and the teams to tell (`owners`), the refs (`actions`, then
        this run's own outcomes), and the edit's changes, verdicts and refused deliveries; the
        messages after the first are reserved with it (`TaskRun.reserve_ahead`), so the run
        costs one reservation and its completion. Steps as `_page_new_cause` names them.
        Returns the first message, whose `then` sends every message and completes the task
        (`plan`: a batch's first messages are reserved in one query)."""
        incident_id, cause = incident["id"], incident["root_cause"]
        paged = task.step(
            "paged_before", {"incident_id": incident_id},
            lambda: incident["paged"][0] if incident["paged"] else None, deferred=True,
        )  # fmt: skip
        before = json.loads(paged["result"]) if paged else None
        # the rows `routing.route` and `routing.told` read (response_context.cypher and
        # default_route.cypher have no policy), so the stored route is what they would give:
        # `escalation.follow_up` looks the team's policy up for such a route
        owners = [_without_policy(o) for o in incident["owners"]]
        fallback = [_without_policy(o) for o in incident["fallback"]]

        def default() -> dict[str, Any] | None:
            return fallback[0] if fallback else None

        who: dict[str, Any] | None = before
        repage: OutboundMessage | None = None
        sends: list[tuple[Notifier, OutboundMessage]] = []
        if cause:  # else inconclusive: the page's route stands
            who = task.step(
                "route_new_cause", {"cause": cause},
                lambda: routing.route_from(owners, [cause], default, self.default_channel),
                deferred=True,
            )  # fmt: skip
            repage = self._repage(task, incident, before, who)
        teams = self._teams_to_tell(task, alerts, who or {}, owners)
        sends += self._told(incident, who or {}, teams, root)
        issue = self._ticket(incident, alerts, who, None)
        # the first message reserves the others with it: each is taken whatever happens
        # before it (the ticket and the edit always; a team told is never skipped)
        ahead = [(n, m.intent_id, m.kind) for n, m in sends] + [
            (self.tickets, issue.intent_id, issue.kind),
            *[(self.messenger, i, "followup") for i in self._repage_intents(repage)],
            (self.messenger, intent(incident_id, "diagnosis"), "update"),
        ]  # fmt: skip
        for notifier, intent_id, kind in ahead[1:]:
            task.reserve_ahead(notifier, intent_id, kind)
        refs: dict[str, str | None] = {
            a["intent_id"]: a["external_ref"] for a in incident["actions"]
        }

        def rest() -> None:
            if repage is not None and who is not None:
                self._page_cause(task, incident, who, repage, root, refs)
            self._send_told(task, sends)
            self._deliver(task, self.tickets, issue, refs)
            update = self._page_edit(
                incident, alerts, "diagnosis", root, who, before,
                sorted(incident["cited"], key=lambda c: c["at"], reverse=True),
                sorted(incident["verdicts"], key=lambda v: (v["at"], v["seq"], v["id"])),
                refs.get(intent(incident_id, "ticket")),
                [Refusal(channel=d["channel"], reason=d["reason"] or "refused")
                 for d in sorted(incident["refused"], key=lambda d: (d["at"], d["n"] or 0))],
            )  # fmt: skip
            task.act(self.messenger, update)
            task.complete("cause edited into the page", mark_notified=True, root_cause=cause,
                          shows=messages.page_shows(incident, alerts),
                          reached=self._repaged(repage, who))  # fmt: skip

        first, message = sends[0] if sends else (self.tickets, issue)
        return Intended(first, message, lambda: self._settled(task, rest))

    def _ticket(
        self,
        incident: dict[str, Any],
        alerts: list[dict[str, Any]],
        who: dict[str, Any] | None,
        note: str | None,
    ) -> OutboundMessage:
        """The ticket (intent `…:ticket`) from a `respond_context` row: its recent changes
        (newest first), the investigation's steps in order and the previous incident."""
        previous = incident["previous"]
        return messages.ticket(
            intent(incident["id"], "ticket"), incident, alerts, who, note,
            changes=sorted(incident["recent"], key=lambda c: c["at"], reverse=True),
            steps=sorted(incident["steps"], key=lambda s: (s["created_at"], s["task_id"], s["n"])),
            previous=previous[0] if previous else None, public_url=self.public_url,
        )  # fmt: skip

    def _deliver(
        self,
        task: TaskRun,
        notifier: Notifier,
        message: OutboundMessage,
        refs: dict[str, str | None] | None = None,
    ) -> str:
        """`task.act(notifier, message)`; when that fails for good, `_fall_back`. Returns the
        ref of whichever delivery went out, and notes it in `refs` (intent id -> ref) under the
        intent that delivered it. Raises `AdapterError` when there is no other way."""
        try:
            ref = task.act(notifier, message)
        except AdapterError as exc:
            return self._fall_back(task, notifier, message, exc, refs)
        said(message, notifier.name, ref)
        if refs is not None:
            refs[message.intent_id] = ref
        return ref

    def _fall_back(
        self,
        task: TaskRun,
        notifier: Notifier,
        message: OutboundMessage,
        exc: AdapterError,
        refs: dict[str, str | None] | None,
    ) -> str:
        """After `notifier` failed with `exc`: when that is for good (a retry cannot help, or
        this is the task's last attempt), a copy goes through `fallback` instead, saying why
        (intent `<intent>:fallback`), so the page or ticket is not lost. Returns its ref;
        re-raises `exc` when a retry may still help or there is no fallback."""
        other = self.fallback
        if other is None or other is notifier or (exc.retryable and not task.last_attempt):
            raise exc
        log.error("%s not delivered through %s (%s); copying it to %s", message.intent_id,
                  notifier.name, exc, other.name)  # fmt: skip
        why = f"Not delivered through {notifier.name}: {exc}. Copied to {other.name} instead."
        copy = fallback_copy(message, why)
        ref = task.act(other, copy)
        said(copy, other.name, ref)
        if refs is not None:
            refs[copy.intent_id] = ref
        return ref

    def _page(
        self,
        task: TaskRun,
        page: OutboundMessage,
        chain: list[str | None],
        refs: dict[str, str | None],
        who: dict[str, Any] | None = None,
    ) -> str:
        """Deliver the page to the first channel of `chain` that accepts it (Slack returned a
        `ts`): a channel that refuses it (`AdapterError.refused`: not found, archived, the bot
        not in it, an unknown user) passes it to the next, and each later attempt says which
        channels refused and why. One intent for all attempts, so a crash between them neither
        repeats nor loses the page (`TaskRun.act` reconciles). Every attempt is recorded as a
        Delivery of the incident. When the last channel refuses too, `_deliver`'s fallback
        (the outbox) keeps the page. Returns the ref of the delivery that went out.

        A chain of no channel (`[None]`: none for the route `who`, none for the default team,
        no `SLACK_DEFAULT_CHANNEL`) is recorded as what it is: the messenger (`slack`) had
        nowhere to post, with `messages.no_channel` as the reason, and the outbox's copy."""
        refused: list[Refusal] = []
        deliveries: list[dict[str, Any]] = []
        try:
            for n, channel in enumerate(chain):
                where = channel or self.messenger.name
                tried = attempt(page, channel, refused)
                try:
                    ref = task.act(self.messenger, tried)
                except AdapterError as exc:
                    reason = exc.reason or ("unreachable" if exc.retryable else "error")
                    failed = delivery(page.intent_id, where, exc, refused)
                    if channel is None and not exc.retryable:  # nowhere to post, not a refusal
                        failed["reason"], reason = messages.no_channel(who), "no_channel"
                    deliveries.append(failed)
                    task.metrics.deliveries_failed.labels(reason=reason).inc()
                    if exc.refused and n < len(chain) - 1:
                        log.warning("page %s refused by %s (%s); trying %s", page.intent_id,
                                    where, reason, chain[n + 1])  # fmt: skip
                        refused.append(Refusal(channel=where, reason=reason))
                        continue
                    if exc.refused:  # the copy says that this channel refused it too
                        refused.append(Refusal(channel=where, reason=reason))
                        notice = page.notice.model_copy(update={"refused": list(refused)})
                        tried = tried.model_copy(update={"notice": notice})
                    ref = self._fall_back(task, self.messenger, tried, exc, refs)
                    assert self.fallback is not None  # _fall_back raised otherwise
                    deliveries.append(
                        {"intent_id": page.intent_id, "channel": self.fallback.name,
                         "outcome": "delivered", "fallback_from": where,
                         "reason": failed["reason"] if channel is None else None}
                    )  # fmt: skip
                    return ref
                # the outbox alone reaches no channel: say so rather than name one; with no
                # channel of its own, the page is where the notifier's ref says
                posted = parse_ref(ref)
                if self.messenger.name == "outbox":
                    landed = "outbox"
                else:
                    landed = channel or (posted[0] if posted else self.messenger.name)
                said(tried, f"{self.messenger.name} in {channel or landed}", ref)
                refs[page.intent_id] = ref
                deliveries.append({
                    "intent_id": page.intent_id, "channel": landed, "outcome": "delivered",
                    "reason": None, "fallback_from": refused[-1].channel if refused else None,
                })  # fmt: skip
                for r in refused:
                    task.metrics.delivery_fallbacks.labels(reason=r.reason).inc()
                return ref
            raise AssertionError("a page chain is never empty")
        finally:
            task.deliveries(page.incident_id, deliveries)

    def _say(self, task: TaskRun, message: OutboundMessage) -> str | None:
        """Say a follow-up, linked (`_linked`), in the page's thread; when Slack refuses it for
        good (the page's channel archived or without the bot since the page), along the root
        route from the paged team's channel (`incident_paged.cypher`, read only then), else a
        copy to `fallback` (`<intent>:fallback`; `agents.respond.fallback.tell`). Returns the
        ref that went out, or None when nothing could take it (logged: the task goes on).
        Raises `AdapterError` when a retry may still help, `LeaseLost`, `GraphUnavailable`."""

        def route() -> list[str]:
            return paged_route(task.graph, message.incident_id, self.default_channel)

        return tell(task, self.messenger, self._linked(message), self.fallback, route,
                    "follow-up", self.default_channel)  # fmt: skip

    def _linked(self, message: OutboundMessage) -> OutboundMessage:
        """A follow-up linked to the incident's web page when `BLAST_PUBLIC_URL` is set."""
        notice = message.notice
        if isinstance(notice, FollowUp) and notice.incident_url is None:
            url = messages.incident_url(self.public_url, message.incident_id)
            if url:
                message = message.model_copy(
                    update={"notice": notice.model_copy(update={"incident_url": url})}
                )
        return message

    def _readback(self, task: TaskRun, incident: dict[str, Any]) -> None:
        """Read a stated preference back in the incident's thread, with Approve / Discard; once
        its author answered (task `readback-answer:<fact id>`), say in the thread what was done."""
        answer, _, fact_id = task.claim.task_id.partition(":")
        fact = task.graph.one("fact_get", {"id": fact_id})
        if fact is None:
            task.complete("fact missing")
            return
        understood = preferences.Preference(
            fact["failure_kind"], fact["no_page"], fact["ticket"], fact["detail"]
        ).readback()
        root = self._refs(task, incident["id"]).get(intent(incident["id"], "initial-notification"))
        if answer == "readback":
            message = messages.readback(
                intent(incident["id"], f"readback:{fact_id}"), incident, fact, understood, root
            )
        else:
            saved = task.graph.one("fact_get", {"id": f"{fact_id}:approved"}) is not None
            message = messages.readback_answer(
                intent(incident["id"], f"readback-answer:{fact_id}"), incident, understood,
                saved, root,
            )  # fmt: skip
        self._say(task, message)
        task.complete("read back" if answer == "readback" else "answered")

    def _update(
        self, task: TaskRun, incident: dict[str, Any], alerts: list[dict[str, Any]]
    ) -> None:
        """After a re-investigation: when what the page says changed since it was sent or
        last edited (its root cause, the order of candidates of an inconclusive finding, the
        set of alerts on it, the finding's confidence, summary or paths: `messages.page_shows`;
        a page stored before the last was kept counts as showing the finding it has now),
        restate the page; when the finding
        changed (cause or candidates), tell the thread too; page the new cause's on-call only
        when the cause changed and the new finding is conclusive (`LEAD_BELOW` or more).
        Nothing when the page would show what it shows. A quiet window that covers the
        incident (one merged into it held it, or its reopen is held) holds this until its end
        (`maintenance.hold`)."""
        shows = messages.page_shows(incident, alerts)
        cause = incident["root_cause"]
        moved = cause != incident["notified_root_cause"]
        before = json.loads(incident["notified_shows"] or "null")
        if before is None:  # paged before `notified_shows` was kept: its cause alone is known
            before = json.loads(shows) if not moved else {}
        now = json.loads(shows)
        found = moved or before.get("candidates") != now["candidates"]
        same_alerts = before.get("alerts") == now["alerts"]
        reworded = before.get("finding", now["finding"]) != now["finding"]
        if not found and same_alerts and reworded and self._reinvestigating(task, incident):
            # a split leaves a passing finding ("stays the root cause … split into their own
            # incident") and re-investigates what is left at once: its words are the ones
            reworded = False
        if not found and not reworded and same_alerts:
            task.complete("unchanged")
            return
        if maintenance.hold(task, incident, alerts, "update"):
            return
        refs = self._refs(task, incident["id"])
        root = refs.get(intent(incident["id"], "initial-notification"))
        reached = None
        if root is not None:  # nobody was paged (a preference): no thread to update
            if found:
                update = messages.diagnosis_update(
                    update_intent(incident["id"], task.claim.task_id, refs), incident,
                    incident["notified_root_cause"], root, before.get("candidates"),
                )  # fmt: skip
                self._say(task, update)
            # a lead (under LEAD_BELOW) is told in the thread, not paged: it must not wake
            # another team over a cause the first page's finding (or an engineer) named surer
            if moved and cause and float(incident.get("confidence") or 0) >= LEAD_BELOW:
                reached = self._page_new_cause(task, incident, alerts, root)
            elif moved and cause:
                self._tell_lead_owner(task, incident, root)
            self._restate(task, incident, alerts, f"page:{task.claim.task_id}")
        task.complete("updated" if found else "page updated: its alerts or words changed",
                      mark_notified=True, root_cause=cause, shows=shows,
                      reached=reached)  # fmt: skip

    @staticmethod
    def _reinvestigating(task: TaskRun, incident: dict[str, Any]) -> bool:
        """True while another re-investigation of `incident` is still to run (open, claimed
        or paused): a finding about to be replaced is not worth an edit of the page."""
        tasks = task.graph.rows("incident_tasks", {"incident_id": incident["id"]})
        return any(
            t["kind"] == "reinvestigate" and t["status"] in ("open", "claimed", "paused")
            for t in tasks
        )

    def _page_new_cause(
        self,
        task: TaskRun,
        incident: dict[str, Any],
        alerts: list[dict[str, Any]],
        root: str | None,
    ) -> bool | None:
        """After the cause changed: page the on-call of the new cause's route in their own
        channel, with a note in the thread of `root` (`_page_cause`), unless it is the person
        paged already, then tell the other alerting teams (`_tell_teams`). The page, restated
        next, names both (`incident_paged.cypher`: the latest route and the first page's).
        Returns whether that page reached someone (`_repaged`; None: none was sent)."""
        before, who = self._new_cause_route(task, incident)
        repage = self._repage(task, incident, before, who)
        if repage is not None:
            self._page_cause(task, incident, who, repage, root, {})
        self._tell_teams(task, incident, alerts, who)
        return self._repaged(repage, who)

    def _new_cause_route(
        self, task: TaskRun, incident: dict[str, Any]
    ) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        """`(the route the first page named, or None; the route of the incident's new root
        cause)`, each a checkpointed step (`paged_before`, `route_new_cause`)."""
        cause = incident["root_cause"]
        paged = task.step(
            "paged_before", {"incident_id": incident["id"]},
            lambda: task.graph.one("incident_paged", {"incident_id": incident["id"]}),
            deferred=True,
        )  # fmt: skip
        who: dict[str, Any] = task.step(
            "route_new_cause",
            {"cause": cause},
            lambda: routing.route(task.graph, [cause], self.default_channel),
            deferred=True,
        )
        return (json.loads(paged["result"]) if paged else None), who

    def _tell_lead_owner(self, task: TaskRun, incident: dict[str, Any], root: str) -> None:
        """After a re-investigation named a cause only as a lead: tell its owning team's on-call
        in the thread of `root` (intent `…:lead-told:<team>`, once per team and incident), unless
        that team was paged already. A lead wakes nobody, but the team whose component it names
        hears of it, whatever order the alerts came in (the same alerts together would have
        paged them: a new user's trial)."""
        before, owner = self._new_cause_route(task, incident)
        team = owner.get("team")
        if not team or team == (before or {}).get("team"):
            return
        message = messages.lead_told(
            intent(incident["id"], f"lead-told:{team}"), incident, owner, before, root
        )
        self._say(task, message)  # refused for good: along the root route, never failing
        if self.records is not None:
            copy = message.model_copy(update={"intent_id": f"{message.intent_id}:record"})
            task.act(self.records, copy)

    def _repaged(self, repage: OutboundMessage | None, who: dict[str, Any] | None) -> bool | None:
        """Whether the page of a new cause's on-call (`_repage`, to route `who`) reached
        someone (`addressed`: it goes to the route's channel, else `SLACK_DEFAULT_CHANNEL`);
        None when there is none."""
        if repage is None:
            return None
        return addressed(who, (who or {}).get("channel") or self.default_channel)

    def _repage(
        self,
        task: TaskRun,
        incident: dict[str, Any],
        before: dict[str, Any] | None,
        who: dict[str, Any],
    ) -> OutboundMessage | None:
        """The page of the new cause's on-call (route `who`) in their own channel, a root
        message (intent `…:repage:<task id>`), linked (`_linked`); None when the page went to
        that person already (`before`, the route it named)."""
        if before and (before.get("person"), before.get("team")) == (
            who.get("person"),
            who.get("team"),
        ):
            return None
        return self._linked(
            messages.new_cause_page(
                intent(incident["id"], f"repage:{task.claim.task_id}"), incident, who, before
            )
        )

    @staticmethod
    def _repage_intents(repage: OutboundMessage | None) -> list[str]:
        """The intents `_page_cause` acts under for `repage`: the page and its thread note
        (`…:repage-note:<task id>`); none without a repage."""
        if repage is None:
            return []
        return [repage.intent_id, repage.intent_id.replace(":repage:", ":repage-note:", 1)]

    def _page_cause(
        self,
        task: TaskRun,
        incident: dict[str, Any],
        who: dict[str, Any],
        repage: OutboundMessage,
        root: str | None,
        refs: dict[str, str | None],
    ) -> None:
        """Send `repage` (`_repage`) to its channel, where the new cause's on-call is (a
        destination that refuses it for good: the fallback's copy, `_deliver`), then say in
        the first page's thread (`root`) who was paged for the new cause and where it landed
        (`…:repage-note:<task id>`). Each once per intent."""
        where = who.get("channel") or self.default_channel or messages.no_channel(who)
        ref = self._deliver(task, self.messenger, repage, refs)
        copied = refs.get(repage.intent_id) != ref and self.fallback is not None
        landed = (
            f"not in {where}, which did not take it: a copy is in the {self.fallback.name}"
            if copied and self.fallback is not None else f"in {where}"
        )  # fmt: skip
        if root is not None:
            note_intent = self._repage_intents(repage)[1]
            self._say(task, messages.new_cause_note(note_intent, incident, who, root, landed))

    def _tell_teams(
        self,
        task: TaskRun,
        incident: dict[str, Any],
        alerts: list[dict[str, Any]],
        who: dict[str, Any],
        refs: dict[str, str | None] | None = None,
        teams: list[dict[str, Any]] | None = None,
    ) -> None:
        """Tell the on-call of every other team whose components alert, in the page's thread
        with a mention (intent `…:told:<team>`, once per team and incident). `refs` (intent id
        -> ref of the incident's actions) and `teams` (`_teams_to_tell`): already known to the
        caller, else read here."""
        if teams is None:
            teams = self._teams_to_tell(task, alerts, who)
        if refs is None:
            refs = dict(self._refs(task, incident["id"]))
        root = refs.get(intent(incident["id"], "initial-notification"))
        self._send_told(task, self._told(incident, who, teams, root))

    def _send_told(self, task: TaskRun, told: list[tuple[Notifier, OutboundMessage]]) -> None:
        """Send `_told`'s messages in order: each mention through `_say` (refused for good, as
        a channel archived since the page: along the root route, else the fallback's copy; a
        team told is worth neither failing the task nor losing the ticket and edit after it),
        each record through `task.act`. Raises as `_say` and `TaskRun.act` do."""
        for notifier, message in told:
            if notifier is self.messenger:
                self._say(task, message)
            else:
                task.act(notifier, message)

    def _told(
        self,
        incident: dict[str, Any],
        who: dict[str, Any],
        teams: list[dict[str, Any]],
        root: str | None,
    ) -> list[tuple[Notifier, OutboundMessage]]:
        """What tells each of `teams` (`_teams_to_tell`) in the thread of `root`, in order:
        the mention through `messenger` (intent `…:told:<team>`, linked) and, when `records`
        is set, its copy there (`…:told:<team>:record`)."""
        told: list[tuple[Notifier, OutboundMessage]] = []
        for team in teams:
            message = messages.team_told(
                intent(incident["id"], f"told:{team['team']}"), incident, team, who, root
            )
            told.append((self.messenger, self._linked(message)))
            if self.records is not None:
                copy = message.model_copy(update={"intent_id": f"{message.intent_id}:record"})
                told.append((self.records, copy))
        return told

    def _teams_to_tell(
        self,
        task: TaskRun,
        alerts: list[dict[str, Any]],
        who: dict[str, Any],
        owners: list[dict[str, Any]] | None = None,
    ) -> list[dict[str, Any]]:
        """The on-call of every team other than the paged one whose components alert (a step,
        `alerting_teams`): from `owners` (`response_context` rows of the alerting components)
        when the caller read them, else from the graph."""
        alerting = list(dict.fromkeys(a["component"] for a in alerts if a["component"]))
        skip = {who.get("team"), who.get("owner_team")} - {None}

        def teams_told() -> list[dict[str, Any]]:
            told = (
                routing.told(task.graph, alerting, None) if owners is None
                else routing.told_from(owners, alerting, None)
            )  # fmt: skip
            return [t for t in told if t["team"] not in skip]

        teams: list[dict[str, Any]] = task.step(
            "alerting_teams", {"alerting": alerting, "skip": sorted(skip)}, teams_told,
            deferred=True,
        )  # fmt: skip
        return teams

    def _refs(self, task: TaskRun, incident_id: str) -> dict[str, str]:
        """intent id -> external ref of every action already taken for the incident."""
        task.flush_records()  # this run's own outcomes first
        rows = task.graph.rows("incident_actions", {"incident_id": incident_id})
        return {row["intent_id"]: row["external_ref"] for row in rows}

    def _cleared(
        self, task: TaskRun, incident: dict[str, Any], alerts: list[dict[str, Any]]
    ) -> None:
        """An alert cleared: a follow-up in the thread while the incident stays open; once it
        is resolved, the one resolve notice (`_resolved`), however many alerts cleared."""
        alert = next((a for a in alerts if a["key"] == task.claim.alert_key), None)
        if alert is None:
            task.complete("alert missing")
            return
        if incident["status"] == "resolved":
            task.complete(self._resolved(task, incident, alerts))
            return
        if self._untold(task, incident):  # the thread never heard that it fired again
            task.complete("cleared during maintenance: the reopen not told")
            return
        refs = self._refs(task, incident["id"])
        root = refs.get(intent(incident["id"], "initial-notification"))
        if root is not None:  # no root message: nobody was paged (a preference); stay quiet
            note = messages.cleared(
                intent(incident["id"], f"cleared:{alert['key']}"), incident, alert, root
            )
            self._say(task, note)
        task.complete("cleared")

    def _state(self, task: TaskRun, incident: dict[str, Any], alerts: list[dict[str, Any]]) -> None:
        """Someone acknowledged (`notify_state:ack:<id>`) or resolved (`…:resolve:<id>`) the
        incident, or a failed remediation retriggered it (`…:retrigger:<k>:<id>`): restate the
        page; for a resolution send the resolve notice, for a retrigger run the escalation
        policy's round `retrigger:<k>` next. An acknowledgement after the k-th retrigger
        (`…:ack:retrigger:<k>:<id>`) restates it under `…:acknowledged:retrigger:<k>`: the
        first round's edit is done already (`acknowledge_incident.cypher`)."""
        parts = task.claim.task_id.split(":")
        what = parts[1]
        if what == "resolve":
            task.complete(self._resolved(task, incident, alerts))
            return
        if what == "retrigger":  # notify_state:retrigger:<k>:<id>, from agents.act
            round_ = ":".join(parts[1:3])
            self._restate(task, incident, alerts, f"page:{round_}")
            paged = task.graph.one("incident_paged", {"incident_id": incident["id"]})
            who = json.loads(paged["result"]) if paged else None
            again = escalation.follow_up(task.graph, incident["id"], who, round_)
            task.complete("page updated" + (", escalation policy again" if again else ""), **again)
            return
        round_ = f":{parts[2]}:{parts[3]}" if parts[2] == "retrigger" else ""
        self._restate(task, incident, alerts, f"acknowledged{round_}")
        task.complete("page updated")

    def _resolved(
        self, task: TaskRun, incident: dict[str, Any], alerts: list[dict[str, Any]]
    ) -> str:
        """The incident resolved: one notice in the thread (intent `…:resolve-notice`, so
        however many alerts or clicks resolve it, it is said once), the ticket closed
        (`…:ticket-resolved`) and the page restated (`…:resolved`). An incident that flapped
        (reopened N times) resolves again under `…:resolve-notice:N` and so on: each episode is
        said once, the first keeps the plain ids. A reopen a quiet window held, never told,
        that resolved inside the window says nothing (`_untold`). A notice, comment or edit
        refused for good goes along the root route or to the outbox (`_say`, `_restate`; the
        comment to the outbox) and the rest still happens. Returns the task's outcome."""
        if self._untold(task, incident):
            return "resolved again during maintenance: the reopen not told"
        episode = f":{incident['reopens']}" if incident.get("reopens") else ""
        refs = self._refs(task, incident["id"])
        root = refs.get(intent(incident["id"], "initial-notification"))
        if root is not None:
            note = messages.resolved_notice(
                intent(incident["id"], f"resolve-notice{episode}"),
                incident,
                alerts,
                root,
                self.public_url,
            )
            self._say(task, note)
        issue = refs.get(intent(incident["id"], "ticket"))
        closing = messages.ticket_resolved(
            intent(incident["id"], f"ticket-resolved{episode}"), incident, alerts, issue
        )
        if issue is not None:  # none opened (resolved in a quiet window): none to close
            # a ticket has no root route: refused for good, it is copied to the outbox
            tell(task, self.tickets, closing, self.fallback, no_route, "ticket-resolved comment")
        self._restate(task, incident, alerts, f"resolved{episode}")
        return "resolved"

    @staticmethod
    def _untold(task: TaskRun, incident: dict[str, Any]) -> bool:
        """Whether the incident's latest episode is a reopen nobody was told of: a quiet window
        held it since the reopen (`maintenance.held_since_reopen`) and no reopen notice
        (`…:reopened:<alert key>`) was reserved since. Its resolve is as quiet as the reopen
        was, as for a new incident resolved inside a window."""
        if not incident.get("reopens") or not maintenance.held_since_reopen(incident):
            return False
        told, since = intent(incident["id"], "reopened:"), int(incident["reopened_at"])
        rows = task.graph.rows("incident_actions", {"incident_id": incident["id"]})
        return not any(
            r["intent_id"].startswith(told) and int(r["reserved_at"] or 0) >= since for r in rows
        )

    def _restate(
        self, task: TaskRun, incident: dict[str, Any], alerts: list[dict[str, Any]], what: str
    ) -> None:
        """Restate the page with the incident's current state (intent `incident:<id>:<what>`):
        cause, the person paged then, ticket link, resolution and verdicts. Nothing to do when
        no page went out. An edit Slack refuses for good (the page's channel archived since) is
        copied to the outbox (`…:<what>:fallback`) and the task goes on."""
        incident_id = incident["id"]
        refs = self._refs(task, incident_id)
        page = refs.get(intent(incident_id, "initial-notification"))
        if page is None:
            return
        paged = task.graph.one("incident_paged", {"incident_id": incident_id})
        update = self._page_edit(
            incident, alerts, what, page, json.loads(paged["result"]) if paged else None,
            json.loads(paged["first"]) if paged and paged["first"] else None,
            task.graph.rows("incident_changes", {"incident_id": incident_id}),
            task.graph.rows("incident_verdicts", {"incident_id": incident_id}),
            refs.get(intent(incident_id, "ticket")),
            messages.page_refusals(
                task.graph.rows("incident_deliveries", {"incident_id": incident_id}), incident_id
            ),
        )  # fmt: skip
        # a page in a channel archived since: nothing else to edit, so a copy to the outbox
        tell(task, self.messenger, update, self.fallback, no_route, "page edit",
             self.default_channel)  # fmt: skip

    def _page_edit(
        self,
        incident: dict[str, Any],
        alerts: list[dict[str, Any]],
        what: str,
        page: str,
        who: dict[str, Any] | None,
        first: dict[str, Any] | None,
        changes: list[dict[str, Any]],
        verdicts: list[dict[str, Any]],
        ticket: str | None,
        refused: list[Refusal],
    ) -> OutboundMessage:
        """The page (ref `page`) restated (intent `incident:<id>:<what>`) naming `first` (the
        route the page went to) and `who` (the route paged last, for a new cause), with the
        cited `changes` (newest first), the `verdicts` (oldest first), the ticket's link
        (`ticket`, its ref) and the channels that `refused` the page (oldest first)."""
        return messages.page_update(
            intent(incident["id"], what), page, incident, alerts, who, changes, verdicts,
            link(ticket), self.public_url, first, refused,
        )  # fmt: skip
