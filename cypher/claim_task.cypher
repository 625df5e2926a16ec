// Claim the most urgent claimable task of the given kinds: open, or claimed with an expired lease
// and attempts left (the reaper fails the others). Attempts are counted here, at claim time.
// Most urgent: the lowest $priority[kind] (agents/tasks/kinds.py; a kind missing there last),
// then the oldest, so a burst of new incidents is paged before a backlog of other work.
// A follow-up ($after_page: agents/tasks/kinds.py) waits until the incident's first notification is out,
// unless the incident was merged into another (the responder then just finishes it).
// `t.status IN [...]` comes first so the Task.status index is used: `status = 'open' OR ...`
// scanned the kind index instead, 11.5 ms per claim with 100k finished tasks (bench/claim.py).
// Select first, then SET (LIMIT does not limit an eager write). Lease uses the database clock.
// A paused task (pause_task: every model cooling down) keeps its resume time in lease_until.
WITH timestamp() AS now
MATCH (t:Task)
WHERE t.status IN ['open', 'claimed', 'paused'] AND t.kind IN $kinds AND t.attempts < $max_attempts
  AND (t.status = 'open' OR t.lease_until < now)
OPTIONAL MATCH (t)-[:FOR]->(i:Incident)
WITH t, now, i WHERE NOT t.kind IN $after_page OR i.notified = true
  OR i.status = 'merged'
WITH t, now ORDER BY coalesce($priority[t.kind], 99), t.created_at LIMIT 1
SET t.status = 'claimed', t.owner = $owner, t.attempt_id = $attempt_id, t.epoch = t.epoch + 1,
    t.lease_until = now + $lease_ms, t.attempts = t.attempts + 1,
    t.taken_over = t.status = 'claimed'
WITH t
RETURN t.id AS id, t.kind AS kind, t.epoch AS epoch, t.attempts AS attempts,
       t.incident_id AS incident_id, t.alert_key AS alert_key, t.taken_over AS taken_over
