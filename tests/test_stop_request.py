"""`StopRequest`: the stop event `serve` and a worker set from their signal handlers.

A `threading.Event` set from a handler deadlocks when the signal lands while the main thread
is inside `Event.wait` holding the Event's lock; `serve` hung on Ctrl-C that way (its main
thread waits on its stop event all the time). The child below takes a signal every 0.2 ms
while it waits: with a `threading.Event` it hangs within a few seconds."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from adapters.processes import StopRequest

ROOT = Path(__file__).resolve().parents[1]

HAMMERED = """
import os, signal, sys, time
from adapters.processes import StopRequest

stop = StopRequest()
signal.signal(signal.SIGUSR1, lambda *_: (stop.set(), stop.clear()))
me = os.getpid()
child = os.fork()
if child == 0:  # signals the parent every 0.2 ms until it is gone
    while True:
        time.sleep(0.0002)
        try:
            os.kill(me, signal.SIGUSR1)
        except ProcessLookupError:
            os._exit(0)
waits = 0
end = time.monotonic() + 3
while time.monotonic() < end:
    stop.wait(0.00001)
    waits += 1
os.kill(child, signal.SIGKILL)
os.waitpid(child, 0)
print(waits)
"""


def test_a_handler_setting_it_never_hangs_the_waiting_thread():
    done = subprocess.run(
        [sys.executable, "-c", HAMMERED], cwd=ROOT, capture_output=True, text=True, timeout=30,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 1000  # it kept waiting and waking, 3 s long


def test_wait_returns_false_after_its_timeout_and_true_once_set():
    stop = StopRequest()
    started = time.monotonic()
    assert stop.wait(0.12) is False
    assert 0.12 <= time.monotonic() - started < 1.0
    threading.Timer(0.1, stop.set).start()
    started = time.monotonic()
    assert stop.wait(10) is True
    assert time.monotonic() - started < 1.0  # seen within a slice, not at the timeout
    assert stop.is_set()
    stop.clear()
    assert not stop.is_set()
