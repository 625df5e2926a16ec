"""What an engineer's answer to a page means, without a model, and its record: a Verdict.

A button says it outright (Confirm cause / Wrong cause / Resolved). A thread reply is read by
these rules, on its plain text (Slack markup removed), lower-cased:

- rejected: `wrong`, `incorrect`, `not it`, `not right`, `not correct`, `not the (root) cause`,
  `isn't it / right / correct / the cause`, or a reply that starts with `no` / `nope`;
- confirmed (only when not rejected): `confirm(ed)`, `correct`, `that's / it's / is / you're
  right`, `that's it`, `good call`, `spot on`, or a reply that starts with `yes` / `yep` / `yup`
  / `right` / `+1`; but not `not / can't / cannot / don't confirm(ed)`;
- anything else is conversation, not a verdict.

A rejection that names a component the graph knows (by name or alias; two words also match a
hyphenated name: "product catalog" -> `product-catalog`) records the first one named that is
not the rejected root cause as the actual cause. A confirmation records the confirmed root
cause as the actual cause (of an inconclusive finding: the component it names). A reply that
only names a component, after a "Wrong cause" click that named none, completes that rejection
(`awaits_cause`).

The record (the learner reads exactly this): `(:Incident)-[:HAS_VERDICT]->(:Verdict {id,
incident_id, verdict, actual_cause, by, by_name, at, text, source, event_id})` plus a `learn`
task and a `notify_verdict` task, in one query (`cypher/record_verdict.cypher`); a `resolved`
verdict has no `notify_verdict` task: the resolve it comes with edits the page (once).
"""

from __future__ import annotations

import difflib
import re
from typing import Any, Literal

from pydantic import BaseModel

from adapters.falkordb import TenantGraph

REJECT = re.compile(
    r"\b(?:wrong|incorrect|not\s+(?:it|right|correct|the\s+(?:root\s+)?cause)"
    r"|isn'?t\s+(?:it|right|correct|the\s+(?:root\s+)?cause))\b|^\s*(?:no|nope)\b"
)
CONFIRM = re.compile(
    r"\b(?:confirm(?:ed|s)?|correct|(?:that'?s|it'?s|is|you'?re)\s+right|that'?s\s+it"
    r"|good\s+call|spot\s+on)\b|^\s*(?:yes|yep|yup|right)\b|^\s*\+1"
)
NOT_CONFIRMED = re.compile(r"\b(?:not|can'?t|cannot|don'?t|didn'?t)\s+(?:yet\s+)?confirm")
#: Slack markup: `<@U123>`, `<#C123|name>`, `<!here>`, `<https://x|label>`, `<https://x>`.
MARKUP = re.compile(r"<([^<>|]*)(?:\|([^<>]*))?>")
WORD = re.compile(r"[a-z0-9][a-z0-9_.-]*[a-z0-9]|[a-z0-9]")


#: What a verdict's words and names may not carry: C0 and C1 control characters but newline
#: and tab (a terminal runs ESC sequences: `blast-radius incident` prints the words, and one
#: could retitle or clear an operator's terminal), and Unicode's bidirectional overrides and
#: isolates (which reorder what the pages show). A new user's trial wrote both through the API.
UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def unprintable(value: str | None, what: str) -> str | None:
    """Why `value` (a verdict's `what`: "by", "text", …) is refused, or None: it carries a
    control or bidirectional-override character (`UNPRINTABLE`), named by its code point."""
    found = UNPRINTABLE.search(value or "")
    if found is None:
        return None
    return (
        f"{what} carries U+{ord(found.group()):04X}, a control or bidirectional character: "
        "it would reach an operator's terminal and the pages as it is"
    )


class Verdict(BaseModel):
    """One verdict as stored: `at` ms UTC; `by` a Slack user id; `source` button | reply | api |
    web (the web page's buttons); `event_id` Slack's event id (reply) or
    `<user>:<action_id>:<action_ts>` (button), the idempotency key otherwise."""

    id: str
    incident_id: str
    verdict: Literal["confirmed", "rejected", "resolved"]
    actual_cause: str | None
    by: str
    by_name: str | None
    at: int
    text: str
    source: Literal["button", "reply", "api", "web"]
    event_id: str


def plain_text(text: str) -> str:
    """A Slack message's text without markup (mentions dropped, links and channels as their
    label), `&amp; &lt; &gt;` unescaped, curly apostrophes straightened, lower-cased."""

    def label(match: re.Match[str]) -> str:
        target, shown = match.group(1), match.group(2)
        if target.startswith(("@", "!")):
            return " "
        return shown if shown is not None else target.lstrip("#")

    text = MARKUP.sub(label, text)
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return text.replace("\u2019", "'").lower()


def reply_verdict(plain: str) -> Literal["confirmed", "rejected"] | None:
    """The verdict a reply's plain text (`plain_text`) states, or None (see module docstring)."""
    if REJECT.search(plain):
        return "rejected"
    if CONFIRM.search(plain) and not NOT_CONFIRMED.search(plain):
        return "confirmed"
    return None


def named_words(plain: str) -> list[str]:
    """Words of the text in order, each pair of neighbours joined by `-` listed first
    ("product catalog" -> `product-catalog`, `product`, `catalog`)."""
    words = WORD.findall(plain)
    out: list[str] = []
    for index, word in enumerate(words):
        if index + 1 < len(words):
            out.append(f"{word}-{words[index + 1]}")
        out.append(word)
    return out


def actual_cause(graph: TenantGraph, plain: str, rejected: str | None) -> str | None:
    """The first component the text names (by name or alias) other than `rejected`, or None."""
    words = named_words(plain)
    if not words:
        return None
    known: dict[str, str] = {}
    for row in graph.rows("match_components", {"candidates": words}):
        for name in [row["name"], *(row["aliases"] or [])]:
            known[str(name).lower()] = row["name"]
    for word in words:
        name = known.get(word)
        if name and name != rejected:
            return name
    return None


#: How alike a misspelt name must be to a component's to be offered (difflib's ratio, 0-1):
#: "orders-dbb" -> `orders-db` (0.95), "payment-db" -> `payments-db` (0.95); "it" or "db"
#: alone suggest nothing.
CLOSE_CUTOFF = 0.8


def spellings(graph: TenantGraph) -> dict[str, str]:
    """Every component's name and alias, lower-cased -> the component's name
    (`cypher/component_names.cypher`): one read, only when a verdict names an unknown cause."""
    spelt: dict[str, str] = {}
    for row in graph.rows("component_names", {}):
        for name in [row["name"], *row["aliases"]]:
            spelt.setdefault(str(name).lower(), row["name"])
    return spelt


#: What separates the parts of a name as "did you mean" compares them: "valkey_cart",
#: "Valkey Cart" and "valkey.cart" are all spelt as `valkey-cart`.
SEPARATORS = re.compile(r"[\s_.-]+")
#: The shortest part of a name compared on its own: "db" or "api" alone suggest nothing.
MIN_PART = 4


def plain_name(name: str) -> str:
    """`name` as "did you mean" compares it: case-folded, each run of spaces, `_`, `.` or `-`
    one `-`."""
    return SEPARATORS.sub("-", name.casefold()).strip("-")


def close_names(spelt: dict[str, str], given: str, n: int = 3, parts: bool = True) -> list[str]:
    """Up to `n` components whose name or alias (`spellings`) is spelt like `given`, closest
    first: what "did you mean" offers for a cause that names no component. Compared as
    `plain_name` spells both (case, `_` for `-` and spaces do not count): the same name; else
    the whole names (difflib's `get_close_matches`, `CLOSE_CUTOFF`: "orders-dbb" ->
    `orders-db`); else, with `parts`, a part of 4 characters or more of `given` spelt like a
    part of a name ("valkey" -> `valkey-cart`, "catalog" -> `product-catalog`, "payments-db"
    -> `payment`), for a name typed in a field; a word picked out of a sentence
    (`misspelt_cause`) is compared whole only, as the common words of a reply would otherwise
    match parts of names ("load" -> `load-generator`)."""
    plain: dict[str, str] = {}
    for spelling, name in spelt.items():
        plain.setdefault(plain_name(spelling), name)
    want = plain_name(given)
    if want in plain:
        return [plain[want]]
    hits = difflib.get_close_matches(want, list(plain), n=n, cutoff=CLOSE_CUTOFF)
    if not hits and parts:
        mine = [p for p in want.split("-") if len(p) >= MIN_PART]

        def likeness(spelling: str) -> tuple[int, float]:
            """How many parts of `given` are spelt like one of `spelling`'s, and how alike the
            best one is: "cart-valkey" is more like `valkey-cart` (2) than `cart` (1)."""
            theirs = [b for b in spelling.split("-") if len(b) >= MIN_PART]
            ratios = [max((difflib.SequenceMatcher(None, a, b).ratio() for b in theirs),
                          default=0.0) for a in mine]  # fmt: skip
            return sum(r >= CLOSE_CUTOFF for r in ratios), max(ratios, default=0.0)

        # most parts alike first, then the most alike, then by name
        ranked = sorted(((likeness(s), s) for s in plain), key=lambda x: (-x[0][0], -x[0][1], x[1]))
        hits = [s for (count, _), s in ranked if count][:n]
    return list(dict.fromkeys(plain[hit] for hit in hits))


def unknown_cause(
    graph: TenantGraph, given: str, field: str = "actual_cause", words: str | None = "text"
) -> str:
    """Why a verdict naming `given`, which is no known component, is refused: a typo, another
    case, `_` for `-` or a part of a name gets "did you mean 'orders-db'?" (`close_names`);
    otherwise how to record a cause outside the world (a rejection without a cause, said in
    the verdict's `words` field when it has one: no playbook can be pinned to it)."""
    near = close_names(spellings(graph), given)
    if near:
        return (f"{field} {given!r} is not a known component; did you mean "
                f"{' or '.join(map(repr, near))}?")  # fmt: skip
    said = f" and say what it was in {words}" if words else ""
    return (f"{field} {given!r} is not a known component (a cause outside the world: reject "
            f"without naming it{said})")  # fmt: skip


def misspelt_cause(
    graph: TenantGraph, plain: str, rejected: str | None
) -> tuple[str, list[str]] | None:
    """For a reply that rejects a finding but names no known component (`actual_cause`): the
    first word of four characters or more spelt like a component's name but not one
    (`close_names`), with those components other than the `rejected` cause; None when none
    is. `plain`: as `plain_text` gives it."""
    words = [w for w in dict.fromkeys(WORD.findall(plain)) if len(w) >= 4]
    spelt = spellings(graph) if words else {}
    for word in words:
        if word in spelt:  # a name it knows: the rejected cause, said again
            continue
        near = [name for name in close_names(spelt, word, parts=False) if name != rejected]
        if near:
            return word, near
    return None


def awaits_cause(graph: TenantGraph, incident_id: str) -> bool:
    """True when the incident's latest verdict is a rejection that named no actual cause (a
    "Wrong cause" click): a reply naming a component then completes it."""
    rows = graph.rows("incident_verdicts", {"incident_id": incident_id})
    return bool(rows) and rows[-1]["verdict"] == "rejected" and not rows[-1]["actual_cause"]


def contradiction(
    verdict: str, root_cause: str | None, actual: str | None, text: str = "", words: str = "text"
) -> str | None:
    """Why a verdict given outside Slack contradicts itself, or None: a confirmation naming
    another cause than the finding's, or a rejection naming the finding's own cause. Each
    would move the playbooks' trust the wrong way (a confirmation counts as helped, a
    rejection as misled), so the API and the web page refuse it (422) with this reason. A
    `resolved` naming another cause than the finding's is refused too: a resolve teaches
    nothing, so the cause would be recorded and never learned.

    An inconclusive finding (`root_cause` None) named no cause to agree with, nor any to mark
    wrong: it is confirmed naming the cause (`actual`), or rejected naming it, or, when the
    cause is outside the graph (no component to name), rejected with the person's `text`
    saying what it was. That rejection is recorded and teaches no playbook (the learn task
    says why). `text` is the person's own words (not a button's label); `words` names the
    field they go in, for the advice (`text` in the API, a box on the web form)."""
    outside = f"for a cause outside the graph, reject it saying what it was in {words}"
    if verdict == "resolved" and actual is not None and actual != root_cause:
        # a resolve teaches nothing: the cause would be recorded on the incident and never
        # reach trust or a playbook (a new user's trial, M10)
        teach = "reject it" if root_cause is not None else "confirm it"
        named = f"the finding names {root_cause}" if root_cause else "the finding is inconclusive"
        return (f"{named}: resolving records no other cause and teaches nothing; to name "
                f"{actual}, {teach} naming {actual}, then resolve")  # fmt: skip
    if root_cause is None and verdict == "confirmed" and actual is None:
        return ("the finding is inconclusive: a confirmation names the cause it confirms "
                f"(actual_cause); {outside}")  # fmt: skip
    if root_cause is None and verdict == "rejected" and actual is None and not text.strip():
        return ("the finding is inconclusive: it named no cause to mark wrong; a rejection "
                "names the actual cause (actual_cause) or, when the cause is outside the "
                f"graph, says what it was in {words}")  # fmt: skip
    if root_cause is None or actual is None:
        return None
    if verdict == "confirmed" and actual != root_cause:
        return (f"the finding names {root_cause}: a confirmation agrees with it; to name "
                f"{actual}, reject it naming {actual}")  # fmt: skip
    if verdict == "rejected" and actual == root_cause:
        return (f"the finding names {root_cause}: a rejection names another cause, or none "
                "(leave the actual cause out)")  # fmt: skip
    return None


class IdTaken(LookupError):
    """The verdict's id already names another verdict (on another incident, or another verdict,
    cause, text or person; the message names the stored one): nothing was written. A
    `LookupError`, so a caller that only expects "no such incident" still stops; the API
    answers 422, as a reused idempotency key with another request gets in the IETF draft "The
    Idempotency-Key HTTP Header Field"."""


def record(graph: TenantGraph, verdict: Verdict) -> dict[str, Any]:
    """Store the verdict with its `learn` and `notify_verdict` tasks (once per id; no
    `notify_verdict` for a `resolved` one, whose resolve edits the page).

    Returns `{id, verdict, actual_cause, fresh}`; `fresh` is false for a repeated delivery
    (the same id with the same verdict, cause, text and person). A verdict saying what the
    incident's latest one said (posted again without an id) is recorded with no page update.
    Raises `IdTaken` when the id names a different verdict (saying which: "id 'my-1' already
    names another verdict: api:my-1 on inc-…, rejected by Sam SRE, actual cause valkey-cart"),
    `LookupError` when the incident does not exist, `GraphUnavailable` when the graph cannot
    answer.
    """
    row = graph.one("record_verdict", verdict.model_dump())
    if row is None:
        if graph.one("incident_get", {"incident_id": verdict.incident_id}) is not None:
            stored = graph.one("verdict_get", {"verdict_id": verdict.id})
            said = ""
            if stored is not None:
                cause = stored["actual_cause"] or "none named"
                said = (f": {stored['id']} on {stored['incident_id']}, {stored['verdict']} by "
                        f"{stored['by']}, actual cause {cause}")  # fmt: skip
            raise IdTaken(f"id {verdict.event_id!r} already names another verdict{said}")
        raise LookupError(f"no incident {verdict.incident_id!r}")
    return row
