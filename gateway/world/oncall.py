"""On-call that does not expire: shifts expanded ahead from each team's stored definition (a
round-robin rotation or an iCalendar export), refreshed on a schedule by `serve`, and coverage
checks (nobody on call now; a gap within the next 14 days) for `doctor`, `/metrics` and
`blast-radius oncall`.

The definition lives in the graph (`Team.oncall_json`), so a refresh needs no world file.
Times are ms since the epoch, UTC. Calendars are parsed with `icalendar` and expanded with
`recurring-ical-events` (RRULE, RDATE, EXDATE, RECURRENCE-ID overrides, time zones).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import icalendar
import recurring_ical_events

from adapters.falkordb import TenantGraph
from agents.respond.escalation import policy_lines
from gateway.world.model import IcalSpec, RotationSpec, TeamSpec

log = logging.getLogger(__name__)

#: Shifts are expanded over [now - SHIFTS_BACK, now + SHIFTS_AHEAD) at each refresh.
SHIFTS_BACK = timedelta(days=7)
SHIFTS_AHEAD = timedelta(days=90)
#: At most this many shifts a calendar may hold in the window: one a minute would be 140,000.
MAX_CALENDAR_SHIFTS = 5_000
#: A team whose shifts leave a gap within this horizon is reported.
COVERAGE_HORIZON = timedelta(days=14)


def ms(moment: datetime) -> int:
    """A timezone-aware datetime as ms since the epoch."""
    return int(moment.timestamp() * 1000)


def definition_json(team: TeamSpec) -> str | None:
    """The team's on-call definition as stored on `Team.oncall_json` (None: none given)."""
    if team.oncall is None:
        return None
    return team.oncall.model_dump_json()


def rotation_shifts(rotation: RotationSpec, now: datetime) -> list[dict[str, Any]]:
    """Shifts `{person, starts_at, ends_at}` of a rotation over [now - 7 d, now + 90 d)."""
    start = rotation.start if rotation.start.tzinfo else rotation.start.replace(tzinfo=UTC)
    length = timedelta(hours=rotation.shift_hours)
    index = max(0, int((now - SHIFTS_BACK - start) / length))
    shifts = []
    while (begin := start + index * length) < now + SHIFTS_AHEAD:
        shifts.append(
            {
                "person": rotation.rotation[index % len(rotation.rotation)],
                "starts_at": ms(begin),
                "ends_at": ms(begin + length),
            }
        )
        index += 1
    return shifts


def read_calendar(source: str, timeout_s: float = 10.0) -> bytes:
    """The bytes of an iCalendar file path or http(s) URL. Raises `OSError` or `httpx.HTTPError`."""
    if source.startswith(("http://", "https://")):
        answer = httpx.get(source, timeout=timeout_s, follow_redirects=True)
        answer.raise_for_status()
        return answer.content
    return Path(source).read_bytes()


def _aware(value: datetime | date) -> datetime:
    if not isinstance(value, datetime):  # an all-day event: midnight UTC
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def event_person(event: Any, members: list[dict[str, Any]]) -> tuple[str | None, str]:
    """The member an on-call event names, and the text it was matched from.

    Rule: by email first (ATTENDEE / ORGANIZER `mailto:`), then by name: the
    SUMMARY, or one of its ` - ` separated parts (PagerDuty writes `On Call - Name - Schedule`),
    equal to a member's name, case-insensitively. No other guess.
    """
    by_email = {str(m["email"]).lower(): m["name"] for m in members if m.get("email")}
    by_name = {str(m["name"]).lower(): m["name"] for m in members}
    attendees = event.get("ATTENDEE") or []
    addresses = [attendees] if not isinstance(attendees, list) else attendees
    if event.get("ORGANIZER"):
        addresses = [*addresses, event.get("ORGANIZER")]
    for address in addresses:
        email = str(address).removeprefix("mailto:").removeprefix("MAILTO:").lower()
        if email in by_email:
            return by_email[email], email
    summary = str(event.get("SUMMARY") or "").strip()
    for part in [summary, *summary.split(" - ")]:
        if part.strip().lower() in by_name:
            return by_name[part.strip().lower()], summary
    named = [str(a).removeprefix("mailto:") for a in addresses]
    return None, summary or ", ".join(named) or "(an event with no summary or attendee)"


def calendar_shifts(
    data: bytes, members: list[dict[str, Any]], now: datetime
) -> tuple[list[dict[str, Any]], list[str]]:
    """Shifts from an iCalendar export over [now - 7 d, now + 90 d), and the names of events
    that match no member (reported, never dropped silently). Raises `ValueError` if the
    calendar does not parse, or holds more than `MAX_CALENDAR_SHIFTS` shifts in that window
    (an `RRULE:FREQ=MINUTELY` is a mistake, and took 10 s of CPU to expand)."""
    calendar = icalendar.Calendar.from_ical(data)
    events: list[Any] = []
    for event in recurring_ical_events.of(calendar).after(now - SHIFTS_BACK):  # by start
        if _aware(event["DTSTART"].dt) >= now + SHIFTS_AHEAD:
            break
        if len(events) == MAX_CALENDAR_SHIFTS:
            raise ValueError(
                f"more than {MAX_CALENDAR_SHIFTS} shifts within {SHIFTS_AHEAD.days} days: "
                "is an RRULE's FREQ too short?"
            )
        events.append(event)
    shifts, unmatched = [], []
    for event in events:
        person, named = event_person(event, members)
        if person is None:
            unmatched.append(named)
            continue
        begin = _aware(event["DTSTART"].dt)
        end = _aware(event["DTEND"].dt) if event.get("DTEND") else begin + event["DURATION"].dt
        shifts.append({"person": person, "starts_at": ms(begin), "ends_at": ms(end)})
    return sorted(shifts, key=lambda s: s["starts_at"]), sorted(set(unmatched))


@dataclass
class Refresh:
    """What one refresh did: shifts written per team, unmatched calendar names per team, and
    teams whose definition could not be read (their previous shifts are kept)."""

    shifts: dict[str, int] = field(default_factory=dict)
    unmatched: dict[str, list[str]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


def refresh_oncall(graph: TenantGraph, now: datetime | None = None) -> Refresh:
    """Expand every team's stored on-call definition into shifts around `now` (default: now),
    replacing that team's shifts. A calendar that cannot be read keeps the team's old shifts;
    its error names the calendar and says why in one line. A calendar with no event in the
    window is written (no shifts) and reported as an error too, or the team would look covered.
    """
    now = now or datetime.now(UTC)
    done = Refresh()
    for row in graph.rows("oncall_definitions"):
        team, text = row["team"], row["oncall_json"]
        if not text:
            continue
        members = [m for m in row["members"] if m]
        raw = json.loads(text)
        where = f"calendar {raw['ical']}: " if "ical" in raw else ""
        try:
            if "ical" in raw:
                spec = IcalSpec.model_validate(raw)
                shifts, unmatched = calendar_shifts(read_calendar(spec.ical), members, now)
                if unmatched:
                    done.unmatched[team] = unmatched
                if not shifts and not unmatched:
                    done.errors[team] = f"{where}no event in the {SHIFTS_AHEAD.days} days ahead"
            else:
                shifts = rotation_shifts(RotationSpec.model_validate(raw), now)
        except UnicodeDecodeError as exc:  # a ValueError: said before the generic one
            done.errors[team] = f"{where}not UTF-8 (byte 0x{exc.object[exc.start]:02x})"
        except OSError as exc:  # the path is said once, in `where`
            done.errors[team] = f"{where}{exc.strerror or type(exc).__name__}"
        except (httpx.HTTPError, ValueError) as exc:
            done.errors[team] = f"{where}{(str(exc).splitlines() or [type(exc).__name__])[0][:200]}"
        else:
            graph.rows("replace_shifts", {"team": team, "shifts": shifts})
            done.shifts[team] = len(shifts)
        if team in done.errors:
            log.warning("on-call of team %s: %s", team, done.errors[team])
    return done


@dataclass(frozen=True)
class Coverage:
    """One team's on-call coverage: who is on call at `at`, and the first moment within the
    horizon nobody is (`gap_at`, ms; None: covered throughout); and whom its page escalates
    to while nobody acknowledges it (`escalation`: its policy in words, a line per level,
    `agents.respond.escalation.policy_lines`; [] for none)."""

    team: str
    is_default: bool
    on_call: list[str]
    gap_at: int | None
    escalation: list[str]


def coverage(
    graph: TenantGraph, at: datetime | None = None, horizon: timedelta = COVERAGE_HORIZON
) -> list[Coverage]:
    """Coverage of every team from `at` (default now) to `at + horizon`, sorted by team."""
    at = at or datetime.now(UTC)
    start, end = ms(at), ms(at + horizon)
    found = []
    for row in graph.rows("team_shifts", {"from": start, "to": end}):
        shifts = sorted(s for s in row["shifts"] if s)
        on_call = sorted({s[2] for s in shifts if s[0] <= start < s[1] and s[2]})
        covered_until, gap_at = start, None
        for begin, finish, _ in shifts:
            if begin > covered_until:
                break
            covered_until = max(covered_until, finish)
        if covered_until < end:
            gap_at = covered_until
        found.append(Coverage(
            row["team"], bool(row["is_default"]), on_call, gap_at, policy_lines(row["policy"])
        ))  # fmt: skip
    return found


def coverage_problems(found: list[Coverage], at: datetime) -> list[str]:
    """One line per team with nobody on call at `at` (said "now" when `at` is within a minute
    of the clock) or a gap within the horizon."""
    close = abs(datetime.now(UTC) - at) < timedelta(minutes=1)
    moment = "now" if close else f"at {at.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
    lines = []
    for team in found:
        if not team.on_call:
            lines.append(f"team {team.team} has nobody on call {moment}")
        elif team.gap_at is not None:
            when = datetime.fromtimestamp(team.gap_at / 1000, UTC).strftime("%Y-%m-%d %H:%M")
            days = (team.gap_at - ms(at)) / 86_400_000
            lines.append(
                f"team {team.team} has nobody on call from {when} UTC (in {days:.1f} days)"
            )
    return lines
