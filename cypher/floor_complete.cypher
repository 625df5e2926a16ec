// bench/floor.py only: the fenced completion: matched by owner, epoch and an unexpired lease
// (zero rows: the lease was lost, nothing is written), it writes the finding, the page's
// outcome on its Action, and marks the task done, in one query.
WITH timestamp() AS now
MATCH (t:Task {id: $task_id})-[:FOR]->(i:Incident)
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= now
SET t.status = 'done', t.finished_at = now, t.outcome = 'paged'
CREATE (i)-[:HAS_FINDING]->(:Finding {id: $finding_id, root_cause: $root_cause,
  summary: $summary, created_at: now})
WITH i
MATCH (a:Action {intent_id: $intent_id})
SET a.status = 'sent', a.external_ref = $external_ref, a.updated_at = timestamp()
RETURN i.id AS incident_id
