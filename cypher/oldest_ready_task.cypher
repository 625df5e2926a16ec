// The task that has been ready to claim the longest (doctor's queue check): open, or claimed
// with an expired lease, with attempts left and past its `not_before`; a follow-up
// ($after_page: agents/tasks/kinds.py) only once its incident's first page is out (or it was
// merged), as claim_task.cypher takes them. Paused tasks wait for a model or a hold on purpose.
// Ready since: an open task's creation or `not_before`, a claimed one's lease end (its worker
// stopped renewing it). `waited_ms` on the database clock, like the lease; `ready`: how many are ready;
// `incident_id` '' for a task of no incident. No row: none is ready.
WITH timestamp() AS now
MATCH (t:Task)
WHERE t.status IN ['open', 'claimed'] AND t.attempts < $max_attempts
  AND (t.status = 'open' OR t.lease_until < now) AND coalesce(t.not_before, 0) <= now
OPTIONAL MATCH (t)-[:FOR]->(i:Incident)
WITH t, i, now
WHERE NOT t.kind IN $after_page OR i.notified = true OR i.status = 'merged'
WITH t, i, now, CASE WHEN t.status = 'claimed' THEN t.lease_until
                     WHEN coalesce(t.not_before, 0) > t.created_at THEN t.not_before
                     ELSE t.created_at END AS ready_since
WITH t, i, now - ready_since AS waited ORDER BY waited DESC
WITH collect(t.kind) AS kinds, collect(coalesce(i.id, '')) AS incidents, collect(waited) AS waits
WHERE size(kinds) > 0
RETURN kinds[0] AS kind, incidents[0] AS incident_id, waits[0] AS waited_ms, size(kinds) AS ready
