"""sd_notify: the datagram systemd receives on $NOTIFY_SOCKET."""

from __future__ import annotations

import socket
import uuid

from gateway.ops.sdnotify import notify


def test_ready_reaches_a_path_socket(tmp_path, monkeypatch):
    path = tmp_path / "notify"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
        monkeypatch.setenv("NOTIFY_SOCKET", str(path))
        assert notify("READY=1", "STATUS=listening")
        assert sock.recv(4096) == b"READY=1\nSTATUS=listening"


def test_abstract_socket(monkeypatch):
    name = f"blast-radius-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        monkeypatch.setenv("NOTIFY_SOCKET", "@" + name)
        assert notify("STOPPING=1")
        assert sock.recv(4096) == b"STOPPING=1"


def test_not_under_systemd_or_socket_gone(tmp_path, monkeypatch):
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    assert notify("READY=1") is False
    monkeypatch.setenv("NOTIFY_SOCKET", str(tmp_path / "nobody-listens"))
    assert notify("READY=1") is False
