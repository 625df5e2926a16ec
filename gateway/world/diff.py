"""Compare an imported world with a reference one (by default the bundled, hand-made demo
world): which components and edges each has that the other lacks.

Names are compared through the reference's aliases (`hostnames`), so a compose service named
`postgresql` or `astronomy-db` is the reference's `postgres`. Edges are compared by
(caller, callee); a type that differs is listed on its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gateway.world.model import WorldSpec


@dataclass
class WorldDiff:
    """Components and edges (`a -TYPE-> b`) found only in the import, only in the reference,
    edges whose type differs, and how many of each both have."""

    only_found: list[str] = field(default_factory=list)
    only_reference: list[str] = field(default_factory=list)
    only_found_edges: list[str] = field(default_factory=list)
    only_reference_edges: list[str] = field(default_factory=list)
    retyped: list[str] = field(default_factory=list)
    same_components: int = 0
    same_edges: int = 0

    def lines(self, found: str = "import", reference: str = "world") -> list[str]:
        """The diff as text, one `+`/`-`/`~` line per difference after two summary lines."""
        out = [
            f"components: {self.same_components} in both, {len(self.only_found)} only in the "
            f"{found}, {len(self.only_reference)} only in the {reference}",
            f"edges: {self.same_edges} in both, {len(self.only_found_edges)} only in the "
            f"{found}, {len(self.only_reference_edges)} only in the {reference}, "
            f"{len(self.retyped)} of another type",
        ]
        out += [f"+ component {c}" for c in self.only_found]
        out += [f"- component {c}" for c in self.only_reference]
        out += [f"+ edge {e}" for e in self.only_found_edges]
        out += [f"- edge {e}" for e in self.only_reference_edges]
        out += [f"~ edge {e}" for e in self.retyped]
        return out


def diff_worlds(found: WorldSpec, reference: WorldSpec) -> WorldDiff:
    """What `found` has that `reference` lacks (+), and the other way round (-)."""
    names = {c.id: c.id for c in reference.components}
    for comp in reference.components:
        names.update({alias: comp.id for alias in comp.aliases()})

    def canon(name: str) -> str:
        return names.get(name, name)

    mine = {canon(c.id) for c in found.components}
    theirs = {c.id for c in reference.components}
    result = WorldDiff(
        only_found=sorted(mine - theirs), only_reference=sorted(theirs - mine),
        same_components=len(mine & theirs),
    )  # fmt: skip

    def typed(world: WorldSpec, name: Callable[[str], str]) -> dict[tuple[str, str], set[str]]:
        """(caller, callee) -> edge types, hosted_on included (import writes it as an edge)."""
        out: dict[tuple[str, str], set[str]] = {}
        for e in world.edges:
            out.setdefault((name(e.source), name(e.target)), set()).add(e.type)
        for c in world.components:
            if c.hosted_on:
                out.setdefault((name(c.id), name(c.hosted_on)), set()).add("HOSTED_ON")
        return out

    found_edges, ref_edges = typed(found, canon), typed(reference, str)
    for pair in sorted(found_edges.keys() | ref_edges.keys()):
        a, b = pair
        mine_t, theirs_t = found_edges.get(pair, set()), ref_edges.get(pair, set())
        if len(mine_t) == len(theirs_t) == 1 and mine_t != theirs_t:
            (one,), (other,) = mine_t, theirs_t
            result.retyped.append(f"{a} -{one}-> {b} (world: {other})")
            result.same_edges += 1
            continue
        result.same_edges += len(mine_t & theirs_t)
        result.only_found_edges += [f"{a} -{t}-> {b}" for t in sorted(mine_t - theirs_t)]
        result.only_reference_edges += [f"{a} -{t}-> {b}" for t in sorted(theirs_t - mine_t)]
    return result
