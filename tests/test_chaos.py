"""The short chaos run: `bench/chaos.py` with 100 incidents, worker kills and one kill -9 of
FalkorDB must end with no duplicate action, no lost alert and no unfinished task."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import clean_env

ROOT = Path(__file__).resolve().parents[1]


def test_short_chaos_run_loses_nothing_and_pages_once():
    env = clean_env("BLAST_")
    done = subprocess.run(
        [sys.executable, "-m", "bench.chaos", "--incidents", "100", "--tenants", "2",
         "--db-restarts", "1", "--kill-every-s", "2", "--timeout-s", "60"],
        cwd=ROOT, env=env | {"PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    head, _, row = done.stdout.strip().splitlines()
    result = dict(zip(head.strip("| ").split(" | "), row.strip("| ").split(" | "), strict=True))
    assert result["incidents"] == "100"
    for column in ("duplicate actions", "lost alerts", "unfinished tasks", "unpaged"):
        assert result[column] == "0", column
    assert int(result["worker kills"]) >= 1
    assert result["db restarts"] == "kill -9"
    assert result["serve exit"] == "0"
