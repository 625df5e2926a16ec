// Similar incidents (agents/investigate/similar.py), for each ask (`row`) of $asks (a worker's
// batch asks for all its incidents in one query; maps {n, incident_id, vector, before,
// impacted}): the $k incidents nearest to ask.vector on the text vector index (cosine; `score` is
// a distance, lower is closer; the vectors are on `IncidentText` nodes, one per incident, which
// nothing writes to again: FalkorDB 4 counts a stale entry, left at every write to an indexed
// node, against $k), earlier than ask.before (ms UTC), not ask.incident_id and not
// merged away, each with the cause an engineer confirmed or named by the latest verdict (else
// the finding's, unconfirmed; none when that verdict rejected it naming no cause), who said so
// and by which verdict (confirmed, or rejected) with its words and source (`said_text`,
// `said_source`: a cause outside the graph is said only in words), who resolved it, the components it impacted, and whether
// ask.impacted (that incident's alerting components) reach that cause within 4 business hops (a
// past cause this incident cannot reach explains nothing; asked only of a cause someone
// confirmed or named, the only kind `rank` counts as reached). Each row says its ask's `n`.
UNWIND $asks AS row
CALL db.idx.vector.queryNodes('IncidentText', 'text_vec', $k, vecf32(row.vector)) YIELD node, score
MATCH (node)-[:OF]->(i:Incident)
WITH row.n AS n, row.impacted AS asked, row.incident_id AS itself, row.before AS before,
     i, score
WHERE i.id <> itself AND i.opened_at < before AND i.status <> 'merged'
OPTIONAL MATCH (i)-[:HAS_VERDICT]->(v:Verdict)
WHERE v.verdict IN ['confirmed', 'rejected']
WITH n, asked, i, score, v ORDER BY v.at DESC, coalesce(v.seq, 0) DESC
WITH n, asked, i, score,
     collect([v.actual_cause, coalesce(v.by_name, v.by), v.verdict, v.text, v.source])[0] AS said
OPTIONAL MATCH (i)-[:IMPACTED]->(c:Component)
// the latest verdict a rejection naming no cause (one outside the graph): the finding's cause
// was marked wrong and no other established, so there is none to cite
WITH n, asked, i, score, said, collect(c.name) AS impacted,
     CASE WHEN said[2] = 'rejected' AND said[0] IS NULL THEN null
          ELSE coalesce(said[0], i.root_cause) END AS cause
// A lookup of '' finds no component: no walk for a cause nobody confirmed. Each start is looked
// up by name (`a.name IN asked` scanned every Component: only a parameter list is looked up).
CALL {
  WITH asked, said, cause
  UNWIND CASE WHEN said[1] IS NULL THEN [''] ELSE asked + [''] END AS start
  OPTIONAL MATCH p = (a:Component {name: start})-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON*0..4]->
                     (:Component {name: CASE WHEN said[1] IS NULL THEN '' ELSE coalesce(cause, '') END})
  WHERE all(r IN relationships(p) WHERE r.purpose = 'business')
  RETURN count(p) > 0 AS reaches
}
WITH n, i, score, said, impacted, cause, reaches
RETURN n, i.id AS id, i.opened_at AS at, cause, said[1] AS confirmed_by, said[2] AS verdict,
       said[3] AS said_text, said[4] AS said_source,
       i.resolved_by AS fixed_by, impacted, CASE WHEN reaches THEN [cause] ELSE [] END AS reachable,
       score AS distance
ORDER BY n, distance, id
