// Finish a task (fenced) and, in the same query, enqueue the follow-up task if one is named.
// $mark_notified records that the incident's people were told, and which root cause they were told.
// The follow-up id is deterministic, so a repeated completion cannot enqueue it twice.
// First the outcomes of this attempt's earlier outside calls ($records, as record_actions.cypher),
// whether or not the lease still holds: the calls happened, and the graph must say so.
OPTIONAL MATCH (done:Action) WHERE done.intent_id IN [r IN $records | r.intent_id]
WITH collect(done) AS done
FOREACH (d IN done |
  SET d.status = [r IN $records WHERE r.intent_id = d.intent_id][0].status,
      d.external_ref = [r IN $records WHERE r.intent_id = d.intent_id][0].external_ref,
      d.detail = [r IN $records WHERE r.intent_id = d.intent_id][0].detail,
      d.updated_at = timestamp())
WITH 1 AS one
MATCH (t:Task {id: $task_id})-[:FOR]->(i:Incident)
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= timestamp()
SET t.status = 'done', t.finished_at = timestamp(), t.outcome = $outcome,
    i.notified = CASE WHEN $mark_notified THEN true ELSE i.notified END,
    i.notified_root_cause = CASE WHEN $mark_notified THEN $root_cause ELSE i.notified_root_cause END
FOREACH (_ IN CASE WHEN $next_kind IS NULL THEN [] ELSE [1] END |
  MERGE (n:Task {id: $next_id})
    ON CREATE SET n.kind = $next_kind, n.status = 'open', n.owner = '', n.attempt_id = '',
      n.epoch = 0, n.attempts = 0, n.lease_until = 0, n.created_at = timestamp(), n.incident_id = i.id
  MERGE (n)-[:FOR]->(i))
RETURN t.id AS id
