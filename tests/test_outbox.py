"""The outbox shared by several processes: each indexes the lines it appends as it writes them
and reads back only the others' (orjson, else `json` for what orjson refuses), and an intent id
is still written once, whichever process asks."""

from __future__ import annotations

import json
from pathlib import Path

from adapters.notices import Page
from adapters.notify import OutboundMessage
from adapters.outbox import Outbox


def message(
    intent_id: str, kind: str = "notification", reply_to: str | None = None
) -> OutboundMessage:
    notice = Page(incident_id="inc-1", title="HighErrorRate on checkout", root_cause="cart")
    return OutboundMessage(intent_id=intent_id, incident_id="inc-1", kind=kind, notice=notice,
                           channel="#checkout", reply_to=reply_to)  # fmt: skip


def test_two_processes_share_one_file_and_each_intent_is_written_once(tmp_path: Path) -> None:
    path = tmp_path / "outbox.jsonl"
    first, second = Outbox(path), Outbox(path)
    assert first.send_many([message("a"), message("b")]) == ["outbox:a", "outbox:b"]
    assert first.find("a") == "outbox:a"  # indexed as written
    assert second.send(message("a")) == "outbox:a"  # read back from the file: not written again
    assert second.send(message("c")) == "outbox:c"
    assert first.send(message("c")) == "outbox:c"  # the other's line, caught up under the lock
    assert [e["intent_id"] for e in Outbox(path).entries()] == ["a", "b", "c"]


def test_a_reply_goes_to_the_thread_of_the_line_this_instance_wrote(tmp_path: Path) -> None:
    path = tmp_path / "outbox.jsonl"
    outbox = Outbox(path)
    outbox.send(message("page"))
    # the thread's channel comes from the index kept as the page was written, not the file
    assert outbox.channel(message("reply", "followup", reply_to="outbox:page")) == "#checkout"
    assert Outbox(path).channel(message("x", "followup", reply_to="outbox:page")) == "#checkout"


def test_a_line_orjson_refuses_is_still_indexed(tmp_path: Path) -> None:
    path = tmp_path / "outbox.jsonl"
    # `json.dumps` writes NaN (a score, say), which is not JSON: orjson refuses the line
    line = json.dumps({"intent_id": "nan", "ref": "outbox:nan", "channel": None, "x": float("nan")})
    path.write_text(line + "\n" + '{"torn": \n', encoding="utf-8")
    outbox = Outbox(path)
    assert outbox.find("nan") == "outbox:nan"
    assert outbox.send(message("nan")) == "outbox:nan"  # found: not written twice
