// bench/floor.py only: one checkpointed step and the page's reservation in one fenced write.
// It matches the task by owner, epoch and an unexpired lease (zero rows: the lease was lost),
// extends the lease for the outside call, writes the step (the walk's result), and reserves
// the Action of the intent id (unique) before the outbox line is written. `mine` is true only
// for the attempt that created the reservation; any other must look the intent up first.
WITH timestamp() AS now
MATCH (t:Task {id: $task_id})-[:FOR]->(i:Incident)
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= now
SET t.lease_until = now + $lease_ms
CREATE (:Step {task_id: $task_id, n: 1, tool: 'walk', args: $args, result: $result, at: now,
  epoch: $epoch})-[:OF]->(t)
MERGE (a:Action {intent_id: $intent_id})
  ON CREATE SET a.kind = 'notification', a.status = 'reserved', a.attempt_id = $attempt_id,
    a.adapter = 'outbox', a.reserved_at = now, a.incident_id = i.id
MERGE (a)-[:FOR]->(i)
RETURN a.status AS status, a.attempt_id = $attempt_id AS mine, a.external_ref AS external_ref
