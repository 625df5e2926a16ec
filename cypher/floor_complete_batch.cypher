// bench/floor.py --batch only: floor_complete for several tasks in one query, fenced per task:
// each row of $tasks ({task_id, epoch, id (the finding's), root_cause, summary, intent_id,
// external_ref}) completes only while that task's owner, epoch and lease hold.
WITH timestamp() AS now
UNWIND $tasks AS row
MATCH (t:Task {id: row.task_id})-[:FOR]->(i:Incident)
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = row.epoch AND t.lease_until >= now
SET t.status = 'done', t.finished_at = now, t.outcome = 'paged'
CREATE (i)-[:HAS_FINDING]->(:Finding {id: row.id, root_cause: row.root_cause,
  summary: row.summary, created_at: now})
WITH row, t
MATCH (a:Action {intent_id: row.intent_id})
SET a.status = 'sent', a.external_ref = row.external_ref, a.updated_at = timestamp()
RETURN t.id AS task_id
