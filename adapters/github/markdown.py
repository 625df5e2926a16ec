"""Tickets as GitHub-flavoured Markdown: the issue's title, body and labels, and the closing
comment, rendered from the responder's notices.

Every field is data, never markup. Raw alert text and change refs appear only in code blocks or
code spans (CommonMark: nothing inside them is markup); every other field (severity, names,
summary, reasons) goes through `text()`, which escapes Markdown punctuation with backslashes,
writes `&`, `<`, `>` as HTML entities (GitHub renders raw HTML), and breaks @-mentions with a
zero-width space (`@&#8203;name`, as Renovate and Dependabot do) so no field pings anyone.
"""

from __future__ import annotations

import json
import re
from typing import Any

from adapters.notices import (
    SET_ASIDE,
    StepNote,
    Ticket,
    TicketUpdate,
    fmt_ms,
    still_firing,
    tenant_prefix,
)

#: GitHub's issue body limit is 65,536 characters; keep a margin for the marker and the cut note.
TICKET_BODY_LIMIT = 60_000
#: Markdown punctuation that can start emphasis, a link, a heading, a table cell or code.
_PUNCTUATION = re.compile(r"([\\`*_\[\]#|~])")
#: A list item or block quote when at the start of a line.
_LINE_START = re.compile(r"^(\s*)([-+>]|\d+[.)])")
_MENTION = re.compile(r"@(?=[A-Za-z0-9_-])")


def text(value: object) -> str:
    """Untrusted text for a Markdown line: newlines become spaces, HTML special characters
    become entities, Markdown punctuation is backslash-escaped, `@name` cannot mention."""
    flat = " ".join(str(value).splitlines())
    flat = flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    flat = _PUNCTUATION.sub(r"\\\1", flat)
    flat = _LINE_START.sub(r"\1\\\2", flat)
    return _MENTION.sub("@&#8203;", flat)


def inline_code(value: str) -> str:
    """A Markdown code span for untrusted text: no markup, link or @mention can form in it.

    Newlines become spaces; the fence is longer than any backtick run inside (CommonMark).
    """
    flat = " ".join(str(value).split("\n"))
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat.strip() else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def code_block(value: str) -> str:
    """A Markdown fenced code block whose fence is longer than any backtick run in `value`."""
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{value}\n{fence}"


def url(value: str, label: str) -> str:
    """A Markdown link to an http(s) URL (its `<`, `>`, spaces and `)` percent-encoded), else
    the value as a code span."""
    if not value.startswith(("https://", "http://")):
        return inline_code(value)
    safe = value.replace(" ", "%20").replace("<", "%3C").replace(">", "%3E").replace(")", "%29")
    return f"[{text(label)}](<{safe}>)"


def verbatim(raw: dict[str, Any]) -> str:
    """An alert's raw fields as indented `name: value` lines, values exactly as received."""
    lines = [f"fingerprint: {raw['fingerprint']}"] if raw.get("fingerprint") else []
    for section in ("labels", "annotations"):
        lines.append(f"{section}:")
        for name, value in sorted(raw[section].items()):
            shown = str(value).replace("\n", "\n    ")
            lines.append(f"  {name}: {shown}")
    if raw.get("values") is not None:
        lines.append(f"values: {json.dumps(raw['values'], sort_keys=True)}")
    lines += [f"startsAt: {raw['startsAt']}", f"status: {raw['status']}",
              f"generatorURL: {raw['generatorURL']}"]  # fmt: skip
    return "\n".join(lines)


def ticket_ref(ref: str) -> str:
    """How a ticket body names another ticket: `owner/repo#12` for a GitHub issue ref
    (`github:owner/repo#12`; GitHub links it), else the ref as a code span."""
    if ref.startswith("github:") and "#" in ref:
        return ref.removeprefix("github:").split("/comments/")[0]
    return inline_code(ref)


def _names(items: list[str], shown: int) -> str:
    """`a, b, c +2 more` for a list of names."""
    head = ", ".join(items[:shown])
    return head + (f" +{len(items) - shown} more" if len(items) > shown else "")


def title(ticket: Ticket) -> str:
    """The issue title (plain text: GitHub renders no markup in titles): severity, the symptom
    (alert names and where), and the root cause, e.g. `[critical] ServiceHighErrorRate on
    payment, checkout, frontend +1 more — root cause: payment`, `… — likely cause (low
    confidence): payment` for a lead (`Ticket.lead`: the title is what a list of issues
    shows, so it must not read as sure), or `… — root cause unclear: load-generator or
    frontend-web`. A heartbeat's silence has no cause to name: `[critical] No Watchdog
    heartbeat for 3 min: the alerting pipeline may be down`; Grafana's contact-point test says
    it is one: `[unknown] TestAlert — a test notification, nothing is broken`. With several
    tenants served, the tenant comes first (`tenant_prefix`): `[acme] [critical] …`."""
    named = tenant_prefix(ticket.organisation)
    if ticket.heartbeat:
        return f"{named}[{ticket.severity}] {ticket.title}"
    names = ticket.alert_names or [ticket.title]
    symptom = _names(names, 2) + (f" on {_names(ticket.where, 3)}" if ticket.where else "")
    if ticket.contact_point_test:
        why = "a test notification, nothing is broken"
    elif ticket.root_cause and ticket.lead:
        why = f"likely cause (low confidence): {ticket.root_cause}"
    elif ticket.root_cause:
        why = f"root cause: {ticket.root_cause}"
    elif ticket.candidates:
        why = "root cause unclear: " + " or ".join(ticket.candidates[:3])
    else:
        why = "root cause unknown"
    return f"{named}[{ticket.severity}] {symptom} — {why}"


def labels(ticket: Ticket) -> list[str]:
    """`severity:<s>` and `component:<name>` for the cause (else the first three candidates)."""
    names = [ticket.root_cause] if ticket.root_cause else ticket.candidates[:3]
    return [f"severity:{ticket.severity}"] + [f"component:{name}" for name in names]


#: What a tool's answer (`agents.investigate.tools.base.ToolResult`) says before its detail
#: line, by its status.
_TOOL_STATUS = {"ok": "", "no_data": "no data", "error": "error"}
#: The longest account of one step's result a ticket shows (characters).
STEP_RESULT_CHARS = 160


def _rows(n: int) -> str:
    return f"{n} row{'' if n == 1 else 's'}"


def _step_result(result: str | None) -> str:
    """A short human account of a stored step result (JSON): a tool's answer (`{status,
    data, raw, detail}`) by its detail line, after its status when that is not ok (`no data:
    no playbooks recalled`, `error: …`), else by the rows it found; a list by its rows (`3
    rows`); any other value in short, as code."""
    try:
        value = json.loads(result or "null")
    except json.JSONDecodeError:
        return "unreadable result"
    if isinstance(value, dict) and value.get("status") in _TOOL_STATUS:
        data, detail = value.get("data"), " ".join(str(value.get("detail") or "").split())
        if not detail and isinstance(data, list):
            detail = _rows(len(data))
        said = ": ".join(part for part in (_TOOL_STATUS[value["status"]], detail) if part)
        said = said or "ok"
        cut = said if len(said) <= STEP_RESULT_CHARS else said[: STEP_RESULT_CHARS - 1] + "…"
        return text(cut)
    if isinstance(value, list):
        return _rows(len(value))
    if value is None:
        return "no result"
    shown = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return inline_code(shown if len(shown) <= 80 else shown[:79] + "…")


def steps_section(steps: list[StepNote], limit: int = 60) -> list[str]:
    """The investigator's checkpointed steps as Markdown lines, one numbered list per task:
    tool, arguments (cut at 200 characters), what the result said (`_step_result`)."""
    lines: list[str] = []
    task = None
    for shown, step in enumerate(steps):
        if shown == limit:
            lines.append(f"- … and {len(steps) - limit} more steps")
            break
        if step.task_id != task:
            task = step.task_id
            lines += ["", f"**{text(step.kind)}** (task {inline_code(task)}):"]
        args = step.args or ""
        args = args if len(args) <= 200 else args[:199] + "…"
        lines.append(
            f"{step.n}. {inline_code(step.tool)} {inline_code(args)} → {_step_result(step.result)}"
        )
    return lines or ["- none recorded"]


def _capped(lines: list[str], limit: int, what: str) -> list[str]:
    if len(lines) <= limit:
        return lines
    return [*lines[:limit], f"- … and {len(lines) - limit} more {what}"]


def evidence_section(raws: list[dict[str, Any]], budget: int, incident_id: str) -> str:
    """Each alert's raw fields (`verbatim`) in its own code block, within `budget` characters.

    When they do not fit, the last alert that fits in part is cut inside its block, later ones
    are left out, and a closing line says how many alerts and characters were left out.
    """
    texts = [verbatim(raw) for raw in raws]
    total = sum(len(t) for t in texts)
    note_room = 400
    out: list[str] = []
    used = shown = 0
    for index, body in enumerate(texts):
        block = "\n" + code_block(body)
        last = index == len(texts) - 1  # the last block needs no room for the note
        if used + len(block) <= budget - (0 if last else note_room):
            out.append(block)
            used += len(block)
            shown += len(body)
            continue
        room = budget - note_room - used
        head = body[: max(0, room - 40)]
        while head and len(block := "\n" + code_block(head + "\n…")) > room:
            head = head[: len(head) - (len(block) - room)]
        partial = 0
        if len(head) >= 200:
            out.append(block)
            shown += len(head)
            partial = 1
        left_alerts = len(texts) - index - partial
        parts = []
        if partial:
            parts.append(f"alert {index + 1} shown in part")
        if left_alerts:
            parts.append(f"{left_alerts} of {len(texts)} alerts not shown")
        out.append(
            f"\n\n_(evidence cut to stay under GitHub's 65,536-character limit: "
            f"{total - shown:,} of {total:,} characters left out; {', '.join(parts)}. "
            f"Every alert is in full at `GET /api/v1/incidents/{text(incident_id)}`.)_"
        )
        break
    return "".join(out)


#: The ticket's recent changes when no change source ever recorded one: nothing was measured.
NOT_CHECKED = (
    "- not checked (no change source configured: no deploy or merged pull request was ever "
    "recorded, by `POST /api/v1/changes` or `blast-radius topology changes`)"
)


def body(ticket: Ticket) -> str:
    """The issue body, under `TICKET_BODY_LIMIT` characters. Sections: the note first (e.g.
    why nobody was paged), incident and previous occurrence, root cause and confidence, graph
    paths, recent changes near the cause, candidates considered and why each was set aside, the
    investigator's steps, who was paged (and the quiet windows that held the page), and each
    alert's raw fields verbatim in code blocks (cut with a note when too long). A heartbeat's
    silence says what stopped and what to check instead of the cause, paths, changes,
    candidates, steps and evidence (`_silence_body`): nothing was diagnosed."""
    cause = ticket.root_cause
    candidates = ticket.candidates
    parts = _head(ticket)
    if ticket.heartbeat:
        return _silence_body(ticket, parts)
    lead = "; named, low confidence: a lead to check first, not a conclusion" if ticket.lead else ""

    parts += [
        "",
        "**Root cause:** none: a test notification, nothing is broken"
        if ticket.contact_point_test
        else f"**Root cause:** {text(cause)} (confidence {ticket.confidence or 0:.2f}{lead})"
        if cause
        else "**Root cause:** inconclusive"
        + (f"; check in this order: {text(', '.join(candidates))}" if candidates else ""),
        "",
        text(ticket.summary or ""),
        "",
        "### Graph path",
        *(_capped([f"- {text(' → '.join(p))}" for p in ticket.paths], 10, "paths")
          or ["- none: no path from an alerting component"]),
        "",
        "### Recent changes near the cause",
        *(_capped([
            f"- {fmt_ms(c.at)}: {text(c.kind)} {inline_code(c.ref or '')} on {text(c.component)}"
            + (f" by {inline_code(c.author)}" if c.author else "")
            for c in ticket.changes
        ], 20, "changes") or [
            f"- none in the {ticket.lookback_h} h before the incident opened"
            if ticket.changes_checked else NOT_CHECKED
        ]),
        "",
        "### Candidates considered",
        *(_capped(
            [f"- {text(name)}: {'the root cause' if name == cause else 'not ruled out'}"
             for name in candidates]
            + [f"- {text(name)}: {SET_ASIDE}, {text(why)}"
               for name, why in ticket.ruled_out.items()],
            40, "candidates",
        ) or ["- none" + ("" if cause else ": no alert matched a known component")]),
        "",
        "### Steps the investigator took",
        *steps_section(ticket.steps),
        "",
        f"### Paged\n{text(ticket.paged)}",
        *(["", text(ticket.held)] if ticket.held else []),
    ]  # fmt: skip
    if ticket.runbooks:
        parts += ["", "### Runbooks"]
        parts += [f"- {text(name)}: {url(link, link)}" for name, link in ticket.runbooks]
    if ticket.silences:
        parts += ["", "### Silence"]
        parts += [f"- {url(link, link)}" for link in ticket.silences]
    n = len(ticket.evidence)
    parts += ["", f"### Raw evidence ({n} alert{'' if n == 1 else 's'})"]
    if ticket.undelivered:
        parts = [f"> {text(ticket.undelivered)}", "", *parts]
    head = "\n".join(parts)
    if len(head) > TICKET_BODY_LIMIT // 3:
        head = head[: TICKET_BODY_LIMIT // 3] + "\n\n_(summary cut)_\n"
    return head + evidence_section(
        ticket.evidence, TICKET_BODY_LIMIT - len(head), ticket.incident_id
    )


def _head(ticket: Ticket) -> list[str]:
    """The body's first lines: the note (e.g. why nobody was paged), the incident, its page and
    the previous occurrence."""
    parts = [
        *([f"> {text(ticket.note)}", ""] if ticket.note else []),
        f"## Incident {text(ticket.incident_id)}: {text(ticket.status)}, "
        f"severity {text(ticket.severity)}",
        f"Opened {fmt_ms(ticket.opened_at)}"
        + (f", resolved {fmt_ms(ticket.resolved_at)}" if ticket.resolved_at else ""),
    ]
    if ticket.incident_url:
        parts.append(f"Incident page: {url(ticket.incident_url, ticket.incident_url)}")
    previous = ticket.previous
    if previous:
        where = (
            ticket_ref(previous.ticket_ref) if previous.ticket_ref
            else f"incident {text(previous.id)} (no ticket)"
        )  # fmt: skip
        ended = (
            f"resolved {fmt_ms(previous.resolved_at)}" if previous.resolved_at
            else text(previous.status)
        )  # fmt: skip
        parts.append(
            f"**Previous occurrence:** {where} (incident {text(previous.id)}, opened "
            f"{fmt_ms(previous.opened_at)}, {ended})"
        )
    return parts


def _silence_body(ticket: Ticket, head: list[str]) -> str:
    """The body of a heartbeat's silence after its `head`: what stopped, what to check, who
    was paged (and the quiet windows that held the page)."""
    parts = [
        *head, "", f"**{text(ticket.heartbeat or '')}**", "", text(ticket.summary or ""), "",
        f"### Paged\n{text(ticket.paged)}", *(["", text(ticket.held)] if ticket.held else []),
    ]  # fmt: skip
    if ticket.undelivered:
        parts = [f"> {text(ticket.undelivered)}", "", *parts]
    return "\n".join(parts)


def update_body(update: TicketUpdate) -> str:
    """The closing comment: resolution time (and who resolved it), the alerts that cleared
    and how many still fired (a resolve by hand); or its `note` (a remediation's
    verification), as plain text."""
    if update.note is not None:
        return text(update.note)
    by = f" by {text(update.resolved_by)}" if update.resolved_by else ""
    lines = [f"Resolved{by} at {fmt_ms(update.resolved_at)}."]
    if update.cleared:
        lines[0] += " Alerts that cleared:"
    lines += [f"- {inline_code(a.title)} on {text(a.component or 'unknown')} "
              f"at {fmt_ms(a.ends_at)}" for a in update.cleared]  # fmt: skip
    if update.still_firing:
        lines += ["", still_firing(update.still_firing)]
    if update.undelivered:
        lines += ["", f"_({text(update.undelivered)})_"]
    return "\n".join(lines)
