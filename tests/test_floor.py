"""`bench.floor`'s floor side: each phase takes its incidents to one page each, in turn with
the product's phase (a phase of any size, one task at a time or `--batch` at a time)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from bench.floor import FloorSide, added, parts, per_incident


@pytest.mark.parametrize("batch", [1, 4])
def test_each_phase_pages_its_incidents_once_and_says_what_cpu_it_took(
    tmp_path: Path, batch: int
) -> None:
    args = argparse.Namespace(batch=batch)
    with FloorSide(args, tmp_path) as floor:
        first = floor.phase(5)  # a half phase and the other half, as a round cuts them
        second = floor.phase(6)
        entries = floor.outbox.entries()
    assert len(entries) == 11
    assert len({e["intent_id"] for e in entries}) == 11  # each incident paged once
    assert set(first) == set(second) == {"client", "falkordb"}
    assert first["client"] > 0 and second["falkordb"] >= 0


def test_halves_add_up_part_by_part_and_print_per_incident() -> None:
    total = added(added({}, {"client": 0.25, "falkordb": 0.5}), {"client": 0.05, "falkordb": 0.1})
    assert total == pytest.approx({"client": 0.3, "falkordb": 0.6})
    assert parts(per_incident(total, 300)) == "client 1.0 / falkordb 2.0"
