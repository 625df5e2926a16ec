// Similar incidents (agents/investigate/similar.py): the $k incidents nearest to $vector on the
// Incident text vector index (cosine; `score` is a distance, lower is closer), earlier than
// $before (ms UTC), not $incident_id and not merged away, each with the cause an engineer
// confirmed or named (else the finding's, unconfirmed), who said so, who resolved it, the
// components it impacted, and whether $impacted (this incident's alerting components) reach
// that cause within 4 business hops (a past cause this incident cannot reach explains nothing;
// asked only of a cause someone confirmed or named, the only kind `rank` counts as reached).
CALL db.idx.vector.queryNodes('Incident', 'text_vec', $k, vecf32($vector)) YIELD node, score
WITH node AS i, score
WHERE i.id <> $incident_id AND i.opened_at < $before AND i.status <> 'merged'
OPTIONAL MATCH (i)-[:HAS_VERDICT]->(v:Verdict)
WHERE v.verdict IN ['confirmed', 'rejected'] AND v.actual_cause IS NOT NULL
WITH i, score, v ORDER BY v.at DESC
WITH i, score, collect([v.actual_cause, coalesce(v.by_name, v.by)])[0] AS said
OPTIONAL MATCH (i)-[:IMPACTED]->(c:Component)
WITH i, score, said, collect(c.name) AS impacted, coalesce(said[0], i.root_cause) AS cause
// A lookup of '' finds no component: no walk for a cause nobody confirmed.
OPTIONAL MATCH p = (a:Component)-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON*0..4]->
                   (:Component {name: CASE WHEN said[1] IS NULL THEN '' ELSE coalesce(cause, '') END})
WHERE a.name IN $impacted AND all(r IN relationships(p) WHERE r.purpose = 'business')
WITH i, score, said, impacted, cause, count(p) > 0 AS reaches
RETURN i.id AS id, i.opened_at AS at, cause, said[1] AS confirmed_by,
       i.resolved_by AS fixed_by, impacted, CASE WHEN reaches THEN [cause] ELSE [] END AS reachable,
       score AS distance
ORDER BY distance, id
