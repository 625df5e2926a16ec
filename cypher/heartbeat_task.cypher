// Extend a lease this worker still holds; zero rows means the lease was lost.
WITH timestamp() AS now
MATCH (t:Task {id: $task_id})
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= now
SET t.lease_until = now + $lease_ms
RETURN t.lease_until AS lease_until
