"""The cost bound of a PromQL expression, read from its text before it reaches Prometheus, and
Prometheus-style durations (`duration_ms`: `5m`, `1h30m`) as escalation policies and settings
give them.

Prometheus evaluates a subquery (`expr[3h:1ms]`) at every step of its range: one
`count_over_time(vector(1)[3h:1ms])` is 10.8 million evaluations, and ten of them grew a
Prometheus to 23.6 GB until the kernel killed it, for every tenant that shares it. So an
expression a tenant or a model writes is refused when it holds a subquery, or a range
selector longer than `MAX_RANGE_S`. Sources: Prometheus querying basics (range vector
selectors, subqueries `<instant_query>[<range>:<resolution>]`, time durations `ms s m h d w y`).
Strings (label values, which may hold brackets) are cut out before the brackets are read.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

#: The longest range a range selector may cover (s): a day. The investigation's own queries
#: read an hour of baseline.
MAX_RANGE_S = 24 * 3600
#: Most range selectors in one expression: each one reads every sample of its range.
MAX_RANGES = 20

#: A PromQL string literal: "…" or '…' with escapes, or `…` (raw, no escapes).
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
#: Brackets and what is between them (no nesting: PromQL brackets hold durations only).
_BRACKETS = re.compile(r"\[([^\[\]]*)\]")
_UNIT_S = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
_DURATION = re.compile(r"(\d+)(ms|s|m|h|d|w|y)")


def duration_s(text: str) -> float | None:
    """A PromQL duration (`1h30m`, `90s`, `500ms`) in seconds, or None when it is none."""
    text = text.strip()
    parts = _DURATION.findall(text)
    if not text or "".join(n + u for n, u in parts) != text:
        return None
    return sum(int(n) * _UNIT_S[u] for n, u in parts)


#: A Prometheus duration (`model.ParseDuration` in prometheus/common: units y w d h m s ms, each
#: at most once, largest first, e.g. `90s`, `1h30m`), as escalation policies give `after`
#: and settings give durations (`BLAST_REOPEN_WINDOW`).
PROM_DURATION = re.compile(
    r"^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$"
)
#: ms per unit of `PROM_DURATION`'s groups, in order (a year is 365 days, as in Prometheus).
PROM_UNITS_MS = (365 * 86_400_000, 7 * 86_400_000, 86_400_000, 3_600_000, 60_000, 1_000, 1)


def duration_ms(text: str) -> int:
    """Milliseconds of a Prometheus-style duration (`30s`, `5m`, `1h30m`, `1d`). Raises
    `ValueError` for anything else, and for zero (Prometheus' own syntax, prometheus/common
    `model.ParseDuration`)."""
    found = PROM_DURATION.match(text.strip()) if text else None
    if found is None or not text.strip():
        raise ValueError(f"{text!r} is not a duration like 30s, 5m, 1h or 1h30m")
    total = sum(int(n) * unit for n, unit in zip(found.groups(), PROM_UNITS_MS, strict=True) if n)
    if total <= 0:
        raise ValueError(f"{text!r} is zero: give a positive duration")
    return total


def cost_problem(query: str) -> str | None:
    """Why `query` may cost Prometheus too much, or None: a subquery (`[range:resolution]`),
    a range selector over `MAX_RANGE_S`, or more than `MAX_RANGES` range selectors."""
    bare = _STRING.sub('""', query)
    ranges = _BRACKETS.findall(bare)
    if len(ranges) > MAX_RANGES:
        return f"{len(ranges)} range selectors, over the limit of {MAX_RANGES}"
    for inside in ranges:
        if ":" in inside:
            return (
                f"subquery [{inside.strip()}] refused: Prometheus evaluates it at every step "
                "of its range; write a range selector over a recorded series instead"
            )
        seconds = duration_s(inside)
        if seconds is not None and seconds > MAX_RANGE_S:
            return f"range [{inside.strip()}] is over the limit of {MAX_RANGE_S // 3600} h"
    return None


def bounded_promql(query: str) -> str:
    """`query` when its cost is bounded (`cost_problem`), for a pydantic `AfterValidator`.
    Raises ValueError with the reason."""
    problem = cost_problem(query)
    if problem is not None:
        raise ValueError(problem)
    return query


#: A PromQL expression field whose cost is bounded (422 with the reason when it is not).
BoundedPromQL = Annotated[str, AfterValidator(bounded_promql)]
