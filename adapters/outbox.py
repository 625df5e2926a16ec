"""The outbox: the default notifier, a JSON Lines file in the data folder.

It implements the same `Notifier` interface as the Slack and GitHub adapters, so with no
configuration every page and ticket lands here, one JSON object per line (written with a JSON
serializer, so any character in an alert stays valid JSON). `find` answers exactly, which makes
the outbox the reference for "act once per intent".

A message in a page's thread (`reply_to`) is recorded with the channel it goes to, the thread's:
the channel of the outbox line it replies to, or of the Slack message (a copy beside Slack), as
Slack posts it there whatever channel the message names (the on-call of another team is
mentioned in the page's thread, not paged in their own channel).

It is also idempotent by itself: `send` holds an exclusive `flock` on the file while it checks
that the intent id is not there yet and appends, so even a stale worker whose lease ran out
mid-send (two processes racing for one intent) cannot write a second line. Slack and GitHub
cannot offer that; there `find` is the only guard.

Each process indexes the file as it grows: the lines it appended itself are indexed as written
(under the same `flock`, so nothing else was appended in between), and only the other
processes' lines are read back, by orjson (the stdlib's `json` for a line orjson refuses:
`json.dumps` writes a NaN that orjson does not read). A page's or a ticket's line is about
6 KB, which `json.loads` read in 0.02 ms and orjson in 0.006 ms; with two workers every line
was read back by both.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from adapters.github import markdown
from adapters.notices import FollowUp, Page, Ticket
from adapters.notify import AdapterError, OutboundMessage
from adapters.slack.mrkdwn import followup_text, page_text
from adapters.slack.refs import parse_ref


def rendered(message: OutboundMessage) -> dict[str, Any]:
    """What a reader of the outbox sees first: the `title` and `text` the notice would have in
    its own system (Slack mrkdwn for pages and follow-ups, GitHub Markdown for tickets), and
    `person`, the name of whom it is addressed to (None: a channel or a ticket)."""
    notice = message.notice
    person = getattr(notice, "person", None)
    if isinstance(notice, Page):
        text = page_text(notice)
    elif isinstance(notice, FollowUp):
        text = followup_text(notice)
    elif isinstance(notice, Ticket):
        return {"title": markdown.title(notice), "text": markdown.body(notice), "person": None}
    else:
        text = markdown.update_body(notice)
    return {"title": notice.title, "text": text, "person": person.name if person else None}


class Outbox:
    """Append-only JSONL file; each line is an `OutboundMessage` (the envelope and its `notice`
    as JSON) plus `rendered` fields (`title`, `text`, `person`) and `adapter`, `ref`, `sent_at`;
    its `channel` is the thread's for a message in a thread (`channel`).

    Lines are written with one `write()` on an `O_APPEND` descriptor under an exclusive `flock`,
    then fsynced, so several worker processes can share one file. Each instance keeps an index
    intent id -> ref (and ref -> channel) of the lines it has read, and reads only what was
    appended since.
    """

    name = "outbox"

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._refs: dict[str, str] = {}
        self._channels: dict[str, str | None] = {}
        self._offset = 0

    def send(self, message: OutboundMessage) -> str:
        """Append the message unless its intent id is already in the file; return its ref,
        `outbox:<intent_id>`.

        Raises a retryable `AdapterError` on I/O errors.
        """
        return self.send_many([message])[0]

    def send_many(self, messages: list[OutboundMessage]) -> list[str]:
        """`send` for several messages at once: those whose intent id is not in the file yet
        are appended in one `write()` and one fsync under one `flock` (a batch of pages pays
        for one fsync, not one each); the refs, in the order of `messages`.

        Raises a retryable `AdapterError` on I/O errors: then none of them was written, or all
        (the one write), and `find` tells which.
        """
        now = datetime.now(UTC).isoformat(timespec="milliseconds")
        lines: dict[str, bytes] = {}
        channels: dict[str, str | None] = {}  # ref -> channel, as `_catch_up` would index it
        for message in messages:
            ref, channel = f"outbox:{message.intent_id}", self.channel(message)
            record = (
                message.model_dump(mode="json")
                | rendered(message)
                | {"adapter": self.name, "ref": ref, "sent_at": now}
                | {"channel": channel}
            )
            line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
            if message.intent_id not in lines:
                lines[message.intent_id] = line.encode()
                channels[ref] = channel
        refs: dict[str, str] = {}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._lock:
                fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o640)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                    self._catch_up(fd)
                    new = [intent_id for intent_id in lines if intent_id not in self._refs]
                    refs = {k: self._refs.get(k, f"outbox:{k}") for k in lines}
                    if new:
                        data = b"".join(lines[intent_id] for intent_id in new)
                        written = os.write(fd, data)
                        os.fsync(fd)
                        if written == len(data) and self._offset + written == os.fstat(fd).st_size:
                            self._wrote(new, channels, written)  # else `_catch_up` reads them
                finally:
                    os.close(fd)  # releases the flock
        except OSError as exc:
            raise AdapterError(
                f"outbox write to {self.path} failed: {exc.strerror}", retryable=True
            ) from exc
        return [refs[message.intent_id] for message in messages]

    def check(self) -> str:
        """The outbox file can be appended to, or (missing) created by the first write: its
        nearest existing folder is writable. Nothing is created or written (a check must not
        make a misspelt data folder). Raises a non-retryable `AdapterError` naming the path and
        the OS error."""
        try:
            if self.path.exists():
                os.close(os.open(self.path, os.O_WRONLY | os.O_APPEND))
                return f"outbox {self.path} is writable"
            folder = next(p for p in self.path.parents if p.exists())
            if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
                raise OSError(13, f"{folder} cannot be written", str(folder))
        except OSError as exc:
            raise AdapterError(
                f"outbox {self.path} is not writable: {exc.strerror}", retryable=False
            ) from exc
        return f"outbox {self.path} can be created (it does not exist yet)"

    def channel(self, message: OutboundMessage) -> str | None:
        """The channel `message` goes to: for a page's update or follow-up (`reply_to`), the
        thread's (the channel of the outbox line `reply_to` names, or the id in a Slack ref);
        else, or when the thread is unknown, the channel it names (None: the default).

        Raises a retryable `AdapterError` when the file cannot be read."""
        thread = message.reply_to
        if message.kind not in ("update", "followup") or thread is None:
            return message.channel
        slack = parse_ref(thread)
        if slack is not None:
            return slack[0]
        if thread not in self._channels:  # a line appended since this instance last read
            self._read()
        return self._channels.get(thread, message.channel)

    def find(self, intent_id: str, message: OutboundMessage | None = None) -> str | None:
        """The ref of the line carrying this intent id, or None (exact: `message` not needed).

        Raises a retryable `AdapterError` when the file cannot be read.
        """
        self._read()
        return self._refs.get(intent_id)

    def _read(self) -> None:
        """Index the lines appended since the last read (none: no file yet). Raises a
        retryable `AdapterError` when the file cannot be read."""
        try:
            with self._lock:
                fd = os.open(self.path, os.O_RDONLY)
                try:
                    self._catch_up(fd)
                finally:
                    os.close(fd)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise AdapterError(
                f"outbox read of {self.path} failed: {exc.strerror}", retryable=True
            ) from exc

    def _wrote(self, new: list[str], channels: dict[str, str | None], written: int) -> None:
        """Index the lines this instance has just appended (intent ids `new`, `written` bytes
        right after what it had read, under the `flock`) as `_catch_up` would, without reading
        them back. `channels`: ref -> channel of each line."""
        for intent_id in new:
            ref = f"outbox:{intent_id}"
            self._refs.setdefault(intent_id, ref)
            self._channels.setdefault(ref, channels[ref])
        self._offset += written

    def _catch_up(self, fd: int) -> None:
        """Index the complete lines appended since the last call (caller holds `_lock`)."""
        size = os.fstat(fd).st_size
        if size < self._offset:  # the file was replaced: start over
            self._refs, self._channels, self._offset = {}, {}, 0
        chunk = os.pread(fd, size - self._offset, self._offset)
        complete = chunk[: chunk.rfind(b"\n") + 1]
        for raw in complete.splitlines():
            try:
                record = orjson.loads(raw)
            except orjson.JSONDecodeError:
                try:
                    record = json.loads(raw)
                except json.JSONDecodeError:
                    continue
            ref = str(record.get("ref"))
            self._refs.setdefault(str(record.get("intent_id")), ref)
            self._channels.setdefault(ref, record.get("channel"))
        self._offset += len(complete)

    def entries(self) -> list[dict[str, Any]]:
        """Every message in the outbox, oldest first (a torn last line is skipped).

        Lines end at b"\n" only: `str.splitlines` would also split at U+2028 and other
        separators that `json.dumps(ensure_ascii=False)` leaves raw inside strings.
        """
        try:
            lines = self.path.read_bytes().split(b"\n")
        except FileNotFoundError:
            return []
        out = []
        for line in lines:
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue
            if isinstance(record, dict):
                out.append(record)
        return out
