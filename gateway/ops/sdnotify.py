"""Readiness for systemd `Type=notify` units: the sd_notify protocol, with no library.

Protocol (sd_notify(3), "Notify socket"): systemd passes a socket path in `$NOTIFY_SOCKET`
(a file path, or an abstract socket when it starts with `@`); the service sends one datagram
of newline-separated `KEY=VALUE` assignments, e.g. `READY=1` once it serves, `STOPPING=1` when
it begins to stop, `STATUS=…` as free text for `systemctl status`.

`NOTIFY_SOCKET` is read here, not in `Settings`: it is systemd's side of a protocol, set per
start by the service manager, never configured by a person.
"""

from __future__ import annotations

import logging
import os
import socket

log = logging.getLogger(__name__)


def notify(*assignments: str) -> bool:
    """Send `assignments` (e.g. `"READY=1"`, `"STATUS=listening on :8080"`) to systemd.

    Returns True when sent, False when not started by systemd (no `$NOTIFY_SOCKET`) or the
    socket refused the datagram (logged; a service must not die because systemd is gone).
    """
    address = os.environ.get("NOTIFY_SOCKET")
    if not address or not assignments:
        return False
    if address.startswith("@"):
        address = "\0" + address[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(address)
            sock.sendall("\n".join(assignments).encode())
    except OSError as exc:
        log.warning("could not notify systemd (%s): %s", assignments[0], exc.strerror)
        return False
    return True
