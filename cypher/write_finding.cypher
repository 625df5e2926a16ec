// Store the investigator's finding (fenced by the task lease). One Finding per incident, updated
// by re-investigations; a finding from fewer alerts never overwrites one from more (a slow
// re-investigation finishing late): then `fresh` is false and nothing changes.
// $root_cause is null when the finding is inconclusive. $model: the planner model that decided
// (null for memory and rules); $second_opinion_json: the graph's check of the model's answer.
// $measured_json: ruled-out component -> the measurement its reason rests on.
// With $outcome set, the task is completed in the same query and the follow-up task $next_kind
// ($next_id) enqueued, as complete_task.cypher does (one round trip fewer); with
// $outcome null the task stays claimed (a split may follow).
// With $claim_next the follow-up is claimed for this worker ($owner, attempt $next_attempt_id,
// a lease of $lease_ms) as it is created, so the same worker goes on with it without a claim
// query; `next_claimed` says whether it did (not when the follow-up existed).
// The lease is extended by $lease_ms (a split may follow while the task stays claimed).
// $text_vec (the incident's hashed bag of words, float32 under the Incident text vector index,
// or null without memory) and $similar_json (the similar incidents found now) are what
// similarity keeps on the incident for the page, the ticket and later incidents.
MATCH (t:Task {id: $task_id})-[:FOR]->(i:Incident)
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= timestamp()
SET t.lease_until = timestamp() + $lease_ms
WITH t, i
// @include _steps_call
MERGE (f:Finding {id: $finding_id})
  ON CREATE SET f.created_at = timestamp(), f.alerts_seen = 0
MERGE (i)-[:HAS_FINDING]->(f)
WITH t, i, f, f.alerts_seen <= $alerts_seen AS fresh
FOREACH (_ IN CASE WHEN fresh THEN [1] ELSE [] END |
  SET f.alerts_seen = $alerts_seen, f.updated_at = timestamp(), f.root_cause = $root_cause,
      f.candidates = $candidates, f.confidence = $confidence, f.summary = $summary,
      f.conclusive = $conclusive, f.paths_json = $paths_json,
      f.ruled_out_json = $ruled_out_json, f.planner = $planner, f.model = $model,
      f.second_opinion_json = $second_opinion_json,
      f.separated_by = $separated_by, f.evidence_json = $evidence_json,
      f.measured_json = $measured_json,
      i.root_cause = $root_cause, i.conclusive = $conclusive,
      i.text_vec = CASE WHEN $text_vec IS NULL THEN null ELSE vecf32($text_vec) END,
      i.similar_json = $similar_json)
WITH t, i, f, fresh
OPTIONAL MATCH (i)-[old:ROOT_CAUSE]->(:Component)
WITH t, i, f, fresh, collect(old) AS olds
FOREACH (r IN CASE WHEN fresh THEN olds ELSE [] END | DELETE r)
WITH t, i, f, fresh
// coalesce: an index lookup of null (no root cause) scans every Component.
OPTIONAL MATCH (rc:Component {name: coalesce($root_cause, '')})
FOREACH (_ IN CASE WHEN fresh AND rc IS NOT NULL THEN [1] ELSE [] END | MERGE (i)-[:ROOT_CAUSE]->(rc))
WITH t, i, f, fresh
OPTIONAL MATCH (i)-[:HAS_ALERT]->(a:Alert)
WITH t, i, f, fresh, collect(a) AS alerts
FOREACH (a IN CASE WHEN fresh THEN alerts ELSE [] END | MERGE (f)-[:SUPPORTED_BY]->(a))
WITH t, i, f, fresh
OPTIONAL MATCH (imp:Component) WHERE imp.name IN $impacted
WITH t, i, f, fresh, collect(imp) AS impacted
FOREACH (c IN CASE WHEN fresh THEN impacted ELSE [] END | MERGE (i)-[:IMPACTED]->(c))
WITH t, i, f, fresh
OPTIONAL MATCH (ch:Change) WHERE ch.id IN $change_ids
WITH t, i, f, fresh, collect(ch) AS changes
FOREACH (ch IN CASE WHEN fresh THEN changes ELSE [] END | MERGE (f)-[:SUPPORTED_BY]->(ch))
WITH t, i, f, fresh
FOREACH (_ IN CASE WHEN $outcome IS NULL THEN [] ELSE [1] END |
  SET t.status = 'done', t.finished_at = timestamp(), t.outcome = $outcome)
FOREACH (_ IN CASE WHEN $outcome IS NULL OR $next_kind IS NULL THEN [] ELSE [1] END |
  MERGE (n:Task {id: $next_id})
    ON CREATE SET n += {kind: $next_kind, incident_id: i.id,
// @include _chained_task
}
  MERGE (n)-[:FOR]->(i))
WITH t, i, f, fresh
OPTIONAL MATCH (n:Task {id: $next_id})
WITH f, fresh, i, n, n IS NOT NULL AND n.owner = $owner AND n.attempt_id = $next_attempt_id AND n.epoch = 1 AS next_claimed
RETURN f.id AS id, fresh, next_claimed, n.kind AS next_kind, i.id AS incident_id
