"""What the planners exchange: a walk candidate and a decision (root cause or inconclusive)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Under this confidence a finding names a lead, not a conclusion (the page's and the web
#: page's "named, low confidence").
LEAD_BELOW = 0.5


@dataclass
class Candidate:
    """A component the walk reached: which alerting components reach it, at what total distance
    (sum of the shortest hops from each), whether the world marks it as a client (traffic
    source), its kind, and the topic through which a consumer reaches it (producers)."""

    name: str
    covers: list[str]
    distance: int
    client: bool = False
    kind: str | None = None
    via_topic: str | None = None


@dataclass
class Decision:
    """The outcome of a planner: a root cause (None when inconclusive) and why.

    `candidates`: the remaining ones, best first; `confidence` in [0, 1], explained by
    `summary`; `ruled_out`: component -> why not; `surge_paths`: graph paths of a traffic
    surge; `separated_by`: what separated the winner from the runner-up (empty when nothing
    did); `evidence`: the live evidence the decision rests on (signals per component);
    `measured`: component -> the measurement its `ruled_out` reason rests on
    (`agents.investigate.measure`; a reason without one rests on the alerts and the graph).
    """

    root_cause: str | None
    candidates: list[str]
    confidence: float
    summary: str
    ruled_out: dict[str, str] = field(default_factory=dict)
    surge_paths: list[list[str]] = field(default_factory=list)
    separated_by: str = ""
    evidence: list[dict[str, Any]] = field(default_factory=list)
    measured: dict[str, dict[str, Any]] = field(default_factory=dict)

    def in_doubt(self, names: list[str], summary: str, keep_evidence: bool = False) -> Decision:
        """This decision made inconclusive between `names` (best first, what to check in that
        order) with `summary`: the ruled-out reasons (and their measurements) of the
        components not named stay; confidence 0.5 / len(names), as every inconclusive
        finding's; `keep_evidence` keeps the live evidence it rested on."""
        ruled = {k: v for k, v in self.ruled_out.items() if k not in names}
        return Decision(
            None, names, round(0.5 / len(names), 2), summary, ruled,
            evidence=self.evidence if keep_evidence else [],
            measured={k: v for k, v in self.measured.items() if k in ruled},
        )  # fmt: skip
