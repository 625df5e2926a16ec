// Store the investigator's finding (fenced by the task lease). One Finding per incident, updated
// by re-investigations; a finding from fewer alerts never overwrites one from more (a slow
// re-investigation finishing late): then `fresh` is false and nothing changes.
// $root_cause is null when the finding is inconclusive. $model: the planner model that decided
// (null for memory and rules); $second_opinion_json: the graph's check of the model's answer.
MATCH (t:Task {id: $task_id})-[:FOR]->(i:Incident)
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= timestamp()
MERGE (f:Finding {id: $finding_id})
  ON CREATE SET f.created_at = timestamp(), f.alerts_seen = 0
MERGE (i)-[:HAS_FINDING]->(f)
WITH i, f, f.alerts_seen <= $alerts_seen AS fresh
FOREACH (_ IN CASE WHEN fresh THEN [1] ELSE [] END |
  SET f.alerts_seen = $alerts_seen, f.updated_at = timestamp(), f.root_cause = $root_cause,
      f.candidates = $candidates, f.confidence = $confidence, f.summary = $summary,
      f.conclusive = $conclusive, f.paths_json = $paths_json,
      f.ruled_out_json = $ruled_out_json, f.planner = $planner, f.model = $model,
      f.second_opinion_json = $second_opinion_json,
      f.separated_by = $separated_by, f.evidence_json = $evidence_json,
      i.root_cause = $root_cause, i.conclusive = $conclusive)
WITH i, f, fresh
OPTIONAL MATCH (i)-[old:ROOT_CAUSE]->(:Component)
WITH i, f, fresh, collect(old) AS olds
FOREACH (r IN CASE WHEN fresh THEN olds ELSE [] END | DELETE r)
WITH i, f, fresh
OPTIONAL MATCH (rc:Component {name: $root_cause})
FOREACH (_ IN CASE WHEN fresh AND rc IS NOT NULL THEN [1] ELSE [] END | MERGE (i)-[:ROOT_CAUSE]->(rc))
WITH i, f, fresh
OPTIONAL MATCH (i)-[:HAS_ALERT]->(a:Alert)
WITH i, f, fresh, collect(a) AS alerts
FOREACH (a IN CASE WHEN fresh THEN alerts ELSE [] END | MERGE (f)-[:SUPPORTED_BY]->(a))
WITH i, f, fresh
OPTIONAL MATCH (imp:Component) WHERE imp.name IN $impacted
WITH i, f, fresh, collect(imp) AS impacted
FOREACH (c IN CASE WHEN fresh THEN impacted ELSE [] END | MERGE (i)-[:IMPACTED]->(c))
WITH f, fresh
OPTIONAL MATCH (ch:Change) WHERE ch.id IN $change_ids
WITH f, fresh, collect(ch) AS changes
FOREACH (ch IN CASE WHEN fresh THEN changes ELSE [] END | MERGE (f)-[:SUPPORTED_BY]->(ch))
RETURN f.id AS id, fresh
