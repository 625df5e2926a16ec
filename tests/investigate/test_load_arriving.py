"""A datastore's CPU alert, alerts only: its own process, or load arriving from the services
that read it on the alerting components' paths, silent ones included
(agents/investigate/weigh.py `doubt`, `cpu_only`; investigator `_readers_on_paths`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.falkordb import EmbeddedFalkorDB
from agents.investigate.weigh import cpu_only
from tests.conftest import Gateway
from tests.learn.test_memory import WEEK1, close_shop, fire, incident, open_shop
from tests.slack_api import SlackAPI

LEADS = Path(__file__).resolve().parents[1] / "data" / "leads-world.yaml"


@pytest.fixture
def home(falkordb: EmbeddedFalkorDB, tmp_path: Path, api: SlackAPI) -> Iterator[Gateway]:
    """A gateway on the leads world: voice and command call registry, which reads
    registry-db."""
    gw = open_shop(falkordb, tmp_path, api, world=LEADS)
    yield gw
    close_shop(gw)


def test_a_databases_cpu_under_its_silent_readers_load_is_not_named_confidently(home: Gateway):
    """registry lost its cache and sends registry-db 18 times its usual queries; registry
    raises no alert, registry-db alerts CPU (a name that reads as saturation), its callers'
    callers alert slowness. The alerts cannot tell the database's own trouble from load
    arriving through registry: inconclusive, the database first, registry after it."""
    found = incident(home, fire(home, WEEK1, [
        ("PostgresCpuSaturated", "registry-db", "CPU 96%, 7.4k selects/s (normal 400)"),
        ("VoiceLatencyHigh", "voice", "p95 3.1s on device lookups"),
        ("CommandValidationSlow", "command", "command validation p95 4.2s"),
    ]))  # fmt: skip
    finding = found["finding"]
    assert found["root_cause"] is None
    assert finding["candidates"][:2] == ["registry-db", "registry"]
    assert finding["confidence"] < 0.5
    assert (
        "registry-db alerts about CPU (PostgresCpuSaturated), which is its own process or load "
        "arriving from registry" in finding["summary"]
    )


def test_a_databases_own_disk_alert_still_names_it():
    """CPU named anywhere in an alert makes it a CPU alert; another alert about the database's
    own process (disk, memory) keeps it separated: `cpu_only` is None then."""
    cpu = {"component": "db", "alertname": "PostgresCpuSaturated", "summary": ""}
    disk = {"component": "db", "alertname": "PostgresDiskAlmostFull", "summary": "92% used"}
    assert cpu_only([cpu], "db") == "PostgresCpuSaturated"
    assert cpu_only([cpu, disk], "db") is None
    assert cpu_only([{**cpu, "alertname": "DbSaturated", "summary": "cpu at 97%"}], "db") == (
        "DbSaturated"
    )
    assert cpu_only([{**cpu, "alertname": "DbConnectionsSaturated"}], "db") is None
