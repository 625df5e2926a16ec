"""Webhook bodies from Alertmanager (v4) and Grafana unified alerting (v1), and their one
internal form, `NormalizedAlert`.

Field meanings follow Alertmanager's webhook_config and Grafana's webhook contact point docs:
per-alert `status` is the
only state source; identity is `fingerprint + startsAt` (the original startsAt string, not a
parsed value); `0001-01-01T00:00:00Z` means "no end"; URLs are opaque strings; unknown fields
are ignored.
"""

from __future__ import annotations

import functools
import itertools
import json
import operator
import re
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, cast

import msgspec
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from agents.triage.alerts import MAX_VALUE_CHARS, NormalizedAlert, cut, cut_values
from agents.triage.triage import Heads
from gateway.http.limits import (
    MAX_INT_DIGITS,
    BodyError,
    load_json,
    may_hold_too_many_values,
    within_limits,
)

GO_ZERO_TIME_PREFIX = "0001-01-01"
#: The longest RFC 3339 time (9 fractional digits and an offset) has 35 characters.
MAX_TIME_CHARS = 64
#: A fingerprint is part of the alert key, a unique property in FalkorDB: FalkorDB 4.16.3
#: crashes on a unique value that is empty, starts or ends with whitespace, contains \x01 or
#: is over 4096 bytes (FalkorDB issues #1340, #2440). Alertmanager sends 16 hex digits.
MAX_FINGERPRINT_CHARS = 128
LEGACY_GRAFANA_FIELDS = ("ruleName", "evalMatches", "ruleUrl", "ruleId")

# FNV-1a 64 as used by Prometheus' model.LabelSet.Fingerprint (labels sorted by name, each name
# and value followed by the separator byte 0xff).
_FNV_OFFSET = 14695981039346656037
_FNV_PRIME = 1099511628211
_SEPARATOR = 0xFF


class PayloadError(ValueError):
    """A body we cannot accept. `status` is the HTTP status to answer (400, 413 or 422)."""

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.status = status


def label_fingerprint(labels: dict[str, str]) -> str:
    """Alertmanager's fingerprint of a label set: 16 lowercase hex digits of FNV-1a 64.

    Source: prometheus/common `model/signature.go` (`labelSetToFingerprint`).
    """
    value = _FNV_OFFSET
    for name in sorted(labels):  # surrogatepass: a lone surrogate from JSON must not raise
        for part in (
            name.encode(errors="surrogatepass"),
            labels[name].encode(errors="surrogatepass"),
        ):
            for byte in part:
                value = ((value ^ byte) * _FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
            value = ((value ^ _SEPARATOR) * _FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return f"{value:016x}"


def rfc3339_ms(value: str) -> int | None:
    """Milliseconds since the epoch (UTC) of an RFC 3339 time; None for Go's zero time or "".

    Accepts 0-9 fractional digits (truncated to microseconds) and `Z` or `+hh:mm` offsets.
    Raises ValueError for anything else.
    """
    if not value or value.startswith(GO_ZERO_TIME_PREFIX):
        return None
    text = value.strip()
    if len(text) > MAX_TIME_CHARS:
        raise ValueError(f"time {text[:40]!r}… is longer than {MAX_TIME_CHARS} characters")
    if "." in text:  # Python 3.11 takes at most 6 fractional digits: cut the extra ones
        head, _, rest = text.partition(".")
        digits = len(rest) - len(rest.lstrip("0123456789"))
        text = f"{head}.{rest[: min(digits, 6)]}{rest[digits:]}" if digits else f"{head}{rest}"
    parsed = datetime.fromisoformat(text.replace("z", "Z"))
    if parsed.tzinfo is None:
        raise ValueError(f"time {value!r} has no offset")
    try:
        return int(parsed.astimezone(UTC).timestamp() * 1000)
    except OverflowError as exc:  # e.g. 9999-12-31T23:59:59-01:00 is after year 9999 in UTC
        raise ValueError(f"time {value!r} is out of range") from exc


def unlabelled(status: object, labels: dict[str, str]) -> str | None:
    """Why an alert is refused for its labels, or None: a firing alert must carry at least one
    label with a value (a label whose value is empty is no label, to Prometheus and
    Alertmanager). Alertmanager refuses an alert without labels at intake and Grafana names
    every alert (`alertname`), so one with none comes from a broken sender, and paging someone
    with a bare fingerprint tells them nothing. An alert with labels but no `alertname` is
    taken: Alertmanager forwards those (an alert posted to its API by a script), titled by its
    summary. A resolved one without labels is taken too: it may end one accepted before this
    rule, and it opens nothing."""
    if status != "firing" or any(labels.values()):
        return None
    return "a firing alert with no labels at all (no alertname)"


class WebhookAlert(BaseModel):
    """One element of `alerts[]`; Grafana's extra fields are kept when present. A firing
    alert needs a label (`unlabelled`)."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)  # values: "NaN", "inf"

    status: Literal["firing", "resolved"]
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    startsAt: str
    endsAt: str = ""
    generatorURL: str = ""
    fingerprint: str = ""
    # Grafana unified alerting extras
    values: dict[str, float | None] | None = None
    valueString: str = ""
    silenceURL: str = ""
    dashboardURL: str = ""
    panelURL: str = ""

    @field_validator("startsAt", "endsAt")
    @classmethod
    def _valid_time(cls, value: str) -> str:
        rfc3339_ms(value)  # raises ValueError with the reason
        return value.strip()  # startsAt is part of the alert key: no surrounding whitespace

    @field_validator("fingerprint")
    @classmethod
    def _plain_fingerprint(cls, value: str) -> str:
        if len(value) > MAX_FINGERPRINT_CHARS or not _plain_fingerprint(value):
            raise ValueError(
                f"fingerprint must be at most {MAX_FINGERPRINT_CHARS} printable characters "
                "without spaces (Alertmanager sends 16 hex digits)"
            )
        return value

    @field_validator("labels", "annotations", mode="before")
    @classmethod
    def _null_is_empty(cls, value: object) -> object:
        return {} if value is None else value

    @model_validator(mode="after")
    def _named(self) -> WebhookAlert:
        problem = unlabelled(self.status, self.labels)
        if problem is not None:
            raise ValueError(problem)
        return self


class WebhookBody(BaseModel):
    """The whole body: Alertmanager v4, or Grafana v1 (same shape plus extras)."""

    model_config = ConfigDict(extra="ignore")

    version: str = ""
    receiver: str = ""
    status: str = ""
    groupKey: str = ""
    truncatedAlerts: int = Field(default=0, ge=0)
    externalURL: str = ""
    alerts: list[WebhookAlert]
    orgId: int | None = None  # Grafana only


def parse_body(raw: bytes) -> WebhookBody:
    """Parse and validate a webhook body (bytes as received; `validate_body` for JSON the
    request guard already parsed).

    Raises `PayloadError` 400 for bytes that are not JSON or over the JSON limits of
    `gateway/http/limits.py` (depth, count, integer size), and 422 as `validate_body`.
    """
    return validate_body(load_body(raw))


def load_body(raw: bytes) -> Any:
    """A webhook body's bytes parsed as JSON (`gateway.http.limits.load_json`). Raises
    `PayloadError` 400 for bytes that are not JSON or over the JSON limits."""
    try:
        return load_json(raw)
    except BodyError as exc:
        raise PayloadError(str(exc), exc.status) from exc


def validate_body(data: Any) -> WebhookBody:
    """Validate parsed JSON as a webhook body. Raises `PayloadError` 422 for JSON of the wrong
    shape, including the legacy (pre-unified) Grafana body, with a reason a sender can act on.
    """
    if not isinstance(data, dict):
        raise PayloadError("body must be a JSON object with an 'alerts' array", 422)
    if "alerts" not in data and any(f in data for f in LEGACY_GRAFANA_FIELDS):
        raise PayloadError(
            "legacy Grafana alerting body (ruleName/evalMatches) is not supported: use a Grafana "
            "unified alerting webhook contact point (Grafana 9+), which sends an 'alerts' array",
            422,
        )
    try:
        return WebhookBody.model_validate(data)
    except ValidationError as exc:
        reasons = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()[:5]
        )
        raise PayloadError(f"not an Alertmanager/Grafana webhook body: {reasons}", 422) from exc


#: How far ahead of the receiving clock a sender's time may be before it counts as "now" (ms):
#: NTP keeps real clocks within seconds; five minutes leaves room for a badly kept one.
MAX_CLOCK_SKEW_MS = 5 * 60 * 1000


def sent_ahead(starts_at: str, starts_at_ms: int | None) -> bool:
    """Whether an alert's `startsAt` as sent (`starts_at`, the text its identity keeps) was more
    than `MAX_CLOCK_SKEW_MS` ahead of the start it was kept with (`starts_at_ms`): then that
    start is the time of receipt (`_Sent.start`), and what shows it says so, so a `startsAt`
    of 9999-12-31 is not read as a start the sender meant. Never raises."""
    try:
        sent = rfc3339_ms(starts_at)
    except ValueError:
        return False
    return sent is not None and starts_at_ms is not None and sent > starts_at_ms + MAX_CLOCK_SKEW_MS


def http_link(url: str) -> str:
    """`url` when it is an absolute http(s) URL, else "": what a page, a Slack message or a
    ticket may show as a link. A sender's `javascript:` or `data:` URL is never one."""
    scheme, sep, rest = url.strip().partition("://")
    return url.strip() if sep and scheme.lower() in ("http", "https") and rest else ""


def _link(generator_url: str, external_url: str) -> str:
    """The alert's source as an http(s) link: `generatorURL` when absolute (Prometheus sends
    one), else joined to the body's `externalURL` (Grafana sends paths); "" when neither makes
    an http(s) URL."""
    if not generator_url or "://" in generator_url or not external_url:
        return http_link(generator_url)
    base = external_url if external_url.endswith("/") else external_url + "/"
    return http_link(base + generator_url.lstrip("/"))


#: The longest silence link kept (characters): Slack caps a button's or a block's text at
#: 2,000-3,000, and an alert with that many labels is better silenced by hand.
MAX_SILENCE_URL_CHARS = 2_000


def promql_string(value: str) -> str:
    """A label value as a double-quoted PromQL string (`\\` and `"` escaped, newlines as
    `\\n`), as Alertmanager's matchers take it."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


#: Label pairs up to this many characters have their quoted matcher remembered (`_quoted_matcher`).
MAX_REMEMBERED_MATCHER_CHARS = 256


def _matcher(name: str, value: str) -> str:
    """`name="value"` percent-encoded for a URL query (every byte but letters, digits and
    `_.-~`; a lone surrogate as `?`). Quoting is per byte, so the matchers can be quoted one by
    one and joined by `%2C`."""
    return urllib.parse.quote(f"{name}={promql_string(value)}", safe="", errors="replace")


#: `_matcher` remembered: a storm repeats most label pairs.
_remembered_matcher = functools.lru_cache(maxsize=4096)(_matcher)


#: Text percent-encoding leaves as is (RFC 3986's unreserved characters), and PromQL's
#: quoting too: most label names and values (an instance's, a pod's), which `silence_link`
#: then writes as they are.
_UNRESERVED = re.compile(r"[A-Za-z0-9_.~-]*")


def _quoted_matcher(name: str, value: str) -> str:
    """`_matcher`, remembered for the short pairs a storm repeats."""
    if len(name) + len(value) <= MAX_REMEMBERED_MATCHER_CHARS:
        return _remembered_matcher(name, value)
    return _matcher(name, value)


def silence_link(base: str, labels: dict[str, str]) -> str:
    """A link to Alertmanager's "new silence" form, prefilled with matchers for every label of
    the alert (`{a="1",b="2"}`, the filter Alertmanager's UI puts in its own links), from
    `base`: the body's `externalURL` as an http(s) link (`http_link`) without its last `/`.
    "" when `base` is "", there is no label, or the link would be longer than
    `MAX_SILENCE_URL_CHARS`. A character UTF-8 cannot encode (a lone surrogate from JSON)
    becomes `?` in the link."""
    if not base or not labels:
        return ""
    plain = _plain_silence(base, tuple(labels))
    if plain is not None and _UNRESERVED.fullmatch("".join(labels.values())):
        values, template = plain  # nothing to quote
        link = template % values(labels)
    else:
        query = "%2C".join([_quoted_matcher(name, labels[name]) for name in sorted(labels)])
        link = f"{base}/#/silences/new?filter=%7B{query}%7D"
    return link if len(link) <= MAX_SILENCE_URL_CHARS else ""


@functools.lru_cache(maxsize=1024)
def _plain_silence(
    base: str, names: tuple[str, ...]
) -> tuple[Callable[[dict[str, str]], Any], str] | None:
    """For labels named `names` (a storm repeats a few sets, in one order): what reads their
    values in name order, and the `silence_link` from `base` as a `%` template with a `%s`
    per value; None when a name needs quoting (not all unreserved characters)."""
    ordered = sorted(names)
    if not _UNRESERVED.fullmatch("".join(ordered)):
        return None
    matchers = "%%2C".join([f"{name}%%3D%%22%s%%22" for name in ordered])  # `%` as `%%`
    template = f"{base.replace('%', '%%')}/#/silences/new?filter=%%7B{matchers}%%7D"
    return operator.itemgetter(*ordered), template


def normalize(
    body: WebhookBody, default_severity: str, now_ms: int | None = None
) -> list[NormalizedAlert]:
    """Turn every element of `alerts[]` into a `NormalizedAlert`, each by its own status.

    Missing labels get defaults (severity from settings, title falls back to the summary);
    nothing is taken from `commonLabels`. A missing fingerprint is computed from the labels.
    Text is bounded (`agents.triage.alerts.cut`: every label and annotation name and value, the
    receiver, group key and source URL; a link longer than that is none); the fingerprint is
    computed from the labels as sent.
    Times (ms since the epoch, UTC) a sender's clock got wrong are bounded, so that no alert
    sorts first for ever or resolves before it started: with `now_ms` (the time of receipt),
    a `startsAt` or `endsAt` more than `MAX_CLOCK_SKEW_MS` ahead of it counts as `now_ms`;
    a resolved alert with no `endsAt` (Go's zero time, which Alertmanager and Grafana may send)
    ends at `now_ms`, the time the gateway learnt of it (without `now_ms`, its end stays None);
    a resolved alert's `endsAt` before its `startsAt` counts as its `startsAt`. The alert's
    identity (`key`) keeps the `startsAt` text as sent.
    """
    source: Literal["alertmanager", "grafana"] = (
        "grafana" if body.version == "1" or body.orgId is not None else "alertmanager"
    )
    sent = _Sent(cut(body.groupKey), cut(body.receiver), body.externalURL, source,
                 default_severity, now_ms)  # fmt: skip
    return [
        sent.alert(
            a.status, a.labels, a.annotations, a.startsAt, rfc3339_ms(a.startsAt),
            rfc3339_ms(a.endsAt) if a.status == "resolved" else None, a.generatorURL,
            a.fingerprint, json.dumps(a.values, sort_keys=True), a.silenceURL,
        )
        for a in body.alerts
    ]  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Sent:
    """What every alert of one body shares as `normalize` reads it: the body's cut group key
    and receiver, its externalURL, its sender, the default severity and the time of receipt."""

    group_key: str
    receiver: str
    external_url: str
    source: Literal["alertmanager", "grafana"]
    default_severity: str
    now_ms: int | None
    #: where Alertmanager's silences are made (`silence_link`); "" for Grafana's alerts
    silences: str = field(init=False)
    #: `_link` of each generatorURL seen so far in this body
    links: dict[str, str] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        alertmanager = self.source == "alertmanager"
        silences = http_link(self.external_url).rstrip("/") if alertmanager else ""
        object.__setattr__(self, "silences", silences)  # frozen

    def start(self, starts_ms: int) -> int:
        """An alert's start time (ms) as `normalize` keeps it: the time of receipt when it is
        more than `MAX_CLOCK_SKEW_MS` ahead of it."""
        now_ms = self.now_ms
        if now_ms is not None and starts_ms > now_ms + MAX_CLOCK_SKEW_MS:
            return now_ms
        return starts_ms

    def alert(
        self,
        status: Literal["firing", "resolved"],
        labels: dict[str, str],
        annotations: dict[str, str],
        starts_at: str,
        starts_ms: int | None,
        ends_ms: int | None,
        generator_url: str,
        fingerprint: str,
        values_json: str,
        grafana_silence: str,
    ) -> NormalizedAlert:
        """One validated alert as `normalize` makes it: `starts_at` stripped, `starts_ms` and
        `ends_ms` its times as sent (`rfc3339_ms`; `ends_ms` None unless resolved)."""
        fingerprint = fingerprint or label_fingerprint(labels)
        if starts_ms is None:
            raise PayloadError(f"alert {fingerprint}: startsAt {starts_at!r} is not a time")
        starts_ms = self.start(starts_ms)
        ends_ms = self.end(status, ends_ms, starts_ms)
        cut_labels = cut_values(labels)
        return NormalizedAlert(  # by position, in the order of its fields (a third of the time)
            f"{fingerprint}@{starts_at}",  # key
            fingerprint,
            status,
            cut_labels.get("alertname", ""),
            cut_labels.get("severity", self.default_severity),
            starts_at,
            starts_ms,
            ends_ms,
            cut_labels,
            cut_values(annotations),
            cut(generator_url),
            self.link(generator_url),
            self.group_key,
            self.receiver,
            self.source,
            values_json,
            self.silence(grafana_silence, labels),
        )

    def end(self, status: str, ends_ms: int | None, starts_ms: int) -> int | None:
        """An alert's end time (ms) as `normalize` keeps it, from its `endsAt` as sent (None
        unless resolved) and its start as kept (`start`)."""
        now_ms = self.now_ms
        if now_ms is not None:
            latest = now_ms + MAX_CLOCK_SKEW_MS
            ends_ms = now_ms if ends_ms is not None and ends_ms > latest else ends_ms
            if status == "resolved" and ends_ms is None:
                ends_ms = now_ms
        if ends_ms is not None:
            ends_ms = max(ends_ms, starts_ms)
        return ends_ms

    def link(self, generator_url: str) -> str:
        """The alert's `link` from its generatorURL (`_link`; "" when longer than
        `MAX_VALUE_CHARS`), remembered in `links`: a storm's alerts come from a few rules."""
        link = self.links.get(generator_url)
        if link is None:
            link = _link(generator_url, self.external_url)
            link = self.links[generator_url] = link if len(link) <= MAX_VALUE_CHARS else ""
        return link

    def silence(self, grafana_silence: str, labels: dict[str, str]) -> str:
        """The alert's `silence_url`: Grafana's silenceURL as an http(s) link, else
        (none, or over `MAX_SILENCE_URL_CHARS`) an Alertmanager silence of its labels."""
        silence = http_link(grafana_silence) if grafana_silence else ""
        if not silence or len(silence) > MAX_SILENCE_URL_CHARS:
            silence = silence_link(self.silences, labels)
        return silence


@dataclass(slots=True)
class Notification:
    """A webhook body read by `read_notification`: its alerts (`normalize`), Alertmanager's
    `truncatedAlerts` and the body's `groupKey` as sent."""

    alerts: list[NormalizedAlert]
    truncated: int
    group_key: str


#: Body fields `read_notification` reads at C speed when each is absent or a string (more
#: than one alert's field, so checked per alert); any other value takes pydantic's way.
_TEXT_FIELDS = ("version", "receiver", "status", "groupKey", "externalURL")
_ALERT_TEXT_FIELDS = (
    "endsAt", "generatorURL", "fingerprint", "valueString", "silenceURL", "dashboardURL",
    "panelURL",
)  # fmt: skip
#: What each of `_ALERT_TEXT_FIELDS` is when absent, and the one type a text field may have.
_EMPTY = ("",) * len(_ALERT_TEXT_FIELDS)
_TEXT = frozenset({str})


def read_notification(
    data: Any,
    default_severity: str,
    now_ms: int | None = None,
    ahead: Callable[[Heads], object] | None = None,
) -> Notification:
    """`validate_body` then `normalize` of parsed JSON, in one pass over its alerts when the
    body is plain (every field absent or of its JSON type, no Grafana `values`, every time and
    fingerprint valid): what pydantic would accept and `normalize` make of it, about a fifth
    of the time for a 5,000-alert storm (no model per alert; each time parsed once). Any other
    body goes through `validate_body` and `normalize`, so a refusal is theirs, word for word.
    `ahead`: called with the alerts' `Heads` once a plain body is validated, before its alerts
    are built (the webhook sends triage's read meanwhile, `agents.triage.triage.read_ahead`).
    Raises `PayloadError` as they do."""
    plain = _plain_notification(data, default_severity, now_ms, ahead)
    if plain is not None:
        return plain
    body = validate_body(data)
    return Notification(normalize(body, default_severity, now_ms), body.truncatedAlerts,
                        body.groupKey)  # fmt: skip


def _plain_notification(
    data: Any, default_severity: str, now_ms: int | None, ahead: Callable[[Heads], object] | None
) -> Notification | None:
    """`read_notification` of a plain body, or None when the body is not plain: every alert
    checked first (`sent.alert`'s arguments), then `ahead` told, then the alerts built."""
    if type(data) is not dict or type(data.get("alerts")) is not list:
        return None
    get = data.get
    if any(type(get(f, "")) is not str for f in _TEXT_FIELDS):
        return None
    truncated, org = get("truncatedAlerts", 0), get("orgId")
    if type(truncated) is not int or truncated < 0 or (org is not None and type(org) is not int):
        return None
    grafana = get("version") == "1" or org is not None
    group_key = get("groupKey", "")
    sent = _Sent(cut(group_key), cut(get("receiver", "")), get("externalURL", ""),
                 "grafana" if grafana else "alertmanager", default_severity, now_ms)  # fmt: skip
    checked: list[tuple[Any, ...]] = []
    for alert in data["alerts"]:
        if type(alert) is not dict:
            return None
        got = alert.get
        status, labels, annotations = got("status"), got("labels"), got("annotations")
        starts_at = got("startsAt")
        texts = map(type, map(got, _ALERT_TEXT_FIELDS, _EMPTY))
        if (status not in ("firing", "resolved") or type(starts_at) is not str
                or got("values") is not None or not _TEXT.issuperset(texts)):  # fmt: skip
            return None
        labels = {} if labels is None else labels
        annotations = {} if annotations is None else annotations
        if not (_all_text(labels) and _all_text(annotations)):
            return None
        if unlabelled(status, labels) is not None:  # refused by `WebhookAlert`, with its index
            return None
        fingerprint: str = got("fingerprint", "")
        if len(fingerprint) > MAX_FINGERPRINT_CHARS or not _plain_fingerprint(fingerprint):
            return None
        ends_at: str = got("endsAt", "")
        if starts_at.strip() != starts_at or ends_at.strip() != ends_at:
            return None  # pydantic checks the time as sent, `normalize` reads it stripped
        try:
            starts_ms, ends_ms = rfc3339_ms(starts_at), rfc3339_ms(ends_at)
        except ValueError:
            return None
        if starts_ms is None:  # refused by `normalize`, after pydantic checked every alert
            return None
        checked.append(
            (status, labels, annotations, starts_at, starts_ms,
             ends_ms if status == "resolved" else None, got("generatorURL", ""),
             fingerprint or label_fingerprint(labels), "null", got("silenceURL", ""))
        )  # fmt: skip
    if ahead is not None:  # labels as sent: `cut_values` changes one in a million
        ahead(
            Heads(
                [f"{c[7]}@{c[3]}" for c in checked], [c[7] for c in checked],
                [c[0] for c in checked], [sent.start(c[4]) for c in checked],
                [c[1] for c in checked], [sent.group_key] * len(checked),
            )
        )  # fmt: skip
    return Notification([sent.alert(*c) for c in checked], truncated, group_key)


def _all_text(values: object) -> bool:
    """Whether `values` is a dict of strings (`dict[str, str]` to pydantic: JSON's keys are)."""
    return type(values) is dict and _TEXT.issuperset(map(type, values.values()))


def _plain_fingerprint(value: str) -> bool:
    """`WebhookAlert`'s rule for a fingerprint's characters (its length checked apart)."""
    return value.isprintable() and " " not in value  # the one printable space


#: A text `cut` keeps as it is: the typed way (`_typed_notification`) takes no longer one.
_Text = Annotated[str, msgspec.Meta(max_length=MAX_VALUE_CHARS)]


class _TypedAlert(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """An element of `alerts[]` as the typed way decodes it: `WebhookAlert`'s fields, each of
    its JSON type, no Grafana `values`, no label or annotation name or value, source URL or
    fingerprint longer than `normalize` keeps as sent, and no other field. Every type here is
    flat, so the decoder never goes deeper than the body's four levels (`MAX_JSON_DEPTH`)."""

    status: Literal["firing", "resolved"]
    startsAt: str
    labels: dict[str, _Text] | None = None  # names checked apart (`_long_name`): faster
    annotations: dict[str, _Text] | None = None
    endsAt: str = ""
    generatorURL: _Text = ""
    fingerprint: Annotated[str, msgspec.Meta(max_length=MAX_FINGERPRINT_CHARS)] = ""
    values: None = None
    valueString: str = ""
    silenceURL: str = ""
    dashboardURL: str = ""
    panelURL: str = ""


class _TypedBody(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A whole body as the typed way decodes it: `WebhookBody`'s fields and Alertmanager's
    three it does not read, each of its JSON type, and no other field."""

    alerts: list[_TypedAlert]
    version: str = ""
    receiver: _Text = ""
    status: str = ""
    groupKey: _Text = ""
    truncatedAlerts: Annotated[int, msgspec.Meta(ge=0)] = 0
    externalURL: str = ""
    orgId: int | None = None
    groupLabels: dict[str, str] | None = None
    commonLabels: dict[str, str] | None = None
    commonAnnotations: dict[str, str] | None = None


class _LenientAlert(_TypedAlert, forbid_unknown_fields=False):
    """`_TypedAlert` that skips a field it does not know, as `WebhookAlert` ignores it (Grafana's
    `imageURL`, a proxy's own field)."""


class _LenientBody(_TypedBody, forbid_unknown_fields=False):
    """`_TypedBody` that skips a field it does not know, as `WebhookBody` ignores it (Grafana's
    `title`, `state` and `message`)."""

    alerts: list[_LenientAlert]  # type: ignore[assignment]  # read only, never set


#: The typed way's decoders: a body of Alertmanager's fields only (`_DECODER`), and one with
#: others beside them (`_LENIENT`), which may hide in what it skips what `load_json` refuses
#: (`within_limits` checks it then). A body is tried the strict way first: that check costs a
#: plain body nothing.
_DECODER = msgspec.json.Decoder(_TypedBody)
_LENIENT = msgspec.json.Decoder(_LenientBody)
#: The start of msgspec's words for a field the strict decoder does not know.
_UNKNOWN_FIELD = "Object contains unknown field"
#: The least integer `load_json` refuses: one of more than `MAX_INT_DIGITS` digits.
_INT_BOUND = 10**MAX_INT_DIGITS
#: What a sender writes for "no end" (Go's zero time, or nothing).
_NO_END = frozenset({"", f"{GO_ZERO_TIME_PREFIX}T00:00:00Z"})
#: The longest RFC 3339 time msgspec reads as `rfc3339_ms` does: 6 fractional digits and `Z`
#: (or fewer digits and an offset). It rounds a seventh digit where `rfc3339_ms` cuts it.
_MAX_EXACT_TIME_CHARS = 27
#: Times (ms since the epoch) at least two days inside what `datetime` holds in UTC (years 1 to
#: 9999): no offset took a time read within them out of range, and none is Go's zero time.
_SAFE_MS = (-62_135_596_800_000 + 2 * 86_400_000, 253_402_300_799_999 - 2 * 86_400_000)
_AWARE_TIMES = list[Annotated[datetime, msgspec.Meta(tz=True)]]
_STATUS = operator.attrgetter("status")
_STARTS_AT = operator.attrgetter("startsAt")
_ENDS_AT = operator.attrgetter("endsAt")
_FINGERPRINT = operator.attrgetter("fingerprint")
_LABELS = operator.attrgetter("labels")
_ANNOTATIONS = operator.attrgetter("annotations")
_GENERATOR_URL = operator.attrgetter("generatorURL")
_SILENCE_URL = operator.attrgetter("silenceURL")
_ALERTNAME = operator.methodcaller("get", "alertname", "")


def read_notification_bytes(
    raw: bytes,
    default_severity: str,
    now_ms: int | None = None,
    ahead: Callable[[Heads], object] | None = None,
) -> Notification:
    """`read_notification` of the body's bytes `raw` as `load_body` parses them: the same
    alerts, or the same refusal word for word. An Alertmanager body (`_TypedBody`, or
    `_LenientBody` with fields it does not know skipped) is decoded by msgspec straight into
    typed fields (types, lengths and times checked in C, each field once), the rest as before.
    Raises `PayloadError` as `load_body` and `read_notification` do."""
    typed = _typed_notification(raw, default_severity, now_ms, ahead)
    if typed is not None:
        return typed
    return read_notification(load_body(raw), default_severity, now_ms, ahead)


def _typed_notification(
    raw: bytes, default_severity: str, now_ms: int | None, ahead: Callable[[Heads], object] | None
) -> Notification | None:
    """`read_notification_bytes` of a body msgspec decodes as a `_TypedBody` whose times and
    fingerprints `read_notification` takes in its one pass, else None. Such a body is JSON
    `load_json` takes (its values counted from its bytes first; with no value but the typed
    fields', no number past its limits and nothing nested deeper than four levels; with fields
    it does not know, which `_LenientBody` skips unread, the whole body checked against those
    limits by `within_limits`), and holds no text `cut` changes. Every alert checked first,
    then `ahead` told, then the alerts built, field by field over all of them."""
    if may_hold_too_many_values(raw):
        return None
    body: _TypedBody
    try:
        body = _DECODER.decode(raw)
    except msgspec.ValidationError as exc:
        if not str(exc).startswith(_UNKNOWN_FIELD):
            return None  # not this shape: `load_body` and `read_notification` say why
        # a field pydantic ignores: skipped, once what was skipped is known to be within the
        # limits `load_json` refuses a body over (the refusal keeps its words: `load_body`'s)
        try:
            body = _LENIENT.decode(raw)
        except (msgspec.DecodeError, RecursionError):  # RecursionError: deep in a skipped one
            return None
        if not within_limits(raw):
            return None
    except msgspec.DecodeError:  # no JSON: `load_body` says why
        return None
    truncated, org = body.truncatedAlerts, body.orgId
    if truncated >= _INT_BOUND or (org is not None and not -_INT_BOUND < org < _INT_BOUND):
        return None
    alerts = body.alerts
    fingerprints: list[str] = list(map(_FINGERPRINT, alerts))
    if not _plain_fingerprint("".join(fingerprints)):  # a rule per character: one test for all
        return None
    starts: list[str] = list(map(_STARTS_AT, alerts))
    sent_starts = _times_ms(starts, True)
    sent_ends = _times_ms(list(map(_ENDS_AT, alerts)), False)
    if sent_starts is None or sent_ends is None:
        return None
    grafana = body.version == "1" or org is not None
    group_key = body.groupKey
    sent = _Sent(cut(group_key), cut(body.receiver), body.externalURL,
                 "grafana" if grafana else "alertmanager", default_severity, now_ms)  # fmt: skip
    labels = [{} if each is None else each for each in map(_LABELS, alerts)]
    annotations = [{} if each is None else each for each in map(_ANNOTATIONS, alerts)]
    if _long_name(labels) or _long_name(annotations):
        return None
    if "" in fingerprints:
        fingerprints = [
            f or label_fingerprint(each) for f, each in zip(fingerprints, labels, strict=True)
        ]
    keys = [
        f"{fingerprint}@{start}" for fingerprint, start in zip(fingerprints, starts, strict=True)
    ]
    statuses: list[Literal["firing", "resolved"]] = list(map(_STATUS, alerts))
    if not all(map(any, map(dict.values, labels))) and any(map(unlabelled, statuses, labels)):
        return None  # refused by `WebhookAlert`, with its index
    kept = cast(list[int], sent_starts)  # `required`: a time each
    if now_ms is not None and max(kept, default=now_ms) > now_ms + MAX_CLOCK_SKEW_MS:
        kept = list(map(sent.start, kept))
    if ahead is not None:  # labels as sent: no text here is cut
        ahead(Heads(keys, fingerprints, list(statuses), kept, labels,
                              [sent.group_key] * len(alerts)))  # fmt: skip
    ends: list[int | None] = [None] * len(alerts)
    if "resolved" in statuses:
        ends = [sent.end(status, end if status == "resolved" else None, start)
                for status, end, start in zip(statuses, sent_ends, kept, strict=True)]  # fmt: skip
    generator_urls: list[str] = list(map(_GENERATOR_URL, alerts))
    grafana_silences: list[str] = list(map(_SILENCE_URL, alerts))
    silences = (
        _silence_links(sent.silences, labels) if not any(grafana_silences)
        else list(map(sent.silence, grafana_silences, labels))
    )  # fmt: skip
    every = itertools.repeat
    made = map(  # `sent.alert`'s fields in its order, each over all alerts at C speed
        NormalizedAlert, keys, fingerprints, statuses, map(_ALERTNAME, labels),
        map(operator.methodcaller("get", "severity", default_severity), labels), starts, kept,
        ends, labels, annotations, generator_urls, map(sent.link, generator_urls),
        every(sent.group_key), every(sent.receiver), every(sent.source), every("null"), silences,
    )  # fmt: skip
    return Notification(list(made), truncated, group_key)


def _times_ms(texts: list[str], required: bool) -> list[int | None] | None:
    """`rfc3339_ms` of each of `texts` (None: no time, which only a time not `required` may
    be), or None when one is not what `read_notification`'s one pass takes (whitespace around
    it, no time or none where `required`). The usual times are read by msgspec in one call: it
    reads a time `rfc3339_ms` reads the same (`_MAX_EXACT_TIME_CHARS`, `_SAFE_MS`) or refuses
    it, and then each is read as before."""
    if not required and _NO_END.issuperset(texts):
        return [None] * len(texts)
    if texts and max(map(len, texts)) <= _MAX_EXACT_TIME_CHARS:
        try:
            moments = msgspec.convert(texts, _AWARE_TIMES)
        except msgspec.ValidationError:
            moments = []
        # as `rfc3339_ms`: the moment in UTC (the same whatever its offset), to ms
        stamps = [int(s * 1000) for s in map(datetime.timestamp, moments)]
        if stamps and _SAFE_MS[0] <= min(stamps) and max(stamps) <= _SAFE_MS[1]:
            return cast(list[int | None], stamps)
    found: list[int | None] = []
    for text in texts:
        if text.strip() != text:
            return None  # pydantic checks the time as sent, `normalize` reads it stripped
        try:
            ms = rfc3339_ms(text)
        except ValueError:
            return None
        if ms is None and required:
            return None
        found.append(ms)
    return found


def _long_name(values: list[dict[str, str]]) -> bool:
    """Whether a name in `values` is longer than `cut` keeps (msgspec checks the values' lengths
    itself, but a constraint on a name costs its cache of names)."""
    return max(map(len, itertools.chain.from_iterable(values)), default=0) > MAX_VALUE_CHARS


def _silence_links(base: str, labels: list[dict[str, str]]) -> list[str]:
    """`silence_link(base, each)` for each of `labels`: when no label value needs quoting (one
    test for all), from the template of each set of names."""
    if not base:
        return [""] * len(labels)
    values = "".join(itertools.chain.from_iterable(map(dict.values, labels)))
    if not _UNRESERVED.fullmatch(values):
        return [silence_link(base, each) for each in labels]
    links = []
    for each in labels:
        plain = _plain_silence(base, tuple(each)) if each else None
        if plain is None:
            links.append(silence_link(base, each))
            continue
        link = plain[1] % plain[0](each)
        links.append(link if len(link) <= MAX_SILENCE_URL_CHARS else "")
    return links
