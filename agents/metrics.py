"""Prometheus metrics (prometheus-client) for `GET /metrics`: one `Metrics` per process, built
with its own `CollectorRegistry` by the runtime and passed to the app, the workers and their
tasks. Nothing is registered in prometheus-client's global default registry.

Series (all counters end in `_total`; durations are seconds, Prometheus' base unit):

- `blast_alerts_received_total{tenant, status}`: alerts the webhook put in the graph
  (status firing/resolved); `blast_alerts_unmatched_total{tenant}`: of those, alerts whose
  labels name no known component.
- `blast_incidents_opened_total{tenant}`, `blast_incidents_resolved_total{tenant}`: by triage.
- `blast_webhook_duration_seconds`: time to answer `POST /api/v1/alerts`, any answer.
- `blast_tasks_claimed_total{kind}`, `blast_tasks_taken_over_total{kind}` (the previous
  owner's lease had expired), `blast_tasks_failed_total{kind}` (used up `BLAST_MAX_ATTEMPTS`).
- `blast_deliveries_failed_total{reason}`: page deliveries a destination refused or that failed
  for good (`channel_not_found`, `not_in_channel`, …); `blast_delivery_fallbacks_total{reason}`:
  pages that landed in a later channel of the root route because an earlier one refused them.
- `blast_actions_sent_total{kind, adapter}`: external actions delivered by `TaskRun.act`;
  `blast_actions_duplicates_suppressed_total{kind, adapter}`: not sent again because the intent
  was already delivered (recorded in the graph, or found by the adapter after a crash).
- `blast_step_duration_seconds{tool}`: one agent step, its run plus its checkpoint.
- `blast_planner_calls_total{planner}`: root-cause decisions (`rules`: the rule-based one).
- `blast_oncall_uncovered{tenant, team, window}`: 1 when the team has nobody on call now
  (`window="now"`) or a gap within the next 14 days (`window="14d"`), else 0; set by `serve`
  after each on-call refresh (`BLAST_ONCALL_REFRESH_S`).
- `blast_heartbeat_last_seen_seconds{tenant, alertname}`: when the heartbeat alert
  (`BLAST_HEARTBEAT_ALERTNAME`) last arrived (unix s), set on receipt and by `serve`'s upkeep;
  `time() - blast_heartbeat_last_seen_seconds > 600` is the silence the gateway pages for.
- `blast_model_calls_total{model, outcome}`: calls to a planner model (outcome `ok` or the
  error kind: rate_limited, overloaded, bad_request, bad_key, unknown_model, provider_down);
  `blast_model_tokens_total{model, direction}`: tokens in (`input`) and out (`output`);
  `blast_tasks_paused_total{kind}`: tasks paused because every model was cooling down.
- `blast_findings_total{planner, outcome}`: findings written, `conclusive` (a root cause) or
  `inconclusive` (candidates named, nothing separated them).
- `blast_verdicts_total{planner, verdict}`: verdicts (`confirmed`, `rejected`) on findings of
  each planner, counted by the learner; the confirm rate per planner is
  `sum by (planner) (blast_verdicts_total{verdict="confirmed"}) / sum by (planner)
  (blast_verdicts_total)`.

Separate processes: workers of `blast-radius-worker@` units are other processes than the
gateway. With `PROMETHEUS_MULTIPROC_DIR` set, prometheus-client's multiprocess mode keeps each
process's values in files there, and `/metrics` sums them (counters and histograms; a dead
worker's counts stay in the sum, as counters should). Unset, `/metrics` shows this process only
(`serve` with its worker threads, the tests).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    values,
)
from prometheus_client.multiprocess import MultiProcessCollector

from adapters.processes import running

#: Webhook and step latency buckets (s): a triage query is ~1 ms, a slow Slack call ~seconds.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


def use_multiprocess_dir(path: Path, fresh: bool = False) -> None:
    """Switch prometheus-client to multiprocess mode with its files in `path` (created).

    Must run before the first metric is created in this process; applies to the whole process
    (prometheus-client keeps the mode in a module attribute and reads the folder from
    `PROMETHEUS_MULTIPROC_DIR`, which is set here too, so both always agree).
    `fresh`: empty the folder first (the gateway does at start; its workers restart with it).
    """
    if fresh and path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True, exist_ok=True)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(path)
    values.ValueClass = values.MultiProcessValue()  # type: ignore[no-untyped-call]


def serve_metrics_dir(parent: Path, pid: int) -> Path:
    """`parent/serve-<pid>`: the multiprocess folder of the `serve` with that pid and its
    workers. Removes the folders of serves no longer running (their counters ended with them,
    as `fresh` ends a folder's), never a running one's."""
    for old in parent.glob("serve-*"):
        number = old.name.removeprefix("serve-")
        if number.isascii() and number.isdigit() and not running(int(number)):
            shutil.rmtree(old, ignore_errors=True)
    return parent / f"serve-{pid}"


class Metrics:
    """Every metric Blast Radius records, registered in `registry` (a new one by default).

    `multiprocess_dir`: the folder given to `use_multiprocess_dir`; `exposition()` then sums
    every process's files instead of reading `registry`.
    """

    def __init__(
        self, registry: CollectorRegistry | None = None, multiprocess_dir: Path | None = None
    ) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self.multiprocess_dir = multiprocess_dir
        r = self.registry
        self.alerts_received = Counter(
            "blast_alerts_received", "Alerts accepted into the graph by the webhook.",
            ["tenant", "status"], registry=r,
        )  # fmt: skip
        self.alerts_unmatched = Counter(
            "blast_alerts_unmatched", "Accepted alerts whose labels name no known component.",
            ["tenant"], registry=r,
        )  # fmt: skip
        self.incidents_opened = Counter(
            "blast_incidents_opened", "Incidents opened by triage.", ["tenant"], registry=r
        )
        self.incidents_resolved = Counter(
            "blast_incidents_resolved", "Incidents resolved (all their alerts resolved).",
            ["tenant"], registry=r,
        )  # fmt: skip
        self.webhook_seconds = Histogram(
            "blast_webhook_duration_seconds", "Time to answer POST /api/v1/alerts.",
            buckets=LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        self.tasks_claimed = Counter(
            "blast_tasks_claimed", "Task claims by workers.", ["kind"], registry=r
        )
        self.tasks_taken_over = Counter(
            "blast_tasks_taken_over", "Claims of a task whose previous owner's lease expired.",
            ["kind"], registry=r,
        )  # fmt: skip
        self.tasks_failed = Counter(
            "blast_tasks_failed", "Tasks marked failed after BLAST_MAX_ATTEMPTS attempts.",
            ["kind"], registry=r,
        )  # fmt: skip
        self.actions_sent = Counter(
            "blast_actions_sent", "External actions delivered (page, ticket, follow-up).",
            ["kind", "adapter"], registry=r,
        )  # fmt: skip
        self.deliveries_failed = Counter(
            "blast_deliveries_failed",
            "Page deliveries refused by their destination or failed for good, by reason.",
            ["reason"], registry=r,
        )  # fmt: skip
        self.delivery_fallbacks = Counter(
            "blast_delivery_fallbacks",
            "Pages delivered to a fallback channel after an earlier one refused, by reason.",
            ["reason"], registry=r,
        )  # fmt: skip
        self.actions_suppressed = Counter(
            "blast_actions_duplicates_suppressed",
            "External actions not sent again because their intent was already delivered.",
            ["kind", "adapter"], registry=r,
        )  # fmt: skip
        self.step_seconds = Histogram(
            "blast_step_duration_seconds", "Time of one agent step: its run and its checkpoint.",
            ["tool"], buckets=LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        self.planner_calls = Counter(
            "blast_planner_calls", "Root-cause decisions made, by planner.", ["planner"],
            registry=r,
        )  # fmt: skip
        self.oncall_uncovered = Gauge(
            "blast_oncall_uncovered",
            "1 when a team has nobody on call (window=now) or a gap within 14 days (window=14d).",
            ["tenant", "team", "window"], registry=r, multiprocess_mode="mostrecent",
        )  # fmt: skip
        self.heartbeat_last_seen = Gauge(
            "blast_heartbeat_last_seen_seconds",
            "When the heartbeat alert (Watchdog) last arrived, unix time in seconds.",
            ["tenant", "alertname"], registry=r, multiprocess_mode="max",
        )  # fmt: skip
        self.model_calls = Counter(
            "blast_model_calls", "Calls to a planner model, by model and outcome.",
            ["model", "outcome"], registry=r,
        )  # fmt: skip
        self.model_tokens = Counter(
            "blast_model_tokens", "Tokens sent to (input) and received from (output) a model.",
            ["model", "direction"], registry=r,
        )  # fmt: skip
        self.tasks_paused = Counter(
            "blast_tasks_paused", "Tasks paused until a cooling-down model is back.", ["kind"],
            registry=r,
        )  # fmt: skip
        self.findings = Counter(
            "blast_findings", "Findings written, by planner and outcome (conclusive, "
            "inconclusive).", ["planner", "outcome"], registry=r,
        )  # fmt: skip
        self.verdicts = Counter(
            "blast_verdicts", "Verdicts on findings (confirmed, rejected), by the finding's "
            "planner.", ["planner", "verdict"], registry=r,
        )  # fmt: skip

    def exposition(self) -> bytes:
        """The Prometheus text format of every series (all processes in multiprocess mode)."""
        if self.multiprocess_dir is None:
            return generate_latest(self.registry)
        merged = CollectorRegistry()
        MultiProcessCollector(merged, path=str(self.multiprocess_dir))  # type: ignore[no-untyped-call]
        return generate_latest(merged)
