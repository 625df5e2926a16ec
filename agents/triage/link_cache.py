"""What triage remembers of a graph's topology between deliveries: which components each label
value names (`matched`) and the dependency paths from each component (`links`), the parts of
`triage_context.cypher` that depend on the topology alone.

Why: of a 5,000-alert storm's read on the demo world, matching its 37 names and walking their
paths (579 rows of paths, parsed here) took 11 of 19 ms, for an answer that only changes when
the world does (docs/hot-path.md). Every query that changes a component or a dependency edge
gives the graph's `(:Topology)` node a new random version (`cypher/_topology_changed.cypher`);
the read names the version it remembers (`$topology`), and the database matches and walks only
what it does not remember while that is still the graph's version, else everything, in the
same query: a remembered walk is never used against a topology it was not read from, whichever
process (an import, another gateway) changed it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

#: Label values one graph's memory holds before it starts again: they come from senders, and
#: a flood of new values (a label per pod) must not grow a process without bound.
MAX_NAMES = 4096


@dataclass
class Remembered:
    """One graph's topology at `version` for walks of `hops` edges: the `matched` rows
    `{candidate, name, aliases}` of each label value read (none: it names no component), and
    the `links` rows `{origin, name, path, hops, way}` of each component walked. Only added to,
    so a reference taken before a read is still the version it was taken at."""

    version: str
    hops: int
    matched: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    links: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


@dataclass(frozen=True)
class Asked:
    """What one read was sent with: the memory it counts on (None: nothing remembered) and
    the parameters it adds to `triage_context`'s (`topology`, `fresh`, `walked`)."""

    remembered: Remembered | None
    params: dict[str, Any]


class LinkCache:
    """Per process, per graph: the `Remembered` topology of the last version read. Thread-safe
    (the webhook triages deliveries on several threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._graphs: dict[str, Remembered] = {}

    def ask(self, graph: str, candidates: list[str], hops: int) -> Asked:
        """The parameters of a read of `graph` for the label values `candidates` and walks of
        `hops` edges: the remembered version, the values it has not matched (`fresh`), and the
        components of the values it has, whose walks it holds (`walked`). A value whose
        components' walks are not all held is fresh."""
        with self._lock:
            known = self._graphs.get(graph)
        if known is None or known.hops != hops:
            return Asked(None, {"topology": "", "fresh": candidates, "walked": []})
        fresh: list[str] = []
        walked: set[str] = set()
        for name in candidates:
            rows = known.matched.get(name)
            if rows is None or any(row["name"] not in known.links for row in rows):
                fresh.append(name)
            else:
                walked.update(row["name"] for row in rows)
        params = {"topology": known.version, "fresh": fresh, "walked": sorted(walked)}
        return Asked(known, params)

    def answer(
        self, graph: str, asked: Asked, read: dict[str, Any], candidates: list[str], hops: int
    ) -> dict[str, Any]:
        """`read` (a `triage_context` row read with `asked`'s parameters) with
        every one of `candidates`' `matched` rows and every walked component's `links` rows, the
        remembered ones added; what it read is remembered (a new version starts over).
        The row is returned as a new dict; `read` is not changed."""
        version = read.get("topology")
        known = asked.remembered
        if known is not None and version == known.version:
            asked_for = set(asked.params["fresh"])
            matched = [r for c in candidates if c not in asked_for
                       for r in known.matched.get(c, [])] + read["matched"]  # fmt: skip
            links = [r for o in asked.params["walked"] for r in known.links[o]] + read["links"]
            fresh = asked.params["fresh"]
        else:
            matched, links, fresh = read["matched"], read["links"], candidates
            known = Remembered(version, hops) if isinstance(version, str) else None
        if known is not None:
            self._remember(graph, known, fresh, read)
        return read | {"matched": matched, "links": links}

    def _remember(
        self, graph: str, known: Remembered, fresh: list[str], read: dict[str, Any]
    ) -> None:
        """Add what `read` matched for the values `fresh` and walked to `known`, and keep it
        as `graph`'s memory unless a memory of another version replaced it meanwhile."""
        matched: dict[str, list[dict[str, Any]]] = {name: [] for name in fresh}
        for row in read["matched"]:
            matched[row["candidate"]].append(row)
        links: dict[str, list[dict[str, Any]]] = {}
        for row in read["links"]:
            links.setdefault(row["origin"], []).append(row)
        with self._lock:
            current = self._graphs.get(graph)
            same = current is not None and current.version == known.version
            if same and current is not None and current.hops == known.hops:
                known = current  # this version is remembered (maybe by another thread): add
            elif known.matched:
                return  # the memory read against was replaced meanwhile: keep the newer one
            if len(known.matched) + len(matched) > MAX_NAMES:
                known = Remembered(known.version, known.hops)
            known.links.update(links)
            known.matched.update(matched)
            self._graphs[graph] = known


#: The process's memory, shared by every delivery of every graph.
LINKS = LinkCache()
