// Finish a task (fenced) and, in the same query, enqueue the follow-up task if one is named.
// $mark_notified records that the incident's people were told, and which root cause they were told.
// The follow-up id is deterministic, so a repeated completion cannot enqueue it twice.
// With $claim_next the follow-up is claimed for this worker ($owner, attempt $next_attempt_id,
// a lease of $lease_ms) as it is created, so the same worker goes on with it without a claim
// query; `next_claimed` says whether it did (not when the follow-up existed).
// `coalesce($next_id, '')`: an index lookup of null scans every Task.
// First the outcomes of this attempt's earlier outside calls ($records, `_records_call`).
// @include _records_call
WITH 1 AS one
MATCH (t:Task {id: $task_id})-[:FOR]->(i:Incident)
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= timestamp()
SET t.status = 'done', t.finished_at = timestamp(), t.outcome = $outcome,
    i.notified = CASE WHEN $mark_notified THEN true ELSE i.notified END,
    i.notified_root_cause = CASE WHEN $mark_notified THEN $root_cause ELSE i.notified_root_cause END
FOREACH (_ IN CASE WHEN $next_kind IS NULL THEN [] ELSE [1] END |
  MERGE (n:Task {id: coalesce($next_id, '')})
    ON CREATE SET n += {kind: $next_kind, incident_id: i.id,
// @include _chained_task
}
  MERGE (n)-[:FOR]->(i))
WITH t, i
OPTIONAL MATCH (n:Task {id: coalesce($next_id, '')})
WITH t, i, n, n IS NOT NULL AND n.owner = $owner AND n.attempt_id = $next_attempt_id AND n.epoch = 1 AS next_claimed
RETURN t.id AS id, next_claimed, n.kind AS next_kind, i.id AS incident_id
