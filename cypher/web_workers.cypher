// The tasks held now (claimed), with their owner, lease end and incident, by the database
// clock (`now`, ms): the workers that are alive hold a lease that has not expired.
MATCH (t:Task) WHERE t.status = 'claimed'
RETURN t.owner AS owner, t.id AS task_id, t.kind AS kind, t.epoch AS epoch,
       t.attempts AS attempts, t.lease_until AS lease_until, t.incident_id AS incident_id,
       timestamp() AS now
ORDER BY owner, task_id
