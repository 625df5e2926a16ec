"""How complete a world is for the investigator: which components have no known business call
out (a config or telemetry edge, or compose `depends_on` alone, tells nothing of what fails a
request).

With alerts only, the investigator does not name a cause whose dependencies nobody recorded
(whatever it calls unseen fails it the same way): a service with no business edge out of it,
or only compose `depends_on` ones (start order, not calls), stays inconclusive (or low
confidence, when a world file lists edges into it and none out: a leaf it states) until
`topology discover` (service-graph metrics) or a world file adds its edges. Datastores and
topics are leaves by nature and not counted. Edges whose `propagation` nobody stated count as
edges that may carry a failure; the report says how many there are.

`topology validate` reports it from the files, `topology import` and `doctor` from the graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gateway.world.model import WorldSpec

#: Kinds that call nothing on the request path: no dependency of theirs is expected.
LEAF_KINDS = frozenset({"datastore", "topic"})
#: At most this many names are listed in a report line.
NAMES_SHOWN = 10


@dataclass
class Completeness:
    """`services`: components that should have dependencies (not `LEAF_KINDS`); `unknown`:
    those with no business edge out; `start_order`: those whose only ones are compose
    `depends_on`; `edges` / `unstated`: business edges, and those without a `propagation`."""

    services: int = 0
    unknown: list[str] = field(default_factory=list)
    start_order: list[str] = field(default_factory=list)
    edges: int = 0
    unstated: int = 0

    def lines(self) -> list[str]:
        """The report: one line on components, one on propagation; empty when complete."""
        out = []
        missing = self.unknown + self.start_order
        if missing:
            names = ", ".join(sorted(missing)[:NAMES_SHOWN])
            more = f" and {len(missing) - NAMES_SHOWN} more" if len(missing) > NAMES_SHOWN else ""
            order = (
                f"; {len(self.start_order)} of them "
                f"{'has' if len(self.start_order) == 1 else 'have'} only compose depends_on, "
                "which is start order, not calls"
                if self.start_order
                else ""
            )
            out.append(
                f"{len(missing)} of {self.services} services (datastores and topics left out: "
                f"they call nothing) have no known business call out (edges with `purpose: config` "
                f"or `telemetry` do not count{order}): "
                f"{names}{more}. With alerts only, a finding naming one stays inconclusive "
                "(low confidence when a world file states it is a leaf) until "
                "`topology discover` or a world file adds edges."
            )
        if self.unstated:
            out.append(
                f"{self.unstated} of {self.edges} dependency edges (business edges and "
                "`hosted_on`) state no propagation; the investigator counts them as edges that "
                "may carry a failure (a world file's `propagation: soft` on an edge clears it; "
                "docs/world.md)."
            )
        return out


def from_rows(rows: list[dict[str, Any]]) -> Completeness:
    """From rows `{name, kind, bases: [basis of each business edge out], unstated}`."""
    found = Completeness()
    for row in rows:
        bases = list(row["bases"] or [])
        found.edges += len(bases)
        found.unstated += int(row["unstated"] or 0)
        if row["kind"] in LEAF_KINDS:
            continue
        found.services += 1
        if not bases:
            found.unknown.append(row["name"])
        elif all(b == "depends_on" for b in bases):
            found.start_order.append(row["name"])
    return found


def of_world(world: WorldSpec) -> Completeness:
    """From a model (`topology validate`: the files, before any import). An edge with no basis
    was written by hand (a world file)."""
    out: dict[str, list[tuple[str, bool]]] = {c.id: [] for c in world.components}
    for e in world.edges:
        if e.purpose == "business" and e.source in out:
            out[e.source].append((e.basis or "declared", e.propagation is None))
    for c in world.components:
        if c.hosted_on and c.id in out:
            out[c.id].append(("declared", False))
    rows = [
        {"name": c.id, "kind": c.kind, "bases": [b for b, _ in out[c.id]],
         "unstated": sum(1 for _, u in out[c.id] if u)}
        for c in world.components
    ]  # fmt: skip
    return from_rows(rows)
