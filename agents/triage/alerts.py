"""The one internal form of an alert, whatever sent it (Alertmanager v4 or Grafana unified
alerting): `NormalizedAlert`. The gateway's webhook parses bodies into it
(gateway/http/payloads.py);
triage writes it to the graph.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agents.failure_kinds import MONITORING_KINDS, classify

#: Alert names Grafana gives a rule in NoData / Error state (the rule's name moves to `rulename`).
GRAFANA_STATE_ALERTS = frozenset({"DatasourceNoData", "DatasourceError"})
#: Grafana's contact-point test ("Test" on a contact point, `POST …/receivers/test`): one alert
#: with these labels and summary (grafana/alerting `notify/testing.go`, `newTestAlert`; instance
#: `Alertmanager` when Grafana tests an external Alertmanager's receiver). A person may add
#: labels and annotations of their own; these stay unless they overrode them.
CONTACT_POINT_TEST = {"alertname": "TestAlert", "summary": "Notification test",
                      "instances": frozenset({"Grafana", "Alertmanager"})}  # fmt: skip


#: Most characters kept of one label or annotation name or value (alert names and summaries
#: included) and of a body's receiver, group key and URLs: Prometheus and Alertmanager set no
#: limit, and one 4 MB value would otherwise travel into every page, prompt and pattern.
MAX_VALUE_CHARS = 16 * 1024


def cut(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    """`text` as sent when it has at most `limit` characters, else its first `limit` characters
    and a marker saying how many were cut (`…[cut 4177920 characters]`)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…[cut {len(text) - limit} characters]"


def cut_values(values: dict[str, str]) -> dict[str, str]:
    """Labels or annotations with every name and value `cut`."""
    if len("".join(values.values())) <= MAX_VALUE_CHARS >= len("".join(values)):
        return values  # the usual case, at C speed: all of them are no longer than the limit
    if (
        max(map(len, values.values()), default=0)
        <= MAX_VALUE_CHARS
        >= max(map(len, values), default=0)
    ):
        return values
    return {cut(k): cut(v) for k, v in values.items()}


@dataclass(slots=True)
class NormalizedAlert:
    """One alert episode as triage sees it, whatever the sender.

    `key` = `fingerprint@startsAt` (startsAt as sent). Times are ms since the epoch, UTC;
    `ends_at_ms` is None while firing. `link` is generatorURL, resolved against externalURL
    when it is relative (for people to click; never fetched). A plain dataclass: the webhook
    body was validated already (gateway/http/payloads.py), and a storm makes thousands.
    """

    key: str
    fingerprint: str
    status: Literal["firing", "resolved"]
    alertname: str
    severity: str
    starts_at: str
    starts_at_ms: int
    ends_at_ms: int | None
    labels: dict[str, str]
    annotations: dict[str, str]
    generator_url: str
    link: str
    group_key: str
    receiver: str
    source: Literal["alertmanager", "grafana"]
    values_json: str
    #: Where a person silences this alert: Grafana's `silenceURL`, else a new Alertmanager
    #: silence matching its labels (`<externalURL>/#/silences/new?filter=…`); "" when neither.
    silence_url: str = ""

    def title(self) -> str:
        """alertname, else the summary annotation, else `alert without alertname (fingerprint
        <fingerprint>)` (a bare hash as a page title says nothing of what it is).

        Grafana's no-data and error alerts (`DatasourceNoData`, `DatasourceError`) carry the
        rule that went silent in label `rulename` (Grafana moves the rule's name there): they
        are titled `<rulename> (DatasourceNoData)`, so the page says which rule it was.
        """
        rule = self.labels.get("rulename", "").strip()
        if self.alertname in GRAFANA_STATE_ALERTS and rule:
            return f"{rule} ({self.alertname})"
        return (
            self.alertname
            or self.annotations.get("summary", "")
            or f"alert without alertname (fingerprint {self.fingerprint})"
        )


def about_monitoring(alert: NormalizedAlert) -> bool:
    """True for an alert about the monitoring itself, not the service it names (failure kind
    `nodata`, `failure_kinds.MONITORING_KINDS`: Grafana's `DatasourceNoData` and
    `DatasourceError`): it must not title an incident a real alert is in (the page would
    lead with "Catalog latency (DatasourceNoData)" over a real latency alert)."""
    return classify(alert.alertname, alert.annotations.get("summary", "")) in MONITORING_KINDS


def is_contact_point_test(alert: NormalizedAlert) -> bool:
    """True for Grafana's contact-point test notification (`CONTACT_POINT_TEST`): a person
    checking the webhook, not a failure. It is logged and triaged as any alert, so the test
    shows the whole path, and its incident pages; the page says it is the test
    (`agents.respond.messages.test_note`) and it stays open until resolved by hand (Grafana
    never sends its resolve)."""
    return contact_point_test(alert.alertname, alert.labels, alert.annotations)


def contact_point_test(
    alertname: str | None, labels: dict[str, str], annotations: dict[str, str]
) -> bool:
    """`is_contact_point_test` on a stored alert's name, labels and annotations."""
    return (
        alertname == CONTACT_POINT_TEST["alertname"]
        and labels.get("instance") in CONTACT_POINT_TEST["instances"]
        and annotations.get("summary") == CONTACT_POINT_TEST["summary"]
    )
