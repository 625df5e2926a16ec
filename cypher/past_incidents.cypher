// Earlier incidents whose root cause was this component (opened before $before, ms UTC), newest
// first, with their finding's summary and the verdicts engineers gave.
MATCH (i:Incident)-[:ROOT_CAUSE]->(c:Component {name: $component})
WHERE i.opened_at < $before
OPTIONAL MATCH (i)-[:HAS_FINDING]->(f:Finding)
OPTIONAL MATCH (i)-[:HAS_VERDICT]->(v:Verdict)
WITH i, f, collect(v.verdict) AS verdicts
RETURN i.id AS id, i.opened_at AS opened_at, i.status AS status, f.summary AS summary,
       f.confidence AS confidence, f.planner AS planner, verdicts
ORDER BY opened_at DESC, id
LIMIT 10
