"""The webhook's body read from its bytes, with and without fields Alertmanager does not send:
`python -m bench.typed_body [--alerts 5000] [--runs 30]`.

In-process, no database: the storm bench's notification of `--alerts` firing alerts
(`bench.storm.body`), then the same with Grafana's `title`, `state` and `message` after the
alerts, then with an `imageURL` on each alert. For each: its size, whether the typed way read
it (`typed`: else it went `load_json` and `read_notification`'s way), and the CPU ms of
`read_notification_bytes` (`time.process_time`, median of `--runs`: steadier than wall time
on a shared machine). Then the parts of the way with extra fields: the strict decode that fails,
the lenient decode, `within_limits`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime

import msgspec

from bench.storm import alert, body
from gateway.http import limits, payloads

START = datetime(2026, 11, 1, tzinfo=UTC)


def options() -> argparse.Namespace:
    """Command-line options (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--alerts", type=int, default=5000, help="alerts in the notification")
    p.add_argument("--runs", type=int, default=30, help="reads of each, timed")
    return p.parse_args()


def cpu_ms(run: Callable[[], object], runs: int) -> float:
    """The median CPU ms of `runs` calls of `run`."""
    took = []
    for _ in range(runs):
        began = time.process_time()
        run()
        took.append((time.process_time() - began) * 1000)
    return statistics.median(took)


def strict(raw: bytes) -> None:
    """The strict decode, failed or not."""
    with contextlib.suppress(msgspec.DecodeError):
        payloads._DECODER.decode(raw)


def main() -> int:
    """Print one line per body, then the parts of the lenient way."""
    args = options()
    alerts = [alert("quote", n, START) for n in range(args.alerts)]
    plain = body(alerts, "{}:{}")
    bodies = {
        "plain Alertmanager": plain,
        "title, state, message after the alerts": plain
        | {"title": f"[FIRING:{args.alerts}]", "state": "alerting", "message": "…"},
        "an imageURL on each alert": plain | {"alerts": [a | {"imageURL": ""} for a in alerts]},
    }
    raws = {name: json.dumps(each).encode() for name, each in bodies.items()}
    print(f"{'body':<40} {'bytes':>10} {'typed':>6} {'CPU ms':>7}")
    for name, raw in raws.items():
        typed = payloads._typed_notification(raw, "warning", None, None) is not None
        ms = cpu_ms(lambda raw=raw: payloads.read_notification_bytes(raw, "warning"), args.runs)
        print(f"{name:<40} {len(raw):>10,} {typed!s:>6} {ms:>7.1f}")
    top = raws["title, state, message after the alerts"]
    print(
        f"with fields after the alerts: strict decode {cpu_ms(lambda: strict(top), args.runs):.1f}"
        f" ms, lenient decode {cpu_ms(lambda: payloads._LENIENT.decode(top), args.runs):.1f}, "
        f"within_limits {cpu_ms(lambda: limits.within_limits(top), args.runs):.1f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
