// Reserve a batch's external actions, one per task, each fenced on its own task (as
// reserve_action.cypher does for one, and as write_finding and complete_task fence their rows):
// $tasks holds one row per task ({task_id, epoch, intent_id, kind, adapter, attempt_id, ahead}
// and the run's deferred steps, `_steps_call`); a task whose owner ($owner), epoch or lease no
// longer holds gets no row back and nothing of its row is written (its steps, its reservations),
// so it must not send; the others go on. Each fenced task's lease is renewed by $lease_ms, so the
// outside call that follows gets a whole one. `mine` is true only for the attempt that created
// the reservation (an Action reserved by an earlier attempt has an unknown outcome: the caller
// looks first). One query for a batch of first messages (`reserve_batch`,
// agents/tasks/coordination.py).
// First the outcomes of the attempts' earlier outside calls ($records, `_records_call`).
// @include _records_call
WITH timestamp() AS now
UNWIND $tasks AS row
MATCH (t:Task {id: row.task_id})-[:FOR]->(i:Incident)
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = row.epoch AND t.lease_until >= now
SET t.lease_until = now + $lease_ms
WITH t, i, row
// @include _steps_call
MERGE (a:Action {intent_id: row.intent_id})
  ON CREATE SET a.kind = row.kind, a.status = 'reserved', a.attempt_id = row.attempt_id,
    a.adapter = row.adapter, a.reserved_at = timestamp(), a.incident_id = i.id
MERGE (a)-[:FOR]->(i)
// row.ahead (maps {intent_id, kind, adapter}): actions that attempt takes next, reserved now the
// same way (TaskRun.reserve_ahead, as reserve_action.cypher's $ahead); `ahead` says of each what
// the columns say of row.intent_id. FOREACH, not a CALL with MERGE: in FalkorDB that wrote the
// first task's rows only.
FOREACH (x IN row.ahead |
  MERGE (b:Action {intent_id: x.intent_id})
    ON CREATE SET b.kind = x.kind, b.status = 'reserved', b.attempt_id = row.attempt_id,
      b.adapter = x.adapter, b.reserved_at = timestamp(), b.incident_id = i.id
  MERGE (b)-[:FOR]->(i))
WITH row, a
CALL {
  WITH row
  UNWIND row.ahead AS x
  MATCH (b:Action {intent_id: x.intent_id})
  RETURN collect({intent_id: b.intent_id, status: b.status, mine: b.attempt_id = row.attempt_id,
                  external_ref: b.external_ref}) AS ahead
}
RETURN row.task_id AS task_id, a.intent_id AS intent_id, a.status AS status,
       a.attempt_id = row.attempt_id AS mine, a.external_ref AS external_ref, ahead
