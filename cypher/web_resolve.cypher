// Resolve an open incident from the web page as $by (the signed-in person), by the database
// clock. No row when it is not open (already resolved, or merged into another).
MATCH (i:Incident {id: $incident_id})
WHERE i.status = 'open'
SET i.status = 'resolved', i.resolved_at = timestamp(), i.resolved_by = $by
RETURN i.resolved_at AS resolved_at
