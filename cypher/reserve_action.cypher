// Reserve the external action for an intent id (unique) while the task lease is held, and renew
// the lease so the outside call that follows gets a whole one (a heartbeat in the same query).
// `mine` is true only for the attempt that created the reservation.
// First the outcomes of this attempt's earlier outside calls ($records, `_records_call`).
// @include _records_call
WITH timestamp() AS now
MATCH (t:Task {id: $task_id})-[:FOR]->(i:Incident)
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= now
SET t.lease_until = now + $lease_ms
WITH t, i
// @include _steps_call
MERGE (a:Action {intent_id: $intent_id})
  ON CREATE SET a.kind = $kind, a.status = 'reserved', a.attempt_id = $attempt_id,
    a.adapter = $adapter, a.reserved_at = timestamp(), a.incident_id = i.id
MERGE (a)-[:FOR]->(i)
RETURN a.status AS status, a.attempt_id = $attempt_id AS mine, a.external_ref AS external_ref
