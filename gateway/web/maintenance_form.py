"""The web page's maintenance form, read into the API's window (`gateway.http.maintenance.
WindowIn`), so a window opened in a browser is checked exactly as one opened with
`POST /api/v1/maintenance`.

Fields (urlencoded): `components` and `teams` (comma-separated names), then either `length`
(a number, decimals allowed) with `unit` (minutes | hours | days), or `until` (the browser's
`datetime-local` value, with or without seconds, read as UTC, or a full RFC 3339 time), and
`reason`. Who opens it is the signed-in person, never a form field.
"""

from __future__ import annotations

import math

from fastapi import HTTPException
from pydantic import ValidationError

from gateway.http.maintenance import MAX_MINUTES, WindowIn

#: The form's length units, in minutes.
UNITS = {"minutes": 1, "hours": 60, "days": 1440}


def names(text: str) -> list[str]:
    """`"a, b,,c "` -> `["a", "b", "c"]`: the names of a comma-separated field."""
    return [name.strip() for name in text.split(",") if name.strip()]


def window(form: dict[str, str], person: str) -> WindowIn:
    """The window the form asks for, opened by `person`. Raises HTTPException 422 with every
    reason in words (a length that is not a number, or under a minute or over a week, said in
    the unit chosen; both or neither of length and end time; whatever the API's model
    refuses)."""
    length, until = form.get("length", "").strip(), form.get("until", "").strip()
    if bool(length) == bool(until):
        raise HTTPException(422, "give either a length or an end time (UTC), not both")
    minutes = None
    if length:
        unit = UNITS.get(form.get("unit", "minutes"))
        try:
            amount = float(length)
        except ValueError:
            amount = math.nan
        if unit is None or not math.isfinite(amount):
            raise HTTPException(422, f"the length must be a number of minutes, hours or days, "
                                     f"not {length[:20]!r}")  # fmt: skip
        # 1e308 days is finite, its minutes are not: say it is too long, as the API does
        minutes = round(amount * unit) if math.isfinite(amount * unit) else 10**9
        unit_name = form.get("unit", "minutes")
        # the API model's bounds are in minutes and in its words: say them in the unit chosen
        if minutes < 1:
            raise HTTPException(422, f"the length {length[:20]} {unit_name} is too short: a "
                                     "window lasts at least 1 minute")  # fmt: skip
        if minutes > MAX_MINUTES:
            raise HTTPException(422, f"the length {length[:20]} {unit_name} is too long: a "
                                     f"window lasts at most a week ({MAX_MINUTES // unit} "
                                     f"{unit_name})")  # fmt: skip
    elif len(until) == len("2026-12-04T18:00"):  # a datetime-local value: no seconds, no zone
        until += ":00Z"
    elif len(until) == len("2026-12-04T18:00:30") and until[10:11] == "T":  # with seconds
        until += "Z"
    try:
        return WindowIn(
            components=names(form.get("components", "")), teams=names(form.get("teams", "")),
            minutes=minutes, until=until or None, reason=form.get("reason", "").strip(),
            by=person,
        )  # fmt: skip
    except ValidationError as exc:
        said = [_field(error["loc"]) + str(error["msg"]).removeprefix("Value error, ")
                for error in exc.errors()]  # fmt: skip
        raise HTTPException(422, "; ".join(said)) from None


def _field(where: tuple[int | str, ...]) -> str:
    """The form field an error is about, as the form calls it (`minutes` is the length)."""
    if not where:
        return ""
    field = {"minutes": "length (minutes)"}.get(str(where[0]), str(where[0]))
    return f"{field}: "
