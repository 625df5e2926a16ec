// bench/floor.py only: the least claim with a lease and a fencing epoch: the oldest open task
// (or one whose lease expired) gets this owner, epoch + 1 and a lease on the database clock,
// in one query; it returns what the walk starts from (the incident's alerting component).
// Select first, then SET (LIMIT does not limit an eager write).
WITH timestamp() AS now
MATCH (t:Task)
WHERE t.status IN ['open', 'claimed'] AND (t.status = 'open' OR t.lease_until < now)
WITH t, now ORDER BY t.created_at LIMIT 1
SET t.status = 'claimed', t.owner = $owner, t.attempt_id = $attempt_id, t.epoch = t.epoch + 1,
    t.lease_until = now + $lease_ms, t.attempts = t.attempts + 1
WITH t
MATCH (t)-[:FOR]->(:Incident)-[:HAS_ALERT]->(:Alert)-[:ON]->(c:Component)
RETURN t.id AS id, t.epoch AS epoch, t.incident_id AS incident_id, c.name AS component
