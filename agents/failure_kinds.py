"""Failure kinds: a small, fixed vocabulary that differently worded alerts map onto.

A playbook learned from `PostgresTooManyConnections` on one database must be recognised when
another database fires `PgConnectionPoolExhausted`: both are *saturation*. The mapping is a
keyword table (no model), checked in order, first match wins, over the alert name, and over its
summary only when the name matches nothing. Engineers use the same words in preferences ("for
database saturation, …").

The patterns read a bounded text (`MAX_KIND_CHARS` of the name and of the summary: a kind's
keyword is in the first words, and a 4 MB summary must not cost every worker minutes), and an
alert is classified once per process (`kind_text` and `classify` remember their last
`MEMO` answers), however many checks and rules ask.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from typing import Any

#: (kind, pattern) in priority order; patterns match alertname + summary, case-insensitively,
#: after CamelCase is split into words.
KINDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE))
    for kind, pattern in (
        # Grafana's alerts about the monitoring itself (a rule in NoData or Error state): the
        # query returned nothing or failed, which says nothing yet about the service
        ("nodata", r"\bdatasource (no ?data|error)\b"),
        ("saturation", r"saturat|too many conn|connection(s)? (pool )?(exhaust|limit|full)|"
                       r"pool exhaust|max.?conn|conn(ection)? pool|exhaust"),
        ("memory", r"memory|\boom\b|heap|out of mem"),
        ("restarts", r"restart|crash ?loop|oomkilled|not ready"),
        ("lag", r"\blag\b|backlog|consumer group|queue (depth|size|length)|"
                r"messages? (ready|in queue)|ready messages|\bunack(ed)? messages"),
        # fewer requests arrive than usual: before `traffic`, which "request rate" and
        # "traffic" would otherwise read as a surge
        ("starved", r"\bno (requests?|traffic)\b|\bzero (requests|traffic)\b|"
                    r"(requests?|traffic|request rate|throughput) "
                    r"(drop|dropped|fell|low|stopped|absent|missing)|"
                    r"\b(low|dropped) (request rate|traffic|throughput)"),
        ("traffic", r"rate spike|request rate|traffic|surge|flood"),
        ("latency", r"latency|slow|duration|p9\d|timeout|gc pause"),
        ("errors", r"error|5xx|fail|exception|unavailable"),
        ("cpu", r"\bcpu\b|throttl"),
        ("disk", r"disk|filesystem|inode|volume"),
    )
)  # fmt: skip


#: Alert kinds that point at the alerting component's own process, not at what it calls.
#: Restarts are not among them: a pod whose readiness or start-up checks its database restarts
#: when the database fails, so a restart alone does not clear what is behind it.
SELF_KINDS = frozenset({"memory", "cpu", "disk"})


def words(text: str) -> str:
    """`PgConnectionPoolExhausted` -> `Pg Connection Pool Exhausted`, `ContainerCPUHigh` ->
    `Container CPU High` (CamelCase split, an acronym kept whole; `_` too)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", text).replace("_", " ")


#: Characters of an alert's name, and of its summary, the keyword patterns read.
MAX_KIND_CHARS = 1024
#: Alerts whose kind text and kind a process remembers (each entry at most ~4 KiB).
MEMO = 4096


def kind_text(alertname: str, summary: str = "") -> str:
    """The text the keyword patterns read for one alert: the first `MAX_KIND_CHARS` of its
    name with CamelCase split (`words`), then the first `MAX_KIND_CHARS` of its summary."""
    return _kind_text(alertname[:MAX_KIND_CHARS], summary[:MAX_KIND_CHARS])


@functools.lru_cache(maxsize=MEMO)
def _kind_text(alertname: str, summary: str) -> str:
    return f"{words(alertname)} {summary}"


def classify(alertname: str, summary: str = "") -> str | None:
    """The failure kind of one alert, or None when no keyword matches: the kind its name
    says, else the kind its summary says. The name is what the alert rule measures; a
    summary's words are often a cause's or a symptom's detail (`LoansAPIHigh5xx`, "pool
    timeout from pgbouncer", is errors, not latency: a new user's trial saw a repeat held
    only as a lead because its errors alert read as latency)."""
    return _classify(alertname[:MAX_KIND_CHARS], summary[:MAX_KIND_CHARS])


@functools.lru_cache(maxsize=MEMO)
def _classify(alertname: str, summary: str) -> str | None:
    for text in (words(alertname), summary):
        kind = next((kind for kind, pattern in KINDS if pattern.search(text)), None)
        if kind is not None:
            return kind
    return None


def kind_in(text: str) -> str | None:
    """The failure kind named in free text ("for database saturation, …"; its first
    `MAX_KIND_CHARS` characters), or None."""
    text = text[:MAX_KIND_CHARS]
    return next(
        (kind for kind, pattern in KINDS if pattern.search(text) or kind in text.lower()), None
    )


def summary_of(alert: dict[str, Any]) -> str:
    """An alert row's summary annotation (`summary`, or inside `annotations_json`)."""
    if "summary" in alert:
        return str(alert["summary"])
    return str(json.loads(alert.get("annotations_json") or "{}").get("summary", ""))


def surge(alertnames: list[str]) -> bool:
    """Whether one of the alerts means "more traffic than usual arrives here" (failure kind
    `traffic`, whatever its wording: `RequestRateSpike`, `TrafficSurge`, …)."""
    return any(classify(name) == "traffic" for name in alertnames)


def dominant(
    alerts: list[dict[str, Any]], cause: str | None, traffic_source: bool = False
) -> str | None:
    """The most common failure kind among the alerts on `cause` (else among all the alerts),
    or None when none classifies. Alerts are rows with `alertname`, `component` and a summary.
    `traffic_source`: the cause is one (a client, `client: true` in the world), which fails by
    sending more: `traffic` when an alert says so (`surge`), its callees' latency the symptom."""
    if traffic_source and surge([a["alertname"] for a in alerts]):
        return "traffic"
    on_cause = [a for a in alerts if a["component"] == cause] or alerts
    kinds = Counter(k for a in on_cause if (k := classify(a["alertname"], summary_of(a))))
    return kinds.most_common(1)[0][0] if kinds else None


def starved(alerts: list[dict[str, Any]]) -> set[str]:
    """The components every one of whose firing `alerts` (rows with `component`, `alertname`,
    `status`) says fewer requests arrive than usual (kind `starved`): a symptom of their
    callers, which stopped sending, not of their own dependencies."""
    kinds: dict[str, set[str | None]] = {}
    for a in alerts:
        if a.get("component") and a.get("status", "firing") == "firing":
            kinds.setdefault(a["component"], set()).add(classify(a["alertname"]))
    return {c for c, k in kinds.items() if k == {"starved"}}


#: Kinds that are about the monitoring, not the monitored service (`monitoring_gap`).
MONITORING_KINDS = frozenset({"nodata"})


def monitoring_gap(alerts: list[dict[str, Any]]) -> str | None:
    """The finding's summary when every alert of an incident is about the monitoring itself
    (kind `nodata`: Grafana's `DatasourceNoData`, its rule's query returned no data, and
    `DatasourceError`, its query failed): the data source, the exporter or the scrape stopped
    answering, which says nothing about the service's requests, so the dependencies behind it
    are not in question. None when any alert is about something else (or there is none).
    `alerts`: rows with `alertname`, `component`, a summary and `labels` (`rulename`: the
    rule that went silent, where Grafana moves its name)."""
    if not alerts or any(
        classify(a["alertname"], summary_of(a)) not in MONITORING_KINDS for a in alerts
    ):
        return None
    said = _silent_rules(alerts)
    components = sorted({a["component"] for a in alerts if a.get("component")})
    about = ", ".join(components) or "the component these alerts name"
    return (
        f"Monitoring, not the service (alerts only): {'; '.join(said)}. The data source, the "
        f"exporter or the scrape stopped answering: this says nothing yet about {about}'s "
        "requests or what they depend on. Check the data source in Grafana and whether "
        f"{about} still exports its metrics."
    )


def _silent_rules(alerts: list[dict[str, Any]]) -> list[str]:
    """What the monitoring `alerts` (all of a `MONITORING_KINDS` kind) say went silent, one
    phrase per Grafana state: "Grafana's rule 'X' returned no data (DatasourceNoData)"."""
    said = []
    for name, how in (("DatasourceNoData", "returned no data"),
                      ("DatasourceError", "could not query its data source")):  # fmt: skip
        rules = sorted({(a.get("labels") or {}).get("rulename") or a["alertname"]
                        for a in alerts if a["alertname"] == name})  # fmt: skip
        if rules:
            one = len(rules) == 1
            said.append(f"Grafana's rule{'' if one else 's'} {', '.join(map(repr, rules))} "
                        f"{how} ({name})")  # fmt: skip
    if not said:  # the words matched under another alert name: say it plainly
        said.append("the monitoring query returned no data")
    return said


def monitoring_gaps(alerts: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The components whose every alert is about the monitoring (a `MONITORING_KINDS` kind:
    Grafana's `DatasourceNoData` or `DatasourceError`) while another component of the same
    incident has a real alert: component -> its alerts, in the order of `alerts`. Such a
    component is a gap in what is measured beside the fault, not one of its symptoms: the
    investigator leaves it out of the alerting components it explains (`gap_note` says it
    apart). Empty when no component has a real alert (then `monitoring_gap` is the finding).
    `alerts`: rows with `alertname`, `component` (None: on no known component) and a
    summary."""
    kinds: dict[str, list[bool]] = {}
    for a in alerts:
        if a.get("component"):
            about = classify(a["alertname"], summary_of(a)) in MONITORING_KINDS
            kinds.setdefault(a["component"], []).append(about)
    if all(all(found) for found in kinds.values()):
        return {}
    gaps = {c for c, found in kinds.items() if all(found)}
    out: dict[str, list[dict[str, Any]]] = {}
    for a in alerts:
        if a.get("component") in gaps:
            out.setdefault(a["component"], []).append(a)
    return out


def gap_note(gaps: dict[str, list[dict[str, Any]]]) -> str:
    """The finding's sentence for `monitoring_gaps`: "No data from shop: monitoring, not
    measured (Grafana's rule 'Shop p99 latency' returned no data (DatasourceNoData)); not
    counted as a symptom." One clause per component, by name; empty for no gaps."""
    if not gaps:
        return ""
    told = [f"No data from {name}: monitoring, not measured ({'; '.join(_silent_rules(rows))})"
            for name, rows in sorted(gaps.items())]  # fmt: skip
    counted = "a symptom" if len(gaps) == 1 else "symptoms"
    return f"{'. '.join(told)}; not counted as {counted}."
