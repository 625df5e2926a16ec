"""Playbooks as text for a terminal (`blast-radius playbook list`): the rows of
`GET /api/v1/playbooks` (`cypher/list_playbooks.cypher`), without curl or the web page."""

from __future__ import annotations

import re
from typing import Any

from agents.learn.verdicts import UNPRINTABLE
from gateway.logs import UNSAFE_IN_LINE, escape_line

#: A playbook's statuses in the order the list shows them: recalled ones first, then those a
#: newer version replaced, then those retired (misled twice, by a person, or dropped by their
#: world file). `--status all` shows the three.
STATUSES = ("active", "superseded", "retired")

#: The columns up to the title fit this many characters: the title is cut (`…`) to fit, never
#: to under `TITLE_MIN`; the notes after it (who taught it, why it retired) are kept whole.
WIDTH = 120
TITLE_MIN = 20

#: What a cell may not print as it is: what would break the line (`UNSAFE_IN_LINE`: newlines,
#: C0/C1 controls, so no ESC sequence reaches the terminal), what the verdict endpoints refuse
#: (`UNPRINTABLE`: bidirectional overrides and isolates, which reorder what is shown), and tab,
#: which would shift the columns. A title, author or retire reason sent through the API may
#: carry any of them; each is shown as a `\\xNN` / `\\uNNNN` escape.
UNSAFE_ON_TERMINAL = re.compile(f"{UNSAFE_IN_LINE.pattern}|{UNPRINTABLE.pattern}|\t")


def shown(value: object) -> str:
    """`value` as text safe to print in one cell (`UNSAFE_ON_TERMINAL` escaped)."""
    return escape_line(str(value), UNSAFE_ON_TERMINAL)


def notes(row: dict[str, Any], superseded_by: str | None = None) -> str:
    """Who made a playbook (a `list_playbooks` row) and why it is not recalled, as the web
    memory page says them: `written by Dee Example`, or `learned from inc-…, corrected by Sam
    SRE (the finding had named payment)` / `…, confirmed by Sam SRE`; then `superseded by ID`
    (`superseded_by`: the newer version's id) or `retired: REASON`; "" when nothing is known."""
    said = []
    if row.get("author"):
        said.append(f"written by {row['author']}")
    elif row.get("learned_from"):
        learned = f"learned from {row['learned_from']}"
        if row.get("confirmed_by"):
            verb = "corrected" if row.get("lesson") == "corrected" else "confirmed"
            learned += f", {verb} by {row['confirmed_by']}"
        if row.get("corrected_from"):
            learned += f" (the finding had named {row['corrected_from']})"
        said.append(learned)
    if row["status"] == "superseded" and superseded_by:
        said.append(f"superseded by {superseded_by}")
    if row["status"] == "retired" and row.get("retired_reason"):
        said.append(f"retired: {row['retired_reason']}")
    return "; ".join(said)


def playbook_table(
    rows: list[dict[str, Any]], status: str = "active", component: str | None = None
) -> str:
    """The playbooks of `rows` (`list_playbooks`, newest first) with `status` (one of
    `STATUSES`, or `all`) pinned to `component` (any when None), a header then one line each:
    id (whole: `playbook restore` takes it), status, component, trust (2 decimals), helped,
    misled, title (cut to fit `WIDTH`), notes (`notes`); active first, then superseded, then
    retired, newest first within each. Every text is escaped (`shown`). A last line counts
    the playbooks another status hides (`not shown: 1 retired (--status all lists them)`);
    `No playbooks.` when none matches."""
    pinned = [r for r in rows if component is None or r["component"] == component]
    kept = sorted(
        (r for r in pinned if status in ("all", r["status"])),
        key=lambda r: STATUSES.index(r["status"]) if r["status"] in STATUSES else len(STATUSES),
    )
    hidden = [r for r in pinned if status not in ("all", r["status"])]
    counts = [(s, sum(r["status"] == s for r in hidden)) for s in STATUSES]
    footer = ", ".join(f"{n} {s}" for s, n in counts if n)
    footer = f"not shown: {footer} (--status all lists them)" if footer else ""
    if not kept:
        where = f" on {component}" if component else ""
        none = f"No {status} playbooks{where}." if footer else f"No playbooks{where}."
        return "\n".join(filter(None, [none, footer]))
    newer = {str(r["supersedes"]): str(r["id"]) for r in rows if r.get("supersedes")}
    head = ("ID", "STATUS", "COMPONENT", "TRUST", "HELPED", "MISLED", "TITLE", "NOTES")
    lines = [head] + [
        (
            shown(r["id"]), shown(r["status"]), shown(r["component"]),
            f"{r['trust']:.2f}" if r["trust"] is not None else "-",
            str(int(r["helped"] or 0)), str(int(r["misled"] or 0)),
            shown(r["title"] or "-"), shown(notes(r, newer.get(str(r["id"])))),
        )
        for r in kept
    ]  # fmt: skip
    widths = [max(len(line[i]) for line in lines) for i in range(len(head) - 2)]
    room = max(TITLE_MIN, WIDTH - sum(width + 2 for width in widths))
    titles = [t if len(t) <= room else t[: room - 1] + "…" for t in (line[-2] for line in lines)]
    title_width = max(map(len, titles))
    return "\n".join(
        (
            "  ".join(cell.ljust(width) for cell, width in zip(line[:-2], widths, strict=True))
            + "  " + f"{title.ljust(title_width)}  {line[-1]}"
        ).rstrip()
        for line, title in zip(lines, titles, strict=True)
    ) + (f"\n{footer}" if footer else "")  # fmt: skip
