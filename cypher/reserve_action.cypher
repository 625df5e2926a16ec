// Reserve the external action for an intent id (unique) while the task lease is held, and renew
// the lease so the outside call that follows gets a whole one (a heartbeat in the same query).
// `mine` is true only for the attempt that created the reservation.
// First the outcomes of this attempt's earlier outside calls ($records, `_records_call`).
// @include _records_call
WITH timestamp() AS now
MATCH (t:Task {id: $task_id})-[:FOR]->(i:Incident)
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= now
SET t.lease_until = now + $lease_ms
WITH t, i, $row AS row
// @include _steps_call
MERGE (a:Action {intent_id: $intent_id})
  ON CREATE SET a.kind = $kind, a.status = 'reserved', a.attempt_id = $attempt_id,
    a.adapter = $adapter, a.reserved_at = timestamp(), a.incident_id = i.id
MERGE (a)-[:FOR]->(i)
WITH a, i
// $ahead (maps {intent_id, kind, adapter}): actions this attempt takes next, reserved now the
// same way (TaskRun.reserve_ahead); `ahead` says of each what the columns say of $intent_id.
CALL {
  WITH i
  UNWIND $ahead AS x
  MERGE (b:Action {intent_id: x.intent_id})
    ON CREATE SET b.kind = x.kind, b.status = 'reserved', b.attempt_id = $attempt_id,
      b.adapter = x.adapter, b.reserved_at = timestamp(), b.incident_id = i.id
  MERGE (b)-[:FOR]->(i)
  RETURN collect({intent_id: b.intent_id, status: b.status, mine: b.attempt_id = $attempt_id,
                  external_ref: b.external_ref}) AS ahead
}
RETURN a.status AS status, a.attempt_id = $attempt_id AS mine, a.external_ref AS external_ref,
       ahead
