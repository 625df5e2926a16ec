"""Who is paged for an incident, and who else is told: routing that never ends at nobody.

Like Alertmanager's routing tree, whose root route always has a receiver, the world's
`default_team` is the root route (docs/architecture.md, evidence). In order:
1. the owner of the first component (root cause, then candidates, then alerting components)
   that has an owner: its person on call now (two owners of one component, from sources that
   disagree: the one a world file names, else the first by name);
2. that owner has nobody on call now: the default team's on-call, the reason stated;
3. no team owns any of the components: the default team's on-call, the reason stated (an
   incident of a heartbeat's silence has no component by design: its reason says so);
4. the default team has nobody on call either: its channel (else `SLACK_DEFAULT_CHANNEL`) and
   its escalation, said loudly on the page; with neither channel, nobody at all (the page
   goes to the outbox only, and says so).
A route is a dict (JSON, stored as the responder's `response_context` step): the row of
`response_context.cypher` or `default_route.cypher` (team, channel, escalation, person, email,
slack_user_id, shift_ends_at, component) plus `route` (`owner` | `default`), `reason` and
`default_channel` (`SLACK_DEFAULT_CHANNEL` as the responder knew it when routing, None when
unset or Slack is off), so the page and every later edit of it say where it really went.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from adapters.falkordb import TenantGraph


def route(
    graph: TenantGraph, components: list[str], default_channel: str | None = None
) -> dict[str, Any]:
    """The route of an incident whose components are `components`, in priority order (see the
    module docstring); `default_channel`: `SLACK_DEFAULT_CHANNEL` (None: unset, or Slack is
    off). Raises `GraphUnavailable`."""
    rows = graph.rows("response_context", {"components": components}) if components else []
    return route_from(rows, components, lambda: graph.one("default_route"), default_channel)


def route_from(
    rows: list[dict[str, Any]],
    components: list[str],
    default: Callable[[], dict[str, Any] | None],
    default_channel: str | None = None,
    heartbeat: str | None = None,
) -> dict[str, Any]:
    """`route` over rows already read: `rows` of `response_context.cypher` (any superset of
    `components`' rows), `default()` the `default_route.cypher` row or None (only called when
    the route falls back to it), `default_channel` as in `route`; `heartbeat`: the alertname
    of the heartbeat whose silence the incident is (it names no component: the default team is
    its route by design, and the reason says so). Pure but for `default`."""
    # two teams may own one component (two sources disagree): the world file's word first,
    # then by team name, so the same incident always pages the same team (rows come unordered)
    owned = [
        row
        for name in components
        for row in sorted(
            (r for r in rows if r["component"] == name),
            key=lambda r: (not r.get("by_world_file"), r["team"]),
        )
    ]
    first = owned[0] if owned else None
    if first is not None:
        staffed = [r for r in owned if r["team"] == first["team"] and r["person"]]
        if staffed:
            return staffed[0] | {"route": "owner", "reason": "", "default_channel": default_channel}
        reason = f"{first['team']}, owner of {first['component']}, has nobody on call now"
    elif components:
        reason = f"no team owns {', '.join(components)}"
    elif heartbeat:
        reason = f"the {heartbeat} heartbeat went silent"
    else:
        reason = "no alert names a known component"
    fallback = default() or {
        "team": None, "channel": None, "escalation": None, "person": None, "email": None,
        "slack_user_id": None, "shift_ends_at": None,
    }  # fmt: skip
    if fallback["team"] is None:
        reason += "; the world names no default team"
    elif not fallback["person"]:
        reason += f"; the default team {fallback['team']} has nobody on call now either"
    owner = first or {}
    return fallback | {
        "component": owner.get("component"),
        "owner_team": owner.get("team"),
        "owner_channel": owner.get("channel"),
        "route": "default",
        "reason": reason,
        "default_channel": default_channel,
    }


def told(graph: TenantGraph, alerting: list[str], paged_team: str | None) -> list[dict[str, Any]]:
    """The on-call of each team, other than `paged_team`, that owns an alerting component:
    one row per team (response_context.cypher, the person on call now or null), in the order
    of `alerting`, with `components` (that team's alerting components)."""
    rows = graph.rows("response_context", {"components": alerting}) if alerting else []
    return told_from(rows, alerting, paged_team)


def told_from(
    rows: list[dict[str, Any]], alerting: list[str], paged_team: str | None
) -> list[dict[str, Any]]:
    """`told` over `rows` of `response_context.cypher` already read (any superset of
    `alerting`'s rows). Pure."""
    teams: dict[str, dict[str, Any]] = {}
    for name in alerting:
        for row in rows:
            if row["component"] != name or row["team"] == paged_team:
                continue
            team = teams.setdefault(row["team"], row | {"components": []})
            if not team["person"] and row["person"]:
                teams[row["team"]] = row | {"components": team["components"]}
            if name not in teams[row["team"]]["components"]:
                teams[row["team"]]["components"].append(name)
    return list(teams.values())
