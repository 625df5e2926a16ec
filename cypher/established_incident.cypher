// The latest earlier incident people established $cause for (agents/investigate/similar.py
// `established`), read as similar_incidents.cypher reads a row: opened before $before (ms UTC),
// not $incident_id and not merged away, whose latest verdict (confirmed, or rejected naming the
// actual cause; a later rejection naming none withdrew it) names $cause; who said so and by which verdict, who resolved it, the components
// it impacted, and its text vector (its `IncidentText`'s, null when it has none; the caller works
// out the text similarity). No row when
// there is none. Verdicts are looked up by the Verdict.actual_cause index.
MATCH (v:Verdict {actual_cause: $cause})
WHERE v.verdict IN ['confirmed', 'rejected']
MATCH (i:Incident)-[:HAS_VERDICT]->(v)
WHERE i.id <> $incident_id AND i.opened_at < $before AND i.status <> 'merged'
OPTIONAL MATCH (i)-[:HAS_VERDICT]->(later:Verdict)
WHERE later.verdict IN ['confirmed', 'rejected'] AND (later.at > v.at
       OR (later.at = v.at AND coalesce(later.seq, 0) > coalesce(v.seq, 0)))
WITH i, v, count(later) AS newer
WHERE newer = 0
OPTIONAL MATCH (i)-[:IMPACTED]->(c:Component)
WITH i, v, collect(c.name) AS impacted
ORDER BY i.opened_at DESC, i.id
LIMIT 1
OPTIONAL MATCH (i)<-[:OF]-(x:IncidentText)
RETURN i.id AS id, i.opened_at AS at, v.actual_cause AS cause,
       coalesce(v.by_name, v.by) AS confirmed_by, v.verdict AS verdict, i.resolved_by AS fixed_by,
       impacted, x.text_vec AS text_vec
