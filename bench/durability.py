"""Acknowledged writes lost to a kill -9 of FalkorDB: `python -m bench.durability`.

For each AOF `appendfsync` policy (`--modes`, default `everysec always`) and each of `--rounds`
rounds: starts an embedded FalkorDB (`EmbeddedFalkorDB(fsync=mode)`, the product's flags) in a
temporary folder, runs `--writers` threads that each write one node per query
(`cypher/durability_write.cypher`) and remember every write the server answered, while another
thread keeps the disk busy (1 MiB writes into the same folder, fsynced once per GiB: a backup,
a log rotation, another database); after `--seconds` s it kill -9s the server, starts it again on
the same folder and counts the answered writes that are missing.

Prints one table row per mode: writes answered, writes/s, and acknowledged writes lost (per
round). A lost write is one the server said OK to and does not hold after the restart: what a
webhook's 200 promised. Why `everysec` can lose some to a process kill (not only to a power
loss): while the background fsync of the append-only file is slow, Redis postpones writing its
buffer to the file for up to 2 s and answers clients meanwhile (`flushAppendOnlyFile` in
Redis's `aof.c`); `always` writes and fsyncs before it answers.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

from adapters.falkordb import EmbeddedFalkorDB, GraphStore, GraphUnavailable

CHUNK = 1 << 20  # 1 MiB
SYNC_EVERY = 1024  # chunks between fsyncs of the pressure file: one per GiB, as `dd conv=fsync`


def writer(url: str, k: int, acked: list[str], stop: threading.Event) -> None:
    """Write key `k-n` for n = 0, 1, ... until `stop` or the server dies; record each answer."""
    store = GraphStore(url, timeout_ms=5_000)
    graph = store.graph("org_durability")
    n = 0
    try:
        while not stop.is_set():
            graph.rows("durability_write", {"key": f"{k}-{n}"})
            acked.append(f"{k}-{n}")
            n += 1
    except (GraphUnavailable, OSError):
        return  # the kill: whatever was not answered is not counted
    finally:
        store.close()


def disk_pressure(folder: Path, stop: threading.Event) -> None:
    """Keep the disk busy until `stop`: 1 MiB writes, an fsync per GiB, then anew."""
    block = os.urandom(CHUNK)
    path = folder / "pressure.bin"
    while not stop.is_set():
        with path.open("wb") as out:
            for i in range(1024):
                if stop.is_set():
                    break
                out.write(block)
                if i % SYNC_EVERY == SYNC_EVERY - 1:
                    out.flush()
                    os.fsync(out.fileno())
        path.unlink(missing_ok=True)


def one_round(mode: str, args: argparse.Namespace, scratch: Path) -> tuple[int, int]:
    """Writes answered and answered writes missing after a kill -9 and restart."""
    server = EmbeddedFalkorDB(scratch / mode, fsync=mode)  # type: ignore[arg-type]
    url = server.start()
    acked: list[str] = []
    stop = threading.Event()
    threads = [
        threading.Thread(target=writer, args=(url, k, acked, stop)) for k in range(args.writers)
    ] + [threading.Thread(target=disk_pressure, args=(scratch, stop))]
    for thread in threads:
        thread.start()
    time.sleep(args.seconds)
    server.kill()
    stop.set()
    for thread in threads:
        thread.join()
    again = EmbeddedFalkorDB(scratch / mode, port=server.port, fsync=mode)  # type: ignore[arg-type]
    store = GraphStore(again.start(), timeout_ms=5_000)
    try:
        found = {r["key"] for r in store.graph("org_durability").rows("durability_found")}
    finally:
        store.close()
        again.stop()
    return len(acked), sum(1 for key in acked if key not in found)


def main() -> None:
    """Parse arguments, run the rounds, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", nargs="+", default=["everysec", "always"],
                        choices=["everysec", "always"])  # fmt: skip
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--writers", type=int, default=4)
    args = parser.parse_args()
    print("| appendfsync | writes answered | writes/s | acknowledged writes lost (per round) |")
    print("|---|---|---|---|")
    for mode in args.modes:
        answered, lost = [], []
        for r in range(args.rounds):
            print(f"{mode}: round {r + 1} of {args.rounds}", file=sys.stderr, flush=True)
            with tempfile.TemporaryDirectory(prefix="blast-radius-durability-") as scratch:
                a, missing = one_round(mode, args, Path(scratch))
            answered.append(a)
            lost.append(missing)
        rate = sum(answered) / (args.rounds * args.seconds)
        print(f"| {mode} | {sum(answered):,} | {rate:,.0f} | {sum(lost)} "
              f"({', '.join(map(str, lost))}) |")  # fmt: skip


if __name__ == "__main__":
    main()
