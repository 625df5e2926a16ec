"""Compare an imported world with a reference one (by default the bundled, hand-made demo
world): which components and edges each has that the other lacks.

Names are compared through the reference's aliases (`hostnames`), so a compose service named
`postgresql` or `astronomy-db` is the reference's `postgres`. Edges are compared by
(caller, callee); a type that differs is listed on its own.
"""

from __future__ import annotations

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
    found_edges = {(canon(e.source), canon(e.target)): e.type for e in found.edges}
    ref_edges = {(e.source, e.target): e.type for e in reference.edges}
    ref_edges |= {(c.id, c.hosted_on): "HOSTED_ON" for c in reference.components if c.hosted_on}
    for pair in sorted(found_edges.keys() | ref_edges.keys()):
        a, b = pair
        if pair not in ref_edges:
            result.only_found_edges.append(f"{a} -{found_edges[pair]}-> {b}")
        elif pair not in found_edges:
            result.only_reference_edges.append(f"{a} -{ref_edges[pair]}-> {b}")
        elif found_edges[pair] != ref_edges[pair]:
            result.retyped.append(f"{a} -{found_edges[pair]}-> {b} (world: {ref_edges[pair]})")
            result.same_edges += 1
        else:
            result.same_edges += 1
    return result
