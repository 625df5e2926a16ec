"""`WorkerPool`: which workers said READY=1 (their own `NOTIFY_SOCKET`), as `/health/ready`'s
`detail` shows it."""

from __future__ import annotations

import os
import sys
import time

from gateway.cli.commands import workers_note
from gateway.ops.supervisor import WorkerPool

#: A stand-in worker: says READY=1 the way `blast-radius worker` does, after a start-up delay.
READY_AFTER = (
    "import sys, time; time.sleep(float(sys.argv[1])); "
    "from gateway.ops.sdnotify import notify; notify('READY=1', 'STATUS=claiming'); "
    "time.sleep(60)"
)


class StandIn(WorkerPool):
    """A pool whose workers are `READY_AFTER` with `delay_s`."""

    def __init__(self, count: int, delay_s: float) -> None:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        super().__init__(count, dict(os.environ) | {"PYTHONPATH": root}, grace_s=1.0)
        self.delay_s = delay_s

    def command(self) -> list[str]:
        return [sys.executable, "-c", READY_AFTER, str(self.delay_s)]


def wait_for(pool: WorkerPool, ready: int, timeout_s: float = 20.0) -> int:
    deadline = time.monotonic() + timeout_s
    while pool.ready != ready and time.monotonic() < deadline:
        time.sleep(0.05)
    return pool.ready


def test_a_worker_is_ready_once_it_says_so_and_again_after_a_restart() -> None:
    pool = StandIn(2, delay_s=0.5)
    pool.start()
    try:
        assert pool.ready_note() == "workers starting: 0 of 2 ready; pages wait for them"
        assert wait_for(pool, 2) == 2
        assert pool.ready_note() is None
        first = pool.pids[0]
        os.kill(first, 9)
        deadline = time.monotonic() + 10
        while pool.check() == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert first not in pool.pids and len(pool.pids) == 2
        assert pool.ready == 1  # the new worker has not said READY=1 yet
        assert pool.ready_note() == "workers starting: 1 of 2 ready; pages wait for them"
        assert wait_for(pool, 2) == 2
    finally:
        pool.stop()
    assert pool.ready == 0


def test_a_worker_that_never_says_ready_keeps_the_note() -> None:
    pool = StandIn(1, delay_s=60)
    pool.start()
    try:
        time.sleep(1.0)
        assert pool.ready == 0
        assert pool.ready_note() == "workers starting: 0 of 1 ready; pages wait for them"
    finally:
        pool.stop()


def test_the_note_replaces_the_previous_one_and_keeps_others() -> None:
    notes = ["Slack unreachable", "workers starting: 0 of 2 ready; pages wait for them"]
    workers_note(notes, "workers starting: 1 of 2 ready; pages wait for them")
    assert notes == ["Slack unreachable", "workers starting: 1 of 2 ready; pages wait for them"]
    workers_note(notes, None)
    assert notes == ["Slack unreachable"]
