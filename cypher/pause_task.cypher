// Pause a task (fenced): every model the planner may ask is cooling down. No worker may claim
// it before $resume_at (ms UTC, the first model back); then claim_task takes it like an expired
// lease and the new owner resumes from the stored steps. The pause does not charge an attempt
// (a rate limit is nobody's failure); `pauses` counts them so the planner can stop waiting.
MATCH (t:Task {id: $task_id})
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= timestamp()
SET t.status = 'paused', t.owner = '', t.lease_until = $resume_at, t.resume_at = $resume_at,
    t.attempts = t.attempts - 1, t.pauses = coalesce(t.pauses, 0) + 1, t.last_error = $reason
RETURN t.status AS status, t.pauses AS pauses
