"""Bounded work before trust, against the real gateway and FalkorDB: a small body limit on every
route but the webhook, JSON parsed once (in a worker thread) within count and depth limits,
request heads bounded however they arrive, alert text cut at 16 KiB, triage batching unmatched
alerts whatever their order, and per-tenant playbook quotas with a 422 naming the limit."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import SecretStr

from adapters.falkordb import EmbeddedFalkorDB, TenantGraph
from agents.failure_kinds import classify
from agents.triage.alerts import MAX_VALUE_CHARS, NormalizedAlert
from agents.triage.triage import triage
from gateway.app import create_app
from gateway.http import payloads
from gateway.http.limits import (
    MAX_JSON_VALUES,
    BodyError,
    _load_json_slowly,
    load_json,
    skeleton_problem,
)
from gateway.ops.runtime import Runtime
from tests.conftest import Gateway, alert_body, make_settings

BEARER = "bounded-test-token-0123456789"


@pytest.fixture
def bounded(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, tmp_path: Path, tenant: str
) -> Iterator[Gateway]:
    """The gateway with a token and small quotas (3 playbooks, 2 checks each)."""
    settings = make_settings(
        falkordb, tmp_path, tenant, webhook_tokens={tenant: SecretStr(BEARER)},
        max_playbooks=3, max_playbook_checks=2, max_headers=50,
    )  # fmt: skip
    runtime = Runtime(settings)
    runtime.open()
    gw = Gateway(runtime, runtime.serve_http("127.0.0.1", 0), BEARER)
    yield gw
    gw.http.close()
    runtime.close()


def raw_request(gw: Gateway, head: bytes, pieces: int = 1) -> str:
    """Send `head` (a whole request head) in `pieces` writes; the status line answered."""
    host, port = gw.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        step = max(1, len(head) // pieces)
        try:
            for at in range(0, len(head), step):
                sock.sendall(head[at : at + step])
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused (and closed) before the rest arrived: the answer is already sent
        try:
            return sock.recv(4096).decode(errors="replace").split("\r\n")[0]
        except ConnectionResetError:  # the kernel drops the answer when our unread bytes reset
            return "reset"


def test_every_route_but_the_webhook_takes_a_small_body(bounded: Gateway):
    """A body over BLAST_MAX_API_BODY_BYTES (256 KiB) is 413 on any route but the webhook."""
    big = b'{"x": "' + b"a" * 300_000 + b'"}'
    for path in ("/health/live", "/api/v1/playbooks", "/api/v1/changes", "/nowhere"):
        answer = bounded.http.post(path, content=big, headers=bounded.auth)
        assert answer.status_code == 413 and "262144" in answer.json()["detail"], path
    webhook = bounded.http.post("/api/v1/alerts", content=big, headers=bounded.auth)
    assert webhook.status_code == 422  # read and parsed: the webhook's limit is 16 MiB


def test_a_big_nested_body_stalls_no_other_client(bounded: Gateway):
    """15.6 MB of nested lists to /health/live, no credential: refused from its Content-Length,
    and /health/live answers another client at once meanwhile."""
    nested = b"[" + b"[[1,2],[3,[4]]]," * 975_000 + b"[]]"
    done: list[int] = []
    sender = threading.Thread(
        target=lambda: done.append(
            httpx.post(f"{bounded.url}/health/live", content=nested, timeout=60).status_code
        )
    )
    sender.start()
    started = time.monotonic()
    assert bounded.http.get("/health/live").status_code == 200
    assert time.monotonic() - started < 1.0
    sender.join(60)
    assert done in ([413], [])  # the server may close before the client finished sending


def test_json_limits_are_read_off_the_skeleton():
    many = b"[" + b"1," * MAX_JSON_VALUES + b"1]"
    assert skeleton_problem(many) == f"JSON with more than {MAX_JSON_VALUES} values"
    assert skeleton_problem(b"[" * 65 + b"]" * 65) == "JSON nested deeper than 64 levels"
    assert skeleton_problem(b"[" * 64 + b"]" * 64) is None
    # brackets, commas and quotes inside strings count for nothing
    assert skeleton_problem(json.dumps({"s": "[[[[," * 100_000, "t": 'a\\"['}).encode()) is None
    assert skeleton_problem(b'{"a": [{"b": [1, 2]}, {}], "c": "x"}') is None


def _answer(parse: Any, raw: bytes) -> tuple[str, Any]:
    try:
        return "parsed", parse(raw)
    except BodyError as exc:
        return f"refused {exc.status}", str(exc)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text()
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=4),
    max_leaves=30,
)  # fmt: skip
#: Text a sender may write that is JSON or nearly: escapes, brackets in strings, lone
#: surrogates, NaN, numbers of every length, nesting past the limit.
JSON_PIECES = st.lists(
    st.sampled_from([
        '{"a":', "[", "]", "{", "}", ",", '"', "\\", '\\"', "\\ud800", "\\n", "NaN", "1e999",
        "-9223372036854775809", "18446744073709551616", "12345678901234567890", "0.5", "[[[[",
        '"[,{"', "true", "null", " ", "\ufeff", "\xff",
    ]),
    max_size=40,
).map("".join)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(value=JSON_VALUES, pieces=JSON_PIECES, indent=st.booleans())
def test_orjson_reads_every_body_as_json_would(value: Any, pieces: str, indent: bool):
    """`load_json` takes orjson's way when it says the same as `json`: the same value, or the
    same refusal with the same reason, for JSON and for the near-JSON a hostile sender writes."""
    raw = json.dumps(value, indent=2 if indent else None).encode("utf-8", "surrogatepass")
    for body in (raw, pieces.encode("utf-8", "surrogatepass"), (pieces + raw.decode(
            "utf-8", "surrogatepass")).encode("utf-8", "surrogatepass")):  # fmt: skip
        fast, slow = _answer(load_json, body), _answer(_load_json_slowly, body)
        assert fast == slow or (fast[0] == slow[0] == "parsed" and repr(fast) == repr(slow))


def test_orjson_keeps_the_limits_and_the_integers():
    deep = b'{"a": "]]]]", "b": ' + b"[" * 64 + b'"[[["' + b"]" * 64 + b"}"
    assert _answer(load_json, deep) == ("refused 400", "JSON nested deeper than 64 levels")
    assert load_json(b'{"a": "[[[[", "b": ' + b"[" * 63 + b"]" * 63 + b"}")["a"] == "[[[["
    big = load_json(b"[18446744073709551616, -9223372036854775809, 1.5]")
    assert big == [18446744073709551616, -9223372036854775809, 1.5]
    assert all(type(v) is int for v in big[:2])
    assert _answer(load_json, b"[123456789012345678901]")[0] == "refused 400"


def test_nesting_deep_enough_to_crash_a_parser_is_a_400_on_any_route(bounded: Gateway):
    """131,072 nested arrays (256 KiB) crash orjson 3.8 (it has no depth limit of its own, and
    the process dies with SIGSEGV): the skeleton is read first, so the body is a 400 saying
    why, balanced or not, and the gateway answers the next request (a new user's trial)."""
    n = 131_072
    for body in (b"[" * n + b"]" * n, b"[" * (2 * n), b'{"a":' * (n // 2) + b"1" + b"}" * (n // 2)):
        assert _answer(load_json, body) == ("refused 400", "JSON nested deeper than 64 levels")
    deep = b"[" * (n - 1) + b"]" * (n - 1)
    for path in ("/api/v1/alerts", "/api/v1/maintenance"):
        answer = bounded.http.post(path, content=deep, headers=bounded.auth)
        assert answer.status_code == 400, path
        assert answer.json()["detail"] == "JSON nested deeper than 64 levels", path
    assert bounded.http.get("/health/live").status_code == 200


def test_the_webhook_refuses_too_many_values_with_the_reason(bounded: Gateway):
    body = b'{"alerts": [' + b"0," * (MAX_JSON_VALUES + 10) + b"0]}"
    answer = bounded.http.post("/api/v1/alerts", content=body, headers=bounded.auth)
    assert answer.status_code == 400
    assert f"more than {MAX_JSON_VALUES} values" in answer.json()["detail"]


def test_a_body_is_parsed_once(bounded: Gateway, monkeypatch: pytest.MonkeyPatch):
    """The webhook decodes a plain Alertmanager body once, straight into typed fields (off the
    event loop, in its one hand-off), and a route with a FastAPI body model reads what the
    request guard parsed (`ParsedOnceRoute`): neither parses the bytes again."""
    calls: Counter[int] = Counter()
    loads, fast_loads, decoder = json.loads, orjson.loads, payloads._DECODER

    class CountingDecoder:
        def decode(self, raw: bytes) -> Any:
            calls[len(raw)] += 1
            return decoder.decode(raw)

    def counting(text: Any, **kwargs: Any) -> Any:
        calls[len(text)] += 1
        return loads(text, **kwargs)

    def fast_counting(raw: Any) -> Any:
        calls[len(raw)] += 1
        return fast_loads(raw)

    monkeypatch.setattr(json, "loads", counting)
    monkeypatch.setattr(orjson, "loads", fast_counting)  # the guard's way for most bodies
    monkeypatch.setattr(payloads, "_DECODER", CountingDecoder())
    raw = alert_body("checkout")
    answer = bounded.http.post(
        "/api/v1/alerts", content=raw, headers=bounded.auth | {"Content-Type": "application/json"}
    )
    assert answer.status_code == 200, answer.text
    assert calls[len(raw)] == 1
    playbook = json.dumps({"title": "t", "component": "checkout",
                           "checks": [{"type": "alert_firing", "alertname": "X"}]})  # fmt: skip
    answer = bounded.http.post(
        "/api/v1/playbooks", content=playbook,
        headers=bounded.auth | {"Content-Type": "application/json"},
    )  # fmt: skip
    assert answer.status_code == 201, answer.text
    assert calls[len(playbook)] == 1  # the guard's, with its limits; FastAPI reuses it
    unknown = json.dumps({"title": "t", "component": "checkout", "checks": [], "x": 1})
    answer = bounded.http.post(
        "/api/v1/playbooks", content=unknown,
        headers=bounded.auth | {"Content-Type": "application/json"},
    )  # fmt: skip
    assert answer.status_code == 422 and calls[len(unknown)] == 1  # still validated, once


def test_request_heads_are_bounded_however_they_arrive(bounded: Gateway):
    """2,000 headers, or a 40 KB head, is 431 whether it comes in one piece or in many; an
    ordinary request on the next connection is served."""
    many = b"".join(b"X-Pad-%d: v\r\n" % n for n in range(2000))
    large = b"X-Large: " + b"v" * 40_000 + b"\r\n"
    for fields in (many, large):
        head = b"GET /health/live HTTP/1.1\r\nHost: x\r\n" + fields + b"\r\n"
        assert raw_request(bounded, head).startswith("HTTP/1.1 431")
        trickled = raw_request(bounded, head, 40)  # refused while the rest still arrives
        assert trickled.startswith("HTTP/1.1 431") or trickled == "reset"
    ok = raw_request(bounded, b"GET /health/live HTTP/1.1\r\nHost: x\r\nX-A: b\r\n\r\n")
    assert ok.startswith("HTTP/1.1 200")


def test_the_guard_counts_header_fields_itself(
    falkordb: EmbeddedFalkorDB, tmp_path: Path, tenant: str
):
    """Under any server (here httpx's ASGI transport, no h11): 431 past BLAST_MAX_HEADERS."""
    settings = make_settings(falkordb, tmp_path, tenant, max_headers=10)
    runtime = Runtime(settings)
    runtime.open()
    try:
        assert runtime.store is not None
        app = create_app(settings, runtime.store)

        async def get(n: int) -> int:
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://x") as http:
                headers = {f"x-h{i}": "v" for i in range(n)}
                return (await http.get("/health/live", headers=headers)).status_code

        import anyio

        assert anyio.run(get, 20) == 431
        assert anyio.run(get, 2) == 200
    finally:
        runtime.close()


def test_alert_text_is_cut_with_a_marker(bounded: Gateway, tenant: str):
    big = "Saturation" * 400_000  # 4 MB
    body = json.loads(alert_body("checkout"))
    body["alerts"][0]["labels"]["alertname"] = big
    body["alerts"][0]["annotations"]["summary"] = big
    answer = bounded.http.post("/api/v1/alerts", json=body, headers=bounded.auth)
    assert answer.status_code == 200, answer.text
    assert bounded.runtime.store is not None
    graph = bounded.runtime.store.graph(f"org_{tenant}")
    (row,) = graph.rows("incident_alerts", {"incident_id": answer.json()["incidents"][0]})
    cut = len(big) - MAX_VALUE_CHARS
    assert row["alertname"] == big[:MAX_VALUE_CHARS] + f"…[cut {cut} characters]"
    assert json.loads(row["annotations_json"])["summary"].endswith(f"…[cut {cut} characters]")
    assert classify(row["alertname"], big) == "saturation"  # reads the first KiB only
    bounded.drain()  # the investigation runs to its page on the cut text
    assert any(e.get("incident_id") == answer.json()["incidents"][0] for e in bounded.outbox)


def alert(n: int, service: str) -> NormalizedAlert:
    return NormalizedAlert(
        key=f"{n:016x}@2026-11-01T00:00:00Z", fingerprint=f"{n:016x}", status="firing",
        alertname=f"A{n}", severity="warning", starts_at="2026-11-01T00:00:00Z",
        starts_at_ms=1_793_491_200_000, ends_at_ms=None, labels={"service": service},
        annotations={}, generator_url="", link="", group_key="g", receiver="r",
        source="alertmanager", values_json="null",
    )  # fmt: skip


def counted(graph: TenantGraph) -> Counter[str]:
    """Count the named queries `graph` runs from now on."""
    seen: Counter[str] = Counter()
    one, rows = graph.one, graph.rows

    def count_one(query: str, *args: Any, **kwargs: Any) -> Any:
        seen[query] += 1
        return one(query, *args, **kwargs)

    def count_rows(query: str, *args: Any, **kwargs: Any) -> Any:
        seen[query] += 1
        return rows(query, *args, **kwargs)

    graph.one, graph.rows = count_one, count_rows  # type: ignore[method-assign]
    return seen


@pytest.mark.parametrize("order", ["unmatched first, interleaved", "matched first"])
def test_triage_batches_unmatched_alerts_whatever_their_order(store: Any, tenant: str, order: str):
    """2,000 alerts, every other one on no component: a few dozen writes, grouped as alert by
    alert triage groups them (the reference)."""
    from tests.conftest import demo_graph

    services = ["cart", "checkout", "payment", "frontend", "currency"]
    alerts = [alert(n, services[n % 5] if n % 2 else f"nothing-{n}") for n in range(2000)]
    if order == "matched first":
        alerts = alerts[1:] + alerts[:1]
    batched = demo_graph(store, f"{tenant}b")
    queries = counted(batched)
    report = triage(batched, alerts, 900_000, 2)
    assert report.accepted == 2000
    assert sum(queries.values()) < 100, queries  # was two writes per unmatched alert
    reference = demo_graph(store, f"{tenant}r")
    alone = triage(reference, alerts[:200], 900_000, 2, batch=False)
    small = triage(demo_graph(store, f"{tenant}s"), alerts[:200], 900_000, 2)
    assert len(small.incidents) == len(alone.incidents)
    assert sorted(small.unmatched) == sorted(alone.unmatched)


def playbook(n: int, checks: int = 1) -> dict[str, Any]:
    fired = [{"type": "alert_firing", "alertname": f"X{c}"} for c in range(checks)]
    return {"title": f"p{n}", "component": "checkout", "id": f"pb-{n}", "checks": fired}


def test_concurrent_posts_never_pass_the_playbook_quota_together(bounded: Gateway):
    """12 posts of distinct playbooks at once, each on its own connection, against a quota of
    3: the count and the create are one write, so exactly 3 are created and 9 refused."""
    start = threading.Barrier(12)
    answers: dict[int, httpx.Response] = {}

    def post(n: int) -> None:
        with httpx.Client(base_url=bounded.url, headers=bounded.auth, timeout=60) as client:
            start.wait()
            answers[n] = client.post("/api/v1/playbooks", json=playbook(n))

    threads = [threading.Thread(target=post, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    codes = Counter(answer.status_code for answer in answers.values())
    assert codes == {201: 3, 422: 9}, codes
    created = sorted(f"pb-{n}" for n, answer in answers.items() if answer.status_code == 201)
    listed = bounded.http.get("/api/v1/playbooks", headers=bounded.auth).json()["playbooks"]
    assert sorted(p["id"] for p in listed) == created
    refused = [a.json()["detail"] for a in answers.values() if a.status_code == 422]
    assert all("keeps 3 playbooks" in d and "BLAST_MAX_PLAYBOOKS=3" in d for d in refused)


def test_playbook_quotas_answer_422_naming_the_limit(bounded: Gateway):
    post = lambda body: bounded.http.post("/api/v1/playbooks", json=body, headers=bounded.auth)  # noqa: E731
    for n in range(3):
        assert post(playbook(n)).status_code == 201
    over = post(playbook(3))
    assert over.status_code == 422 and "BLAST_MAX_PLAYBOOKS=3" in over.json()["detail"]
    assert post(playbook(0)).status_code == 201  # an idempotent repeat is no new playbook
    retired = bounded.http.request("DELETE", "/api/v1/playbooks/pb-0", json={"reason": "old"},
                                   headers=bounded.auth)  # fmt: skip
    assert retired.status_code == 200
    assert post(playbook(3)).status_code == 201  # retired ones do not count
    checks = post(playbook(9, checks=3))
    assert checks.status_code == 422
    assert "3 checks, over the limit of 2" in checks.json()["detail"]
    assert "BLAST_MAX_PLAYBOOK_CHECKS" in checks.json()["detail"]
    costly = playbook(8) | {"checks": [{"type": "prometheus", "query": "x[3h:1ms]"}]}
    refused = post(costly)
    assert refused.status_code == 422 and "subquery" in refused.text
