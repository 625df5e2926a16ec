// Give a task back (fenced): open again for another worker, or failed with a reason when
// it has used up its attempts. `$charge` false (a graceful shutdown) gives the attempt back.
MATCH (t:Task {id: $task_id})
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch
SET t.status = CASE WHEN $charge AND t.attempts >= $max_attempts THEN 'failed' ELSE 'open' END,
    t.attempts = CASE WHEN $charge THEN t.attempts ELSE t.attempts - 1 END,
    t.lease_until = 0, t.last_error = $reason
RETURN t.status AS status
