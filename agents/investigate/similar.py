"""Similar incidents: text similarity over what the alerts said, mixed with the graph.

The text of an incident is its alerts' names (CamelCase split: `PgConnectionPoolExhausted` ->
`pg connection pool exhausted`), label values (not the per-instance ones: pod, instance, …)
and summaries. It becomes a hashed bag of words (the "hashing trick" of Weinberger et al.,
"Feature Hashing for Large Scale Multitask Learning", 2009): each word and each pair of
neighbouring words is hashed (BLAKE2b, stable across processes) into one of `DIM` buckets
with a sign, counts are damped (1 + log tf) and the vector is L2-normalised. Nothing is
downloaded and no model runs. FalkorDB keeps the vector on a node of the incident's own
(`(:IncidentText {text_vec})-[:OF]->(:Incident)`, never written again: FalkorDB 4 counts a stale
index entry, left at every write to an indexed node, against the k asked) under a cosine vector
index; `db.idx.vector.queryNodes` answers a *distance* (0 identical, 1 orthogonal), so text
similarity = 1 - score.

The score mixes the text with the graph, as SREs read a past incident: text similarity
(weight `TEXT_WEIGHT`), the overlap (Jaccard) of impacted components (`IMPACT_WEIGHT`), and
whether an engineer confirmed or named a cause that this incident's alerting components can
reach (`CAUSE_WEIGHT`). Only earlier incidents count (opened before this one).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import re
from collections import Counter
from collections.abc import Collection, Sequence
from typing import Any

from adapters.falkordb import VECTOR_INDEXES, TenantGraph
from adapters.notices import in_words
from agents.failure_kinds import words

#: Buckets of the hashed bag of words: the dimension of the incident text vector index
#: (float32: 512 bytes per incident).
DIM = next(
    dim for label, prop, dim in VECTOR_INDEXES if (label, prop) == ("IncidentText", "text_vec")
)
#: Nearest incidents the vector index returns before the graph re-ranks them.
K_TEXT = 20
#: Similar incidents kept per incident.
TOP = 5
#: How much of a similar incident's verdict words its line quotes (`said_by`).
SAID_CHARS = 80
#: The least score (`rank`, 0-1) of the earlier incident a page names: an unrelated alert on
#: another component scores 0.1-0.2 on words alone, and a page at 3 a.m. must not point at it.
SIMILAR_SHOWN = 0.3
TEXT_WEIGHT = 0.6
IMPACT_WEIGHT = 0.25
CAUSE_WEIGHT = 0.15
#: The least score of an earlier incident that is similar at all (`rank` keeps no other, and
#: `alike` shows none stored before): under it (0.00 as shown) it shares nothing with the
#: incident, no word, no component, no cause its alerts reach; the vector index returns its
#: nearest whatever their distance.
ALIKE = 0.005
#: Labels whose values name one instance, not the failure: left out of the text.
NOISY_LABELS = frozenset(
    {"pod", "instance", "container_id", "uid", "pod_ip", "node", "job", "endpoint",
     "prometheus", "fingerprint", "severity", "alertname"}
)  # fmt: skip
TOKEN = re.compile(r"[a-z][a-z0-9]+")
#: Words that say nothing about which failure this is.
STOP = frozenset({"the", "and", "for", "on", "of", "in", "is", "above", "below", "over", "than",
                  "with", "to", "at", "minutes", "min", "last"})  # fmt: skip


def incident_text(alerts: list[dict[str, Any]]) -> str:
    """The text of an incident: per alert its name (words split), its label values but the
    per-instance ones (`NOISY_LABELS`) and its summary. `alerts`: rows with `alertname`,
    optional `labels` (dict) and `summary`."""
    parts: list[str] = []
    for alert in alerts:
        parts.append(words(str(alert["alertname"])))
        labels = alert.get("labels") or {}
        parts += [str(v) for k, v in sorted(labels.items()) if k not in NOISY_LABELS]
        parts.append(str(alert.get("summary") or ""))
    return " ".join(parts).lower()


def _bucket(token: str) -> tuple[int, float]:
    digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
    value = int.from_bytes(digest, "big")
    return value % DIM, 1.0 if value >> 63 else -1.0


def text_vector(text: str) -> list[float]:
    """The hashed bag of words of `text` (module docstring): `DIM` floats, L2 norm 1, or all
    zeros for a text with no word. A new list each call (remembered for the last texts: an
    investigation asks it for its batch's similar-incident read, then for its own run)."""
    return list(_text_vector(text))


@functools.lru_cache(maxsize=64)
def _text_vector(text: str) -> tuple[float, ...]:
    tokens = [t for t in TOKEN.findall(text.lower()) if t not in STOP]
    grams = tokens + [f"{a} {b}" for a, b in itertools.pairwise(tokens)]
    vector = [0.0] * DIM
    for gram, count in Counter(grams).items():
        index, sign = _bucket(gram)
        vector[index] += sign * (1.0 + math.log(count))
    norm = math.sqrt(sum(v * v for v in vector))
    return tuple(round(v / norm, 6) for v in vector) if norm else tuple(vector)


def rank(rows: list[dict[str, Any]], impacted: list[str]) -> list[dict[str, Any]]:
    """Re-rank the vector index's rows (`similar_incidents.cypher`) with the graph. Pure.

    `impacted`: this incident's alerting components; a row's `reachable` lists its cause when
    they reach it (a past cause they cannot reach explains nothing). Returns at most `TOP` rows
    `{id, at (ms UTC), root_cause, confirmed_by, corrected (that person rejected the finding
    naming it), fixed_by, said (the latest verdict's words, at most `SAID_CHARS`, None for a
    Slack button's), text, score}`, best first; `text`
    is the text similarity (1 - cosine distance), `score` the mix (module docstring). A row
    scoring under `ALIKE` shares nothing with this incident and is no similar incident: left out.
    """
    mine = set(impacted)
    out = []
    for row in rows:
        text = max(0.0, 1.0 - float(row["distance"]))
        theirs = set(row["impacted"] or [])
        overlap = len(mine & theirs) / len(mine | theirs) if mine | theirs else 0.0
        cause = row["cause"]
        fits = 1.0 if cause and row["confirmed_by"] and cause in (row["reachable"] or []) else 0.0
        score = TEXT_WEIGHT * text + IMPACT_WEIGHT * overlap + CAUSE_WEIGHT * fits
        if score < ALIKE:  # the index's nearest, however far: nothing in common
            continue
        out.append({
            "id": row["id"], "at": row["at"], "root_cause": cause,
            "confirmed_by": row["confirmed_by"], "corrected": row.get("verdict") == "rejected",
            "fixed_by": row["fixed_by"],
            "said": in_words(row.get("said_text"), SAID_CHARS, row.get("said_source")),
            "text": round(text, 3), "score": round(score, 3),
        })  # fmt: skip
    out.sort(key=lambda r: (-r["score"], -(r["at"] or 0), r["id"]))
    return out[:TOP]


def first_of_cause(found: list[dict[str, Any]], cause: str | None) -> list[dict[str, Any]]:
    """`found` (`rank`'s rows) with the best earlier incident whose cause an engineer confirmed
    or named as `cause`, the cause this incident's finding names, moved first; `found` as it
    is when there is none. Pure.

    Before the finding, "same root cause" can only be guessed (a past cause the alerting
    components reach, `rank`); once a cause is named, the last time people established that
    cause is what an on-call engineer wants cited ("Similar: inc-… 3 days before, cause
    orders-db, confirmed by Priya"), over a better-worded incident of another cause, however
    its alerts were worded: a silent cause's repeat comes from other callers in other words.
    Except when the best of `found`, scoring `SIMILAR_SHOWN` or more and no less than it, is a
    correction naming another cause: people said of the incident most alike this one that its
    finding was wrong ("inc-…, cause cache, corrected by Pat"), which the page must not hide
    behind an older incident confirmed as `cause`.
    """
    if cause is None or not found:
        return found
    same = [r for r in found if r["root_cause"] == cause and r["confirmed_by"]]
    if not same or same[0] is found[0]:
        return found
    best = found[0]
    if (
        best.get("corrected") and best["confirmed_by"] and best["root_cause"] != cause
        and best["score"] >= max(SIMILAR_SHOWN, same[0]["score"])
    ):  # fmt: skip
        return found
    return [same[0], *(r for r in found if r is not same[0])]


def established(
    graph: TenantGraph,
    incident_id: str,
    cause: str,
    vector: Sequence[float],
    impacted: list[str],
    before_ms: int,
) -> dict[str, Any] | None:
    """The latest earlier incident people established `cause` for (confirmed, or corrected
    naming it: `established_incident.cypher`), as a `rank` row, or None when there is none:
    for `first_of_cause` when the incident's finding names `cause` and no incident among the
    text-nearest does (a batch's repeat worded unlike its first time, out of the vector index's
    `K_TEXT` nearest). Its `text` is the cosine of the two stored vectors (both L2-normalised,
    0 when either has no words), its `score` mixes it as `rank` does, the cause counting as
    reached (this incident's finding names it). `vector`: this incident's text vector;
    `impacted`: its alerting components; `before_ms`: when it opened (ms UTC). Raises
    `GraphUnavailable`."""
    row = graph.one(
        "established_incident", {"cause": cause, "incident_id": incident_id, "before": before_ms}
    )
    if row is None:
        return None
    theirs = list(row["text_vec"] or [])
    text = max(0.0, sum(a * b for a, b in zip(vector, theirs, strict=False)))
    mine, impacts = set(impacted), set(row["impacted"] or [])
    overlap = len(mine & impacts) / len(mine | impacts) if mine | impacts else 0.0
    score = TEXT_WEIGHT * text + IMPACT_WEIGHT * overlap + CAUSE_WEIGHT
    return {
        "id": row["id"], "at": row["at"], "root_cause": cause,
        "confirmed_by": row["confirmed_by"], "corrected": row["verdict"] == "rejected",
        "fixed_by": row["fixed_by"], "text": round(text, 3), "score": round(score, 3),
    }  # fmt: skip


def said_by(row: dict[str, Any]) -> str:
    """Who established what of a similar incident (`rank`'s row), in words: "confirmed by
    Priya", "corrected by Pat" (a rejection naming its cause), "its finding marked wrong by
    Pat: “it was the AZ network”" (a rejection naming none: a cause outside the graph, with
    the person's words when they gave some), or "" when nobody gave a verdict. The page, the
    web page and `blast-radius incident` all say it so."""
    who = row.get("confirmed_by")
    if not who:
        return ""
    if not row.get("root_cause"):
        # a cause outside the graph is said only in words: quote them (a new user's trial read
        # "cause -" for "sorry, misclick: it was the AZ network")
        words = row.get("said")
        return f"its finding marked wrong by {who}" + (f": “{words}”" if words else "")
    return f"{'corrected' if row.get('corrected') else 'confirmed'} by {who}"


def cited(
    found: list[dict[str, Any]], cause: str | None, ruled_out: Collection[str] = ()
) -> dict[str, Any] | None:
    """The earlier incident a page names (`found`: the incident's `similar_json`, best first;
    `cause`: its finding's root cause): the first whose cause this finding's rules did not
    rule out (`ruled_out`: names, `notices.ruled_out_by_rules`), when it scores
    `SIMILAR_SHOWN` or more, or when people established it with the same cause
    (`first_of_cause` put it there); else None: an unrelated alert on another component
    scores 0.1-0.2 on words alone, and a page at 3 a.m. must not point at it. Nor at a
    component the rules excluded: "Similar: …, cause loans-db, confirmed by …" beside a finding
    that ruled loans-db out (a new user's trial) sends the responder where the measurements
    say not to look (the web page and the CLI still list it, saying it was ruled out)."""
    eligible = [r for r in found if not (r["root_cause"] and r["root_cause"] in ruled_out)]
    if not eligible:
        return None
    best = eligible[0]
    same = cause is not None and best["root_cause"] == cause and bool(best["confirmed_by"])
    return best if same or best["score"] >= SIMILAR_SHOWN else None


def alike(
    found: list[dict[str, Any]], cause: str | None, ruled_out: Collection[str] = ()
) -> list[dict[str, Any]]:
    """The similar incidents people are shown (the API, the web page, the CLI): `found` (an
    incident's `similar_json`, best first) without those that share nothing with it (under
    `ALIKE`: `rank` keeps none, but an incident investigated before it left them out kept
    them), but the one its page cites (`cited`, with `cause` its finding's root cause and
    `ruled_out` the names its rules ruled out) even so, as the page names it. Pure."""
    named = cited(found, cause, ruled_out)
    return [r for r in found if r["score"] >= ALIKE or r is named]


def similar(
    graph: TenantGraph,
    incident_id: str,
    vector: list[float],
    impacted: list[str],
    before_ms: int,
) -> list[dict[str, Any]]:
    """Earlier incidents like this one, best first (`rank`), read in one query. An incident
    with no words (`vector` all zeros) has no similar ones. Raises `GraphUnavailable`."""
    return rank(nearest(graph, [(incident_id, vector, impacted, before_ms)])[0], impacted)


def nearest(
    graph: TenantGraph, asks: list[tuple[str, Sequence[float], Sequence[str], int]]
) -> list[list[dict[str, Any]]]:
    """The vector index's rows (`similar_incidents.cypher`, for `rank`) of each ask
    `(incident_id, vector, impacted, before_ms)`, as `similar` reads them, in one query for
    all (a worker's batch), in the order asked. An ask with no words has none. Raises
    `GraphUnavailable`."""
    found: list[list[dict[str, Any]]] = [[] for _ in asks]
    wanted = [
        {"n": n, "incident_id": incident_id, "vector": list(vector), "impacted": list(impacted),
         "before": before}
        for n, (incident_id, vector, impacted, before) in enumerate(asks)
        if any(vector)
    ]  # fmt: skip
    if wanted:
        for row in graph.rows("similar_incidents", {"asks": wanted, "k": K_TEXT}):
            found[int(row.pop("n"))].append(row)
    return found
