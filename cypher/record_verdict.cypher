// Record an engineer's verdict on an incident's diagnosis and enqueue a `learn` task, in one
// query. Idempotent by verdict id (a retried Slack event or a double click changes nothing).
MATCH (i:Incident {id: $incident_id})
MERGE (v:Verdict {id: $id})
  ON CREATE SET v.incident_id = i.id, v.verdict = $verdict, v.actual_cause = $actual_cause,
    v.by = $by, v.by_name = $by_name, v.at = timestamp(), v.text = $text, v.source = $source,
    v.event_id = $event_id
MERGE (i)-[:HAS_VERDICT]->(v)
MERGE (t:Task {id: 'learn:' + $id})
  ON CREATE SET t.kind = 'learn', t.status = 'open', t.owner = '', t.attempt_id = '', t.epoch = 0,
    t.attempts = 0, t.lease_until = 0, t.created_at = timestamp(), t.incident_id = i.id
MERGE (t)-[:FOR]->(i)
RETURN v.id AS id, v.verdict AS verdict, v.at AS at
