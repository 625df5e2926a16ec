// Give a task back (fenced): open again for another worker, or failed with a reason when
// it has used up its attempts. `$charge` false (a graceful shutdown) gives the attempt back.
// With $delay_ms > 0 (an outside system said "retry after"), the task stays claimed by nobody
// until then; claim_task takes it again once that lease expires.
MATCH (t:Task {id: $task_id})
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch
SET t.status = CASE WHEN $charge AND t.attempts >= $max_attempts THEN 'failed'
                    WHEN $delay_ms > 0 THEN 'claimed' ELSE 'open' END,
    t.attempts = CASE WHEN $charge THEN t.attempts ELSE t.attempts - 1 END,
    t.owner = CASE WHEN $delay_ms > 0 THEN '' ELSE t.owner END,
    t.lease_until = CASE WHEN $delay_ms > 0 THEN timestamp() + $delay_ms ELSE 0 END,
    t.last_error = $reason
RETURN t.status AS status
