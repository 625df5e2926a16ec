"""Escalation: while nobody acknowledges a page, the paged team's escalation policy notifies
more people, level by level, on the database's clock, each level exactly once.

Scheduling is driven from the graph, by one task per paged incident (kind `escalate`, id
`escalate:<incident id>`), enqueued by the page's own completion when the paged team has a
policy. A worker claims it, sends every level that is due and gives it back `paused` until
the next level is due (`TaskRun.pause`: `claim_task` hands a paused task out once its
`lease_until` has passed, by the database's clock). So no process keeps a timer: a worker that
dies, restarts or is SIGKILLed leaves the task in the graph, and whichever worker claims it next
goes on from the levels already sent. No other loop is needed (workers alone escalate, with or
without `serve`), and a level's due time is the database's, like every lease.

A level is one intent, `incident:<id>:escalate:<n>` (an `Action` of kind `escalate`), reserved
by `cypher/escalation_reserve.cypher` only while the incident is open and unacknowledged: that
check and an acknowledgement are serialised by the graph's write lock, so no level is
reserved after an acknowledgement or a resolve, and a level reserved before one is delivered
once (`TaskRun.act`, which reconciles a reservation whose outcome a dead worker left unknown).
A flap re-arms the policy: an incident nobody acknowledged that resolved and fired again
within the reopen window (`flapping.py`) is not paged again, but its policy runs once more,
counted from the reopen's notice in the thread (task `escalate:<id>:reopen:<k>`, levels
`incident:<id>:reopen:<k>:escalate:<n>`), so a page nobody answered before the flap still
reaches someone; an earlier round still waiting stops. A reopen that a quiet window held is
told when the window ends, so its round counts from then, as a held page's does. An
acknowledged incident stays with whoever acknowledged it (the first acknowledgement stands):
they are told in the thread, and nothing escalates. A failed
remediation verification retriggers the incident (`record_verification.cypher` clears its
acknowledgement) and runs the policy again from then (`escalate:<id>:retrigger:<k>`).

A level Slack refuses (the page's channel was archived or lost the bot since the page, or the
page itself is only in the outbox because every channel refused it) goes on along the root
route as a message of its own (the paged team's channel, the default team's, then
`SLACK_DEFAULT_CHANNEL`), saying where it could not go; when every channel refuses it too, a
copy goes to the outbox (intent `<level intent>:fallback`), as a refused page's does. Either
way the level counts as sent and the policy goes on to the next one: a channel that refuses
must not silence the levels that notify other people.

After an acknowledgement or resolve, the policy stops: a reserved level of a dead worker is
not sent then. While a quiet window holds the incident (`maintenance_until`: a snooze, a
window that held its reopen, or one that held an incident merged into it), levels wait for its
end, then run if still due.

Levels: `after` counts from the first page (the reservation time of the page's Action, on the
database's clock). `repeat: r` runs the levels r more times, each round shifted by the last
level's `after` (5m, 15m, 30m with `repeat: 1`: 5m, 15m, 30m, 35m, 45m, 60m), as PagerDuty
and Grafana OnCall repeat a policy from its first step.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from adapters.falkordb import TenantGraph
from adapters.notices import Person, Span
from adapters.notify import Notifier, OutboundMessage
from agents.respond import messages
from agents.respond.fallback import deliver, root_route
from agents.tasks.coordination import TaskRun

log = logging.getLogger(__name__)

#: The task kind that runs a policy, and its id per incident (one policy run per incident).
KIND = "escalate"


#: What starts a round of the policy after the page's own, and what its waits count from:
#: a flap nobody acknowledged (`flapping.py`) and a failed remediation verification
#: (`agents.act`, which retriggers the incident). Each is counted on the incident (`reopens`,
#: `retriggers`) with the time of the latest (`reopened_at`, `retriggered_at`, ms).
ROUNDS = {"reopen": "its reopen", "retrigger": "the failed remediation"}
_ROUND = re.compile(r":((?:reopen|retrigger):\d+)$")


def task_id(incident_id: str, round_: str = "") -> str:
    """The id of an incident's escalation task: `escalate:<incident id>` after the first page,
    `escalate:<incident id>:<round>` for a later round (`reopen:<k>`, `retrigger:<k>`, k
    from 1)."""
    return f"{KIND}:{incident_id}" + (f":{round_}" if round_ else "")


def round_of(escalation_task_id: str) -> str:
    """Which round a `task_id` runs: "" for the first page's, else `reopen:<k>` or
    `retrigger:<k>`."""
    found = _ROUND.search(escalation_task_id)
    return found.group(1) if found else ""


def level_intent(incident_id: str, n: int, round_: str = "") -> str:
    """The intent id of level `n` (from 1) of an incident's escalation:
    `incident:<id>:escalate:<n>`, or `incident:<id>:<round>:escalate:<n>` in a later round
    (`incident:<id>:reopen:1:escalate:2`)."""
    again = f"{round_}:" if round_ else ""
    return f"incident:{incident_id}:{again}escalate:{n}"


def team_policy(graph: TenantGraph, team: str | None) -> dict[str, Any] | None:
    """A team's stored policy `{levels: [{after_ms, notify}], repeat}` and `team`, `channel`;
    None when the team has none (or is not a team). Raises `GraphUnavailable`."""
    if not team:
        return None
    row = graph.one("escalation_policy", {"team": team})
    if row is None or not row["policy"]:
        return None
    policy: dict[str, Any] = json.loads(row["policy"])
    if not policy.get("levels"):
        return None
    return policy | {"team": row["team"], "channel": row["channel"]}


def follow_up(
    graph: TenantGraph, incident_id: str, who: dict[str, Any] | None, round_: str = ""
) -> dict[str, Any]:
    """The `TaskRun.complete` arguments that enqueue the incident's escalation after its first
    page, or its later `round_` (`next_kind`, `next_id`), when the team paged
    (`who`, a route) has a policy; else none. A route of `respond_context.cypher` carries the
    team's policy; another is looked up. Raises `GraphUnavailable`."""
    route = who or {}
    if "escalation_policy_json" in route:
        if not route["escalation_policy_json"]:
            return {}
    elif team_policy(graph, route.get("team")) is None:
        return {}
    return {"next_kind": KIND, "next_id": task_id(incident_id, round_)}


def schedule(policy: dict[str, Any]) -> list[tuple[int, int, list[dict[str, Any]]]]:
    """Every level of a policy in the order it runs: `(n, after_ms, notify)`, n from 1, each
    round of `repeat` shifted by the last level's `after_ms`. Pure."""
    levels = policy["levels"]
    period = int(levels[-1]["after_ms"])
    return [
        (round_ * len(levels) + pos + 1, round_ * period + int(level["after_ms"]), level["notify"])
        for round_ in range(1 + int(policy.get("repeat") or 0))
        for pos, level in enumerate(levels)
    ]


def first_page(actions: list[dict[str, Any]], incident_id: str) -> dict[str, Any] | None:
    """The incident's first page that went out (its `initial-notification` Action, or that
    page's copy through the fallback adapter): `{at, ref}` (ms, database clock), or None."""
    page = f"incident:{incident_id}:initial-notification"
    pages = (page, f"{page}:fallback")
    sent = [a for a in actions if a["status"] == "sent" and a["intent_id"] in pages]
    if not sent:
        return None
    first = min(sent, key=lambda a: int(a["reserved_at"]))
    return {"at": int(first["reserved_at"]), "ref": first["external_ref"]}


def active_round(state: dict[str, Any], page_at: int) -> tuple[str, int]:
    """The round of the policy that runs now and the time its waits count from (ms), from an
    `escalation_state.cypher` row (`page_at`: the first page, ms): the latest reopen or
    retrigger after the page, else the page's own ("", `page_at`). An incident that reopened
    before anyone was paged escalates from its page. A reopen's round counts from its notice
    in the thread (`incident:<id>:reopened:<alert key>`, reserved after the reopen), which a
    quiet window may have held long after the reopen: a held page counts from when it went
    out too, so the levels keep their spacing instead of all coming due at the window's end."""
    latest = ("", page_at)
    for kind in ROUNDS:
        k, at = int(state.get(f"{kind}s") or 0), state.get(f"{kind}ed_at")
        if k and at is not None and int(at) > latest[1]:
            latest = (f"{kind}:{k}", int(at))
    if latest[0].startswith("reopen:"):
        told = f"incident:{state['id']}:reopened:"
        latest = (latest[0], max([latest[1]] + [
            int(a["reserved_at"]) for a in state["actions"]
            if a["intent_id"].startswith(told) and a["reserved_at"] is not None
        ]))  # fmt: skip
    return latest


def fmt_after(ms: int) -> str:
    """A level's wait as people say it: `30 s`, `15 min`, `1 min 30 s`, `1 h 30 min`, `250 ms`.
    Nothing is rounded away: a part that is zero is left out, seconds keep their fraction
    (`1 min 0.5 s`), so a 90 s level never reads as the 60 s one."""
    if ms < 60_000:
        return f"{ms // 1000} s" if ms % 1000 == 0 else f"{ms} ms"
    hours, minutes = divmod(ms // 60_000, 60)
    seconds = ms % 60_000 / 1000
    parts = [f"{hours} h" if hours else "", f"{minutes} min" if minutes else "",
             f"{seconds:g} s" if seconds else ""]  # fmt: skip
    return " ".join(p for p in parts if p)


def policy_lines(stored: str | None) -> list[str]:
    """A team's stored policy (`Team.escalation_policy_json`) in words, for people reading the
    world (the web's World page, `blast-radius oncall`, `topology import`): one line per level
    in order, whom it notifies after how long (`after 15 s: Cy Example`, `after 30 s: the
    on-call of platform`, `after 45 s: @channel`), then how often the levels run again (`then
    the same levels 1 more time, each round 45 s after the one before`). [] for none (null,
    '' or no levels). Pure."""
    policy = json.loads(stored) if stored else {}
    levels = policy.get("levels") or []
    lines = [
        f"after {fmt_after(int(level['after_ms']))}: "
        + ", ".join(
            "@channel" if n.get("channel")
            else f"the on-call of {n['team']}" if "team" in n
            else str(n["person"])
            for n in level["notify"]
        )
        for level in levels
    ]  # fmt: skip
    repeat = int(policy.get("repeat") or 0)
    if lines and repeat:
        period = fmt_after(int(levels[-1]["after_ms"]))
        lines.append(f"then the same levels {repeat} more time{'s' if repeat > 1 else ''}, "
                     f"each round {period} after the one before")  # fmt: skip
    return lines


def whom(
    notify: list[dict[str, Any]], targets: dict[str, Any]
) -> tuple[list[list[Span]], dict[str, Any] | None, bool]:
    """Whom a level's `notify` reaches, with `targets` (`escalation_targets.cypher`):
    `(named, first, channel_wide)`: the spans naming each (a person, a team's on-call now,
    `@channel`), the first person (a row with `person`, `email`, `slack_user_id`) or None, and
    whether it notifies the whole channel."""
    people = {p["person"]: p for p in targets["people"]}
    teams = {t["team"]: t for t in targets["teams"]}
    named: list[list[Span]] = []
    first: dict[str, Any] | None = None
    channel_wide = False
    for target in notify:
        if target.get("channel"):
            channel_wide = True
            named.append([Span(text="@channel", channel_wide=True)])
            continue
        if "team" in target:
            row = teams.get(target["team"]) or {"team": target["team"], "person": None}
            if row.get("person"):
                first = first or row
                named.append([Span(text=row["person"], user_id=row.get("slack_user_id")),
                              Span(text=f" (on call for {row['team']})")])  # fmt: skip
            else:
                named.append([Span(text=f"{row['team']} (nobody on call now)")])
            continue
        row = people.get(target["person"]) or {"person": target["person"]}
        first = first or row
        named.append([Span(text=row["person"], user_id=row.get("slack_user_id"))])
    return named, first, channel_wide


def notified_text(notify: list[dict[str, Any]], targets: dict[str, Any]) -> str:
    """Whom a level reaches in plain words (`Di Example, Hal Example (on call for platform)`),
    as the incident's timeline shows it."""
    return ", ".join("".join(span.text for span in parts) for parts in whom(notify, targets)[0])


def notice(
    intent_id: str,
    incident: dict[str, Any],
    policy: dict[str, Any],
    level: tuple[int, int, list[dict[str, Any]]],
    targets: dict[str, Any],
    page_ref: str | None,
    since: str = "the page",
) -> OutboundMessage:
    """The message of one level: in the page's thread, naming everyone it notifies (a Slack
    mention for each known Slack id; else the first person's email lets Slack find theirs), and
    at the top of the paged team's channel when the level notifies `@channel` (a channel-wide
    mention in a thread reaches only the thread's followers). `since`: what the wait counts
    from ("the page", or a `ROUNDS` value)."""
    n, after_ms, notify = level
    total = len(policy["levels"]) * (1 + int(policy.get("repeat") or 0))
    named, first, channel_wide = whom(notify, targets)
    text = [
        Span(text=f"Escalation level {n} of {total}: nobody acknowledged incident "
                  f"{incident['id']} ("),
        Span(text=incident["title"], strong=True),
        Span(text=f") within {fmt_after(after_ms)} of {since}. Notifying "),
    ]  # fmt: skip
    for pos, parts in enumerate(named):
        text += ([Span(text=", ")] if pos else []) + parts
    text.append(Span(text="."))
    # the first person without a known Slack id: the adapter finds theirs by email and
    # mentions them (one with a known id is mentioned in the text already)
    person = None
    if first is not None and not first.get("slack_user_id"):
        person = Person(name=first.get("person"), email=first.get("email"))
    if channel_wide:  # the top of the channel, not the thread
        return messages.followup(
            intent_id, incident, "escalation", text, None, channel=policy.get("channel"),
            person=person,
        )  # fmt: skip
    return messages.followup(intent_id, incident, "escalation", text, page_ref, person=person)


class Escalator:
    """Runs `escalate` tasks: the policy of the team a page went to, level by level (see the
    module docstring). Sends through `messenger` (a `Notifier`: Slack or the outbox); a level
    every channel of the root route refuses goes to `fallback` (the outbox) instead.
    `default_channel`: `SLACK_DEFAULT_CHANNEL`, the root route's last channel."""

    kinds = (KIND,)

    def __init__(
        self,
        messenger: Notifier,
        fallback: Notifier | None = None,
        default_channel: str | None = None,
    ) -> None:
        self.messenger = messenger
        self.fallback = fallback
        self.default_channel = default_channel

    def run(self, task: TaskRun) -> None:
        """Send the levels that are due, then pause until the next one (or complete: no
        level left, acknowledged, resolved, nobody paged). Raises `LeaseLost`,
        `GraphUnavailable` or `AdapterError` (the worker gives the task back for a retry)."""
        graph, incident_id = task.graph, task.claim.incident_id
        state = graph.one("escalation_state", {"incident_id": incident_id})
        if state is None:
            task.complete("incident missing")
            return
        policy = task.step(
            "escalation_policy", {"incident_id": incident_id},
            lambda: team_policy(graph, self._paged_team(graph, incident_id)), deferred=True,
        )  # fmt: skip
        page = first_page(state["actions"], incident_id)
        if policy is None or page is None:
            task.complete("no escalation policy" if policy is None else "nobody was paged")
            return
        round_ = round_of(task.claim.task_id)
        current, start = active_round(state, page["at"])
        if round_ != current:  # one round runs at a time: the latest one's
            task.complete(f"superseded by round {current or 'of the page'}")
            return
        sent = {a["intent_id"] for a in state["actions"] if a["status"] == "sent"}
        for level in schedule(policy):
            n, after_ms, notify = level
            intent_id = level_intent(incident_id, n, round_)
            if intent_id in sent or f"{intent_id}:fallback" in sent:
                self._targets(task, n, notify)  # its stored step: later steps keep their place
                continue
            stopped = self._stopped(state)
            if stopped:
                task.complete(stopped)
                return
            due = start + after_ms
            quiet = int(state.get("maintenance_until") or 0)
            if quiet > state["now"] and quiet > due:  # snoozed: the level waits for the end
                task.pause(quiet, f"escalation level {n} held by a quiet window (snooze)")
                return
            if state["now"] < due:
                task.pause(due, f"escalation level {n} due at {messages.fmt_ms(due)}")
                return
            targets = self._targets(task, n, notify)
            row = task.fenced(
                "escalation_reserve",
                {"intent_id": intent_id, "level": n, "attempt_id": task.claim.attempt_id,
                 "adapter": self.messenger.name, "lease_ms": task.lease_ms,
                 "notified": notified_text(notify, targets)[:500]},
            )  # fmt: skip
            if not row["live"] and row["prior"] != "sent":
                if self._stopped(row) is None:  # a quiet window began meanwhile: wait for it
                    task.pause(int(state["now"]) + 1000, f"escalation level {n} held")
                    return
                task.complete(self._stopped(row) or "stopped")
                return
            if row["prior"] != "sent":
                since = ROUNDS[round_.partition(":")[0]] if round_ else "the page"
                message = notice(intent_id, state, policy, level, targets, page["ref"], since)
                ref = self._send(task, message, policy)
                log.info("incident %s escalated to level %d via %s (%s)", incident_id, n,
                         self.messenger.name, ref)  # fmt: skip
        task.complete("escalated through the last level")

    def _send(self, task: TaskRun, message: OutboundMessage, policy: dict[str, Any]) -> str:
        """Deliver a level: to where `message` says (the page's thread, or the top of the
        paged team's channel); when that refuses it, along the root route from the paged
        team's channel, else a copy through `fallback` (`agents.respond.fallback.deliver`).
        Returns the ref that went out. Raises `AdapterError` when a retry may still help (or
        there is no fallback), `LeaseLost`, `GraphUnavailable`."""
        return deliver(
            task, self.messenger, message, self.fallback,
            lambda: root_route(task.graph, policy.get("channel"), self.default_channel),
            "escalation", self.default_channel,
        )  # fmt: skip

    @staticmethod
    def _stopped(state: dict[str, Any]) -> str | None:
        """Why the policy stops (acknowledged, resolved, merged), or None while it runs."""
        if state.get("acknowledged_at") is not None:
            by = state.get("acknowledged_by") or "someone"
            return f"acknowledged by {by} at {messages.fmt_ms(state['acknowledged_at'])}"
        if state["status"] != "open":
            return f"incident {state['status']}"
        return None

    @staticmethod
    def _paged_team(graph: TenantGraph, incident_id: str) -> str | None:
        """The team the page went to (the latest route of `incident_paged.cypher`)."""
        paged = graph.one("incident_paged", {"incident_id": incident_id})
        return json.loads(paged["result"]).get("team") if paged else None

    @staticmethod
    def _targets(task: TaskRun, n: int, notify: list[dict[str, Any]]) -> dict[str, Any]:
        """Whom level `n` reaches (a step, so a crash between it and the send keeps them):
        `{people, teams}` rows of `escalation_targets.cypher`."""
        people = [t["person"] for t in notify if "person" in t]
        teams = [t["team"] for t in notify if "team" in t]
        result: dict[str, Any] = task.step(
            f"escalation_level_{n}", {"people": people, "teams": teams},
            lambda: task.graph.one("escalation_targets", {"people": people, "teams": teams}),
            deferred=True,
        )  # fmt: skip
        return result
