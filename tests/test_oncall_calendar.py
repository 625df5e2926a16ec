"""On-call from an iCalendar export: a weekly RRULE, an EXDATE, an override
(RECURRENCE-ID) and a DST change, people matched by email then name, unknown names reported,
read from a file or a URL and refreshed from the definition stored in the graph."""

from __future__ import annotations

import functools
import shutil
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from adapters.falkordb import GraphStore
from gateway.world import TopologyError, apply_world, load_world
from gateway.world.oncall import calendar_shifts, coverage, refresh_oncall

CALENDAR = Path(__file__).resolve().parent / "data" / "oncall" / "primary.ics"
MEMBERS = [{"name": "Ann Example", "email": "ann@example.com"}, {"name": "Ben Example"}]
NOW = datetime(2026, 10, 20, tzinfo=UTC)


def utc(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() * 1000)


def test_rrule_exdate_override_and_dst_become_shifts() -> None:
    shifts, unmatched = calendar_shifts(CALENDAR.read_bytes(), MEMBERS, NOW)
    first = [(s["person"], s["starts_at"], s["ends_at"]) for s in shifts[:4]]
    assert first == [
        ("Ben Example", utc("2026-10-12T07:00"), utc("2026-10-19T07:00")),  # 09:00 CEST
        # 09:00 CEST to 09:00 CET: the week the clocks go back is 169 hours long
        ("Ann Example", utc("2026-10-19T07:00"), utc("2026-10-26T08:00")),
        # Ben's week overridden (RECURRENCE-ID): Ann, matched by her email (any case)
        ("Ann Example", utc("2026-10-26T08:00"), utc("2026-11-02T08:00")),
        # Ann's week of 2 November is an EXDATE: no shift
        ("Ben Example", utc("2026-11-09T08:00"), utc("2026-11-16T08:00")),
    ]
    assert unmatched == ["Zed Nobody"]  # reported, never dropped silently


def world_text(ical: str) -> str:
    world = {
        "components": [{"id": "api", "kind": "service"}],
        "teams": [{"name": "core", "owns": ["api"], "oncall": {"ical": ical},
                   "members": [{"name": "Ann Example", "email": "ann@example.com"},
                               {"name": "Ben Example"}]}],
        "default_team": "core",
    }  # fmt: skip
    return yaml.safe_dump(world)


@pytest.fixture
def calendar_url() -> Iterator[str]:
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(CALENDAR.parent))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/{CALENDAR.name}"
    server.shutdown()


def test_a_team_on_a_calendar_file_then_a_url_is_covered_and_refreshed(
    store: GraphStore, tenant: str, tmp_path: Path, calendar_url: str
) -> None:
    shutil.copy(CALENDAR, tmp_path / "team.ics")
    path = tmp_path / "world.yaml"
    path.write_text(world_text("team.ics"), encoding="utf-8")  # relative to the world file
    world = load_world(path)
    graph = store.graph(f"org_{tenant}")
    graph.ensure_schema()
    report = apply_world(graph, world, [f"world:{path}"], NOW, explicit=True)
    assert report.unmapped == ["on-call of core: 'Zed Nobody' matches no member"]
    assert report.counts["shifts"] > 10

    def on_call(at: str) -> list[str]:
        return coverage(graph, datetime.fromisoformat(at).replace(tzinfo=UTC))[0].on_call

    assert on_call("2026-10-27T12:00") == ["Ann Example"]
    assert on_call("2026-11-03T12:00") == []  # the EXDATE week: nobody, and it shows
    gap = coverage(graph, NOW)[0].gap_at
    assert gap == utc("2026-11-02T08:00")

    # The calendar file disappears: the refresh keeps the shifts it had, and says why.
    (tmp_path / "team.ics").unlink()
    kept = refresh_oncall(graph, NOW)
    assert kept.errors["core"] == f"calendar {tmp_path / 'team.ics'}: No such file or directory"
    assert on_call("2026-10-27T12:00") == ["Ann Example"]

    # The same team on the calendar's URL (Grafana OnCall, PagerDuty, Opsgenie export one).
    path.write_text(world_text(calendar_url), encoding="utf-8")
    apply_world(graph, load_world(path), [f"world:{path}"], NOW, explicit=True)
    done = refresh_oncall(graph, datetime(2026, 11, 10, tzinfo=UTC))
    assert done.errors == {} and done.unmatched == {"core": ["Zed Nobody"]}
    assert on_call("2026-11-10T12:00") == ["Ben Example"]


def test_a_missing_calendar_file_is_a_problem_of_the_world_file(tmp_path: Path) -> None:
    path = tmp_path / "world.yaml"
    path.write_text(world_text("missing.ics"), encoding="utf-8")
    with pytest.raises(TopologyError) as caught:
        load_world(path)
    assert caught.value.problems == [
        f"{path}:12: teams.0.oncall.ical: no calendar file {tmp_path / 'missing.ics'}"
    ]
