// bench/floor.py --batch only: floor_step for several tasks in one query, fenced per task:
// each row of $tasks ({task_id, epoch, args, result, intent_id}) writes only while that task's
// owner, epoch and lease hold, so a lost lease drops that task's row, not the others'.
WITH timestamp() AS now
UNWIND $tasks AS row
MATCH (t:Task {id: row.task_id})-[:FOR]->(i:Incident)
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = row.epoch AND t.lease_until >= now
SET t.lease_until = now + $lease_ms
CREATE (:Step {task_id: row.task_id, n: 1, tool: 'walk', args: row.args, result: row.result,
  at: now, epoch: row.epoch})-[:OF]->(t)
MERGE (a:Action {intent_id: row.intent_id})
  ON CREATE SET a.kind = 'notification', a.status = 'reserved', a.attempt_id = $attempt_id,
    a.adapter = 'outbox', a.reserved_at = now, a.incident_id = i.id
MERGE (a)-[:FOR]->(i)
RETURN t.id AS task_id, a.status AS status, a.attempt_id = $attempt_id AS mine,
       a.external_ref AS external_ref
