// An investigation failed for good (worker.task_failed): the incident still pages. When it has
// no finding yet, it gets an inconclusive one saying why the diagnosis failed; the `respond`
// task (the id the investigator uses, so never twice) is enqueued.
MATCH (i:Incident {id: $incident_id})
OPTIONAL MATCH (i)-[:HAS_FINDING]->(old:Finding)
WITH i, old
FOREACH (_ IN CASE WHEN old IS NULL THEN [1] ELSE [] END |
  MERGE (f:Finding {id: 'finding:' + i.id})
    ON CREATE SET f.created_at = timestamp(), f.updated_at = timestamp(), f.alerts_seen = 0,
      f.candidates = [], f.confidence = 0.0, f.summary = $summary, f.conclusive = false,
      f.paths_json = '[]', f.ruled_out_json = '{}', f.planner = 'failed'
  MERGE (i)-[:HAS_FINDING]->(f)
  SET i.conclusive = false)
MERGE (n:Task {id: 'respond:' + i.id})
  ON CREATE SET n += {kind: 'respond', incident_id: i.id,
// @include _fresh_task
}
MERGE (n)-[:FOR]->(i)
RETURN i.id AS id
