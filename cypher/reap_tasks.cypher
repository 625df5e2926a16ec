// The reaper: a claimed task whose lease expired after its last allowed attempt is marked failed
// with a reason (its workers kept dying or stalling); claim_task takes the others back itself.
// Uses the Task.status index; returns the failed tasks.
WITH timestamp() AS now
MATCH (t:Task {status: 'claimed'})
WHERE t.lease_until < now AND t.attempts >= $max_attempts
SET t.status = 'failed', t.finished_at = now,
    t.last_error = 'lease expired on attempt ' + toString(t.attempts) + ' of ' +
      toString($max_attempts) + ' (worker ' + t.owner + ' died or stalled)'
RETURN t.id AS id, t.kind AS kind, t.last_error AS reason, t.incident_id AS incident_id
