"""Parsing of webhook bodies: every real capture, fingerprints, timestamps, bad bodies."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.triage.alerts import MAX_VALUE_CHARS, NormalizedAlert
from agents.triage.triage import Heads
from gateway.http.payloads import (
    PayloadError,
    _matcher,
    _times_ms,
    _typed_notification,
    label_fingerprint,
    load_body,
    normalize,
    parse_body,
    read_notification,
    read_notification_bytes,
    rfc3339_ms,
    silence_link,
    validate_body,
)
from tests.conftest import FIXTURES

CAPTURES = sorted((FIXTURES / "alertmanager" / "captured").glob("*.json"))


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.stem)
def test_every_capture_parses_and_fingerprints_match(path):
    capture = json.loads(path.read_text())
    alerts = normalize(parse_body(capture["body_raw"].encode()), "unknown")
    assert len(alerts) == len(capture["body"]["alerts"])
    for alert, raw in zip(alerts, capture["body"]["alerts"], strict=True):
        assert alert.fingerprint == raw["fingerprint"]
        assert label_fingerprint(raw["labels"]) == raw["fingerprint"]
        assert alert.key == f"{raw['fingerprint']}@{raw['startsAt']}"
        assert alert.status == raw["status"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-30T02:53:51.603228863Z", 1796007231603),
        ("2026-11-30T03:03:20.37Z", 1796007800370),
        ("2026-11-30T03:03:20Z", 1796007800000),
        ("2024-09-27T00:27:00+08:00", 1727368020000),
        ("2026-03-02T09:51:03.157076+01:00", 1772441463157),
        ("0001-01-01T00:00:00Z", None),
        ("", None),
    ],
)
def test_rfc3339_variants(text, expected):
    assert rfc3339_ms(text) == expected


def test_missing_fingerprint_is_computed_from_labels():
    body = {"alerts": [{"status": "firing", "labels": {"alertname": "X", "job": "j"},
                        "startsAt": "2026-01-01T00:00:00Z"}]}  # fmt: skip
    (alert,) = normalize(parse_body(json.dumps(body).encode()), "unknown")
    assert alert.fingerprint == label_fingerprint({"alertname": "X", "job": "j"})
    assert alert.severity == "unknown"


def test_a_resolved_alert_without_alertname_or_summary_is_titled_so():
    """A resolved alert needs no alertname (it may end one accepted before the rule for firing
    ones): it is kept, titled by its fingerprint."""
    body = {"alerts": [{"status": "resolved", "labels": {}, "startsAt": "2026-01-01T00:00:00Z"}]}
    (alert,) = normalize(parse_body(json.dumps(body).encode()), "unknown")
    assert alert.title() == f"alert without alertname (fingerprint {alert.fingerprint})"
    assert alert.fingerprint == "cbf29ce484222325"  # the trial's bare hash: no labels at all


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("labels", [{}, None, {"alertname": ""}, {"alertname": "", "service": ""}])
def test_a_firing_alert_without_labels_refuses_the_body_naming_it(fast, labels):
    """A new user's trial: an alert with no labels opened "alert without alertname
    (fingerprint cbf29ce484222325)" and paged someone. Alertmanager refuses such alerts and
    Grafana names every one: the body is a 422 naming the alert's index, as any other bad
    alert's is, and nothing of it is taken (the good alert beside it neither). An empty label
    is no label, as to Alertmanager."""
    good = {"status": "firing", "labels": {"alertname": "X"}, "startsAt": "2026-01-01T00:00:00Z"}
    body = {"alerts": [good, {"status": "firing", "labels": labels,
                              "startsAt": "2026-01-01T00:00:00Z"}]}  # fmt: skip
    assert _read(body, fast) == (
        422, "not an Alertmanager/Grafana webhook body: alerts.1: Value error, a firing alert "
        "with no labels at all (no alertname)",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("raw", "status", "reason"),
    [
        (b"{not json", 400, "not JSON"),
        (b"\xff\xfe", 400, "not UTF-8"),
        (b"[1, 2]", 422, "JSON object"),
        (b'{"ruleName": "x", "evalMatches": []}', 422, "legacy Grafana"),
        (b'{"alerts": [{"status": "pending", "startsAt": "2026-01-01T00:00:00Z"}]}', 422, "status"),
        (b'{"alerts": [{"status": "firing", "startsAt": "yesterday"}]}', 422, "startsAt"),
        (b'{"alerts": [{"status": "firing"}]}', 422, "startsAt"),
    ],
)
def test_bad_bodies_say_why(raw, status, reason):
    with pytest.raises(PayloadError) as err:
        parse_body(raw)
    assert err.value.status == status
    assert reason in str(err.value)


def _read(data: object, fast: bool) -> object:
    """What the webhook makes of parsed JSON `data`: by `read_notification`, or (`fast` False)
    by `validate_body` then `normalize`; a refusal as its status and words."""
    try:
        if fast:
            found = read_notification(data, "warning", 1_800_000_000_000)
            return found.alerts, found.truncated, found.group_key
        body = validate_body(data)
        alerts = normalize(body, "warning", 1_800_000_000_000)
        return alerts, body.truncatedAlerts, body.groupKey
    except PayloadError as exc:
        return exc.status, str(exc)


TIMES = st.sampled_from([
    "2026-11-01T00:00:00Z", "2026-11-01T00:00:00.123456789+02:00", " 2026-11-01T00:00:00Z",
    "0001-01-01T00:00:00Z", " 0001-01-01T00:00:00Z", "", "yesterday", "2026-11-01T00:00:00",
    "2099-01-01T00:00:00Z", "9999-12-31T23:59:59-01:00",
])  # fmt: skip
ODD = st.none() | st.integers(-2, 2) | st.booleans() | st.floats(allow_nan=False) | st.lists(
    st.text(max_size=2), max_size=2)  # fmt: skip
TEXTS = st.text(max_size=6) | st.sampled_from(["a b", "x" * 130, "ab\x01", "http://h/x", "/p"])
LABELS = st.none() | st.dictionaries(
    st.sampled_from(["alertname", "severity", "service", "pod", "a b", "é"]),
    TEXTS | st.just("v" * (MAX_VALUE_CHARS + 1)), max_size=4,
) | ODD  # fmt: skip
ALERTS = st.fixed_dictionaries(
    {"status": st.sampled_from(["firing", "resolved", "pending"]) | ODD, "startsAt": TIMES | ODD},
    optional={
        "labels": LABELS, "annotations": LABELS, "endsAt": TIMES | ODD,
        "fingerprint": st.sampled_from(["", "abc123", "a b", "\x01", "f" * 129]) | ODD,
        "generatorURL": TEXTS | ODD, "silenceURL": TEXTS | ODD, "valueString": TEXTS | ODD,
        "values": st.none() | st.dictionaries(st.text(max_size=2), st.floats() | st.none()),
        "extra": ODD,
    },
)  # fmt: skip
BODIES = st.fixed_dictionaries(
    {"alerts": st.lists(st.tuples(ALERTS, st.sets(st.sampled_from(["status", "startsAt"])))
                        .map(lambda a: {k: v for k, v in a[0].items() if k not in a[1]})
                        | ODD, max_size=4) | ODD},
    optional={
        "version": st.sampled_from(["4", "1"]) | ODD, "groupKey": TEXTS | ODD,
        "receiver": TEXTS | ODD, "externalURL": st.sampled_from(["http://am:9093/", "x", ""]),
        "truncatedAlerts": st.integers(-1, 3) | ODD, "orgId": st.none() | st.integers(0, 2) | ODD,
        "status": TEXTS | ODD, "ruleName": st.just("x"),
    },
)  # fmt: skip


#: Bodies of the right types (texts, times and fingerprints still odd at times): most of
#: them are read in the one pass, which must then agree with the models.
PLAIN_LABELS = st.none() | st.dictionaries(
    st.sampled_from(["alertname", "severity", "service", "instance", "é"]), TEXTS, max_size=4
)  # fmt: skip
PLAIN_BODIES = st.fixed_dictionaries(
    {"alerts": st.lists(st.fixed_dictionaries(
        {"status": st.sampled_from(["firing", "resolved"]), "startsAt": TIMES},
        optional={
            "labels": PLAIN_LABELS, "annotations": PLAIN_LABELS, "endsAt": TIMES,
            "fingerprint": st.sampled_from(["", "abc123", "a b"]), "generatorURL": TEXTS,
            "silenceURL": TEXTS, "values": st.none(),
        },
    ), max_size=4)},
    optional={
        "version": st.sampled_from(["4", "1"]), "groupKey": TEXTS, "receiver": TEXTS,
        "externalURL": st.sampled_from(["http://am:9093/", "x", ""]),
        "truncatedAlerts": st.integers(0, 3), "orgId": st.none() | st.integers(0, 2),
    },
)  # fmt: skip


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=BODIES | PLAIN_BODIES | ODD)
def test_a_body_read_in_one_pass_is_what_pydantic_and_normalize_make_of_it(data):
    """`read_notification`'s one pass accepts what the models accept, normalised the same, and
    refuses the rest with the models' words (it hands every body it does not read to them)."""
    assert _read(data, fast=True) == _read(data, fast=False)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=PLAIN_BODIES | BODIES)
def test_the_heads_told_ahead_are_those_of_the_alerts_built(data):
    """`ahead` hears of a body only once it is valid, and what it hears (the read triage starts
    meanwhile) is what `triage` works out from the alerts built: else that read is wasted."""
    told: list[Heads] = []
    try:
        found = read_notification(data, "warning", 1_800_000_000_000, told.append)
    except PayloadError:
        assert told == []
        return
    # labels as sent: a value over MAX_VALUE_CHARS is cut in the alert (then triage reads again)
    cut = any(len(v) > MAX_VALUE_CHARS for a in found.alerts for v in a.labels.values())
    assert told in ([], [Heads.of(found.alerts)]) or cut


def test_a_plain_storm_takes_the_one_pass():
    body = {"version": "4", "groupKey": "{}:{}", "externalURL": "http://am:9093", "alerts": [
        {"status": "firing", "labels": {"alertname": "X", "instance": f"i-{n}"},
         "annotations": {}, "startsAt": "2026-11-01T00:00:00.5Z", "endsAt": "0001-01-01T00:00:00Z",
         "fingerprint": f"{n:016x}", "generatorURL": "/graph"} for n in range(3)
    ]}  # fmt: skip
    told: list[Heads] = []
    alerts = read_notification(body, "warning", None, told.append).alerts
    assert [a.key for a in alerts] == [f"{n:016x}@2026-11-01T00:00:00.5Z" for n in range(3)]
    assert told == [Heads.of(alerts)] and told[0].group_keys == ["{}:{}"] * 3
    assert alerts[1].link == "http://am:9093/graph"
    assert alerts[1].silence_url == (
        "http://am:9093/#/silences/new?filter=%7Balertname%3D%22X%22%2Cinstance%3D%22i-1%22%7D"
    )
    assert alerts[0].labels is body["alerts"][0]["labels"]  # not copied: no model was built
    assert alerts[2] == NormalizedAlert(
        key="0000000000000002@2026-11-01T00:00:00.5Z", fingerprint="0000000000000002",
        status="firing", alertname="X", severity="warning",
        starts_at="2026-11-01T00:00:00.5Z", starts_at_ms=1793491200500, ends_at_ms=None,
        labels={"alertname": "X", "instance": "i-2"}, annotations={}, generator_url="/graph",
        link="http://am:9093/graph", group_key="{}:{}", receiver="", source="alertmanager",
        values_json="null", silence_url=alerts[2].silence_url,
    )  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    base=st.sampled_from(["http://am:9093", "http://am/%7E", "https://x/a%%b"]),
    labels=st.dictionaries(
        st.sampled_from(["alertname", "a_b", "x.y", "a b", "é", "z~"]),
        st.sampled_from(["", "v-1", "a~b", "a b", '"', "%", "é", "\n", "\ud800"])
        | st.text(max_size=3),
        min_size=1, max_size=4,
    ),
)  # fmt: skip
def test_a_silence_link_quotes_each_matcher_as_alertmanager_reads_it(base, labels):
    """A label set of unreserved characters is written without quoting, from a template per
    set of names; the link is what quoting every matcher gives."""
    query = "%2C".join(_matcher(name, labels[name]) for name in sorted(labels))
    assert silence_link(base, labels) == f"{base}/#/silences/new?filter=%7B{query}%7D"


#: RFC 3339 times and what a sender may write instead: other separators, fractions of every
#: length (msgspec rounds a seventh digit, `rfc3339_ms` cuts it), offsets of every form, days
#: and hours out of range, Go's zero time with an offset, the ends of `datetime`'s years.
TIME_TEXTS = st.builds(
    "{}-{}-{}{}{}:{}:{}{}{}".format,
    st.sampled_from(["2026", "0001", "9999", "1970", "0000", "20x6"]),
    st.sampled_from(["11", "01", "12", "02", "13", "1"]),
    st.sampled_from(["01", "30", "31", "28", "00"]),
    st.sampled_from(["T", "t", " ", "_"]),
    st.sampled_from(["00", "23", "24", "9"]),
    st.sampled_from(["00", "59", "60"]),
    st.sampled_from(["00", "59", "60", "5"]),
    st.sampled_from(["", "."]).flatmap(
        lambda dot: st.text("0123456789", min_size=1 if dot else 0, max_size=10 if dot else 0)
        .map(lambda digits: dot + digits)
    ),
    st.sampled_from(["Z", "z", "", "+00:00", "-00:00", "+01:00", "-23:59", "+23:59", "+24:00",
                     "+0100", "+01", "-01:00:30", "Z ", "+5:00"]),
) | TIMES  # fmt: skip


#: Times a storm carries: any moment, 0-9 fractional digits, `Z` or an offset.
VALID_TIMES = st.builds(
    lambda moment, digits, offset: moment.strftime("%Y-%m-%dT%H:%M:%S")
    + (f".{moment.microsecond:06d}{moment.microsecond % 997:03d}"[: digits + 1] if digits else "")
    + offset,
    st.datetimes(min_value=datetime(1000, 1, 1)),  # four digits of year from `%Y`
    st.integers(0, 9),
    st.sampled_from(["Z", "+02:00", "-05:30"]),
)  # fmt: skip


def _each_ms(texts: list[str], required: bool) -> list[int | None] | None:
    """What `read_notification`'s one pass makes of `texts`, time by time."""
    found = []
    for text in texts:
        try:
            ms = rfc3339_ms(text)
        except ValueError:
            return None
        if text.strip() != text or (ms is None and required):
            return None
        found.append(ms)
    return found


@settings(max_examples=1500, deadline=None)
@given(texts=st.lists(TIME_TEXTS | VALID_TIMES, max_size=4), required=st.booleans())
def test_times_read_together_are_read_as_one_by_one(texts, required):
    """msgspec reads a storm's times in one call: each the same, and no time it reads that
    `rfc3339_ms` refuses (else each goes `rfc3339_ms`'s way)."""
    assert _times_ms(texts, required) == _each_ms(texts, required)


def _read_bytes(raw: bytes, typed: bool) -> object:
    """What the webhook makes of a body's bytes: by `read_notification_bytes`, or (`typed`
    False) `load_body` then `read_notification`; the heads told ahead; a refusal as its status
    and words."""
    told: list[Heads] = []
    try:
        if typed:
            found = read_notification_bytes(raw, "warning", 1_800_000_000_000, told.append)
        else:
            found = read_notification(load_body(raw), "warning", 1_800_000_000_000, told.append)
        return found.alerts, found.truncated, found.group_key, told
    except PayloadError as exc:
        return exc.status, str(exc), told


#: Alertmanager bodies of the typed way's shape, their times and texts odd at times.
TYPED_BODIES = st.fixed_dictionaries(
    {"alerts": st.lists(st.fixed_dictionaries(
        {"status": st.sampled_from(["firing", "resolved"]),
         "startsAt": st.one_of(VALID_TIMES, VALID_TIMES, TIME_TEXTS)},
        optional={
            "labels": PLAIN_LABELS | st.just({"n" * (MAX_VALUE_CHARS + 1): "v"}),
            "annotations": PLAIN_LABELS,
            "endsAt": st.sampled_from(["0001-01-01T00:00:00Z", ""]) | VALID_TIMES | TIME_TEXTS,
            "fingerprint": st.sampled_from(["", "abc123", "é"]) | st.sampled_from(
                ["a b", "\x01", "f" * 129]) | st.text(max_size=3),
            "generatorURL": TEXTS, "silenceURL": st.sampled_from(["", "http://g/s", "x"]),
            "values": st.none(), "valueString": TEXTS,
        },
    ), max_size=5)},
    optional={
        "version": st.sampled_from(["4", "1"]), "groupKey": TEXTS, "receiver": TEXTS,
        "externalURL": st.sampled_from(["http://am:9093/", "http://am/a b", "x", ""]),
        "truncatedAlerts": st.integers(0, 3) | st.integers(-(10**21), 10**21),
        "orgId": st.none() | st.integers(-(10**21), 10**21), "status": TEXTS,
        "groupLabels": PLAIN_LABELS, "commonLabels": PLAIN_LABELS | ODD,
        "commonAnnotations": PLAIN_LABELS,
    },
)  # fmt: skip
#: What a hostile sender writes into a body: JSON's edges, escapes, nesting, other numbers.
PIECES = st.sampled_from([
    "[", "]", "{", "}", ",", '"', "\\", '\\"', "\\ud800", "\\u00e9", "NaN", "1e999",
    "12345678901234567890123", "1.0", "-0", "[[[[", "true", "null", " ", "\ufeff", "\xff",
    '"x": 1,', '"alerts": [],', '"labels": {"a": "b", "a": "c"},',
    # a field the typed way skips, hiding what `load_json` refuses, or nothing
    '"x": 1e999,', '"x": 123456789012345678901234,', '"x": [[[[[[1]]]]]],', '"x": "\xff",',
    '"imageURL": "",', '"x": {"y": [2.5e-3, null, "3e123"]},',
])  # fmt: skip


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.one_of(TYPED_BODIES, TYPED_BODIES, PLAIN_BODIES, BODIES),
    pieces=st.just([]) | st.lists(st.tuples(st.floats(0, 1), PIECES), max_size=3),
    indent=st.booleans(),
)  # fmt: skip
def test_a_body_read_from_its_bytes_is_what_load_body_and_read_notification_make_of_it(
    data, pieces, indent
):
    """The typed way reads a body's bytes as `load_body` and `read_notification` do: the same
    alerts and heads told ahead, or the same refusal word for word (it hands every body it
    does not read to them), for the bodies of a storm and for near-JSON a hostile sender writes."""
    text = json.dumps(data, indent=2 if indent else None)
    for at, piece in pieces:  # anywhere: inside a string, between two values, at either end
        cut_at = int(at * len(text))
        text = text[:cut_at] + piece + text[cut_at:]
    raw = text.encode("utf-8", "surrogatepass")
    assert _read_bytes(raw, typed=True) == _read_bytes(raw, typed=False)


def test_a_plain_storm_is_decoded_typed_once_and_read_as_before():
    body = {"version": "4", "groupKey": "{}:{}", "externalURL": "http://am:9093",
            "groupLabels": {}, "commonLabels": {}, "commonAnnotations": {}, "alerts": [
        {"status": "firing", "labels": {"alertname": "X", "instance": f"i-{n}"},
         "annotations": {}, "startsAt": f"2026-11-01T00:00:0{n}.5Z",
         "endsAt": "0001-01-01T00:00:00Z", "fingerprint": f"{n:016x}", "generatorURL": "/graph"}
        for n in range(3)
    ]}  # fmt: skip
    raw = json.dumps(body).encode()
    typed = _read_bytes(raw, typed=True)
    assert typed == _read_bytes(raw, typed=False)
    alerts, _, _, told = typed  # type: ignore[misc]
    assert [a.starts_at_ms for a in alerts] == [1793491200500, 1793491201500, 1793491202500]
    assert told == [Heads.of(alerts)]
    with pytest.raises(PayloadError) as err:  # one unknown field: the way before, its words
        read_notification_bytes(raw.replace(b'"version"', b'"orgId": "one", "x"'), "warning")
    assert err.value.status == 422 and "orgId" in str(err.value)


def _storm_body(alerts: int = 3) -> dict[str, Any]:
    """An Alertmanager body of `alerts` firing alerts, every field it sends."""
    return {"version": "4", "groupKey": "{}:{}", "externalURL": "http://am:9093",
            "receiver": "br", "status": "firing", "truncatedAlerts": 0,
            "groupLabels": {}, "commonLabels": {}, "commonAnnotations": {}, "alerts": [
        {"status": "firing", "labels": {"alertname": "X", "instance": f"i-{n}"},
         "annotations": {}, "startsAt": f"2026-11-01T00:00:0{n % 10}.5Z",
         "endsAt": "0001-01-01T00:00:00Z", "fingerprint": f"{n:016x}", "generatorURL": "/graph"}
        for n in range(alerts)
    ]}  # fmt: skip


def test_fields_alertmanager_does_not_send_are_skipped_the_typed_way():
    """Grafana's `title`, `state` and `message` after the alerts, an `imageURL` on each, a
    proxy's own nested field: pydantic ignores them, and so does the typed way, which reads
    the body as before instead of handing it to `load_body` (a failed decode, then the slow
    way: about 60 ms more for 5,000 alerts)."""
    body = _storm_body()
    body["alerts"] = [a | {"imageURL": "", "ruleUID": "u1"} for a in body["alerts"]]
    body |= {"title": "[FIRING:3] X", "state": "alerting", "message": "…",
             "proxy": {"seen": [1, 2.5, None, {"deep": ["3e123"]}], "tenant": "é"}}  # fmt: skip
    for text in (json.dumps(body), json.dumps(body, indent=2, ensure_ascii=False)):
        raw = text.encode()
        typed = _typed_notification(raw, "warning", 1_800_000_000_000, None)
        assert typed is not None
        assert typed == read_notification(load_body(raw), "warning", 1_800_000_000_000)
        assert _read_bytes(raw, typed=True) == _read_bytes(raw, typed=False)


@pytest.mark.parametrize(
    "hidden",
    [b"1e999", b"-1E+400", b"123456789012345678901234", b'"\xff"', b"[" * 65 + b"]" * 65,
     b"[" * 5000 + b"]" * 5000, b"NaN", b'"\\ud800"', b"[" * 63 + b"]" * 63, b"1e-5"],
    ids=["inf", "-inf", "long-int", "not-utf8", "depth-65", "depth-5000", "nan", "surrogate",
         "depth-64-in-all", "small-float"],
)  # fmt: skip
def test_what_a_skipped_field_holds_is_refused_as_before(hidden):
    """What `load_json` refuses (a float out of range, an integer of more than 20 digits, bytes
    that are no UTF-8, nesting over 64 levels, NaN) is refused in a field the typed way skips,
    with the same status and words: the typed way leaves such a body to `load_body`. What it
    takes (nesting of 64 levels in all, a lone surrogate's escape, a small float) is taken
    either way."""
    raw = json.dumps(_storm_body() | {"x": "HIDDEN"}).encode().replace(b'"HIDDEN"', hidden)
    found = _read_bytes(raw, typed=True)
    assert found == _read_bytes(raw, typed=False)
    if hidden in (b"[" * 63 + b"]" * 63, b'"\\ud800"', b"1e-5"):
        assert isinstance(found[0], list) and len(found[0]) == 3  # taken
    else:
        assert found[0] == 400, found


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.stem)
def test_every_capture_is_decoded_typed_and_read_as_before(path):
    """Alertmanager's real bodies (every field it sends) take the typed way, and read the same."""
    raw = json.loads(path.read_text())["body_raw"].encode()
    typed = _typed_notification(raw, "warning", 1_800_000_000_000, None)
    assert typed is not None
    assert typed == read_notification(load_body(raw), "warning", 1_800_000_000_000)
