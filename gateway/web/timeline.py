"""An incident's story in the order it happened, in words a responder reads: triggered, paged,
delivered or fell back, acknowledged, escalated, cause found or changed, confirmed or corrected,
remediation proposed, approved or rejected, run and verified, resolved. Every line is a record
in the graph (`cypher/web_timeline.cypher`); nothing is inferred that the graph does not hold.

Each event is `{at (ms UTC), intent, kind, text, who, link}`: `intent` the intent id of a
message or ticket (an Action's; None for other events: the page shows it on hover, for
whoever debugs), `kind` is a CSS-safe word for the
event (`alert`, `held`, `page`, `delivery`, `ack`, `escalation`, `cause`, `verdict`,
`remediation`, `ticket`, `resolved`, `opened`, `notice`), `who` the person or channel named (or
None) and `link`
an http(s) URL (a ticket) or None.
"""

from __future__ import annotations

from typing import Any

from adapters.falkordb import TenantGraph
from adapters.notices import fmt_ms, in_words
from agents.investigate.decision import LEAD_BELOW
from agents.respond.messages import VERDICT_TEXT_SHOWN

#: Alerts listed one by one (firing, then resolved) before the rest are summed up in one line.
ALERTS_LISTED = 6
#: The order of events recorded in the same millisecond (the incident opens before its page),
#: by the query's event name and by the event's kind.
ORDER = ("opened", "alert", "alerts_more", "finding", "cause", "held", "action", "page",
         "ticket", "delivery", "notice",
         "escalation", "acknowledged", "ack", "verdict", "remediation_proposed",
         "remediation_approved", "remediation_rejected", "remediation_run",
         "remediation_verified", "remediation",
         "alert_resolved", "resolved_more", "resolved")  # fmt: skip

#: A finding that names a cause under this confidence is shown as "named, low confidence", not
#: as found: the investigator's own line, under which the page calls it a lead.
LOW_CONFIDENCE = LEAD_BELOW


def ticket_link(ref: str | None, github_api_url: str) -> str | None:
    """The web URL of a ticket ref: `github:owner/repo#12` -> `https://github.com/owner/repo/
    issues/12` (GitHub Enterprise: the host of `GITHUB_API_URL` without `/api/v3`); an http(s)
    ref as it is; None otherwise (the outbox's refs are files, not links)."""
    if not ref:
        return None
    if ref.startswith(("https://", "http://")):
        return ref
    if not ref.startswith("github:") or "#" not in ref:
        return None
    repo, _, number = ref.removeprefix("github:").partition("#")
    number = number.split("/", 1)[0]
    if not number.isdigit():
        return None
    if github_api_url.rstrip("/") == "https://api.github.com":
        base = "https://github.com"
    else:
        base = github_api_url.rstrip("/").removesuffix("/api/v3")
    return f"{base}/{repo}/issues/{number}"


def paged_words(route: dict[str, Any] | None, nobody: bool = False) -> dict[str, str] | None:
    """Whom a page went to, in words for people, never None: `{who, where, team}`. `who` is
    the person on call; else `nobody on call` when the page went to a channel (`where` names
    the team and channel, or the default channel); else `nobody paged` (`nobody`: the
    incident's `nobody_paged`, no team on call and no channel), `where` saying why (the
    route's reason). `where` is ` (checkout, #checkout-oncall)`, ` (<reason>)` or empty; `team`
    the team or empty. None without a route (not paged yet). The web page, its list and
    `blast-radius incident` say it so."""
    if not route:
        return None
    team, channel = route.get("team") or "", route.get("channel") or ""
    named = ", ".join(str(p) for p in (team, channel) if p)
    if route.get("person"):
        return {"who": str(route["person"]), "where": f" ({named})" if named else "", "team": team}
    if nobody:
        reason = route.get("reason") or "no team on call, no channel"
        return {"who": "nobody paged", "where": f" ({reason})", "team": team}
    return {"who": "nobody on call", "where": f" ({named or 'the default channel'})",
            "team": team}  # fmt: skip


def _routed(
    paged: dict[str, Any] | None, via: str, done: str, nobody: bool = False
) -> tuple[str, str | None]:
    """Where a page to route `paged` went, and the person named (or None): ` Ed Example
    (catalog) in #catalog-oncall via slack`; with nobody on call, the channel: ` #catalog-oncall
    (catalog: nobody on call) via slack` (` the default channel (nobody on call)` without one);
    with `nobody` (the page reached no one), why: ` (no team owns vote; …): the page went to
    no one, via outbox`; without a route, ` via outbox`."""
    if not paged:
        return f"{via}{done}", None
    who, team = paged.get("person"), paged.get("team")
    if who:
        where = f" in {paged['channel']}" if paged.get("channel") else ""
        return f" {who}{f' ({team})' if team else ''}{where}{via}{done}", str(who)
    if nobody:
        reason = paged.get("reason") or "no team on call, no channel"
        return f" ({reason}): the page went to no one,{via or ' nowhere'}{done}", None
    channel = paged.get("channel") or "the default channel"
    return f" {channel} ({f'{team}: ' if team else ''}nobody on call){via}{done}", None


def _action(
    row: dict[str, Any],
    paged: dict[str, Any] | None,
    api_url: str,
    first: dict[str, Any] | None = None,
    nobody: bool = False,
) -> dict[str, Any]:
    """Words for one Action (`intent_id` says what it was for: `incident:<id>:<what>`): the
    page names `first` (the route it went to; `paged` when not given), a page for a new
    cause names `paged` (the latest route); `nobody`: the page reached no one (`nobody
    paged`)."""
    intent, status = row["detail"] or "", row["who"] or ""
    kind, adapter, ref, notified = ([*list(row["ref"] or []), None, None, None, None])[:4]
    what = intent.split(":", 2)[2] if intent.count(":") >= 2 else intent
    done = {"sent": "", "reserved": " (being sent)", "unknown": " (outcome unknown: checking)",
            "failed": " (failed)"}.get(status, f" ({status})")  # fmt: skip
    if what.endswith(":fallback"):  # a copy of `<intent>` after no channel took it
        return _fallback(row, paged, api_url, first, nobody, intent, adapter, done)
    via = f" via {adapter}" if adapter else ""
    if what == "initial-notification":
        route = first or paged
        said, who = _routed(route, via, done, nobody)
        verb = "Page sent" if not route else "Nobody paged" if nobody and not who else "Paged"
        return {"kind": "page", "text": f"{verb}{said}", "who": who, "link": None}
    if kind == "ticket" or what == "ticket":
        link = ticket_link(ref, api_url)
        if link:
            shown = f" {ref.removeprefix('github:')}" if ref else ""
        else:
            shown = " in the local outbox" if ref and ref.startswith("outbox:") else ""
        return {"kind": "ticket", "text": f"Ticket opened{shown}{done}", "who": None,
                "link": link}  # fmt: skip
    if kind == "escalate" or what.startswith("escalate:"):
        # `escalate:<n>`, or `reopen:<k>:escalate:<n>` / `retrigger:<k>:escalate:<n>`
        round_, _, level = what.rpartition("escalate:")
        again = {"reopen": " (after a reopen)", "retrigger": " (after a failed remediation)"}
        after = again.get(round_.partition(":")[0], "")
        to = f": {notified}" if notified else ""
        return {"kind": "escalation", "text": f"Escalated to level {level or '?'}{after}{to}"
                f"{via}{done}", "who": notified, "link": None}  # fmt: skip
    if what.startswith("update:"):
        return {"kind": "cause", "text": f"Cause changed: the page's thread was told{done}",
                "who": None, "link": None}  # fmt: skip
    if what.startswith("repage:"):
        said, who = _routed(paged, via, done)
        return {"kind": "page", "text": f"Paged for the new cause:{said}" if paged
                else f"Paged the new cause's on-call{said}", "who": who, "link": None}  # fmt: skip
    if what.startswith("repage-note:"):
        return {"kind": "notice", "text": f"Told the page's thread who was paged for the new "
                f"cause{done}", "who": None, "link": None}  # fmt: skip
    if what.startswith("told:"):
        team = what.partition(":")[2]
        return {"kind": "notice", "text": f"Told team {team} (their component alerts){done}",
                "who": team, "link": None}  # fmt: skip
    words = _notice_words(what)
    text = f"{words}{via}{done}" if words else f"Sent {kind or 'notice'} ({what}){via}{done}"
    return {"kind": "notice", "text": text, "who": None, "link": None}


def _fallback(
    row: dict[str, Any],
    paged: dict[str, Any] | None,
    api_url: str,
    first: dict[str, Any] | None,
    nobody: bool,
    intent: str,
    adapter: str | None,
    done: str,
) -> dict[str, Any]:
    """Words for the copy of a message no channel took (intent `<intent>:fallback`, sent
    through the fallback notifier `adapter`, the outbox): the page's reads "Copied the page to
    the outbox: no channel took it" (the deliveries above it say who refused it and why);
    another's says what the message was, then that it was copied. A trial read "Sent
    notification (initial-notification:fallback) via outbox"."""
    to = "the outbox" if adapter == "outbox" else adapter or "the fallback notifier"
    if intent.endswith(":initial-notification:fallback"):
        return {"kind": "delivery", "text": f"Copied the page to {to}: no channel took it{done}",
                "who": None, "link": None}  # fmt: skip
    kind, _adapter, *rest = [*list(row["ref"] or []), None, None, None, None][:4]
    inner = {**row, "detail": intent.removesuffix(":fallback"), "who": "sent",
             "ref": [kind, None, *rest]}  # fmt: skip
    said = _action(inner, paged, api_url, first, nobody)
    said["text"] = f"{said['text']}: copied to {to}, no channel took it{done}"
    return said


def _notice_words(what: str) -> str | None:
    """What a notice after the page did, in words, from its intent's tail (`what`): the page
    restated or edited and why, the thread told, the ticket closed; None for one this does
    not know (the timeline then names its kind and intent). A new user's trial read "Sent
    update (page:update:reinvestigate:inc-…:joined:f6bc1ff567fa) via outbox"."""
    if what.startswith("remediation:"):
        return _remediation_words(what.removeprefix("remediation:"))
    if what.startswith("page:update:"):
        return "Page restated with the diagnosis"
    if what.startswith("page:notify_verdict:"):
        return "Page edited to show the verdict"
    if what.startswith("page:reopened:"):
        return "Page restated: firing again"
    if what == "acknowledged" or what.startswith("acknowledged:"):
        return "Page edited: acknowledged"
    if what == "resolved":
        return "Page edited: resolved"
    if what == "resolve-notice":
        return "Resolve notice sent in the page's thread"
    if what == "ticket-resolved":
        return "Ticket closed"
    if what.startswith("cleared:"):
        return "Told the page's thread an alert cleared"
    if what.startswith("reopened:"):
        return "Told the page's thread it fires again"
    return None


#: What the acting agent's messages about a fix said, by their intent's last part
#: (`agents.act.notices.intent`), `{}` standing for the playbook id.
REMEDIATION_WORDS = {
    "proposed": "Sent the fix's proposal ({})",
    "decided": "Edited the fix's proposal ({}) to say who decided it",
    "started": "Said the fix ({}) started",
    "run-failed": "Said the fix ({}) failed to run",
    "verification:verified": "Said the fix ({}) was verified",
    "verification:failed": "Said the fix ({}) did not work",
    "verification:unknown": "Said the fix's outcome ({}) is unknown",
    "verification-ticket": "Commented the fix's verification ({}) on the ticket",
}


def _remediation_words(rest: str) -> str:
    """`<playbook id>:<step>` (the playbook id may hold colons) in words: "Sent the fix's
    proposal (cart-flag-off)"; a step this does not know is named as it is."""
    for step, words in REMEDIATION_WORDS.items():
        if rest.endswith(f":{step}"):
            return words.format(rest.removesuffix(f":{step}"))
    playbook, _, step = rest.rpartition(":")
    return f"Sent a message about the fix ({playbook or step}): {step}"


def _words(
    row: dict[str, Any],
    paged: dict[str, Any] | None,
    api_url: str,
    first: dict[str, Any] | None = None,
    nobody: bool = False,
) -> dict[str, Any]:
    event, detail, who, ref = row["event"], row["detail"], row["who"], row["ref"]
    plain = {"who": who, "link": None}
    if event == "opened":
        return {"kind": "opened", "text": "Incident opened", **plain}
    if event == "alert":
        on = f" on {who}" if who else " (no known component)"
        return {"kind": "alert", "text": f"▲ {detail} firing{on}", **plain}
    if event == "alert_resolved":
        on = f" on {who}" if who else ""
        return {"kind": "alert_resolved", "text": f"✓ {detail}{on} resolved", **plain}
    if event in ("alerts_more", "resolved_more"):
        joined = event == "alerts_more"
        kind, did = ("alert", "joined") if joined else ("alert_resolved", "resolved")
        return {"kind": kind, "text": f"… {int(detail):,} more alerts {did} (all in Alerts below)",
                **plain}  # fmt: skip
    if event == "finding":
        found = ref or {}
        if found.get("planner") == "heartbeat":  # a silence, no service: nothing was diagnosed
            return {"kind": "cause", "text": "The heartbeat stopped arriving: the alerting "
                    "pipeline may be down", "who": None, "link": None}  # fmt: skip
        if detail:
            low = (found.get("confidence") or 0) < LOW_CONFIDENCE
            text = f"Cause named, low confidence: {detail}" if low else f"Cause found: {detail}"
            return {"kind": "cause", "text": text, "who": None, "link": None}
        names = " or ".join((found.get("candidates") or [])[:3]) or "no known component"
        return {"kind": "cause", "text": f"Inconclusive: {names}", "who": None, "link": None}
    if event == "held":  # a maintenance window held the page (or a reopen's notice)
        ends_at, ended_by = ([*list(ref or []), None, None])[:2]
        name = f"'{detail}'" if detail else "(no reason given)"
        text = f"Held by maintenance window {name} ({who or 'someone'}) until {fmt_ms(ends_at)}"
        if ended_by:
            text += f", ended by {ended_by}"
        return {"kind": "held", "text": text, **plain}
    if event == "action":
        return _action(row, paged, api_url, first, nobody)
    if event == "delivery":
        _intent, reason, fallback = ([*list(ref or []), None, None, None])[:3]
        if detail == "delivered":
            text = f"Delivered to {who}"
            if fallback:
                text += f" (fell back from {fallback})"
        else:
            text = f"Not delivered to {who}: {detail}" + (f" ({reason})" if reason else "")
        return {"kind": "delivery", "text": text, **plain}
    if event == "acknowledged":
        return {"kind": "ack", "text": f"Acknowledged by {who or 'someone'}", **plain}
    if event == "verdict":
        # [actual_cause, text, source] (`web_timeline.cypher`)
        cause, words, source = ([*list(ref or []), None, None, None])[:3]
        if detail == "confirmed":
            text = f"Cause confirmed{f' ({cause})' if cause else ''} by {who}"
        elif detail == "rejected":
            text = (
                f"Cause corrected to {cause} by {who}" if cause else f"Cause marked wrong by {who}"
            )
        else:
            text = f"Marked resolved by {who}"
        said = in_words(words, VERDICT_TEXT_SHOWN, source) if source != "reply" else None
        if said:  # what happened, in their words (a thread reply's is the reply itself)
            text += f": “{said}”"
        return {"kind": "verdict", "text": text, **plain}
    if event.startswith("remediation_"):
        step = event.removeprefix("remediation_")
        parts = list(ref or [])
        if step == "proposed":
            playbook = f" from playbook {parts[1]}" if len(parts) > 1 and parts[1] else ""
            text = f"Remediation proposed: {detail}{playbook}"
        elif step in ("approved", "rejected"):
            text = f"Remediation {detail} {step} by {who}"
        elif step == "run":
            n = parts[1] if len(parts) > 1 else "?"
            text = f"Remediation {detail} run (attempt {n}): {who or 'no outcome yet'}"
        else:
            extra = f" ({parts[1]})" if len(parts) > 1 and parts[1] else ""
            text = f"Remediation {detail} verification: {who}{extra}"
        return {"kind": "remediation", "text": text, **plain}
    if event == "resolved":
        return {"kind": "resolved", "text": f"Resolved{f' by {who}' if who else ''}", **plain}
    return {"kind": "notice", "text": event, **plain}


def events(
    graph: TenantGraph,
    incident_id: str,
    paged: dict[str, Any] | None,
    github_api_url: str,
    first: dict[str, Any] | None = None,
    nobody: bool = False,
) -> list[dict[str, Any]]:
    """The incident's events, oldest first (see the module doc for the shape); `paged` the
    latest route paged, `first` the page's own (`web_paged.cypher`); `nobody`: its page
    reached no one (the incident's `nobody_paged`). After
    `ALERTS_LISTED` alerts the rest become one line ("… 12 more alerts joined"), and after
    as many alerts resolved, the rest of those ("… 12 more alerts resolved")."""
    rows = [
        r for r in graph.rows("web_timeline", {"incident_id": incident_id, "listed": ALERTS_LISTED})
        if r["at"]
    ]  # fmt: skip
    if any(r["event"] == "resolved" and r["who"] for r in rows):
        # the page's Resolve records a `resolved` verdict too: one line for one act
        rows = [r for r in rows if not (r["event"] == "verdict" and r["detail"] == "resolved")]
    # a copy made after every channel refused is written apart from the refusals (its own
    # clock reading, which may be a millisecond before theirs): it goes after them all
    refused_until: dict[str, int] = {}
    for r in rows:
        if r["event"] == "delivery" and r["ref"]:
            intent = str(r["ref"][0])
            refused_until[intent] = max(refused_until.get(intent, r["at"]), r["at"])
    rows.sort(key=lambda r: _order(r, refused_until))
    return [
        {"at": row["at"], "intent": row["detail"] if row["event"] == "action" else None,
         **_words(row, paged, github_api_url, first, nobody)}
        for row in rows
    ]  # fmt: skip


def _rank(kind: str) -> int:
    return ORDER.index(kind) if kind in ORDER else len(ORDER)


def _order(row: dict[str, Any], refused_until: dict[str, int]) -> tuple[int, int, int, int]:
    """Where a `web_timeline` row goes: by time, then by `ORDER`. A page's delivery attempts
    are written together and share a millisecond: its refusals come first, in the order they
    were made (the Delivery's `n`; a record without one by outcome alone), then the delivery
    that fell back, then the copy of a message no channel took (`<intent>:fallback`), never
    before the last delivery record of its intent (`refused_until`: intent → ms UTC)."""
    event = row["event"]
    if event == "delivery":
        n = ([*list(row["ref"] or []), None, None, None, None])[3]
        return (row["at"], _rank(event), 1 if row["detail"] == "delivered" else 0, n or 0)
    if event == "action" and str(row["detail"] or "").endswith(":fallback"):
        at = max(row["at"], refused_until.get(str(row["detail"]).removesuffix(":fallback"), 0))
        return (at, _rank("delivery"), 2, 0)
    return (row["at"], _rank(event), 0, 0)
