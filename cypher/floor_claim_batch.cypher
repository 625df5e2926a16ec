// bench/floor.py --batch only: floor_claim for up to $limit tasks in one query: the oldest
// claimable ones each get this owner, epoch + 1 and a lease on the database clock. Select
// first, then SET (LIMIT does not limit an eager write).
WITH timestamp() AS now
MATCH (t:Task)
WHERE t.status IN ['open', 'claimed'] AND (t.status = 'open' OR t.lease_until < now)
WITH t, now ORDER BY t.created_at LIMIT $limit
SET t.status = 'claimed', t.owner = $owner, t.attempt_id = $attempt_id, t.epoch = t.epoch + 1,
    t.lease_until = now + $lease_ms, t.attempts = t.attempts + 1
WITH t
MATCH (t)-[:FOR]->(:Incident)-[:HAS_ALERT]->(:Alert)-[:ON]->(c:Component)
RETURN t.id AS id, t.epoch AS epoch, t.incident_id AS incident_id, c.name AS component
