// A task failed for good (worker.task_failed). With $diagnosis (an investigation), the incident
// still pages: when it has no finding yet, it gets an inconclusive one saying why the diagnosis
// failed, and the `respond` task (same id the investigator uses, so never twice) is enqueued.
MATCH (i:Incident {id: $incident_id})
OPTIONAL MATCH (i)-[:HAS_FINDING]->(old:Finding)
WITH i, old
FOREACH (_ IN CASE WHEN $diagnosis AND old IS NULL THEN [1] ELSE [] END |
  MERGE (f:Finding {id: 'finding:' + i.id})
    ON CREATE SET f.created_at = timestamp(), f.updated_at = timestamp(), f.alerts_seen = 0,
      f.candidates = [], f.confidence = 0.0, f.summary = $summary, f.conclusive = false,
      f.paths_json = '[]', f.ruled_out_json = '{}', f.planner = 'failed'
  MERGE (i)-[:HAS_FINDING]->(f)
  SET i.conclusive = false)
FOREACH (_ IN CASE WHEN $diagnosis THEN [1] ELSE [] END |
  MERGE (n:Task {id: 'respond:' + i.id})
    ON CREATE SET n.kind = 'respond', n.status = 'open', n.owner = '', n.attempt_id = '',
      n.epoch = 0, n.attempts = 0, n.lease_until = 0, n.created_at = timestamp(), n.incident_id = i.id
  MERGE (n)-[:FOR]->(i))
RETURN i.id AS id
