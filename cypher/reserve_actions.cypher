// Reserve a batch's external actions, one per task, each fenced on its own task (as
// reserve_action.cypher does for one, and as write_finding and complete_task fence their rows):
// $tasks holds one row per task ({task_id, epoch, intent_id, kind, adapter, attempt_id} and the
// run's deferred steps, `_steps_call`); a task whose owner ($owner), epoch or lease no longer
// holds gets no row back and nothing of its row is written (its steps, its reservation), so it
// must not send; the others go on. Each fenced task's lease is renewed by $lease_ms, so the
// outside call that follows gets a whole one. `mine` is true only for the attempt that created
// the reservation (an Action reserved by an earlier attempt has an unknown outcome: the caller
// looks first). One query for a batch of pages (`reserve_batch`, agents/tasks/coordination.py).
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
RETURN row.task_id AS task_id, a.intent_id AS intent_id, a.status AS status,
       a.attempt_id = row.attempt_id AS mine, a.external_ref AS external_ref
