// One verdict (recorded from Slack) with the incident's finding at the time of learning, and
// `later`: the id of a confirmation or rejection on the same incident given after it (by `at`,
// then `seq`: two in the same millisecond as they were recorded), null when it is the latest.
MATCH (i:Incident)-[:HAS_VERDICT]->(v:Verdict {id: $verdict_id})
OPTIONAL MATCH (i)-[:HAS_FINDING]->(f:Finding)
OPTIONAL MATCH (i)-[:HAS_VERDICT]->(n:Verdict)
WHERE n.verdict IN ['confirmed', 'rejected'] AND n.id <> v.id
  AND (n.at > v.at OR (n.at = v.at AND coalesce(n.seq, 0) > coalesce(v.seq, 0)))
WITH i, v, f, n ORDER BY n.at DESC, coalesce(n.seq, 0) DESC
WITH i, v, f, head(collect(n.id)) AS later
RETURN later, v.id AS id, v.verdict AS verdict, v.actual_cause AS actual_cause, v.by AS by,
       v.at AS at, v.text AS text, i.id AS incident_id, i.root_cause AS root_cause,
       f.id AS finding_id, f.planner AS planner, f.evidence_json AS evidence_json
