"""Query parameters as `params_header` writes them (orjson, else falkordb-py's own encoding)
read back on the real server as the value sent, whatever the text holds."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters.falkordb import (
    TenantGraph,
    UnsafeKey,
    _literal,
    check_key,
    guard_keys,
    params_header,
    rendered,
    storable,
)

TRICKY: list[Any] = [
    "", "plain", 'a "quote"', "back\\slash", "\\n as two characters", "new\nline", "tab\tcr\r",
    "\x08\x0c", "\x01 control", "nul \x00 inside", "lone \ud800 surrogate", "é 中 🎉",
    '\\\\\\"', "\\u00e9 as text", "ends with \\", '{"a": 1}', "`backtick`", "$param", "'single'",
    "\x7f\x9f", "\u2028\u2029", 0, -5, 2**63 - 1, 1.5, 1e-05, 1e300, True, False, None, [],
    [1, "a", None, ["nested", "\n"]], {"a": 1, "b_c": ["x"]}, {"app.kubernetes.io/name": "x"},
    [{"k": "v\n", "z": {"y": "\x02"}}], [["alert@2026-11-01T00:00:00Z", None, "x\\y", 7]],
    [{"task_id": "t", "steps": [{"n": 1, "args": '{"a": "b"}', "touched": []}], "next_id": None,
      "text_vec": [0.125, -0.5, 0.0], "ok": True}, {"task_id": "u", "with space": "x"}],
    [{"a": [[{"b": 1}]]}],
]  # fmt: skip


@pytest.mark.parametrize("value", TRICKY, ids=[repr(v)[:30] for v in TRICKY])
def test_a_parameter_reads_back_as_sent(graph: TenantGraph, value: Any) -> None:
    row = graph.one("bench_echo", {"value": value})
    assert row is not None
    assert row["value"] == storable(value)  # NUL and lone surrogates: U+FFFD, as before
    # written by the thread that decided them and sent by another (a storm's batches)
    ahead = rendered({"value": value})
    assert ahead.header == params_header({"value": value}) and ahead == {"value": value}
    assert graph.one("bench_echo", ahead) == row


def test_a_parameter_text_written_ahead_is_checked_as_it_is_written() -> None:
    with pytest.raises(UnsafeKey):  # before anything is sent, as `params_header` would
        rendered({"alert_rows": [[" key", None]]})


def test_plain_values_and_maps_take_the_fast_way_and_escapes_do_not() -> None:
    assert _literal([["k", None, 1, "a\nb", 'q"']]) is not None
    # a batch's rows: each key in backticks, as falkordb-py writes it (JSON would quote it)
    assert _literal([{"key": "k", "n": [1, None]}]) == '[{`key`:"k",`n`:[1,null]}]'
    assert _literal([["x", {"key": "k"}]]) is None  # a map in a list of lists: JSON's quotes
    assert _literal({"": 1}) is None and _literal({"`": 1}) is None  # falkordb-py's way
    assert _literal({"a": "\x01"}) is None
    assert _literal(["\x01"]) is None  # JSON writes \u0001, FalkorDB would keep it as text
    assert _literal(["\ud800"]) is None  # orjson refuses a lone surrogate
    assert params_header({}) == ""
    assert params_header({"a": [1, "x"]}) == 'CYPHER `a`=[1,"x"] '


KEYS = st.sampled_from(
    ["k@2026-11-01T00:00:00Z", "x ", " x", "", "a\x01b", "tab\there", "x" * 1025, "é" * 300,
     "é" * 513, "\ud800", "nl\n", "\u2028", "\x9f", "ok"]
) | st.text(max_size=5) | st.none() | st.integers()  # fmt: skip


def _refusal(check: Any, rows: list[Any]) -> str | None:
    try:
        check(rows)
    except UnsafeKey as exc:
        return str(exc)
    return None


def _one_by_one(rows: list[Any]) -> None:
    for row in rows:
        if isinstance(row, list):
            check_key(row[0], f"alert_rows[].0 {str(row[0])[:60]!r}")


@given(keys=st.lists(KEYS, max_size=6), tupled=st.lists(st.booleans(), max_size=6))
def test_a_batchs_keys_checked_together_are_refused_as_one_by_one(keys, tupled) -> None:
    """A storm's batch has its 1,000 keys checked at once: the same rows pass, and a batch
    refused is refused with the words of its first bad key, as row by row (a row that is no
    list is not checked)."""
    rows = [(k, None) if t else [k, None] for k, t in zip(keys, tupled + [False] * 6, strict=False)]
    refused = _refusal(lambda r: guard_keys({"alert_rows": r}), rows)
    assert refused == _refusal(_one_by_one, rows)
