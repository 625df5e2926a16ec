"""Dependency graphs as server-rendered SVG (the incident's, and the world's topology): no
script, and the same facts are listed as text on each page.

Layout: layered (Sugiyama), by grandalf. Callers sit above their callees, each layer a row; an
edge that skips layers is routed through placeholder points of its own in the rows between, so
every segment runs from one row to the next and never through a component's box (a
checkout→payment edge cannot read as frontend→payment). The finding's path is drawn thick and
dark orange with its nodes outlined; everything else is thin grey. Colour is never the only
signal: each box says in words what it is (alerting, root cause, candidate, set aside: the
finding's `ruled_out`, worded as the web table and the ticket word it, `notices.SET_ASIDE`).

Input: `incident_views.incident_graph`'s `{nodes, edges, paths, root_cause}`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from grandalf.graphs import Edge, Graph, Vertex
from grandalf.layouts import SugiyamaLayout
from grandalf.routing import route_with_lines
from markupsafe import Markup, escape

from adapters.notices import SET_ASIDE

#: Box size of one component (px) and the gaps between boxes and rows.
BOX_W, BOX_H = 180, 46
GAP_X, GAP_Y = 28, 46
MARGIN = 16
#: A wide picture shrinks to fit the page down to this scale, then scrolls sideways (its text
#: stays readable).
SMALLEST_SCALE = 0.8
#: Widest row of separate parts before the next part starts a new row (px).
ROW_W = 1300
#: How many ordering passes grandalf makes to reduce crossings (its default is 8).
ORDER_PASSES = 8


class _Box:
    """grandalf's view of a vertex: its size, and where the layout put its centre."""

    def __init__(self) -> None:
        self.w, self.h = BOX_W, BOX_H
        self.xy: tuple[float, float] = (0.0, 0.0)


class _Line:
    """grandalf's view of an edge: the points it is routed through."""

    def __init__(self) -> None:
        self.points: list[tuple[float, float]] = []

    def setpath(self, points: list[tuple[float, float]]) -> None:
        self.points = [(float(x), float(y)) for x, y in points]


@dataclass
class Layout:
    """Where things go: box centres by component, each edge's points, and the picture's size
    (px). Coordinates are already shifted into the picture."""

    boxes: dict[str, tuple[float, float]]
    lines: list[tuple[dict[str, Any], list[tuple[float, float]]]]
    width: float
    height: float


def layout(nodes: list[dict[str, Any]], edges: list[dict[str, Any]]) -> Layout:
    """Lay out components (`id`) and dependency edges (`source` caller -> `target` callee).

    Each connected part is laid out on its own, callers nothing calls on top, and the parts
    fill rows of at most `ROW_W` px, biggest first. Cycles are fine: grandalf reverses an edge
    of each for layering and still routes it between its real ends.
    """
    vertices = {n["id"]: Vertex(n["id"]) for n in nodes}
    for vertex in vertices.values():
        vertex.view = _Box()
    kept: list[tuple[dict[str, Any], Edge]] = []
    for edge in edges:
        if edge["source"] in vertices and edge["target"] in vertices:
            if edge["source"] == edge["target"]:
                continue  # a self-call says nothing about the path
            link = Edge(vertices[edge["source"]], vertices[edge["target"]])
            link.view = _Line()
            kept.append((edge, link))
    graph = Graph(list(vertices.values()), [link for _, link in kept])
    boxes: dict[str, tuple[float, float]] = {}
    shift: dict[str, tuple[float, float]] = {}
    placed_parts = []
    for part in graph.C:
        sugiyama = SugiyamaLayout(part)
        sugiyama.xspace, sugiyama.yspace = GAP_X, GAP_Y
        sugiyama.route_edge = route_with_lines
        sugiyama.init_all()  # roots: the callers nothing calls (the top row)
        sugiyama.draw(ORDER_PASSES)
        xs = [v.view.xy[0] for v in part.sV]
        ys = [v.view.xy[1] for v in part.sV]
        size = (max(xs) - min(xs) + BOX_W, max(ys) - min(ys) + BOX_H)
        placed_parts.append((part, min(xs) - BOX_W / 2, min(ys) - BOX_H / 2, size))
    # biggest part first; parts fill rows of at most ROW_W px, then wrap (a few lone
    # components share one row instead of stretching the picture sideways)
    placed_parts.sort(key=lambda p: -len(p[0].sV))
    x, y, row_h, width = float(MARGIN), float(MARGIN), 0.0, 0.0
    for part, left, top, (w, h) in placed_parts:
        if x > MARGIN and x + w > ROW_W:
            x, y, row_h = float(MARGIN), y + row_h + GAP_Y, 0.0
        dx, dy = x - left, y - top
        for v in part.sV:
            boxes[v.data] = (v.view.xy[0] + dx, v.view.xy[1] + dy)
            shift[v.data] = (dx, dy)
        x += w + GAP_X * 2
        row_h = max(row_h, h)
        width = max(width, x - GAP_X * 2)
    height = y + row_h
    routes = []
    for edge, link in kept:
        dx, dy = shift[edge["source"]]
        # grandalf's route: [a border point, the placeholder centres…, a border point]
        middle = [(x + dx, y + dy) for x, y in link.view.points[1:-1]]
        routes.append((edge, middle))
    lines = _ports(boxes, routes)
    if not boxes:
        return Layout(boxes, lines, 0.0, 0.0)
    return Layout(boxes, lines, width + MARGIN, height + MARGIN)


def _ports(
    boxes: dict[str, tuple[float, float]],
    routes: list[tuple[dict[str, Any], list[tuple[float, float]]]],
) -> list[tuple[dict[str, Any], list[tuple[float, float]]]]:
    """Each edge's points: out of the bottom (or top) of its source box, through its
    placeholders, into the top (or bottom) of its target box. A placeholder becomes a vertical
    run across its row, inside its own slot, and every other segment crosses only the empty gap
    between two rows, so no line passes through a box. Edges leaving or entering one box are
    spread along its side in the order of where they go, so they do not all meet at one point.
    """
    plans = []
    for edge, middle in routes:
        (sx, sy), (tx, ty) = boxes[edge["source"]], boxes[edge["target"]]
        down = ty >= sy
        middle = sorted(middle, key=lambda p: p[1], reverse=not down)
        plans.append((edge, (sx, sy), (tx, ty), down, middle))
    leaving: dict[str, list[tuple[float, int]]] = {}
    entering: dict[str, list[tuple[float, int]]] = {}
    for i, (edge, _, (tx, _ty), _, middle) in enumerate(plans):
        first = middle[0][0] if middle else tx
        last = middle[-1][0] if middle else boxes[edge["source"]][0]
        leaving.setdefault(edge["source"], []).append((first, i))
        entering.setdefault(edge["target"], []).append((last, i))
    offset: dict[tuple[str, int], float] = {}
    for side, ends in (("out", leaving), ("in", entering)):
        for ports in ends.values():
            ports.sort()
            for rank, (_, i) in enumerate(ports):
                share = (rank + 1) / (len(ports) + 1) - 0.5  # -0.5 … 0.5 of the side
                offset[(side, i)] = share * BOX_W * 0.7
    lines = []
    half = BOX_H / 2
    for i, (edge, (sx, sy), (tx, ty), down, middle) in enumerate(plans):
        sign = 1 if down else -1
        points = [(sx + offset[("out", i)], sy + sign * half)]
        for x, y in middle:
            points += [(x, y - sign * half), (x, y + sign * half)]
        points.append((tx + offset[("in", i)], ty - sign * half))
        lines.append((edge, points))
    return lines


def _tags(node: dict[str, Any]) -> str:
    tags = []
    if node.get("root_cause"):
        tags.append("◆ root cause")
    elif node.get("candidate"):
        tags.append("● candidate")
    if node.get("alerts"):
        tags.append(f"▲ {node['firing']}/{node['alerts']} firing")
    if node.get("ruled_out"):
        tags.append(f"✕ {SET_ASIDE}")
    if node.get("note"):
        tags.append(str(node["note"]))
    return " · ".join(tags)


def svg(data: dict[str, Any], title: str | None = None) -> Markup:
    """A graph as an inline `<svg>` (escaped text; `role="img"` with `title`, by default one
    that says what the path is). Nodes may carry `note` (a few words shown in the box). Empty
    markup when there is nothing to draw."""
    nodes: list[dict[str, Any]] = data["nodes"]
    if not nodes:
        return Markup("")
    placed = layout(nodes, data["edges"])
    paths = data.get("paths") or []
    said = "Dependency graph. Path: " + ("; ".join(" → ".join(p) for p in paths) or "none")
    out = [
        Markup(
            '<svg class="depgraph" xmlns="http://www.w3.org/2000/svg" role="img" '
            'viewBox="0 0 {w:.0f} {h:.0f}" width="{w:.0f}" height="{h:.0f}" '
            'style="min-width: {least:.0f}px" '
            'aria-labelledby="depgraph-title">'
            '<title id="depgraph-title">{said}</title>'
            "<defs>"
            '<marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
            'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
            'class="arrow"/></marker>'
            '<marker id="arrow-path" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="5" '
            'markerHeight="5" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
            'class="arrow-path"/></marker>'
            "</defs>"
        ).format(
            w=placed.width,
            h=placed.height,
            said=title or said,
            least=placed.width * SMALLEST_SCALE,
        )
    ]
    # path edges last, so they are drawn over the others
    for edge, points in sorted(placed.lines, key=lambda line: bool(line[0].get("on_path"))):
        if len(points) < 2:
            continue
        on_path = bool(edge.get("on_path"))
        coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        out.append(
            Markup(
                '<polyline class="{cls}" points="{coords}" marker-end="url(#{marker})" '
                'data-source="{s}" data-target="{t}"><title>{s} → {t} ({kind})</title>'
                "</polyline>"
            ).format(
                cls="edge path" if on_path else "edge",
                coords=coords,
                marker="arrow-path" if on_path else "arrow",
                s=edge["source"],
                t=edge["target"],
                kind=edge.get("type", "").lower(),
            )
        )
    for node in nodes:
        x, y = placed.boxes[node["id"]]
        classes = ["node"]
        for flag, name in (("alerts", "alerting"), ("root_cause", "root"),
                           ("candidate", "candidate"), ("on_path", "on-path"),
                           ("ruled_out", "ruled-out")):  # fmt: skip
            if node.get(flag):
                classes.append(name)
        label = node["id"] if len(node["id"]) <= 22 else node["id"][:21] + "…"
        out.append(
            Markup(
                '<g class="{cls}" data-id="{id}"><title>{id}{tags_title}</title>'
                '<rect x="{x:.1f}" y="{y:.1f}" width="{w}" height="{h}" rx="5"/>'
                '<text x="{cx:.1f}" y="{ty:.1f}" class="name">{label}</text>'
                '<text x="{cx:.1f}" y="{sy:.1f}" class="tags">{tags}</text></g>'
            ).format(
                cls=" ".join(classes),
                id=node["id"],
                x=x - BOX_W / 2,
                y=y - BOX_H / 2,
                w=BOX_W,
                h=BOX_H,
                cx=x,
                ty=y - 4,
                sy=y + 13,
                label=label,
                tags=_tags(node),
                tags_title=(": " + _tags(node)) if _tags(node) else "",
            )
        )
    out.append(Markup("</svg>"))
    return Markup("").join(escape(part) for part in out)
