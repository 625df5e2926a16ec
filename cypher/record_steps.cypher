// Checkpoint a run of consecutive steps of a task in one round trip (fenced: owner, epoch and an
// unexpired lease in the same query), and extend the lease (a heartbeat). The steps are written
// by `_steps_call.cypher`, as write_finding and reserve_action write theirs. Zero rows means the
// lease was lost and nothing was written.
MATCH (t:Task {id: $task_id})
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= timestamp()
SET t.lease_until = timestamp() + $lease_ms
WITH t, $row AS row
// @include _steps_call
RETURN recorded
