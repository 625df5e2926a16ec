// Record an engineer's verdict on an incident (a Slack button or thread reply) and, in the same
// query, a `learn` task for the learner and a `notify_verdict` task for the responder (which
// edits the page), but for a `resolved` verdict: it resolves the incident, whose resolve task
// edits the page once with the verdict on it (two tasks edited it twice, the same second,
// with the same text). $id comes from Slack's event id or action key, so a retried delivery
// changes nothing: `fresh` is false then. An id that already names a verdict on another
// incident, or another verdict or person, matches no row: a verdict never joins a second
// incident (`agents.learn.verdicts.record` tells the two empty answers apart); nor does an id
// re-sent with another cause or text (its change would be dropped without a word). A verdict
// that says what the incident's latest one said (the same verdict, cause and person: the same
// request posted again without an id) is recorded, with its `learn` task, but edits the page
// no more: one page update per distinct verdict. $at is ms UTC. `seq`: the verdict's place among
// the incident's verdicts (1, 2, …), which orders two given in the same millisecond (two people
// answering one page at once) the same way everywhere, after `at`.
MATCH (i:Incident {id: $incident_id})
OPTIONAL MATCH (old:Verdict {id: $id})
WITH i, old
WHERE old IS NULL OR (old.incident_id = i.id AND old.verdict = $verdict AND old.by = $by
                      AND coalesce(old.actual_cause, '') = coalesce($actual_cause, '')
                      AND coalesce(old.text, '') = $text)
WITH i, old IS NULL AS fresh
OPTIONAL MATCH (i)-[:HAS_VERDICT]->(p:Verdict)
WHERE p.verdict <> 'resolved' AND p.id <> $id
WITH i, fresh, p ORDER BY p.at DESC, coalesce(p.seq, 0) DESC
WITH i, fresh, head(collect(CASE WHEN p IS NULL THEN null
                                 ELSE [p.verdict, coalesce(p.actual_cause, ''), p.by] END)) AS before
WITH i, fresh, coalesce(before = [$verdict, coalesce($actual_cause, ''), $by], false) AS said
OPTIONAL MATCH (i)-[:HAS_VERDICT]->(q:Verdict)
WHERE q.id <> $id
WITH i, fresh, said, count(q) AS given
MERGE (v:Verdict {id: $id})
  ON CREATE SET v.incident_id = i.id, v.verdict = $verdict, v.actual_cause = $actual_cause,
    v.seq = given + 1,
    v.by = $by, v.by_name = $by_name, v.at = $at, v.text = $text, v.source = $source,
    v.event_id = $event_id
MERGE (i)-[:HAS_VERDICT]->(v)
MERGE (l:Task {id: 'learn:' + v.id})
  ON CREATE SET l += {kind: 'learn', incident_id: i.id,
// @include _fresh_task
}
MERGE (l)-[:FOR]->(i)
WITH i, v, fresh, said
FOREACH (_ IN CASE WHEN v.verdict <> 'resolved' AND NOT said THEN [1] ELSE [] END |
  MERGE (n:Task {id: 'notify_verdict:' + v.id})
    ON CREATE SET n += {kind: 'notify_verdict', incident_id: i.id,
// @include _fresh_task
}
  MERGE (n)-[:FOR]->(i)
)
RETURN v.id AS id, v.verdict AS verdict, v.actual_cause AS actual_cause, fresh
